"""`keepalive N` with more requests in flight than N: the connections
beyond N that come back idle stay a moment (upstream/keepalive_pool.h)
and are taken again, instead of one connect and one close per request
for a large share of the requests as in nginx; and once the load stops,
the idle connections still come down to N."""

import re
import shutil
import subprocess
import time

import pytest

import harness
from test_proxy import nginx_backend, proxy_conf  # noqa: F401  (fixture)

KEEPALIVE = 2
CLIENTS = 16
REQUESTS = 4000


def backend_status(port):
    """(accepted connections, active connections) of the nginx backend;
    the status request's own connection is in both."""
    text = harness.http(port, "/status").body.decode()
    active = int(re.search(r"Active connections: (\d+)", text).group(1))
    accepts = int(text.splitlines()[2].split()[0])
    return accepts, active


@pytest.fixture
def proxied(make_server, nginx_backend):  # noqa: F811
    port = nginx_backend('location / { return 200 "ok\\n"; } location = /status { stub_status; }')
    srv = make_server(proxy_conf(f"""
    upstream app {{ server 127.0.0.1:{port}; keepalive {KEEPALIVE}; }}
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{ proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Connection ""; }}
    }}"""))
    return srv, port


def load(port):
    out = subprocess.run(["h2load", "--h1", "-c", str(CLIENTS), "-n", str(REQUESTS),
                          f"http://127.0.0.1:{port}/"], capture_output=True, text=True, timeout=120).stdout
    assert f"{REQUESTS} succeeded" in out, out


@pytest.mark.skipif(not shutil.which("h2load"), reason="h2load is not installed")
@pytest.mark.skipif(harness.IS_NGINX, reason="nginx closes the excess at once: a connect per request for many")
def test_busy_connections_beyond_keepalive_are_reused(proxied):
    srv, backend = proxied
    before, _ = backend_status(backend)
    load(srv.port)
    after, _ = backend_status(backend)
    connects = after - before - 1
    # At most one connection per client in flight is ever needed; closing
    # the excess as it came back made thousands here.
    assert connects <= 2 * CLIENTS, f"{connects} upstream connections for {REQUESTS} requests"


@pytest.mark.skipif(not shutil.which("h2load"), reason="h2load is not installed")
def test_idle_connections_come_down_to_keepalive(proxied):
    srv, backend = proxied
    load(srv.port)
    deadline = time.monotonic() + 10
    while True:
        _, active = backend_status(backend)
        if active - 1 <= KEEPALIVE or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert active - 1 <= KEEPALIVE, f"{active - 1} connections still open to the backend"
    # And those kept are used: the next requests open none.
    before, _ = backend_status(backend)
    for _ in range(5):
        assert harness.http(srv.port, "/").status == 200
    after, _ = backend_status(backend)
    assert after - before - 1 == 0
