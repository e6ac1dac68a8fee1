"""glibc's per-thread malloc cache: torii runs with 256 blocks per size
(glibc reads that only from GLIBC_TUNABLES at start, so torii executes
itself again once, keeping its pid), unless the user's GLIBC_TUNABLES
already sets glibc.malloc.* settings, which are then left as given."""

import socket
from pathlib import Path

import pytest

import harness
from harness import base_conf

pytestmark = pytest.mark.skipif(harness.IS_NGINX, reason="torii's own allocator settings")

CONF = base_conf(http="""
    server {
        listen 127.0.0.1:@PORT@;
        location / { return 200 "ok\\n"; }
    }
""")


def environ(pid):
    return Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")


def answers(port):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while chunk := s.recv(4096):
            data += chunk
    return data.startswith(b"HTTP/1.1 200") and data.endswith(b"ok\n")


def pid_in_file(srv):
    return int(srv.pid_file.read_text().split()[0])


def test_runs_with_a_larger_thread_cache_under_the_same_pid(make_server, monkeypatch):
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    srv = make_server(CONF)
    assert answers(srv.ports[0])
    env = environ(srv.proc.pid)
    assert any(e.startswith(b"GLIBC_TUNABLES=") and b"glibc.malloc.tcache_count=256" in e for e in env), env
    # Executed again in place: the process the test started is the server.
    assert pid_in_file(srv) == srv.proc.pid


def test_the_users_malloc_tunables_win(make_server, monkeypatch):
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=3")
    srv = make_server(CONF)
    assert answers(srv.ports[0])
    env = environ(srv.proc.pid)
    assert b"GLIBC_TUNABLES=glibc.malloc.tcache_count=3" in env, env
    assert not any(e.startswith(b"TORII_ALLOCATOR_TUNED") for e in env), env
