"""The ngx_cache_purge module's forms of proxy_cache_purge (and
fastcgi_cache_purge, the WordPress caching guides' line): the purge method
beside the cache (`proxy_cache_purge PURGE from 127.0.0.1;`) and a location
of its own (`proxy_cache_purge ZONE KEY;`). The same tests run against
Debian's nginx with libnginx-mod-http-cache-purge loaded, except where
that module crashes nginx (below) or lacks a later version's feature."""

import os

import pytest

import harness
from counting_upstream import CountingUpstream
from gateway_apps import PhpFpm, copy_debian_params

MODULE = "/usr/lib/nginx/modules/ngx_http_cache_purge_module.so"

pytestmark = pytest.mark.skipif(harness.IS_NGINX and not os.path.exists(MODULE),
                                reason="needs libnginx-mod-http-cache-purge")


# Debian 12's module (2.3, built for nginx 1.22) crashes the worker
# (signal 11) when it purges beside proxy_cache: those cases are torii's.
purges_beside_the_cache = pytest.mark.skipif(
    harness.IS_NGINX, reason="Debian's module crashes nginx's worker when it purges beside proxy_cache")


@pytest.fixture
def up():
    u = CountingUpstream()
    for path in ("/a", "/b", "/dir/1", "/dir/2"):
        u.route(path, body=path.encode() * 10)
    yield u
    u.stop()


def conf(port, location="", server="", purge_location=""):
    main = f"load_module {MODULE};" if harness.IS_NGINX else ""
    return harness.base_conf(main=main, http=f"""
    proxy_cache_path @PREFIX@/cache levels=1:2 keys_zone=one:1m inactive=10m;
    server {{
        listen 127.0.0.1:@PORT@;
        {server}
        location / {{
            proxy_pass http://127.0.0.1:{port};
            proxy_cache one;
            proxy_cache_key $uri$is_args$args;
            proxy_cache_valid 200 10m;
            add_header X-Cache $upstream_cache_status always;
            {location}
        }}
        location /nocache/ {{
            proxy_pass http://127.0.0.1:{port}/;
        }}
        {purge_location}
    }}""")


def cache_status(srv, path):
    r = harness.http(srv.port, path)
    assert r.status == 200
    return r.header("X-Cache")


def warm(srv, path):
    assert cache_status(srv, path) == "MISS"
    assert cache_status(srv, path) == "HIT"


def check_page(r, key):
    assert r.status == 200
    assert r.header("Content-Type") == "text/html"
    text = r.body.decode()
    assert "Successful purge" in text
    assert f"Key : {key}" in text
    assert "Path: " in text


@purges_beside_the_cache
def test_purge_method_beside_the_cache(make_server, up):
    srv = make_server(conf(up.port, "proxy_cache_purge PURGE from 127.0.0.1;"))
    warm(srv, "/a")
    warm(srv, "/b")
    check_page(harness.http(srv.port, "/a", method="PURGE"), "/a")
    assert cache_status(srv, "/a") == "MISS"
    assert cache_status(srv, "/b") == "HIT"  # only its own key went
    assert harness.http(srv.port, "/a?x=1", method="PURGE").status == 404  # another key: nothing stored
    r = harness.http(srv.port, "/b", method="PURGE")
    check_page(r, "/b")
    assert harness.http(srv.port, "/b", method="PURGE").status == 404  # gone already
    assert up.count("/a") == 2 and up.count("/b") == 1


def test_other_methods_still_reach_the_upstream(make_server, up):
    srv = make_server(conf(up.port, "proxy_cache_purge PURGE;"))
    warm(srv, "/a")
    # A method other than the purge one goes on to the upstream (which
    # does not know DELETE), and the entry stays.
    assert harness.http(srv.port, "/a", method="DELETE").status == 501
    assert cache_status(srv, "/a") == "HIT"


def test_client_not_in_the_from_list_is_forbidden(make_server, up):
    srv = make_server(conf(up.port, "proxy_cache_purge PURGE from 10.0.0.0/8 ::1;"))
    warm(srv, "/a")
    assert harness.http(srv.port, "/a", method="PURGE").status == 403
    assert cache_status(srv, "/a") == "HIT"


@purges_beside_the_cache
@pytest.mark.parametrize("line", ["proxy_cache_purge on;", "proxy_cache_purge PURGE;",
                                  "proxy_cache_purge PURGE from all;"])
def test_other_ways_to_allow_every_client(make_server, up, line):
    """`on` is the method PURGE; no list, or `from all`, lets anyone purge."""
    srv = make_server(conf(up.port, line))
    warm(srv, "/a")
    check_page(harness.http(srv.port, "/a", method="PURGE"), "/a")
    assert cache_status(srv, "/a") == "MISS"


@purges_beside_the_cache
def test_server_level_line_reaches_the_proxied_locations(make_server, up):
    """Set on the server, it holds in each location that proxies; one that
    proxies with no cache answers the purge 404 (nothing to purge), and a
    location's `off` turns it off there."""
    srv = make_server(conf(up.port, server="proxy_cache_purge PURGE from 127.0.0.1;", purge_location=f"""
        location /off/ {{
            proxy_pass http://127.0.0.1:{up.port}/;
            proxy_cache one;
            proxy_cache_key $uri$is_args$args;
            proxy_cache_purge off;
        }}"""))
    warm(srv, "/a")
    check_page(harness.http(srv.port, "/a", method="PURGE"), "/a")
    assert harness.http(srv.port, "/nocache/a", method="PURGE").status == 404
    assert up.count("/a") == 1  # the purge of /nocache/a did not reach the upstream
    assert harness.http(srv.port, "/off/a", method="PURGE").status == 501  # passed on


def test_separate_location_purges_the_key(make_server, up):
    # (proxy_cache on the server too: inherited, it is no conflict.)
    srv = make_server(conf(up.port, server="proxy_cache one;", purge_location="""
        location ~ /purge(/.*) {
            allow 127.0.0.1;
            deny all;
            proxy_cache_purge one $1$is_args$args;
        }"""))
    warm(srv, "/dir/1")
    warm(srv, "/dir/2")
    check_page(harness.http(srv.port, "/purge/dir/1"), "/dir/1")
    assert cache_status(srv, "/dir/1") == "MISS"
    assert cache_status(srv, "/dir/2") == "HIT"
    assert harness.http(srv.port, "/purge/dir/1?v=2").status == 404
    # Any method purges there (it is the location's handler).
    r = harness.http(srv.port, "/purge/dir/2", method="POST", body=b"ignored")
    check_page(r, "/dir/2")
    assert cache_status(srv, "/dir/2") == "MISS"


def test_separate_location_keeps_the_access_rules(make_server, up):
    srv = make_server(conf(up.port, purge_location="""
        location ~ /purge(/.*) {
            deny all;
            proxy_cache_purge one $1$is_args$args;
        }"""))
    warm(srv, "/a")
    assert harness.http(srv.port, "/purge/a").status == 403
    assert cache_status(srv, "/a") == "HIT"


def test_key_is_escaped_in_the_page(make_server, up, nginx_only_skip):
    """The page shows the key; markup in a URI is shown as text (the module
    writes it as it is)."""
    srv = make_server(conf(up.port, "proxy_cache_purge PURGE;"))
    up.route("/%3Cb%3E", body=b"x")
    assert cache_status(srv, "/%3Cb%3E") == "MISS"
    r = harness.http(srv.port, "/%3Cb%3E", method="PURGE")
    assert r.status == 200 and b"Key : /&lt;b&gt;" in r.body and b"<b>" not in r.body


def test_key_ending_in_a_star_purges_a_prefix(make_server, up, nginx_only_skip):
    """As the module's later versions: `KEY*` removes every entry KEY
    begins (Debian's 2.3 takes the star literally)."""
    srv = make_server(conf(up.port, purge_location="""
        location ~ /purge(/.*) { proxy_cache_purge one $1; }"""))
    for path in ("/dir/1", "/dir/2", "/a"):
        warm(srv, path)
    assert harness.http(srv.port, "/purge/dir/*").status == 200
    assert cache_status(srv, "/dir/1") == "MISS" and cache_status(srv, "/dir/2") == "MISS"
    assert cache_status(srv, "/a") == "HIT"
    assert harness.http(srv.port, "/purge/nothing/*").status == 404


def test_purge_all(make_server, up, nginx_only_skip):
    """`METHOD purge_all`, the later versions' whole-zone purge."""
    srv = make_server(conf(up.port, "proxy_cache_purge PURGE purge_all from 127.0.0.1;"))
    for path in ("/dir/1", "/a"):
        warm(srv, path)
    assert harness.http(srv.port, "/anything", method="PURGE").status == 200
    assert cache_status(srv, "/dir/1") == "MISS" and cache_status(srv, "/a") == "MISS"


def test_wordpress_fastcgi_purge_location(make_server, tmp_path):
    """The WordPress guides' setup: fastcgi_cache on the PHP location, a
    /purge/ location with `fastcgi_cache_purge WORDPRESS KEY` (the key
    built the same way), as the nginx-helper plugin calls it."""
    www = tmp_path / "www"
    www.mkdir()
    (www / "clock.php").write_text("<?php echo hrtime(true);")
    fpm = PhpFpm(tmp_path / "fpm")
    try:
        main = f"load_module {MODULE};" if harness.IS_NGINX else ""
        srv = make_server(harness.base_conf(main=main, http=f"""
        fastcgi_cache_path @PREFIX@/fcache levels=1:2 keys_zone=WORDPRESS:1m inactive=60m;
        fastcgi_cache_key "$scheme$request_method$host$request_uri";
        server {{
            listen 127.0.0.1:@PORT@;
            root {www};
            location ~ /purge(/.*) {{
                fastcgi_cache_purge WORDPRESS "$scheme$request_method$host$1";
            }}
            location ~ [^/]\\.php(/|$) {{
                include snippets/fastcgi-php.conf;
                fastcgi_pass {fpm.address};
                fastcgi_cache WORDPRESS;
                fastcgi_cache_valid 200 60m;
                add_header X-Cache $upstream_cache_status always;
            }}
        }}"""), start=False)
        copy_debian_params(srv.prefix)
        srv.start()
        first = harness.http(srv.port, "/clock.php", host="blog.test")
        second = harness.http(srv.port, "/clock.php", host="blog.test")
        assert (first.header("X-Cache"), second.header("X-Cache")) == ("MISS", "HIT")
        assert first.body == second.body
        check_page(harness.http(srv.port, "/purge/clock.php", host="blog.test"), "httpGETblog.test/clock.php")
        third = harness.http(srv.port, "/clock.php", host="blog.test")
        assert third.header("X-Cache") == "MISS" and third.body != first.body  # PHP ran again
        assert harness.http(srv.port, "/purge/clock.php", host="other.test").status == 404  # another host's key
    finally:
        fpm.stop()


@pytest.mark.parametrize("http, message", [
    ("server { listen 127.0.0.1:1; proxy_cache_purge one $uri; }",
     "(separate location syntax) is not allowed here"),
    ("server { listen 127.0.0.1:1; location / { proxy_pass http://127.0.0.1:2; proxy_cache_purge one $uri; } }",
     "is incompatible with \"proxy_pass\""),
    ("server { listen 127.0.0.1:1; location / { proxy_cache one; proxy_cache_purge one $uri; } }",
     "is incompatible with \"proxy_cache\""),
    ("server { listen 127.0.0.1:1; location / { proxy_cache_purge PURGE to 127.0.0.1; } }",
     "expected \"from\" keyword"),
    ("server { listen 127.0.0.1:1; location / { proxy_cache_purge PURGE from 127.0.0.300; } }",
     "invalid parameter \"127.0.0.300\""),
])
def test_bad_lines_are_refused(tmp_path, http, message):
    main = f"load_module {MODULE};" if harness.IS_NGINX else ""
    harness.check_test_fails(tmp_path, harness.base_conf(main=main, http="""
        proxy_cache_path @PREFIX@/cache keys_zone=one:1m;
    """ + http), message)
