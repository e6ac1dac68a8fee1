"""proxy_cache in front of an instrumented upstream that counts what it gets:
hits do not reach it, $upstream_cache_status follows nginx's sequence
(MISS, HIT, EXPIRED, BYPASS...), the upstream's Cache-Control, Expires,
X-Accel-Expires, Set-Cookie and Vary are honoured, HEAD goes up as GET,
ranges are served from the cached file. Every expectation here is nginx's:
the file passes with TORII_BIN=/usr/sbin/nginx, except the tests marked
torii-only (cache lock timing, crash safety, max_size, purge)."""

import threading
import time
from pathlib import Path

import pytest

import harness
from counting_upstream import CountingUpstream


@pytest.fixture
def up():
    u = CountingUpstream()
    yield u
    u.stop()


def cache_conf(port, location_extra="", http_extra="", path_extra=""):
    return harness.base_conf(http=f"""
    proxy_cache_path @PREFIX@/cache levels=1:2 keys_zone=one:1m inactive=10m {path_extra};
    {http_extra}
    server {{
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        location / {{
            proxy_pass http://127.0.0.1:{port};
            proxy_cache one;
            add_header X-Cache $upstream_cache_status always;
            {location_extra}
        }}
    }}
""")


def status_of(srv, path, method="GET", headers=None, body=None):
    r = harness.http(srv.port, path, method=method, headers=headers, body=body)
    return r.header("X-Cache"), r


def sequence(srv, path, n, **kw):
    return [status_of(srv, path, **kw)[0] for _ in range(n)]


def test_hit_does_not_reach_the_upstream(make_server, up):
    up.route("/a", body=b"cached body " * 100)
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 10m;"))
    first, r1 = status_of(srv, "/a")
    second, r2 = status_of(srv, "/a")
    third, r3 = status_of(srv, "/a")
    assert (first, second, third) == ("MISS", "HIT", "HIT")
    assert r1.status == r2.status == r3.status == 200
    assert r1.body == r2.body == r3.body == b"cached body " * 100
    assert r3.header("Content-Length") == str(len(r3.body))
    assert up.count("/a") == 1


def test_scripted_status_sequence(make_server, up):
    """The same series of requests gives nginx's $upstream_cache_status
    sequence: the test that is run against both servers."""
    up.route("/plain")
    up.route("/cookie", headers={"Set-Cookie": "a=b"})
    up.route("/nostore", headers={"Cache-Control": "no-store"})
    up.route("/private", headers={"Cache-Control": "private, max-age=60"})
    up.route("/maxage0", headers={"Cache-Control": "max-age=0"})
    up.route("/maxage", headers={"Cache-Control": "max-age=60"})
    up.route("/expires-past", headers={"Expires": "Thu, 01 Jan 1970 00:00:01 GMT"})
    up.route("/accel0", headers={"X-Accel-Expires": "0", "Cache-Control": "max-age=60"})
    up.route("/accel", headers={"X-Accel-Expires": "60", "Cache-Control": "no-cache"})
    up.route("/notfound", status=404)
    conf = cache_conf(up.port, """
            proxy_cache_valid 200 10m;
            proxy_cache_bypass $arg_bypass;
            proxy_no_cache $arg_nostore;
            location /novalid/ {
                proxy_pass http://127.0.0.1:%d;
                proxy_cache one;
                add_header X-Cache $upstream_cache_status always;
            }
    """ % up.port)
    srv = make_server(conf)
    got = {
        "plain": sequence(srv, "/plain", 3),
        "bypass": [status_of(srv, "/plain?bypass=1")[0], status_of(srv, "/plain")[0]],
        "nostore-arg": [status_of(srv, "/plain?x=1&nostore=1")[0], status_of(srv, "/plain?x=1")[0],
                        status_of(srv, "/plain?x=1")[0]],
        "cookie": sequence(srv, "/cookie", 2),
        "no-store": sequence(srv, "/nostore", 2),
        "private": sequence(srv, "/private", 2),
        "max-age=0": sequence(srv, "/maxage0", 2),
        "max-age": sequence(srv, "/maxage", 2),
        "expires-past": sequence(srv, "/expires-past", 2),
        "x-accel-0": sequence(srv, "/accel0", 2),
        "x-accel-60": sequence(srv, "/accel", 2),
        "404-not-valid": sequence(srv, "/notfound", 2),
        "post": [status_of(srv, "/plain", method="POST", body=b"x")[0]],
    }
    assert got == {
        "plain": ["MISS", "HIT", "HIT"],
        "bypass": ["BYPASS", "HIT"],
        "nostore-arg": ["MISS", "MISS", "HIT"],
        "cookie": ["MISS", "MISS"],
        "no-store": ["MISS", "MISS"],
        "private": ["MISS", "MISS"],
        "max-age=0": ["MISS", "MISS"],
        "max-age": ["MISS", "HIT"],
        "expires-past": ["MISS", "MISS"],
        "x-accel-0": ["MISS", "MISS"],
        "x-accel-60": ["MISS", "HIT"],
        "404-not-valid": ["MISS", "MISS"],
        "post": [None],
    }
    assert up.count("/plain") == 5  # MISS, BYPASS, the no_cache MISS, the stored MISS, POST


def test_max_age_without_proxy_cache_valid(make_server, up):
    up.route("/m", headers={"Cache-Control": "max-age=60"})
    up.route("/n")
    srv = make_server(cache_conf(up.port))
    assert sequence(srv, "/m", 2) == ["MISS", "HIT"]
    assert sequence(srv, "/n", 2) == ["MISS", "MISS"]  # no validity at all: not stored


def test_expired_entry_goes_upstream_again(make_server, up):
    up.route("/e", body=b"v1")
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 1s;"))
    assert status_of(srv, "/e")[0] == "MISS"
    up.route("/e", body=b"v2")
    # Poll until the second has passed (HITs until then).
    statuses = []

    def expired():
        st, r = status_of(srv, "/e")
        statuses.append(st)
        return st == "EXPIRED" and r.body == b"v2"
    harness.wait_until(expired, 10, interval=0.1, what="EXPIRED")
    assert set(statuses[:-1]) <= {"HIT"}
    st, r = status_of(srv, "/e")
    assert (st, r.body) == ("HIT", b"v2")


def test_set_cookie_cached_when_ignored(make_server, up):
    up.route("/c", headers={"Set-Cookie": "a=b"})
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 10m; proxy_ignore_headers Set-Cookie;"))
    assert sequence(srv, "/c", 2) == ["MISS", "HIT"]


def test_min_uses(make_server, up):
    up.route("/u")
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 10m; proxy_cache_min_uses 2;"))
    assert sequence(srv, "/u", 3) == ["MISS", "MISS", "HIT"]
    assert up.count("/u") == 2


def test_vary_variants_kept_apart(make_server, up):
    up.route("/v", headers={"Vary": "Accept-Language"})
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 10m;"))
    en = {"Accept-Language": "en"}
    fr = {"Accept-Language": "fr"}
    up.route("/v", body=b"english", headers={"Vary": "Accept-Language"})
    assert status_of(srv, "/v", headers=en)[0] == "MISS"
    up.route("/v", body=b"french", headers={"Vary": "Accept-Language"})
    assert status_of(srv, "/v", headers=fr)[0] == "MISS"
    st_en, r_en = status_of(srv, "/v", headers=en)
    st_fr, r_fr = status_of(srv, "/v", headers=fr)
    assert (st_en, r_en.body) == ("HIT", b"english")
    assert (st_fr, r_fr.body) == ("HIT", b"french")
    assert up.count("/v") == 2


def test_head_goes_upstream_as_get_and_fills_the_cache(make_server, up):
    up.route("/h", body=b"0123456789" * 10)
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 10m;"))
    st, r = status_of(srv, "/h", method="HEAD")
    assert st == "MISS" and r.body == b""
    assert r.header("Content-Length") == "100"
    assert [m for m, p, _ in up.seen] == ["GET"]
    # The client had all of its response with the head: the body may still
    # be on its way into the cache.
    cache_dir = Path(srv.prefix) / "cache"
    harness.wait_until(lambda: [p for p in cache_dir.rglob("*") if p.is_file() and not p.name.startswith(".")],
                       10, what="the entry on disk")
    st, r = status_of(srv, "/h")
    assert (st, r.body) == ("HIT", b"0123456789" * 10)
    st, r = status_of(srv, "/h", method="HEAD")
    assert (st, r.body, r.header("Content-Length")) == ("HIT", b"", "100")
    assert up.count("/h") == 1


def test_client_conditionals_and_range_not_sent_upstream(make_server, up):
    up.route("/r", body=bytes(range(256)) * 4)
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 10m;"))
    st, r = status_of(srv, "/r", headers={"Range": "bytes=0-9", "If-None-Match": '"x"'})
    assert st == "MISS"
    _, _, headers = up.seen[0]
    assert "Range" not in headers and "If-None-Match" not in headers
    assert up.count("/r") == 1


@pytest.mark.parametrize("first", ["MISS", "HIT"])
def test_client_preconditions_against_the_cached_response(make_server, up, first):
    lm = "Wed, 01 Jan 2020 00:00:00 GMT"
    up.route("/p", body=b"0123456789", headers={"ETag": '"v1"', "Last-Modified": lm})
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 10m;"))
    if first == "HIT":
        assert status_of(srv, "/p")[0] == "MISS"
    cases = [
        ({"If-Unmodified-Since": "Fri, 05 Jul 1985 14:30:52 GMT"}, 412),
        ({"If-Unmodified-Since": lm}, 200),
        ({"If-Match": '"bad"'}, 412),
        ({"If-Match": '"v1"'}, 200),
        ({"If-None-Match": '"v1"'}, 304),
        ({"If-None-Match": 'W/"v1"'}, 304),
        ({"If-None-Match": '"other"', "If-Modified-Since": lm}, 200),
        ({"If-Modified-Since": lm}, 304),
    ]
    for headers, status in cases:
        st, r = status_of(srv, "/p", headers=headers)
        assert r.status == status, (headers, st, r)
    # (On a miss nginx stores nothing after a 412; a 304 still fills the cache.)
    if first == "HIT":
        assert up.count("/p") == 1


def test_a_miss_answered_304_still_fills_the_cache(make_server, up):
    body = b"x" * 100_000
    up.route("/m", body=body, headers={"ETag": '"v2"'})
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 10m;"))
    st, r = status_of(srv, "/m", headers={"If-None-Match": '"v2"'})
    assert (st, r.status, r.body) == ("MISS", 304, b"")
    harness.wait_until(lambda: status_of(srv, "/m")[0] == "HIT", 10, what="the entry")
    st, r = status_of(srv, "/m")
    assert (st, r.status, r.body) == ("HIT", 200, body)
    assert up.count("/m") == 1


def test_range_served_from_the_cached_file(make_server, up):
    body = bytes(range(256)) * 80  # 20 KB
    up.route("/r", body=body, headers={"Accept-Ranges": "bytes"})
    up.route("/no-ranges", body=body)
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 10m;"))
    assert status_of(srv, "/r")[0] == "MISS"
    assert status_of(srv, "/no-ranges")[0] == "MISS"
    st, r = status_of(srv, "/r", headers={"Range": "bytes=100-199"})
    assert st == "HIT" and r.status == 206
    assert r.body == body[100:200]
    assert r.header("Content-Range") == f"bytes 100-199/{len(body)}"
    st, r = status_of(srv, "/r", headers={"Range": "bytes=-10"})
    assert r.status == 206 and r.body == body[-10:]
    assert up.count("/r") == 1
    # Without the upstream's Accept-Ranges, nginx sends the whole response.
    st, r = status_of(srv, "/no-ranges", headers={"Range": "bytes=100-199"})
    assert (st, r.status, r.body) == ("HIT", 200, body)


def test_cache_key_directive(make_server, up):
    up.route("/k")
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 10m; proxy_cache_key $uri;"))
    assert status_of(srv, "/k?a=1")[0] == "MISS"
    assert status_of(srv, "/k?a=2")[0] == "HIT"  # the query is not in the key


def test_stale_served_while_the_upstream_is_down(make_server, up):
    up.route("/s", body=b"old")
    conf = cache_conf(up.port, """
            proxy_cache_valid 200 1s;
            proxy_cache_use_stale error timeout http_500 http_502;
            proxy_connect_timeout 2s;
    """)
    srv = make_server(conf)
    assert status_of(srv, "/s")[0] == "MISS"
    up.route("/s", status=500, body=b"broken")

    def stale():
        st, r = status_of(srv, "/s")
        return st == "STALE" and r.body == b"old" and r.status == 200
    harness.wait_until(stale, 10, interval=0.1, what="STALE on a 500")
    up.stop()  # now nothing listens there at all

    st, r = status_of(srv, "/s")
    assert (st, r.status, r.body) == ("STALE", 200, b"old")


def test_revalidate_with_304(make_server, up):
    up.route("/rv", body=b"validated", etag='"v1"', last_modified="Mon, 01 Jan 2024 00:00:00 GMT")
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 1s; proxy_cache_revalidate on;"))
    assert status_of(srv, "/rv")[0] == "MISS"

    def revalidated():
        return status_of(srv, "/rv")[0] == "REVALIDATED"
    harness.wait_until(revalidated, 10, interval=0.1, what="REVALIDATED")
    _, _, headers = up.seen[-1]
    assert headers.get("If-None-Match") == '"v1"'
    assert headers.get("If-Modified-Since") == "Mon, 01 Jan 2024 00:00:00 GMT"
    st, r = status_of(srv, "/rv")
    assert (st, r.body) == ("HIT", b"validated")


def test_updating_served_stale_while_one_request_updates(make_server, up):
    up.route("/up", body=b"first")
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 1s; proxy_cache_use_stale updating;"))
    assert status_of(srv, "/up")[0] == "MISS"
    up.route("/up", body=b"second", delay=30)  # the update waits at the upstream until release()
    updater = {}

    def poll_until_not_hit():
        def not_hit():
            st, r = status_of(srv, "/up")
            if st != "HIT":
                updater["result"] = (st, r.body)
            return st != "HIT"
        harness.wait_until(not_hit, 20, interval=0.05, what="the entry to expire")

    t = threading.Thread(target=poll_until_not_hit)
    t.start()
    try:
        harness.wait_until(lambda: up.count("/up") == 2, 10, what="the update to reach the upstream")
        st, r = status_of(srv, "/up")
        assert (st, r.body) == ("UPDATING", b"first")
        assert up.count("/up") == 2
    finally:
        up.release()
        t.join(20)
    assert updater["result"] == ("EXPIRED", b"second")
    st, r = status_of(srv, "/up")
    assert (st, r.body) == ("HIT", b"second")


def test_default_key_is_the_upstream_url(make_server, up):
    # Two sites share one zone and pass the same request URI to different
    # upstream paths: without proxy_cache_key, nginx keys on the URL sent
    # upstream, so neither site gets the other's page.
    up.route("/site-a/page", body=b"page of a\n")
    up.route("/site-b/page", body=b"page of b\n")
    srv = make_server(harness.base_conf(http=f"""
    proxy_cache_path @PREFIX@/cache levels=1:2 keys_zone=one:1m inactive=10m;
    server {{
        listen 127.0.0.1:@PORT@;
        server_name a.example;
        location / {{ proxy_pass http://127.0.0.1:{up.port}/site-a/; proxy_cache one; proxy_cache_valid 200 10m; }}
    }}
    server {{
        listen 127.0.0.1:@PORT@;
        server_name b.example;
        location / {{ proxy_pass http://127.0.0.1:{up.port}/site-b/; proxy_cache one; proxy_cache_valid 200 10m; }}
    }}
"""))
    for _ in range(2):
        assert harness.http(srv.port, "/page", host="a.example").body == b"page of a\n"
        assert harness.http(srv.port, "/page", host="b.example").body == b"page of b\n"
    assert up.count("/site-a/page") == 1 and up.count("/site-b/page") == 1


@pytest.mark.parametrize("cache_control", ["max-age=1, stale-if-error=60", "max-age=1, stale-while-revalidate=60"])
def test_stale_if_error_covers_a_failing_upstream_not_its_statuses(make_server, up, cache_control):
    """Cache-Control stale-if-error (and stale-while-revalidate, which
    stands for it when it is absent): an expired entry answers when the
    upstream cannot be reached, but a 500 the upstream sends is its answer
    (nginx since 1.19.3; proxy_cache_use_stale http_500 would ask for the
    entry then)."""
    up.route("/sie", body=b"kept", headers={"Cache-Control": cache_control})
    srv = make_server(cache_conf(up.port))
    assert status_of(srv, "/sie")[0] == "MISS"
    up.route("/sie", body=b"broken", status=500)
    time.sleep(2.1)  # max-age=1 has run out (whole seconds)
    st, r = status_of(srv, "/sie")
    assert (r.status, r.body) == (500, b"broken")
    up.stop()  # connection refused from here
    st, r = status_of(srv, "/sie")
    assert (st, r.status, r.body) == ("STALE", 200, b"kept")


def test_cache_zone_chosen_by_a_variable(make_server, up):
    """proxy_cache $zone: a map names the zone per request; "off" (or empty)
    caches nothing, an unknown name is a 500 with nginx's log line."""
    up.route("/z", body=b"zoned", headers={"Cache-Control": "max-age=60"})
    srv = make_server(harness.base_conf(http=f"""
    proxy_cache_path @PREFIX@/cache levels=1:2 keys_zone=one:1m inactive=10m;
    map $arg_c $zone {{
        default one;
        none    off;
        bad     nosuch;
    }}
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{
            proxy_pass http://127.0.0.1:{up.port};
            proxy_cache $zone;
            add_header X-Cache $upstream_cache_status always;
        }}
    }}
"""))
    assert status_of(srv, "/z")[0] == "MISS"
    assert status_of(srv, "/z")[0] == "HIT"
    assert up.count("/z") == 1
    st, r = status_of(srv, "/z?c=none")
    assert (st, r.status, r.body) == (None, 200, b"zoned")
    assert up.count("/z") == 2
    st, r = status_of(srv, "/z?c=bad")
    assert r.status == 500
    harness.wait_until(lambda: 'cache "nosuch" not found' in srv.error_log_text(), 10, what="the log line")
