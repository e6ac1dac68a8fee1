"""client_body_timeout over HTTP/1.1 for a client that sends its head and
part of a body, then nothing: while the proxy reads a body it buffers, and
for a body the handler does not need (a static GET). nginx answers 408
closes a connection whose body stalls while the proxy reads it after
client_body_timeout, logging the request as 408 (nothing is sent), and
after answering a static GET it stops waiting for the body it drops
within its lingering time; torii also says "client timed out ... while
reading client request body" in the error log.
The same tests pass against nginx."""

import socket
import time

import pytest

import harness
from scripted_upstream import ScriptedUpstream

CONF = r"""
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        root @PREFIX@/www;
        client_body_timeout 1s;
        client_header_timeout 30s;
        keepalive_timeout 30s;
        send_timeout 30s;
        location /proxy/ { proxy_pass http://127.0.0.1:@BACKEND@/; }
    }
"""

LOG_LINE = "client timed out (110: Connection timed out) while reading client request body"


@pytest.fixture
def srv(make_server):
    u = ScriptedUpstream()
    s = make_server(harness.base_conf(CONF.replace("@BACKEND@", str(u.port)), error_level="info"), start=False)
    (s.prefix / "www").mkdir(parents=True, exist_ok=True)
    (s.prefix / "www" / "index.html").write_text("hello\n")
    s.start()
    yield s
    u.stop()


def stalled_body(port, method, path):
    """Sends the head and 10 of 100 body bytes; returns (seconds until the
    server answered or closed, what it sent)."""
    c = socket.create_connection(("127.0.0.1", port), timeout=15)
    start = time.monotonic()
    c.sendall(f"{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n".encode() + b"x" * 10)
    got = b""
    try:
        while True:
            chunk = c.recv(65536)
            if not chunk:
                break
            got += chunk
            if b"408" in got.split(b"\r\n", 1)[0]:
                break
    except (ConnectionResetError, socket.timeout):
        pass
    finally:
        c.close()
    return time.monotonic() - start, got


def access_log_has(srv, text):
    return harness.wait_until(lambda: srv.access_log.exists() and text in srv.access_log.read_text(), 5,
                              what=f"{text!r} in the access log")


def test_proxy_buffering_a_body_times_out_with_408(srv):
    seconds, got = stalled_body(srv.port, "POST", "/proxy/")
    assert got == b"", got
    assert 0.8 <= seconds < 3, seconds
    access_log_has(srv, '"POST /proxy/ HTTP/1.1" 408 ')
    if not harness.IS_NGINX:
        assert LOG_LINE in srv.error_log_text()


def test_unread_body_of_a_static_get_times_out(srv):
    seconds, got = stalled_body(srv.port, "GET", "/index.html")
    # The response went out at once; the connection then waits for the
    # rest of the body no longer than client_body_timeout.
    assert got.startswith(b"HTTP/1.1 200"), got
    assert seconds < 7, seconds  # nginx: lingering_timeout (5s); torii: client_body_timeout
    access_log_has(srv, '"GET /index.html HTTP/1.1" 200 ')
