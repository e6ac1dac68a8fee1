"""What idle connections cost the server, and whether it gives the memory
back. Clients each make one request and stay connected; the server's
resident memory (its whole process tree) is read before and while they
wait, and again after they all close.

- Plain HTTP/1.1 keep-alive: at most 1 KiB per connection. The request
  state and the read and write buffers of a connection are given back
  between requests, as nginx gives back its request pool.
- TLS 1.3 with HTTP/2 (ALPN h2): at most 30 KiB per connection. Of that,
  OpenSSL 3.0 alone holds about 14 KiB per established connection (its SSL
  object, about 8.7 KiB, the session, the two AES-GCM contexts and what the
  handshake leaves), so the issue's 8 KiB cannot be reached while OpenSSL
  does the record layer; nghttp2's session about 9 KiB more (its 3 KiB
  session, a 4 KiB stream map, the HPACK tables). nginx 1.22 measures about
  15 KiB here: it passes this bound.
- TLS 1.3 with HTTP/1.1 keep-alive: at most 20 KiB per connection once
  they have been quiet for a few seconds. OpenSSL's two record buffers
  (about 17 KiB each) are kept while a connection is busy, so a request
  at a time does not allocate and free them, and given back after a
  second of quiet; with them an idle connection would hold about 45 KiB.
- After the connections close, the resident memory comes back to within
  10% of where it started, within a few seconds. nginx keeps the memory its
  connections used (glibc keeps freed memory in the process), so that case
  is skipped against it."""

import os
import re
import resource
import socket
import ssl
import subprocess
import time
from pathlib import Path

import pytest

import harness
import h2raw
from harness import base_conf, wait_until

CONNECTIONS = 1000
MAX_KIB_PER_CONNECTION = 1.0
TLS_H2_CONNECTIONS = 1000
MAX_KIB_PER_TLS_H2_CONNECTION = 30.0
TLS_H1_CONNECTIONS = 1000
MAX_KIB_PER_TLS_H1_CONNECTION = 20.0
RSS_AFTER_CLOSE_TOLERANCE = 0.10  # of the resident memory before the connections


def sanitized(binary):
    """Sanitizer builds pad every allocation: memory figures do not apply."""
    with open(binary, "rb") as f:
        while chunk := f.read(1 << 20):
            if b"__asan_init" in chunk:
                return True
    return False


needs_plain_build = pytest.mark.skipif(harness.BIN and sanitized(harness.BIN),
                                       reason="a sanitizer build pads every allocation")


def rss_kib(pid):
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            total += int(re.search(r"^VmRSS:\s+(\d+)", Path(f"/proc/{p}/status").read_text(), re.M).group(1))
            for task in os.listdir(f"/proc/{p}/task"):
                todo += [int(c) for c in Path(f"/proc/{p}/task/{task}/children").read_text().split()]
        except (OSError, AttributeError):
            pass
    return total


def settled_rss_kib(pid, timeout=10.0):
    """The resident memory once it stops moving (two readings 0.3 s apart
    agree within 64 KiB): what a server holds, not what it is still doing."""
    last = [rss_kib(pid)]

    def steady():
        time.sleep(0.3)
        now = rss_kib(pid)
        same = abs(now - last[0]) <= 64
        last[0] = now
        return same

    wait_until(steady, timeout, interval=0, what="the server's memory to settle")
    return last[0]


def kib_per_connection_once_quiet(pid, before, count, bound, timeout):
    """The resident memory's growth per connection, read until it comes
    under `bound` (idle connections give buffers back after a second of
    quiet) or `timeout` passes; the last reading."""
    per_connection = [0.0]

    def under_bound():
        per_connection[0] = (rss_kib(pid) - before) / count
        return per_connection[0] <= bound

    try:
        wait_until(under_bound, timeout, interval=0.2)
    except AssertionError:
        pass
    return per_connection[0]


def raise_fd_limit(count):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < count + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4 * count), hard))


def one_request(sock):
    sock.sendall(b"GET /small.txt HTTP/1.1\r\nHost: localhost\r\n\r\n")
    data = b""
    while not data.endswith(b"hello\n"):
        chunk = sock.recv(4096)
        assert chunk, "the server closed a keep-alive connection"
        data += chunk


def h2_request(stream):
    return h2raw.frame(h2raw.HEADERS, h2raw.END_HEADERS | h2raw.END_STREAM, stream, h2raw.fields_block(
        [(":method", "GET"), (":scheme", "https"), (":path", "/small.txt"), (":authority", "localhost")]))


def h2_request_over_tls(ctx, port):
    """A TLS connection with ALPN h2 that has made one request (stream 1)
    and read its whole response, its SETTINGS answered."""
    sock = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10), server_hostname="localhost")
    assert sock.selected_alpn_protocol() == "h2"
    sock.sendall(h2raw.PREFACE + h2raw.frame(h2raw.SETTINGS, 0, 0) + h2_request(1))
    buf = b""
    while True:
        while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], "big"):
            length, ftype, flags = int.from_bytes(buf[:3], "big"), buf[3], buf[4]
            stream = int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF
            buf = buf[9 + length:]
            if ftype == h2raw.SETTINGS and not flags & h2raw.ACK:
                sock.sendall(h2raw.frame(h2raw.SETTINGS, h2raw.ACK, 0))
            assert ftype != h2raw.GOAWAY, "the server sent GOAWAY"
            if stream == 1 and flags & h2raw.END_STREAM and ftype in (h2raw.DATA, h2raw.HEADERS):
                return sock
        chunk = sock.recv(65536)
        assert chunk, "the server closed an HTTP/2 connection"
        buf += chunk


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    d = tmp_path_factory.mktemp("idle-cert")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                    "-keyout", str(d / "key.pem"), "-out", str(d / "cert.pem")], check=True, capture_output=True)
    return d


def idle_server(make_server, cert=None):
    """One worker, long keep-alive, /small.txt; with `cert`, a second
    address with TLS and HTTP/2 (@PORT1@)."""
    tls = ""
    if cert:
        tls = f"""
    server {{
        listen 127.0.0.1:@PORT1@ ssl http2;
        ssl_certificate {cert}/cert.pem;
        ssl_certificate_key {cert}/key.pem;
        root @PREFIX@/www;
    }}"""
    srv = make_server(base_conf(
        main="worker_processes 1; worker_rlimit_nofile 8192;", events="", access_log=False,
        http=f"""
    keepalive_timeout 120s;
    server {{
        listen 127.0.0.1:@PORT0@;
        root @PREFIX@/www;
    }}{tls}
""").replace("worker_connections 1024;", "worker_connections 4096;"), nports=2 if cert else 1, start=False)
    (srv.prefix / "www").mkdir(parents=True, exist_ok=True)
    (srv.prefix / "www" / "small.txt").write_text("hello\n")
    srv.start()
    return srv


def client_tls_context(alpn="h2"):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols([alpn])
    return ctx


@needs_plain_build
def test_idle_keepalive_connections_cost_little_memory(make_server):
    raise_fd_limit(CONNECTIONS)
    srv = idle_server(make_server)
    port = srv.ports[0]
    # Warm the server's allocator and caches with connections that come and go.
    for _ in range(50):
        with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            one_request(s)
    before = settled_rss_kib(srv.proc.pid)
    held = []
    try:
        for _ in range(CONNECTIONS):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            held.append(s)
            one_request(s)
        grown = settled_rss_kib(srv.proc.pid) - before
        # Every connection is still open and served.
        one_request(held[0])
        one_request(held[-1])
    finally:
        for s in held:
            s.close()
    per_connection = grown / CONNECTIONS
    assert per_connection <= MAX_KIB_PER_CONNECTION, f"{per_connection:.2f} KiB per idle connection"


@needs_plain_build
def test_idle_tls_http2_connections_cost_bounded_memory(make_server, cert):
    raise_fd_limit(TLS_H2_CONNECTIONS)
    srv = idle_server(make_server, cert)
    port = srv.ports[1]
    ctx = client_tls_context()
    for _ in range(50):
        h2_request_over_tls(ctx, port).close()
    before = settled_rss_kib(srv.proc.pid)
    held = []
    try:
        for _ in range(TLS_H2_CONNECTIONS):
            held.append(h2_request_over_tls(ctx, port))
        # An idle session gives its frame buffer's pages (and its TLS record
        # buffers) back after a second: wait for the figure to come under
        # the bound, or settle.
        per_connection = kib_per_connection_once_quiet(srv.proc.pid, before, TLS_H2_CONNECTIONS,
                                                       MAX_KIB_PER_TLS_H2_CONNECTION, 5.0)
        # The connections are still served: a second request on the first.
        held[0].sendall(h2_request(3))
        assert held[0].recv(65536), "the server closed an idle HTTP/2 connection"
    finally:
        for s in held:
            s.close()
    assert per_connection <= MAX_KIB_PER_TLS_H2_CONNECTION, \
        f"{per_connection:.2f} KiB per idle TLS HTTP/2 connection"


@needs_plain_build
def test_idle_tls_http1_connections_give_their_record_buffers_back(make_server, cert):
    raise_fd_limit(TLS_H1_CONNECTIONS)
    srv = idle_server(make_server, cert)
    port = srv.ports[1]
    ctx = client_tls_context("http/1.1")

    def tls_request():
        s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10), server_hostname="localhost")
        one_request(s)
        return s

    for _ in range(50):
        tls_request().close()
    before = settled_rss_kib(srv.proc.pid)
    held = []
    try:
        for _ in range(TLS_H1_CONNECTIONS):
            held.append(tls_request())
        busy = (rss_kib(srv.proc.pid) - before) / TLS_H1_CONNECTIONS
        per_connection = kib_per_connection_once_quiet(srv.proc.pid, before, TLS_H1_CONNECTIONS,
                                                       MAX_KIB_PER_TLS_H1_CONNECTION, 6.0)
        # Still served after the buffers went: a request on the first and the last.
        one_request(held[0])
        one_request(held[-1])
    finally:
        for s in held:
            s.close()
    assert per_connection <= MAX_KIB_PER_TLS_H1_CONNECTION, \
        f"{per_connection:.2f} KiB per idle TLS HTTP/1.1 connection ({busy:.2f} KiB just after their requests)"


@needs_plain_build
def test_memory_comes_back_after_connections_close(make_server, cert):
    if harness.IS_NGINX:
        pytest.skip("nginx keeps the memory its connections used after they close (its RSS stays at the peak)")
    raise_fd_limit(TLS_H2_CONNECTIONS)
    srv = idle_server(make_server, cert)
    ctx = client_tls_context()
    for _ in range(50):
        h2_request_over_tls(ctx, srv.ports[1]).close()
        with socket.create_connection(("127.0.0.1", srv.ports[0]), timeout=5) as s:
            one_request(s)
    start = settled_rss_kib(srv.proc.pid)
    held = []
    try:
        for i in range(TLS_H2_CONNECTIONS):
            held.append(h2_request_over_tls(ctx, srv.ports[1]))
            if i % 2 == 0:
                s = socket.create_connection(("127.0.0.1", srv.ports[0]), timeout=5)
                held.append(s)
                one_request(s)
        peak = rss_kib(srv.proc.pid)
    finally:
        for s in held:
            s.close()
    assert peak > start * 1.5, f"the connections did not use memory enough to tell ({start} -> {peak} KiB)"
    now = [peak]

    def back():
        now[0] = rss_kib(srv.proc.pid)
        return now[0] <= start * (1 + RSS_AFTER_CLOSE_TOLERANCE)

    try:
        wait_until(back, 10.0, interval=0.2)
    except AssertionError:
        pass
    assert now[0] <= start * (1 + RSS_AFTER_CLOSE_TOLERANCE), \
        f"resident memory {start} KiB before, {peak} KiB with the connections, {now[0]} KiB 10 s after they closed"
    # Still serving.
    with socket.create_connection(("127.0.0.1", srv.ports[0]), timeout=5) as s:
        one_request(s)
