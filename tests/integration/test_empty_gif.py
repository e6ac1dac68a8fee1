"""empty_gif as nginx's module: a 43-byte transparent 1x1 GIF with
nginx's fixed Last-Modified, HEAD, 405 for other methods, 304 for the
same If-Modified-Since, not inherited by a nested location. Also runs
against nginx (TORII_BIN=/usr/sbin/nginx)."""

import pytest

import harness

GIF = bytes.fromhex(
    "47494638396101000100800100000000ffffff21f90401000001002c00000000"
    "010001000002024c01003b")
LAST_MODIFIED = "Mon, 28 Sep 1970 06:00:00 GMT"

CONF = r"""
    server {
        listen 127.0.0.1:@PORT@;
        root @PREFIX@;
        location = /pixel.gif { empty_gif; }
        location /img/ {
            empty_gif;
            location /img/real/ { }
        }
    }
"""


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("emptygif")
    (prefix / "img" / "real").mkdir(parents=True)
    (prefix / "img" / "real" / "a.txt").write_text("real file\n")
    server = harness.Server(harness.base_conf(CONF), prefix)
    server.start()
    yield server
    server.stop()


def test_gif(srv):
    r = harness.http(srv.port, "/pixel.gif")
    assert r.status == 200
    assert r.body == GIF and len(r.body) == 43
    assert r.header("Content-Type") == "image/gif"
    assert r.header("Content-Length") == "43"
    assert r.header("Last-Modified") == LAST_MODIFIED


def test_any_uri_of_the_location(srv):
    assert harness.http(srv.port, "/img/anything/here.gif").body == GIF


def test_head(srv):
    r = harness.http(srv.port, "/pixel.gif", method="HEAD")
    assert r.status == 200
    assert r.header("Content-Length") == "43"
    assert r.body == b""


def test_other_methods(srv):
    assert harness.http(srv.port, "/pixel.gif", method="POST", body=b"x").status == 405


def test_not_modified(srv):
    r = harness.http(srv.port, "/pixel.gif", headers={"If-Modified-Since": LAST_MODIFIED})
    assert r.status == 304
    assert r.body == b""
    r = harness.http(srv.port, "/pixel.gif", headers={"If-Modified-Since": "Tue, 29 Sep 1970 06:00:00 GMT"})
    assert r.status == 200


def test_nested_location_does_not_inherit(srv):
    r = harness.http(srv.port, "/img/real/a.txt")
    assert r.status == 200
    assert r.body == b"real file\n"
