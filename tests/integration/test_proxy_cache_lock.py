"""proxy_cache_lock's waiters are woken by the release of the lock, on
whichever worker thread they wait: with two workers, simultaneous misses
still make one upstream request, and a fill that stores nothing lets the
waiters go upstream themselves. Passes against nginx too
(TORII_BIN=/usr/sbin/nginx)."""

import threading

import pytest

import harness
from counting_upstream import CountingUpstream
from test_proxy_cache import cache_conf, status_of
from test_proxy_cache_store import client_connections

LOCK = """
            proxy_cache_valid 200 10m;
            proxy_cache_lock on;
            proxy_cache_lock_timeout 60s;
            proxy_cache_lock_age 60s;
"""


@pytest.fixture
def up():
    u = CountingUpstream()
    yield u
    u.stop()


def two_workers(conf):
    return conf.replace("events {", "worker_processes 2;\nevents {", 1)


def fetch_all(srv, path, n):
    results = []
    lock = threading.Lock()

    def fetch():
        st, r = status_of(srv, path)
        with lock:
            results.append((st, r.status, r.body))
    threads = [threading.Thread(target=fetch) for _ in range(n)]
    for t in threads:
        t.start()
    return threads, results


def test_waiters_on_two_workers_share_one_fill(make_server, up):
    up.route("/w", body=b"W" * 5000, delay=30)
    srv = make_server(two_workers(cache_conf(up.port, LOCK)))
    threads, results = fetch_all(srv, "/w", 40)
    harness.wait_until(lambda: up.count("/w") >= 1, 10, what="the first miss at the upstream")
    harness.wait_until(lambda: client_connections(srv) >= 40, 15, what="40 waiting clients")
    up.release()
    for t in threads:
        t.join(30)
    assert len(results) == 40
    assert up.count("/w") == 1
    assert sorted(st for st, _, _ in results) == ["HIT"] * 39 + ["MISS"]
    assert all(status == 200 and body == b"W" * 5000 for _, status, body in results)


def test_fill_that_stores_nothing_releases_the_waiters(make_server, up):
    """The response is not cacheable (Set-Cookie): once it is through, the
    waiters go upstream themselves, one fill at a time, none stored."""
    up.route("/nc", body=b"private", headers={"Set-Cookie": "s=1"}, delay=30)
    srv = make_server(two_workers(cache_conf(up.port, LOCK)))
    threads, results = fetch_all(srv, "/nc", 5)
    harness.wait_until(lambda: up.count("/nc") >= 1, 10, what="the first miss at the upstream")
    harness.wait_until(lambda: client_connections(srv) >= 5, 15, what="5 waiting clients")
    up.release()
    for t in threads:
        t.join(30)
    assert sorted(results) == [("MISS", 200, b"private")] * 5
    assert up.count("/nc") == 5
