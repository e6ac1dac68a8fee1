"""stream {}: proxy_upload_rate and proxy_download_rate (bytes a second per
session, each direction on its own, variables allowed). Timed through an
echo backend: the allowance is the rate times the whole seconds since the
connect plus one, so SIZE bytes at RATE take at least SIZE / RATE - 1
seconds; only the lower bound is checked (a slow machine only makes it
longer). Over UDP (`listen ... udp`) nginx applies the same arithmetic to
datagrams, whole ones: a direction that read past its allowance rests; an
upstream's answers wait in its socket meanwhile, a client's datagrams are
not read and are lost. The same tests run against Debian's nginx."""

import os
import socket
import threading
import time

import pytest

from harness import wait_until
from stream_harness import check_refused, connect, peers, read_exactly, ready_server, stream_conf  # noqa: F401

SIZE = 40_000
RATE = "10k"  # 10240 bytes a second: SIZE needs four allowances, three rests of about a second


def timed_echo(port, size=SIZE):
    payload = os.urandom(size)
    start = time.monotonic()
    with connect(port, timeout=30) as s:
        writer = threading.Thread(target=s.sendall, args=(payload,))
        writer.start()
        echoed = read_exactly(s, size)
        writer.join()
    return time.monotonic() - start, echoed == payload


@pytest.mark.parametrize("directive", ["proxy_download_rate", "proxy_upload_rate"])
def test_rate_slows_one_direction(make_server, peers, directive):
    backend = peers("echo")
    server = make_server(stream_conf(f"""
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass 127.0.0.1:{backend.port};
            {directive} {RATE};
        }}"""))
    elapsed, same = timed_echo(server.port)
    assert same
    assert elapsed >= 2.5, f"{SIZE} bytes at {RATE}/s took only {elapsed:.2f}s"


def test_rate_zero_is_unlimited_and_inherited_from_stream_level(make_server, peers):
    backend = peers("echo")
    server = make_server(stream_conf(f"""
        proxy_download_rate 1;
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass 127.0.0.1:{backend.port};
            proxy_download_rate 0;
        }}
        server {{
            listen 127.0.0.1:@PORT1@;
            proxy_pass 127.0.0.1:{backend.port};
        }}""", ), nports=2)
    # 0 switches the stream level's limit off: the echo comes back whole
    # well before a one-byte-a-second limit could pass it.
    _, same = timed_echo(server.port, 4000)
    assert same
    # The other server inherits 1 byte a second: after a second, at most a
    # few bytes came back.
    with connect(server.ports[1], timeout=10) as s:
        s.sendall(b"x" * 100)
        got = b""
        deadline = time.monotonic() + 2.5
        while len(got) < 100 and time.monotonic() < deadline:
            s.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = s.recv(100)
            except TimeoutError:
                break
            if not chunk:
                break
            got += chunk
        assert 0 < len(got) <= 4, got


def test_rate_from_a_variable(make_server, peers):
    backend = peers("echo")
    server = make_server(stream_conf(f"""
        map $server_port $rate {{
            default {RATE};
        }}
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass 127.0.0.1:{backend.port};
            proxy_download_rate $rate;
        }}"""))
    elapsed, same = timed_echo(server.port)
    assert same
    assert elapsed >= 2.5, f"{SIZE} bytes at {RATE}/s took only {elapsed:.2f}s"


def udp_client(timeout=5):
    c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    c.bind(("127.0.0.1", 0))
    c.settimeout(timeout)
    return c


def udp_relay(make_server, backend_port, lines):
    """A UDP server on @PORT1@ relaying to `backend_port`, with `lines`."""
    return ready_server(make_server, f"""
        server {{
            listen 127.0.0.1:@PORT1@ udp;
            proxy_pass 127.0.0.1:{backend_port};
            {lines}
        }}""")


def test_udp_download_rate_spaces_the_answers(make_server, peers):
    # Three answers of 1000 bytes to one datagram, at 1000 bytes a second:
    # the first comes at once, each next after a rest of a second.
    backend = peers("UdpServer", lambda data: [data * 1000] * 3)
    server = udp_relay(make_server, backend.port, "proxy_download_rate 1000; proxy_timeout 10s;")
    with udp_client(timeout=10) as c:
        c.sendto(b"x", ("127.0.0.1", server.ports[1]))
        answers = [c.recvfrom(65536)[0]]
        start = time.monotonic()
        answers += [c.recvfrom(65536)[0] for _ in range(2)]
        elapsed = time.monotonic() - start
    assert answers == [b"x" * 1000] * 3
    assert elapsed >= 1.8, f"three answers at 1000 bytes/s came within {elapsed:.2f}s"


def test_udp_upload_rate_loses_what_the_client_sends_while_resting(make_server, peers):
    # The session's first datagram (1000 bytes) is ten seconds' worth at
    # 100 bytes a second: what the client sends next, until then, is lost.
    backend = peers("udp_echo")
    server = udp_relay(make_server, backend.port, "proxy_upload_rate 100; proxy_timeout 20s;")
    with udp_client(timeout=1.5) as c:
        c.sendto(b"a" * 1000, ("127.0.0.1", server.ports[1]))
        assert c.recvfrom(65536)[0] == b"a" * 1000
        for data in (b"second", b"third"):
            c.sendto(data, ("127.0.0.1", server.ports[1]))
            with pytest.raises(TimeoutError):
                c.recvfrom(65536)
    assert [d for d, _ in backend.received] == [b"a" * 1000]


def test_udp_without_rates_the_same_datagrams_pass(make_server, peers):
    # What the two tests above hold back passes at once without the rates.
    backend = peers("udp_echo")
    server = udp_relay(make_server, backend.port, "proxy_timeout 20s;")
    with udp_client() as c:
        for data in (b"a" * 1000, b"second", b"third"):
            c.sendto(data, ("127.0.0.1", server.ports[1]))
            assert c.recvfrom(65536)[0] == data
    wait_until(lambda: len(backend.received) == 3, 5, what="three datagrams relayed")


@pytest.mark.parametrize("line,message", [
    ("proxy_upload_rate fast;", '"proxy_upload_rate" directive invalid value'),
    ("proxy_download_rate 1k 2k;", 'invalid number of arguments in "proxy_download_rate" directive'),
    ("proxy_download_rate 1k; proxy_download_rate 2k;", '"proxy_download_rate" directive is duplicate'),
])
def test_bad_rates_are_refused(make_server, line, message):
    check_refused(make_server, f"""
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass 127.0.0.1:1;
            {line}
        }}""", message)
