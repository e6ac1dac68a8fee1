"""HTTP/2: h2c with prior knowledge beside HTTP/1.1, every handler over h2
(static with ranges and 304, return, error_page, add_header), flow control
with small windows, request bodies, limits, graceful GOAWAY, and the
defences (rapid reset, CONTINUATION flood, HPACK bomb, SETTINGS/PING/empty
DATA floods, REFUSED_STREAM, zero-window stall). Real clients (curl,
nghttp, h2load) where they can show it; a small raw-frame client where an
attack needs bytes no polite client sends."""

import hashlib
import os
import signal
import socket
import struct
import subprocess
import time

import pytest

import harness
from h2raw import (ACK, CANCEL, CONTINUATION, DATA, END_HEADERS, END_STREAM, ENHANCE_YOUR_CALM, GOAWAY,
                   H2, HEADERS, NO_ERROR, PING, PROTOCOL_ERROR, REFUSED_STREAM, RST_STREAM, SETTINGS,
                   WINDOW_UPDATE, frame, goaway_code, literal, request_block, status_of)
from harness import base_conf, wait_until

BIG_SIZE = 1024 * 1024


def server_conf(extra_server="", extra_http="", listen="listen 127.0.0.1:@PORT@;", http2="http2 on;"):
    return base_conf(error_level="info", http=f"""
    {extra_http}
    server {{
        {listen}
        {http2}
        server_name localhost;
        root @PREFIX@/www;
        location /ret {{ return 200 "returned\\n"; }}
        location /hdr {{ add_header X-Test yes; return 200 "h\\n"; }}
        location /missing/ {{ error_page 404 /custom404.html; }}
        location = /custom404.html {{ internal; }}
        {extra_server}
    }}
""")


@pytest.fixture
def site(make_server):
    def make(**kwargs):
        server = make_server(server_conf(**kwargs), start=False)
        www = server.prefix / "www"
        www.mkdir(exist_ok=True)
        (www / "index.html").write_text("hello h2\n")
        (www / "custom404.html").write_text("custom not found\n")
        (www / "img.png").write_bytes(os.urandom(5 * 1024))
        big = os.urandom(BIG_SIZE)
        (www / "big.bin").write_bytes(big)
        server.big_sha = hashlib.sha256(big).hexdigest()
        server.start()
        return server
    return make


def curl(port, path, *args):
    cmd = ["curl", "-s", "--http2-prior-knowledge", "-o", "-", "-w", "\n%{http_code} %{http_version}",
           *args, f"http://127.0.0.1:{port}{path}"]
    out = subprocess.run(cmd, capture_output=True, timeout=30).stdout
    body, _, tail = out.rpartition(b"\n")
    code, version = tail.decode().split()
    return int(code), version, body


# ---------------------------------------------------------------------------
# Real clients


def test_curl_prior_knowledge_and_http1_on_the_same_port(site):
    server = site()
    code, version, body = curl(server.port, "/")
    assert (code, version, body) == (200, "2", b"hello h2\n")
    # HTTP/1.1 still works on the same address.
    with harness.Conn(server.port) as c:
        c.send("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")
        r = c.read_response()
        assert r.status == 200 and r.body == b"hello h2\n"


def test_broken_preface_on_a_shared_port_gets_goaway(site):
    # RFC 9113 3.4: bytes that start as the preface does and then are not
    # it are a connection error PROTOCOL_ERROR, not an HTTP/1.1 request.
    server = site()
    c = H2(server.port, preface=False)
    c.send(b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n" + frame(SETTINGS, 0, 0))
    frames = c.frames_until_close()
    assert not c.buf.startswith(b"HTTP/1."), c.buf[:100]
    assert goaway_code(frames) == PROTOCOL_ERROR, frames
    c.close()
    # Other requests with the PRI method are still HTTP/1.1 (and refused as such).
    resp, _ = harness.http_raw(server.port, b"PRI * HTTP/1.1\r\nHost: localhost\r\n\r\n", wait_close=0)
    assert resp is not None and 400 <= resp.status < 500


def test_listen_http2_parameter(site):
    server = site(listen="listen 127.0.0.1:@PORT@ http2;", http2="")
    code, version, _ = curl(server.port, "/")
    assert (code, version) == (200, "2")


def test_no_h2c_without_http2(site):
    server = site(http2="")
    out = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-o", "/dev/null", "-w", "%{http_version}",
                          f"http://127.0.0.1:{server.port}/"], capture_output=True, timeout=30)
    assert out.stdout.decode() != "2"


def test_handlers_over_h2(site):
    server = site()
    assert curl(server.port, "/ret")[::2] == (200, b"returned\n")
    code, _, body = curl(server.port, "/hdr", "-D", "-")
    assert code == 200 and b"x-test: yes" in body
    assert curl(server.port, "/missing/x")[::2] == (404, b"custom not found\n")
    code, _, body = curl(server.port, "/big.bin", "-r", "10-19")
    assert code == 206 and len(body) == 10
    # A 304 with the file's own ETag.
    code, _, head = curl(server.port, "/index.html", "-D", "-", "-o", "/dev/null")
    etag = [line.split(b":", 1)[1].strip() for line in head.split(b"\r\n") if line.lower().startswith(b"etag:")][0]
    code, _, _ = curl(server.port, "/index.html", "-H", b"If-None-Match: " + etag)
    assert code == 304


def test_nghttp_many_concurrent_streams(site):
    server = site()
    out = subprocess.run(["nghttp", "-n", "-s", "-m", "100", f"http://127.0.0.1:{server.port}/img.png"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if "/img.png" in line]
    assert len(rows) == 100 and all(" 200 " in r for r in rows)


def test_nghttp_small_windows_full_body(site):
    server = site()
    # -w/-W 10: 1 KB stream and connection windows; the body must still arrive whole.
    out = subprocess.run(["nghttp", "-w", "10", "-W", "10", f"http://127.0.0.1:{server.port}/big.bin"],
                         capture_output=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert hashlib.sha256(out.stdout).hexdigest() == server.big_sha


def test_nghttp_post_body(site, tmp_path):
    server = site(extra_server="location /small { client_max_body_size 1k; return 200 \"ok\\n\"; }")
    body = tmp_path / "body.bin"
    body.write_bytes(os.urandom(200 * 1024))
    out = subprocess.run(["nghttp", "-v", "-d", str(body), f"http://127.0.0.1:{server.port}/ret"],
                         capture_output=True, text=True, timeout=60)
    assert ":status: 200" in out.stdout and "returned" in out.stdout
    out = subprocess.run(["nghttp", "-v", "-d", str(body), f"http://127.0.0.1:{server.port}/small"],
                         capture_output=True, text=True, timeout=60)
    assert ":status: 413" in out.stdout


def test_h2load(site):
    server = site()
    out = subprocess.run(["h2load", "-n", "2000", "-c", "10", "-m", "10", f"http://127.0.0.1:{server.port}/img.png"],
                         capture_output=True, text=True, timeout=120)
    assert "2000 succeeded" in out.stdout, out.stdout


def test_access_log_says_http2(site):
    server = site()
    curl(server.port, "/ret")
    wait_until(lambda: "HTTP/2.0" in server.access_log.read_text(), 5, what="the access log line")


# ---------------------------------------------------------------------------
# Limits and GOAWAY


def test_keepalive_requests_sends_goaway(site):
    server = site(extra_server="keepalive_requests 3;")
    c = H2(server.port)
    for sid in (1, 3, 5, 7, 9):
        c.request(sid, "/ret")
    frames = c.frames_until_close()
    goaways = [f for f in frames if f[0] == GOAWAY]
    assert goaways, frames
    last = int.from_bytes(goaways[0][3][:4], "big") & 0x7FFFFFFF
    assert last == 5
    done = {f[2] for f in frames if f[0] in (DATA, HEADERS) and f[1] & END_STREAM}
    assert {1, 3, 5} <= done


def test_refused_stream_beyond_limit(site):
    server = site(extra_http="http2_max_concurrent_streams 2;")
    c = H2(server.port)
    # Five at once, before our SETTINGS ACK: the limit already holds, and
    # the excess streams are refused one by one (after the ACK too: see
    # test_refused_stream_after_settings_ack).
    burst = b"".join(frame(HEADERS, END_HEADERS | END_STREAM, sid, request_block("/big.bin")) for sid in (1, 3, 5, 7, 9))
    c.send(burst)
    refused = set()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(refused) < 3:
        f = c.read_frame()
        if f is None:
            break
        if f[0] == RST_STREAM and int.from_bytes(f[3], "big") == REFUSED_STREAM:
            refused.add(f[2])
    assert refused == {5, 7, 9}


def test_refused_stream_after_settings_ack(site):
    server = site(extra_http="http2_max_concurrent_streams 2;")
    c = H2(server.port)
    assert c.handshake().get(0x3) == 2  # SETTINGS_MAX_CONCURRENT_STREAMS
    # Three 1 MB responses held by the 64 KB windows: two streams stay
    # open, the third is one too many. RFC 9113 5.1.2: a stream error
    # (REFUSED_STREAM), not a connection error.
    c.send(b"".join(frame(HEADERS, END_HEADERS | END_STREAM, sid, request_block("/big.bin")) for sid in (1, 3, 5)))
    seen = []
    while not any(f[0] == RST_STREAM for f in seen):
        f = c.read_frame()
        assert f is not None, seen
        seen.append(f)
    rst = [f for f in seen if f[0] == RST_STREAM]
    assert [(f[2], int.from_bytes(f[3], "big")) for f in rst] == [(5, REFUSED_STREAM)]
    # The connection goes on: open the windows and both streams finish whole.
    inc = struct.pack(">I", 4 * BIG_SIZE)
    c.send(frame(WINDOW_UPDATE, 0, 0, inc) + frame(WINDOW_UPDATE, 0, 1, inc) + frame(WINDOW_UPDATE, 0, 3, inc))
    bodies = {1: hashlib.sha256(), 3: hashlib.sha256()}
    done = set()
    while done != {1, 3}:
        f = c.read_frame()
        assert f is not None, "connection closed"
        seen.append(f)
        ftype, flags, sid, payload = f
        if ftype == DATA and sid in bodies:
            bodies[sid].update(payload)
        if ftype in (DATA, HEADERS) and flags & END_STREAM:
            done.add(sid)
    assert all(h.hexdigest() == server.big_sha for h in bodies.values())
    heads = {f[2]: status_of(f[3]) for f in seen if f[0] == HEADERS}
    assert heads == {1: 200, 3: 200}
    assert not any(f[0] == GOAWAY for f in seen)
    # And it still takes new streams.
    c.request(7, "/ret")
    f = c.read_frame()
    while f is not None and not (f[0] == HEADERS and f[2] == 7):
        assert f[0] != GOAWAY, f
        f = c.read_frame()
    assert f is not None and status_of(f[3]) == 200
    if not harness.IS_NGINX:
        assert "client exceeded http2_max_concurrent_streams" in server.error_log_text()


def test_nghttp_sees_max_concurrent_streams(site):
    server = site(extra_http="http2_max_concurrent_streams 7;")
    out = subprocess.run(["nghttp", "-nv", f"http://127.0.0.1:{server.port}/ret"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    # One block per frame, each starting with its "[  0.001] ..." line.
    blocks = out.stdout.split("\n[")
    ours = [b for b in blocks if "recv SETTINGS frame" in b and "flags=0x00" in b]
    assert ours and "[SETTINGS_MAX_CONCURRENT_STREAMS(0x03):7]" in ours[0], out.stdout


def test_large_header_list_is_431(site):
    server = site(extra_server="large_client_header_buffers 2 1k;")
    c = H2(server.port)
    c.request(1, "/", extra=[(f"x-h{i}", "v" * 500) for i in range(8)])
    frames = c.frames_until_close(limit=20)
    heads = [f for f in frames if f[0] == HEADERS and f[2] == 1]
    assert heads and status_of(heads[0][3]) == 431 if heads else False, frames


def test_graceful_shutdown_finishes_stream(site):
    server = site()
    # A 64 KB window: the 1 MB body waits on our WINDOW_UPDATEs.
    c = H2(server.port)
    c.request(1, "/big.bin")
    got = 0
    saw_goaway = None
    sha = hashlib.sha256()
    signalled = False
    while True:
        f = c.read_frame()
        if f is None:
            break
        ftype, flags, sid, payload = f
        if ftype == GOAWAY:
            saw_goaway = int.from_bytes(payload[4:8], "big")
        if ftype == DATA and sid == 1:
            got += len(payload)
            sha.update(payload)
            if not signalled:
                server.signal(signal.SIGQUIT)
                signalled = True
                time.sleep(0.2)
            if payload:
                inc = struct.pack(">I", len(payload))
                c.send(frame(WINDOW_UPDATE, 0, 0, inc) + frame(WINDOW_UPDATE, 0, 1, inc))
            if flags & END_STREAM:
                break
    assert saw_goaway == NO_ERROR
    assert got == BIG_SIZE and sha.hexdigest() == server.big_sha
    assert c.frames_until_close() is not None
    assert server.wait_exit(10) == 0


def test_idle_timeout_goaway(site):
    server = site(extra_server="keepalive_timeout 1s;")
    c = H2(server.port)
    c.request(1, "/ret")
    start = time.monotonic()
    frames = c.frames_until_close()
    assert goaway_code(frames) == NO_ERROR
    assert time.monotonic() - start < 8


def test_keepalive_timeout_counts_from_the_last_request(site):
    # A connection in use is not idle: requests every 0.3 s for three
    # times keepalive_timeout keep it open, with no GOAWAY.
    server = site(extra_server="keepalive_timeout 1s;")
    c = H2(server.port)
    end = time.monotonic() + 3
    sid = 1
    while time.monotonic() < end:
        c.request(sid, "/ret")
        while True:
            f = c.read_frame()
            assert f is not None, f"connection closed after {sid // 2} requests"
            assert f[0] != GOAWAY, f"GOAWAY after {sid // 2} requests"
            if f[2] == sid and f[0] in (HEADERS, DATA) and f[1] & END_STREAM:
                break
        sid += 2
        time.sleep(0.3)  # the client's pace, below the timeout
    assert sid > 9
    # And once idle, the timeout still ends it.
    assert goaway_code(c.frames_until_close()) == NO_ERROR


# ---------------------------------------------------------------------------
# Defences


def test_rapid_reset_gets_goaway(site):
    server = site()
    c = H2(server.port)
    burst = b""
    for i in range(1000):
        sid = 1 + 2 * i
        burst += frame(HEADERS, END_HEADERS | END_STREAM, sid, request_block("/big.bin"))
        burst += frame(RST_STREAM, 0, sid, struct.pack(">I", CANCEL))
    try:
        c.send(burst)
    except (BrokenPipeError, ConnectionResetError):
        pass
    frames = c.frames_until_close()
    assert goaway_code(frames) == ENHANCE_YOUR_CALM
    # Most of those requests never reached a handler.
    logged = server.access_log.read_text() if server.access_log.exists() else ""
    assert logged.count("big.bin") < 500


def test_continuation_flood(site):
    server = site()
    c = H2(server.port)
    block = request_block("/", extra=[("x-long", "a" * 3000)])
    pieces = [block[i:i + 10] for i in range(0, len(block), 10)]
    data = frame(HEADERS, 0, 1, pieces[0])
    data += b"".join(frame(CONTINUATION, 0, 1, p) for p in pieces[1:])
    try:
        c.send(data)
    except (BrokenPipeError, ConnectionResetError):
        pass
    frames = c.frames_until_close()
    assert goaway_code(frames) is not None and goaway_code(frames) != NO_ERROR
    assert not any(f[0] == HEADERS for f in frames)


def test_hpack_bomb_is_bounded(site):
    server = site()
    c = H2(server.port)
    # One 4 KB entry in the dynamic table, then 200 one-byte references to it:
    # 800 KB of decoded fields from a 4 KB block.
    block = request_block("/") + literal("x-bomb", "b" * 4000, indexing=True) + bytes([0xBE]) * 200
    c.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, block))
    f = c.read_frame()
    while f is not None and f[0] != HEADERS:
        f = c.read_frame()
    assert f is not None and status_of(f[3]) == 431


@pytest.mark.parametrize("kind", ["settings", "ping"])
def test_control_frame_flood(site, kind):
    server = site()
    c = H2(server.port)
    one = frame(SETTINGS, 0, 0) if kind == "settings" else frame(PING, 0, 0, b"12345678")
    try:
        c.send(one * 2000)
    except (BrokenPipeError, ConnectionResetError):
        pass
    frames = c.frames_until_close()
    assert goaway_code(frames) == ENHANCE_YOUR_CALM


def test_empty_data_flood(site):
    server = site()
    c = H2(server.port)
    c.request(1, "/ret", method="POST", end_stream=False)
    try:
        c.send(frame(DATA, 0, 1) * 1000)
    except (BrokenPipeError, ConnectionResetError):
        pass
    frames = c.frames_until_close()
    assert goaway_code(frames) == ENHANCE_YOUR_CALM


def test_zero_window_stall_times_out(site):
    server = site(extra_server="send_timeout 1s;")
    # SETTINGS_INITIAL_WINDOW_SIZE = 0: the response can never leave.
    c = H2(server.port, settings=struct.pack(">HI", 0x4, 0))
    c.request(1, "/big.bin")
    start = time.monotonic()
    frames = c.frames_until_close()
    elapsed = time.monotonic() - start
    assert 0.5 < elapsed < 8, elapsed
    assert not any(f[0] == DATA and f[3] for f in frames)
    wait_until(lambda: "timed out" in server.error_log_text(), 5, what="the timeout in the error log")


def test_silent_request_body_times_out_with_408(site):
    # The proxy reads the body before it connects: a client that stops
    # sending it is answered 408 after client_body_timeout, then the stream
    # is reset with NO_ERROR (the rest of the body is not wanted); the
    # connection itself goes on.
    server = site(extra_server="location /upload { client_body_timeout 1s; proxy_pass http://127.0.0.1:9; }")
    c = H2(server.port)
    c.handshake()
    c.request(1, "/upload", end_stream=False, method="POST", extra=[("content-length", "100")])
    c.send(frame(DATA, 0, 1, b"0123456789"))
    start = time.monotonic()
    status, reset = None, None
    while reset is None:
        f = c.read_frame()
        assert f is not None, "connection closed"
        if f[0] == HEADERS and f[2] == 1:
            status = status_of(f[3])
        elif f[0] == RST_STREAM and f[2] == 1:
            reset = int.from_bytes(f[3], "big")
    assert 0.5 < time.monotonic() - start < 8
    assert status == 408
    assert reset == NO_ERROR
    c.request(3, "/ret")
    got = None
    while got is None:
        f = c.read_frame()
        assert f is not None, "connection closed"
        if f[0] == HEADERS and f[2] == 3:
            got = status_of(f[3])
    assert got == 200
    c.close()
    assert "while reading client request body" in server.error_log_text()


# ---------------------------------------------------------------------------
# TLS: ALPN offers h2 when http2 is on


@pytest.fixture
def cert(tmp_path):
    key, crt = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(crt),
                    "-days", "2", "-subj", "/CN=localhost"], check=True, capture_output=True, timeout=60)
    return key, crt


@pytest.mark.parametrize("form", ["directive", "listen"])
def test_tls_alpn_h2(site, cert, form):
    key, crt = cert
    tls = f"ssl_certificate {crt}; ssl_certificate_key {key};"
    if form == "directive":
        server = site(listen="listen 127.0.0.1:@PORT@ ssl;", extra_server=tls)
    else:
        server = site(listen="listen 127.0.0.1:@PORT@ ssl http2;", http2="", extra_server=tls)
    url = f"https://127.0.0.1:{server.port}"
    out = subprocess.run(["curl", "-sk", "-o", "-", "-w", "\n%{http_code} %{http_version}", url + "/"],
                         capture_output=True, timeout=30).stdout
    assert out.endswith(b"\n200 2") and out.startswith(b"hello h2\n")
    # HTTP/1.1 is still offered.
    out = subprocess.run(["curl", "-sk", "--http1.1", "-o", "/dev/null", "-w", "%{http_version}", url + "/"],
                         capture_output=True, timeout=30).stdout
    assert out == b"1.1"
    out = subprocess.run(["nghttp", url + "/big.bin"], capture_output=True, timeout=60)
    assert hashlib.sha256(out.stdout).hexdigest() == server.big_sha
    out = subprocess.run(["h2load", "-n", "500", "-c", "5", "-m", "10", url + "/img.png"],
                         capture_output=True, text=True, timeout=120)
    assert "500 succeeded" in out.stdout and "Application protocol: h2" in out.stdout


def test_tls_without_http2_offers_only_http1(site, cert):
    key, crt = cert
    server = site(listen="listen 127.0.0.1:@PORT@ ssl;", http2="",
                  extra_server=f"ssl_certificate {crt}; ssl_certificate_key {key};")
    out = subprocess.run(["curl", "-sk", "-o", "/dev/null", "-w", "%{http_version}",
                          f"https://127.0.0.1:{server.port}/"], capture_output=True, timeout=30).stdout
    assert out == b"1.1"


# ---------------------------------------------------------------------------
# Proxied streams under HTTP/2 flow control


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_proxied_slow_reader_is_not_buffered(make_server):
    upstream = make_server(base_conf(http="""
    server { listen 127.0.0.1:@PORT@; root @PREFIX@/www; }
"""), start=False)
    (upstream.prefix / "www").mkdir()
    huge = os.urandom(40 * 1024 * 1024)
    (upstream.prefix / "www" / "huge.bin").write_bytes(huge)
    upstream.start()
    front = make_server(base_conf(http=f"""
    server {{
        listen 127.0.0.1:@PORT@;
        http2 on;
        location / {{ proxy_pass http://127.0.0.1:{upstream.port}; }}
    }}
"""))
    before = rss_kb(front.proc.pid)
    c = H2(front.port)
    c.request(1, "/huge.bin")
    got = 0
    deadline = time.monotonic() + 10
    while got < 65535 and time.monotonic() < deadline:
        f = c.read_frame()
        assert f is not None
        if f[0] == DATA:
            got += len(f[3])
    time.sleep(1.0)  # the upstream could send all 40 MB meanwhile if nothing held it back
    grown = rss_kb(front.proc.pid) - before
    assert grown < 16 * 1024, f"torii grew by {grown} KB for a reader that took 64 KB"
    # Then the reader speeds up and the whole body arrives intact.
    sha = hashlib.sha256()
    c2 = subprocess.run(["nghttp", f"http://127.0.0.1:{front.port}/huge.bin"], capture_output=True, timeout=120)
    sha.update(c2.stdout)
    assert sha.hexdigest() == hashlib.sha256(huge).hexdigest()
    c.close()
