"""HTTP/3 limits and defences, the HTTP/3 side of test_http2.py and
test_http2_conformance.py: frames a well-behaved client never sends, put
before torii by h3raw (tools/h3raw), a QUIC client that writes raw HTTP/3
frames and reports what comes back (headers, resets, CONNECTION_CLOSE).

torii only: Debian's nginx 1.22 has no HTTP/3 module. Where nginx's
http3 module (src/http/v3/) answers differently, the test says so.
"""

import time

import pytest

import h3raw as h
import harness
from bad_upstream import BadUpstream
from harness import base_conf, wait_until
from test_http3 import cert  # noqa: F401 (fixture)

pytestmark = [
    pytest.mark.skipif(harness.IS_NGINX, reason="Debian's nginx has no HTTP/3"),
    pytest.mark.skipif(not h.AVAILABLE, reason="h3raw not built"),
]


def conf(cert, server="", http=""):
    return base_conf(f"""
    {http}
    server {{
        listen 127.0.0.1:@PORT0@ ssl;
        http3 on;
        server_name a.test;
        ssl_certificate {cert}/a.test.pem;
        ssl_certificate_key {cert}/a.test.key;
        root @PREFIX@/html;
        large_client_header_buffers 4 1k;
        location = /hello {{
            return 200 "hi\\n";
        }}
        {server}
    }}
""", error_level="info")


@pytest.fixture
def site(make_server, cert):
    def start(server="", http=""):
        srv = make_server(conf(cert, server, http), start=False)
        html = srv.prefix / "html"
        html.mkdir(parents=True, exist_ok=True)
        (html / "index.html").write_text("hello\n")
        (html / "big.bin").write_bytes(b"x" * (2 * 1024 * 1024))
        srv.start()
        return srv
    return start


CONTROL = h.hx(h.control_stream())
HELLO = h.hx(h.request("/hello"))


def still_answers(lines, stream):
    """The request on `stream` (sent after the bad one) got its 200."""
    assert h.status(lines, stream) == 200, lines
    assert any(line.startswith(f"fin {stream} 3 ") for line in lines), lines


# ---- connection errors: the control and QPACK streams (RFC 9114 6.2, 7.2.4; RFC 9204 4.2) --------

@pytest.mark.parametrize("name, streams, code", [
    ("second control stream", [CONTROL, CONTROL], h.H3_STREAM_CREATION_ERROR),
    ("DATA on the control stream", [CONTROL + h.hx(h.frame(h.DATA, b"xx"))], h.H3_FRAME_UNEXPECTED),
    ("control stream without SETTINGS first", [h.hx(h.varint(h.CONTROL) + h.frame(h.GOAWAY, h.varint(0)))],
     h.H3_MISSING_SETTINGS),
    ("second SETTINGS", [CONTROL + h.hx(h.settings())], h.H3_FRAME_UNEXPECTED),
    ("QPACK table capacity over the advertised one",
     [CONTROL, h.hx(h.varint(h.QPACK_ENCODER) + h._prefixed_int(0x20, 5, 100000))], h.QPACK_ENCODER_STREAM_ERROR),
    ("QPACK insert larger than the table",
     [CONTROL, h.hx(h.varint(h.QPACK_ENCODER) + h._prefixed_int(0x20, 5, 4096) + h._prefixed_int(0x40, 5, 3)
                    + b"abc" + h._prefixed_int(0, 7, 5000) + b"v" * 5000)], h.QPACK_ENCODER_STREAM_ERROR),
    ("QPACK decoder stream acknowledging what was never sent",
     [CONTROL, h.hx(h.varint(h.QPACK_DECODER) + bytes([0x05]))], 0x202),
])
def test_bad_unidirectional_streams_close_the_connection(site, name, streams, code):
    srv = site()
    lines = h.run(srv.port, [f"uni {s}" for s in streams] + ["until 5000 close"])
    assert h.closed_with(lines) == ("app", code), (name, lines)
    # Said in the error log, with the client's address.
    wait_until(lambda: "client sent invalid HTTP/3 data" in srv.error_log_text(), 5, what="log line")


# The client's unidirectional streams are 2, 6, 10... in the order opened.
@pytest.mark.parametrize("name, streams, end", [
    ("control stream ended", [CONTROL], "send 2 00 fin"),
    ("control stream reset", [CONTROL], "reset 2 0x100"),
    ("QPACK encoder stream reset", [CONTROL, h.hx(h.varint(h.QPACK_ENCODER))], "reset 6 0x100"),
    ("QPACK decoder stream reset", [CONTROL, h.hx(h.varint(h.QPACK_DECODER))], "reset 6 0x100"),
    # The server's own: STOP_SENDING on its control stream (3), its QPACK encoder stream (7).
    ("the server's control stream stopped", [CONTROL], "reset 3 0x100"),
    ("the server's QPACK encoder stream stopped", [CONTROL], "reset 7 0x100"),
])
def test_a_closed_critical_stream_closes_the_connection(site, name, streams, end):
    # RFC 9114 6.2.1, RFC 9204 4.2: closed "at any point", by FIN or reset.
    srv = site()
    lines = h.run(srv.port, [f"uni {s}" for s in streams] + ["sleep 200", end, "until 5000 close"])
    assert h.closed_with(lines) == ("app", h.H3_CLOSED_CRITICAL_STREAM), (name, lines)


def test_a_reset_stream_of_unknown_type_is_no_error(site):
    # RFC 9114 6.2: unknown stream types are ignored, their reset too.
    srv = site()
    lines = h.run(srv.port, [f"uni {CONTROL}", f"uni {h.hx(h.varint(0x21) + b'abc')}", "sleep 200", "reset 6 0x100",
                             "sleep 200", f"bidi {HELLO} fin", "until 5000 fin 0"])
    still_answers(lines, 0)
    assert h.closed_with(lines) is None, lines


def test_data_before_headers_on_a_request_stream_closes_the_connection(site):
    srv = site()
    lines = h.run(srv.port, [f"uni {CONTROL}", f"bidi {h.hx(h.frame(h.DATA, b'abc'))} fin", "until 5000 close"])
    assert h.closed_with(lines) == ("app", h.H3_FRAME_UNEXPECTED), lines


# ---- stream errors: a malformed request resets its stream only (RFC 9114 4.1.2) -------------------

@pytest.mark.parametrize("name, sent", [
    ("upper-case field name", h.request("/hello", extra=[("X-Upper", "1")])),
    ("unknown pseudo-header", h.request("/hello", extra=[(":foo", "1")])),
    ("no :path", h.headers([(":method", "GET"), (":scheme", "https"), (":authority", "a.test")])),
    ("pseudo-header after a regular field", h.headers([(":method", "GET"), ("x-a", "1"), (":scheme", "https"),
                                                       (":authority", "a.test"), (":path", "/hello")])),
    ("connection-specific field", h.request("/hello", extra=[("connection", "keep-alive")])),
    ("te other than trailers", h.request("/hello", extra=[("te", "gzip")])),
    ("a pseudo-header in trailers", h.request("/hello", method="POST") + h.frame(h.DATA, b"abc")
     + h.headers([(":path", "/x")])),
])
def test_malformed_request_resets_its_stream_and_the_connection_goes_on(site, name, sent):
    srv = site()
    lines = h.run(srv.port, [f"uni {CONTROL}", f"bidi {h.hx(sent)} fin", "until 5000 reset 0",
                             f"bidi {HELLO} fin", "until 5000 fin 4"])
    assert h.resets(lines, 0) == [h.H3_MESSAGE_ERROR], (name, lines)
    assert h.status(lines, 0) is None
    assert h.closed_with(lines) is None, lines
    still_answers(lines, 4)
    wait_until(lambda: "client sent a malformed HTTP/3 request header" in srv.error_log_text(), 5, what="log line")


@pytest.mark.parametrize("name, declared, sent", [
    ("fewer bytes than content-length", "10", b"abc"),
    ("more bytes than content-length", "2", b"abcdef"),
])
def test_content_length_mismatch_resets_the_stream_only(site, name, declared, sent):
    srv = site()
    bad = h.request("/hello", method="POST", extra=[("content-length", declared)]) + h.frame(h.DATA, sent)
    lines = h.run(srv.port, [f"uni {CONTROL}", f"bidi {h.hx(bad)} fin", "until 5000 reset 0",
                             f"bidi {HELLO} fin", "until 5000 fin 4"])
    assert h.resets(lines, 0) == [h.H3_MESSAGE_ERROR], (name, lines)
    assert h.closed_with(lines) is None, lines
    still_answers(lines, 4)
    wait_until(lambda: "malformed HTTP/3 request" in srv.error_log_text(), 5, what="log line")


def test_request_reset_mid_body_ends_its_upstream_request_only(site):
    # The client gives up on a proxied upload (RESET_STREAM and
    # STOP_SENDING, H3_REQUEST_CANCELLED): the upstream connection closes
    # with what came of the body, the request is logged 499, and the
    # connection's next request is answered.
    up = BadUpstream("h3")
    try:
        srv = site(server=f"""location /up/ {{ proxy_pass http://127.0.0.1:{up.port};
                                          proxy_request_buffering off; proxy_http_version 1.1; }}""")
        upload = h.request("/up/echo", method="POST", extra=[("content-length", "50")]) + h.frame(h.DATA, b"abc")
        lines = h.run(srv.port, [f"uni {CONTROL}", f"bidi {h.hx(upload)}", "sleep 300",
                                 f"reset 0 {h.H3_REQUEST_CANCELLED}", "sleep 300", f"bidi {HELLO} fin",
                                 "until 5000 fin 4"])
        still_answers(lines, 4)
        assert h.status(lines, 0) is None and h.closed_with(lines) is None, lines
        wait_until(lambda: up.requests and up.requests[0].endswith(b"\r\n\r\nabc"), 5, what="the upstream's EOF")
        wait_until(lambda: '"POST /up/echo HTTP/3.0" 499 ' in srv.access_log.read_text(), 5, what="the 499 line")
    finally:
        up.stop()


# ---- what must be ignored or taken (RFC 9114 9, 4.1) ---------------------------------------------

GREASE = h.frame(0x21, b"grease")


@pytest.mark.parametrize("name, streams, sent", [
    ("unknown frame types on the control and request streams", [CONTROL + h.hx(GREASE)],
     GREASE + h.request("/hello") + GREASE),
    ("a unidirectional stream of an unknown type", [CONTROL, h.hx(h.varint(0x21) + b"abc")], h.request("/hello")),
    ("trailers after the body", [CONTROL], h.request("/hello", method="POST") + h.frame(h.DATA, b"abc")
     + h.headers([("x-t", "1")])),
    ("te: trailers", [CONTROL], h.request("/hello", extra=[("te", "trailers")])),
    ("the client's GOAWAY", [CONTROL + h.hx(h.frame(h.GOAWAY, h.varint(0)))], h.request("/hello")),
])
def test_what_a_server_must_ignore_or_take(site, name, streams, sent):
    srv = site()
    lines = h.run(srv.port, [f"uni {s}" for s in streams] + [f"bidi {h.hx(sent)} fin", "until 5000 fin 0"])
    still_answers(lines, 0)
    assert h.closed_with(lines) is None, (name, lines)


@pytest.mark.parametrize("name, streams, sent, code", [
    ("PUSH_PROMISE from a client", [CONTROL],
     h.request("/hello") + h.frame(0x5, h.varint(0) + h.field_section([(":method", "GET")])), h.H3_FRAME_UNEXPECTED),
    ("HEADERS after the trailers", [CONTROL],
     h.request("/hello", method="POST") + h.headers([("x-t", "1")]) + h.frame(h.DATA, b"a"), h.H3_FRAME_UNEXPECTED),
    ("an HTTP/2 setting in SETTINGS", [h.hx(h.varint(h.CONTROL) + h.frame(h.SETTINGS, h.varint(0x2) + h.varint(1)))],
     None, 0x109),
])
def test_frames_out_of_place_close_the_connection(site, name, streams, sent, code):
    srv = site()
    script = [f"uni {s}" for s in streams]
    if sent is not None:
        script.append(f"bidi {h.hx(sent)} fin")
    lines = h.run(srv.port, script + ["until 5000 close"])
    assert h.closed_with(lines) == ("app", code), (name, lines)


def test_head_has_no_body(site):
    srv = site()
    lines = h.run(srv.port, [f"uni {CONTROL}", f"bidi {h.hx(h.request('/index.html', method='HEAD'))} fin",
                             "until 5000 fin 0"])
    assert h.status(lines, 0) == 200, lines
    assert "header 0 content-length: 6" in lines, lines
    assert any(line.startswith("fin 0 0") for line in lines), lines


# ---- field section limits -------------------------------------------------------------------------

def test_field_section_over_large_client_header_buffers_gets_431(site):
    # 4 x 1k: one field over 1k, or all of them over 4k, is 431 (nginx's
    # http3 module answers "client sent too large header" with 400 or
    # closes; torii answers as its HTTP/2 does) and the connection goes on.
    srv = site()
    one_big = h.request("/hello", extra=[("x-big", "a" * 2000)])
    many = h.request("/hello", extra=[(f"x-{i}", "b" * 900) for i in range(6)])
    lines = h.run(srv.port, [f"uni {CONTROL}", f"bidi {h.hx(one_big)} fin", "until 5000 fin 0",
                             f"bidi {h.hx(many)} fin", "until 5000 fin 4", f"bidi {HELLO} fin", "until 5000 fin 8"])
    assert h.status(lines, 0) == 431, lines
    assert h.status(lines, 4) == 431, lines
    still_answers(lines, 8)
    assert "client sent too large request headers" in srv.error_log_text()


# ---- floods ------------------------------------------------------------------------------------

def test_rapid_reset_closes_the_connection_with_excessive_load(site):
    # CVE-2023-44487 over QUIC: requests opened and cancelled at once cost
    # the server a request each and the client nothing. As HTTP/2's
    # budget (200 a second), then CONNECTION_CLOSE(H3_EXCESSIVE_LOAD).
    srv = site()
    big = h.hx(h.request("/big.bin"))
    lines = h.run(srv.port, [f"uni {CONTROL}", f"flood 2000 {big} 0x10c", "until 5000 close"], timeout=60)
    assert h.closed_with(lines) == ("app", h.H3_EXCESSIVE_LOAD), lines[-5:]
    flooded = int(next(line for line in lines if line.startswith("flood_done")).split()[1])
    assert flooded < 2000, lines[-5:]
    wait_until(lambda: "rapid reset" in srv.error_log_text(), 5, what="log line")


def test_cancelling_a_few_requests_is_not_a_flood(site):
    srv = site()
    big = h.hx(h.request("/big.bin"))
    lines = h.run(srv.port, [f"uni {CONTROL}", f"flood 50 {big} 0x10c", f"bidi {HELLO} fin", "until 5000 fin"])
    assert h.closed_with(lines) is None, lines[-5:]
    stream = int(next(line for line in lines if line.startswith("bidi ")).split()[1])
    still_answers(lines, stream)


# ---- timeouts -------------------------------------------------------------------------------------

def test_request_stream_without_its_head_times_out(site):
    # client_header_timeout per request stream, as nginx's HTTP/3 (its
    # wait_request_handler): half a HEADERS frame, then only PINGs.
    srv = site(server="client_header_timeout 1s; keepalive_timeout 30s;")
    partial = h.hx(h.request("/hello")[:5])
    t0 = time.monotonic()
    lines = h.run(srv.port, [f"uni {CONTROL}", "keepalive 300", f"bidi {partial}", "until 10000 reset 0",
                             f"bidi {HELLO} fin", "until 5000 fin 4"])
    assert h.resets(lines, 0), lines
    assert time.monotonic() - t0 < 8
    still_answers(lines, 4)
    wait_until(lambda: "client timed out (110: Connection timed out) while reading client request headers"
               in srv.error_log_text(), 5, what="log line")


def test_keepalive_timeout_closes_a_connection_without_requests_despite_pings(site):
    # nginx's HTTP/3 keepalive timer runs from the end of the last request;
    # PINGs (which keep QUIC's idle timer from firing) do not stop it.
    srv = site(server="keepalive_timeout 1s;")
    t0 = time.monotonic()
    lines = h.run(srv.port, [f"uni {CONTROL}", "keepalive 200", f"bidi {HELLO} fin", "until 5000 fin 0",
                             "until 10000 close"])
    elapsed = time.monotonic() - t0
    still_answers(lines, 0)
    assert h.closed_with(lines) == ("app", h.H3_NO_ERROR), lines
    assert 0.9 < elapsed < 8, elapsed


def test_keepalive_timeout_waits_for_open_requests(site):
    # A request in flight is not idleness: the slow client's body arrives
    # after keepalive_timeout and still gets its answer.
    srv = site(server="keepalive_timeout 1s; client_body_timeout 10s; location = /post { return 200 \"ok\\n\"; }")
    head = h.hx(h.request("/post", method="POST", extra=[("content-length", "3")]))
    lines = h.run(srv.port, [f"uni {CONTROL}", "keepalive 200", f"bidi {head}", "sleep 1500",
                             f"send 0 {h.hx(h.frame(h.DATA, b'abc'))} fin", "until 5000 fin 0"])
    assert h.status(lines, 0) == 200, lines


def test_send_timeout_resets_a_response_the_client_stopped_reading(site):
    srv = site(server="send_timeout 1s; keepalive_timeout 30s;")
    big = h.hx(h.request("/big.bin"))
    t0 = time.monotonic()
    lines = h.run(srv.port, [f"uni {CONTROL}", "keepalive 300", "stall", f"bidi {big} fin", "until 10000 reset 0"])
    assert h.resets(lines, 0) == [h.H3_REQUEST_CANCELLED], lines
    assert time.monotonic() - t0 < 8
    wait_until(lambda: "while sending response to client" in srv.error_log_text(), 5, what="log line")
    wait_until(lambda: '"GET /big.bin HTTP/3.0" 200' in srv.access_log.read_text(), 5, what="access log line")


def test_keepalive_time_sends_goaway_after_the_request_that_reaches_it(site):
    # keepalive_time: a connection open longer takes no new request after
    # the current one (nginx's HTTP/3: GOAWAY, then the close).
    srv = site(server="keepalive_time 1s; keepalive_timeout 30s;")
    lines = h.run(srv.port, [f"uni {CONTROL}", f"bidi {HELLO} fin", "until 5000 fin 0", "keepalive 200",
                             "sleep 1200", f"bidi {HELLO} fin", "until 5000 fin 4", "until 5000 close"])
    still_answers(lines, 0)
    still_answers(lines, 4)
    assert any(line.startswith("goaway") for line in lines), lines
    assert h.closed_with(lines) == ("app", h.H3_NO_ERROR), lines



@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "no-content-length"])
def test_body_over_client_max_body_size_gets_413(site, declared):
    # With or without content-length: the stream is answered 413 and the
    # connection takes the next request.
    srv = site(server="client_max_body_size 1k; location = /up { proxy_pass http://127.0.0.1:9; }")
    extra = [("content-length", "5000")] if declared else []
    big = h.request("/up", method="POST", extra=extra) + h.frame(h.DATA, b"z" * 5000)
    lines = h.run(srv.port, [f"uni {CONTROL}", f"bidi {h.hx(big)} fin", "until 5000 fin 0",
                             f"bidi {HELLO} fin", "until 5000 fin 4"])
    assert h.status(lines, 0) == 413, lines
    still_answers(lines, 4)
    assert "client intended to send too large body" in srv.error_log_text()
