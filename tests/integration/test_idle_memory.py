"""What an idle keep-alive connection costs the server: 1,000 clients each
make one request and stay connected; the server's resident memory (its
whole process tree) may grow by at most 1 KiB per connection. The request
state and the read and write buffers of a connection are given back
between requests, as nginx gives back its request pool."""

import os
import re
import resource
import socket
import time
from pathlib import Path

import pytest

import harness
from harness import base_conf

CONNECTIONS = 1000
MAX_KIB_PER_CONNECTION = 1.0


def sanitized(binary):
    """Sanitizer builds pad every allocation: memory figures do not apply."""
    with open(binary, "rb") as f:
        while chunk := f.read(1 << 20):
            if b"__asan_init" in chunk:
                return True
    return False


def rss_kib(pid):
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            total += int(re.search(r"^VmRSS:\s+(\d+)", Path(f"/proc/{p}/status").read_text(), re.M).group(1))
            for task in os.listdir(f"/proc/{p}/task"):
                todo += [int(c) for c in Path(f"/proc/{p}/task/{task}/children").read_text().split()]
        except (OSError, AttributeError):
            pass
    return total


def one_request(sock):
    sock.sendall(b"GET /small.txt HTTP/1.1\r\nHost: localhost\r\n\r\n")
    data = b""
    while not data.endswith(b"hello\n"):
        chunk = sock.recv(4096)
        assert chunk, "the server closed a keep-alive connection"
        data += chunk


@pytest.mark.skipif(harness.BIN and sanitized(harness.BIN), reason="a sanitizer build pads every allocation")
def test_idle_keepalive_connections_cost_little_memory(make_server):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < CONNECTIONS + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4 * CONNECTIONS), hard))
    srv = make_server(base_conf(
        main="worker_processes 1; worker_rlimit_nofile 4096;", events="", access_log=False,
        http="""
    keepalive_timeout 60s;
    server {
        listen 127.0.0.1:@PORT@;
        root @PREFIX@/www;
    }
""").replace("worker_connections 1024;", "worker_connections 4096;"), start=False)
    (srv.prefix / "www").mkdir(parents=True, exist_ok=True)
    (srv.prefix / "www" / "small.txt").write_text("hello\n")
    srv.start()
    port = srv.ports[0]
    # Warm the server's allocator and caches with connections that come and go.
    for _ in range(50):
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            one_request(s)
    time.sleep(0.3)
    before = rss_kib(srv.proc.pid)
    held = []
    try:
        for _ in range(CONNECTIONS):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            held.append(s)
            one_request(s)
        time.sleep(0.5)
        grown = rss_kib(srv.proc.pid) - before
        # Every connection is still open and served.
        one_request(held[0])
        one_request(held[-1])
    finally:
        for s in held:
            s.close()
    per_connection = grown / CONNECTIONS
    assert per_connection <= MAX_KIB_PER_CONNECTION, f"{per_connection:.2f} KiB per idle connection"
