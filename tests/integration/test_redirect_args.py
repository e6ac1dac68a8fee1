"""Which internal redirects keep the request's arguments, as nginx: the
last entry of try_files and an error_page URI bring their own arguments,
none when they have no "?" (so guides write `/index.php?$args`, and a
FreshRSS or osTicket site that writes `/index.php` alone gets no query
string); index and a named location keep the request's. Every expectation
is nginx's: the file passes with TORII_BIN=/usr/sbin/nginx (1.22)."""

import pytest

import harness


@pytest.fixture
def site(make_server):
    s = make_server(harness.base_conf(http="""
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        root @PREFIX@/www;
        index index.php;
        location ~ \\.php$ { return 200 "uri=$uri args=$args is_args=$is_args request_uri=$request_uri\\n"; }
        location /bare/ { try_files $uri /index.php; }
        location /relative/ { try_files $uri index.php; }
        location /own/ { try_files $uri /index.php?$args&via=try; }
        location /named/ { try_files $uri @app; }
        location @app { return 200 "named args=$args\\n"; }
        location /err/ { error_page 404 /index.php; }
        location /errargs/ { error_page 404 /index.php?from=error; }
        location /dir/ { }
    }
"""), start=False)
    (s.prefix / "www" / "dir").mkdir(parents=True)
    (s.prefix / "www" / "dir" / "index.php").write_text("")
    (s.prefix / "www" / "index.php").write_text("")
    return s.start()


def body(site, target):
    r = harness.http(site.port, target)
    assert r.status == 200, r
    return r.text()


def test_a_try_files_fallback_without_arguments_drops_the_requests(site):
    assert body(site, "/bare/x?c=feed") == "uri=/index.php args= is_args= request_uri=/bare/x?c=feed\n"


def test_a_relative_fallback_too(site):
    assert body(site, "/relative/x?topic=1") == "uri=index.php args= is_args= request_uri=/relative/x?topic=1\n"


def test_a_fallback_with_its_own_arguments_has_those(site):
    assert body(site, "/own/x?c=feed") == "uri=/index.php args=c=feed&via=try is_args=? request_uri=/own/x?c=feed\n"


def test_a_named_location_keeps_the_requests_arguments(site):
    assert body(site, "/named/x?c=feed") == "named args=c=feed\n"


def test_an_error_page_uri_brings_its_own_arguments(site):
    r = harness.http(site.port, "/err/missing?c=feed")
    assert r.status == 404 and r.text() == "uri=/index.php args= is_args= request_uri=/err/missing?c=feed\n"
    r = harness.http(site.port, "/errargs/missing?c=feed")
    assert r.status == 404 and r.text() == "uri=/index.php args=from=error is_args=? request_uri=/errargs/missing?c=feed\n"


def test_index_keeps_the_requests_arguments(site):
    assert body(site, "/dir/?c=feed") == "uri=/dir/index.php args=c=feed is_args=? request_uri=/dir/?c=feed\n"
