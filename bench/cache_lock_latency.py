"""Usage: TORII_BIN=... /usr/bin/python3 bench/cache_lock_latency.py RUNS WORKERS

100 simultaneous misses under proxy_cache_lock, one non-blocking client
thread: how long after the first complete response (the one that filled
the entry) each waiting client has its whole response: the time the lock's
waiters take to notice the release."""
import sys, time, statistics, tempfile, socket, selectors
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "integration"))
import harness
from counting_upstream import CountingUpstream
from test_proxy_cache import cache_conf
from test_proxy_cache_store import client_connections

BODY = 20000
def run_once(tmp, workers):
    up = CountingUpstream()
    up.route("/l", body=b"L" * BODY, delay=30)
    srv = harness.Server(cache_conf(up.port, """
            proxy_cache_valid 200 10m;
            proxy_cache_lock on;
            proxy_cache_lock_timeout 60s;
            proxy_cache_lock_age 60s;
    """).replace("events {", f"worker_processes {workers};\nevents {{", 1), Path(tmp))
    srv.start()
    sel = selectors.DefaultSelector()
    socks = []
    try:
        for _ in range(100):
            s = socket.create_connection(("127.0.0.1", srv.port))
            s.sendall(b"GET /l HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            s.setblocking(False)
            socks.append(s)
            sel.register(s, selectors.EVENT_READ, [b"", None])
        harness.wait_until(lambda: up.count("/l") >= 1, 10)
        harness.wait_until(lambda: client_connections(srv) >= 100, 15)
        time.sleep(0.3)
        t0 = time.monotonic()
        up.release()
        done = []
        while len(done) < 100:
            for key, _ in sel.select(10):
                data = key.fileobj.recv(65536)
                key.data[0] += data
                if not data:
                    sel.unregister(key.fileobj)
                    assert len(key.data[0]) > BODY, key.data[0][:200]
                    done.append((time.monotonic() - t0) * 1000)
    finally:
        for s in socks: s.close()
        srv.stop(); up.stop()
    return sorted(done)

workers = int(sys.argv[2]) if len(sys.argv) > 2 else 1
allv = []
for i in range(int(sys.argv[1])):
    with tempfile.TemporaryDirectory() as d:
        lat = run_once(d, workers)
        allv += [x - lat[0] for x in lat[1:]]
        print(f"run {i}: first {lat[0]:.1f} median {statistics.median(lat):.1f} p90 {lat[89]:.1f} max {lat[-1]:.1f} ms")
allv.sort(); n = len(allv)
print(f"after the first response ({workers} workers, {n} waiters): median {statistics.median(allv):.1f} ms, p90 {allv[int(n*0.9)]:.1f} ms, max {allv[-1]:.1f} ms")
