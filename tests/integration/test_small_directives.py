"""Small directives with nginx's meaning: charset/charset_types (the
charset parameter on Content-Type, no recoding), absolute_redirect,
port_in_redirect, server_name_in_redirect, reset_timedout_connection, and
the tuning directives torii accepts (aio, directio, accept_mutex,
sendfile_max_chunk, *_temp_path, hash sizes...). Every expectation is
nginx's: the file passes with TORII_BIN=/usr/sbin/nginx."""

import socket
import time

import pytest

import harness


def conf():
    return harness.base_conf(error_level="info", events="accept_mutex off; accept_mutex_delay 500ms;", http="""
    map_hash_bucket_size 128;
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost named.example;
        root @PREFIX@/www;
        charset utf-8;
        charset_types text/css application/json;
        source_charset utf-8;
        sendfile_max_chunk 1m;
        aio off;
        directio off;
        msie_padding on;
        recursive_error_pages off;
        log_subrequest off;
        proxy_temp_path @PREFIX@/proxy_temp 1 2;
        location /rel/ { absolute_redirect off; }
        location /noport/ { port_in_redirect off; }
        location /byname/ { server_name_in_redirect on; }
        location /ret { return 302 /target; }
        location /slow/ {
            send_timeout 1s;
            reset_timedout_connection on;
        }
        location /slow-fin/ { send_timeout 1s; }
    }
""")


@pytest.fixture
def srv(make_server):
    s = make_server(conf(), start=False)
    www = s.prefix / "www"
    for d in ("rel/d", "noport/d", "byname/d", "plain/d"):
        (www / d).mkdir(parents=True, exist_ok=True)
    (www / "a.txt").write_text("text\n")
    (www / "a.html").write_text("<p>html</p>\n")
    (www / "a.css").write_text("p{}\n")
    (www / "a.json").write_text("{}\n")
    (www / "a.png").write_bytes(b"\x89PNG")
    for d in ("slow", "slow-fin"):
        (www / d).mkdir(exist_ok=True)
        (www / d / "big.bin").write_bytes(b"x" * (32 << 20))
    s.start()
    return s


@pytest.mark.parametrize("path, ctype", [
    ("/a.html", "text/html; charset=utf-8"),       # text/html is always a charset type
    ("/a.css", "text/css; charset=utf-8"),
    ("/a.json", "application/json; charset=utf-8"),
    ("/a.txt", "text/plain"),                      # not in this charset_types
    ("/a.png", "image/png"),
])
def test_charset_on_content_type(srv, path, ctype):
    r = harness.http(srv.port, path)
    assert r.status == 200
    assert r.header("Content-Type") == ctype


def test_directory_redirects(srv):
    port = srv.port
    assert harness.http(srv.port, "/plain/d").header("Location") == f"http://localhost:{port}/plain/d/"
    assert harness.http(srv.port, "/rel/d").header("Location") == "/rel/d/"
    assert harness.http(srv.port, "/noport/d").header("Location") == "http://localhost/noport/d/"
    r = harness.http(srv.port, "/byname/d", host="other.example")
    assert r.header("Location") == f"http://localhost:{port}/byname/d/"
    r = harness.http(srv.port, "/plain/d", host="other.example")
    assert r.header("Location") == f"http://other.example:{port}/plain/d/"


def stalled_reader_ends_with_reset(srv, path):
    """Asks for a large file and reads none of it until the server gives up
    (send_timeout); True if the connection then ends with a reset, False
    for an orderly close after the bytes already sent."""
    before = srv.error_log_text().count("timed out")
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", srv.port))
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
    harness.wait_until(lambda: srv.error_log_text().count("timed out") > before, 15, what="send_timeout")
    s.settimeout(10)
    try:
        while s.recv(65536):
            pass
        return False
    except ConnectionResetError:
        return True
    finally:
        s.close()


def test_reset_timedout_connection(srv):
    assert stalled_reader_ends_with_reset(srv, "/slow/big.bin") is True
    assert stalled_reader_ends_with_reset(srv, "/slow-fin/big.bin") is False


@pytest.mark.parametrize("line, message", [
    ("aio sometimes;", 'invalid value "sometimes"'),
    ("proxy_temp_path /tmp/x 5 6;", '"proxy_temp_path" directive invalid value'),
    ("sendfile_max_chunk lots;", 'invalid value "lots"'),
])
def test_bad_values_are_refused(tmp_path, line, message, nginx_only_skip):
    prefix = tmp_path / "p"
    (prefix / "logs").mkdir(parents=True)
    conf_path = prefix / "t.conf"
    conf_path.write_text(harness.base_conf(http=line).replace("@PREFIX@", str(prefix)))
    r = harness.cli(["-t", "-c", str(conf_path)], prefix=prefix)
    assert r.returncode != 0
    assert message in (r.stdout + r.stderr)
