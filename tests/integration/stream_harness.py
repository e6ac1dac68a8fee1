"""What the stream tests share: the stream {} block around a test's
servers (nginx loads its stream module), starting one behind a TCP
readiness server, the `-t` check of a config that must be refused, the
`peers` fixture (stream_backends.py's TCP and UDP peers, closed when the
test ends) and the client side: connecting, reading, and waiting for a
session's access or error log line. Used alike against torii and nginx."""

import re
import socket

import pytest

import harness
from harness import IS_NGINX, base_conf, cli, wait_until
import stream_backends as sb

STREAM_MODULE = "/usr/lib/nginx/modules/ngx_stream_module.so"


def stream_conf(stream):
    main = f"load_module {STREAM_MODULE};\n" if IS_NGINX else ""
    return base_conf("", main=main + "stream {\n" + stream + "\n}\n")


def ready_conf(servers, top=""):
    """A stream block with `top` at its level, a TCP server on @PORT@ that
    the harness polls for readiness (its probes then count nowhere else,
    and a UDP port cannot be probed), and `servers` (on @PORT1@ and up)."""
    return stream_conf(f"""
        {top}
        server {{
            listen 127.0.0.1:@PORT@;
            return "ready\\n";
        }}
        {servers}""")


def ready_server(make_server, servers, top="", nports=2):
    """ready_conf's server, started once @PORT@ answers."""
    return make_server(ready_conf(servers, top), nports=nports, wait_ports=[0])


def check_t(make_server, conf):
    """`-t` on the config `conf` (its ports leased, nothing started): the
    finished process."""
    server = make_server(conf, start=False)
    server.leases = [harness.PortLease()]
    server.ports = [server.leases[0].port]
    server.write_conf()
    return cli(["-t", "-c", str(server.conf_path)], prefix=server.prefix)


def check_refused(make_server, stream, message, conf=None):
    """`-t` refuses the stream block `stream` (or the whole `conf`) and
    says `message`."""
    p = check_t(make_server, conf or stream_conf(stream))
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    assert message in out, out


@pytest.fixture
def peers():
    """peers(kind, *args): a peer of stream_backends.py ("echo", "udp_echo",
    "DeadPort"...), closed when the test ends."""
    made = []

    def make(kind, *args, **kwargs):
        p = getattr(sb, kind)(*args, **kwargs)
        made.append(p)
        return p

    yield make
    for p in made:
        p.close()


def connect(port, timeout=10):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def read_exactly(s, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = s.recv(min(65536, n - len(buf)))
        if not chunk:
            break
        buf += chunk
    return bytes(buf)


def read_to_end(s):
    buf = bytearray()
    while True:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        buf += chunk
    return bytes(buf)


def log_lines(server, port):
    """The access log lines of the sessions from the client port `port`."""
    if not server.access_log.exists():
        return []
    prefix = f"127.0.0.1:{port} "
    return [l for l in server.access_log.read_text().splitlines() if l.startswith(prefix)]


def log_line(server, client, timeout=10):
    """The access log line of the session from `client` (a socket, or its
    local port once closed); the harness's readiness probes have lines of
    their own."""
    port = client if isinstance(client, int) else client.getsockname()[1]
    return wait_until(lambda: (log_lines(server, port) or [None])[0], timeout, what="the session's access log line")


def error_log_has(server, pattern):
    return wait_until(lambda: re.search(pattern, server.error_log_text()), 10, what=f"error log: {pattern}")
