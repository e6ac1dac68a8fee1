"""A client that sends its request and shuts its side at once (`nc -N`,
scripts that `shutdown(SHUT_WR)`): the request and the FIN reach the
server together, in one readiness event. The server must still answer,
then see the end of the stream and close, not keep the connection until
its keep-alive timer; and proxy_ignore_client_abort decides, as
documented, whether that end aborts a proxied request.

To make the request and the FIN arrive together every time, the server's
processes are stopped (SIGSTOP) while the client sends them and resumed
after."""

import contextlib
import os
import signal
import socket
import ssl
import time

import pytest

import harness
from test_early_error_server import tls_files  # noqa: F401 (fixture)
from test_proxy import upstreams  # noqa: F401 (fixture)
from test_proxy_abort_log import conf, log_line


@contextlib.contextmanager
def server_stopped(srv):
    """The server's master and workers paused (one process group)."""
    os.killpg(srv.proc.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.killpg(srv.proc.pid, signal.SIGCONT)


def send_and_shut(srv, sock, data):
    with server_stopped(srv):
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        time.sleep(0.2)  # the bytes and the FIN are queued on the server's socket


def read_to_eof(sock):
    """Everything until the server closes; raises socket.timeout if it does not."""
    received = b""
    while True:
        data = sock.recv(65536)
        if not data:
            return received
        received += data


def static_site(make_server):
    srv = make_server(conf("location / { }"))
    (srv.prefix / "html").mkdir(exist_ok=True)
    (srv.prefix / "html" / "a.txt").write_text("hello\n")
    return srv


def test_static_request_then_fin_is_answered_and_closed(make_server):
    srv = static_site(make_server)
    with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
        # A first request on the connection, so the server waits in its
        # event loop on an established keep-alive connection.
        s.sendall(b"GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n")
        first = b""
        while not first.endswith(b"hello\n"):
            first += s.recv(65536)
        started = time.monotonic()
        send_and_shut(srv, s, b"GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n")
        received = read_to_eof(s)
    assert received.startswith(b"HTTP/1.1 200") and received.endswith(b"hello\n"), received
    assert time.monotonic() - started < 4


@pytest.mark.parametrize("ignore", ["on", "off"])
def test_proxied_request_then_fin(make_server, upstreams, ignore):
    up = upstreams()
    srv = make_server(conf(f"""location / {{ proxy_pass http://127.0.0.1:{up.port}; proxy_read_timeout 30s;
                                             proxy_ignore_client_abort {ignore}; }}"""))
    path = "/hold/0.5" if ignore == "on" else "/hold/8"
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
        time.sleep(0.1)  # accepted: the server waits for the first bytes
        send_and_shut(srv, s, f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        received = read_to_eof(s)
    line = log_line(srv, f"GET {path} HTTP/1.1")
    if ignore == "on":
        # The upstream's answer still reaches the client, then the server closes.
        assert received.startswith(b"HTTP/1.1 200") and received.endswith(b"late"), received
        assert line["status"] == "200" and line["upstream_status"] == "200"
    else:
        # The end of the stream is the client going away: 499 at once, the
        # upstream let go long before its answer was due (it may not even
        # have had the request yet).
        assert received == b""
        assert line["status"] == "499" and line["upstream_status"] == "-"
        assert "answered" not in up.holds
    assert time.monotonic() - started < 4


def test_http2_request_then_fin_closes_the_connection(make_server):
    import h2.config
    import h2.connection
    import h2.events
    srv = make_server(conf("location / { }", listen_h2=True), nports=2)
    (srv.prefix / "html").mkdir(exist_ok=True)
    (srv.prefix / "html" / "a.txt").write_text("hello\n")
    client = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    client.initiate_connection()
    fields = [(":method", "GET"), (":path", "/a.txt"), (":scheme", "http"), (":authority", "x")]
    with socket.create_connection(("127.0.0.1", srv.ports[1]), timeout=5) as s:
        # A first exchange, so the HTTP/2 connection is established and waits.
        client.send_headers(1, fields, end_stream=True)
        s.sendall(client.data_to_send())
        ended = False
        while not ended:
            data = s.recv(65536)
            assert data, "closed before the first response"
            ended = any(isinstance(e, h2.events.StreamEnded) for e in client.receive_data(data))
        started = time.monotonic()
        client.send_headers(3, fields, end_stream=True)
        send_and_shut(srv, s, client.data_to_send())
        # Whatever was answered, the connection ends with the client's
        # stream, not when the idle timer fires.
        read_to_eof(s)
    assert time.monotonic() - started < 4


def test_pipelined_requests_then_fin_are_all_answered(make_server):
    srv = static_site(make_server)
    with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
        time.sleep(0.1)
        send_and_shut(srv, s, b"GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n" * 3)
        received = read_to_eof(s)
    assert received.count(b"HTTP/1.1 200") == 3 and received.endswith(b"hello\n"), received


def test_a_head_cut_by_the_fin_closes_without_an_answer(make_server):
    srv = static_site(make_server)
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
        time.sleep(0.1)
        send_and_shut(srv, s, b"GET /a.txt HTTP/1.1\r\nHost: x\r\n")
        assert read_to_eof(s) == b""
    assert time.monotonic() - started < 4


def tls_request_then_close_notify(srv, request):
    """A TLS client that writes its request, then close_notify and a FIN
    (all queued while the server is stopped), then reads: returns the
    plaintext it got before the server closed."""
    port = srv.port
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(incoming, outgoing, server_hostname="a.test")
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        while True:
            try:
                tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                s.sendall(outgoing.read())
                incoming.write(s.recv(65536))
        s.sendall(outgoing.read())
        tls.write(request)
        try:
            tls.unwrap()  # queues close_notify; the server's own is not awaited
        except ssl.SSLWantReadError:
            pass
        send_and_shut(srv, s, outgoing.read())
        incoming.write(read_to_eof(s))
    plain = b""
    while True:
        try:
            data = tls.read(65536)
        except (ssl.SSLWantReadError, ssl.SSLZeroReturnError):
            break
        if not data:
            break
        plain += data
    return plain


def test_tls_request_then_close_notify_is_answered(make_server, tls_files):
    srv = make_server(harness.base_conf(http=f"""
    server {{
        listen 127.0.0.1:@PORT@ ssl;
        ssl_certificate {tls_files}/cert.pem;
        ssl_certificate_key {tls_files}/key.pem;
        root @PREFIX@/html;
    }}"""))
    (srv.prefix / "html").mkdir(exist_ok=True)
    (srv.prefix / "html" / "a.txt").write_text("hello\n")
    received = tls_request_then_close_notify(srv, b"GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n")
    assert received.startswith(b"HTTP/1.1 200") and received.endswith(b"hello\n"), received
    log = srv.access_log
    harness.wait_until(lambda: log.exists() and '"GET /a.txt HTTP/1.1" 200' in log.read_text(), 10,
                       what="the access log line")


@pytest.mark.parametrize("ignore", ["on", "off"])
def test_tls_proxied_request_then_close_notify(make_server, upstreams, tls_files, ignore):
    up = upstreams()
    srv = make_server(harness.base_conf(access_log=False, http=f"""
    log_format probe '$request|$status|$upstream_status';
    server {{
        listen 127.0.0.1:@PORT@ ssl;
        ssl_certificate {tls_files}/cert.pem;
        ssl_certificate_key {tls_files}/key.pem;
        access_log @PREFIX@/logs/access.log probe;
        location / {{ proxy_pass http://127.0.0.1:{up.port}; proxy_ignore_client_abort {ignore}; }}
    }}"""))
    path = "/hold/0.5" if ignore == "on" else "/hold/8"
    started = time.monotonic()
    received = tls_request_then_close_notify(srv, f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    log = srv.access_log
    line = harness.wait_until(lambda: log.exists() and log.read_text().strip(), 10, what="the access log line")
    if ignore == "on":
        assert received.startswith(b"HTTP/1.1 200") and received.endswith(b"late"), received
        assert line == f"GET {path} HTTP/1.1|200|200"
    else:
        # As over plain TCP: the end of the client's stream aborts the wait.
        assert received == b""
        assert line == f"GET {path} HTTP/1.1|499|-"
    assert time.monotonic() - started < 4


@pytest.mark.parametrize("tls", [False, True])
@pytest.mark.parametrize("handler", ["proxy", "return"])
def test_a_body_cut_by_the_end_of_the_stream_closes_at_once(make_server, upstreams, tls_files, tls, handler):
    up = upstreams()
    ssl_lines = f"ssl_certificate {tls_files}/cert.pem; ssl_certificate_key {tls_files}/key.pem;" if tls else ""
    action = f"proxy_pass http://127.0.0.1:{up.port};" if handler == "proxy" else "return 200 ok;"
    srv = make_server(harness.base_conf(http=f"""
    server {{
        listen 127.0.0.1:@PORT@ {"ssl" if tls else ""};
        {ssl_lines}
        client_body_timeout 30s;
        location / {{ {action} }}
    }}"""))
    request = b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789"
    started = time.monotonic()
    if tls:
        received = tls_request_then_close_notify(srv, request)
    else:
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
            time.sleep(0.1)
            send_and_shut(srv, s, request)
            received = read_to_eof(s)
    # Closed when the end of the stream is seen, not after client_body_timeout
    # (`return` may answer first: it does not wait for the body).
    assert received == b"" or (handler == "return" and received.startswith(b"HTTP/1.1 200")), received
    assert time.monotonic() - started < 4
