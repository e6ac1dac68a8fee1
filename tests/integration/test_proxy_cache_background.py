"""proxy_cache_background_update: with proxy_cache_use_stale updating, an
expired entry answers at once (STALE) while a request of the server's own
refreshes it from the upstream; the client never waits for the upstream.
Requests meanwhile get the stale entry (UPDATING), the one after the
refresh the new body (HIT). The file passes against nginx too
(TORII_BIN=/usr/sbin/nginx)."""

import signal
import time
from pathlib import Path

import pytest

import harness
from counting_upstream import CountingUpstream
from test_proxy_cache import cache_conf, status_of

BACKGROUND = """
            proxy_cache_valid 200 1s;
            proxy_cache_use_stale updating;
            proxy_cache_background_update on;
"""


@pytest.fixture
def up():
    u = CountingUpstream()
    yield u
    u.stop()


def first_not_hit(srv, path):
    """Polls until the entry has expired; returns (status, response, seconds
    the expired request took). Each request has 10 s to answer."""
    found = {}

    def not_hit():
        t0 = time.monotonic()
        st, r = status_of(srv, path)
        if st != "HIT":
            found["r"] = (st, r, time.monotonic() - t0)
        return st != "HIT"
    harness.wait_until(not_hit, 20, interval=0.05, what="the entry to expire")
    return found["r"]


def test_stale_answers_at_once_and_the_background_refreshes(make_server, up):
    up.route("/bg", body=b"first")
    srv = make_server(cache_conf(up.port, BACKGROUND))
    assert status_of(srv, "/bg")[0] == "MISS"
    # The refresh is held at the upstream until release(): the expired
    # request is answered while the upstream has not answered at all.
    up.route("/bg", body=b"second", delay=30)
    try:
        st, r, took = first_not_hit(srv, "/bg")
        assert (st, r.status, r.body) == ("STALE", 200, b"first")
        harness.wait_until(lambda: up.count("/bg") == 2, 10, what="the background request at the upstream")
        assert took < 5, f"the stale answer took {took:.2f}s"
        # While the refresh is under way, the stale entry answers.
        st, r = status_of(srv, "/bg")
        assert (st, r.body) == ("UPDATING", b"first")
        assert up.count("/bg") == 2
    finally:
        up.release()

    # The refreshed entry answers next; no client request went upstream.
    def refreshed():
        st, r = status_of(srv, "/bg")
        return (st, r.body) == ("HIT", b"second")
    harness.wait_until(refreshed, 10, interval=0.05, what="the refreshed entry")
    assert up.count("/bg") == 2
    method, path, _ = up.seen[-1]
    assert (method, path) == ("GET", "/bg")


def test_slow_upstream_does_not_delay_the_stale_answer(make_server, up):
    """The upstream takes 3 s for every response: the stale answer comes in
    a fraction of that, the next request after the refresh has the new body."""
    up.route("/slow", body=b"old")
    srv = make_server(cache_conf(up.port, BACKGROUND))
    assert status_of(srv, "/slow")[0] == "MISS"
    up.route("/slow", body=b"new", delay=3)
    st, r, took = first_not_hit(srv, "/slow")
    assert (st, r.body) == ("STALE", b"old")
    assert took < 1.5, f"the stale answer took {took:.2f}s behind a 3 s upstream"

    def refreshed():
        st, r = status_of(srv, "/slow")
        return (st, r.body) == ("HIT", b"new")
    harness.wait_until(refreshed, 15, interval=0.1, what="the refreshed entry")
    assert up.count("/slow") == 2


def test_refresh_that_fails_keeps_the_stale_entry(make_server, up):
    """The background request gets a 500 (not cached, not a use_stale
    condition here): the entry stays stale and the next request starts
    another refresh, still answered from the cache."""
    up.route("/f", body=b"kept")
    srv = make_server(cache_conf(up.port, BACKGROUND))
    assert status_of(srv, "/f")[0] == "MISS"
    up.route("/f", body=b"broken", status=500)
    st, r, _ = first_not_hit(srv, "/f")
    assert (st, r.status, r.body) == ("STALE", 200, b"kept")
    harness.wait_until(lambda: up.count("/f") == 2, 10, what="the background request")

    def stale_again():
        st, r = status_of(srv, "/f")
        assert r.body == b"kept" and st in ("STALE", "UPDATING"), (st, r.body)
        return st == "STALE" and up.count("/f") >= 3
    harness.wait_until(stale_again, 10, interval=0.05, what="a second refresh")


def test_without_updating_the_expired_request_waits(make_server, up):
    """background_update alone, without use_stale updating, changes nothing:
    the expired request goes to the upstream itself (EXPIRED)."""
    up.route("/n", body=b"one")
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 1s; proxy_cache_background_update on;"))
    assert status_of(srv, "/n")[0] == "MISS"
    up.route("/n", body=b"two")
    st, r, _ = first_not_hit(srv, "/n")
    assert (st, r.body) == ("EXPIRED", b"two")


def test_server_stops_while_a_refresh_waits(make_server, up):
    """A background request held at the upstream when the server is told to
    stop: it exits at once and cleanly, leaving no temporary file."""
    up.route("/s", body=b"s1")
    srv = make_server(cache_conf(up.port, BACKGROUND))
    assert status_of(srv, "/s")[0] == "MISS"
    up.route("/s", body=b"s2", delay=30)
    st, r, _ = first_not_hit(srv, "/s")
    assert (st, r.body) == ("STALE", b"s1")
    harness.wait_until(lambda: up.count("/s") == 2, 10, what="the background request at the upstream")
    srv.signal(signal.SIGTERM)
    assert srv.wait_exit(10) == 0
    up.release()
    temporary = [p for p in (Path(srv.prefix) / "cache").rglob("*") if p.is_file() and p.name.startswith(".")]
    assert temporary == []
