"""stream {}: limit_conn_zone, limit_conn, limit_conn_log_level,
limit_conn_dry_run and $limit_conn_status (ngx_stream_limit_conn_module),
for TCP connections and UDP sessions. The same tests run against Debian's
nginx with its stream module loaded."""

import socket

import pytest

import stream_backends as sb
from harness import wait_until
from stream_harness import check_refused, connect, error_log_has, log_line, peers, read_exactly, ready_server  # noqa: F401

LOG_FORMAT = "log_format lc '$remote_addr:$remote_port $protocol $status \"$limit_conn_status\"';"


def limited(make_server, backend_port, extra=""):
    """The limited server on @PORT1@; the harness polls the unlimited
    @PORT@ for readiness, so its probes hold no count."""
    return ready_server(make_server, f"""
        server {{
            listen 127.0.0.1:@PORT1@;
            proxy_pass 127.0.0.1:{backend_port};
            limit_conn addr 1;
            access_log @PREFIX@/logs/access.log lc;
            {extra}
        }}""", top=LOG_FORMAT + "\nlimit_conn_zone $binary_remote_addr zone=addr:1m;")


def closed_at_once(s):
    s.settimeout(5)
    try:
        return s.recv(100) == b""
    except ConnectionResetError:
        return True


def test_second_connection_from_one_address_is_refused(make_server, peers):
    backend = peers("echo")
    server = limited(make_server, backend.port, "limit_conn_log_level warn;")
    first = connect(server.ports[1])
    try:
        first.sendall(b"hi\n")
        assert read_exactly(first, 3) == b"hi\n"
        second = connect(server.ports[1])
        port = second.getsockname()[1]
        assert closed_at_once(second)  # without a byte
        second.close()
        assert log_line(server, port).endswith(' TCP 503 "REJECTED"')
        error_log_has(server, r'\[warn\] .*limiting connections by zone "addr" while initializing session, '
                              r'client: 127\.0\.0\.1')
        # The first still works.
        first.sendall(b"still\n")
        assert read_exactly(first, 6) == b"still\n"
    finally:
        first_port = first.getsockname()[1]
        first.close()
    assert log_line(server, first_port).endswith(' TCP 200 "PASSED"')
    # Its count went with it: a new connection passes.
    def passes():
        with connect(server.ports[1]) as s:
            s.sendall(b"again\n")
            s.settimeout(5)
            try:
                return s.recv(100) == b"again\n"
            except (ConnectionResetError, TimeoutError):
                return False
    assert wait_until(passes, 10, what="a connection after the first closed")


def test_dry_run_passes_and_says_so(make_server, peers):
    backend = peers("echo")
    server = limited(make_server, backend.port, "limit_conn_dry_run on;")
    with connect(server.ports[1]) as first, connect(server.ports[1]) as second:
        for s in (first, second):
            s.sendall(b"ok\n")
            assert read_exactly(s, 3) == b"ok\n"
        port = second.getsockname()[1]
    assert log_line(server, port).endswith(' TCP 200 "REJECTED_DRY_RUN"')
    error_log_has(server, r'limiting connections, dry run, by zone "addr"')


def test_udp_sessions_count_too(make_server):
    silent = sb.udp_silent()
    try:
        server = ready_server(make_server, f"""
            server {{
                listen 127.0.0.1:@PORT1@ udp;
                proxy_pass 127.0.0.1:{silent.port};
                proxy_timeout 5s;
                access_log @PREFIX@/logs/access.log lc;
            }}""", top=LOG_FORMAT + "\nlimit_conn_zone $binary_remote_addr zone=addr:1m;\nlimit_conn addr 1;")
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as a, \
                socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as b:
            a.bind(("127.0.0.1", 0))
            b.bind(("127.0.0.1", 0))
            a.sendto(b"first", ("127.0.0.1", server.ports[1]))
            # Relayed: the first session holds its count (until proxy_timeout).
            wait_until(lambda: silent.received, 10, what="the first datagram relayed")
            b.sendto(b"second", ("127.0.0.1", server.ports[1]))
            assert log_line(server, b.getsockname()[1]).endswith(' UDP 503 "REJECTED"')
    finally:
        silent.close()


@pytest.mark.parametrize("body,message", [
    ("limit_conn_zone $binary_remote_addr zone=a:1m; server { listen 127.0.0.1:@PORT@; return x; limit_conn a 0; }",
     'invalid number of connections "0"'),
    ("limit_conn_zone $binary_remote_addr zone=a:1m; server { listen 127.0.0.1:@PORT@; return x; limit_conn a 70000; }",
     "connection limit must be less 65536"),
    ("server { listen 127.0.0.1:@PORT@; return x; limit_conn nozone 1; }",
     'zero size shared memory zone "nozone"'),
    ("limit_conn_zone $binary_remote_addr a:1m;", 'invalid parameter "a:1m"'),
    ("limit_conn_zone $binary_remote_addr zone=a:1k;", 'zone "zone=a:1k" is too small'),
    ("limit_conn_zone $binary_remote_addr zone=a:1m; limit_conn_zone $remote_addr zone=a:1m;",
     'limit_conn_zone "a" is already bound to key "$binary_remote_addr"'),
    ("limit_conn_zone $binary_remote_addr zone=a:1m; "
     "server { listen 127.0.0.1:@PORT@; return x; limit_conn a 1; limit_conn a 2; }",
     '"limit_conn" directive is duplicate'),
    ("server { listen 127.0.0.1:@PORT@; return x; limit_conn_log_level loud; }",
     'invalid value "loud"'),
    ("server { listen 127.0.0.1:@PORT@; return x; limit_conn_zone $binary_remote_addr zone=a:1m; }",
     '"limit_conn_zone" directive is not allowed here'),
])
def test_bad_limit_conn_configs_are_refused(make_server, body, message):
    check_refused(make_server, body, message)
