"""scgi_pass to uwsgi speaking SCGI (--scgi-socket) with its python3 plugin
running a WSGI app, started by each test: Debian's scgi_params unchanged,
GET, POST bodies (CONTENT_LENGTH first, as the protocol asks), status and
headers from the app, scgi_hide_header and scgi_intercept_errors,
scgi_cache, 502 for a
dead application, and bad values refused with nginx's words. The same tests
pass against nginx (TORII_BIN=/usr/sbin/nginx)."""

import json

import pytest

import harness
from gateway_apps import Uwsgi, copy_debian_params

APP = r'''
import json
import time

KEYS = ["REQUEST_METHOD", "REQUEST_URI", "PATH_INFO", "QUERY_STRING", "CONTENT_LENGTH", "CONTENT_TYPE",
        "SERVER_PROTOCOL", "REQUEST_SCHEME", "REMOTE_ADDR", "SERVER_PORT", "HTTP_HOST", "SCGI",
        "HTTP_X_CUSTOM", "DOCUMENT_ROOT", "EXTRA", "HTTP_IF_MODIFIED_SINCE", "HTTP_IF_NONE_MATCH", "HTTP_RANGE"]


def application(environ, start_response):
    path = environ.get("DOCUMENT_URI", "")  # scgi_params has no PATH_INFO
    if path == "/created":
        start_response("201 Created", [("X-App", "made"), ("X-Secret", "s"), ("Set-Cookie", "a=1")])
        return [b"created"]
    if path == "/missing":
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"app's own 404"]
    if path == "/stamp":
        start_response("200 OK", [("Content-Type", "text/plain"), ("Cache-Control", "max-age=60")])
        return [str(time.time_ns()).encode()]
    if path == "/extra":  # more than its Content-Length
        start_response("200 OK", [("Content-Type", "text/html"), ("Content-Length", "8")])
        return [b"SEE-THIS", b"-BUT-NOT-THIS\n"]
    if path == "/short":  # less than its Content-Length
        start_response("200 OK", [("Content-Type", "text/html"), ("Content-Length", "100")])
        return [b"TOO-SHORT\n"]
    if path == "/big":
        start_response("200 OK", [("Content-Type", "text/plain")])
        return (b"%07d\n" % i for i in range(100000))
    env = {k: environ[k] for k in KEYS if k in environ}
    env["wsgi_body"] = environ["wsgi.input"].read().decode() if environ.get("CONTENT_LENGTH") else ""
    start_response("200 OK", [("Content-Type", "application/json")])
    return [json.dumps(env).encode()]
'''


@pytest.fixture
def app(tmp_path):
    u = Uwsgi(tmp_path / "scgi-app", APP, socket="--scgi-socket")
    yield u
    u.stop()


def site(make_server, location_body, extra_http=""):
    server = make_server(harness.base_conf(http=f"""
    {extra_http}
    server {{
        listen 127.0.0.1:@PORT@;
        root @PREFIX@/html;
        location / {{
            include scgi_params;
            {location_body}
        }}
        location = /err.html {{ }}
    }}""", error_level="info"), start=False)
    copy_debian_params(server.prefix)
    (server.prefix / "html").mkdir(exist_ok=True)
    server.start()
    return server


def test_get_with_debian_params(make_server, app):
    srv = site(make_server, f"scgi_pass {app.address};")
    r = harness.http(srv.port, "/some/path?a=1&b=2", headers={"X-Custom": "yes"})
    assert r.status == 200, r
    env = json.loads(r.body)
    assert env["REQUEST_METHOD"] == "GET"
    assert env["REQUEST_URI"] == "/some/path?a=1&b=2"
    assert env["QUERY_STRING"] == "a=1&b=2"
    assert env["CONTENT_LENGTH"] == "0"
    assert env["SCGI"] == "1"
    assert env["HTTP_HOST"] == "localhost"
    assert env["HTTP_X_CUSTOM"] == "yes"
    assert env["REMOTE_ADDR"] == "127.0.0.1"
    assert env["SERVER_PORT"] == str(srv.port)


def test_post_body_and_extra_param(make_server, app):
    srv = site(make_server, f"scgi_param EXTRA from-config; scgi_pass {app.address};")
    body = "x" * 100000
    r = harness.http(srv.port, "/post", method="POST", body=body.encode(),
                     headers={"Content-Type": "text/plain"})
    assert r.status == 200, r
    env = json.loads(r.body)
    assert env["CONTENT_LENGTH"] == "100000"
    assert env["CONTENT_TYPE"] == "text/plain"
    assert env["wsgi_body"] == body
    assert env["EXTRA"] == "from-config"


def test_status_headers_and_a_long_body(make_server, app):
    srv = site(make_server, f"scgi_pass {app.address}; scgi_hide_header X-Secret;")
    r = harness.http(srv.port, "/created")
    assert r.status == 201 and r.body == b"created"
    assert r.header("X-App") == "made" and r.header("Set-Cookie") == "a=1"
    assert r.header("X-Secret") is None
    r = harness.http(srv.port, "/big")
    assert r.status == 200 and len(r.body) == 800000 and r.body.endswith(b"0099999\n")


def test_scgi_store(make_server, app):
    # The store code is the proxy's: a complete 200 is written to root + URI
    # through scgi_temp_path; the app's 404 is not.
    srv = site(make_server, f"scgi_pass {app.address}; scgi_store on; scgi_store_access user:rw all:r; "
                            "scgi_temp_path @PREFIX@/scgi_tmp;")
    r = harness.http(srv.port, "/big")
    assert r.status == 200 and len(r.body) == 800000
    stored = srv.prefix / "html" / "big"
    assert stored.read_bytes() == r.body
    assert stored.stat().st_mode & 0o777 == 0o604
    r = harness.http(srv.port, "/missing")
    assert r.status == 404
    assert not (srv.prefix / "html" / "missing").exists()
    assert list((srv.prefix / "scgi_tmp").iterdir()) == []


def test_intercept_errors(make_server, app):
    srv = site(make_server, f"scgi_pass {app.address}; scgi_intercept_errors on; error_page 404 /err.html;")
    (srv.prefix / "html" / "err.html").write_text("intercepted")
    r = harness.http(srv.port, "/missing")
    assert r.status == 404 and r.body == b"intercepted"
    srv2 = site(make_server, f"scgi_pass {app.address};")
    r = harness.http(srv2.port, "/missing")
    assert r.status == 404 and r.body == b"app's own 404"


def test_scgi_cache(make_server, app):
    srv = site(make_server, f"scgi_pass {app.address}; scgi_cache one; scgi_cache_key $uri;"
                            " add_header X-Cache $upstream_cache_status;",
               extra_http="scgi_cache_path @PREFIX@/cache keys_zone=one:1m;")
    first = harness.http(srv.port, "/stamp")
    assert first.status == 200 and first.header("X-Cache") == "MISS"
    second = harness.wait_until(lambda: (lambda r: r if r.header("X-Cache") == "HIT" else None)(
        harness.http(srv.port, "/stamp")), 5, what="a cache hit")
    assert second.body == first.body


def test_cache_keeps_the_clients_conditionals_and_range(make_server, app):
    conditionals = {"If-Modified-Since": "Wed, 01 Jan 2020 00:00:00 GMT", "If-None-Match": '"x"',
                    "Range": "bytes=0-1", "X-Custom": "kept"}
    # (No scgi_cache_key: every request has the empty key, as nginx's; this
    # used to end the server.)
    cached = site(make_server, f"scgi_pass {app.address}; scgi_cache one;",
                  extra_http="scgi_cache_path @PREFIX@/cache keys_zone=one:1m;")
    env = json.loads(harness.http(cached.port, "/env", headers=conditionals).body)
    assert env["HTTP_X_CUSTOM"] == "kept"
    assert not {"HTTP_IF_MODIFIED_SINCE", "HTTP_IF_NONE_MATCH", "HTTP_RANGE"} & set(env)
    plain = site(make_server, f"scgi_pass {app.address};")
    env = json.loads(harness.http(plain.port, "/env", headers=conditionals).body)
    assert env["HTTP_IF_NONE_MATCH"] == '"x"' and env["HTTP_RANGE"] == "bytes=0-1"


def test_the_declared_length_is_held_to(make_server, app):
    srv = site(make_server, f"scgi_pass {app.address}; add_after_body /err.html;")
    (srv.prefix / "html").mkdir(exist_ok=True)
    (srv.prefix / "html" / "err.html").write_text(":after\n")
    with harness.Conn(srv.port) as c:  # keep-alive: a byte too many would start the next response
        c.send(harness.build_request("GET", "/extra", headers=[("Connection", "keep-alive")]))
        r = c.read_response()
        assert r.status == 200 and r.body == b"SEE-THIS:after\n"
        c.send(harness.build_request("GET", "/created"))
        assert c.read_response().status == 201
    # Short of its length: cut, not taken as whole (no add_after_body).
    raw = harness.raw_until_close(srv.port, b"GET /short HTTP/1.0\r\nHost: x\r\n\r\n")
    assert b"TOO-SHORT\n" in raw and b":after" not in raw
    harness.wait_until(lambda: "upstream prematurely closed connection" in srv.error_log.read_text(), 10,
                       what="the error")


def test_dead_application_is_502(make_server):
    lease = harness.PortLease()
    try:
        srv = site(make_server, f"scgi_pass 127.0.0.1:{lease.port}; scgi_connect_timeout 5s;")
        assert harness.http(srv.port, "/").status == 502
    finally:
        lease.release()


@pytest.mark.parametrize("line,message", [
    ("scgi_buffering maybe;", 'invalid value "maybe" in "scgi_buffering" directive'),
    ("scgi_next_upstream http_502;", 'invalid value "http_502"'),
    ("scgi_param A;", 'invalid number of arguments in "scgi_param" directive'),
    ("scgi_keep_conn on;", '"scgi_keep_conn"'),
])
def test_bad_values(tmp_path, line, message):
    (tmp_path / "logs").mkdir()
    (tmp_path / "t.conf").write_text(f"events {{}} http {{ {line} }}")
    r = harness.cli(["-t", "-c", str(tmp_path / "t.conf")], prefix=tmp_path)
    assert r.returncode != 0
    assert message in r.stdout + r.stderr, r.stdout + r.stderr
