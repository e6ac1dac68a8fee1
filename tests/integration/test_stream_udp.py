"""stream {} over UDP: `listen ... udp`, a session per client address and
port, proxy_responses, proxy_requests and proxy_timeout ending it, the
upstream groups and their balancing, a dead upstream (ICMP port
unreachable), `return`, and the access log's $protocol and byte counts.
Python UDP peers (stream_backends.py) stand for the upstreams; the same
tests run against Debian's nginx with its stream module loaded.

Each server also listens on TCP @PORT@ (a `return`), which the harness
polls for readiness: a UDP socket cannot be probed that way."""

import socket
import time

import pytest

from harness import wait_until
from stream_harness import (check_refused, error_log_has, log_line, log_lines, peers,  # noqa: F401
                            ready_conf, ready_server, stream_conf)

LOG_FORMAT = ("log_format udp '$remote_addr:$remote_port $protocol $status $bytes_sent $bytes_received "
              "\"$upstream_addr\" \"$upstream_bytes_sent\" \"$upstream_bytes_received\"';")


def udp_server(make_server, body, top=""):
    """`body` in a server listening on UDP @PORT1@, behind the readiness server."""
    return ready_server(make_server, f"""
        server {{
            listen 127.0.0.1:@PORT1@ udp;
            access_log @PREFIX@/logs/access.log udp;
            {body}
        }}""", top=LOG_FORMAT + "\n" + top)


def client(timeout=5):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    s.settimeout(timeout)
    return s


def ask(port, data, timeout=5):
    with client(timeout) as s:
        s.sendto(data, ("127.0.0.1", port))
        reply, _ = s.recvfrom(65536)
        return reply, s.getsockname()[1]


def test_datagrams_go_to_the_upstream_and_back(make_server, peers):
    backend = peers("udp_echo")
    server = udp_server(make_server, f"""
            proxy_pass 127.0.0.1:{backend.port};
            proxy_responses 1;""")
    reply, port = ask(server.ports[1], b"ping")
    assert reply == b"ping"
    # One answer for one datagram: the session ends at once, logged.
    line = log_line(server, port)
    assert line == f'127.0.0.1:{port} UDP 200 4 4 "127.0.0.1:{backend.port}" "4" "4"', line
    # The upstream saw the proxy's own address, not the client's.
    assert backend.received[0][1][1] != port


def test_several_clients_at_once_each_get_their_own_answers(make_server, peers):
    backend = peers("udp_echo")
    server = udp_server(make_server, f"""
            proxy_pass 127.0.0.1:{backend.port};
            proxy_timeout 2s;""")
    clients = [client() for _ in range(6)]
    try:
        for round_ in range(3):
            for i, c in enumerate(clients):
                c.sendto(f"client {i} round {round_}".encode(), ("127.0.0.1", server.ports[1]))
            for i, c in enumerate(clients):
                assert c.recvfrom(65536)[0] == f"client {i} round {round_}".encode()
        ports = [c.getsockname()[1] for c in clients]
    finally:
        for c in clients:
            c.close()
    # Without proxy_responses a session lasts until proxy_timeout: one
    # line per client, with all three rounds counted.
    for i, port in enumerate(ports):
        line = log_line(server, port)
        size = sum(len(f"client {i} round {r}") for r in range(3))
        assert f" UDP 200 {size} {size} " in line, line
        assert len(log_lines(server, port)) == 1


def test_proxy_requests_makes_a_session_per_datagram(make_server, peers):
    backend = peers("udp_echo")
    server = udp_server(make_server, f"""
            proxy_pass 127.0.0.1:{backend.port};
            proxy_requests 1;
            proxy_responses 1;""")
    with client() as c:
        port = c.getsockname()[1]
        for i in range(3):
            c.sendto(b"q%d" % i, ("127.0.0.1", server.ports[1]))
            assert c.recvfrom(65536)[0] == b"q%d" % i
    wait_until(lambda: len(log_lines(server, port)) == 3, 10, what="three sessions logged")
    assert all(" UDP 200 2 2 " in l for l in log_lines(server, port))


def test_dns_like_queries_are_balanced_over_the_group(make_server, peers):
    one = peers("udp_dns", "one")
    two = peers("udp_dns", "two")
    server = udp_server(make_server, """
            proxy_pass dns;
            proxy_responses 1;
            proxy_timeout 5s;""", top=f"""
        upstream dns {{
            server 127.0.0.1:{one.port};
            server 127.0.0.1:{two.port};
        }}""")
    answered_by = []
    for i in range(4):
        query = bytes([0x12, i]) + b"example.test A?"
        reply, _ = ask(server.ports[1], query)
        assert reply.startswith(bytes([0x12, i]) + b" answer from ")
        assert reply.endswith(b" to example.test A?")
        answered_by.append(reply.split(b" ")[3])
    assert sorted(answered_by) == [b"one", b"one", b"two", b"two"], answered_by


def test_dead_upstream_is_logged_and_set_aside(make_server, peers):
    dead = peers("UdpDeadPort")
    live = peers("udp_echo", "live")
    server = udp_server(make_server, """
            proxy_pass pair;
            proxy_responses 1;
            proxy_timeout 3s;""", top=f"""
        upstream pair {{
            server 127.0.0.1:{dead.port};
            server 127.0.0.1:{live.port};
        }}""")
    results = []
    for i in range(4):
        try:
            results.append(ask(server.ports[1], b"hello %d" % i, timeout=1.5)[0])
        except TimeoutError:
            results.append(None)
    # Round robin starts with the dead server: the port unreachable ends
    # that session (the client gets an empty datagram, as from nginx) and
    # counts a failure, so the group sends the next ones to the live one.
    assert results == [b"", b"live:hello 1", b"live:hello 2", b"live:hello 3"], results
    error_log_has(server, rf"\(111: Connection refused\) while proxying and (reading from|sending to) upstream, "
                          rf"udp client: 127\.0\.0\.1, server: 127\.0\.0\.1:{server.ports[1]}, "
                          rf"upstream: \"127\.0\.0\.1:{dead.port}\"")


def test_unanswered_request_is_502_after_proxy_timeout(make_server, peers):
    silent = peers("udp_silent")
    server = udp_server(make_server, f"""
            proxy_pass 127.0.0.1:{silent.port};
            proxy_responses 1;
            proxy_timeout 1s;""")
    with client() as c:
        port = c.getsockname()[1]
        c.sendto(b"anyone?", ("127.0.0.1", server.ports[1]))
        line = log_line(server, port)
    assert f' UDP 502 0 7 "127.0.0.1:{silent.port}" "7" "0"' in line, line
    error_log_has(server, r"upstream timed out \(110: Connection timed out\) while proxying connection, udp client")


def test_quiet_session_ends_at_proxy_timeout_with_200(make_server, peers):
    silent = peers("udp_silent")
    server = udp_server(make_server, f"""
            proxy_pass 127.0.0.1:{silent.port};
            proxy_timeout 1s;""")
    with client() as c:
        port = c.getsockname()[1]
        start = time.monotonic()
        c.sendto(b"fire and forget", ("127.0.0.1", server.ports[1]))
        line = log_line(server, port)
    assert time.monotonic() - start >= 0.9
    assert f' UDP 200 0 15 ' in line, line
    assert wait_until(lambda: silent.received, 5)[0][0] == b"fire and forget"


def test_return_answers_with_one_datagram(make_server):
    server = udp_server(make_server, 'return "you are $remote_addr over $protocol";')
    reply, port = ask(server.ports[1], b"who am i")
    assert reply == b"you are 127.0.0.1 over UDP"
    assert " UDP 200 26 8 " in log_line(server, port)


def test_deny_is_403_and_nothing_is_answered(make_server, peers):
    backend = peers("udp_echo")
    server = udp_server(make_server, f"""
            deny 127.0.0.1;
            proxy_pass 127.0.0.1:{backend.port};""")
    with client(timeout=1) as c:
        port = c.getsockname()[1]
        c.sendto(b"let me in", ("127.0.0.1", server.ports[1]))
        with pytest.raises(TimeoutError):
            c.recvfrom(65536)
    assert " UDP 403 0 9 " in log_line(server, port)
    assert not backend.received


def test_tcp_and_udp_share_a_port(make_server, peers):
    backend = peers("udp_echo")
    server = make_server(stream_conf(f"""
        server {{
            listen 127.0.0.1:@PORT@;
            return "tcp\\n";
        }}
        server {{
            listen 127.0.0.1:@PORT@ udp;
            proxy_pass 127.0.0.1:{backend.port};
            proxy_responses 1;
        }}"""))
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
        assert s.recv(100) == b"tcp\n"
    assert ask(server.port, b"udp")[0] == b"udp"


@pytest.mark.parametrize("body,message", [
    ("server { listen 127.0.0.1:@PORT@ udp ssl; return x; }", '"ssl" parameter is incompatible with "udp"'),
    ("server { listen 127.0.0.1:@PORT@ udp backlog=10; return x; }", '"backlog" parameter is incompatible with "udp"'),
    ("server { listen 127.0.0.1:@PORT@ udp proxy_protocol; return x; }",
     '"proxy_protocol" parameter is incompatible with "udp"'),
    ("server { listen 127.0.0.1:@PORT@ udp so_keepalive=on; return x; }",
     '"so_keepalive" parameter is incompatible with "udp"'),
    ("server { listen 127.0.0.1:@PORT@ udp; proxy_pass 127.0.0.1:1; proxy_responses many; }",
     '"proxy_responses" directive invalid number'),
    ("server { listen 127.0.0.1:@PORT@ udp; proxy_pass 127.0.0.1:1; proxy_requests -1; }",
     '"proxy_requests" directive invalid number'),
    ("server { listen 127.0.0.1:@PORT@ udp; listen 127.0.0.1:@PORT@ udp; return x; }",
     'duplicate "127.0.0.1:'),
])
def test_bad_udp_configs_are_refused(make_server, body, message):
    check_refused(make_server, body, message)


def test_reload_changes_what_a_new_client_gets(make_server):
    def udp_returns(text):
        return f"""
        server {{
            listen 127.0.0.1:@PORT1@ udp;
            return "{text}";
        }}"""
    server = ready_server(make_server, udp_returns("before"))
    assert ask(server.ports[1], b"?")[0] == b"before"
    server.reload(ready_conf(udp_returns("after")))

    def answered_after():
        try:
            return ask(server.ports[1], b"?", timeout=0.5)[0] == b"after"
        except TimeoutError:
            return False
    assert wait_until(answered_after, 15, what="the reloaded answer")


def test_wildcard_listen_answers_from_the_address_asked(make_server):
    server = ready_server(make_server, """
        server {
            listen @PORT1@ udp;
            return "$server_addr";
        }""")
    # 127.0.0.2 is on the loopback too; routing alone would answer from
    # 127.0.0.1, which a connected client socket would not take.
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as c:
        c.settimeout(5)
        c.connect(("127.0.0.2", server.ports[1]))
        c.send(b"?")
        assert c.recv(100) == b"127.0.0.2"


def test_proxy_protocol_header_leads_the_first_datagram(make_server, peers):
    backend = peers("udp_echo")
    server = udp_server(make_server, f"""
            proxy_pass 127.0.0.1:{backend.port};
            proxy_protocol on;
            proxy_timeout 2s;""")
    with client() as c:
        port = c.getsockname()[1]
        for data in (b"one", b"two"):
            c.sendto(data, ("127.0.0.1", server.ports[1]))
        first = c.recvfrom(65536)[0]
        second = c.recvfrom(65536)[0]
    assert first == f"PROXY TCP4 127.0.0.1 127.0.0.1 {port} {server.ports[1]}\r\n".encode() + b"one"
    assert second == b"two"
