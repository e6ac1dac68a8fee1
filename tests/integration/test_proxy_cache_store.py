"""The cache's store: a lock that collapses simultaneous misses into one
upstream request, entries that survive `kill -9` and a restart, a write cut
by a crash that is never served, a damaged file that is removed, max_size
that is kept. The lock test passes against nginx too (TORII_BIN=
/usr/sbin/nginx); the crash tests are torii's (nginx's master would leave
its workers running after SIGKILL)."""

import os
import signal
import threading
from pathlib import Path

import pytest

import harness
from counting_upstream import CountingUpstream
from test_proxy_cache import cache_conf, status_of

torii_only = pytest.mark.skipif(harness.IS_NGINX, reason="kills the server with SIGKILL")


@pytest.fixture
def up():
    u = CountingUpstream()
    yield u
    u.stop()


def cache_files(srv):
    root = Path(srv.prefix) / "cache"
    return [p for p in root.rglob("*") if p.is_file() and not p.name.startswith(".")]


def test_lock_collapses_simultaneous_misses(make_server, up):
    up.route("/l", body=b"L" * 20000, delay=30)  # held at the upstream until release()
    srv = make_server(cache_conf(up.port, """
            proxy_cache_valid 200 10m;
            proxy_cache_lock on;
            proxy_cache_lock_timeout 60s;
            proxy_cache_lock_age 60s;
    """), extra_g=None)
    results = []
    lock = threading.Lock()

    def fetch():
        st, r = status_of(srv, "/l")
        with lock:
            results.append((st, r.status, len(r.body)))

    threads = [threading.Thread(target=fetch) for _ in range(100)]
    for t in threads:
        t.start()
    harness.wait_until(lambda: up.count("/l") >= 1, 10, what="the first miss at the upstream")
    # Every request is in by now or soon: give them time to queue, by
    # waiting for the server to hold 100 client connections.
    harness.wait_until(lambda: client_connections(srv) >= 100, 15, what="100 waiting clients")
    up.release()
    for t in threads:
        t.join(30)
    assert len(results) == 100
    assert up.count("/l") == 1
    assert sorted(st for st, _, _ in results) == ["HIT"] * 99 + ["MISS"]
    assert all(status == 200 and n == 20000 for _, status, n in results)


def client_connections(srv):
    """Established TCP connections to the server's port (the clients)."""
    port = srv.port
    n = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    if fields[3] == "01" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        n += 1
        except OSError:
            pass
    return n


@torii_only
def test_entries_survive_kill_and_restart(make_server, up):
    up.route("/p", body=b"persistent " * 500)
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 10m;"))
    assert status_of(srv, "/p")[0] == "MISS"
    assert status_of(srv, "/p")[0] == "HIT"
    srv.signal(signal.SIGKILL)
    srv.proc.wait(10)
    srv.start()
    st, r = status_of(srv, "/p")
    assert (st, r.body) == ("HIT", b"persistent " * 500)
    assert up.count("/p") == 1
    # The loader learns the entry too (it logs what it found).
    harness.wait_until(lambda: "1 entries" in srv.error_log_text(), 10, what="the loader's line")


@torii_only
def test_write_cut_by_a_crash_is_never_served(make_server, up):
    body = b"x" * 200000
    up.route("/t", body=body, stall_after=50000)  # half the body, then the upstream stalls
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 10m;"))
    done = {}

    def fetch():
        try:
            done["r"] = harness.http(srv.port, "/t", timeout=30)
        except Exception as e:  # the server is killed under it
            done["e"] = e
    t = threading.Thread(target=fetch)
    t.start()
    cache_dir = Path(srv.prefix) / "cache"
    harness.wait_until(lambda: any(p.name.startswith(".tmp-") and p.stat().st_size > 50000
                                   for p in cache_dir.glob(".tmp-*")), 10, what="a half-written entry")
    srv.signal(signal.SIGKILL)
    srv.proc.wait(10)
    t.join(30)
    up.route("/t", body=body)
    up.release()
    srv.start()
    st, r = status_of(srv, "/t")
    assert st == "MISS" and r.body == body
    assert up.count("/t") == 2
    # The killed process's temporary file is removed by the loader.
    harness.wait_until(lambda: not list(cache_dir.glob(".tmp-*")), 10, what="the temporary file to go")
    assert status_of(srv, "/t")[0] == "HIT"


@torii_only
def test_damaged_file_is_removed_not_served(make_server, up):
    up.route("/d", body=b"d" * 5000)
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 10m;"))
    assert status_of(srv, "/d")[0] == "MISS"
    [f] = cache_files(srv)
    srv.signal(signal.SIGKILL)
    srv.proc.wait(10)
    data = f.read_bytes()
    f.write_bytes(data[:-100])  # a truncated body
    srv.start()
    st, r = status_of(srv, "/d")
    assert st == "MISS" and r.body == b"d" * 5000
    assert up.count("/d") == 2
    assert status_of(srv, "/d")[0] == "HIT"


@torii_only
def test_max_size_is_respected(make_server, up):
    for i in range(30):
        up.route(f"/m{i}", body=bytes([65 + i % 26]) * 20000)
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 10m;", path_extra="max_size=200k"))
    for i in range(30):
        assert status_of(srv, f"/m{i}")[0] == "MISS"

    def disk_use():
        # The manager evicts while this counts: a file gone since the
        # listing uses no space.
        total = 0
        for p in cache_files(srv):
            try:
                total += os.stat(p).st_blocks * 512
            except FileNotFoundError:
                pass
        return total
    harness.wait_until(lambda: disk_use() <= 200 * 1024, 10, what="the cache to shrink to max_size")
    assert len(cache_files(srv)) >= 5  # what fits stays
    # The most recent entries are the ones kept.
    assert status_of(srv, "/m29")[0] == "HIT"


@pytest.mark.parametrize("beyond_free_space", [False, True], ids=["room", "no-room"])
def test_min_free_makes_room_on_the_file_system(make_server, up, tmp_path, beyond_free_space):
    """min_free: while the cache's file system has less free space than
    that, the manager removes entries, least recently used first. Asking for
    more than the disk has empties the cache; asking for little keeps it."""
    for i in range(5):
        up.route(f"/f{i}", body=b"F" * 20000)
    fs = os.statvfs(tmp_path)
    free_kb = fs.f_bavail * fs.f_frsize // 1024
    min_free = f"{free_kb + 1024 * 1024}k" if beyond_free_space else "1k"
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 10m;", path_extra=f"min_free={min_free}"))
    for i in range(5):
        assert status_of(srv, f"/f{i}")[0] == "MISS"
    if beyond_free_space:
        harness.wait_until(lambda: not cache_files(srv), 20, what="the manager to empty the cache for min_free")
        assert status_of(srv, "/f0")[0] == "MISS"
    else:
        harness.wait_until(lambda: len(cache_files(srv)) == 5, 10, what="the entries on disk")
        for i in range(5):
            assert status_of(srv, f"/f{i}")[0] == "HIT"


@torii_only
def test_purge_by_key_and_by_prefix(make_server, up):
    for path in ("/a/1", "/a/2", "/b/1"):
        up.route(path, body=path.encode())
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 10m; proxy_cache_purge $purge;", http_extra="""
    geo $purger { default 0; 127.0.0.1 1; }
    map $request_method $purge { PURGE $purger; default 0; }
    """))
    for path in ("/a/1", "/a/2", "/b/1"):
        assert status_of(srv, path)[0] == "MISS"
        assert status_of(srv, path)[0] == "HIT"
    r = harness.http(srv.port, "/a/1", method="PURGE")
    assert r.status == 204
    assert status_of(srv, "/a/1")[0] == "MISS"
    assert status_of(srv, "/a/2")[0] == "HIT"
    r = harness.http(srv.port, "/a/*", method="PURGE")
    assert r.status == 204
    assert status_of(srv, "/a/1")[0] == "MISS"
    assert status_of(srv, "/a/2")[0] == "MISS"
    assert status_of(srv, "/b/1")[0] == "HIT"
    assert harness.http(srv.port, "/nothing/*", method="PURGE").status == 404
    assert up.count("/a/1") == 3 and up.count("/a/2") == 2 and up.count("/b/1") == 1


@torii_only
def test_open_descriptors_stay_bounded(make_server, up):
    """The index keeps the files of its most recently used entries open,
    not of all of them."""
    n = 400
    for i in range(n):
        up.route(f"/f{i}", body=b"f" * 100)
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 10m;"))
    baseline = len(os.listdir(f"/proc/{srv.proc.pid}/fd"))
    for i in range(n):
        assert status_of(srv, f"/f{i}")[0] == "MISS"
        assert status_of(srv, f"/f{i}")[0] == "HIT"
    opened = len(os.listdir(f"/proc/{srv.proc.pid}/fd")) - baseline
    assert opened <= 256 + 16, opened
    assert status_of(srv, "/f0")[0] == "HIT"  # an entry let go is read again from its file
