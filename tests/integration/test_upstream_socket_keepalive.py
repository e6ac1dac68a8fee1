"""proxy_socket_keepalive, fastcgi_socket_keepalive, uwsgi_socket_keepalive
and grpc_socket_keepalive: the upstream connection is opened with
SO_KEEPALIVE, which `ss -o` shows as a keepalive timer on the server's
socket to the upstream; without the directive (off, the default) there is
none. The upstream is a silent TCP server that accepts and holds the
connection, so the socket is looked at while the request waits. The same
tests pass against nginx."""

import socket
import subprocess

import pytest

import harness
import stream_backends

PASS = {"proxy": "proxy_pass http://", "fastcgi": "fastcgi_pass ", "uwsgi": "uwsgi_pass ", "grpc": "grpc_pass grpc://"}


@pytest.fixture
def upstream():
    u = stream_backends.silent()
    yield u
    u.close()


def conf(module, setting, upstream_port):
    line = f"{module}_socket_keepalive {setting};" if setting else ""
    return harness.base_conf(f"""
    server {{
        listen 127.0.0.1:@PORT@;
        {line}
        location / {{
            {PASS[module]}127.0.0.1:{upstream_port};
            {module}_read_timeout 30s;
        }}
    }}
""")


def timers_towards(port):
    """The `ss -o` timer field of each established socket whose peer is `port`."""
    out = subprocess.run(["ss", "-tnoH", "state", "established", "dst", f"127.0.0.1:{port}"],
                         capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if line.strip()]


def held_request(srv):
    c = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    c.sendall(b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/grpc\r\n"
              b"Content-Length: 5\r\n\r\n\0\0\0\0\0")
    return c


@pytest.mark.parametrize("module", sorted(PASS))
@pytest.mark.parametrize("setting", ["on", "off", None])
def test_upstream_socket_keepalive(make_server, upstream, module, setting):
    srv = make_server(conf(module, setting, upstream.port))
    client = held_request(srv)
    try:
        lines = harness.wait_until(lambda: timers_towards(upstream.port), 10, what="the connection to the upstream")
        assert len(lines) == 1, lines
        if setting == "on":
            assert "timer:(keepalive" in lines[0], lines[0]
        else:
            assert "keepalive" not in lines[0], lines[0]
    finally:
        client.close()
