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
        listen 127.0.0.1:@PORT0@;
        listen 127.0.0.1:@PORT1@ ssl http2;
        ssl_certificate @PREFIX@/cert.pem;
        ssl_certificate_key @PREFIX@/key.pem;
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
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(prefix / "key.pem"),
                    "-out", str(prefix / "cert.pem"), "-days", "2", "-subj", "/CN=localhost"],
                   check=True, capture_output=True, timeout=60)
    server = harness.Server(harness.base_conf(CONF, access_log=False), prefix, nports=2)
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
    load = subprocess.Popen(["h2load", "--h1", "-c", "40", "-D", "30", f"http://127.0.0.1:{srv.ports[0]}/hot.txt"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with harness.Conn(srv.ports[0]) as c:
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
        with harness.Conn(srv.ports[0]) as c:
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


@pytest.mark.skipif(shutil.which("h2load") is None or shutil.which("curl") is None, reason="needs h2load and curl")
def test_over_tls_and_http2_the_bytes_follow_the_file(srv):
    # Over TLS and HTTP/2 the bytes pass through memory and are read with
    # the open: they must still be the file's bytes after each change.
    hot = srv.prefix / "www" / "hot.txt"
    url = f"https://127.0.0.1:{srv.ports[1]}/hot.txt"
    load = subprocess.Popen(["h2load", "-c", "20", "-m", "10", "-D", "30", url],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for n in range(1, 41):
            body = f"tls version {n}\n".encode() * (n % 5 + 1)
            replace(hot, body)
            for proto in ("--http2", "--http1.1"):
                r = subprocess.run(["curl", "-sk", proto, "-D", "-", url], capture_output=True, timeout=20)
                head, _, got = r.stdout.partition(b"\r\n\r\n")
                assert b" 200" in head.split(b"\r\n")[0], head
                assert got == body, f"{proto} after version {n}: {got[:40]!r}"
    finally:
        load.terminate()
        load.wait(timeout=10)
        replace(hot, b"v0\n")
