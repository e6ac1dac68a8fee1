"""HTTP/1.x on raw sockets: persistence, pipelining, 1.0, request bodies,
Expect: 100-continue, the refusals of a strict parser, limits and timeouts."""

import socket
import time

import pytest

import harness
from harness import Conn, base_conf, build_request, http_raw

CONF = r"""
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        root @PREFIX@/www;
        large_client_header_buffers 4 1k;
        client_max_body_size 1k;
        client_header_timeout 1s;
        client_body_timeout 2s;
        keepalive_timeout 30s;

        location = /a { return 200 "A"; }
        location = /b { return 200 "B"; }
        location = /c { return 200 "C"; }
        location / { return 200 "ok"; }
    }

    # Short keep-alive for the idle-close test; the second value is
    # announced as Keep-Alive: timeout=.
    server {
        listen 127.0.0.1:@PORT1@;
        keepalive_timeout 1s 1;
        location / { return 200 "idle"; }
        location = /close { keepalive_timeout 0; return 200 "closing"; }
    }

    # Few requests per connection.
    server {
        listen 127.0.0.1:@PORT2@;
        keepalive_requests 3;
        location / { return 200 "kr"; }
    }
"""


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("http1")
    (prefix / "www").mkdir()
    server = harness.Server(base_conf(CONF), prefix, nports=3)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def req(path="/", headers=None, method="GET", body=None, host="localhost", version="HTTP/1.1"):
    return build_request(method, path, headers, body, host, version)


# -- persistence ------------------------------------------------------------------


def test_keep_alive_two_requests(srv):
    with Conn(srv.port) as c:
        r1 = c.request("GET", "/a")
        assert r1.status == 200 and r1.body == b"A"
        assert (r1.header("Connection") or "keep-alive").lower() == "keep-alive"
        r2 = c.request("GET", "/b")
        assert r2.status == 200 and r2.body == b"B"


def test_pipelining_in_order(srv):
    with Conn(srv.port) as c:
        c.send(req("/a") + req("/b") + req("/c", {"Connection": "close"}))
        bodies = [c.read_response().body for _ in range(3)]
        assert bodies == [b"A", b"B", b"C"]
        assert c.closed_within(5)


def test_http10_closes(srv):
    with Conn(srv.port) as c:
        c.send(req("/a", version="HTTP/1.0"))
        r = c.read_response()
        assert r.status == 200 and r.body == b"A"
        assert r.version in ("HTTP/1.0", "HTTP/1.1")
        assert c.closed_within(5)


def test_http10_without_host(srv):
    with Conn(srv.port) as c:
        c.send(req("/a", version="HTTP/1.0", host=None))
        r = c.read_response()
        assert r.status == 200 and r.body == b"A"


def test_http10_keep_alive(srv):
    with Conn(srv.port) as c:
        c.send(req("/a", {"Connection": "keep-alive"}, version="HTTP/1.0"))
        r = c.read_response()
        assert r.status == 200 and r.body == b"A"
        assert r.header("Connection", "").lower() == "keep-alive"
        c.send(req("/b", {"Connection": "keep-alive"}, version="HTTP/1.0"))
        r = c.read_response()
        assert r.body == b"B"


# -- request bodies -----------------------------------------------------------------


def test_content_length_body(srv):
    with Conn(srv.port) as c:
        r = c.request("POST", "/a", body=b"x" * 100)
        assert r.status == 200 and r.body == b"A"
        # The body was consumed, not parsed as the next request.
        assert c.request("GET", "/b").body == b"B"


def test_chunked_body(srv):
    with Conn(srv.port) as c:
        c.send(req("/a", {"Transfer-Encoding": "chunked"}, method="POST") +
               b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nX-Trailer: t\r\n\r\n")
        r = c.read_response()
        assert r.status == 200 and r.body == b"A"
        assert c.request("GET", "/b").body == b"B"


def test_expect_100_continue(srv):
    with Conn(srv.port) as c:
        c.send(req("/a", {"Expect": "100-continue", "Content-Length": "10"}, method="POST"))
        interim = c.read_response()
        assert interim.status == 100
        assert interim.raw_head.startswith(b"HTTP/1.1 100 Continue\r\n")
        c.send(b"0123456789")
        r = c.read_response()
        assert r.status == 200 and r.body == b"A"
        assert c.request("GET", "/b").body == b"B"


def test_body_too_large(srv):
    r, _ = http_raw(srv.port, req("/a", {"Content-Length": "5000"}, method="POST"), wait_close=None)
    assert r is not None and r.status == 413


# -- refusals ---------------------------------------------------------------------------

REFUSALS = {
    "cl_and_te": (b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", {400}),
    "two_content_lengths": (b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                            b"Content-Length: 6\r\n\r\nhello!", {400}),
    # RFC 9112 6.1 (and nginx): 501 for a transfer coding not implemented.
    "chunked_not_last": (b"POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n"
                         b"0\r\n\r\n", {501}),
    "unknown_transfer_coding": (b"POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: foo\r\n\r\n", {501}),
    # Methods are case-sensitive; nginx refuses a lower-case one.
    "lower_case_method": (b"get /a HTTP/1.1\r\nHost: x\r\n\r\n", {400}),
    "control_byte_in_header_name": (b"GET /a HTTP/1.1\r\nHost: x\r\nX-B\x01d: 1\r\n\r\n", {400}),
    "space_before_colon": (b"GET /a HTTP/1.1\r\nHost : x\r\n\r\n", {400}),
    "obs_fold": (b"GET /a HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\r\n", {400}),
    "http11_without_host": (b"GET /a HTTP/1.1\r\nUser-Agent: t\r\n\r\n", {400}),
    "two_hosts": (b"GET /a HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", {400}),
    "bad_request_line": (b"GARBAGE\r\n\r\n", {400}),
    "bad_method_chars": (b"G(T /a HTTP/1.1\r\nHost: x\r\n\r\n", {400}),
    "bad_version": (b"GET /a HTTP/1.x\r\nHost: x\r\n\r\n", {400}),
    "http2_by_text": (b"GET /a HTTP/2.0\r\nHost: x\r\n\r\n", {505}),
    "request_line_too_long": (b"GET /" + b"a" * 2000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", {414}),
    # nginx: "400 Request Header Or Cookie Too Large", as its docs say.
    "header_too_large": (b"GET /a HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 2000 + b"\r\n\r\n", {400}),
    "bad_chunk_size": (b"POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                       b"zz\r\nhello\r\n0\r\n\r\n", {400}),
    "negative_content_length": (b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", {400}),
}


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_refusal(srv, name):
    data, codes = REFUSALS[name]
    r, closed = http_raw(srv.port, data)
    assert r is not None, "no response before the connection closed"
    assert r.status in codes, (name, r.status)
    assert closed, "connection stayed open after a refused request"


# -- timeouts and limits -------------------------------------------------------------------


def test_many_header_fields_fit_the_buffers(srv):
    # nginx limits a head by its buffers' bytes, not by a count of fields.
    headers = {f"X-F{i}": "v" for i in range(200)}  # 200 fields, 2 KB
    resp, _ = http_raw(srv.port, req("/a", headers=headers), wait_close=0)
    assert resp is not None and resp.status == 200 and resp.body == b"A"


def test_the_head_may_fill_the_first_buffer_and_the_large_ones(srv):
    # 4 x 1k large buffers after the 1k client_header_buffer_size: each
    # line must fit one buffer, and the head may take about 5 KB in all
    # (Passbolt's `large_client_header_buffers 2 1k` with a few big cookies).
    big = {f"X-{c}": "v" * 900 for c in "ABCDE"}  # ~4.6 KB: more than the 4 x 1k alone
    resp, _ = http_raw(srv.port, req("/a", headers=big), wait_close=0)
    assert resp is not None and resp.status == 200, resp
    over = {f"X-{c}": "v" * 900 for c in "ABCDEF"}  # ~5.5 KB
    resp, closed = http_raw(srv.port, req("/a", headers=over))
    assert resp is not None and resp.status == 400 and closed, resp
    assert b"Request Header Or Cookie Too Large" in resp.body


def test_client_header_timeout(srv):
    with Conn(srv.port) as c:
        c.send(b"GET /a HTTP/1.1\r\nHost: x\r\n")  # the head never ends
        start = time.monotonic()
        assert c.closed_within(10)
        # 1s timeout: closed well before the bound, and not at once.
        assert time.monotonic() - start >= 0.5


def test_client_body_timeout(srv):
    with Conn(srv.port) as c:
        c.send(req("/a", {"Content-Length": "100"}, method="POST") + b"partial")
        # The server may answer (the return location does not need the body)
        # but it must not wait forever for the rest.
        assert c.closed_within(15)


def test_keepalive_timeout_closes_idle(srv):
    with Conn(srv.ports[1]) as c:
        assert c.request("GET", "/").body == b"idle"
        start = time.monotonic()
        assert c.closed_within(10)
        assert time.monotonic() - start >= 0.5


def test_keepalive_timeout_header(srv):
    # Nexus' documented `keepalive_timeout 5 5`: HTTP clients' pools read
    # the announced timeout; HTTP/1.1 and 1.0 alike, none when closing.
    with Conn(srv.ports[1]) as c:
        r = c.request("GET", "/")
        assert r.header("Keep-Alive") == "timeout=1" and r.header("Connection").lower() == "keep-alive"
    with Conn(srv.ports[1]) as c:
        r = c.request("GET", "/", [("Connection", "keep-alive")], version="HTTP/1.0")
        assert r.header("Keep-Alive") == "timeout=1" and r.header("Connection").lower() == "keep-alive"
    with Conn(srv.ports[1]) as c:
        r = c.request("GET", "/close")
        assert r.header("Keep-Alive") is None and r.header("Connection").lower() == "close"
    # Without the second value: no Keep-Alive field.
    with Conn(srv.port) as c:
        assert c.request("GET", "/").header("Keep-Alive") is None


def test_keepalive_requests(srv):
    with Conn(srv.ports[2]) as c:
        r1 = c.request("GET", "/")
        r2 = c.request("GET", "/")
        assert r1.status == r2.status == 200
        assert r1.header("Connection", "keep-alive").lower() != "close"
        assert r2.header("Connection", "keep-alive").lower() != "close"
        r3 = c.request("GET", "/")
        assert r3.status == 200 and r3.body == b"kr"
        assert r3.header("Connection", "").lower() == "close"
        assert c.closed_within(5)


def test_connection_close_header(srv):
    with Conn(srv.port) as c:
        r = c.request("GET", "/a", {"Connection": "close"})
        assert r.header("Connection", "").lower() == "close"
        assert c.closed_within(5)


def test_many_small_writes(srv):
    # The parser must cope with a head split at every byte.
    with Conn(srv.port) as c:
        for byte in req("/c"):
            c.send(bytes([byte]))
        r = c.read_response()
        assert r.body == b"C"


def test_server_survives_abrupt_clients(srv):
    for data in (b"GET /a HTTP/1.1\r\nHo", b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\nab"):
        s = socket.create_connection(("127.0.0.1", srv.port))
        s.sendall(data)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.close()  # reset
    with Conn(srv.port) as c:
        assert c.request("GET", "/a").body == b"A"


def test_half_closed_client_gets_response(srv):
    # A client that shuts down its sending side after the request still
    # gets the response (e.g. `nc -N`).
    with Conn(srv.port) as c:
        c.send(req("/a", {"Connection": "close"}))
        c.sock.shutdown(socket.SHUT_WR)
        r = c.read_response()
        assert r.body == b"A"
