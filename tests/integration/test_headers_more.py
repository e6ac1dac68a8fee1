"""The headers-more directives (Debian's libnginx-mod-http-headers-more-filter):
more_set_headers, more_clear_headers, more_set_input_headers,
more_clear_input_headers. The same tests run against Debian's nginx with the
module loaded."""

import os

import pytest

import harness
from echo_backend import AppBackend, EchoBackend

MODULE = "/usr/lib/nginx/modules/ngx_http_headers_more_filter_module.so"

pytestmark = pytest.mark.skipif(harness.IS_NGINX and not os.path.exists(MODULE),
                                reason="needs libnginx-mod-http-headers-more-filter")


def conf(http):
    main = f"load_module {MODULE};" if harness.IS_NGINX else ""
    return harness.base_conf(http, main=main)


@pytest.fixture
def app():
    backend = AppBackend(lambda request: (200, [("Content-Type", "text/html; charset=utf-8"),
                                                ("X-Powered-By", "PHP/8.2"), ("X-Hidden-One", "1"),
                                                ("X-Hidden-Two", "2"), ("Cache-Control", "no-cache"),
                                                ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")], b"app\n"))
    yield backend
    backend.stop()


@pytest.fixture
def echo():
    backend = EchoBackend("e")
    yield backend
    backend.stop()


def test_server_field_set_and_cleared(make_server):
    server = make_server(conf("""
        server {
            listen 127.0.0.1:@PORT@;
            more_set_headers 'Server: my-server';
            location / { return 200 "x"; }
            location /none { more_clear_headers Server Date; return 200 "x"; }
        }"""))
    r = harness.http(server.port, "/")
    assert r.header_all("Server") == ["my-server"]
    assert r.header("Date")
    r = harness.http(server.port, "/none")
    assert r.status == 200 and r.header("Server") is None and r.header("Date") is None


def test_rules_of_every_level_run_in_order(make_server):
    """Unlike add_header, a location's rules join the server's and http's
    (those first); later rules win over earlier ones for the same field."""
    server = make_server(conf("""
        more_set_headers 'X-Level: http' 'X-Http: 1';
        server {
            listen 127.0.0.1:@PORT@;
            more_set_headers 'X-Level: server' 'X-Server: $uri';
            location / {
                more_set_headers 'X-Location: 3';
                return 200 "x";
            }
            location /top { return 200 "x"; }
        }"""))
    r = harness.http(server.port, "/page")
    assert r.header_all("X-Level") == ["server"]
    assert (r.header("X-Http"), r.header("X-Server"), r.header("X-Location")) == ("1", "/page", "3")
    r = harness.http(server.port, "/top")
    assert r.header("X-Server") == "/top" and r.header("X-Location") is None


def test_status_and_type_conditions(make_server, tmp_path):
    server = make_server(conf("""
        server {
            listen 127.0.0.1:@PORT@;
            more_set_headers -s '404 500' 'X-Missing: yes';
            more_set_headers -s 200 -t 'text/plain text/css' 'X-Text: yes';
            location /text { default_type text/plain; return 200 "x"; }
            location /html { default_type text/html; return 200 "x"; }
            location /gone { return 404; }
        }"""))
    r = harness.http(server.port, "/text")
    assert r.header("X-Text") == "yes" and r.header("X-Missing") is None
    r = harness.http(server.port, "/html")
    assert r.header("X-Text") is None and r.header("X-Missing") is None
    r = harness.http(server.port, "/gone")
    assert r.status == 404 and r.header("X-Missing") == "yes" and r.header("X-Text") is None


def test_proxied_fields_replaced_cleared_and_appended(make_server, app):
    server = make_server(conf(f"""
        server {{
            listen 127.0.0.1:@PORT@;
            location / {{
                proxy_pass http://127.0.0.1:{app.port};
                more_clear_headers X-Powered-By 'X-Hidden-*';
                more_set_headers 'Cache-Control: public, max-age=60' 'Set-Cookie: only=1';
                more_set_headers -t 'text/html' 'X-Html: yes';
                more_set_headers 'Content-Type: text/x-app';
            }}
        }}"""))
    r = harness.http(server.port, "/")
    assert r.status == 200 and r.body == b"app\n"
    names = [k.lower() for k, _ in r.headers]
    assert "x-powered-by" not in names and not any(n.startswith("x-hidden-") for n in names)
    assert r.header_all("Cache-Control") == ["public, max-age=60"]
    assert r.header_all("Set-Cookie") == ["only=1"]
    assert r.header("X-Html") == "yes"  # the type without its charset
    # The upstream's charset stays (the module replaces the type, not nginx's charset).
    assert r.header_all("Content-Type") == ["text/x-app; charset=utf-8"]


def test_append(make_server, nginx_only_skip):
    """-a (the module's later versions; Debian 12's 0.34 has it not): a
    field beside those of the same name."""
    server = make_server(conf("""
        server {
            listen 127.0.0.1:@PORT@;
            location / { add_header X-Added zero; more_set_headers -a 'X-Added: one' 'X-Added: two'; return 200; }
        }"""))
    assert harness.http(server.port, "/").header_all("X-Added") == ["one", "two", "zero"]


def test_field_text_forms(make_server, app):
    """'Name value' (a space instead of the colon) sets, 'Name:' with no
    value clears."""
    server = make_server(conf(f"""
        server {{
            listen 127.0.0.1:@PORT@;
            location / {{
                proxy_pass http://127.0.0.1:{app.port};
                more_set_headers 'X-Spaced   by space' 'X-Powered-By:';
            }}
        }}"""))
    r = harness.http(server.port, "/")
    assert r.header("X-Spaced") == "by space"
    assert r.header("X-Powered-By") is None


def test_rules_run_before_charset_and_gzip(make_server):
    """The response rules run before the charset and gzip filters: a
    cleared Content-Type leaves both nothing to match, and clearing
    Content-Encoding does not stop gzip, which comes later."""
    server = make_server(conf("""
        charset utf-8;
        server {
            listen 127.0.0.1:@PORT@;
            gzip on; gzip_min_length 1; gzip_types text/plain;
            default_type text/plain;
            location / { more_clear_headers Content-Type; return 200 "hello hello hello\n"; }
            location /e { more_clear_headers Content-Encoding; return 200 "hello hello hello\n"; }
        }"""))
    r = harness.http(server.port, "/", headers={"Accept-Encoding": "gzip"})
    assert r.body == b"hello hello hello\n"
    assert r.header("Content-Type") is None and r.header("Content-Encoding") is None
    r = harness.http(server.port, "/e", headers={"Accept-Encoding": "gzip"})
    assert r.header("Content-Type") == "text/plain; charset=utf-8" and r.header("Content-Encoding") == "gzip"


def test_content_length_cleared(make_server):
    server = make_server(conf("""
        server {
            listen 127.0.0.1:@PORT@;
            location / { more_clear_headers Content-Length; return 200 "hello"; }
        }"""))
    r = harness.http(server.port, "/")
    assert r.status == 200 and r.body == b"hello"
    assert r.header("Content-Length") is None and r.header("Transfer-Encoding") == "chunked"


def test_input_fields(make_server, echo):
    """The request's fields as the proxy sends them and as $http_* and $host
    read them (the rules run at the end of the rewrite phase)."""
    server = make_server(conf(f"""
        server {{
            listen 127.0.0.1:@PORT@;
            location / {{
                more_set_input_headers 'X-Set: new' 'Host: changed.test';
                more_set_input_headers -r 'X-Only-If: replaced';
                more_clear_input_headers 'X-Drop-*' X-Gone;
                more_set_input_headers -t 'application/json' 'X-Json: yes';
                add_header X-Seen "$http_x_set|$host";
                proxy_set_header Host $host;
                proxy_pass http://127.0.0.1:{echo.port};
            }}
        }}"""))
    r = harness.http(server.port, "/a", headers={"X-Set": "old", "X-Drop-Me": "1", "X-Drop-Too": "2",
                                                 "X-Gone": "3", "X-Keep": "4", "Content-Type": "application/json"})
    assert r.status == 200
    body = r.text()
    assert "host=changed.test" in body and "x-set=new" in body and "x-keep=4" in body and "x-json=yes" in body
    assert "x-drop" not in body and "x-gone" not in body and "x-only-if" not in body
    assert r.header("X-Seen") == "new|changed.test"
    r = harness.http(server.port, "/b", headers={"X-Only-If": "old", "Content-Type": "text/plain"})
    assert "x-only-if=replaced" in r.text() and "x-json" not in r.text()


@pytest.mark.parametrize("line,message", [
    ("more_set_headers -s '40x' 'X-A: 1';", 'invalid digit "x" found in the status code list'),
    ("more_set_headers -z 'X-A: 1';", 'invalid option name: "-z"'),
    ("more_set_headers -s;", "option -s takes an argument."),
    ("more_clear_headers '*';", "wildcard key too short"),
])
def test_bad_lines(tmp_path, line, message):
    check_refused(tmp_path, line, message)


def test_no_append_to_a_builtin_field(tmp_path, nginx_only_skip):
    check_refused(tmp_path, "more_set_headers -a 'Server: x';", 'can not append builtin headers "Server"')


def check_refused(tmp_path, line, message):
    harness.check_test_fails(tmp_path, conf(f"server {{ listen 127.0.0.1:1; location / {{ {line} }} }}"), message)
