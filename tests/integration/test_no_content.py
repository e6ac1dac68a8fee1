"""`return 204` carries no Content-Type and no Content-Length (Discourse's
`location /favicon.ico { return 204; }` in tests/corpus/, where the URI's
extension would otherwise name a type); add_header still adds its fields.
An upstream's 204 keeps the upstream's Content-Type and Last-Modified, as
nginx's HTTP/1.1 output does (it strips them only from a 204 it made).
Every expectation is nginx's: the file passes with
TORII_BIN=/usr/sbin/nginx (1.22)."""

import urllib.parse

import pytest

import harness


@pytest.fixture
def site(make_server, upstream):
    return make_server(harness.base_conf(http=f"""
    server {{
        listen 127.0.0.1:@PORT@;
        root @PREFIX@;
        add_header X-Site torii-test;
        location = /favicon.ico {{ return 204; }}
        location = /empty.json {{ return 204 "never sent"; }}
        location /up/ {{ proxy_pass http://127.0.0.1:{upstream.port}/; }}
    }}
"""))


def assert_bare_204(r):
    assert r.status == 204, r
    assert r.body == b""
    for name in ("Content-Type", "Content-Length", "Last-Modified", "Transfer-Encoding"):
        assert r.header(name) is None, (name, r)
    assert r.header("X-Site") == "torii-test"


def test_return_204_has_no_type_even_where_the_extension_names_one(site):
    assert_bare_204(harness.http(site.port, "/favicon.ico"))
    assert_bare_204(harness.http(site.port, "/empty.json"))
    head = harness.http(site.port, "/favicon.ico", method="HEAD")
    assert_bare_204(head)


def test_an_upstream_204_keeps_its_fields_and_no_body(site, upstream):
    query = urllib.parse.urlencode([("status", "204"), ("n", "0"), ("h", "Content-Type:application/json"),
                                    ("h", "Last-Modified:Wed, 21 Oct 2015 07:28:00 GMT"), ("h", "X-Up:kept")])
    with harness.Conn(site.port) as c:
        r = c.request("GET", "/up/thing?" + query)
        assert (r.status, r.body) == (204, b""), r
        assert r.header("Content-Type") == "application/json"
        assert r.header("Last-Modified") == "Wed, 21 Oct 2015 07:28:00 GMT"
        # (nginx passes the upstream's "Content-Length: 0" on; torii leaves the
        # framing field out of a 204 as RFC 9110 8.6 asks.)
        assert r.header("Transfer-Encoding") is None
        assert (r.header("X-Up"), r.header("X-Site")) == ("kept", "torii-test")
        # The keep-alive connection reads the next response right after it.
        assert c.request("GET", "/up/ok?n=5").body == b"<html"
