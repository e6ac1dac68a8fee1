"""gzip_static (on, always) and gunzip, as nginx's modules do them: the .gz
beside a file is served with its own length and validators when the client
takes gzip (always: whatever it says); gunzip decodes a gzip response
(a precompressed file or an upstream's) for a client that does not take it.
Runs against nginx too (TORII_BIN=/usr/sbin/nginx)."""

import gzip
import os
import subprocess

import pytest

import harness
from scripted_upstream import ScriptedUpstream, text_body

ORIGINAL = text_body(30000)
# Different bytes in the .gz, so a test can tell which file was served.
PRE = b"precompressed " + text_body(20000)
PRE_GZ = gzip.compress(PRE, 9)


@pytest.fixture
def srv(make_server):
    up = ScriptedUpstream()
    conf = harness.base_conf(http=f"""
    gzip_vary on;
    server {{
        listen 127.0.0.1:@PORT0@;
        listen 127.0.0.1:@PORT1@ http2;
        root @PREFIX@/html;
        location /on/ {{ gzip_static on; }}
        location /tf/ {{ gzip_static on; try_files $uri =404; }}
        location /always/ {{ gzip_static always; }}
        location /unzip/ {{ gzip_static always; gunzip on; }}
        location /up/ {{
            gunzip on;
            proxy_pass http://127.0.0.1:{up.port};
            proxy_http_version 1.1;
        }}
    }}""")
    s = make_server(conf, nports=2, start=False)
    for d in ("on", "always", "unzip", "tf"):
        base = s.prefix / "html" / d
        base.mkdir(parents=True, exist_ok=True)
        (base / "page.html").write_bytes(ORIGINAL)
        (base / "page.html.gz").write_bytes(PRE_GZ)
        (base / "only.html.gz").write_bytes(PRE_GZ)
        (base / "plain.html").write_bytes(ORIGINAL)
    # Two gzip members, as `cat a.gz b.gz` makes; gunzip decodes both.
    (s.prefix / "html" / "unzip" / "two.txt.gz").write_bytes(gzip.compress(b"first\n") + gzip.compress(b"second\n"))
    # The .gz is older than the file: its own Last-Modified must be used.
    for d in ("on", "always", "unzip"):
        os.utime(s.prefix / "html" / d / "page.html.gz", (1_600_000_000, 1_600_000_000))
    s.start()
    yield s
    up.stop()


def get(port, path, ae="gzip", headers=None, method="GET"):
    hdrs = list(headers or [])
    if ae is not None:
        hdrs.append(("Accept-Encoding", ae))
    return harness.http(port, path, headers=hdrs, method=method)


def etag_of(mtime, size):
    return f'"{mtime:x}-{size:x}"'


def test_on_serves_the_gz_with_its_own_validators(srv):
    resp = get(srv.port, "/on/page.html")
    assert resp.status == 200
    assert resp.header("Content-Encoding") == "gzip"
    assert resp.header("Content-Length") == str(len(PRE_GZ))
    assert resp.header("Content-Type") == "text/html"
    assert resp.header("Vary") == "Accept-Encoding"
    assert resp.header("ETag") == etag_of(1_600_000_000, len(PRE_GZ))
    assert resp.header("Last-Modified") == "Sun, 13 Sep 2020 12:26:40 GMT"
    assert resp.body == PRE_GZ
    assert gzip.decompress(resp.body) == PRE


def test_on_after_try_files(srv):
    resp = get(srv.port, "/tf/page.html")
    assert resp.header("Content-Encoding") == "gzip" and resp.body == PRE_GZ
    assert get(srv.port, "/tf/page.html", ae=None).body == ORIGINAL


def test_on_without_gzip_gets_the_file_and_vary(srv):
    for ae in (None, "gzip;q=0", "br"):
        resp = get(srv.port, "/on/page.html", ae=ae)
        assert resp.status == 200
        assert resp.header("Content-Encoding") is None
        assert resp.body == ORIGINAL
        assert resp.header("Vary") == "Accept-Encoding"  # a .gz exists beside it
    plain = get(srv.port, "/on/plain.html", ae=None)
    assert plain.body == ORIGINAL and plain.header("Vary") is None


def test_on_gz_without_the_original(srv):
    assert gzip.decompress(get(srv.port, "/on/only.html").body) == PRE
    assert get(srv.port, "/on/only.html", ae=None).status == 404


def test_always_ignores_accept_encoding(srv):
    resp = get(srv.port, "/always/page.html", ae=None)
    assert resp.status == 200
    assert resp.header("Content-Encoding") == "gzip"
    assert resp.body == PRE_GZ
    assert resp.header("Vary") is None


def test_always_with_gunzip_decodes_for_a_client_without_gzip(srv):
    resp = get(srv.port, "/unzip/page.html", ae=None)
    assert resp.status == 200
    assert resp.header("Content-Encoding") is None
    assert resp.header("Content-Length") is None
    assert resp.body == PRE
    assert resp.header("Vary") == "Accept-Encoding"
    assert resp.header("ETag", "").startswith("W/")
    with_gzip = get(srv.port, "/unzip/page.html")
    assert with_gzip.header("Content-Encoding") == "gzip" and with_gzip.body == PRE_GZ


def test_gunzip_decodes_every_member(srv):
    resp = get(srv.port, "/unzip/two.txt", ae=None)
    assert resp.status == 200 and resp.body == b"first\nsecond\n"


def test_range_head_and_304_on_the_gz(srv):
    part = get(srv.port, "/on/page.html", headers=[("Range", "bytes=0-9")])
    assert part.header("Content-Encoding") == "gzip"
    if harness.IS_NGINX:
        # Debian's nginx 1.22 sends the whole .gz; nginx 1.23.4 added
        # ranges to gzip_static, which torii follows.
        assert part.status == 200 and part.body == PRE_GZ
    else:
        assert part.status == 206
        assert part.body == PRE_GZ[:10]
        assert part.header("Content-Range") == f"bytes 0-9/{len(PRE_GZ)}"
    head = get(srv.port, "/on/page.html", method="HEAD")
    assert head.status == 200 and head.header("Content-Length") == str(len(PRE_GZ))
    assert head.header("Content-Encoding") == "gzip" and head.body == b""
    tag = etag_of(1_600_000_000, len(PRE_GZ))
    nm = get(srv.port, "/on/page.html", headers=[("If-None-Match", tag)])
    assert nm.status == 304 and nm.body == b""


def test_gunzip_proxied(srv):
    plain = get(srv.port, "/up/x?gz=1&n=100000", ae=None)
    assert plain.status == 200
    assert plain.header("Content-Encoding") is None
    assert plain.body == text_body(100000)
    assert plain.header("Vary") == "Accept-Encoding"
    passed = get(srv.port, "/up/x?gz=1&n=100000")
    assert passed.header("Content-Encoding") == "gzip"
    assert gzip.decompress(passed.body) == text_body(100000)
    # An upstream body that is not gzip is left alone.
    assert get(srv.port, "/up/x?n=5000", ae=None).body == text_body(5000)


def test_gunzip_http2(srv):
    out = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-D", "-", "-o", "-",
                          f"http://127.0.0.1:{srv.ports[1]}/up/x?gz=1&chunked=1&n=200000"],
                         capture_output=True, timeout=30, check=True).stdout
    head, _, body = out.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/2 200")
    assert b"content-encoding" not in head.lower()
    assert body == text_body(200000)
