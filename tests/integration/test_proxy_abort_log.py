"""The access log when the client goes away first: a line for every
request, 499 when nothing of a response was sent, the upstream named with
its status ("-" when it had not answered), $body_bytes_sent as what was
actually sent and $request_time up to the last byte or the abort; and
proxy_ignore_client_abort, which decides whether the upstream request goes
on when the client closes its side while it waits."""

import os
import socket
import subprocess
import time

import pytest

import harness
from test_proxy import nginx_backend, upstreams  # noqa: F401 (fixtures)

LOG_FORMAT = "log_format probe '$request|$status|$body_bytes_sent|$upstream_addr|$upstream_status|$request_time';"


def conf(locations, listen_h2=False):
    h2 = "listen 127.0.0.1:@PORT1@ http2;" if listen_h2 else ""
    return harness.base_conf(error_level="info", access_log=False, http=f"""
    {LOG_FORMAT}
    server {{
        access_log @PREFIX@/logs/access.log probe;
        listen 127.0.0.1:@PORT0@;
        {h2}
        root @PREFIX@/html;
        {locations}
    }}""")


def log_line(server, request, timeout=10):
    """The fields of the access log line for `request` ("GET /x HTTP/1.1"),
    waiting for it to appear."""
    def find():
        if not server.access_log.exists():
            return None
        for line in server.access_log.read_text().splitlines():
            fields = line.split("|")
            if fields[0] == request:
                return fields
        return None
    fields = harness.wait_until(find, timeout, what=f"log line for {request!r}")
    return {"status": fields[1], "bytes": int(fields[2]), "upstream_addr": fields[3],
            "upstream_status": fields[4], "time": float(fields[5])}


def test_http1_client_dropping_a_proxied_response_is_logged(make_server, upstreams):
    up = upstreams()
    srv = make_server(conf(f"location / {{ proxy_pass http://127.0.0.1:{up.port}; }}"))
    total = 64 * 1024 * 1024
    with socket.create_connection(("127.0.0.1", srv.port)) as s:
        s.sendall(f"GET /big/{total} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        got = 0
        while got < 1024 * 1024:
            got += len(s.recv(65536))
    line = log_line(srv, f"GET /big/{total} HTTP/1.1")
    assert line["status"] == "200"
    assert line["upstream_addr"] == f"127.0.0.1:{up.port}" and line["upstream_status"] == "200"
    assert 0 < line["bytes"] < total // 2, line


def test_http1_long_poll_abandoned_is_499_and_upstream_closed(make_server, upstreams):
    up = upstreams()
    srv = make_server(conf(f"location / {{ proxy_pass http://127.0.0.1:{up.port}; proxy_read_timeout 30s; }}"))
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", srv.port)) as s:
        s.sendall(b"GET /hold/8 HTTP/1.1\r\nHost: x\r\n\r\n")
        harness.wait_until(lambda: up.requests, 5, what="the request upstream")
    # The upstream connection is closed at once, not when the upstream answers.
    harness.wait_until(lambda: up.holds, 5, what="the upstream connection to end")
    assert up.holds == ["closed"]
    line = log_line(srv, "GET /hold/8 HTTP/1.1")
    assert line["status"] == "499" and line["bytes"] == 0
    assert line["upstream_addr"] == f"127.0.0.1:{up.port}" and line["upstream_status"] == "-"
    assert line["time"] < 5 and time.monotonic() - started < 8


@pytest.mark.parametrize("ignore", ["off", "on"])
def test_proxy_ignore_client_abort_on_a_half_closed_client(make_server, upstreams, ignore):
    # The client sends its request and shuts its side (as `nc -N` does).
    # off: that is an abort (499, the upstream let go); on: the upstream
    # request goes on and the answer still reaches the client.
    up = upstreams()
    srv = make_server(conf(f"""location / {{ proxy_pass http://127.0.0.1:{up.port}; proxy_read_timeout 30s;
                                             proxy_ignore_client_abort {ignore}; }}"""))
    path = "/hold/1" if ignore == "on" else "/hold/8"
    with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        s.shutdown(socket.SHUT_WR)
        received = b""
        while True:
            data = s.recv(65536)
            if not data:
                break
            received += data
    line = log_line(srv, f"GET {path} HTTP/1.1")
    if ignore == "off":
        # Ended long before the upstream would answer (it may not even have
        # had the request yet).
        assert received == b"" and "answered" not in up.holds
        assert line["status"] == "499" and line["upstream_status"] == "-" and line["time"] < 5
    else:
        assert received.startswith(b"HTTP/1.1 200") and received.endswith(b"late"), received
        # The upstream notes "answered" after its send returns, which may be
        # after the proxy has already passed the answer on.
        harness.wait_until(lambda: up.holds, 5, what="the upstream to note its answer")
        assert up.holds == ["answered"]
        assert line["status"] == "200" and line["upstream_status"] == "200" and line["bytes"] == 4


def test_http2_aborts_name_the_upstream(make_server, upstreams):
    up = upstreams()
    srv = make_server(conf(f"location / {{ proxy_pass http://127.0.0.1:{up.port}; proxy_read_timeout 30s; }}",
                           listen_h2=True), nports=2)
    url = f"http://127.0.0.1:{srv.ports[1]}"
    # A long poll given up by the client.
    subprocess.run(["curl", "-s", "--http2-prior-knowledge", "--max-time", "1", "-o", "/dev/null", url + "/hold/8"],
                   timeout=10)
    harness.wait_until(lambda: up.holds, 5, what="the upstream connection to end")
    assert up.holds == ["closed"]
    line = log_line(srv, "GET /hold/8 HTTP/2.0")
    assert line["status"] == "499" and line["upstream_status"] == "-", line
    assert line["upstream_addr"] == f"127.0.0.1:{up.port}" and 0.9 <= line["time"] < 5, line
    # A large response the client stops reading.
    total = 64 * 1024 * 1024
    subprocess.run(["curl", "-s", "--http2-prior-knowledge", "--max-filesize", "1000", "--limit-rate", "1M",
                    "--max-time", "1", "-o", "/dev/null", f"{url}/big/{total}"], timeout=10)
    line = log_line(srv, f"GET /big/{total} HTTP/2.0")
    assert line["status"] == "200" and line["upstream_status"] == "200", line
    assert line["upstream_addr"] == f"127.0.0.1:{up.port}" and 0 < line["bytes"] < total // 2, line


def test_static_download_cut_short_logs_what_was_sent_and_how_long(make_server):
    size = 40 * 1024 * 1024
    srv = make_server(conf("location / { }"), start=False)
    (srv.prefix / "html").mkdir()
    with open(srv.prefix / "html" / "big.bin", "wb") as f:
        f.truncate(size)
    srv.start()
    started = time.monotonic()
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        s.connect(("127.0.0.1", srv.port))
        s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
        got = 0
        while got < 5 * 1024 * 1024:  # a slow reader: about a second for 5 MB
            got += len(s.recv(65536))
            time.sleep(0.01)
        took = time.monotonic() - started
    line = log_line(srv, "GET /big.bin HTTP/1.1")
    assert line["status"] == "200"
    assert 5 * 1024 * 1024 - 4096 < line["bytes"] < size // 2, line
    assert line["time"] >= took - 0.1, (line, took)
