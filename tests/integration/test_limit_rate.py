"""limit_rate, limit_rate_after, `set $limit_rate` and the upstream's
X-Accel-Limit-Rate: a body's throughput measured by the client, over
HTTP/1.1 and HTTP/2 (h2c prior knowledge). nginx lets the first second's
worth go at once (its allowance is rate x (seconds + 1)), so a body of N
bytes at R bytes/s takes about (N - R) / R seconds. The same expectations
hold against nginx (TORII_BIN=/usr/sbin/nginx)."""

import subprocess
import time

import pytest

import harness
from echo_backend import AppBackend

RATE = 100 * 1024
SIZE = 400 * 1024

CONF = r"""
    # The core docs' example: the rate chosen per request by a map.
    map $arg_slow $mapped_rate { default 0; 1 100k; }
    map $arg_slow $mapped_after { default ""; 1 200k; }
    server {
        listen 127.0.0.1:@PORT@;
        listen 127.0.0.1:@PORT1@ http2;
        server_name localhost;
        root @PREFIX@/www;
        location /rate/ { limit_rate 100k; }
        location /after/ { limit_rate 100k; limit_rate_after 200k; }
        location /var/ { set $limit_rate 200k; }
        location /mapped/ { limit_rate $mapped_rate; limit_rate_after $mapped_after; }
        location /free/ { }
        location /accel/ { proxy_pass http://127.0.0.1:@BACKEND@/; }
    }
"""


@pytest.fixture
def srv(make_server):
    # SIZE bytes that the upstream asks to be sent at RATE.
    backend = AppBackend(lambda _request: (200, {"X-Accel-Limit-Rate": str(RATE)}, b"a" * SIZE), protocol="HTTP/1.0")
    s = make_server(harness.base_conf(CONF.replace("@BACKEND@", str(backend.port))), nports=2,
                    start=False)
    for d in ("rate", "after", "var", "free", "mapped"):
        (s.prefix / "www" / d).mkdir(parents=True, exist_ok=True)
        (s.prefix / "www" / d / "big").write_bytes(b"x" * SIZE)
    s.start()
    yield s
    backend.stop()


def fetch(port, path, h2=False):
    args = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{size_download} %{time_total}"]
    if h2:
        args.append("--http2-prior-knowledge")
    out = subprocess.run(args + [f"http://127.0.0.1:{port}{path}"], capture_output=True, text=True, timeout=30)
    code, size, seconds = out.stdout.split()
    assert code == "200" and int(size) == SIZE, out.stdout
    return float(seconds)


def expect(seconds, paced_bytes, rate):
    want = paced_bytes / rate
    # nginx counts whole seconds, torii milliseconds: within half a second
    # early, a second late.
    assert want - 0.6 <= seconds <= want + 1.2, (seconds, want)


def test_limit_rate_paces_http1(srv):
    expect(fetch(srv.port, "/rate/big"), SIZE - RATE, RATE)


def test_limit_rate_paces_http2_streams(srv):
    expect(fetch(srv.ports[1], "/rate/big", h2=True), SIZE - RATE, RATE)


def test_limit_rate_after_sends_the_first_bytes_at_once(srv):
    expect(fetch(srv.port, "/after/big"), SIZE - 200 * 1024 - RATE, RATE)


def test_set_limit_rate(srv):
    expect(fetch(srv.port, "/var/big"), SIZE - 2 * RATE, 2 * RATE)


def test_limit_rate_from_a_variable(srv):
    expect(fetch(srv.port, "/mapped/big?slow=1"), SIZE - 200 * 1024 - RATE, RATE)
    assert fetch(srv.port, "/mapped/big") < 0.5  # "0": no limit


def test_unlimited_is_fast(srv):
    assert fetch(srv.port, "/free/big") < 0.5


def test_x_accel_limit_rate_from_the_upstream(srv):
    expect(fetch(srv.port, "/accel/"), SIZE - RATE, RATE)
