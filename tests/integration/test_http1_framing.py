"""RFC 9112 message framing, section by section, through the proxy: what the
server answers to each way of framing a request, and what reaches the
upstream. A framing the server accepts must reach the upstream as exactly
the body the client meant (nothing smuggled, nothing lost); one it refuses
gets its status and a closed connection. The same requests run against
nginx (TORII_BIN=/usr/sbin/nginx), except where the RFC and nginx part ways
(marked)."""

import pytest

import harness
from bad_upstream import BadUpstream
from harness import Conn, base_conf, http_raw

CONF = r"""
    upstream echo { server 127.0.0.1:@UPSTREAM@; keepalive 4; }
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        client_max_body_size 1m;
        location / {
            proxy_pass http://echo;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
"""


@pytest.fixture(scope="module")
def upstream():
    u = BadUpstream("echo")
    yield u
    u.stop()


@pytest.fixture(scope="module")
def srv(tmp_path_factory, upstream):
    prefix = tmp_path_factory.mktemp("framing")
    server = harness.Server(base_conf(CONF.replace("@UPSTREAM@", str(upstream.port))), prefix)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def upstream_body(resp):
    """The body the upstream received, from its echo of the whole request."""
    assert resp.status == 200, resp
    head, sep, body = resp.body.partition(b"\r\n\r\n")
    assert sep, resp.body
    if b"\r\ntransfer-encoding: chunked" in head.lower():
        out, rest = b"", body
        while True:
            line, _, rest = rest.partition(b"\r\n")
            size = int(line.split(b";")[0], 16)
            if size == 0:
                return out
            out, rest = out + rest[:size], rest[size + 2:]
    return body


def post(head_fields, body):
    return b"POST /echo HTTP/1.1\r\nHost: localhost\r\n" + head_fields + b"\r\n" + body


# -- 6.2 Content-Length, 6.1/7.1 chunked: accepted framings --------------------------------

ACCEPTED = {
    "content_length": (post(b"Content-Length: 5\r\n", b"hello"), b"hello"),
    "content_length_leading_zeros": (post(b"Content-Length: 0005\r\n", b"hello"), b"hello"),
    "chunked": (post(b"Transfer-Encoding: chunked\r\n", b"5\r\nhello\r\n0\r\n\r\n"), b"hello"),
    "chunked_upper_hex": (post(b"Transfer-Encoding: chunked\r\n", b"A\r\n0123456789\r\n0\r\n\r\n"),
                          b"0123456789"),
    "chunked_several": (post(b"Transfer-Encoding: chunked\r\n", b"2\r\nhe\r\n3\r\nllo\r\n0\r\n\r\n"),
                        b"hello"),
    # 7.1.1: chunk extensions are ignored.
    "chunk_extension": (post(b"Transfer-Encoding: chunked\r\n", b"5;name=value\r\nhello\r\n0;x\r\n\r\n"),
                        b"hello"),
    # 7.1.2: trailer fields are read (and not a body).
    "chunked_trailer": (post(b"Transfer-Encoding: chunked\r\n", b"5\r\nhello\r\n0\r\nX-Sum: 1\r\n\r\n"),
                        b"hello"),
    # 6.3: Transfer-Encoding names are case-insensitive.
    "chunked_mixed_case": (post(b"Transfer-Encoding: Chunked\r\n", b"5\r\nhello\r\n0\r\n\r\n"), b"hello"),
    "empty_chunked": (post(b"Transfer-Encoding: chunked\r\n", b"0\r\n\r\n"), b""),
    "zero_length": (post(b"Content-Length: 0\r\n", b""), b""),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_framing_reaches_upstream_intact(srv, name):
    data, body = ACCEPTED[name]
    with Conn(srv.port) as c:
        c.send(data)
        assert upstream_body(c.read_response()) == body
        # The connection is still in step: a next request is answered.
        r = c.request("GET", "/echo-next")
        assert r.status == 200 and r.body.startswith(b"GET /echo-next ")


# -- refused framings: status, then the connection closes ----------------------------------

REFUSED = {
    "content_length_plus": (post(b"Content-Length: +5\r\n", b"hello"), {400}),
    "content_length_hex": (post(b"Content-Length: 0x5\r\n", b"hello"), {400}),
    "content_length_space_inside": (post(b"Content-Length: 5 5\r\n", b"hello"), {400}),
    "content_length_overflow": (post(b"Content-Length: 99999999999999999999999\r\n", b"hello"), {400, 413}),
    "content_length_empty": (post(b"Content-Length:\r\n", b""), {400}),
    "two_different_content_lengths": (post(b"Content-Length: 5\r\nContent-Length: 4\r\n", b"hello"), {400}),
    "chunk_size_overflow": (post(b"Transfer-Encoding: chunked\r\n",
                                 b"fffffffffffffffffff\r\nhello\r\n0\r\n\r\n"), {400, 413}),
    "chunk_data_longer_than_size": (post(b"Transfer-Encoding: chunked\r\n", b"3\r\nhello\r\n0\r\n\r\n"), {400}),
    "chunk_size_missing": (post(b"Transfer-Encoding: chunked\r\n", b"\r\nhello\r\n0\r\n\r\n"), {400}),
    "chunk_size_negative": (post(b"Transfer-Encoding: chunked\r\n", b"-5\r\nhello\r\n0\r\n\r\n"), {400}),
    # 6.3: both framings at once is how requests are smuggled.
    "content_length_and_chunked": (post(b"Content-Length: 3\r\nTransfer-Encoding: chunked\r\n",
                                        b"0\r\n\r\n"), {400}),
    "chunked_twice": (post(b"Transfer-Encoding: chunked, chunked\r\n", b"0\r\n\r\n"), {400, 501}),
    "te_in_http10": (b"POST /echo HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", {400}),
    # 6.1: a transfer coding the server does not implement.
    "unknown_coding": (post(b"Transfer-Encoding: identity\r\n", b""), {501}),
    # 3: the request line.
    "two_spaces_in_request_line": (b"GET  /echo HTTP/1.1\r\nHost: localhost\r\n\r\n", {400}),  # nginx: 200
    "lower_case_version": (b"GET /echo http/1.1\r\nHost: localhost\r\n\r\n", {400}),
    "major_version_2": (b"GET /echo HTTP/2.0\r\nHost: localhost\r\n\r\n", {505}),
    "major_version_3": (b"GET /echo HTTP/3.1\r\nHost: localhost\r\n\r\n", {505}),
    "space_in_target": (b"GET /a b HTTP/1.1\r\nHost: localhost\r\n\r\n", {400}),
    # 5: field syntax.
    "nul_in_value": (b"GET /echo HTTP/1.1\r\nHost: localhost\r\nX-A: a\x00b\r\n\r\n", {400}),
    "cr_in_value": (b"GET /echo HTTP/1.1\r\nHost: localhost\r\nX-A: a\rb\r\n\r\n", {400}),
    "field_without_colon": (b"GET /echo HTTP/1.1\r\nHost: localhost\r\nX-A\r\n\r\n", {400}),  # nginx: 200
    "empty_field_name": (b"GET /echo HTTP/1.1\r\nHost: localhost\r\n: a\r\n\r\n", {400}),
    "invalid_host": (b"GET /echo HTTP/1.1\r\nHost: a b\r\n\r\n", {400}),
}


# Where nginx is lenient and RFC 9112 asks for (or allows) a refusal: a
# field line without a colon (5.1) and several spaces between the parts of
# the request line (3) are refused here, accepted by nginx.
NGINX_LENIENT = {"field_without_colon", "two_spaces_in_request_line"}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_framing(srv, name, upstream):
    if harness.IS_NGINX and name in NGINX_LENIENT:
        pytest.skip("nginx accepts this framing")
    data, codes = REFUSED[name]
    before = len(upstream.requests)
    r, closed = http_raw(srv.port, data)
    assert r is not None, "no response before the connection closed"
    assert r.status in codes, (name, r.status)
    assert closed, "connection stayed open after a refused request"
    assert len(upstream.requests) == before, "a refused request reached the upstream"


# -- pipelining after each kind of body ---------------------------------------------------


@pytest.mark.parametrize("framing", ["content_length", "chunked", "chunked_trailer"])
def test_pipelined_request_after_body(srv, framing):
    data, body = ACCEPTED[framing]
    with Conn(srv.port) as c:
        c.send(data + b"GET /echo-second HTTP/1.1\r\nHost: localhost\r\n\r\n")
        assert upstream_body(c.read_response()) == body
        r = c.read_response()
        assert r.status == 200 and r.body.startswith(b"GET /echo-second ")


def test_get_with_body_is_read_and_passed(srv):
    # 6.3: a GET may carry a body; it is framed like any other.
    with Conn(srv.port) as c:
        c.send(b"GET /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3\r\n\r\nabc"
               b"GET /echo-after HTTP/1.1\r\nHost: localhost\r\n\r\n")
        assert upstream_body(c.read_response()) == b"abc"
        assert c.read_response().body.startswith(b"GET /echo-after ")


# -- 2.3 versions, 6.3 response framing -----------------------------------------------------


def test_higher_minor_version_is_served_as_11(srv):
    r, _ = http_raw(srv.port, b"GET /echo HTTP/1.9\r\nHost: localhost\r\n\r\n", wait_close=0)
    assert r is not None and r.status == 200 and r.version == "HTTP/1.1"


def test_http10_client_gets_no_chunked_response(srv):
    # The upstream answers chunked; an HTTP/1.0 client cannot read that, so
    # the body ends at the close instead.
    with Conn(srv.port) as c:
        c.send(b"GET /big/70000 HTTP/1.0\r\nHost: localhost\r\n\r\n")
        r = c.read_response()
        assert r.status == 200
        assert r.header("Transfer-Encoding") is None
        assert len(r.body) == 70000


def test_head_response_has_no_body(srv):
    with Conn(srv.port) as c:
        c.send(b"HEAD /echo-head HTTP/1.1\r\nHost: localhost\r\n\r\n"
               b"GET /echo-after-head HTTP/1.1\r\nHost: localhost\r\n\r\n")
        r = c.read_response("HEAD")
        assert r.status == 200 and r.header("Content-Length") == "1000"
        r = c.read_response()
        assert r.status == 200 and r.body.startswith(b"GET /echo-after-head ")


@pytest.mark.parametrize("code", [204, 304])
def test_bodiless_status_keeps_connection_in_step(srv, code):
    with Conn(srv.port) as c:
        c.send(f"GET /status/{code} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode()
               + b"GET /echo-after HTTP/1.1\r\nHost: localhost\r\n\r\n")
        r = c.read_response()
        assert r.status == code and r.header("Transfer-Encoding") is None
        r = c.read_response()
        assert r.status == 200 and r.body.startswith(b"GET /echo-after ")
