"""proxy_store and proxy_store_access (and fastcgi_/uwsgi_/scgi_store's
shared code), with nginx's mirror-on-demand pattern from its documentation:
a file missing under the root is fetched from the upstream, served, and
written to disk (through proxy_temp_path, with the access modes and the
upstream's Last-Modified), so the next request is a plain file. Only a
complete 200 is stored: a 404, a body cut short and a HEAD leave nothing,
not even a temporary file. Also runs against nginx
(TORII_BIN=/usr/sbin/nginx)."""

import email.utils
import http.server
import os
import socket
import stat
import threading

import pytest

import harness

LAST_MODIFIED = 1_600_000_000  # 2020-09-13


class Backend(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hits = []

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        Backend.hits.append(self.path)
        if self.path.startswith("/missing"):
            return self._send(404, b"not here\n")
        if self.path.startswith("/cut"):
            # Promises 100000 bytes, sends 10 and closes.
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(b"0123456789")
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if self.path.startswith("/chunked"):
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for part in (b"chunk one\n", b"chunk two\n"):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
            return
        if self.path.startswith("/big"):
            return self._send(200, bytes(range(256)) * 1200)
        self._send(200, b"body of " + self.path.encode() + b"\n")

    def _send(self, status, body):
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Last-Modified", email.utils.formatdate(LAST_MODIFIED, usegmt=True))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


CONF = r"""
    server {
        listen 127.0.0.1:@PORT@;

        location / {
            root @PREFIX@/data/www;
            error_page 404 = /fetch$uri;
        }

        location /fetch/ {
            internal;

            proxy_pass http://127.0.0.1:@UP@/;
            proxy_store on;
            proxy_store_access user:rw group:rw all:r;
            proxy_temp_path @PREFIX@/data/temp;

            alias @PREFIX@/data/www/;
        }

        location /named/ {
            proxy_pass http://127.0.0.1:@UP@/;
            proxy_store @PREFIX@/data/named$uri.copy;
            proxy_temp_path @PREFIX@/data/temp;
        }
    }
"""


@pytest.fixture(scope="module")
def backend():
    Backend.hits = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Backend)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def srv(tmp_path_factory, backend):
    prefix = tmp_path_factory.mktemp("store")
    for d in ("data/www", "data/temp", "data/named"):
        (prefix / d).mkdir(parents=True)
    conf = CONF.replace("@UP@", str(backend.server_address[1]))
    server = harness.Server(harness.base_conf(conf), prefix)
    server.start()
    yield server
    server.stop()


def stored(srv, rel):
    return srv.prefix / "data" / "www" / rel


def temp_files(srv):
    return os.listdir(srv.prefix / "data" / "temp")


def test_mirror_on_demand(srv):
    r = harness.http(srv.port, "/dir/sub/page.html")
    assert r.status == 200
    assert r.body == b"body of /dir/sub/page.html\n"
    path = stored(srv, "dir/sub/page.html")
    assert path.read_bytes() == b"body of /dir/sub/page.html\n"
    st = path.stat()
    assert stat.S_IMODE(st.st_mode) == 0o664  # proxy_store_access
    assert int(st.st_mtime) == LAST_MODIFIED  # the upstream's Last-Modified
    assert path.parent.is_dir() and path.parent.parent.is_dir()  # folders made as needed
    assert temp_files(srv) == []
    # The next request is the file on disk: the upstream is not asked again.
    hits = len(Backend.hits)
    r = harness.http(srv.port, "/dir/sub/page.html")
    assert r.status == 200 and r.body == b"body of /dir/sub/page.html\n"
    assert len(Backend.hits) == hits


def test_large_body_stored_whole(srv):
    r = harness.http(srv.port, "/big.bin")
    assert r.status == 200
    assert len(r.body) == 256 * 1200
    assert stored(srv, "big.bin").read_bytes() == bytes(range(256)) * 1200
    assert temp_files(srv) == []


def test_chunked_response_stored(srv):
    r = harness.http(srv.port, "/chunked.txt")
    assert r.status == 200
    assert stored(srv, "chunked.txt").read_bytes() == b"chunk one\nchunk two\n"


def test_not_found_is_not_stored(srv):
    r = harness.http(srv.port, "/missing.html")
    assert r.status == 404
    assert not stored(srv, "missing.html").exists()
    assert temp_files(srv) == []


def test_cut_body_leaves_no_file(srv):
    try:
        harness.http(srv.port, "/cut.bin")
    except Exception:
        pass  # the client sees the response cut short
    harness.wait_until(lambda: "upstream prematurely closed" in srv.error_log.read_text(), 10,
                       what="the cut logged")
    assert not stored(srv, "cut.bin").exists()
    assert temp_files(srv) == []


def test_head_is_not_stored(srv):
    r = harness.http(srv.port, "/head-only.html", method="HEAD")
    assert r.status == 200
    assert not stored(srv, "head-only.html").exists()
    assert temp_files(srv) == []


def test_store_path_with_variables(srv):
    r = harness.http(srv.port, "/named/x/y.txt")
    assert r.status == 200 and r.body == b"body of /x/y.txt\n"
    path = srv.prefix / "data" / "named" / "named" / "x" / "y.txt.copy"
    assert path.read_bytes() == b"body of /x/y.txt\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # proxy_store_access's default
    assert temp_files(srv) == []


@pytest.mark.parametrize("directive, message", [
    ("proxy_store_access user:x;", 'invalid value "user:x"'),
    ("proxy_store_access other:rw;", 'invalid value "other:rw"'),
    ("fastcgi_store_access group:rwx;", 'invalid value "group:rwx"'),
    pytest.param('proxy_store "";', "empty path", marks=pytest.mark.skipif(
        harness.IS_NGINX, reason="nginx 1.22 predates the empty path check")),
    ("proxy_store on; proxy_store off;", '"proxy_store" directive is duplicate'),
    ("uwsgi_store_access all:r; uwsgi_store_access all:r;", '"uwsgi_store_access" directive is duplicate'),
    ("scgi_temp_path /tmp/x 5 6;", '"scgi_temp_path" directive invalid value'),
    ("proxy_temp_path /tmp/x 0;", '"proxy_temp_path" directive invalid value'),
    ("proxy_store on a;", 'invalid number of arguments in "proxy_store" directive'),
])
def test_bad_values(tmp_path, directive, message):
    conf = harness.base_conf(f"server {{ listen 127.0.0.1:1; location / {{ {directive} }} }}")
    (tmp_path / "logs").mkdir()
    (tmp_path / "t.conf").write_text(conf.replace("@PREFIX@", str(tmp_path)))
    p = harness.cli(["-t", "-c", str(tmp_path / "t.conf")], prefix=tmp_path)
    out = p.stdout + p.stderr
    assert p.returncode == 1, out
    assert message in out, out


def test_store_and_cache_in_one_block(tmp_path):
    conf = harness.base_conf(
        "proxy_cache_path @PREFIX@/c keys_zone=z:1m;\n"
        "server { listen 127.0.0.1:1; location / { proxy_store on; proxy_cache z; } }")
    (tmp_path / "logs").mkdir()
    (tmp_path / "t.conf").write_text(conf.replace("@PREFIX@", str(tmp_path)))
    p = harness.cli(["-t", "-c", str(tmp_path / "t.conf")], prefix=tmp_path)
    out = p.stdout + p.stderr
    assert p.returncode == 1, out
    assert '"proxy_cache" directive is incompatible with "proxy_store"' in out, out


def test_family_accepted(tmp_path):
    conf = harness.base_conf(
        "fastcgi_store on; fastcgi_store_access user:rw all:r; fastcgi_temp_path @PREFIX@/ft 1 2 3;\n"
        "uwsgi_store /x$uri; scgi_store off; scgi_store_access group:r;\n"
        "server { listen 127.0.0.1:1; location / { proxy_store on; proxy_temp_path @PREFIX@/pt; } }")
    (tmp_path / "logs").mkdir()
    (tmp_path / "t.conf").write_text(conf.replace("@PREFIX@", str(tmp_path)))
    p = harness.cli(["-t", "-c", str(tmp_path / "t.conf")], prefix=tmp_path)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
