"""uwsgi_pass to uwsgi with its python3 plugin running a WSGI app, started
by each test: Debian's uwsgi_params unchanged, GET, POST (a streamed
upload), status and headers from the app, modifiers, 502 and 504. The same
tests pass against nginx (TORII_BIN=/usr/sbin/nginx)."""

import hashlib
import json
import os
import time

import pytest

import harness
from gateway_apps import Uwsgi, copy_debian_params, server_peak_rss_kb, server_rss_kb

APP = r'''
import hashlib
import json
import time

KEYS = ["REQUEST_METHOD", "REQUEST_URI", "PATH_INFO", "QUERY_STRING", "CONTENT_LENGTH", "CONTENT_TYPE",
        "SERVER_PROTOCOL", "REQUEST_SCHEME", "HTTPS", "REMOTE_ADDR", "SERVER_PORT", "HTTP_HOST",
        "HTTP_X_CUSTOM", "DOCUMENT_ROOT", "EXTRA"]


def application(environ, start_response):
    path = environ.get("PATH_INFO", "")
    if path == "/upload":
        left = int(environ.get("CONTENT_LENGTH") or 0)
        md5 = hashlib.md5()
        n = 0
        stream = environ["wsgi.input"]
        while left > 0:
            chunk = stream.read(min(left, 65536))
            if not chunk:
                break
            md5.update(chunk)
            n += len(chunk)
            left -= len(chunk)
        body = json.dumps({"length": n, "md5": md5.hexdigest()}).encode()
        start_response("200 OK", [("Content-Type", "application/json")])
        return [body]
    if path == "/created":
        start_response("201 Created", [("X-App", "made"), ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")])
        return [b"created"]
    if path == "/redirect":
        start_response("302 Found", [("Location", "http://example.test/there")])
        return [b""]
    if path == "/slow":
        time.sleep(4)
        start_response("200 OK", [])
        return [b"late"]
    if path == "/stream":
        start_response("200 OK", [("Content-Type", "text/plain")])
        return (b"line %d\n" % i for i in range(1000))
    env = {k: environ[k] for k in KEYS if k in environ}
    env["wsgi_body"] = environ["wsgi.input"].read().decode() if environ.get("CONTENT_LENGTH") else ""
    start_response("200 OK", [("Content-Type", "application/json")])
    return [json.dumps(env).encode()]
'''


@pytest.fixture
def app(tmp_path):
    made = []

    def make():
        u = Uwsgi(tmp_path / f"uwsgi{len(made)}", APP)
        made.append(u)
        return u
    yield make
    for u in made:
        u.stop()


def site(make_server, location_body, extra_http=""):
    server = make_server(harness.base_conf(http=f"""
    {extra_http}
    server {{
        listen 127.0.0.1:@PORT@;
        root @PREFIX@/html;
        client_max_body_size 200m;
        location / {{
            include uwsgi_params;
            {location_body}
        }}
    }}""", error_level="info"), start=False)
    copy_debian_params(server.prefix)
    (server.prefix / "html").mkdir(exist_ok=True)
    server.start()
    return server


def test_get_with_debian_params(make_server, app):
    u = app()
    srv = site(make_server, f"uwsgi_pass {u.address};")
    r = harness.http(srv.port, "/some/path?x=1&y=2", headers={"X-Custom": "hi"}, host="example.test")
    assert r.status == 200, r.body
    assert r.header("Content-Type") == "application/json"
    v = json.loads(r.body)
    assert v["REQUEST_METHOD"] == "GET" and v["PATH_INFO"] == "/some/path"
    assert v["REQUEST_URI"] == "/some/path?x=1&y=2" and v["QUERY_STRING"] == "x=1&y=2"
    assert v["SERVER_PROTOCOL"] == "HTTP/1.1" and v["REQUEST_SCHEME"] == "http"
    assert v["HTTP_HOST"] == "example.test" and v["HTTP_X_CUSTOM"] == "hi"
    assert v["REMOTE_ADDR"] == "127.0.0.1" and v["SERVER_PORT"] == str(srv.port)
    assert "HTTPS" not in v
    assert v["DOCUMENT_ROOT"].endswith("/html")


def test_unix_socket_with_three_slashes(make_server, tmp_path):
    """`uwsgi_pass unix:///path/app.sock;` (Django's own example): a path
    with extra slashes, as nginx reads it."""
    u = Uwsgi(tmp_path / "unix-app", APP, unix=True)
    try:
        srv = site(make_server, f"uwsgi_pass unix://{u.address[5:]};")
        r = harness.http(srv.port, "/x")
        assert r.status == 200, r.body
        assert json.loads(r.body)["PATH_INFO"] == "/x"
    finally:
        u.stop()


def test_post_body_and_extra_param(make_server, app):
    u = app()
    srv = site(make_server, f"uwsgi_param EXTRA from-config; uwsgi_pass uwsgi://{u.address};")
    r = harness.http(srv.port, "/echo", method="POST", body=b"name=value&x=y",
                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    v = json.loads(r.body)
    assert v["REQUEST_METHOD"] == "POST" and v["CONTENT_LENGTH"] == "14"
    assert v["CONTENT_TYPE"] == "application/x-www-form-urlencoded"
    assert v["wsgi_body"] == "name=value&x=y" and v["EXTRA"] == "from-config"


def test_status_and_headers_from_the_app(make_server, app):
    u = app()
    srv = site(make_server, f"uwsgi_pass {u.address};")
    r = harness.http(srv.port, "/created")
    assert r.status == 201 and r.body == b"created" and r.header("X-App") == "made"
    assert r.header_all("Set-Cookie") == ["a=1", "b=2"]
    r = harness.http(srv.port, "/redirect")
    assert r.status == 302 and r.header("Location") == "http://example.test/there"
    r = harness.http(srv.port, "/stream")
    assert r.status == 200 and r.body == b"".join(b"line %d\n" % i for i in range(1000))


def test_hide_header_and_intercept_errors(make_server, app):
    u = app()
    srv = site(make_server, f"uwsgi_pass {u.address}; uwsgi_hide_header X-App;")
    r = harness.http(srv.port, "/created")
    assert r.status == 201 and r.header("X-App") is None


def test_modifiers_reach_the_app(make_server, app):
    # modifier1 0 is WSGI for uwsgi's python plugin; another number names a
    # plugin the server does not have, so the request is refused: the value
    # went through.
    u = app()
    srv = site(make_server, f"uwsgi_pass {u.address}; uwsgi_modifier1 0; uwsgi_modifier2 0;")
    assert harness.http(srv.port, "/x").status == 200
    srv2 = site(make_server, f"uwsgi_pass {u.address}; uwsgi_modifier1 250;")
    assert harness.http(srv2.port, "/x").status == 502


def test_100mb_upload_streams(make_server, app, monkeypatch):
    # A sanitizer build holds freed memory in quarantine (256 MB by default),
    # which would look like growth; keep it small for this measure.
    monkeypatch.setenv("ASAN_OPTIONS", os.environ.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=4")
    u = app()
    srv = site(make_server, f"uwsgi_pass {u.address}; uwsgi_request_buffering off;")
    assert harness.http(srv.port, "/x").status == 200
    before = server_rss_kb(srv)
    size = 100 * 1024 * 1024
    md5 = hashlib.md5()
    block = bytes(range(256)) * 4096
    with harness.Conn(srv.port, timeout=60) as c:
        c.send(f"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: {size}\r\nConnection: close\r\n\r\n")
        sent = 0
        while sent < size:
            c.sock.sendall(block)
            md5.update(block)
            sent += len(block)
        r = c.read_response("POST")
    assert r.status == 200 and json.loads(r.body) == {"length": size, "md5": md5.hexdigest()}
    assert server_peak_rss_kb(srv) - before < 40 * 1024


def test_dead_app_is_502_and_slow_app_is_504(make_server, app, tmp_path):
    u = app()
    lease = harness.PortLease()
    try:
        srv = site(make_server, f"uwsgi_pass {u.address}; uwsgi_read_timeout 1s;",
                   extra_http="")
        started = time.monotonic()
        assert harness.http(srv.port, "/slow").status == 504
        assert time.monotonic() - started < 3.5
        srv2 = site(make_server, f"uwsgi_pass 127.0.0.1:{lease.port};")
        assert harness.http(srv2.port, "/x").status == 502
        assert "Connection refused" in srv2.error_log_text()
    finally:
        lease.release()
