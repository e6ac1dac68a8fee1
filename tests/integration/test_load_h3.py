"""torii-load --h3 (HTTP/3 over QUIC) against torii with `listen ... ssl;
http3 on;`: exact counts with -n over several connections and streams,
every status counted, GOAWAY (keepalive_requests) handled without losing or
repeating a request, the open-loop rate held, and failures counted by kind
(stream resets, a port with no server, a handshake that never completes, a
server stopped mid-run) with the run still ending on time.

torii only: Debian's nginx 1.22 has no HTTP/3 (no http_v3 module), so there
is no nginx to run these against.
"""

import json
import os
import pty
import re
import select
import signal
import socket
import subprocess
import time

import pytest

import harness
from harness import base_conf, wait_until
from test_load import LOAD, run_load

pytestmark = [
    pytest.mark.skipif(not LOAD, reason="torii-load not built"),
    pytest.mark.skipif(harness.IS_NGINX, reason="Debian's nginx 1.22 has no HTTP/3 (no http_v3 module)"),
]


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    d = tmp_path_factory.mktemp("h3loadcert")
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-keyout", "key.pem", "-out", "cert.pem", "-days", "2", "-subj", "/CN=localhost"],
                       cwd=d, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return d


def h3_conf(cert, keepalive_requests=1000, silent_port=1):
    return base_conf(f"""
    log_format proto '$server_protocol $status $request_uri';
    access_log @PREFIX@/logs/proto.log proto;
    keepalive_requests {keepalive_requests};
    server {{
        listen 127.0.0.1:@PORT0@ ssl;
        http3 on;
        http3_max_concurrent_streams 16;
        server_name localhost;
        ssl_certificate {cert}/cert.pem;
        ssl_certificate_key {cert}/key.pem;
        location = /ok {{ return 200 "ok\\n"; }}
        location = /fail {{ return 503; }}
        location = /close {{ return 444; }}
        location /echo {{ return 200 "$request_method $content_length\\n"; }}
        location /silent {{ proxy_pass http://127.0.0.1:{silent_port}; proxy_read_timeout 60s; }}
        location / {{ return 404; }}
    }}
""")


@pytest.fixture
def h3_server(make_server, cert):
    def make(**kwargs):
        return make_server(h3_conf(cert, **kwargs))
    return make


def url(srv, path="/ok"):
    return f"https://localhost:{srv.port}{path}"


def logged(srv):
    """(protocol, status, uri) of each request the server logged, read once
    it has stopped (so every buffered line is written)."""
    srv.stop()
    return [tuple(line.split(" ")) for line in (srv.prefix / "logs" / "proto.log").read_text().splitlines()]


def test_exactly_n_requests_over_several_connections_and_streams(h3_server, tmp_path):
    srv = h3_server()
    s, out = run_load(tmp_path, "--h3", "-n", 1001, "-c", 4, "-m", 10, "-t", 2, url(srv))
    assert s["protocol"] == "HTTP/3"
    assert s["http_reqs"]["count"] == 1001
    assert s["status"] == {"200": 1001}
    assert s["http_req_failed"]["count"] == 0
    assert sum(s["errors"].values()) == 0
    assert s["connections_opened"] == 4 and s["tls_handshakes"] == 4
    d = s["http_req_duration"]
    assert d["count"] == 1001 and 0 < d["min"] <= d["med"] <= d["p99"] <= d["max"]
    # Stream bytes: at least the HEADERS and DATA frames of every response.
    assert s["data_received"]["bytes"] > 1001 * len("ok\n")
    assert s["data_sent"]["bytes"] > 0
    assert "HTTP/3" in out
    lines = logged(srv)
    assert len(lines) == 1001
    assert all(l[0] == "HTTP/3.0" and l[1] == "200" for l in lines)


def test_every_status_is_counted(h3_server, tmp_path):
    srv = h3_server()
    s, _ = run_load(tmp_path, "--h3", "-n", 400, "-c", 4, "-m", 10, url(srv, "/ok"), url(srv, "/missing"))
    assert s["http_reqs"]["count"] == 400
    assert s["status"]["200"] + s["status"]["404"] == 400
    assert s["status"]["200"] >= 150 and s["status"]["404"] >= 150  # the URLs alternate per connection
    assert s["http_req_failed"]["count"] == s["status"]["404"]  # 4xx fail, as k6 counts them
    s, out = run_load(tmp_path, "--h3", "-n", 100, "-c", 2, "-m", 5, url(srv, "/fail"))
    assert s["status"] == {"503": 100}
    assert s["http_req_failed"] == {"rate": 1, "count": 100}
    assert "503=100" in out
    lines = logged(srv)
    assert sorted(l[1] for l in lines).count("404") == len([l for l in lines if l[2] == "/missing"])
    assert len(lines) == 500


def test_request_bodies_are_sent(h3_server, tmp_path):
    srv = h3_server()
    body = tmp_path / "body"
    body.write_bytes(b"x" * 3000)
    s, _ = run_load(tmp_path, "--h3", "-n", 50, "-c", 2, "-m", 4, "--method", "POST", "--body", body,
                    url(srv, "/echo"))
    assert s["status"] == {"200": 50}
    assert s["data_sent"]["bytes"] >= 50 * 3000
    lines = logged(srv)
    assert len(lines) == 50


def test_goaway_from_keepalive_requests_loses_and_repeats_nothing(h3_server, tmp_path):
    # keepalive_requests 50: each connection ends with GOAWAY after 50
    # requests; new ones take the rest. Every request is answered once.
    srv = h3_server(keepalive_requests=50)
    s, _ = run_load(tmp_path, "--h3", "-n", 1000, "-c", 4, "-m", 10, url(srv))
    assert s["http_reqs"]["count"] == 1000
    assert s["status"] == {"200": 1000}
    # Requests already on their way when the GOAWAY left are still
    # answered, so a connection may serve a few more than 50; without the
    # limit, the 4 warm-up connections would serve them all.
    assert s["connections_opened"] >= 10
    assert len(logged(srv)) == 1000


def test_open_loop_rate_is_held(h3_server, tmp_path):
    srv = h3_server()
    s, out = run_load(tmp_path, "--h3", "--rate", 1000, "-d", 3, "-c", 10, "-m", 10, url(srv))
    assert s["mode"] == "open"
    assert abs(s["duration_s"] - 3) < 0.01
    rate = s["http_reqs"]["count"] / s["duration_s"]
    assert abs(rate - 1000) / 1000 <= 0.02, out
    assert s["http_req_failed"]["count"] == 0


def test_stream_resets_are_counted(h3_server, tmp_path):
    # return 444 over HTTP/3 resets the request stream.
    srv = h3_server()
    s, _ = run_load(tmp_path, "--h3", "-n", 40, "-c", 2, "-m", 4, url(srv, "/close"))
    assert s["http_reqs"]["count"] == 40
    assert s["errors"]["reset"] == 40
    assert s["status"] == {}
    assert "stream reset" in s["error_messages"]["reset"]


def test_a_response_that_never_comes_is_a_timeout(h3_server, tmp_path):
    # The upstream takes the connection (the kernel's backlog) and never
    # answers; torii waits for it, and torii-load's --timeout ends the wait.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    try:
        srv = h3_server(silent_port=silent.getsockname()[1])
        started = time.monotonic()
        s, _ = run_load(tmp_path, "--h3", "-n", 3, "-c", 1, "-m", 3, "--timeout", "1s", url(srv, "/silent"))
        assert time.monotonic() - started < 10
    finally:
        silent.close()
    assert s["http_reqs"]["count"] == 3
    assert s["errors"]["timeout"] == 3
    assert s["status"] == {}


def test_no_server_on_the_port_is_a_connect_error(tmp_path):
    lease = harness.PortLease()  # held, never listened on
    try:
        s, _ = run_load(tmp_path, "--h3", "-n", 10, "-c", 2, f"https://localhost:{lease.port}/")
    finally:
        lease.release()
    assert s["http_reqs"]["count"] == 10
    assert s["errors"]["connect"] == 10
    assert "refused" in s["error_messages"]["connect"]
    assert s["connections_opened"] == 0


def test_a_handshake_that_never_completes_is_a_tls_error(tmp_path):
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # takes datagrams, never answers
    silent.bind(("127.0.0.1", 0))
    try:
        s, _ = run_load(tmp_path, "--h3", "-n", 2, "-c", 1, "--timeout", "500ms",
                        f"https://localhost:{silent.getsockname()[1]}/")
    finally:
        silent.close()
    assert s["http_reqs"]["count"] == 2
    assert s["errors"]["tls"] == 2
    assert "handshake timed out" in s["error_messages"]["tls"]


def test_server_stopped_mid_run_counts_errors_and_ends_on_time(h3_server, tmp_path):
    srv = h3_server()
    out = tmp_path / "stopped.json"
    # On a terminal torii-load prints a progress line each second: the first
    # one with answered requests says the run is under way.
    controller, terminal = pty.openpty()
    load = subprocess.Popen([LOAD, "--json", str(out), "--h3", "--rate", "400", "-d", "4", "-c", "4", "-m", "4",
                             url(srv)], stdout=terminal, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    os.close(terminal)
    seen = b""
    try:
        while not re.search(rb"s  [1-9][0-9]* requests", seen):
            ready, _, _ = select.select([controller], [], [], 10)
            assert ready, seen
            seen += os.read(controller, 4096)
        # The server goes away without a goodbye; its port then answers
        # with ICMP port unreachable.
        srv.proc.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # EIO: the tool exited
                break
            if not chunk:
                break
            seen += chunk
        assert load.wait(timeout=20) == 0, load.stderr.read()
    finally:
        os.close(controller)
        if load.poll() is None:
            load.kill()
            load.wait()
    assert time.monotonic() - killed < 5  # the run ended at -d, not at some timeout
    s = json.loads(out.read_text())
    assert abs(s["duration_s"] - 4) < 0.1, seen
    assert s["status"].get("200", 0) > 0
    errors = s["errors"]
    assert errors["connect"] + errors["reset"] > 0, seen
    assert s["http_req_failed"]["count"] == sum(errors.values())
