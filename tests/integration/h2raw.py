"""A raw HTTP/2 client for the integration tests: just enough framing and
HPACK (literal fields, no Huffman) to send what no polite client sends, and
to read back what the server made of it. Used by test_http2.py (attacks)
and test_http2_conformance.py (RFC 9113, frame by frame)."""

import socket
import struct

import hpack

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = range(10)
END_STREAM, ACK, END_HEADERS, PADDED, PRIORITY_FLAG = 0x1, 0x1, 0x4, 0x8, 0x20
(NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR, SETTINGS_TIMEOUT, STREAM_CLOSED, FRAME_SIZE_ERROR,
 REFUSED_STREAM, CANCEL, COMPRESSION_ERROR, CONNECT_ERROR, ENHANCE_YOUR_CALM) = range(12)
ERROR_NAMES = {0: "NO_ERROR", 1: "PROTOCOL_ERROR", 2: "INTERNAL_ERROR", 3: "FLOW_CONTROL_ERROR",
               4: "SETTINGS_TIMEOUT", 5: "STREAM_CLOSED", 6: "FRAME_SIZE_ERROR", 7: "REFUSED_STREAM",
               8: "CANCEL", 9: "COMPRESSION_ERROR", 10: "CONNECT_ERROR", 11: "ENHANCE_YOUR_CALM"}
SETTINGS_ENABLE_PUSH, SETTINGS_MAX_CONCURRENT_STREAMS, SETTINGS_INITIAL_WINDOW_SIZE, SETTINGS_MAX_FRAME_SIZE = 2, 3, 4, 5


def frame(ftype, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + struct.pack(">I", stream) + payload


def hpack_int(value, prefix_bits, first=0):
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out = [first | limit]
    value -= limit
    while value >= 128:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def literal(name, value, indexing=False):
    """A literal field with a literal name (without or with indexing)."""
    name, value = name.encode(), value.encode()
    head = b"\x40" if indexing else b"\x00"
    return head + hpack_int(len(name), 7) + name + hpack_int(len(value), 7) + value


def request_block(path="/", method="GET", authority="localhost", extra=()):
    block = literal(":method", method) + literal(":scheme", "http") + literal(":path", path)
    block += literal(":authority", authority)
    for name, value in extra:
        block += literal(name, value)
    return block


def fields_block(fields):
    """A header block of exactly these (name, value) pairs, in this order."""
    return b"".join(literal(n, v) for n, v in fields)


def settings_payload(*pairs):
    """SETTINGS entries from (identifier, value) pairs."""
    return b"".join(struct.pack(">HI", ident, value) for ident, value in pairs)


class Frame(tuple):
    """(type, flags, stream, payload); a response HEADERS also carries its
    decoded :status."""
    status = None


class H2:
    def __init__(self, port, settings=b"", timeout=10, preface=True):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.decoder = hpack.Decoder()  # the server's field blocks use its dynamic table
        self.closed = False
        if preface:
            self.sock.sendall(PREFACE + frame(SETTINGS, 0, 0, settings))

    def send(self, data):
        self.sock.sendall(data)

    def request(self, stream, path="/", end_stream=True, **kw):
        flags = END_HEADERS | (END_STREAM if end_stream else 0)
        self.send(frame(HEADERS, flags, stream, request_block(path, **kw)))

    def read_frame(self):
        """(type, flags, stream, payload), or None at EOF/reset."""
        while True:
            if len(self.buf) >= 9:
                length = int.from_bytes(self.buf[:3], "big")
                if len(self.buf) >= 9 + length:
                    ftype, flags = self.buf[3], self.buf[4]
                    stream = int.from_bytes(self.buf[5:9], "big") & 0x7FFFFFFF
                    payload = self.buf[9:9 + length]
                    self.buf = self.buf[9 + length:]
                    f = Frame((ftype, flags, stream, payload))
                    if ftype == HEADERS:
                        f.status = self._decode_status(flags, payload)
                    return f
            try:
                chunk = self.sock.recv(65536)
            except (ConnectionResetError, socket.timeout):
                self.closed = True
                return None
            if not chunk:
                self.closed = True
                return None
            self.buf += chunk

    def _decode_status(self, flags, payload):
        # A server's response head fits one frame here (no CONTINUATION).
        if flags & PADDED:
            payload = payload[1:len(payload) - payload[0]]
        if flags & PRIORITY_FLAG:
            payload = payload[5:]
        for name, value in self.decoder.decode(payload, raw=True):
            if name == b":status":
                return int(value)
        return None

    def handshake(self):
        """Finishes the connection preface both ways: ACKs the server's
        SETTINGS and waits until the server has both ACKed ours and taken
        our ACK (a PING sent after it comes back). The server's SETTINGS as
        {identifier: value}."""
        settings, acked = None, False
        while settings is None or not acked:
            f = self.read_frame()
            assert f is not None, "connection closed during the handshake"
            if f[0] == SETTINGS and f[1] & ACK:
                acked = True
            elif f[0] == SETTINGS:
                payload = f[3]
                settings = dict(struct.unpack(">HI", payload[i:i + 6]) for i in range(0, len(payload), 6))
        self.send(frame(SETTINGS, ACK, 0) + frame(PING, 0, 0, b"handshk!"))
        while True:
            f = self.read_frame()
            assert f is not None, "connection closed during the handshake"
            if f[0] == PING and f[1] & ACK:
                return settings

    def frames_until_close(self, limit=100000):
        frames = []
        while len(frames) < limit:
            f = self.read_frame()
            if f is None:
                break
            frames.append(f)
        return frames

    def round_trip(self, frames, payload):
        """Sends a PING and collects frames until its ACK comes back (into
        `frames`); False if the connection closed first."""
        try:
            self.send(frame(PING, 0, 0, payload))
        except (BrokenPipeError, ConnectionResetError):
            self.closed = True
        while True:
            f = self.read_frame()
            if f is None:
                return False
            frames.append(f)
            if f[0] == PING and f[1] & ACK and f[3] == payload:
                return True

    def outcome(self):
        """What the server made of what was sent: two PING round trips (the
        first flushes anything the server queued with its ACK), or the
        frames up to the close. An Outcome."""
        frames = []
        alive = self.round_trip(frames, b"outcome1") and self.round_trip(frames, b"outcome2")
        if not alive:
            self.closed = True
        return Outcome(frames, alive)

    def close(self):
        self.sock.close()


class Outcome:
    def __init__(self, frames, alive):
        self.frames = frames
        self.alive = alive
        self.goaway = goaway_code(frames)
        self.resets = {f[2]: int.from_bytes(f[3][:4], "big") for f in frames if f[0] == RST_STREAM}
        self.statuses = {f[2]: f.status for f in frames if f[0] == HEADERS}

    def __repr__(self):
        def name(code):
            return ERROR_NAMES.get(code, str(code))
        return (f"<Outcome alive={self.alive} goaway={None if self.goaway is None else name(self.goaway)} "
                f"resets={ {k: name(v) for k, v in self.resets.items()} } statuses={self.statuses}>")


def goaway_code(frames):
    for ftype, _, _, payload in frames:
        if ftype == GOAWAY:
            return int.from_bytes(payload[4:8], "big")
    return None


def status_of(headers_payload):
    """The :status of a response HEADERS block as nghttp2 and nginx encode
    it: the static table index (0x88 = 200 ...) or a literal with the
    indexed name :status."""
    first = headers_payload[0]
    static = {0x88: 200, 0x89: 204, 0x8A: 206, 0x8B: 304, 0x8C: 400, 0x8D: 404, 0x8E: 500}
    if first in static:
        return static[first]
    pos = 1
    if headers_payload[pos] & 0x80:  # Huffman-coded digits: not decoded here
        return -1
    length = headers_payload[pos] & 0x7F
    return int(headers_payload[pos + 1:pos + 1 + length])
