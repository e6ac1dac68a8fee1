"""WebDAV (nginx's ngx_http_dav_module) with curl: PUT (201/204, modes
from dav_access, mtime from Date, create_full_put_path, a cut upload
leaves nothing), DELETE (trailing slash, Depth, min_delete_depth, links
not followed), MKCOL, COPY and MOVE (Destination, Overwrite, Depth) and
nginx's statuses for each refusal. Also runs against nginx
(TORII_BIN=/usr/sbin/nginx)."""

import os
import socket
import subprocess
import time

import pytest

import harness

CONF = r"""
    client_body_temp_path @PREFIX@/client_body_temp;
    server {
        listen 127.0.0.1:@PORT@;
        root @PREFIX@/www;
        location /dav/ {
            dav_methods PUT DELETE MKCOL COPY MOVE;
            dav_access group:rw all:r;
            location /dav/ro/ { dav_methods off; }
        }
        location /full/ {
            dav_methods PUT;
            create_full_put_path on;
        }
        location /deep/ {
            dav_methods DELETE;
            min_delete_depth 3;
        }
        location /plain/ { }
    }
"""


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("dav")
    www = prefix / "www"
    for d in ("dav/ro", "full", "deep/a/b", "plain"):
        (www / d).mkdir(parents=True)
    (prefix / "client_body_temp").mkdir()
    server = harness.Server(harness.base_conf(CONF), prefix)
    server.start()
    yield server
    server.stop()


def www(srv, rel=""):
    return srv.prefix / "www" / rel


def curl(srv, method, path, *args, data=None):
    """Runs curl and returns (status, headers dict lower-cased)."""
    cmd = ["curl", "-s", "-o", "/dev/null", "-D", "-", "-X", method, *args,
           f"http://127.0.0.1:{srv.port}{path}"]
    out = subprocess.run(cmd, input=data, capture_output=True, timeout=20).stdout.decode("latin-1")
    lines = out.split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    return status, headers


def put(srv, path, body, *args):
    return curl(srv, "PUT", path, "--data-binary", "@-", "-H", "Content-Type:", *args, data=body)


def test_put_creates_then_replaces(srv):
    status, h = put(srv, "/dav/new.txt", b"first\n")
    assert status == 201
    assert h["location"] == f"http://127.0.0.1:{srv.port}/dav/new.txt"
    assert h["content-length"] == "0"
    f = www(srv, "dav/new.txt")
    assert f.read_bytes() == b"first\n"
    # dav_access group:rw all:r, the owner keeps rw.
    assert f.stat().st_mode & 0o777 == 0o664
    status, h = put(srv, "/dav/new.txt", b"second\n")
    assert status == 204
    assert "location" not in h
    assert f.read_bytes() == b"second\n"


def test_put_with_curl_upload_file(srv, tmp_path):
    src = tmp_path / "up.bin"
    src.write_bytes(os.urandom(300_000))
    out = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-T", str(src),
                          f"http://127.0.0.1:{srv.port}/dav/up.bin"], capture_output=True, timeout=20)
    assert out.stdout == b"201"
    assert www(srv, "dav/up.bin").read_bytes() == src.read_bytes()


def test_put_default_mode_and_date(srv):
    status, _ = put(srv, "/full/dated.txt", b"x", "-H", "Date: Tue, 01 Dec 2020 10:00:00 GMT")
    assert status == 201
    st = www(srv, "full/dated.txt").stat()
    assert st.st_mode & 0o777 == 0o600  # dav_access's default, user:rw
    assert int(st.st_mtime) == 1606816800


def test_put_missing_parent(srv):
    # Without create_full_put_path the rename fails: nginx answers 500.
    status, _ = put(srv, "/dav/no/such/dir/f.txt", b"x")
    assert status == 500
    assert not www(srv, "dav/no").exists()
    status, _ = put(srv, "/full/made/on/the/way/f.txt", b"deep")
    assert status == 201
    assert www(srv, "full/made/on/the/way/f.txt").read_bytes() == b"deep"


def test_put_refusals(srv):
    assert put(srv, "/dav/coll/", b"x")[0] == 409
    assert put(srv, "/dav/r.txt", b"x", "-H", "Content-Range: bytes 0-0/1")[0] == 501
    www(srv, "dav/adir").mkdir()
    assert put(srv, "/dav/adir", b"x")[0] == 409
    # Not a dav location, or dav_methods off: the static handler's 405.
    assert put(srv, "/plain/x.txt", b"x")[0] == 405
    assert put(srv, "/dav/ro/x.txt", b"x")[0] == 405
    assert not www(srv, "dav/ro/x.txt").exists()
    assert list((srv.prefix / "client_body_temp").iterdir()) == []


def test_cut_upload_leaves_nothing(srv):
    www(srv, "dav/keep.txt").write_bytes(b"old contents\n")
    s = socket.create_connection(("127.0.0.1", srv.port))
    s.sendall(b"PUT /dav/keep.txt HTTP/1.1\r\nHost: localhost\r\nContent-Length: 200000\r\n\r\n" + b"n" * 60000)
    temp = srv.prefix / "client_body_temp"
    harness.wait_until(lambda: any(temp.iterdir()), 10, what="temporary file")
    s.close()
    harness.wait_until(lambda: not any(temp.iterdir()), 10, what="temporary file removed")
    assert www(srv, "dav/keep.txt").read_bytes() == b"old contents\n"
    # A whole upload still works afterwards.
    assert put(srv, "/dav/keep.txt", b"new\n")[0] == 204


def test_mkcol(srv):
    status, h = curl(srv, "MKCOL", "/dav/col/")
    assert status == 201
    assert h["location"] == f"http://127.0.0.1:{srv.port}/dav/col/"
    assert www(srv, "dav/col").is_dir()
    assert curl(srv, "MKCOL", "/dav/col/")[0] == 405  # exists
    assert curl(srv, "MKCOL", "/dav/col2")[0] == 409  # not a collection URI
    assert curl(srv, "MKCOL", "/dav/a/b/c/")[0] == 409  # parent missing
    assert curl(srv, "MKCOL", "/dav/col3/", "--data-binary", "x")[0] == 415


def test_delete(srv):
    www(srv, "dav/d1/sub").mkdir(parents=True)
    www(srv, "dav/d1/sub/f").write_text("f")
    www(srv, "dav/d1/g").write_text("g")
    www(srv, "dav/file.txt").write_text("x")
    assert curl(srv, "DELETE", "/dav/file.txt")[0] == 204
    assert not www(srv, "dav/file.txt").exists()
    assert curl(srv, "DELETE", "/dav/file.txt")[0] == 404
    assert curl(srv, "DELETE", "/dav/d1")[0] == 409  # a collection needs the slash
    assert curl(srv, "DELETE", "/dav/d1/", "-H", "Depth: 1")[0] == 400
    assert curl(srv, "DELETE", "/dav/d1/g", "-H", "Depth: 1")[0] == 400
    assert curl(srv, "DELETE", "/dav/d1/g", "-H", "Depth: 0")[0] == 204
    assert curl(srv, "DELETE", "/dav/d1/")[0] == 204
    assert not www(srv, "dav/d1").exists()
    assert curl(srv, "DELETE", "/dav/x", "--data-binary", "x")[0] == 415


@pytest.mark.skipif(harness.IS_NGINX, reason="nginx 1.22 walks into a linked folder and empties it")
def test_delete_does_not_follow_links(srv, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious").write_text("keep")
    www(srv, "dav/linked").mkdir()
    os.symlink(outside, www(srv, "dav/linked/out"))
    assert curl(srv, "DELETE", "/dav/linked/")[0] == 204
    assert not www(srv, "dav/linked").exists()
    assert (outside / "precious").read_text() == "keep"


def test_min_delete_depth(srv):
    www(srv, "deep/a/b/f").write_text("f")
    assert curl(srv, "DELETE", "/deep/")[0] == 409
    assert curl(srv, "DELETE", "/deep/a/")[0] == 409  # three slashes, nothing after the third
    assert curl(srv, "DELETE", "/deep/a/b/f")[0] == 204
    assert curl(srv, "DELETE", "/deep/a/b/")[0] == 204
    assert www(srv, "deep/a").is_dir() and not www(srv, "deep/a/b").exists()


def test_copy_and_move_files(srv):
    www(srv, "dav/c1.txt").write_text("one")
    dest = f"Destination: http://127.0.0.1:{srv.port}/dav/c2.txt"
    assert curl(srv, "COPY", "/dav/c1.txt", "-H", dest)[0] == 204
    assert www(srv, "dav/c2.txt").read_text() == "one"
    assert curl(srv, "COPY", "/dav/c1.txt", "-H", dest, "-H", "Overwrite: F")[0] == 412
    assert curl(srv, "COPY", "/dav/c1.txt", "-H", "Destination: /dav/c3.txt")[0] == 204
    assert curl(srv, "MOVE", "/dav/c3.txt", "-H", "Destination: /dav/new/dir/c4.txt")[0] == 204
    assert www(srv, "dav/new/dir/c4.txt").read_text() == "one"
    assert not www(srv, "dav/c3.txt").exists()


def test_copy_and_move_collections(srv):
    www(srv, "dav/t1/s").mkdir(parents=True)
    www(srv, "dav/t1/s/f").write_text("deep")
    assert curl(srv, "COPY", "/dav/t1/", "-H", "Destination: /dav/t2/")[0] == 201
    assert www(srv, "dav/t2/s/f").read_text() == "deep"
    assert curl(srv, "MOVE", "/dav/t2/", "-H", "Destination: /dav/t3/", "-H", "Depth: 1")[0] == 400
    assert curl(srv, "MOVE", "/dav/t2/", "-H", "Destination: /dav/t3/")[0] == 201
    assert www(srv, "dav/t3/s/f").read_text() == "deep" and not www(srv, "dav/t2").exists()
    if not harness.IS_NGINX:  # nginx 1.22 copies a folder into itself until names are too long
        assert curl(srv, "COPY", "/dav/t1/", "-H", "Destination: /dav/t1/")[0] == 403
        assert curl(srv, "COPY", "/dav/t1/", "-H", "Destination: /dav/t1/inner/")[0] == 403
        assert not www(srv, "dav/t1/inner").exists()


def test_destination_errors(srv):
    www(srv, "dav/src.txt").write_text("s")
    assert curl(srv, "COPY", "/dav/src.txt")[0] == 400  # no Destination
    assert curl(srv, "COPY", "/dav/src.txt", "-H", "Destination: http://other.example/dav/x")[0] == 400
    assert curl(srv, "COPY", "/dav/src.txt", "-H", "Destination: ftp://localhost/dav/x")[0] == 400
    assert curl(srv, "COPY", "/dav/src.txt", "-H", "Destination: /dav/../../etc/x")[0] == 400
    assert curl(srv, "COPY", "/dav/src.txt", "-H", "Destination: /dav/x/")[0] == 409
    assert curl(srv, "COPY", "/dav/src.txt", "-H", "Destination: /dav/x", "-H", "Overwrite: maybe")[0] == 400
    assert curl(srv, "COPY", "/dav/src.txt", "-H", "Destination: /dav/x", "-H", "Depth: 1")[0] == 400
    assert not www(srv, "dav/x").exists()
    assert not (srv.prefix / "etc").exists()


@pytest.mark.parametrize("line,message", [
    ("dav_methods PUT FETCH;", 'invalid value "FETCH"'),
    ("dav_access user:rwx;", 'invalid value "user:rwx"'),
    ("min_delete_depth two;", '"min_delete_depth" directive invalid number'),
])
def test_bad_values(tmp_path, line, message):
    conf = harness.base_conf(f"server {{ listen 127.0.0.1:1; location / {{ {line} }} }}")
    (tmp_path / "logs").mkdir()
    path = tmp_path / "bad.conf"
    path.write_text(conf.replace("@PREFIX@", str(tmp_path)))
    r = harness.cli(["-t", "-c", str(path)], prefix=tmp_path)
    assert r.returncode != 0
    assert message in r.stdout + r.stderr
