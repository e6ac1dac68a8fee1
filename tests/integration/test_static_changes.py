"""Without open_file_cache a file changed on disk is seen by the very next
request, as when every request opens the file itself: also while other
clients keep the server busy with the same file (requests that share a
loop turn share one open), and when the change is a PUT pipelined between
two GETs on one connection. Also runs against nginx
(TORII_BIN=/usr/sbin/nginx)."""

import os
import shutil
import subprocess

import pytest

import harness

CONF = r"""
    server {
        listen 127.0.0.1:@PORT@;
        root @PREFIX@/www;
        location /dav/ {
            dav_methods PUT;
            client_body_temp_path @PREFIX@/body;
        }
    }
"""


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("changes")
    (prefix / "www" / "dav").mkdir(parents=True)
    (prefix / "body").mkdir()
    (prefix / "www" / "hot.txt").write_bytes(b"v0\n")
    server = harness.Server(harness.base_conf(CONF, access_log=False), prefix)
    server.start()
    yield server
    server.stop()


def replace(path, data):
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


@pytest.mark.skipif(shutil.which("h2load") is None, reason="needs h2load")
def test_a_replaced_file_is_served_at_once_under_load(srv):
    hot = srv.prefix / "www" / "hot.txt"
    load = subprocess.Popen(["h2load", "--h1", "-c", "40", "-D", "30", f"http://127.0.0.1:{srv.port}/hot.txt"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with harness.Conn(srv.port) as c:
            for n in range(1, 301):
                body = f"version {n}\n".encode() * (n % 7 + 1)  # the length changes too
                replace(hot, body)
                r = c.request("GET", "/hot.txt")
                assert r.status == 200
                assert r.body == body, f"after version {n} was written: {r.body[:40]!r}"
                assert r.header("Content-Length") == str(len(body))
            os.unlink(hot)
            assert c.request("GET", "/hot.txt").status == 404
    finally:
        load.terminate()
        load.wait(timeout=10)
        replace(hot, b"v0\n")


def test_a_get_pipelined_after_a_put_sees_the_new_file(srv):
    target = srv.prefix / "www" / "dav" / "page.txt"
    target.write_bytes(b"old\n")
    before = b"old\n"
    for n in range(20):
        new = f"new {n}\n".encode()
        with harness.Conn(srv.port) as c:
            c.send(harness.build_request("GET", "/dav/page.txt")
                   + harness.build_request("PUT", "/dav/page.txt", body=new)
                   + harness.build_request("GET", "/dav/page.txt"))
            first = c.read_response()
            put = c.read_response()
            last = c.read_response()
        assert first.status == 200 and first.body == before
        assert put.status == 204
        assert last.status == 200 and last.body == new
        before = new
