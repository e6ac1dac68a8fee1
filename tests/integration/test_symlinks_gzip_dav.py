"""disable_symlinks where nginx applies it beyond the plain file: the
gzip_static lookup of FILE.gz opens under the location's policy (a .gz that
is a link is skipped, the file itself is served), as nginx's gzip_static
module does. nginx's WebDAV module does not look at disable_symlinks (it
writes, deletes and makes folders through plain system calls), so neither
does torii: a PUT through a linked folder lands in the link's target.
Runs against nginx too (TORII_BIN=/usr/sbin/nginx)."""

import gzip
import os

import pytest

import harness

PAGE = b"the page itself\n" * 100
PRE_GZ = gzip.compress(b"from the gz\n")


@pytest.fixture
def srv(make_server):
    conf = harness.base_conf(http="""
    server {
        listen 127.0.0.1:@PORT@;
        root @PREFIX@/www;
        location /strict/ { disable_symlinks on; gzip_static on; }
        location /loose/ { gzip_static on; }
        location /dav/ { disable_symlinks on; dav_methods PUT DELETE MKCOL; create_full_put_path on; }
    }""")
    s = make_server(conf, start=False)
    www = s.prefix / "www"
    (s.prefix / "elsewhere").mkdir()
    (s.prefix / "elsewhere" / "page.html.gz").write_bytes(PRE_GZ)
    for d in ("strict", "loose"):
        (www / d).mkdir(parents=True)
        (www / d / "page.html").write_bytes(PAGE)
        os.symlink(s.prefix / "elsewhere" / "page.html.gz", www / d / "page.html.gz")
    (www / "dav").mkdir()
    (s.prefix / "target").mkdir()
    os.symlink(s.prefix / "target", www / "dav" / "linked")
    s.start()
    yield s


def test_gz_that_is_a_link_is_skipped_under_disable_symlinks(srv):
    r = harness.http(srv.port, "/strict/page.html", headers={"Accept-Encoding": "gzip"})
    assert r.status == 200
    assert r.header("Content-Encoding") is None
    assert r.body == PAGE


def test_gz_that_is_a_link_is_served_without_it(srv):
    r = harness.http(srv.port, "/loose/page.html", headers={"Accept-Encoding": "gzip"})
    assert r.status == 200
    assert r.header("Content-Encoding") == "gzip"
    assert r.body == PRE_GZ


def test_dav_does_not_apply_disable_symlinks(srv):
    r = harness.http(srv.port, "/dav/linked/new.txt", method="PUT", body=b"through the link\n")
    assert r.status == 201, r
    assert (srv.prefix / "target" / "new.txt").read_bytes() == b"through the link\n"
    r = harness.http(srv.port, "/dav/linked/new.txt", method="DELETE")
    assert r.status == 204, r
    assert not (srv.prefix / "target" / "new.txt").exists()
