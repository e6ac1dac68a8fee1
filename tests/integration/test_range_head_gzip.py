"""Ranges of static files where nginx's range filter decides them:
a HEAD with Range gets the head of the 206 a GET would get (Content-Range,
the range's Content-Length, no body), If-Range included; and a response
the gzip filter (or gunzip) codes loses its ranges, so the client gets the
whole coded 200, never an uncoded 206. Runs against nginx too
(TORII_BIN=/usr/sbin/nginx); the brotli and zstd test is torii's only."""

import gzip
import re

import pytest

import harness
from echo_backend import EchoBackend
from scripted_upstream import text_body

PAGE = text_body(20000)
SIZE = len(PAGE)
PRE = b"precompressed " + text_body(9000)
PRE_GZ = gzip.compress(PRE, 9)


@pytest.fixture
def srv(make_server):
    backend = EchoBackend("up")
    conf = harness.base_conf(http=f"""
    server {{
        listen 127.0.0.1:@PORT0@;
        root @PREFIX@/html;
        location /gz/ {{ gzip on; gzip_types text/plain; gzip_min_length 1; }}
        location /unzip/ {{ gzip_static always; gunzip on; }}
        location /up/ {{
            proxy_pass http://127.0.0.1:{backend.port};
            proxy_force_ranges on;
            gzip on;
            gzip_types text/plain;
            gzip_min_length 1;
        }}
    }}""")
    s = make_server(conf, start=False)
    for d in ("plain", "gz", "unzip"):
        (s.prefix / "html" / d).mkdir(parents=True, exist_ok=True)
        (s.prefix / "html" / d / "page.txt").write_bytes(PAGE)
    (s.prefix / "html" / "unzip" / "page.txt.gz").write_bytes(PRE_GZ)
    s.start()
    yield s
    backend.server.shutdown()


def req(port, path, method="GET", headers=None):
    return harness.http(port, path, method=method, headers=headers)


# -- HEAD with Range ----------------------------------------------------------


def test_head_with_range_is_206_without_body(srv):
    r = req(srv.port, "/plain/page.txt", "HEAD", {"Range": "bytes=100-199"})
    assert r.status == 206, r
    assert r.header("Content-Range") == f"bytes 100-199/{SIZE}"
    assert r.header("Content-Length") == "100"
    assert r.body == b""


def test_head_with_suffix_range(srv):
    r = req(srv.port, "/plain/page.txt", "HEAD", {"Range": "bytes=-10"})
    assert r.status == 206
    assert r.header("Content-Range") == f"bytes {SIZE - 10}-{SIZE - 1}/{SIZE}"
    assert r.header("Content-Length") == "10"


def test_head_with_ranges_is_multipart_of_the_get_length(srv):
    ranges = {"Range": "bytes=0-9,100-109"}
    head = req(srv.port, "/plain/page.txt", "HEAD", ranges)
    get = req(srv.port, "/plain/page.txt", "GET", ranges)
    assert head.status == 206 and get.status == 206
    assert re.match(r"multipart/byteranges; boundary=\S+$", head.header("Content-Type", ""))
    # Boundaries differ per response but not in length.
    assert head.header("Content-Length") == str(len(get.body))
    assert head.body == b""


def test_head_with_unsatisfiable_range_is_416(srv):
    r = req(srv.port, "/plain/page.txt", "HEAD", {"Range": f"bytes={SIZE + 10}-"})
    assert r.status == 416
    assert r.header("Content-Range") == f"bytes */{SIZE}"
    assert r.body == b""


def test_head_with_if_range(srv):
    full = req(srv.port, "/plain/page.txt", "HEAD")
    etag, modified = full.header("ETag"), full.header("Last-Modified")
    assert full.status == 200 and etag and modified
    for validator in (etag, modified):
        r = req(srv.port, "/plain/page.txt", "HEAD", {"Range": "bytes=0-9", "If-Range": validator})
        assert r.status == 206, validator
        assert r.header("Content-Length") == "10"
    stale = req(srv.port, "/plain/page.txt", "HEAD", {"Range": "bytes=0-9", "If-Range": '"other"'})
    assert stale.status == 200
    assert stale.header("Content-Length") == str(SIZE)
    assert stale.header("Content-Range") is None


# -- Range on a gzipped response ------------------------------------------------


def test_range_on_gzipped_response_gets_the_whole_gzip(srv):
    r = req(srv.port, "/gz/page.txt", headers={"Range": "bytes=0-99", "Accept-Encoding": "gzip"})
    assert r.status == 200, r
    assert r.header("Content-Encoding") == "gzip"
    assert r.header("Content-Range") is None
    assert r.header("Accept-Ranges") is None
    assert gzip.decompress(r.body) == PAGE


def test_head_range_on_gzipped_response(srv):
    r = req(srv.port, "/gz/page.txt", "HEAD", {"Range": "bytes=0-99", "Accept-Encoding": "gzip"})
    assert r.status == 200
    assert r.header("Content-Encoding") == "gzip"
    assert r.header("Content-Range") is None
    assert r.header("Content-Length") is None


def test_unsatisfiable_range_on_gzipped_response_is_the_whole_gzip(srv):
    r = req(srv.port, "/gz/page.txt", headers={"Range": f"bytes={SIZE + 10}-", "Accept-Encoding": "gzip"})
    assert r.status == 200
    assert gzip.decompress(r.body) == PAGE


def test_range_without_gzip_is_still_a_range(srv):
    r = req(srv.port, "/gz/page.txt", headers={"Range": "bytes=0-99"})
    assert r.status == 206
    assert r.header("Content-Encoding") is None
    assert r.body == PAGE[:100]


def test_range_on_gunzipped_precompressed_file_gets_the_whole_page(srv):
    # gzip_static always serves the .gz; gunzip decodes it for a client
    # without gzip, so no range of either body applies.
    r = req(srv.port, "/unzip/page.txt", headers={"Range": "bytes=0-9"})
    assert r.status == 200, r
    assert r.header("Content-Encoding") is None
    assert r.header("Content-Range") is None
    assert r.body == PRE


def test_range_on_gzipped_forced_ranges_response(srv):
    # proxy_force_ranges offers ranges of the upstream's 200, but the gzip
    # filter comes first and turns them off.
    whole = req(srv.port, "/up/x").body
    assert whole.startswith(b"backend=up uri=/up/x ")
    r = req(srv.port, "/up/x", headers={"Range": "bytes=0-9", "Accept-Encoding": "gzip"})
    assert r.status == 200, r
    assert r.header("Content-Encoding") == "gzip"
    assert gzip.decompress(r.body) == whole
    plain = req(srv.port, "/up/x", headers={"Range": "bytes=0-9"})
    assert plain.status == 206 and plain.body == whole[:10]


# -- brotli and zstd (torii only: Debian's nginx has neither module) -------------


@pytest.fixture
def coded(make_server):
    if harness.IS_NGINX:
        pytest.skip("Debian's nginx has no brotli or zstd module")
    conf = harness.base_conf(http="""
    server {
        listen 127.0.0.1:@PORT0@;
        root @PREFIX@/html;
        location / { brotli on; brotli_types text/plain; zstd on; zstd_types text/plain; }
    }""")
    s = make_server(conf, start=False)
    (s.prefix / "html").mkdir(parents=True, exist_ok=True)
    (s.prefix / "html" / "page.txt").write_bytes(PAGE)
    s.start()
    yield s


@pytest.mark.parametrize("coding", ["br", "zstd"])
def test_range_on_brotli_or_zstd_response_gets_the_whole_body(coded, coding):
    r = req(coded.port, "/page.txt", headers={"Range": "bytes=0-99", "Accept-Encoding": coding})
    assert r.status == 200
    assert r.header("Content-Encoding") == coding
    assert r.header("Content-Range") is None
    if coding == "br":
        import brotli
        assert brotli.decompress(r.body) == PAGE
    else:
        import zstandard
        assert zstandard.ZstdDecompressor().decompress(r.body, max_output_size=SIZE * 2) == PAGE
