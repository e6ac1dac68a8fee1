"""`listen ... proxy_protocol`: the PROXY protocol header (v1 text and v2
binary) before HTTP, TLS and HTTP/2, from HAProxy (send-proxy,
send-proxy-v2) and from raw sockets; $proxy_protocol_* variables; bad,
missing and slow headers closing the connection with nginx's log line."""

import socket
import ssl
import struct
import subprocess
import time

import pytest

from harness import IS_NGINX, base_conf, wait_until
from haproxy_front import HaproxyFront, available

VARS = "$proxy_protocol_addr|$proxy_protocol_port|$proxy_protocol_server_addr|$proxy_protocol_server_port|$remote_addr"

CONF = r"""
    log_format pp '$remote_addr pp=$proxy_protocol_addr:$proxy_protocol_port "$request" $status';
    server {
        listen 127.0.0.1:@PORT@ proxy_protocol;
        client_header_timeout 2s;
        access_log @PREFIX@/logs/access.log pp;
        location / {
            return 200 "VARS";
        }
    }
""".replace("VARS", VARS)


@pytest.fixture
def srv(make_server):
    return make_server(base_conf(CONF, error_level="info"))


def exchange(port, preamble, request=b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", source=None):
    """Sends the PROXY header, then the request; returns all the server sent."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(10)
    if source:
        s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    s.sendall(preamble + request)
    data = b""
    while True:
        try:
            chunk = s.recv(65536)
        except (ConnectionResetError, socket.timeout):
            break
        if not chunk:
            break
        data += chunk
    s.close()
    return data


def body_of(data):
    assert data.startswith(b"HTTP/1.1 200"), data
    return data.split(b"\r\n\r\n", 1)[1].decode()


def v2_header(command, family, payload):
    sig = b"\r\n\r\n\x00\r\nQUIT\n"
    return sig + bytes([0x20 | command, family]) + struct.pack("!H", len(payload)) + payload


def test_v1_tcp4(srv):
    data = exchange(srv.port, b"PROXY TCP4 203.0.113.7 192.0.2.1 5555 80\r\n")
    assert body_of(data) == "203.0.113.7|5555|192.0.2.1|80|127.0.0.1"


def test_v1_tcp6(srv):
    data = exchange(srv.port, b"PROXY TCP6 2001:db8::7 2001:db8::1 61000 443\r\n")
    assert body_of(data) == "2001:db8::7|61000|2001:db8::1|443|127.0.0.1"


def test_v1_unknown_has_no_addresses(srv):
    data = exchange(srv.port, b"PROXY UNKNOWN\r\n")
    assert body_of(data) == "||||127.0.0.1"


def test_v2_tcp4_and_tcp6(srv):
    payload = socket.inet_aton("198.51.100.9") + socket.inet_aton("192.0.2.2") + struct.pack("!HH", 40000, 8443)
    assert body_of(exchange(srv.port, v2_header(1, 0x11, payload))) == "198.51.100.9|40000|192.0.2.2|8443|127.0.0.1"
    payload6 = (socket.inet_pton(socket.AF_INET6, "2001:db8::9") + socket.inet_pton(socket.AF_INET6, "2001:db8::2")
                + struct.pack("!HH", 1234, 443))
    # A TLV after the addresses (here: ALPN "h2") is skipped.
    payload6 += b"\x01\x00\x02h2"
    assert body_of(exchange(srv.port, v2_header(1, 0x21, payload6))) == "2001:db8::9|1234|2001:db8::2|443|127.0.0.1"


def test_v2_local_keeps_the_connection_addresses(srv):
    assert body_of(exchange(srv.port, v2_header(0, 0x00, b""))) == "||||127.0.0.1"


@pytest.mark.parametrize("preamble", [
    b"",                                    # no header at all: a plain request
    b"PROXY TCP4 203.0.113.7 192.0.2.1 5555\r\n",  # a field missing
    b"PROXY TCP5 1.2.3.4 5.6.7.8 1 2\r\n",  # unknown protocol
    b"PROXY TCP4 1.2.3.4 5.6.7.8 99999 80\r\n",  # port out of range
])
def test_bad_v1_header_closes_with_nginx_log_line(srv, preamble):
    data = exchange(srv.port, preamble)
    assert data == b""
    first_line = (preamble or b"GET / HTTP/1.1").split(b"\r\n")[0].decode()
    # nginx 1.22 quotes the whole first read, later versions (and torii)
    # stop at the first CR or LF.
    wait_until(lambda: f'broken header: "{first_line}' in srv.error_log_text()
               and "while reading PROXY protocol, client: 127.0.0.1" in srv.error_log_text(), 10,
               what="the broken header line")


def test_bad_v2_version_is_refused(srv):
    bad = b"\r\n\r\n\x00\r\nQUIT\n" + bytes([0x31, 0x11]) + struct.pack("!H", 12) + b"\x00" * 12
    assert exchange(srv.port, bad) == b""
    wait_until(lambda: "unknown PROXY protocol version: 3 while reading PROXY protocol" in srv.error_log_text(), 10,
               what="the version line")


def test_silent_client_times_out(srv):
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    start = time.monotonic()
    try:
        got = s.recv(100)
    except ConnectionResetError:  # the unread bytes may turn the close into a reset
        got = b""
    assert got == b""  # closed by client_header_timeout (2s), not answered
    assert 1.0 < time.monotonic() - start < 8
    s.close()
    wait_until(lambda: "client timed out" in srv.error_log_text(), 10, what="the timeout line")


@pytest.mark.skipif(IS_NGINX, reason="nginx parses the first read only; torii waits for the rest")
def test_header_split_across_reads(srv):
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(b"PROXY TCP4 203.0.113.7 ")
    time.sleep(0.2)  # let the first piece arrive on its own; the server must wait for the rest
    s.sendall(b"192.0.2.1 5555 80\r\nGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    s.close()
    assert body_of(data) == "203.0.113.7|5555|192.0.2.1|80|127.0.0.1"


@pytest.mark.skipif(not available(), reason="needs haproxy")
@pytest.mark.parametrize("send", ["send-proxy", "send-proxy-v2"])
def test_haproxy_in_front_reaches_the_access_log(srv, tmp_path, send):
    front = HaproxyFront(tmp_path / send, srv.port, send).start()
    try:
        # Connect to HAProxy from 127.0.0.2: that is the client it names.
        data = exchange(front.port, b"", b"GET /via-haproxy HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                        source="127.0.0.2")
        addr, port, server_addr, server_port, remote = body_of(data).split("|")
        assert (addr, server_addr, server_port, remote) == ("127.0.0.2", "127.0.0.1", str(front.port), "127.0.0.1")
        assert 0 < int(port) < 65536
        wait_until(lambda: f'127.0.0.1 pp=127.0.0.2:{port} "GET /via-haproxy HTTP/1.1" 200'
                   in srv.access_log.read_text() if srv.access_log.exists() else False, 10, what="access log line")
    finally:
        front.stop()


TLS_CONF = r"""
    server {
        listen 127.0.0.1:@PORT@ ssl proxy_protocol;
        ssl_certificate @PREFIX@/cert.pem;
        ssl_certificate_key @PREFIX@/key.pem;
        location / {
            return 200 "$proxy_protocol_addr $scheme";
        }
    }
    server {
        listen 127.0.0.1:@PORT1@ proxy_protocol http2;
        location / {
            return 200 "$proxy_protocol_addr $server_protocol";
        }
    }
"""


@pytest.fixture
def tls_srv(make_server):
    server = make_server(base_conf(TLS_CONF), nports=2, start=False)
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(server.prefix / "key.pem"), "-out", str(server.prefix / "cert.pem"), "-days", "2",
                    "-subj", "/CN=localhost"], check=True, capture_output=True)
    return server.start()


def test_header_comes_before_tls(tls_srv):
    s = socket.create_connection(("127.0.0.1", tls_srv.port), timeout=10)
    s.sendall(b"PROXY TCP4 203.0.113.50 192.0.2.1 4444 443\r\n")
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with ctx.wrap_socket(s, server_hostname="localhost") as t:
        t.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            try:
                chunk = t.recv(65536)
            except (ssl.SSLError, ConnectionResetError):
                break
            if not chunk:
                break
            data += chunk
    assert body_of(data) == "203.0.113.50 https"


@pytest.mark.skipif(not available(), reason="needs haproxy")
def test_http2_behind_haproxy(tls_srv, tmp_path):
    front = HaproxyFront(tmp_path / "h2", tls_srv.ports[1], "send-proxy-v2").start()
    try:
        r = subprocess.run(["curl", "-sS", "--http2-prior-knowledge", "--interface", "127.0.0.3",
                            f"http://127.0.0.1:{front.port}/"], capture_output=True, text=True, timeout=20)
        assert r.returncode == 0, r.stderr
        assert r.stdout == "127.0.0.3 HTTP/2.0"
    finally:
        front.stop()
