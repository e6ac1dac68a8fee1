"""HTTP/2 conformance, RFC 9113 section by section, over h2c with prior
knowledge (`listen ... http2`, which nginx 1.22 reads too): every frame
type, frames on streams in every state (idle, open, half-closed local and
remote, closed by each side), SETTINGS values, flow control, CONTINUATION
rules, and malformed requests (field names and values, connection-specific
fields, pseudo-header fields, content-length).

Each case sends raw frames after the connection preface and reads what the
server made of them (Outcome: the RST_STREAMs, the GOAWAY, the response
statuses, and whether two PINGs still came back). A stream error may be
answered as a connection error of the same code (RFC 9113 5.4). Where
Debian's nginx 1.22 differs from the RFC, the case says so and takes the
`nginx_only_skip` fixture."""

import struct

import pytest

import harness
from h2raw import (ACK, CONTINUATION, DATA, END_HEADERS, END_STREAM, FLOW_CONTROL_ERROR, FRAME_SIZE_ERROR, GOAWAY,
                   H2, HEADERS, NO_ERROR, PADDED, PING, PRIORITY, PRIORITY_FLAG, PROTOCOL_ERROR, PUSH_PROMISE,
                   REFUSED_STREAM, RST_STREAM, SETTINGS, SETTINGS_ENABLE_PUSH, SETTINGS_INITIAL_WINDOW_SIZE,
                   SETTINGS_MAX_FRAME_SIZE, STREAM_CLOSED, WINDOW_UPDATE, COMPRESSION_ERROR, CANCEL, fields_block,
                   frame, hpack_int, literal, request_block, settings_payload)
from harness import base_conf

BIG_SIZE = 1024 * 1024
CONF = base_conf(error_level="info", http="""
    server {
        listen 127.0.0.1:@PORT0@ http2;
        server_name localhost;
        root @PREFIX@/www;
        location /ret { return 200 "returned\\n"; }
        # The body is read whole before the (unreachable) upstream is
        # tried: a POST here keeps its stream open while its body comes.
        location /upload { proxy_pass http://127.0.0.1:1; }
    }
    server {
        listen 127.0.0.1:@PORT1@ http2;
        server_name localhost;
        root @PREFIX@/www;
        http2_max_concurrent_streams 1;
    }
""")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = harness.Server(CONF, tmp_path_factory.mktemp("h2conformance"), nports=2)
    www = srv.prefix / "www"
    www.mkdir(exist_ok=True)
    (www / "index.html").write_text("hello h2\n")
    (www / "big.bin").write_bytes(b"b" * BIG_SIZE)
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def connect(server):
    """connect(settings=b"", port_index=0) -> an H2 past the preface."""
    opened = []

    def make(settings=b"", port_index=0):
        c = H2(server.ports[port_index], settings=settings)
        opened.append(c)
        c.settings = c.handshake()
        return c
    yield make
    for c in opened:
        c.close()


@pytest.fixture
def conn(connect):
    return connect()


# A connection whose responses cannot leave (SETTINGS_INITIAL_WINDOW_SIZE 0):
# a request for big.bin stays half-closed (remote) as long as we like.
NO_WINDOW = settings_payload((SETTINGS_INITIAL_WINDOW_SIZE, 0))


# ---------------------------------------------------------------------------
# What a case expects


def connection_error(out, code):
    assert not out.alive and out.goaway == code, out


def stream_error(out, stream, code):
    """RST_STREAM(code) on `stream`, or the same code as a connection error."""
    if out.goaway is not None:
        connection_error(out, code)
    else:
        assert out.resets.get(stream) == code, out


def ignored(out):
    assert out.alive and out.goaway is None and not out.resets, out


def malformed(out, stream):
    """RFC 9113 8.1.1: a stream error of type PROTOCOL_ERROR, optionally
    after an error response; never an answer from a handler."""
    assert out.statuses.get(stream, 400) >= 400, out
    if out.goaway is not None:
        connection_error(out, PROTOCOL_ERROR)
    elif stream not in out.statuses:
        assert out.resets.get(stream) == PROTOCOL_ERROR, out


def response_end(c, stream):
    """Reads until `stream`'s response has ended; its :status."""
    status = None
    while True:
        f = c.read_frame()
        assert f is not None, "connection closed before the response ended"
        ftype, flags, sid, payload = f
        assert ftype != GOAWAY, f
        if sid == stream and ftype == HEADERS:
            status = f.status
        if sid == stream and ftype in (DATA, HEADERS) and flags & END_STREAM:
            return status
        if sid == stream and ftype == RST_STREAM:
            raise AssertionError(f"stream {sid} reset: {payload!r}")


def get(stream, path="/ret", end_stream=True, extra=()):
    flags = END_HEADERS | (END_STREAM if end_stream else 0)
    return frame(HEADERS, flags, stream, request_block(path, extra=extra))


def post(stream, path="/upload", extra=()):
    return frame(HEADERS, END_HEADERS, stream, request_block(path, method="POST", extra=extra))


def window_update(stream, increment):
    return frame(WINDOW_UPDATE, 0, stream, struct.pack(">I", increment))


def rst(stream, code=CANCEL):
    return frame(RST_STREAM, 0, stream, struct.pack(">I", code))


def priority(stream, depends_on, weight=15):
    return frame(PRIORITY, 0, stream, struct.pack(">IB", depends_on, weight))


# ---------------------------------------------------------------------------
# 3.4 The connection preface


def test_3_4_invalid_preface_is_protocol_error(server):
    # Starts as the preface does, then is not it: an HTTP/2 client with a
    # broken preface, not an HTTP/1.1 request (even on a port shared with
    # HTTP/1.1): GOAWAY(PROTOCOL_ERROR), not a 400 page.
    c = H2(server.port, preface=False)
    try:
        c.send(b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n" + frame(SETTINGS, 0, 0))
        frames = c.frames_until_close()
        assert not c.buf.startswith(b"HTTP/1."), c.buf[:100]
        assert [f for f in frames if f[0] == GOAWAY], frames
        assert int.from_bytes([f for f in frames if f[0] == GOAWAY][0][3][4:8], "big") == PROTOCOL_ERROR
    finally:
        c.close()


# ---------------------------------------------------------------------------
# 4 Frames, 5.5 extensions


def test_4_1_unknown_frame_type_is_ignored(conn):
    conn.send(frame(0x21, 0, 0, b"extension") + frame(0x21, 0xFF, 1, b"x"))
    ignored(conn.outcome())


def test_4_1_unknown_flags_are_ignored(conn):
    conn.send(frame(PING, 0xF6, 0, b"flagged!"))  # no ACK bit, four unknown ones
    out = conn.outcome()
    ignored(out)
    assert any(f[0] == PING and f[1] & ACK and f[3] == b"flagged!" for f in out.frames), out


def test_4_1_reserved_bit_is_ignored(conn):
    conn.send(frame(PING, 0, 0x80000000, b"reserved"))  # stream 0 with the R bit set
    out = conn.outcome()
    ignored(out)
    assert any(f[0] == PING and f[1] & ACK and f[3] == b"reserved" for f in out.frames), out


def test_5_5_unknown_frame_inside_a_header_block(conn):
    block = request_block("/ret")
    conn.send(frame(HEADERS, END_STREAM, 1, block[:5]) + frame(0x21, 0, 0, b"x") +
              frame(CONTINUATION, END_HEADERS, 1, block[5:]))
    connection_error(conn.outcome(), PROTOCOL_ERROR)


def test_4_2_data_over_max_frame_size(conn):
    limit = conn.settings.get(SETTINGS_MAX_FRAME_SIZE, 16384)
    if limit > 65536:
        pytest.skip(f"the server takes frames of up to {limit} bytes")  # nginx: 16 MB
    conn.send(post(1) + frame(DATA, 0, 1, b"d" * (limit + 1)))
    connection_error(conn.outcome(), FRAME_SIZE_ERROR)


def test_4_2_headers_over_max_frame_size(conn, nginx_only_skip):
    # nginx checks its header size limit first (ENHANCE_YOUR_CALM).
    conn.send(frame(HEADERS, END_HEADERS | END_STREAM, 1,
                    request_block("/ret", extra=[("x-big", "v" * 16400)])))
    connection_error(conn.outcome(), FRAME_SIZE_ERROR)


# ---------------------------------------------------------------------------
# 4.3 Field section compression


@pytest.mark.parametrize("block", [
    b"\x80",                                     # indexed field 0
    b"\xff\x7f",                                 # index past both tables
    request_block("/ret") + hpack_int(4097, 5, 0x20),  # table size update after a field
    hpack_int(1 << 20, 5, 0x20) + request_block("/ret"),  # larger than SETTINGS_HEADER_TABLE_SIZE
    # Huffman strings (RFC 7541 5.2): padding longer than 7 bits, padding
    # not of 1s, and the EOS symbol inside.
    # ('a' is the 5 bits 00011.)
    request_block("/ret") + b"\x00\x03x-h\x82\x1f\xff",
    request_block("/ret") + b"\x00\x03x-h\x81\x18",
    request_block("/ret") + b"\x00\x03x-h\x84\xff\xff\xff\xff",
], ids=["index-0", "index-too-large", "late-size-update", "size-update-too-large", "huffman-long-padding",
        "huffman-zero-padding", "huffman-eos"])
def test_4_3_invalid_field_block_is_compression_error(conn, block, request):
    if block.endswith(b"\x82\x1f\xff"):
        request.getfixturevalue("nginx_only_skip")  # nginx takes the long padding
    conn.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, block))
    connection_error(conn.outcome(), COMPRESSION_ERROR)


# ---------------------------------------------------------------------------
# 5.1 Stream states


@pytest.mark.parametrize("what", ["DATA", "RST_STREAM", "WINDOW_UPDATE", "CONTINUATION"])
def test_5_1_idle_stream(conn, what, request):
    if what != "CONTINUATION":
        request.getfixturevalue("nginx_only_skip")  # nginx ignores these on a stream it never saw
    sent = {"DATA": frame(DATA, 0, 1, b"x"), "RST_STREAM": rst(1), "WINDOW_UPDATE": window_update(1, 100),
            "CONTINUATION": frame(CONTINUATION, END_HEADERS, 1, request_block("/ret"))}[what]
    conn.send(sent)
    connection_error(conn.outcome(), PROTOCOL_ERROR)


def test_5_1_priority_on_idle_stream_is_allowed(conn):
    conn.send(priority(3, 0))
    ignored(conn.outcome())
    conn.send(get(3))
    assert response_end(conn, 3) == 200


def test_5_1_open_stream_takes_every_frame(conn):
    conn.send(post(1) + frame(DATA, 0, 1, b"abc") + window_update(1, 1000) + priority(1, 0) +
              frame(DATA, END_STREAM, 1, b"def"))
    assert response_end(conn, 1) == 502  # the body was taken whole; the upstream is not there


def test_5_1_half_closed_local_takes_data(conn):
    # We answered (END_STREAM) before the client finished its body: the
    # rest of the body is not an error (we may reset with NO_ERROR).
    conn.send(post(1, "/ret"))
    assert response_end(conn, 1) == 200
    conn.send(frame(DATA, 0, 1, b"late body") + window_update(1, 10) + frame(DATA, END_STREAM, 1, b"end"))
    out = conn.outcome()
    assert out.alive and out.goaway is None, out
    assert out.resets.get(1, NO_ERROR) in (NO_ERROR, STREAM_CLOSED), out


@pytest.mark.parametrize("what", ["DATA", "HEADERS"])
def test_5_1_half_closed_remote(connect, what, request):
    if what == "HEADERS":
        request.getfixturevalue("nginx_only_skip")  # nginx: a connection PROTOCOL_ERROR
    c = connect(NO_WINDOW)
    c.send(get(1, "/big.bin"))  # END_STREAM: half-closed (remote), the response held by our window
    sent = frame(DATA, END_STREAM, 1, b"x") if what == "DATA" else \
        frame(HEADERS, END_HEADERS | END_STREAM, 1, literal("x-trailer", "t"))
    c.send(sent)
    stream_error(c.outcome(), 1, STREAM_CLOSED)


def test_5_1_half_closed_remote_takes_window_update_and_priority(connect):
    c = connect(NO_WINDOW)
    c.send(get(1, "/big.bin") + priority(1, 0) + window_update(1, 100))
    ignored(c.outcome())


def reset_by_client(c):
    c.send(get(1, "/big.bin") + rst(1, CANCEL))
    ignored(c.outcome())


def test_5_1_closed_by_client_reset_then_data(connect, nginx_only_skip):
    # nginx ignores DATA on a stream it no longer has.
    c = connect(NO_WINDOW)
    reset_by_client(c)
    c.send(frame(DATA, 0, 1, b"after reset"))
    stream_error(c.outcome(), 1, STREAM_CLOSED)


def test_5_1_closed_by_client_reset_then_headers(connect, nginx_only_skip):
    # nginx answers with a connection PROTOCOL_ERROR (it takes the HEADERS
    # for a new stream with a used identifier).
    c = connect(NO_WINDOW)
    reset_by_client(c)
    c.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, literal("x-trailer", "t")))
    stream_error(c.outcome(), 1, STREAM_CLOSED)


def test_5_1_closed_by_client_reset_takes_priority_and_reset(connect):
    c = connect(NO_WINDOW)
    reset_by_client(c)
    c.send(priority(1, 0) + rst(1, CANCEL))
    ignored(c.outcome())


def closed_both_ways(c):
    c.send(get(1))
    assert response_end(c, 1) == 200


def test_5_1_closed_both_ways_then_data(conn, nginx_only_skip):
    # nginx ignores DATA on a stream it no longer has.
    closed_both_ways(conn)
    conn.send(frame(DATA, 0, 1, b"after the end"))
    stream_error(conn.outcome(), 1, STREAM_CLOSED)


def test_5_1_closed_both_ways_then_headers(conn, nginx_only_skip):
    # nginx: connection PROTOCOL_ERROR, as above.
    closed_both_ways(conn)
    conn.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, request_block("/ret")))
    stream_error(conn.outcome(), 1, STREAM_CLOSED)


def test_5_1_closed_both_ways_is_a_connection_error_here(conn, nginx_only_skip):
    # RFC 9113 5.1 "closed": frames after the client's END_STREAM are a
    # connection error of type STREAM_CLOSED.
    closed_both_ways(conn)
    conn.send(frame(DATA, 0, 1, b"after the end"))
    connection_error(conn.outcome(), STREAM_CLOSED)


def test_5_1_closed_takes_window_update_priority_and_reset(conn):
    closed_both_ways(conn)
    conn.send(window_update(1, 100) + priority(1, 0) + rst(1, CANCEL))
    ignored(conn.outcome())


def test_5_1_closed_by_our_reset_ignores_frames_in_flight(connect):
    # Past http2_max_concurrent_streams the stream is refused: the body the
    # client had already sent for it is ignored, the connection goes on.
    c = connect(NO_WINDOW, port_index=1)
    c.send(get(1, "/big.bin"))
    c.send(post(3) + frame(DATA, 0, 3, b"in flight"))
    out = c.outcome()
    assert out.alive and out.goaway is None and out.resets == {3: REFUSED_STREAM}, out
    c.send(frame(DATA, END_STREAM, 3, b"still in flight"))
    ignored(c.outcome())


def test_5_1_1_even_stream_id(conn):
    conn.send(get(2))
    connection_error(conn.outcome(), PROTOCOL_ERROR)


def test_5_1_1_stream_id_lower_than_the_last(conn):
    conn.send(get(5))
    assert response_end(conn, 5) == 200
    conn.send(get(3))
    connection_error(conn.outcome(), PROTOCOL_ERROR)


def test_5_1_1_stream_id_lower_than_the_last_in_one_read(conn):
    conn.send(get(5) + get(3))
    connection_error(conn.outcome(), PROTOCOL_ERROR)


# ---------------------------------------------------------------------------
# 5.1.2 Stream concurrency: a burst before the client has seen our SETTINGS


def test_5_1_2_burst_before_settings_is_refused_not_cut(server):
    # RFC 9113 5.1.2 lets a client open streams before our SETTINGS reach
    # it: those past the limit (128) are refused, the others answered, and
    # our refusals do not count as the client's resets.
    count = 400
    c = H2(server.port)
    try:
        c.send(b"".join(get(1 + 2 * i, "/index.html") for i in range(count)))
        answered, refused, last = set(), set(), 2 * count
        while len(answered) + len(refused) < (last + 1) // 2:
            f = c.read_frame()
            if f is None and harness.IS_NGINX:
                break  # after its GOAWAY
            assert f is not None, f"closed with {len(answered)} answered, {len(refused)} refused"
            ftype, flags, sid, payload = f
            if ftype == GOAWAY:
                # nginx stops taking streams after a while: gracefully.
                assert int.from_bytes(payload[4:8], "big") == NO_ERROR, f
                last = int.from_bytes(payload[:4], "big")
            if ftype == SETTINGS and not flags & ACK:
                c.send(frame(SETTINGS, ACK, 0))
            if ftype in (DATA, HEADERS) and flags & END_STREAM:
                answered.add(sid)
            if ftype == RST_STREAM:
                assert int.from_bytes(payload, "big") == REFUSED_STREAM, f
                refused.add(sid)
        assert len(answered) >= 128 and refused, (len(answered), len(refused))
        assert not answered & refused
        if harness.IS_NGINX:
            return
        # Ours stays up, and takes new streams.
        assert last == 2 * count and len(answered) + len(refused) == count
        out = c.outcome()
        assert out.alive and out.goaway is None, out
        c.send(get(1 + 2 * count))
        assert response_end(c, 1 + 2 * count) == 200
    finally:
        c.close()


# ---------------------------------------------------------------------------
# 5.3.1, 6.3 PRIORITY


def test_5_3_1_headers_depending_on_itself(conn):
    pri = struct.pack(">IB", 1, 15)
    conn.send(frame(HEADERS, END_HEADERS | END_STREAM | PRIORITY_FLAG, 1, pri + request_block("/ret")))
    stream_error(conn.outcome(), 1, PROTOCOL_ERROR)


@pytest.mark.parametrize("state", ["idle", "open"])
def test_5_3_1_priority_depending_on_itself(connect, state):
    c = connect(NO_WINDOW)
    if state == "open":
        c.send(get(1, "/big.bin"))
    c.send(priority(1, 1))
    stream_error(c.outcome(), 1, PROTOCOL_ERROR)


def test_6_3_priority_on_stream_0(conn):
    conn.send(priority(0, 1))
    connection_error(conn.outcome(), PROTOCOL_ERROR)


def test_6_3_priority_of_wrong_length(connect):
    c = connect(NO_WINDOW)
    c.send(get(1, "/big.bin") + frame(PRIORITY, 0, 1, b"\x00\x00\x00"))
    stream_error(c.outcome(), 1, FRAME_SIZE_ERROR)


# ---------------------------------------------------------------------------
# 6.1 DATA, 6.2 HEADERS


def test_6_1_data_on_stream_0(conn):
    conn.send(frame(DATA, 0, 0, b"x"))
    connection_error(conn.outcome(), PROTOCOL_ERROR)


def test_6_1_data_padding_too_long(conn):
    conn.send(post(1) + frame(DATA, PADDED, 1, b"\x05abc"))
    connection_error(conn.outcome(), PROTOCOL_ERROR)


def test_6_1_padded_data_is_taken(conn):
    conn.send(post(1) + frame(DATA, PADDED | END_STREAM, 1, b"\x03body\x00\x00\x00"))
    assert response_end(conn, 1) == 502  # the body was taken whole; the upstream is not there


def test_6_2_headers_on_stream_0(conn):
    conn.send(frame(HEADERS, END_HEADERS | END_STREAM, 0, request_block("/ret")))
    connection_error(conn.outcome(), PROTOCOL_ERROR)


def test_6_2_headers_padding_too_long(conn):
    conn.send(frame(HEADERS, END_HEADERS | END_STREAM | PADDED, 1, b"\xff" + request_block("/ret")))
    connection_error(conn.outcome(), PROTOCOL_ERROR)


def test_6_2_padded_headers_with_priority(conn):
    block = b"\x04" + struct.pack(">IB", 0, 200) + request_block("/ret") + b"\x00" * 4
    conn.send(frame(HEADERS, END_HEADERS | END_STREAM | PADDED | PRIORITY_FLAG, 1, block))
    assert response_end(conn, 1) == 200


@pytest.mark.parametrize("between", ["PRIORITY", "HEADERS", "DATA", "PING"])
def test_6_2_header_block_interrupted(conn, between):
    block = request_block("/ret")
    other = {"PRIORITY": priority(1, 0), "HEADERS": get(3), "DATA": frame(DATA, 0, 1, b"x"),
             "PING": frame(PING, 0, 0, b"12345678")}[between]
    conn.send(frame(HEADERS, END_STREAM, 1, block[:6]) + other + frame(CONTINUATION, END_HEADERS, 1, block[6:]))
    connection_error(conn.outcome(), PROTOCOL_ERROR)


# ---------------------------------------------------------------------------
# 6.4 RST_STREAM, 7 error codes


def test_6_4_rst_stream_on_stream_0(conn):
    conn.send(rst(0))
    connection_error(conn.outcome(), PROTOCOL_ERROR)


def test_6_4_rst_stream_of_wrong_length(connect):
    c = connect(NO_WINDOW)
    c.send(get(1, "/big.bin") + frame(RST_STREAM, 0, 1, b"\x00\x00\x08"))
    connection_error(c.outcome(), FRAME_SIZE_ERROR)


def test_7_unknown_error_code_is_not_an_error(connect):
    c = connect(NO_WINDOW)
    c.send(get(1, "/big.bin") + rst(1, 0xABCD))
    ignored(c.outcome())
    # The client's GOAWAY: the connection may end, but not with an error of ours.
    c.send(frame(GOAWAY, 0, 0, struct.pack(">II", 0, 0xABCD)))
    assert c.outcome().goaway in (None, NO_ERROR)


# ---------------------------------------------------------------------------
# 6.5 SETTINGS


@pytest.mark.parametrize("sent,code", [
    (frame(SETTINGS, ACK, 0, settings_payload((SETTINGS_ENABLE_PUSH, 0))), FRAME_SIZE_ERROR),
    (frame(SETTINGS, 0, 1, settings_payload((SETTINGS_ENABLE_PUSH, 0))), PROTOCOL_ERROR),
    (frame(SETTINGS, 0, 0, b"\x00\x02\x00"), FRAME_SIZE_ERROR),
    (frame(SETTINGS, 0, 0, settings_payload((SETTINGS_ENABLE_PUSH, 2))), PROTOCOL_ERROR),
    (frame(SETTINGS, 0, 0, settings_payload((SETTINGS_INITIAL_WINDOW_SIZE, 1 << 31))), FLOW_CONTROL_ERROR),
    (frame(SETTINGS, 0, 0, settings_payload((SETTINGS_MAX_FRAME_SIZE, 16383))), PROTOCOL_ERROR),
    (frame(SETTINGS, 0, 0, settings_payload((SETTINGS_MAX_FRAME_SIZE, 1 << 24))), PROTOCOL_ERROR),
], ids=["ack-with-payload", "on-a-stream", "bad-length", "enable-push-2", "window-too-large",
        "frame-size-too-small", "frame-size-too-large"])
def test_6_5_invalid_settings(conn, sent, code):
    conn.send(sent)
    connection_error(conn.outcome(), code)


def test_6_5_unknown_setting_is_ignored_and_acked(conn):
    conn.send(frame(SETTINGS, 0, 0, settings_payload((0xFF, 7), (SETTINGS_INITIAL_WINDOW_SIZE, 1000),
                                                      (SETTINGS_INITIAL_WINDOW_SIZE, 70000))))
    out = conn.outcome()
    ignored(out)
    assert any(f[0] == SETTINGS and f[1] & ACK and not f[3] for f in out.frames), out


# ---------------------------------------------------------------------------
# 6.7 PING, 6.8 GOAWAY


@pytest.mark.parametrize("sent,code", [
    (frame(PING, 0, 1, b"12345678"), PROTOCOL_ERROR),
    (frame(PING, 0, 0, b"1234567"), FRAME_SIZE_ERROR),
    (frame(GOAWAY, 0, 1, struct.pack(">II", 0, 0)), PROTOCOL_ERROR),
], ids=["ping-on-a-stream", "ping-of-wrong-length", "goaway-on-a-stream"])
def test_6_7_6_8_invalid_control_frames(conn, sent, code):
    conn.send(sent)
    connection_error(conn.outcome(), code)


def test_6_7_ping_ack_is_not_answered(conn):
    conn.send(frame(PING, ACK, 0, b"unasked!"))
    out = conn.outcome()
    ignored(out)
    assert not [f for f in out.frames if f[0] == PING and f[3] == b"unasked!"], out


# ---------------------------------------------------------------------------
# 6.9 WINDOW_UPDATE and flow control


def test_6_9_zero_increment_on_the_connection(conn):
    conn.send(window_update(0, 0))
    connection_error(conn.outcome(), PROTOCOL_ERROR)


def test_6_9_zero_increment_on_a_stream(connect):
    c = connect(NO_WINDOW)
    c.send(get(1, "/big.bin") + window_update(1, 0))
    stream_error(c.outcome(), 1, PROTOCOL_ERROR)


def test_6_9_window_update_of_wrong_length(conn):
    conn.send(frame(WINDOW_UPDATE, 0, 0, b"\x00\x00\x01"))
    connection_error(conn.outcome(), FRAME_SIZE_ERROR)


def test_6_9_1_connection_window_overflow(conn):
    conn.send(window_update(0, 0x7FFFFFFF))
    connection_error(conn.outcome(), FLOW_CONTROL_ERROR)


def test_6_9_1_stream_window_overflow(connect):
    c = connect(NO_WINDOW)
    c.send(get(1, "/big.bin") + window_update(1, 0x7FFFFFFF) + window_update(1, 0x7FFFFFFF))
    stream_error(c.outcome(), 1, FLOW_CONTROL_ERROR)


def test_6_9_2_initial_window_change_overflows_a_stream(connect):
    # RFC 9113 6.9.2 asks for a connection error; nghttp2 and nginx both
    # reset the stream alone, which ends the overflowed stream all the same.
    c = connect(NO_WINDOW)
    c.send(post(1) + window_update(1, 0x7FFFFFFF))  # no response yet: the window stays full
    c.send(frame(SETTINGS, 0, 0, settings_payload((SETTINGS_INITIAL_WINDOW_SIZE, 100))))
    stream_error(c.outcome(), 1, FLOW_CONTROL_ERROR)


# ---------------------------------------------------------------------------
# 6.10 CONTINUATION


def test_6_10_continuation_is_joined(conn):
    block = request_block("/ret", extra=[("x-long", "c" * 100)])
    conn.send(frame(HEADERS, END_STREAM, 1, block[:7]) + frame(CONTINUATION, 0, 1, block[7:50]) +
              frame(CONTINUATION, END_HEADERS, 1, block[50:]))
    assert response_end(conn, 1) == 200


@pytest.mark.parametrize("case", ["after-end-headers", "after-last-continuation", "after-data", "other-stream",
                                  "stream-0"])
def test_6_10_misplaced_continuation(conn, case):
    block = request_block("/ret")
    if case == "after-end-headers":
        sent = frame(HEADERS, END_HEADERS | END_STREAM, 1, block) + frame(CONTINUATION, END_HEADERS, 1, b"")
    elif case == "after-last-continuation":
        sent = (frame(HEADERS, END_STREAM, 1, block[:6]) + frame(CONTINUATION, END_HEADERS, 1, block[6:]) +
                frame(CONTINUATION, END_HEADERS, 1, literal("x-more", "1")))
    elif case == "after-data":
        sent = post(1) + frame(DATA, 0, 1, b"body") + frame(CONTINUATION, END_HEADERS, 1, literal("x-more", "1"))
    else:
        sid = 3 if case == "other-stream" else 0
        sent = frame(HEADERS, END_STREAM, 1, block[:6]) + frame(CONTINUATION, END_HEADERS, sid, block[6:])
    conn.send(sent)
    connection_error(conn.outcome(), PROTOCOL_ERROR)


# ---------------------------------------------------------------------------
# 8.1 Messages: trailers and content-length


def test_8_1_trailers_must_end_the_stream(conn):
    conn.send(post(1) + frame(DATA, 0, 1, b"body") + frame(HEADERS, END_HEADERS, 1, literal("x-trailer", "t")))
    malformed(conn.outcome(), 1)


def test_8_1_pseudo_header_in_trailers(conn):
    conn.send(post(1) + frame(DATA, 0, 1, b"body") +
              frame(HEADERS, END_HEADERS | END_STREAM, 1, literal(":method", "GET")))
    malformed(conn.outcome(), 1)


def test_8_1_trailers_are_taken(conn, nginx_only_skip):
    # nginx 1.22 takes no request trailers (a connection PROTOCOL_ERROR).
    conn.send(post(1) + frame(DATA, 0, 1, b"body") +
              frame(HEADERS, END_HEADERS | END_STREAM, 1, literal("x-trailer", "t")))
    assert response_end(conn, 1) == 502


@pytest.mark.parametrize("length,body", [(10, b"hello"), (1, b"hello")], ids=["short", "long"])
def test_8_1_1_content_length_mismatch(conn, length, body):
    conn.send(post(1, extra=[("content-length", str(length))]) + frame(DATA, END_STREAM, 1, body))
    malformed(conn.outcome(), 1)


def test_8_1_1_content_length_mismatch_in_pieces(conn):
    conn.send(post(1, extra=[("content-length", "6")]) + frame(DATA, 0, 1, b"abc") + frame(DATA, 0, 1, b"def") +
              frame(DATA, END_STREAM, 1, b"g"))
    malformed(conn.outcome(), 1)


# ---------------------------------------------------------------------------
# 8.2 Fields, 8.3 pseudo-header fields

REQUEST = [(":method", "GET"), (":scheme", "http"), (":path", "/ret"), (":authority", "localhost")]

MALFORMED_FIELDS = {
    "uppercase-name": REQUEST + [("X-Upper", "v")],
    "space-in-name": REQUEST + [("x bad", "v")],
    "colon-in-name": REQUEST + [("x:bad", "v")],
    "newline-in-value": REQUEST + [("x-bad", "a\nb")],
    "nul-in-value": REQUEST + [("x-bad", "a\x00b")],
    "connection": REQUEST + [("connection", "keep-alive")],
    "keep-alive": REQUEST + [("keep-alive", "timeout=5")],
    "proxy-connection": REQUEST + [("proxy-connection", "keep-alive")],
    "transfer-encoding": REQUEST + [("transfer-encoding", "chunked")],
    "upgrade": REQUEST + [("upgrade", "websocket")],
    "te-gzip": REQUEST + [("te", "gzip")],
    "unknown-pseudo": REQUEST + [(":foo", "bar")],
    "response-pseudo": REQUEST + [(":status", "200")],
    "pseudo-after-field": REQUEST[:3] + [("x-a", "b"), (":authority", "localhost")],
    "duplicate-path": REQUEST + [(":path", "/ret")],
    "duplicate-method": REQUEST + [(":method", "GET")],
    "duplicate-scheme": REQUEST + [(":scheme", "http")],
    "no-method": REQUEST[1:],
    "no-scheme": [REQUEST[0]] + REQUEST[2:],
    "no-path": REQUEST[:2] + REQUEST[3:],
    "empty-path": REQUEST[:2] + [(":path", "")] + REQUEST[3:],
    "empty-name": REQUEST + [("", "v")],
    "connect-with-path": [(":method", "CONNECT"), (":scheme", "http"), (":path", "/"), (":authority", "localhost:80")],
}


# nginx 1.22 answers these as if the field were not there.
NGINX_TAKES = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te-gzip",
               "pseudo-after-field"}


@pytest.mark.parametrize("name", sorted(MALFORMED_FIELDS))
def test_8_2_8_3_malformed_request(conn, name, request):
    if name in NGINX_TAKES:
        request.getfixturevalue("nginx_only_skip")
    conn.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, fields_block(MALFORMED_FIELDS[name])))
    malformed(conn.outcome(), 1)


@pytest.mark.parametrize("value", [" lead", "trail ", "\ttab"])
def test_8_2_1_value_with_outer_whitespace(conn, value, nginx_only_skip):
    # RFC 9113 8.2.1: a field value must not start or end with whitespace.
    # nginx takes such values.
    conn.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, fields_block(REQUEST + [("x-ws", value)])))
    malformed(conn.outcome(), 1)


def test_8_1_1_content_length_without_data(conn):
    # END_STREAM on the HEADERS: a body of 0 bytes where 5 were announced.
    conn.send(frame(HEADERS, END_HEADERS | END_STREAM, 1,
                    request_block("/upload", method="POST", extra=[("content-length", "5")])))
    malformed(conn.outcome(), 1)


def test_8_2_2_te_trailers_is_allowed(conn):
    conn.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, fields_block(REQUEST + [("te", "trailers")])))
    assert response_end(conn, 1) == 200


def test_8_4_push_promise_from_a_client(conn):
    conn.send(get(1, "/big.bin", end_stream=False) +
              frame(PUSH_PROMISE, END_HEADERS, 1, struct.pack(">I", 2) + request_block("/")))
    connection_error(conn.outcome(), PROTOCOL_ERROR)


# ---------------------------------------------------------------------------
# What the server sends: it honours the client's SETTINGS and windows


def data_bytes(frames, stream=None):
    return sum(len(f[3]) - (f[3][0] + 1 if f[1] & PADDED else 0)
               for f in frames if f[0] == DATA and (stream is None or f[2] == stream))


def read_data(c, want, stream=None):
    """Reads until `want` DATA bytes came (for `stream`, or any); the frames."""
    frames = []
    while data_bytes(frames, stream) < want:
        f = c.read_frame()
        assert f is not None, frames[-5:]
        assert f[0] not in (GOAWAY, RST_STREAM), f
        frames.append(f)
    return frames


def test_6_9_1_stream_window_is_honoured(connect):
    c = connect(settings_payload((SETTINGS_INITIAL_WINDOW_SIZE, 1000)))
    c.send(get(1, "/big.bin"))
    frames = read_data(c, 1000, 1)
    out = c.outcome()  # nothing more may come until our WINDOW_UPDATE
    assert data_bytes(frames + out.frames, 1) == 1000, out
    c.send(window_update(1, 500))
    frames = read_data(c, 500, 1)
    assert data_bytes(frames + c.outcome().frames, 1) == 500


def test_6_9_2_negative_window_after_settings(connect):
    # A smaller SETTINGS_INITIAL_WINDOW_SIZE can drive a stream's window
    # below zero: the next WINDOW_UPDATE first fills the hole.
    c = connect(settings_payload((SETTINGS_INITIAL_WINDOW_SIZE, 100)))
    c.send(get(1, "/big.bin"))
    read_data(c, 100, 1)
    c.send(frame(SETTINGS, 0, 0, settings_payload((SETTINGS_INITIAL_WINDOW_SIZE, 50))))
    c.outcome()
    c.send(window_update(1, 60))  # -50 + 60: 10 bytes may go
    frames = read_data(c, 10, 1)
    assert data_bytes(frames + c.outcome().frames, 1) == 10


def test_6_9_1_connection_window_is_honoured(connect):
    c = connect(settings_payload((SETTINGS_INITIAL_WINDOW_SIZE, 1 << 30)))
    c.send(get(1, "/big.bin") + get(3, "/big.bin"))
    frames = read_data(c, 65535)
    out = c.outcome()
    assert data_bytes(frames + out.frames) == 65535, out
    c.send(window_update(0, 10000))
    frames = read_data(c, 10000)
    assert data_bytes(frames + c.outcome().frames) == 10000


def test_6_5_2_max_frame_size_is_honoured(connect):
    c = connect(settings_payload((SETTINGS_INITIAL_WINDOW_SIZE, 1 << 30)))
    c.send(window_update(0, 1 << 30) + get(1, "/big.bin"))
    frames = read_data(c, BIG_SIZE, 1)
    assert max(len(f[3]) for f in frames if f[0] == DATA) <= 16384


def test_6_5_2_header_table_size_0_is_honoured(connect):
    # With no dynamic table allowed, a response that indexed a field
    # would not decode.
    c = connect(settings_payload((0x1, 0)))
    c.decoder.max_allowed_table_size = 0
    for sid in (1, 3, 5):
        c.send(get(sid, "/index.html"))
        assert response_end(c, sid) == 200


def test_5_1_closed_by_client_reset_stops_the_response(connect):
    c = connect(settings_payload((SETTINGS_INITIAL_WINDOW_SIZE, 1 << 30)))
    c.send(window_update(0, 1 << 30) + get(1, "/big.bin"))
    read_data(c, 1, 1)
    c.send(rst(1, CANCEL))
    c.outcome()  # what was on its way before the reset
    out = c.outcome()
    assert out.alive and data_bytes(out.frames, 1) == 0, out


def test_8_1_head_has_no_body(conn):
    conn.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, request_block("/index.html", method="HEAD")))
    frames = []
    while True:
        f = conn.read_frame()
        assert f is not None
        frames.append(f)
        if f[2] == 1 and f[1] & END_STREAM:
            break
    assert frames[-1][0] == HEADERS and frames[-1].status == 200
    assert not [f for f in frames if f[0] == DATA and f[2] == 1]


def test_6_8_the_clients_goaway_lets_its_streams_finish(connect):
    c = connect(settings_payload((SETTINGS_INITIAL_WINDOW_SIZE, 1 << 30)))
    c.send(get(1, "/big.bin") + frame(GOAWAY, 0, 0, struct.pack(">II", 0, NO_ERROR)))
    c.send(window_update(0, 1 << 30))
    frames = read_data(c, BIG_SIZE, 1)
    assert frames[-1][0] == DATA and frames[-1][1] & END_STREAM
