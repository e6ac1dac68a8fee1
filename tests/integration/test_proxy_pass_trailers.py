"""proxy_pass_trailers (nginx 1.27.1): the trailer fields of an upstream's
chunked response go on to the client, in the last chunk over HTTP/1.1 and
as a trailing HEADERS frame over HTTP/2, filtered as fields are (hidden by
default, proxy_hide_header). Off (the default, and nginx 1.22), they are
dropped. The tests with the directive skip on nginx 1.22, which lacks it."""

import shutil

import pytest

import harness
import nghttp_client
from scripted_upstream import replying

BODY_CHUNKS = [b"hello ", b"trailers"]
TRAILERS = [("X-Checksum", "abc123"), ("X-Secret", "hide-me"), ("X-Accel-Redirect", "/nope"),
            ("Server-Timing", "db;dur=53")]


def chunked_with_trailers(_request):
    out = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"
    out += b"Trailer: X-Checksum\r\nConnection: close\r\n\r\n"
    for part in BODY_CHUNKS:
        out += b"%x\r\n%s\r\n" % (len(part), part)
    return out + b"0\r\n" + b"".join(f"{k}: {v}\r\n".encode() for k, v in TRAILERS) + b"\r\n"


@pytest.fixture
def upstream():
    """Answers each request with a chunked body and trailer fields."""
    u = replying(chunked_with_trailers)
    yield u
    u.close()


@pytest.fixture
def newer_than_122():
    harness.skip_if_nginx_older((1, 27), "proxy_pass_trailers came in nginx 1.27.1")


def site(make_server, upstream, directives):
    conf = harness.base_conf(http=f"""
    server {{
        listen 127.0.0.1:@PORT@;
        listen 127.0.0.1:@PORT1@ http2;
        location / {{
            proxy_http_version 1.1;
            {directives}
            proxy_pass http://127.0.0.1:{upstream.port};
        }}
    }}
""")
    return make_server(conf, nports=2)


def h1_raw(port):
    """GET over HTTP/1.1; the raw response up to the end of the chunked body."""
    return harness.raw_until_close(
        port, b"GET /t HTTP/1.1\r\nHost: localhost\r\nTE: trailers\r\nConnection: close\r\n\r\n")


def split_chunked(raw):
    head, _, rest = raw.partition(b"\r\n\r\n")
    body, trailers = b"", {}
    while True:
        line, _, rest = rest.partition(b"\r\n")
        size = int(line.split(b";")[0], 16)
        if size == 0:
            for t in rest.split(b"\r\n"):
                if not t:
                    break
                k, _, v = t.partition(b":")
                trailers[k.decode().lower()] = v.strip().decode()
            return head, body, trailers
        body += rest[:size]
        rest = rest[size + 2:]


def test_trailers_pass_over_http1(make_server, upstream, newer_than_122):
    s = site(make_server, upstream, "proxy_pass_trailers on; proxy_hide_header X-Secret;")
    head, body, trailers = split_chunked(h1_raw(s.port))
    assert head.startswith(b"HTTP/1.1 200")
    assert body == b"".join(BODY_CHUNKS)
    assert trailers == {"x-checksum": "abc123", "server-timing": "db;dur=53"}


def test_trailers_dropped_by_default(make_server, upstream):
    s = site(make_server, upstream, "")
    head, body, trailers = split_chunked(h1_raw(s.port))
    assert head.startswith(b"HTTP/1.1 200")
    assert body == b"".join(BODY_CHUNKS)
    assert trailers == {}


@pytest.mark.skipif(shutil.which("nghttp") is None, reason="nghttp not installed")
def test_trailers_pass_over_http2(make_server, upstream, newer_than_122):
    s = site(make_server, upstream, "proxy_pass_trailers on; proxy_hide_header X-Secret;")
    out = nghttp_client.verbose(f"http://127.0.0.1:{s.ports[1]}/t")
    # Two header blocks: the response's, then (after the body) the trailers.
    blocks = nghttp_client.header_blocks(out)
    assert len(blocks) == 2 and blocks[0][0] == ":status: 200", out
    assert sorted(blocks[1]) == ["server-timing: db;dur=53", "x-checksum: abc123"], out
    assert "hello trailers" in out
