"""Last-Modified goes out only with a 200, 206 or 304 that torii made, as
nginx's header filter has it: an error_page file sent with the error's
status (the corpus' sites' 404 pages) carries its ETag but no
Last-Modified; with `=200` it has both. An upstream's Last-Modified is
passed on whatever the status. Every expectation is nginx's: the file
passes with TORII_BIN=/usr/sbin/nginx (1.22)."""

import urllib.parse

import pytest

import harness
from scripted_upstream import ScriptedUpstream


@pytest.fixture
def site(make_server):
    up = ScriptedUpstream()
    s = make_server(harness.base_conf(http=f"""
    server {{
        listen 127.0.0.1:@PORT@;
        root @PREFIX@/www;
        error_page 404 /404.html;
        location /ok/ {{ error_page 404 =200 /404.html; }}
        location /up/ {{ proxy_pass http://127.0.0.1:{up.port}/; proxy_intercept_errors off; }}
    }}
"""), start=False)
    (s.prefix / "www").mkdir()
    (s.prefix / "www" / "404.html").write_text("not here\n")
    yield s.start()
    up.stop()


def test_a_404_page_has_its_etag_but_no_last_modified(site):
    r = harness.http(site.port, "/missing")
    assert (r.status, r.body) == (404, b"not here\n")
    assert r.header("ETag") is not None
    assert r.header("Last-Modified") is None


def test_with_eq200_and_directly_the_page_has_last_modified(site):
    for path in ("/ok/missing", "/404.html"):
        r = harness.http(site.port, path)
        assert (r.status, r.body) == (200, b"not here\n"), path
        assert r.header("Last-Modified") is not None and r.header("ETag") is not None


def test_an_upstream_last_modified_passes_with_any_status(site):
    query = urllib.parse.urlencode([("status", "404"), ("n", "10"),
                                    ("h", "Last-Modified:Wed, 21 Oct 2015 07:28:00 GMT")])
    r = harness.http(site.port, "/up/x?" + query)
    assert r.status == 404
    assert r.header("Last-Modified") == "Wed, 21 Oct 2015 07:28:00 GMT"
