"""HTTP/3 connection life: key update, ChaCha20, lost handshake packets,
keepalive_requests and the stream limit, with gtlsclient (ngtcp2-client)
and h3raw (tools/h3raw).

torii only: Debian's nginx 1.22 has no HTTP/3 module.
"""

import shutil
import socket
import subprocess
import threading

import pytest

import h3raw as h
import harness
from harness import base_conf, wait_until
from test_http3 import cert  # noqa: F401 (fixture)
from test_proxy import upstreams  # noqa: F401 (fixture)

pytestmark = [
    pytest.mark.skipif(shutil.which("gtlsclient") is None, reason="needs gtlsclient (ngtcp2-client)"),
    pytest.mark.skipif(harness.IS_NGINX, reason="Debian's nginx has no HTTP/3"),
]


@pytest.fixture
def site(make_server, cert):
    def start(server=""):
        srv = make_server(base_conf(f"""
    log_format cipher '$request $status $ssl_protocol $ssl_cipher';
    server {{
        listen 127.0.0.1:@PORT0@ ssl;
        http3 on;
        server_name a.test;
        ssl_certificate {cert}/a.test.pem;
        ssl_certificate_key {cert}/a.test.key;
        root @PREFIX@/html;
        access_log @PREFIX@/logs/cipher.log cipher;
        location = /hello {{
            return 200 "hi\\n";
        }}
        {server}
    }}
""", error_level="info"), start=False)
        html = srv.prefix / "html"
        html.mkdir(parents=True, exist_ok=True)
        (html / "index.html").write_text("hello\n")
        srv.start()
        return srv
    return start


def gtls(port, *paths, args=(), timeout=30, connect_port=None):
    cmd = ["gtlsclient", "--no-quic-dump", "--no-http-dump", "--exit-on-all-streams-close", "--timeout=10s",
           *args, "127.0.0.1", str(connect_port or port), *[f"https://a.test:{port}{p}" for p in paths]]
    r = subprocess.run(cmd, capture_output=True, timeout=timeout)
    return r.stdout.decode("latin-1") + r.stderr.decode("latin-1")


def test_key_update_mid_connection(site):
    # The client updates its keys after the handshake, then asks: the
    # server follows the key phase (RFC 9001 6) and answers.
    srv = site()
    out = gtls(srv.port, "/hello", args=["--key-update=50ms", "--delay-stream=400ms"])
    assert "key update confirmed" in out, out[-2000:]
    assert "[:status: 200]" in out, out[-2000:]


def test_chacha20_poly1305_only_client(site):
    srv = site()
    out = gtls(srv.port, "/hello", args=["--ciphers=NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+CHACHA20-POLY1305"])
    assert "Negotiated cipher suite is CHACHA20-POLY1305" in out, out[-2000:]
    assert "[:status: 200]" in out, out[-2000:]
    log = srv.prefix / "logs" / "cipher.log"
    wait_until(lambda: log.exists() and "GET /hello HTTP/3.0 200 TLSv1.3" in log.read_text(), 5, what="log line")
    assert "CHACHA20" in log.read_text(), log.read_text()


class LossyProxy:
    """UDP between a client and the server, dropping the first `drop`
    datagrams going one way ("to_client" or "to_server")."""

    def __init__(self, server_port, direction, drop):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.upstream = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.upstream.connect(("127.0.0.1", server_port))
        self.direction, self.left = direction, drop
        self.dropped = 0
        self.client = None
        self.stop = False
        self.threads = [threading.Thread(target=self._up, daemon=True), threading.Thread(target=self._down, daemon=True)]
        for s in (self.sock, self.upstream):
            s.settimeout(0.2)
        for t in self.threads:
            t.start()

    def _drop(self, direction):
        if self.direction == direction and self.left > 0:
            self.left -= 1
            self.dropped += 1
            return True
        return False

    def _up(self):
        while not self.stop:
            try:
                data, addr = self.sock.recvfrom(65535)
            except socket.timeout:
                continue
            self.client = addr
            if not self._drop("to_server"):
                self.upstream.send(data)

    def _down(self):
        while not self.stop:
            try:
                data = self.upstream.recv(65535)
            except socket.timeout:
                continue
            if self.client and not self._drop("to_client"):
                self.sock.sendto(data, self.client)

    def close(self):
        self.stop = True
        for t in self.threads:
            t.join()
        self.sock.close()
        self.upstream.close()


@pytest.mark.parametrize("direction, drop", [("to_client", 2), ("to_server", 2), ("to_client", 4)],
                         ids=["server-first-flight", "client-initials", "server-flights-twice"])
def test_lost_handshake_packets_are_sent_again(site, direction, drop):
    # The handshake's datagrams are lost: the client's Initials, or the
    # server's Initial/Handshake flight (its certificate). Loss recovery
    # (PTO) and the client's retransmissions must still finish the handshake
    # within the anti-amplification limit, and the request is answered.
    srv = site()
    proxy = LossyProxy(srv.port, direction, drop)
    try:
        out = gtls(srv.port, "/hello", connect_port=proxy.port, args=["--initial-rtt=50ms"])
    finally:
        proxy.close()
    assert proxy.dropped == drop
    assert "[:status: 200]" in out, out[-2000:]


@pytest.mark.skipif(not h.AVAILABLE, reason="h3raw not built")
def test_keepalive_requests_sends_goaway_and_answers_what_it_took(site):
    # nginx's HTTP/3 meaning: after the Nth request, GOAWAY naming the next
    # stream; the requests already taken are answered, then the connection
    # closes with H3_NO_ERROR.
    srv = site(server="keepalive_requests 2;")
    control, hello = h.hx(h.control_stream()), h.hx(h.request("/hello"))
    lines = h.run(srv.port, [f"uni {control}", f"bidi {hello} fin", "until 5000 fin 0", f"bidi {hello} fin",
                             "until 5000 fin 4", "until 5000 close"])
    assert h.status(lines, 0) == 200 and h.status(lines, 4) == 200, lines
    goaways = [int(line.split()[1]) for line in lines if line.startswith("goaway")]
    assert goaways and goaways[-1] == 8, lines
    assert h.closed_with(lines) == ("app", h.H3_NO_ERROR), lines


@pytest.mark.skipif(not h.AVAILABLE, reason="h3raw not built")
def test_http3_max_concurrent_streams_is_the_stream_credit(site):
    # MAX_STREAMS: the client may open http3_max_concurrent_streams request
    # streams; one more waits until a request ends and credit comes back.
    srv = site(server="http3_max_concurrent_streams 3; location = /slow { return 200 \"slow\\n\"; }")
    control = h.hx(h.control_stream())
    partial = h.hx(h.request("/hello"))
    lines = h.run(srv.port, [f"uni {control}", f"bidi {partial}", f"bidi {partial}", f"bidi {partial}",
                             f"bidi {partial}", "send 0 - fin", "until 5000 max_streams_bidi 4",
                             f"bidi {partial} fin", "until 5000 fin 12"])
    assert lines.count("blocked") == 1, lines
    assert "max_streams_bidi 3" in lines, lines
    assert h.status(lines, 12) == 200, lines


@pytest.mark.skipif(not h.AVAILABLE, reason="h3raw not built")
def test_cancelled_proxied_request_lets_the_upstream_go_and_logs_499(make_server, cert, upstreams):
    # As test_proxy_abort_log's HTTP/1.1 and HTTP/2 cases: the client
    # cancels a long poll; the upstream connection is closed at once and
    # the access log says 499 with the upstream named.
    up = upstreams()
    srv = make_server(base_conf(f"""
    log_format probe '$request|$status|$upstream_addr|$upstream_status';
    server {{
        listen 127.0.0.1:@PORT0@ ssl;
        http3 on;
        server_name a.test;
        ssl_certificate {cert}/a.test.pem;
        ssl_certificate_key {cert}/a.test.key;
        access_log @PREFIX@/logs/probe.log probe;
        location / {{ proxy_pass http://127.0.0.1:{up.port}; proxy_read_timeout 30s; }}
    }}
""", error_level="info"))
    client = h.Live(srv.port)
    client.send(f"uni {h.hx(h.control_stream())}", f"bidi {h.hx(h.request('/hold/8'))} fin")
    try:
        wait_until(lambda: up.requests, 5, what="the request upstream")
        client.send("reset 0 0x10c", "until 5000 stop_sending 0")
    finally:
        lines = client.finish()
    wait_until(lambda: up.holds, 5, what="the upstream connection to end")
    assert up.holds == ["closed"], lines
    log = srv.prefix / "logs" / "probe.log"
    wait_until(lambda: log.exists() and "GET /hold/8 HTTP/3.0|" in log.read_text(), 5, what="log line")
    assert f"GET /hold/8 HTTP/3.0|499|127.0.0.1:{up.port}|-" in log.read_text(), log.read_text()
    assert "client prematurely closed connection, so upstream connection is closed too" in srv.error_log_text()


@pytest.mark.skipif(not h.AVAILABLE, reason="h3raw not built")
def test_graceful_stop_waits_for_an_upload_in_flight(make_server, cert):
    # SIGQUIT while a request body is still coming: GOAWAY, the upload
    # finishes and is answered, then CONNECTION_CLOSE(H3_NO_ERROR) and the
    # process exits.
    from echo_backend import EchoBackend
    backend = EchoBackend("up")
    srv = make_server(base_conf(f"""
    server {{
        listen 127.0.0.1:@PORT0@ ssl;
        http3 on;
        server_name a.test;
        ssl_certificate {cert}/a.test.pem;
        ssl_certificate_key {cert}/a.test.key;
        location / {{ proxy_pass http://127.0.0.1:{backend.port}; }}
        location = /ping {{ return 200 "pong\n"; }}
    }}
""", error_level="info"))
    head = h.request("/upload", method="POST", extra=[("content-length", "130000")])
    client = h.Live(srv.port)
    try:
        # The ping's answer says the upload's head (sent before it) is in.
        client.send(f"uni {h.hx(h.control_stream())}", f"bidi {h.hx(head + h.frame(h.DATA, b'a' * 30000))}",
                    f"bidi {h.hx(h.request('/ping'))} fin", "until 5000 fin 4")
        client.wait_for("fin 4")
        srv.signal(3)  # SIGQUIT
        client.send("until 5000 goaway", f"send 0 {h.hx(h.frame(h.DATA, b'b' * 100000))} fin",
                    "until 10000 fin 0", "until 10000 close")
    finally:
        lines = client.finish()
        backend.server.shutdown()
    assert h.status(lines, 0) == 200, "\n".join(lines) + srv.error_log_text()
    assert any(line.startswith("goaway") for line in lines), lines
    assert any(line.startswith("fin 0 ") and "backend=up uri=/upload".encode().hex() in line for line in lines), lines
    assert h.closed_with(lines) == ("app", h.H3_NO_ERROR), lines
    assert srv.wait_exit(10) is not None
