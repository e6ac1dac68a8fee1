"""brotli (ngx_brotli's directive names) and zstd (zstd-nginx-module's
names) beside gzip: the client's q-values pick the coding, the server's
order zstd > br > gzip breaks ties; bodies decoded with Python's brotli and
zstandard modules, over HTTP/1.1 and HTTP/2, static and proxied. torii only:
Debian's nginx has neither module."""

import gzip
import subprocess

import brotli
import pytest
import zstandard

import harness
from scripted_upstream import ScriptedUpstream, text_body

PAGE = text_body(50000)

pytestmark = pytest.mark.skipif(harness.IS_NGINX, reason="nginx-light has no brotli or zstd module")


@pytest.fixture
def srv(make_server):
    up = ScriptedUpstream()
    conf = harness.base_conf(http=f"""
    gzip on;
    brotli on;
    zstd on;
    brotli_types text/css;
    zstd_types text/css;
    server {{
        listen 127.0.0.1:@PORT0@;
        listen 127.0.0.1:@PORT1@ http2;
        root @PREFIX@/html;
        location /nozstd/ {{ zstd off; }}
        location /levels/ {{ brotli_comp_level 11; zstd_comp_level 19; }}
        location /small/ {{ brotli_min_length 100000; zstd_min_length 100000; }}
        location /pre/ {{ gzip_static on; brotli_static on; zstd_static on; }}
        location /up/ {{ proxy_pass http://127.0.0.1:{up.port}; proxy_http_version 1.1; proxy_buffering off; }}
    }}""")
    s = make_server(conf, nports=2, start=False)
    for d in ("", "nozstd", "levels", "small"):
        (s.prefix / "html" / d).mkdir(parents=True, exist_ok=True)
        (s.prefix / "html" / d / "page.html").write_bytes(PAGE)
    (s.prefix / "html" / "data.json").write_bytes(PAGE)
    pre = s.prefix / "html" / "pre"
    pre.mkdir()
    (pre / "page.html").write_bytes(PAGE)
    (pre / "page.html.gz").write_bytes(gzip.compress(b"from gz"))
    (pre / "page.html.br").write_bytes(brotli.compress(b"from br"))
    (pre / "page.html.zst").write_bytes(zstandard.ZstdCompressor().compress(b"from zst"))
    s.start()
    yield s
    up.stop()


def decode(coding, body):
    if coding is None:
        return body
    if coding == "gzip":
        return gzip.decompress(body)
    if coding == "br":
        return brotli.decompress(body)
    if coding == "zstd":
        return zstandard.ZstdDecompressor().decompressobj().decompress(body)
    raise AssertionError(coding)


def get(port, path, ae):
    return harness.http(port, path, headers=[("Accept-Encoding", ae)])


@pytest.mark.parametrize("ae,coding", [
    ("gzip, deflate, br, zstd", "zstd"),     # equal q: the server's order
    ("gzip, br", "br"),
    ("br;q=0.5, gzip", "gzip"),              # the client's q first
    ("zstd;q=0.1, br;q=0.2, gzip;q=0.3", "gzip"),
    ("zstd;q=0.9, br;q=1", "br"),
    ("zstd;q=0, br", "br"),
    ("*", "zstd"),
    ("gzip;q=0, *;q=0.5", "zstd"),
    ("identity", None),
])
def test_choice(srv, ae, coding):
    resp = get(srv.port, "/page.html", ae)
    assert resp.status == 200
    assert resp.header("Content-Encoding") == coding
    assert decode(coding, resp.body) == PAGE


@pytest.mark.parametrize("ae,coding,content", [
    ("gzip, br, zstd", "zstd", b"from zst"),
    ("gzip, br", "br", b"from br"),
    ("br;q=0.5, gzip", "gzip", b"from gz"),
    ("zstd;q=0.2, br;q=0.3, gzip;q=0.1", "br", b"from br"),
    ("identity", None, PAGE),
])
def test_precompressed_files(srv, ae, coding, content):
    resp = get(srv.port, "/pre/page.html", ae)
    assert resp.status == 200
    assert resp.header("Content-Encoding") == coding
    assert decode(coding, resp.body) == content


def test_coding_off_and_min_length(srv):
    assert get(srv.port, "/nozstd/page.html", "zstd, br").header("Content-Encoding") == "br"
    # Below brotli/zstd min length, gzip (min 20) still applies.
    resp = get(srv.port, "/small/page.html", "zstd, br, gzip")
    assert resp.header("Content-Encoding") == "gzip"
    assert decode("gzip", resp.body) == PAGE


def test_types_per_coding(srv):
    resp = get(srv.port, "/data.json", "zstd, br, gzip")  # application/json: in no list
    assert resp.header("Content-Encoding") is None and resp.body == PAGE


def test_levels(srv):
    for coding in ("br", "zstd"):
        low = get(srv.port, "/page.html", coding)
        high = get(srv.port, "/levels/page.html", coding)
        assert decode(coding, high.body) == PAGE
        # The level reached the library (on this repetitive text a higher
        # level is not always smaller, so only a difference is asserted).
        assert high.body != low.body


@pytest.mark.parametrize("coding", ["br", "zstd"])
def test_proxied_chunked_streams(srv, coding):
    body = text_body(2_000_000)
    resp = get(srv.port, "/up/x?chunked=1&n=2000000", coding)
    assert resp.header("Content-Encoding") == coding
    assert decode(coding, resp.body) == body


@pytest.mark.parametrize("coding", ["br", "zstd"])
@pytest.mark.parametrize("path,size", [("/page.html", None), ("/up/x?chunked=1&n=300000", 300000)],
                         ids=["static", "proxied"])
def test_http2(srv, coding, path, size):
    original = PAGE if size is None else text_body(size)
    out = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-D", "-", "-o", "-", "-H",
                          f"Accept-Encoding: {coding}", f"http://127.0.0.1:{srv.ports[1]}{path}"],
                         capture_output=True, timeout=30, check=True).stdout
    head, _, body = out.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/2 200")
    assert f"content-encoding: {coding}".encode() in head.lower()
    assert decode(coding, body) == original


def test_curl_compressed_decodes_what_curl_offers(srv):
    # curl offers what it was built with (br, zstd when available, gzip).
    out = subprocess.run(["curl", "-s", "--compressed", f"http://127.0.0.1:{srv.port}/page.html"],
                         capture_output=True, timeout=30, check=True).stdout
    assert out == PAGE
