"""What the proxy takes from the upstream's response beyond the head it
passes on: $upstream_response_length, the X-Accel-* fields (and
proxy_ignore_headers, which turns them off), and the proxy directives that
change what goes upstream or comes back (proxy_method, proxy_cookie_*).
Each request is answered by a scripted upstream (`h=Name:Value` adds a
field, `n=BYTES` sets the body's size); the same tests pass against nginx."""

import pytest

import harness

CONF = r"""
    log_format lengths "$request_uri len=$upstream_response_length";
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        root @PREFIX@/www;
        access_log @PREFIX@/logs/lengths.log lengths;

        location /up/ { proxy_pass http://127.0.0.1:@BACKEND@/; }
        location /ignored/ {
            proxy_pass http://127.0.0.1:@BACKEND@/;
            proxy_ignore_headers X-Accel-Redirect X-Accel-Limit-Rate X-Accel-Charset Expires Cache-Control;
        }
        location /files/ { internal; }
        location @named { return 200 "named location, uri $uri, args $args, method $request_method\n"; }
        location /show/ { internal; return 200 "shown $uri args=$args method=$request_method\n"; }
        # koi8-r becomes a charset the config knows (nginx's list is config-wide).
        location /known-charset/ { source_charset koi8-r; }
        location /post/ { proxy_pass http://127.0.0.1:@BACKEND@/; proxy_method POST; }
        location /method/ { proxy_pass http://127.0.0.1:@BACKEND@/; proxy_method $http_x_method; }
    }
"""


@pytest.fixture
def srv(make_server, upstream):
    s = make_server(harness.base_conf(CONF.replace("@BACKEND@", str(upstream.port))), start=False)
    (s.prefix / "www" / "files").mkdir(parents=True)
    (s.prefix / "www" / "files" / "secret.txt").write_text("the secret file\n")
    s.start()
    return s


def log_lines(srv, n):
    path = srv.prefix / "logs" / "lengths.log"
    return harness.wait_until(lambda: path.exists() and len(path.read_text().splitlines()) >= n and
                              path.read_text().splitlines(), 10, what="access log lines")


def test_upstream_response_length_is_the_body_size(srv):
    r = harness.http(srv.port, "/up/?n=1234")
    assert r.status == 200 and len(r.body) == 1234
    assert log_lines(srv, 1)[0] == "/up/?n=1234 len=1234"


def test_ignored_headers_are_still_hidden(srv):
    r = harness.http(srv.port, "/ignored/?n=10&h=X-Accel-Redirect:/files/secret.txt&h=X-Accel-Charset:koi8-r")
    assert r.status == 200 and len(r.body) == 10
    assert r.header("X-Accel-Redirect") is None and r.header("X-Accel-Charset") is None
    assert "charset" not in r.header("Content-Type", "")


def test_proxy_method_replaces_the_clients_method(srv, upstream):
    r = harness.http(srv.port, "/post/?n=3")
    assert r.status == 200
    assert upstream.requests[-1][0] == "POST"


def test_proxy_method_takes_variables(srv, upstream):
    r = harness.http(srv.port, "/method/?n=3", headers={"X-Method": "PURGE"})
    assert r.status == 200
    assert upstream.requests[-1][0] == "PURGE"


def test_accel_redirect_serves_the_internal_file(srv):
    r = harness.http(srv.port, "/up/?n=5000&h=X-Accel-Redirect:/files/secret.txt"
                     "&h=Content-Disposition:attachment;%20filename=s.txt&h=X-Other:dropped")
    assert r.status == 200
    assert r.body == b"the secret file\n"
    assert r.header("Content-Disposition") == "attachment; filename=s.txt"
    assert r.header("Content-Length") == str(len(b"the secret file\n"))
    assert r.header("X-Accel-Redirect") is None and r.header("X-Other") is None


def test_accel_redirect_keeps_the_upstreams_content_type_and_cookies(srv):
    r = harness.http(srv.port, "/up/?n=10&h=X-Accel-Redirect:/files/secret.txt&h=Content-Type:application/x-secret"
                     "&a=Set-Cookie:a=1&a=Set-Cookie:b=2")
    assert r.status == 200 and r.body == b"the secret file\n"
    assert r.header("Content-Type") == "application/x-secret"
    assert r.header_all("Set-Cookie") == ["a=1", "b=2"]


def test_accel_redirect_turns_the_method_into_get_and_takes_its_own_args(srv):
    r = harness.http(srv.port, "/up/?n=10&h=X-Accel-Redirect:/show/a%2520b?k=v", method="POST", body="data")
    assert r.status == 200
    assert r.body == b"shown /show/a b args=k=v method=GET\n"
    r = harness.http(srv.port, "/up/?n=10&h=X-Accel-Redirect:/show/y")
    assert r.body == b"shown /show/y args= method=GET\n"


def test_accel_redirect_to_a_named_location_keeps_uri_and_method(srv):
    r = harness.http(srv.port, "/up/?n=10&h=X-Accel-Redirect:@named", method="POST", body="data")
    assert r.status == 200
    assert r.body == b"named location, uri /up/, args n=10&h=X-Accel-Redirect:@named, method POST\n"


def test_accel_redirect_to_a_missing_file_is_the_targets_404(srv):
    r = harness.http(srv.port, "/up/?n=10&h=X-Accel-Redirect:/files/none.txt&a=Set-Cookie:a=1"
                     "&h=Content-Type:application/x-secret")
    assert r.status == 404
    assert r.header("Content-Type") == "text/html" and b"404 Not Found" in r.body
    assert r.header("Set-Cookie") == "a=1"  # as nginx: the carried fields stay on the error page


def test_accel_redirect_refuses_an_unsafe_uri(srv):
    r = harness.http(srv.port, "/up/?n=10&h=X-Accel-Redirect:/files/../files/secret.txt")
    assert r.status == 404
    assert b"the secret" not in r.body
    harness.wait_until(lambda: "unsafe URI" in (srv.prefix / "logs" / "error.log").read_text(), 10,
                       what="the unsafe URI log line")


def test_ignored_accel_redirect_passes_the_upstream_answer(srv):
    r = harness.http(srv.port, "/ignored/?n=10&h=X-Accel-Redirect:/files/secret.txt")
    assert r.status == 200 and len(r.body) == 10


def test_accel_charset_sets_a_known_charset_whatever_the_type(srv):
    r = harness.http(srv.port, "/up/?n=10&h=X-Accel-Charset:koi8-r")
    assert r.status == 200 and r.header("Content-Type") == "text/html; charset=koi8-r"
    assert r.header("X-Accel-Charset") is None
    r = harness.http(srv.port, "/up/?n=10&h=X-Accel-Charset:KOI8-R&h=Content-Type:application/octet-stream")
    assert r.header("Content-Type") == "application/octet-stream; charset=KOI8-R"


def test_accel_charset_leaves_a_charset_the_upstream_named(srv):
    r = harness.http(srv.port, "/up/?n=10&h=X-Accel-Charset:koi8-r&h=Content-Type:text/html;%20charset=utf-8")
    assert r.header("Content-Type") == "text/html; charset=utf-8"


def test_accel_charset_unknown_to_the_config_is_logged_and_not_used(srv):
    r = harness.http(srv.port, "/up/?n=10&h=X-Accel-Charset:windows-1251")
    assert r.status == 200 and r.header("Content-Type") == "text/html"
    harness.wait_until(lambda: 'unknown charset "windows-1251" to override' in
                       (srv.prefix / "logs" / "error.log").read_text(), 10, what="the unknown charset line")


def test_accel_buffering_is_hidden_and_the_body_intact(srv):
    for value in ("no", "yes"):
        r = harness.http(srv.port, f"/up/?n=300000&chunked=1&h=X-Accel-Buffering:{value}")
        assert r.status == 200 and len(r.body) == 300000
        assert r.header("X-Accel-Buffering") is None


def test_accel_charset_reaches_the_accel_redirect_target(srv):
    r = harness.http(srv.port, "/up/?n=10&h=X-Accel-Redirect:/files/secret.txt&h=X-Accel-Charset:koi8-r")
    assert r.status == 200 and r.body == b"the secret file\n"
    # The upstream's own Content-Type is carried over, with the charset added.
    assert r.header("Content-Type") == "text/html; charset=koi8-r"
    r = harness.http(srv.port, "/up/?n=10&h=X-Accel-Redirect:/files/secret.txt")
    assert r.header("Content-Type") == "text/html"
