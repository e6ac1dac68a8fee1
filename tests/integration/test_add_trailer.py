"""add_trailer (ngx_http_headers_module): fields after the body. Over
HTTP/1.1 the response goes chunked (its length dropped) with the fields in
the last chunk; over HTTP/2 they come in a HEADERS frame after the DATA
(nghttp); an HTTP/1.0 client gets the plain response. Only nginx's list of
statuses gets them, unless `always`; a block's own add_trailer lines
replace the inherited ones. The same expectations hold against nginx
(TORII_BIN=/usr/sbin/nginx)."""

import shutil
import socket
import subprocess

import pytest

import harness

CONF = r"""
    server {
        listen 127.0.0.1:@PORT@;
        listen 127.0.0.1:@PORT1@ http2;
        server_name localhost;
        root @PREFIX@/www;
        add_trailer X-Trailer "t-$status";

        location /always/ {
            add_trailer X-Always "a-$status" always;
        }
        location /empty/ {
            add_trailer X-Empty "$arg_v";
        }
    }
"""


@pytest.fixture
def srv(make_server):
    s = make_server(harness.base_conf(CONF), nports=2, start=False)
    www = s.prefix / "www"
    for d in ("", "always", "empty"):
        (www / d).mkdir(parents=True, exist_ok=True)
        (www / d / "a.txt").write_text("hello\n")
    s.start()
    return s


def raw(port, request):
    """The whole answer to one request on a connection the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return head.decode("latin-1").lower(), body


def get(port, path, version="1.1"):
    return raw(port, f"GET {path} HTTP/{version}\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())


def test_http11_response_goes_chunked_with_the_trailer(srv):
    head, body = get(srv.port, "/a.txt")
    assert " 200 " in head.split("\r\n")[0]
    assert "transfer-encoding: chunked" in head
    assert "content-length" not in head
    assert body == b"6\r\nhello\n\r\n0\r\nX-Trailer: t-200\r\n\r\n"


def test_no_trailer_on_an_error_unless_always(srv):
    head, body = get(srv.port, "/missing")
    assert " 404 " in head.split("\r\n")[0]
    assert b"X-Trailer" not in body
    head, body = get(srv.port, "/always/missing")
    assert " 404 " in head.split("\r\n")[0]
    assert body.endswith(b"0\r\nX-Always: a-404\r\n\r\n")
    # The location's own line replaced the inherited one.
    head, body = get(srv.port, "/always/a.txt")
    assert body.endswith(b"0\r\nX-Always: a-200\r\n\r\n")


def test_an_empty_value_is_left_out(srv):
    head, body = get(srv.port, "/empty/a.txt")
    assert body.endswith(b"\r\n0\r\n\r\n")
    head, body = get(srv.port, "/empty/a.txt?v=x")
    assert body.endswith(b"0\r\nX-Empty: x\r\n\r\n")


def test_http10_gets_no_trailer(srv):
    head, body = get(srv.port, "/a.txt", version="1.0")
    assert "content-length: 6" in head
    assert body == b"hello\n"


def test_head_gets_no_trailer(srv):
    head, body = raw(srv.port, b"HEAD /a.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    assert body == b""


@pytest.mark.skipif(not shutil.which("nghttp"), reason="nghttp not installed")
def test_http2_trailer_after_the_data(srv):
    out = subprocess.run(["nghttp", "-v", f"http://127.0.0.1:{srv.ports[1]}/a.txt"], capture_output=True,
                         text=True, timeout=20).stdout
    assert "recv (stream_id=13) content-length: 6" in out
    data = out.index("recv DATA frame")
    trailer = out.index("recv (stream_id=13) x-trailer: t-200")
    assert trailer > data, out


def test_bad_parameter_is_refused(tmp_path):
    prefix = tmp_path / "p"
    (prefix / "logs").mkdir(parents=True)
    conf_path = prefix / "t.conf"
    conf_path.write_text(harness.base_conf(http='add_trailer X-A "b" sometimes;').replace("@PREFIX@", str(prefix)))
    r = harness.cli(["-t", "-c", str(conf_path)], prefix=prefix)
    assert r.returncode != 0
    assert 'invalid parameter "sometimes"' in (r.stdout + r.stderr)
