"""flv as nginx's ngx_http_flv_module: ?start=N answers the 13-byte FLV
header and the file from byte N; without start, with start=0 or with a
start that is not an offset inside the file, the file as it is. Ranges,
conditionals, HEAD, 405, directories and the nested location as nginx.
Also runs against nginx (TORII_BIN=/usr/sbin/nginx); test_same_bytes_as_nginx
compares each answer with Debian's nginx byte for byte."""

import pytest

import harness
import mp4_media
import reference_nginx

HEADER = b"FLV\x01\x05\x00\x00\x00\x09\x00\x00\x00\x00"
FLV = mp4_media.build_flv()

CONF = r"""
    server {
        listen 127.0.0.1:@PORT@;
        root @PREFIX@/www;
        types { video/x-flv flv; }
        location /video/ {
            flv;
            location /video/plain/ { }
        }
    }
"""


def make_files(prefix):
    (prefix / "www" / "video" / "plain").mkdir(parents=True)
    (prefix / "www" / "video" / "dir").mkdir()
    (prefix / "www" / "video" / "clip.flv").write_bytes(FLV)
    (prefix / "www" / "video" / "plain" / "clip.flv").write_bytes(FLV)


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("flv")
    make_files(prefix)
    server = harness.Server(harness.base_conf(CONF), prefix)
    server.start()
    yield server
    server.stop()


def get(srv, path, **kw):
    return harness.http(srv.port, path, **kw)


def test_whole_file_without_start(srv):
    r = get(srv, "/video/clip.flv")
    assert r.status == 200
    assert r.body == FLV
    assert r.header("Content-Length") == str(len(FLV))
    assert r.header("Content-Type") == "video/x-flv"
    assert r.header("Accept-Ranges") == "bytes"
    assert r.header("Last-Modified")


@pytest.mark.parametrize("start", [13, 100, 777, len(FLV) - 1])
def test_start_sends_header_then_the_rest(srv, start):
    r = get(srv, f"/video/clip.flv?start={start}")
    assert r.status == 200
    assert r.body == HEADER + FLV[start:]
    assert r.header("Content-Length") == str(13 + len(FLV) - start)


@pytest.mark.parametrize("query", ["start=0", "start=", "start=abc", "start=-5", "start=12x",
                                   f"start={len(FLV)}", f"start={len(FLV) + 10}",
                                   "start=99999999999999999999999", "other=1", "xstart=100"])
def test_start_that_is_no_offset_sends_the_file(srv, query):
    r = get(srv, f"/video/clip.flv?{query}")
    assert r.status == 200
    assert r.body == FLV


def test_argument_name_without_case_and_among_others(srv):
    assert get(srv, "/video/clip.flv?a=1&START=100&b=2").body == HEADER + FLV[100:]
    assert get(srv, "/video/clip.flv?start=200&start=100").body == HEADER + FLV[200:]


def test_etag_follows_the_length(srv):
    whole = get(srv, "/video/clip.flv")
    part = get(srv, "/video/clip.flv?start=100")
    assert whole.header("ETag") and part.header("ETag")
    assert whole.header("ETag") != part.header("ETag")
    assert whole.header("Last-Modified") == part.header("Last-Modified")
    r = get(srv, "/video/clip.flv?start=100", headers={"If-None-Match": part.header("ETag")})
    assert r.status == 304 and r.body == b""
    r = get(srv, "/video/clip.flv?start=100", headers={"If-None-Match": whole.header("ETag")})
    assert r.status == 200


def test_head(srv):
    r = get(srv, "/video/clip.flv?start=100", method="HEAD")
    assert r.status == 200
    assert r.header("Content-Length") == str(13 + len(FLV) - 100)
    assert r.body == b""


def test_other_methods(srv):
    assert get(srv, "/video/clip.flv", method="POST", body=b"x").status == 405
    assert get(srv, "/video/clip.flv", method="DELETE").status == 405


def test_single_range_over_header_and_file(srv):
    body = HEADER + FLV[100:]
    for spec, lo, hi in (("0-20", 0, 21), ("5-12", 5, 13), ("10-50", 10, 51), ("-30", len(body) - 30, len(body))):
        r = get(srv, "/video/clip.flv?start=100", headers={"Range": "bytes=" + spec})
        assert r.status == 206, spec
        assert r.body == body[lo:hi], spec
        assert r.header("Content-Range") == f"bytes {lo}-{hi - 1}/{len(body)}"


def test_unsatisfiable_range(srv):
    r = get(srv, "/video/clip.flv?start=100", headers={"Range": f"bytes={len(FLV)}-"})
    assert r.status == 416


def test_several_ranges_of_the_file(srv):
    r = get(srv, "/video/clip.flv", headers={"Range": "bytes=0-3,10-19"})
    assert r.status == 206
    assert r.header("Content-Type").startswith("multipart/byteranges")
    assert FLV[0:4] in r.body and FLV[10:20] in r.body


@pytest.mark.skipif(harness.IS_NGINX, reason="nginx 1.22 sends a multipart head, logs "
                    "\"range in overlapped buffers\" and closes the connection")
def test_several_ranges_after_start_get_the_whole_body(srv):
    r = get(srv, "/video/clip.flv?start=100", headers={"Range": "bytes=0-3,10-19"})
    assert r.status == 200
    assert r.body == HEADER + FLV[100:]


def test_missing_file_and_directory(srv):
    assert get(srv, "/video/none.flv").status == 404
    r = get(srv, "/video/dir")
    assert r.status == 301
    assert r.header("Location").endswith("/video/dir/")


def test_nested_location_does_not_inherit(srv):
    r = get(srv, "/video/plain/clip.flv?start=100")
    assert r.status == 200
    assert r.body == FLV


QUERIES = ["", "?start=0", "?start=13", "?start=500", f"?start={len(FLV) - 1}", "?start=zz",
           f"?start={len(FLV)}"]
RANGES = [None, "bytes=0-20", "bytes=5-12", "bytes=-40", "bytes=100-", f"bytes={len(FLV) + 100}-"]


def test_same_bytes_as_nginx(srv, tmp_path):
    prefix = tmp_path / "nginx"
    make_files(prefix)
    ref = reference_nginx.start(harness.base_conf(CONF), prefix, "--with-http_flv_module")
    try:
        for q in QUERIES:
            for rng in RANGES:
                headers = {"Range": rng} if rng else {}
                ours = harness.http(srv.port, "/video/clip.flv" + q, headers=headers)
                theirs = harness.http(ref.port, "/video/clip.flv" + q, headers=headers)
                what = (q, rng)
                assert ours.status == theirs.status, what
                if ours.status >= 300:
                    continue  # error pages name their server
                assert ours.body == theirs.body, what
                for name in ("Content-Length", "Content-Range", "Content-Type", "Accept-Ranges"):
                    assert ours.header(name) == theirs.header(name), (what, name)
    finally:
        ref.stop()
