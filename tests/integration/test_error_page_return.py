"""What status a response carries when an error_page target answers with
`return` (nginx's rewrite module and its special-response handler): a bare
`return CODE` (an error or a redirect) is a new error and its code is the
status, whatever the error_page line said; a `return` with a body keeps the
status the error_page line chose (the original error, `=CODE`, or with a
bare `=` the returned code). Every expectation is nginx's: the file passes
with TORII_BIN=/usr/sbin/nginx."""

import pytest

from harness import base_conf, http, wait_until

CONF = base_conf(http=r"""
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        root @PREFIX@/www;

        location /bare/ { error_page 404 /t418; }
        location /bare-eq200/ { error_page 404 =200 /t418; }
        location /bare-eq/ { error_page 404 = /t418; }
        location /bare-named/ { error_page 404 @n418; }
        location /bare-500/ { error_page 404 =200 /t500; }

        location /text/ { error_page 404 /text; }
        location /text-eq200/ { error_page 404 =200 /text; }
        location /text-eq201/ { error_page 404 =201 /text; }
        location /text-eq/ { error_page 404 = /text; }
        location /text-500/ { error_page 404 /text500; }
        location /text-500-eq/ { error_page 404 = /text500; }
        location /empty-204/ { error_page 404 /t204; }

        location /url/ { error_page 404 /url; }
        location /url-eq200/ { error_page 404 =200 /url; }
        location /url-301/ { error_page 404 /url301; }

        location /missing-eq200/ { error_page 404 =200 /no-such-page.html; }

        location = /t418 { return 418; }
        location = /t500 { return 500; }
        location @n418 { return 418; }
        location = /text { return 200 "text body\n"; }
        location = /text500 { return 500 "text 500\n"; }
        location = /t204 { return 204; }
        location = /url { return 302 http://example.com/moved; }
        location = /url301 { return 301 /elsewhere; }
    }
""")


@pytest.fixture
def server(make_server):
    srv = make_server(CONF, start=False)
    (srv.prefix / "www").mkdir()
    return srv.start()


@pytest.mark.parametrize("path, status", [
    ("/bare/x", 418),          # the defect: the 418 went out as a 404
    ("/bare-eq200/x", 418),    # =200 does not outrank a new error
    ("/bare-eq/x", 418),
    ("/bare-named/x", 418),
    ("/bare-500/x", 500),
])
def test_bare_return_in_error_page_sets_the_status(server, path, status):
    r = http(server.port, path)
    assert r.status == status
    if status == 418:
        # nginx has no built-in page for 418: an empty body, no type.
        assert r.body == b""
        assert r.header("Content-Type") is None

    else:
        assert r.header("Content-Type") == "text/html"
        assert f"<title>{status} ".encode() in r.body


@pytest.mark.parametrize("code, has_page", [
    (400, True), (416, True), (417, False), (418, False), (421, True), (422, False),
    (429, True), (500, True), (505, True), (506, False), (507, True), (599, False),
])
def test_built_in_pages_are_nginx_s(make_server, code, has_page):
    # nginx writes its page for the codes it has one for; any other error
    # code gets an empty body with no Content-Type.
    srv = make_server(base_conf(http=f"""
        server {{
            listen 127.0.0.1:@PORT@;
            location / {{ return {code}; }}
        }}"""))
    r = http(srv.port, "/")
    assert r.status == code
    if has_page:
        assert r.header("Content-Type") == "text/html"
        assert f"<title>{code} ".encode() in r.body
    else:
        assert r.body == b""
        assert r.header("Content-Type") is None


@pytest.mark.parametrize("path, status, body", [
    ("/text/x", 404, b"text body\n"),
    ("/text-eq200/x", 200, b"text body\n"),
    ("/text-eq201/x", 201, b"text body\n"),
    ("/text-eq/x", 200, b"text body\n"),         # "=": the target's own status
    ("/text-500/x", 404, b"text 500\n"),         # a body: the error_page status stays
    ("/text-500-eq/x", 500, b"text 500\n"),
    ("/empty-204/x", 404, b""),                  # below 400 without text: a (empty) body
])
def test_return_with_body_keeps_the_error_page_status(server, path, status, body):
    r = http(server.port, path)
    assert r.status == status
    assert r.body == body


@pytest.mark.parametrize("path, status, location", [
    ("/url/x", 302, "http://example.com/moved"),
    ("/url-eq200/x", 302, "http://example.com/moved"),
    ("/url-301/x", 301, "/elsewhere"),
])
def test_redirect_in_error_page_target_is_the_status(server, path, status, location):
    r = http(server.port, path)
    assert r.status == status
    assert r.header("Location").endswith(location)


def test_missing_target_is_a_404_despite_eq_code(server):
    # The page itself is not found: a new error, so the =200 is gone.
    r = http(server.port, "/missing-eq200/x")
    assert r.status == 404
    assert b"<title>404 Not Found</title>" in r.body


@pytest.mark.parametrize("code", [300, 305])
def test_return_of_a_3xx_that_is_no_redirect_is_an_empty_response(make_server, code):
    # Below 400 and no redirect: `return` answers as with a text, an empty one.
    srv = make_server(base_conf(http=f"""
        server {{
            listen 127.0.0.1:@PORT@;
            location / {{ return {code}; }}
        }}"""))
    r = http(srv.port, "/")
    assert r.status == code
    assert r.body == b""
    assert r.header("Content-Type") == "application/octet-stream"


RECURSIVE = base_conf(http=r"""
    server {
        listen 127.0.0.1:@PORT@;
        root @PREFIX@/www;
        location /rec/ { recursive_error_pages on; error_page 404 /second/x; }
        location /norec/ { error_page 404 /second/x; }
        location /second/ { error_page 404 /final; }
        location /loop/ { recursive_error_pages on; error_page 404 /loop/again; }
        location = /final { return 200 "final page\n"; }
    }
""")


def test_recursive_error_pages(make_server):
    """recursive_error_pages on in the location where the error happened:
    its error_page target's own 404 goes to that target's error_page too;
    off (the default): the target's 404 is nginx's own page. A target that
    errs into itself stops at the internal redirect limit, with a 500."""
    srv = make_server(RECURSIVE, start=False)
    (srv.prefix / "www").mkdir(parents=True, exist_ok=True)
    srv.start()
    r = http(srv.port, "/rec/a")
    assert (r.status, r.body) == (404, b"final page\n")
    r = http(srv.port, "/norec/a")
    assert r.status == 404 and b"final page" not in r.body and b"404 Not Found" in r.body
    r = http(srv.port, "/loop/a")
    assert r.status == 500
    wait_until(lambda: 'rewrite or internal redirection cycle while internally redirecting to "/loop/again"'
               in srv.error_log_text(), 10, what="the cycle line")
