"""alias in regex and nested locations, as nginx. A nested location keeps
its parent's alias in place of the parent's prefix. try_files in a regex
location with an alias appends each entry to the alias (which alone names
the whole file there), and a file found that way is served with the entry
as its URI. Icinga Web 2's
generated config is this shape:
`location ~ ^/icingaweb2(.+)? { alias .../public; try_files $1 $uri $uri/
/icingaweb2/index.php$is_args$args; }`. Every expectation is nginx's: the
file passes with TORII_BIN=/usr/sbin/nginx (1.22)."""

import pytest

import harness


@pytest.fixture
def site(make_server):
    s = make_server(harness.base_conf(http="""
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        location ~ ^/app/index\\.php(.*)$ { return 200 "front uri=$uri args=$args\\n"; }
        location ~ ^/app(.+)? {
            alias @PREFIX@/public;
            add_header X-File $request_filename;
            try_files $1 $uri $uri/ /app/index.php$is_args$args;
        }
        location /api/ {
            index index.php;
            alias @PREFIX@/app/;
            location ~ \\.php$ {
                try_files $uri =404;
                default_type text/plain;
                add_header X-File $request_filename;
            }
        }
        location ~ ^/strict(.+)? {
            alias @PREFIX@/public;
            try_files $1 =418;
        }
    }
"""), start=False)
    (s.prefix / "public" / "css").mkdir(parents=True)
    (s.prefix / "public" / "css" / "x.css").write_text("body{}\n")
    (s.prefix / "app").mkdir()
    (s.prefix / "app" / "testing.php").write_text("testing\n")
    (s.prefix / "app" / "index.php").write_text("front\n")
    return s.start()


def test_an_entry_is_looked_up_under_the_alias(site):
    r = harness.http(site.port, "/app/css/x.css")
    assert r.status == 200, r
    assert r.text() == "body{}\n"
    assert r.header("Content-Type") == "text/css"
    assert r.header("X-File") == f"{site.prefix}/public/css/x.css"


def test_a_uri_no_entry_finds_goes_to_the_fallback(site):
    r = harness.http(site.port, "/app/dashboard?x=1")
    assert r.status == 200 and r.text() == "front uri=/app/index.php args=x=1\n", r
    r = harness.http(site.port, "/app/css?x=1")  # a directory: only "$uri/" tests for one, and it is not there
    assert r.status == 200 and r.text() == "front uri=/app/index.php args=x=1\n", r


def test_nothing_found_gives_the_last_entrys_code(site):
    assert harness.http(site.port, "/strict/css/x.css").status == 200
    assert harness.http(site.port, "/strict/nothing").status == 418


def test_a_nested_regex_location_inherits_the_prefix_alias(site):
    # nginx's wiki (Pitfalls, "$request_filename for SCRIPT_FILENAME"): in
    # `location ~ \.php$` inside `location /api/ { alias .../app/; }` the
    # alias still takes the place of "/api/".
    r = harness.http(site.port, "/api/testing.php")
    assert r.status == 200 and r.text() == "testing\n", r
    assert r.header("X-File") == f"{site.prefix}/app/testing.php"
    r = harness.http(site.port, "/api/")
    assert r.status == 200 and r.text() == "front\n", r
    assert r.header("X-File") == f"{site.prefix}/app/index.php"
    assert harness.http(site.port, "/api/missing.php").status == 404
