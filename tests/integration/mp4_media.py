"""Test media for the flv and mp4 tests, built here (Debian's ffmpeg is not
installed): an MP4 with a video and an audio track laid out as an encoder
would (chunks interleaved in time, key frames in stss, composition offsets
in ctts, several stsc runs), and a reader that walks a file's tables and
says which original sample each of its samples is, so a cut can be checked
without trusting the server's arithmetic. Each sample starts with its own
name ("V0000042" / "A0000042")."""

import struct

VIDEO_TIMESCALE = 10240
VIDEO_DELTA = 1024           # 10 frames a second
VIDEO_SAMPLES = 100          # 10 s
KEY_EVERY = 25               # a key frame every 2.5 s
AUDIO_TIMESCALE = 44100
AUDIO_DELTA = 1024
AUDIO_SAMPLES = 431          # 430 x 1024 + one of 680 = 10 s
AUDIO_LAST_DELTA = AUDIO_TIMESCALE * 10 - 430 * AUDIO_DELTA
MOVIE_TIMESCALE = 1000
DURATION_MS = 10000


def box(kind, payload):
    return struct.pack(">I4s", 8 + len(payload), kind) + payload


def full_box(kind, version, flags, payload):
    return box(kind, struct.pack(">I", (version << 24) | flags) + payload)


def sample_bytes(kind, index, size):
    name = b"%c%07d" % (kind, index)
    return name + bytes([(index * 7 + len(name)) % 251]) * (size - len(name))


def video_size(i):
    return 700 if i % KEY_EVERY == 0 else 120 + (i * 37) % 90


def audio_size(i):
    return 60 + (i % 7) * 5


def video_ctts():
    # I P B B patterns: offsets in deltas, run-length coded below.
    return [(2 if i % 4 == 1 else 0 if i % 4 == 3 else 1) * VIDEO_DELTA for i in range(VIDEO_SAMPLES)]


def rle(values):
    out = []
    for v in values:
        if out and out[-1][1] == v:
            out[-1][0] += 1
        else:
            out.append([1, v])
    return [(c, v) for c, v in out]


def chunk_plan(total, runs):
    """runs: [(samples_per_chunk, chunk_count or None for 'the rest')] ->
    a list of samples per chunk."""
    chunks = []
    left = total
    for per, count in runs:
        n = count if count is not None else left // per
        for _ in range(n):
            take = min(per, left)
            if take == 0:
                break
            chunks.append(take)
            left -= take
    if left:
        chunks.append(left)
    return chunks


def stsc_entries(chunks):
    out = []
    for i, n in enumerate(chunks):
        if not out or out[-1][1] != n:
            out.append((i + 1, n, 1))
    return out


def build_mp4(moov_first=True, co64=False, extras=True):
    video_chunks = chunk_plan(VIDEO_SAMPLES, [(3, 1), (5, 19)])
    audio_chunks = chunk_plan(AUDIO_SAMPLES, [(20, None)])
    vsizes = [video_size(i) for i in range(VIDEO_SAMPLES)]
    asizes = [audio_size(i) for i in range(AUDIO_SAMPLES)]

    # Chunks in time order, as an encoder interleaves them.
    pieces = []  # (time in seconds, track, first sample, count)
    first = 0
    for n in video_chunks:
        pieces.append((first * VIDEO_DELTA / VIDEO_TIMESCALE, 0, first, n))
        first += n
    first = 0
    for n in audio_chunks:
        pieces.append((first * AUDIO_DELTA / AUDIO_TIMESCALE, 1, first, n))
        first += n
    pieces.sort(key=lambda p: (p[0], p[1]))

    mdat_payload = bytearray()
    offsets = ([], [])  # relative to the mdat payload
    for _t, track, first, n in pieces:
        offsets[track].append(len(mdat_payload))
        for i in range(first, first + n):
            if track == 0:
                mdat_payload += sample_bytes(ord("V"), i, vsizes[i])
            else:
                mdat_payload += sample_bytes(ord("A"), i, asizes[i])

    def moov(base):
        def stco(offs):
            if co64:
                return full_box(b"co64", 0, 0, struct.pack(">I", len(offs)) + b"".join(struct.pack(">Q", base + o) for o in offs))
            return full_box(b"stco", 0, 0, struct.pack(">I", len(offs)) + b"".join(struct.pack(">I", base + o) for o in offs))

        def stsz(sizes):
            return full_box(b"stsz", 0, 0, struct.pack(">II", 0, len(sizes)) + b"".join(struct.pack(">I", s) for s in sizes))

        def stsc(chunks):
            e = stsc_entries(chunks)
            return full_box(b"stsc", 0, 0, struct.pack(">I", len(e)) + b"".join(struct.pack(">III", *x) for x in e))

        def stts(entries):
            return full_box(b"stts", 0, 0, struct.pack(">I", len(entries)) + b"".join(struct.pack(">II", *x) for x in entries))

        dinf = box(b"dinf", full_box(b"dref", 0, 0, struct.pack(">I", 1) + full_box(b"url ", 0, 1, b"")))

        def tkhd(track_id, duration, volume, width, height):
            return full_box(b"tkhd", 0, 3, struct.pack(">IIIII", 0, 0, track_id, 0, duration) + b"\0" * 8 +
                            struct.pack(">hhhh", 0, 0, volume, 0) +
                            struct.pack(">9I", 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000) +
                            struct.pack(">II", width << 16, height << 16))

        def mdhd(timescale, duration):
            return full_box(b"mdhd", 0, 0, struct.pack(">IIIIHH", 0, 0, timescale, duration, 0x55c4, 0))

        def hdlr(kind, name):
            return full_box(b"hdlr", 0, 0, struct.pack(">I4s", 0, kind) + b"\0" * 12 + name + b"\0")

        edts = box(b"edts", full_box(b"elst", 0, 0, struct.pack(">IIIhh", 1, DURATION_MS, 0, 1, 0))) if extras else b""
        vstsd = full_box(b"stsd", 0, 0, struct.pack(">I", 1) + box(b"mp4v", b"\0" * 6 + struct.pack(">H", 1) + b"\0" * 70))
        astsd = full_box(b"stsd", 0, 0, struct.pack(">I", 1) + box(b"mp4a", b"\0" * 6 + struct.pack(">H", 1) + b"\0" * 20))
        video = box(b"trak",
                    tkhd(1, DURATION_MS, 0, 160, 120) + edts +
                    box(b"mdia",
                        mdhd(VIDEO_TIMESCALE, VIDEO_SAMPLES * VIDEO_DELTA) + hdlr(b"vide", b"VideoHandler") +
                        box(b"minf",
                            full_box(b"vmhd", 0, 1, b"\0" * 8) + dinf +
                            box(b"stbl",
                                vstsd + stts([(VIDEO_SAMPLES, VIDEO_DELTA)]) +
                                full_box(b"stss", 0, 0, struct.pack(">I", VIDEO_SAMPLES // KEY_EVERY) +
                                         b"".join(struct.pack(">I", i + 1) for i in range(0, VIDEO_SAMPLES, KEY_EVERY))) +
                                full_box(b"ctts", 0, 0, struct.pack(">I", len(rle(video_ctts()))) +
                                         b"".join(struct.pack(">II", c, v) for c, v in rle(video_ctts()))) +
                                stsc(video_chunks) + stsz(vsizes) + stco(offsets[0])))))
        audio = box(b"trak",
                    tkhd(2, DURATION_MS, 0x100, 0, 0) +
                    box(b"mdia",
                        mdhd(AUDIO_TIMESCALE, AUDIO_TIMESCALE * 10) + hdlr(b"soun", b"SoundHandler") +
                        box(b"minf",
                            full_box(b"smhd", 0, 0, b"\0" * 4) + dinf +
                            box(b"stbl",
                                astsd + stts([(430, AUDIO_DELTA), (1, AUDIO_LAST_DELTA)]) +
                                stsc(audio_chunks) + stsz(asizes) + stco(offsets[1])))))
        mvhd = full_box(b"mvhd", 0, 0, struct.pack(">IIII", 0, 0, MOVIE_TIMESCALE, DURATION_MS) +
                        struct.pack(">IH", 0x10000, 0x100) + b"\0" * 10 +
                        struct.pack(">9I", 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000) + b"\0" * 24 +
                        struct.pack(">I", 3))
        udta = box(b"udta", box(b"meta", b"\0" * 16)) if extras else b""
        return box(b"moov", mvhd + video + audio + udta)

    ftyp = box(b"ftyp", b"isom" + struct.pack(">I", 512) + b"isomiso2mp41")
    free = box(b"free", b"\0" * 8) if extras else b""
    mdat_header_size = 8
    if moov_first:
        size = len(moov(0))
        base = len(ftyp) + size + len(free) + mdat_header_size
        return ftyp + moov(base) + free + box(b"mdat", bytes(mdat_payload))
    base = len(ftyp) + len(free) + mdat_header_size
    return ftyp + free + box(b"mdat", bytes(mdat_payload)) + moov(base)


# ---------------------------------------------------------------------------
# Reading a file back

CONTAINERS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"edts", b"dinf"}


def boxes(data, start=0, end=None):
    end = len(data) if end is None else end
    pos = start
    while pos < end:
        size, kind = struct.unpack_from(">I4s", data, pos)
        header = 8
        if size == 1:
            size = struct.unpack_from(">Q", data, pos + 8)[0]
            header = 16
        assert size >= header and pos + size <= end, f"bad box {kind} at {pos}"
        yield kind, pos, pos + header, pos + size
        pos += size


def find(data, path, start=0, end=None):
    """All boxes at the path (a list of types) below [start, end)."""
    found = []
    for kind, at, body, stop in boxes(data, start, end):
        if kind == path[0]:
            if len(path) == 1:
                found.append((at, body, stop))
            else:
                found += find(data, path[1:], body, stop)
    return found


def table(data, body, entry_format):
    count = struct.unpack_from(">I", data, body + 4)[0]
    size = struct.calcsize(entry_format)
    return [struct.unpack_from(entry_format, data, body + 8 + i * size) for i in range(count)]


class Track:
    pass


def read_movie(data):
    """The movie's tracks with each sample's (offset, size, dts), checked
    for agreement between the tables; raises AssertionError otherwise."""
    top = [k for k, *_ in boxes(data)]
    assert top.count(b"moov") == 1 and top.count(b"mdat") == 1, top
    (mdat,) = [(b, s) for k, a, b, s in boxes(data) if k == b"mdat"]
    (moov,) = find(data, [b"moov"])
    mvhd = find(data, [b"mvhd"], moov[1], moov[2])[0]
    movie = Track()
    movie.timescale, movie.duration = struct.unpack_from(">II", data, mvhd[1] + 12)
    movie.tracks = []
    for trak in find(data, [b"trak"], moov[1], moov[2]):
        t = Track()
        _, b, s = trak
        tkhd = find(data, [b"tkhd"], b, s)[0]
        t.movie_duration = struct.unpack_from(">I", data, tkhd[1] + 20)[0]
        mdhd = find(data, [b"mdia", b"mdhd"], b, s)[0]
        t.timescale, t.duration = struct.unpack_from(">II", data, mdhd[1] + 12)
        t.handler = data[find(data, [b"mdia", b"hdlr"], b, s)[0][1] + 8:][:4]
        elst = find(data, [b"edts", b"elst"], b, s)
        t.elst = None
        if elst:
            version = data[elst[0][1]]
            if version == 1:
                t.elst = struct.unpack_from(">QQ", data, elst[0][1] + 8)
            else:
                t.elst = struct.unpack_from(">II", data, elst[0][1] + 8)
        stbl = find(data, [b"mdia", b"minf", b"stbl"], b, s)[0]
        sb, ss = stbl[1], stbl[2]

        def one(kind):
            f = find(data, [kind], sb, ss)
            return f[0][1] if f else None

        stts = table(data, one(b"stts"), ">II")
        stsc = table(data, one(b"stsc"), ">III")
        stsz_at = one(b"stsz")
        uniform, count = struct.unpack_from(">II", data, stsz_at + 4)
        assert uniform == 0
        sizes = [struct.unpack_from(">I", data, stsz_at + 12 + 4 * i)[0] for i in range(count)]
        if one(b"co64") is not None:
            chunk_offsets = [x[0] for x in table(data, one(b"co64"), ">Q")]
        else:
            chunk_offsets = [x[0] for x in table(data, one(b"stco"), ">I")]
        t.stss = [x[0] for x in table(data, one(b"stss"), ">I")] if one(b"stss") is not None else None
        t.ctts = table(data, one(b"ctts"), ">II") if one(b"ctts") is not None else None
        # Samples per chunk from stsc's runs.
        per_chunk = []
        for i, (first_chunk, n, _id) in enumerate(stsc):
            last = stsc[i + 1][0] if i + 1 < len(stsc) else len(chunk_offsets) + 1
            assert first_chunk >= 1 and last >= first_chunk, stsc
            per_chunk += [n] * (last - first_chunk)
        assert len(per_chunk) == len(chunk_offsets), (len(per_chunk), len(chunk_offsets))
        assert sum(per_chunk) == len(sizes), (sum(per_chunk), len(sizes))
        stts_count = sum(c for c, _d in stts)
        assert stts_count == len(sizes), (stts_count, len(sizes))
        if t.ctts is not None:
            assert sum(c for c, _o in t.ctts) == len(sizes)
        samples = []
        i = 0
        for offset, n in zip(chunk_offsets, per_chunk):
            for _ in range(n):
                samples.append([offset, sizes[i]])
                offset += sizes[i]
                i += 1
        dts = 0
        i = 0
        for c, d in stts:
            for _ in range(c):
                samples[i].append(dts)
                dts += d
                i += 1
        for off, size, _dts in samples:
            assert mdat[0] <= off and off + size <= mdat[1], (off, size, mdat)
        t.samples = samples
        t.names = [data[off:off + 8].decode() for off, _size, _dts in samples]
        t.stts_duration = dts
        movie.tracks.append(t)
    return movie


def video_deltas():
    return [VIDEO_DELTA] * VIDEO_SAMPLES


def audio_deltas():
    return [AUDIO_DELTA] * 430 + [AUDIO_LAST_DELTA]


def kept(deltas, timescale, start_ms, end_ms=None):
    """Indexes of the samples a cut keeps, by nginx's rule: the sample that
    holds start, then samples while their time from the first is below
    end - start."""
    def count_before(ticks, ds):
        n = 0
        for d in ds:
            if ticks < d:
                return n
            ticks -= d
            n += 1
        return None
    first = count_before(start_ms * timescale // 1000, deltas)
    if first is None:
        return None
    if end_ms is None:
        return list(range(first, len(deltas)))
    n = count_before((end_ms - start_ms) * timescale // 1000, deltas[first:])
    last = len(deltas) if n is None else first + n
    return list(range(first, last))


# ---------------------------------------------------------------------------
# FLV

def build_flv(tags=40):
    out = bytearray(b"FLV\x01\x05\x00\x00\x00\x09\x00\x00\x00\x00")
    for i in range(tags):
        kind = 9 if i % 2 == 0 else 8
        payload = bytes([(i * 13 + j) % 256 for j in range(50 + i * 3)])
        ts = i * 40
        tag = struct.pack(">B", kind) + struct.pack(">I", len(payload))[1:] + \
            struct.pack(">I", ts)[1:] + bytes([ts >> 24 & 0xff]) + b"\0\0\0" + payload
        out += tag + struct.pack(">I", len(tag))
    return bytes(out)
