"""limit_req: nginx's leaky bucket seen by a timed client. Counts of
refused requests and the delays of waiting ones follow from the rate, the
burst and nodelay/delay=, the same against nginx (TORII_BIN=/usr/sbin/nginx)."""

import re
import socket
import threading
import time

import harness
from harness import http

CONF = r"""
    limit_req_zone $binary_remote_addr zone=slow:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=five:1m rate=5r/s;
    limit_req_zone $arg_k zone=bykey:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=dry:1m rate=1r/m;
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        root @PREFIX@/www;
        add_header X-Limit $limit_req_status always;

        location /nodelay/ { limit_req zone=slow burst=3 nodelay; }
        location /status429/ {
            limit_req zone=slow;
            limit_req_status 429;
            limit_req_log_level warn;
        }
        location /keyed/ { limit_req zone=bykey burst=1 nodelay; }
        location /dry/ { limit_req zone=dry; limit_req_dry_run on; }
        location /delayed/ { limit_req zone=five burst=20; }
        location /partial/ { limit_req zone=five burst=20 delay=2; }
        location /free/ { }
    }
"""


def make(make_server):
    srv = make_server(harness.base_conf(CONF, error_level="info"), start=False)
    for d in ("nodelay", "status429", "keyed", "dry", "delayed", "partial", "free"):
        (srv.prefix / "www" / d).mkdir(parents=True, exist_ok=True)
        (srv.prefix / "www" / d / "index.html").write_text(d + "\n")
    srv.start()
    return srv


def statuses(port, path, n):
    out = []
    with harness.Conn(port) as c:
        for _ in range(n):
            r = c.request("GET", path)
            out.append((r.status, r.header("X-Limit")))
    return out


def test_burst_with_nodelay_passes_burst_plus_one_then_refuses(make_server):
    srv = make(make_server)
    got = statuses(srv.port, "/nodelay/", 8)
    # The first request makes the bucket (excess 0), the next three fill
    # the burst of 3; at 1r/m nothing leaks meanwhile.
    assert [s for s, _ in got] == [200] * 4 + [503] * 4, got
    assert [h for _, h in got] == ["PASSED"] * 4 + ["REJECTED"] * 4, got
    log = srv.error_log_text()
    assert re.search(r'\[error\] .*limiting requests, excess: 4\.\d{3} by zone "slow", client: 127\.0\.0\.1', log) or \
        re.search(r'\[error\] .*limiting requests, excess: 3\.99\d by zone "slow", client: 127\.0\.0\.1', log), log


def test_status_and_log_level(make_server):
    srv = make(make_server)
    got = statuses(srv.port, "/status429/", 3)
    assert [s for s, _ in got] == [200, 429, 429], got
    assert re.search(r'\[warn\] .*limiting requests, excess: [01]\.\d{3} by zone "slow"', srv.error_log_text())


def test_each_key_has_its_own_bucket(make_server):
    srv = make(make_server)
    a = [s for s, _ in statuses(srv.port, "/keyed/?k=a", 3)]
    b = [s for s, _ in statuses(srv.port, "/keyed/?k=b", 3)]
    # An empty key is not limited at all.
    none = [s for s, _ in statuses(srv.port, "/keyed/", 5)]
    assert a == [200, 200, 503], a
    assert b == [200, 200, 503], b
    assert none == [200] * 5, none


def test_dry_run_counts_but_never_refuses(make_server):
    srv = make(make_server)
    got = statuses(srv.port, "/dry/", 3)
    assert got == [(200, "PASSED"), (200, "REJECTED_DRY_RUN"), (200, "REJECTED_DRY_RUN")], got
    assert 'limiting requests, dry run, excess:' in srv.error_log_text()


def timed(port, path, n):
    """Sends n requests one after the other on one connection; the time
    each response came, from the first request's start."""
    times = []
    with harness.Conn(port) as c:
        t0 = time.monotonic()
        for _ in range(n):
            r = c.request("GET", path)
            assert r.status == 200, r
            times.append((time.monotonic() - t0, r.header("X-Limit")))
    return times


def test_requests_over_the_rate_wait_for_the_bucket(make_server):
    srv = make(make_server)
    got = timed(srv.port, "/delayed/", 6)
    # 5r/s: each request after the first finds one request's worth in the
    # bucket and waits 200 ms for it to leak.
    assert got[0][1] == "PASSED"
    assert all(h == "DELAYED" for _, h in got[1:]), got
    assert got[-1][0] >= 5 * 0.2 - 0.05, got
    assert got[-1][0] < 5 * 0.2 + 1.5, got
    assert re.search(r'\[warn\] .*delaying request, excess: [01]\.\d{3}, by zone "five"', srv.error_log_text())


def test_delay_parameter_passes_that_many_at_once(make_server):
    srv = make(make_server)
    got = timed(srv.port, "/partial/", 5)
    # delay=2: excess up to 2 requests passes at once, the 4th waits.
    assert [h for _, h in got] == ["PASSED", "PASSED", "PASSED", "DELAYED", "DELAYED"], got
    assert got[2][0] < 0.15, got
    assert got[3][0] >= 0.15, got


def test_parallel_clients_are_spread_over_time(make_server):
    srv = make(make_server)
    results = []
    lock = threading.Lock()

    def one():
        t0 = time.monotonic()
        r = http(srv.port, "/delayed/")
        with lock:
            results.append((r.status, time.monotonic() - t0))

    threads = [threading.Thread(target=one) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(s == 200 for s, _ in results), results
    # One passes at once; the others wait 200, 400, 600, 800 ms.
    longest = max(t for _, t in results)
    assert longest >= 0.75, results


def test_a_client_that_leaves_while_delayed_is_forgotten(make_server):
    srv = make(make_server)
    assert http(srv.port, "/delayed/").status == 200
    # Fill the bucket with waiting requests whose clients go away.
    for _ in range(5):
        s = socket.create_connection(("127.0.0.1", srv.port))
        s.sendall(b"GET /delayed/ HTTP/1.1\r\nHost: localhost\r\n\r\n")
        s.close()
    # The server stays up and answers others.
    assert http(srv.port, "/free/").status == 200
    harness.wait_until(lambda: http(srv.port, "/delayed/").status == 200, 10, what="delayed request answered")
