"""The `listen` parameters that are socket options, seen from outside with
ss(8): `backlog=` (the listen queue's size), `rcvbuf=`/`sndbuf=`,
`deferred` (TCP_DEFER_ACCEPT: a connection that has sent nothing stays
with the kernel) and `so_keepalive=` (keep-alive timers on accepted
connections). `fastopen=` is accepted and set. The same tests pass
against nginx."""

import re
import socket
import subprocess

import harness

CONF = r"""
    server {
        listen 127.0.0.1:@PORT0@ backlog=77 rcvbuf=64k sndbuf=32k fastopen=16;
        listen 127.0.0.1:@PORT1@ deferred;
        listen 127.0.0.1:@PORT2@ so_keepalive=30m:10s:3;
        listen 127.0.0.1:@PORT3@;
        server_name localhost;
        return 200 "ok\n";
    }
"""


def ss(*args):
    return subprocess.run(["ss", "-tn", *args], capture_output=True, text=True, check=True).stdout


def listening(port):
    """ss's lines for the listening socket(s) on this port, with memory."""
    out = subprocess.run(["ss", "-ltnm", f"sport = :{port}"], capture_output=True, text=True, check=True).stdout
    return out


def test_backlog_and_buffers(make_server):
    s = make_server(harness.base_conf(CONF, main="worker_processes 1;"), nports=4)
    out = listening(s.ports[0])
    assert re.search(r"LISTEN\s+\d+\s+77\s", out), out  # Send-Q of a listener: its backlog
    m = re.search(r"rb(\d+),t\d+,tb(\d+)", out)
    # The kernel doubles what it is given.
    assert m and int(m.group(1)) == 2 * 64 * 1024 and int(m.group(2)) == 2 * 32 * 1024, out
    assert harness.http(s.ports[0], "/").status == 200


def server_side_state(port, client_port):
    out = ss("-a", f"sport = :{port} and dport = :{client_port}")
    lines = [line for line in out.splitlines()[1:] if line.strip()]
    return lines[0].split()[0] if lines else None


def test_deferred_keeps_a_silent_connection_from_the_server(make_server):
    s = make_server(harness.base_conf(CONF, main="worker_processes 1;"), nports=4)
    for port, want in ((s.ports[1], "SYN-RECV"), (s.ports[3], "ESTAB")):
        c = socket.create_connection(("127.0.0.1", port))
        try:
            client_port = c.getsockname()[1]
            state = harness.wait_until(lambda: server_side_state(port, client_port), 5, what="server-side socket")
            assert state == want, (port, state)
        finally:
            c.close()
    # Data makes the deferred connection an ordinary one.
    assert harness.http(s.ports[1], "/").status == 200


def test_so_keepalive_sets_timers_on_accepted_connections(make_server):
    s = make_server(harness.base_conf(CONF, main="worker_processes 1;"), nports=4)
    for port, want in ((s.ports[2], True), (s.ports[3], False)):
        with harness.Conn(port) as c:
            r = c.request("GET", "/", headers={"Connection": "keep-alive"})
            assert r.status == 200
            client_port = c.sock.getsockname()[1]
            out = ss("-o", "state", "established", f"sport = :{port} and dport = :{client_port}")
            assert ("keepalive" in out) == want, out
            if want:
                # TCP_KEEPIDLE 30 min: the first probe is about that far away.
                m = re.search(r"timer:\(keepalive,(\d+)min", out)
                assert m and 28 <= int(m.group(1)) <= 30, out


def test_bind_gives_an_address_its_own_socket_beside_a_wildcard(make_server):
    """`listen ADDR:PORT bind` beside `listen PORT` on the same port: the
    address has its own listening socket, and each server answers on its
    own addresses. (`reuseport` on both: without it Linux refuses nginx's
    wildcard bind once the address listens.)"""
    conf = r"""
    server {
        listen @PORT0@ reuseport;
        return 200 "wildcard\n";
    }
    server {
        listen 127.0.0.1:@PORT0@ bind reuseport;
        return 200 "loopback\n";
    }
"""
    s = make_server(harness.base_conf(conf, main="worker_processes 1;"))
    out = subprocess.run(["ss", "-ltn", f"sport = :{s.port}"], capture_output=True, text=True, check=True).stdout
    assert f"127.0.0.1:{s.port} " in out, out
    assert f"0.0.0.0:{s.port} " in out or f"*:{s.port} " in out, out
    assert harness.http(s.port, "/").body == b"loopback\n"
    with socket.create_connection(("127.0.0.2", s.port), timeout=5) as c:
        c.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        reply = b""
        while chunk := c.recv(4096):
            reply += chunk
    assert reply.endswith(b"wildcard\n"), reply
