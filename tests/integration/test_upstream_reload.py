"""Reloads under proxied load must not leave upstream connections behind:
each retired config's idle keep-alive pool is closed (or handed to the new
config's pool of the same upstream), so the server's descriptors and the
backend's connections stay bounded however often it reloads."""

import os
import threading

import harness
from test_proxy import nginx_backend  # noqa: F401  (fixture)

WORKERS = 2
KEEPALIVE = 8
RELOADS = 8


def conf(port, generation):
    return harness.base_conf(f"""
    upstream app {{ server 127.0.0.1:{port}; keepalive {KEEPALIVE}; }}
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{
            proxy_pass http://app;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }}
        location = /generation {{ return 200 "{generation}"; }}
    }}""", main=f"worker_processes {WORKERS};", access_log=False)


def established_to(port):
    """Connections accepted by the backend listening on `port` and still open."""
    n = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            next(f)
            for line in f:
                fields = line.split()
                if fields[3] == "01" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                    n += 1
    return n


def descriptors(pid):
    """Open descriptors of `pid` and its children (nginx's workers)."""
    total = len(os.listdir(f"/proc/{pid}/fd"))
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                children = f.read().split()
        except OSError:
            continue
        for child in children:
            try:
                total += len(os.listdir(f"/proc/{child}/fd"))
            except OSError:
                pass
    return total


def load(port, clients=16, requests=10):
    """`clients` keep-alive connections at once, each sending `requests`:
    enough overlap to fill every worker's pool."""
    failures = []

    def client():
        try:
            with harness.Conn(port) as c:
                for _ in range(requests):
                    r = c.request("GET", "/", [], None, "localhost")
                    if r.status != 200:
                        failures.append(r.status)
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append(repr(e))
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[:5]


def test_reloads_leave_no_upstream_connections_behind(make_server, nginx_backend):  # noqa: F811
    backend = nginx_backend('location / { return 200 "ok"; }')
    srv = make_server(conf(backend, 0))
    load(srv.port)
    # Every worker's pool holds at most KEEPALIVE idle connections; a few
    # more may be in flight while a request finishes.
    bound = WORKERS * KEEPALIVE + 4
    base_fds = descriptors(srv.proc.pid)
    for generation in range(1, RELOADS + 1):
        srv.reload(conf(backend, generation))
        harness.wait_body(srv.port, "/generation", str(generation))
        load(srv.port)
    # Without the fix each reload leaves its pools open until the upstream
    # keepalive_timeout (60 s): about RELOADS * WORKERS * KEEPALIVE.
    harness.wait_until(lambda: established_to(backend) <= bound, 10,
                       what=f"at most {bound} connections at the backend (now {established_to(backend)})")
    harness.wait_until(lambda: descriptors(srv.proc.pid) <= base_fds + bound, 10,
                       what=f"descriptors back near {base_fds} (now {descriptors(srv.proc.pid)})")
    load(srv.port)  # and the proxy still works
