"""Active health checks (health_check in upstream {}, torii's own
directive): one prober for the process takes a server out when its checks
fail and brings it back when they pass, every worker follows the verdict,
the changes are logged, and a group with no healthy server answers 502 at
once instead of waiting on a dead server per request."""

import re
import signal
import subprocess
import time

import pytest

import harness
from slow_backend import Backend

pytestmark = pytest.mark.skipif(harness.IS_NGINX, reason="health_check is torii's own directive")


@pytest.fixture
def backends():
    made = []

    def make(name, **kw):
        b = Backend(name, **kw)
        made.append(b)
        return b
    yield make
    for b in made:
        b.close()


def conf(upstream_body, extra=""):
    return harness.base_conf(f"""
    upstream app {{
        {upstream_body}
    }}
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{ proxy_pass http://app; {extra} }}
    }}""", main="worker_processes 2;", access_log=False)


def log_has(server, pattern, timeout=10):
    return harness.wait_until(lambda: re.search(pattern, server.error_log_text()), timeout, what=pattern)


def test_stopped_server_is_taken_out_and_brought_back_without_failed_requests(make_server, backends):
    a = backends("a")
    b = backends("b")
    server = make_server(conf(f"""
        server 127.0.0.1:{a.port};
        server 127.0.0.1:{b.port};
        health_check interval=100ms fails=2 passes=2 uri=/health match_status=200-399 timeout=1s;"""))
    # Both are probed, once per interval for the whole process (two
    # workers, one prober): about 10 probes a second, not 20.
    harness.wait_until(lambda: a.count("/health") >= 3 and b.count("/health") >= 3, 10, what="probes")
    t0 = time.monotonic()
    n0 = a.count("/health")
    time.sleep(1.0)
    rate = (a.count("/health") - n0) / (time.monotonic() - t0)
    assert 4 <= rate <= 14, f"{rate} probes/s for interval=100ms"

    # wrk runs until it is interrupted, then prints its totals.
    wrk = subprocess.Popen(["wrk", "-t1", "-c4", "-d60s", f"http://127.0.0.1:{server.port}/"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        harness.wait_until(lambda: a.count("/") > 20, 10, what="traffic on a")
        a.stop()
        log_has(server, rf'\[warn\] .*upstream server 127\.0\.0\.1:{a.port} of "app" is unhealthy: '
                        r'connect\(\) failed \(111: Connection refused\) while checking "/health"')
        # Out: b takes it all.
        b_before = b.count("/")
        harness.wait_until(lambda: b.count("/") > b_before + 20, 10, what="traffic on b")
        a.hits.clear()
        a.start()
        log_has(server, rf'\[notice\] .*upstream server 127\.0\.0\.1:{a.port} of "app" is healthy again')
        # Back at once: the passive failures a took before the check saw it
        # go do not keep it out for fail_timeout (10s) more.
        harness.wait_until(lambda: a.count("/") > 20, 5, what="traffic on a again")
        wrk.send_signal(signal.SIGINT)
        out, _ = wrk.communicate(timeout=30)
    finally:
        if wrk.poll() is None:
            wrk.kill()
            wrk.wait()
    assert wrk.returncode == 0, out
    m = re.search(r"(\d+) requests in", out)
    assert m and int(m.group(1)) > 100, out
    assert "Non-2xx" not in out and "Socket errors" not in out, out
    # One "unhealthy" and one "healthy again" line: the prober's, not one per worker.
    log = server.error_log_text()
    assert len(re.findall(rf"{a.port} of \"app\" is unhealthy", log)) == 1, log
    assert len(re.findall(rf"{a.port} of \"app\" is healthy again", log)) == 1, log


def test_status_outside_match_status_fails_the_check(make_server, backends):
    a = backends("a", health_status=503)
    b = backends("b")
    server = make_server(conf(f"""
        server 127.0.0.1:{a.port};
        server 127.0.0.1:{b.port};
        health_check interval=100ms uri=/health match_status=200;"""))
    log_has(server, rf'upstream server 127\.0\.0\.1:{a.port} of "app" is unhealthy: status 503 does not match')
    served = [harness.http(server.port, "/").body for _ in range(10)]
    assert served == [b"b"] * 10
    assert a.count("/") == 0 or a.count("/") < 3  # only before the first verdict
    a.health_status = 200
    log_has(server, rf'{a.port} of "app" is healthy again')
    harness.wait_until(lambda: b"a" in {harness.http(server.port, "/").body for _ in range(4)}, 10,
                       what="a serving again")


class Silent:
    """Accepts connections (the kernel does, from the backlog) and never answers."""

    def __init__(self):
        import socket
        self.lease = harness.PortLease()
        self.port = self.lease.port
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", self.port))
        self.sock.listen(128)

    def close(self):
        self.sock.close()
        self.lease.release()


def test_group_with_no_healthy_server_answers_502_at_once(make_server):
    silent = Silent()
    try:
        text = conf(f"""
            server 127.0.0.1:{silent.port};
            health_check interval=200ms timeout=300ms;""", extra="proxy_read_timeout 20s;")
        server = make_server(text)
        log_has(server, rf'{silent.port} of "app" is unhealthy: timed out while checking "/"')
        for _ in range(3):
            t0 = time.monotonic()
            r = harness.http(server.port, "/")
            assert r.status == 502
            assert time.monotonic() - t0 < 2, "waited on the dead server"
        log_has(server, r"no live upstreams while connecting to upstream")
        # A reload keeps the verdict: still out at once, never "healthy again".
        server.reload(text + "\n# reloaded\n")
        log_has(server, "reconfiguration done")
        t0 = time.monotonic()
        assert harness.http(server.port, "/").status == 502
        assert time.monotonic() - t0 < 2
        assert "healthy again" not in server.error_log_text()
    finally:
        silent.close()


@pytest.mark.parametrize("line,message", [
    ("health_check interval=0;", 'invalid parameter "interval=0"'),
    ("health_check fails=0;", 'invalid parameter "fails=0"'),
    ("health_check match_status=399-200;", 'invalid parameter "match_status=399-200"'),
    ("health_check uri=health;", 'invalid parameter "uri=health"'),
    ("health_check bogus=1;", 'invalid parameter "bogus=1"'),
    ("health_check; health_check;", '"health_check" directive is duplicate'),
])
def test_bad_health_check_is_a_config_error(tmp_path, line, message):
    (tmp_path / "logs").mkdir()
    (tmp_path / "t.conf").write_text(conf(f"server 127.0.0.1:9; {line}").replace("@PREFIX@", str(tmp_path))
                                     .replace("@PORT@", "1"))
    r = harness.cli(["-t", "-c", str(tmp_path / "t.conf")], prefix=tmp_path)
    assert r.returncode != 0
    assert message in r.stderr, r.stderr
