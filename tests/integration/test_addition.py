"""The addition module as nginx's ngx_http_addition_module: add_before_body
and add_after_body around a 200 of addition_types (a static file, a
proxied page), the added responses from a file location and from a
`return`, nothing added to a 404 or to another type, and the head nginx
leaves (no length, a weak ETag). Also runs against nginx
(TORII_BIN=/usr/sbin/nginx)."""

import pytest

import harness


@pytest.fixture
def srv(make_server, tmp_path):
    html = tmp_path / "html"
    (html / "parts").mkdir(parents=True)
    (html / "page.html").write_text("<p>body</p>")
    (html / "page.txt").write_text("text body")
    (html / "parts" / "header.html").write_text("<header>")
    conf = harness.base_conf(http=f"""
    server {{
        listen 127.0.0.1:@PORT@;
        root {html};
        location / {{
            add_before_body /parts/header.html;
            add_after_body /footer;
        }}
        location /typed/ {{
            alias {html}/;
            add_after_body /footer;
            addition_types text/plain;
        }}
        location /parts/ {{ }}
        location = /footer {{ return 200 "<footer>"; }}
        location /up/ {{
            proxy_pass http://127.0.0.1:@PORT@/;
            add_after_body /footer;
        }}
    }}
""")
    return make_server(conf)


def test_before_and_after_a_static_page(srv):
    r = harness.http(srv.port, "/page.html")
    assert r.status == 200
    assert r.body == b"<header><p>body</p><footer>"
    assert r.header("Content-Length") is None
    assert r.header("ETag", "").startswith('W/"')


def test_types(srv):
    assert harness.http(srv.port, "/page.txt").body == b"text body"
    assert harness.http(srv.port, "/typed/page.txt").body == b"text body<footer>"
    # text/html stays, as in nginx ("in addition to text/html").
    assert harness.http(srv.port, "/typed/page.html").body == b"<p>body</p><footer>"


def test_not_added_to_an_error(srv):
    r = harness.http(srv.port, "/nothing.html")
    assert r.status == 404
    assert b"<header>" not in r.body and b"<footer>" not in r.body


def test_around_a_proxied_page(srv):
    # The proxied answer already has its header and footer; this location
    # adds its own footer after them.
    assert harness.http(srv.port, "/up/page.html").body == b"<header><p>body</p><footer><footer>"
