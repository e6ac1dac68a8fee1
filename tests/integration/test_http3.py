"""HTTP/3 over QUIC, checked with an independent client: gtlsclient from
Debian's ngtcp2-client (ngtcp2 + nghttp3 + GnuTLS). It always exits 0, so
every check reads the `:status` lines and the bodies it saved.

torii only: Debian's nginx 1.22 has no HTTP/3 module (nginx-light lacks
http_v3), so these configs cannot run there. The forms are nginx's own
(`listen ... quic reuseport`, `http3 on`, the http3_*/quic_* directives)
plus the form seed 000 uses (`http3 on` beside `listen ... ssl`).
"""

import os
import re
import select
import shutil
import socket
import subprocess
import threading
import time

import pytest

import harness
from counting_upstream import CountingUpstream
from harness import base_conf, wait_until

pytestmark = [
    pytest.mark.skipif(shutil.which("gtlsclient") is None, reason="needs gtlsclient (ngtcp2-client)"),
    pytest.mark.skipif(harness.IS_NGINX, reason="Debian's nginx has no HTTP/3"),
]


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    d = tmp_path_factory.mktemp("h3certs")
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "a.test.key",
                        "-out", "a.test.pem", "-days", "2", "-subj", "/CN=a.test",
                        "-addext", "subjectAltName=DNS:a.test"], cwd=d, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return d


def write_site(prefix):
    html = prefix / "html"
    html.mkdir(parents=True, exist_ok=True)
    (html / "index.html").write_text("hello h3\n")
    big = os.urandom(1024 * 1024)
    (html / "big.bin").write_bytes(big)
    (html / "50x.html").write_text("sorry\n")
    return big


def h3_conf(cert, listen="listen 127.0.0.1:@PORT0@ ssl;\n        http3 on;", extra_server="", extra_http=""):
    return base_conf(f"""
    {extra_http}
    server {{
        {listen}
        server_name a.test;
        ssl_certificate {cert}/a.test.pem;
        ssl_certificate_key {cert}/a.test.key;
        root @PREFIX@/html;
        add_header X-Test h3;
        location = /hello {{
            return 200 "proto=$server_protocol h3=$http3\\n";
        }}
        location = /details {{
            return 200 "$ssl_curve|$ssl_alpn_protocol|$ssl_session_id|$tcpinfo_rtt|$pipe\\n";
        }}
        location = /moved {{
            return 301 /index.html;
        }}
        location = /short {{
            return 200 "ok\n";
        }}
        {extra_server}
    }}
""", error_level="info")


def gtls(port, *paths, args=(), download=None, timeout=30):
    """Runs gtlsclient against 127.0.0.1:port for https://a.test:port/PATH...
    Returns its output (headers as `[name: value]` lines)."""
    cmd = ["gtlsclient", "--no-quic-dump", "--no-http-dump", "--exit-on-all-streams-close", "--timeout=10s"]
    if download is not None:
        cmd += ["-q", f"--download={download}"]
    cmd += list(args) + ["127.0.0.1", str(port)] + [f"https://a.test:{port}{p}" for p in paths]
    r = subprocess.run(cmd, capture_output=True, timeout=timeout)
    return r.stdout.decode("latin-1") + r.stderr.decode("latin-1")


def gtls_until(port, path, marker, timeout, args=(), connect_port=None):
    """Runs gtlsclient until its output shows `marker` (bytes), then kills
    it: for clients a test abandons mid-exchange. Returns the output."""
    cmd = ["gtlsclient", "--no-quic-dump", "--no-http-dump", *args, "127.0.0.1", str(connect_port or port),
           f"https://a.test:{port}{path}"]
    client = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seen = []
    reader = threading.Thread(target=lambda: seen.extend(iter(client.stdout.readline, b"")), daemon=True)
    reader.start()
    try:
        wait_until(lambda: any(marker in line for line in seen), timeout, what=marker.decode())
    finally:
        client.kill()
        client.wait()
        reader.join()
    return b"".join(seen).decode("latin-1")


def statuses(out):
    return re.findall(r"\[:status: (\d+)\]", out)


def header(out, name):
    m = re.search(r"\[" + re.escape(name) + r": ([^\]]*)\]", out)
    return m.group(1) if m else None


def test_get_small_and_1mb_file_byte_for_byte(make_server, tmp_path, cert):
    srv = make_server(h3_conf(cert), start=False)
    big = write_site(srv.prefix)
    srv.start()
    out = gtls(srv.port, "/index.html")
    assert statuses(out) == ["200"], out
    assert header(out, "x-test") == "h3"
    assert header(out, "content-length") == "9"
    dl = tmp_path / "dl"
    dl.mkdir()
    gtls(srv.port, "/big.bin", download=dl)
    assert (dl / "big.bin").read_bytes() == big
    log = srv.access_log.read_text()
    assert '"GET /big.bin HTTP/3.0" 200 1048576' in log


def test_200_requests_on_one_connection(make_server, cert):
    srv = make_server(h3_conf(cert), start=False)
    write_site(srv.prefix)
    srv.start()
    out = gtls(srv.port, "/index.html", args=["-n", "200"], timeout=60)
    assert statuses(out).count("200") == 200, out[-2000:]
    wait_until(lambda: srv.access_log.read_text().count("HTTP/3.0\" 200") == 200, 10, what="200 log lines")


def test_404_error_page_and_return(make_server, cert):
    srv = make_server(h3_conf(cert, extra_server="error_page 404 /50x.html;"), start=False)
    write_site(srv.prefix)
    srv.start()
    dl = srv.prefix / "dl"
    dl.mkdir()
    out = gtls(srv.port, "/missing", download=dl)
    out = gtls(srv.port, "/missing")
    assert statuses(out) == ["404"], out
    assert header(out, "content-length") == "6"  # the error_page's file
    out = gtls(srv.port, "/moved")
    assert statuses(out) == ["301"], out
    assert header(out, "location") == f"https://a.test:{srv.port}/index.html"
    gtls(srv.port, "/hello", download=dl)
    assert (dl / "hello").read_text() == "proto=HTTP/3.0 h3=h3\n"
    # The TLS variables asked of GnuTLS read as over TCP; no TCP_INFO over QUIC.
    gtls(srv.port, "/details", download=dl)
    curve, alpn, session_id, rtt, pipe = (dl / "details").read_text().strip().split("|")
    assert curve in ("X25519", "prime256v1", "secp384r1") and alpn == "h3" and rtt == "" and pipe == ".", curve
    assert re.fullmatch(r"([0-9a-f]{2})*", session_id), session_id
    # A body short enough to live inside its string object (no heap buffer).
    gtls(srv.port, "/short", download=dl)
    assert (dl / "short").read_bytes() == b"ok\n"


def test_quic_listen_form_answers_on_udp_only(make_server, cert):
    # nginx's own form: a quic listen (UDP) beside a plain TCP one.
    conf = h3_conf(cert, listen="listen 127.0.0.1:@PORT0@;\n        listen 127.0.0.1:@PORT1@ quic reuseport;")
    srv = make_server(conf, nports=2, start=False, wait_ports=[0])
    write_site(srv.prefix)
    srv.start()
    out = gtls(srv.ports[1], "/index.html")
    assert statuses(out) == ["200"], out
    # Nothing listens on TCP at the quic port.
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", srv.ports[1]), timeout=2).close()


@pytest.mark.parametrize("directive, message", [
    ("http3_stream_buffer_size 0;", 'invalid value "0" in "http3_stream_buffer_size"'),
    ("quic_active_connection_id_limit 1;", 'invalid value "1"'),
])
def test_refused_directives_name_themselves(tmp_path, cert, directive, message):
    prefix = tmp_path / "p"
    (prefix / "logs").mkdir(parents=True)
    conf = prefix / "t.conf"
    conf.write_text(h3_conf(cert, extra_server=directive).replace("@PREFIX@", str(prefix)).replace("@PORT0@", "1"))
    r = harness.cli(["-t", "-c", str(conf)], prefix=prefix)
    assert r.returncode != 0
    assert message in (r.stdout + r.stderr)


def test_quic_with_ssl_parameter_is_refused(tmp_path, cert):
    prefix = tmp_path / "p"
    (prefix / "logs").mkdir(parents=True)
    conf = prefix / "t.conf"
    conf.write_text(h3_conf(cert, listen="listen 127.0.0.1:1 quic ssl;").replace("@PREFIX@", str(prefix)))
    r = harness.cli(["-t", "-c", str(conf)], prefix=prefix)
    assert r.returncode != 0
    assert '"ssl" parameter is incompatible with "quic"' in (r.stdout + r.stderr)


# ---------------------------------------------------------------------------
# The proxy over HTTP/3: request bodies under QUIC flow control, responses
# streamed with back-pressure.


@pytest.fixture
def upstream():
    from bad_upstream import BadUpstream
    made = []

    def make(name="app"):
        u = BadUpstream(name)
        made.append(u)
        return u
    yield make
    for u in made:
        u.stop()


# torii's own plain TCP side as an origin for the proxy.
PLAIN_ORIGIN = "server { listen 127.0.0.1:@PORT1@; root @PREFIX@/html; access_log off; }"


def proxy_locations(port):
    return f"""
        location /echo {{ proxy_pass http://127.0.0.1:{port}; proxy_http_version 1.1; }}
        location /stream/ {{
            proxy_pass http://127.0.0.1:{port}/echo/;
            proxy_http_version 1.1;
            proxy_request_buffering off;
        }}
        location /part {{
            proxy_pass http://127.0.0.1:@PORT1@/big.bin;
            proxy_set_header Range "bytes=1000-1999";
        }}
"""


def test_proxy_request_bodies_over_flow_control(make_server, upstream, tmp_path, cert):
    up = upstream()
    srv = make_server(h3_conf(cert, extra_server=proxy_locations(up.port), extra_http=PLAIN_ORIGIN), nports=2,
                      start=False)
    write_site(srv.prefix)
    srv.start()
    # Larger than http3_stream_buffer_size (64k): the client's window must
    # be given back as the proxy takes the bytes.
    body = os.urandom(300 * 1024)
    (tmp_path / "body").write_bytes(body)
    for path in ("/echo", "/stream/"):
        dl = tmp_path / ("dl" + path.strip("/"))
        dl.mkdir()
        out = gtls(srv.port, path, args=["-m", "POST", "-d", str(tmp_path / "body")], download=dl)
        files = list(dl.iterdir())
        assert len(files) == 1, (out, files)
        got = files[0].read_bytes()
        assert got.startswith(b"POST /echo"), got[:200]
        assert got.endswith(body)
    log = srv.access_log.read_text()
    assert log.count('"POST /echo HTTP/3.0" 200') == 1 and log.count('"POST /stream/ HTTP/3.0" 200') == 1


def test_proxy_range_from_upstream_reaches_the_client(make_server, upstream, tmp_path, cert):
    # gtlsclient cannot send a Range header; the proxy asks torii's own TCP
    # side for one, so a 206 with its Content-Range crosses HTTP/3.
    up = upstream()
    srv = make_server(h3_conf(cert, extra_server=proxy_locations(up.port), extra_http=PLAIN_ORIGIN), nports=2,
                      start=False)
    big = write_site(srv.prefix)
    srv.start()
    dl = tmp_path / "dl"
    dl.mkdir()
    out = gtls(srv.port, "/part", download=dl)
    out = gtls(srv.port, "/part")
    assert statuses(out) == ["206"], out
    assert header(out, "content-range") == f"bytes 1000-1999/{len(big)}"
    assert (dl / "part").read_bytes() == big[1000:2000]


def _rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_slow_reader_does_not_make_the_proxy_buffer_the_response(make_server, tmp_path, cert, monkeypatch):
    monkeypatch.setenv("ASAN_OPTIONS", os.environ.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=4")
    size = 48 * 1024 * 1024
    # The upstream is torii's own TCP side serving a sparse file.
    srv = make_server(h3_conf(cert, extra_server="""
        location /big/ {
            proxy_pass http://127.0.0.1:@PORT1@/;
            proxy_buffers 4 16k;
        }
""", extra_http=PLAIN_ORIGIN), nports=2, start=False)
    write_site(srv.prefix)
    with open(srv.prefix / "html" / "sparse.bin", "wb") as f:
        f.truncate(size)
    srv.start()
    base = _rss_kb(srv.proc.pid)
    dl = tmp_path / "dl"
    dl.mkdir()
    client = subprocess.Popen(["gtlsclient", "-q", "--exit-on-all-streams-close", "--timeout=30s",
                               f"--download={dl}", "127.0.0.1", str(srv.port),
                               f"https://a.test:{srv.port}/big/sparse.bin"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        target = dl / "sparse.bin"
        wait_until(lambda: target.exists() and target.stat().st_size > 1024 * 1024, 20, what="download started")
        client.send_signal(19)  # SIGSTOP: the client reads and acknowledges nothing
        stopped_at = target.stat().st_size
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:  # the server keeps trying meanwhile
            time.sleep(0.1)
        slow_rss = _rss_kb(srv.proc.pid)
        client.send_signal(18)  # SIGCONT
        client.wait(timeout=60)
    finally:
        if client.poll() is None:
            client.kill()
    assert stopped_at < size
    assert target.stat().st_size == size
    assert slow_rss - base < 16 * 1024, (base, slow_rss)


# ---------------------------------------------------------------------------
# Alt-Svc, reload and graceful stop


def curl_head(port, path="/index.html"):
    r = subprocess.run(["curl", "-sk", "-D", "-", "-o", "/dev/null", "--resolve", f"a.test:{port}:127.0.0.1",
                        f"https://a.test:{port}{path}"], capture_output=True, timeout=20)
    return r.stdout.decode("latin-1")


def test_alt_svc_on_tcp_responses_and_off_switch(make_server, cert):
    srv = make_server(h3_conf(cert), start=False)
    write_site(srv.prefix)
    srv.start()
    head = curl_head(srv.port)
    assert f'alt-svc: h3=":{srv.port}"; ma=86400' in head.lower(), head
    # Not over HTTP/3 itself.
    assert header(gtls(srv.port, "/index.html"), "alt-svc") is None
    # nginx's form: the quic listen's port is advertised on the TCP one.
    conf = h3_conf(cert, listen="listen 127.0.0.1:@PORT0@ ssl;\n        listen 127.0.0.1:@PORT1@ quic;")
    srv2 = make_server(conf, nports=2, start=False, wait_ports=[0])
    write_site(srv2.prefix)
    srv2.start()
    assert f'alt-svc: h3=":{srv2.ports[1]}"; ma=86400' in curl_head(srv2.port).lower()
    srv3 = make_server(h3_conf(cert, extra_server="http3_alt_svc off;"), start=False)
    write_site(srv3.prefix)
    srv3.start()
    head = curl_head(srv3.port)
    assert "200" in head.split("\n")[0] and "alt-svc" not in head.lower()


def start_slow_download(port, path, dl):
    """A gtlsclient download, stopped (SIGSTOP) once it is under way."""
    client = subprocess.Popen(["gtlsclient", "-q", "--exit-on-all-streams-close", "--timeout=30s",
                               f"--download={dl}", "127.0.0.1", str(port), f"https://a.test:{port}{path}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    target = dl / path.rsplit("/", 1)[1]
    wait_until(lambda: target.exists() and target.stat().st_size > 1024 * 1024, 20, what="download started")
    client.send_signal(19)
    return client, target


def test_reload_keeps_established_connections(make_server, tmp_path, cert):
    size = 32 * 1024 * 1024
    srv = make_server(h3_conf(cert), start=False)
    write_site(srv.prefix)
    with open(srv.prefix / "html" / "sparse.bin", "wb") as f:
        f.truncate(size)
    srv.start()
    dl = tmp_path / "dl"
    dl.mkdir()
    client, target = start_slow_download(srv.port, "/sparse.bin", dl)
    try:
        srv.reload(srv.template.replace("add_header X-Test h3;", "add_header X-Test reloaded;"))
        wait_until(lambda: header(gtls(srv.port, "/index.html"), "x-test") == "reloaded", 10, what="new config")
        client.send_signal(18)
        client.wait(timeout=60)
    finally:
        if client.poll() is None:
            client.kill()
    assert target.stat().st_size == size
    assert srv.alive()


def test_graceful_stop_lets_a_download_finish(make_server, tmp_path, cert):
    size = 32 * 1024 * 1024
    srv = make_server(h3_conf(cert), start=False)
    write_site(srv.prefix)
    with open(srv.prefix / "html" / "sparse.bin", "wb") as f:
        f.truncate(size)
    srv.start()
    dl = tmp_path / "dl"
    dl.mkdir()
    client, target = start_slow_download(srv.port, "/sparse.bin", dl)
    try:
        srv.signal(3)  # SIGQUIT: GOAWAY, requests in flight finish
        # The TCP listener closes at once; the process waits for the download.
        wait_until(lambda: not harness.listens_on(srv.proc.pid, srv.port), 10, what="listener closed")
        assert srv.alive()
        client.send_signal(18)
        client.wait(timeout=60)
    finally:
        if client.poll() is None:
            client.kill()
    assert target.stat().st_size == size
    assert srv.wait_exit(15) is not None


# ---------------------------------------------------------------------------
# Bad input gets the RFC's answer (or none) and never a crash. Datagrams
# are written by hand: a QUIC long header is plain bytes before any key.


def long_header(version, dcid, scid, first=0xC3, token=b"", size=1200, extra=b""):
    """A long-header packet (Initial by default) padded to `size` bytes:
    the header parses, the protected payload is random."""
    head = bytes([first]) + version.to_bytes(4, "big") + bytes([len(dcid)]) + dcid + bytes([len(scid)]) + scid
    if (first & 0x30) == 0:  # Initial: token
        head += bytes([len(token)]) + token if len(token) < 64 else bytes([0x40 | (len(token) >> 8),
                                                                             len(token) & 0xFF]) + token
    rest = max(size - len(head) - 2, 20)
    head += bytes([0x40 | (rest >> 8), rest & 0xFF])
    return head + extra + os.urandom(rest - len(extra))


def exchange(port, datagram, expect_reply=True):
    """Sends one datagram from a fresh socket; returns the first reply (or
    None when none came in a second, which is the answer for a dropped one)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.settimeout(2.0 if expect_reply else 1.0)
        s.sendto(datagram, ("127.0.0.1", port))
        try:
            return s.recv(65536)
        except socket.timeout:
            return None
    finally:
        s.close()


def test_unknown_version_gets_version_negotiation(make_server, cert):
    srv = make_server(h3_conf(cert), start=False)
    write_site(srv.prefix)
    srv.start()
    dcid, scid = os.urandom(8), os.urandom(8)
    reply = exchange(srv.port, long_header(0xBABABABA, dcid, scid))
    assert reply is not None
    # RFC 9000 17.2.1: version 0, our connection IDs swapped, then versions.
    assert reply[0] & 0x80 and reply[1:5] == b"\0\0\0\0"
    assert reply[5] == 8 and reply[6:14] == scid and reply[14] == 8 and reply[15:23] == dcid
    versions = [int.from_bytes(reply[i:i + 4], "big") for i in range(23, len(reply), 4)]
    assert 1 in versions
    # Too small to be a client's first datagram: answering could amplify.
    assert exchange(srv.port, long_header(0xBABABABA, dcid, scid, size=200), expect_reply=False) is None
    assert statuses(gtls(srv.port, "/index.html")) == ["200"]


def test_truncated_initial_and_garbage_are_dropped_or_reset(make_server, cert):
    srv = make_server(h3_conf(cert), start=False)
    write_site(srv.prefix)
    srv.start()
    # An Initial cut below 1200 bytes: dropped (RFC 9000 14.1).
    full = long_header(1, os.urandom(8), os.urandom(8))
    assert exchange(srv.port, full[:600], expect_reply=False) is None
    # A full-size Initial whose payload does not decrypt: no connection, no answer.
    assert exchange(srv.port, full, expect_reply=False) is None
    # Short-header garbage for no connection: a stateless reset, smaller
    # than what triggered it (RFC 9000 10.3), or nothing for tiny ones.
    garbage = bytes([0x40 | 0x1F]) + os.urandom(99)
    reply = exchange(srv.port, garbage)
    assert reply is not None and len(reply) < len(garbage) and (reply[0] & 0xC0) == 0x40
    assert exchange(srv.port, bytes([0x41]) + os.urandom(20), expect_reply=False) is None
    # An unknown version may carry a 255-byte connection ID (RFC 8999); in
    # a small datagram it gets no answer (found by the datagram fuzzer: the
    # ID overflowed our 20-byte key, seen under ASan).
    assert exchange(srv.port, long_header(0x1A1A1A1A, os.urandom(31), os.urandom(8), size=300),
                    expect_reply=False) is None
    for n in (0, 1, 5, 40, 1199, 1500):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(os.urandom(n), ("127.0.0.1", srv.port))
        s.close()
    assert srv.alive()
    assert statuses(gtls(srv.port, "/index.html")) == ["200"]


def test_quic_retry_validates_addresses(make_server, cert):
    srv = make_server(h3_conf(cert, extra_server="quic_retry on;"), start=False)
    write_site(srv.prefix)
    srv.start()
    dcid, scid = os.urandom(8), os.urandom(8)
    reply = exchange(srv.port, long_header(1, dcid, scid))
    # A Retry (long header, type 3), to our SCID, no larger than the Initial.
    assert reply is not None and (reply[0] & 0xF0) == 0xF0 and reply[1:5] == b"\0\0\0\1"
    assert reply[5] == 8 and reply[6:14] == scid and len(reply) <= 1200
    # A forged Retry token: the connection is refused with INVALID_TOKEN (an Initial back).
    forged = long_header(1, dcid, scid, token=bytes([0xB6]) + os.urandom(80))
    reply = exchange(srv.port, forged)
    assert reply is not None and (reply[0] & 0xF0) == 0xC0
    # A real client follows the Retry and gets its answer.
    out = gtls(srv.port, "/index.html")
    assert statuses(out) == ["200"], out


def test_worker_connections_caps_quic_connections(make_server, tmp_path, cert):
    # Connection floods: QUIC connections count against worker_connections.
    conf = h3_conf(cert).replace("worker_connections 1024;", "worker_connections 1;")
    srv = make_server(conf, start=False)
    write_site(srv.prefix)
    with open(srv.prefix / "html" / "sparse.bin", "wb") as f:
        f.truncate(32 * 1024 * 1024)
    srv.start()
    dl = tmp_path / "dl"
    dl.mkdir()
    client, target = start_slow_download(srv.port, "/sparse.bin", dl)
    try:
        out = gtls(srv.port, "/index.html", args=["--timeout=3s"])
        assert statuses(out) == [], out
        wait_until(lambda: "worker_connections are not enough" in srv.error_log_text(), 10, what="log line")
    finally:
        client.kill()
        client.wait()


# ---------------------------------------------------------------------------
# Seed 000's "TLS 1.3 + HTTP/3" config, with paths and ports changed and
# nothing else.

SEED_000_HTTP3 = """
# 上游服务器
upstream app_backend {
    least_conn;
    server 127.0.0.1:@BACKEND@ max_fails=3 fail_timeout=30s;
    keepalive 32;
}

server {
    listen @PORT@ ssl reuseport;
    http3 on;

	server_name demo_http3;
    server_tokens off;
    
    # SSL配置
    ssl_certificate @CERT@/a.test.pem;
    ssl_certificate_key @CERT@/a.test.key;
    ssl_session_cache shared:SSL:10m;
    ssl_session_timeout 10m;

    ssl_protocols  TLSv1.3;
    ssl_ciphers  HIGH:!aNULL:!MD5;
    ssl_prefer_server_ciphers   on;
    
    # HTTP/2优化
    large_client_header_buffers 4 32k;
    http2_body_preread_size 128k;
    
    # 安全头部
    add_header Strict-Transport-Security "max-age=31536000; includeSubDomains" always;
    add_header X-Frame-Options DENY;
    add_header X-Content-Type-Options nosniff;
    add_header X-XSS-Protection "1; mode=block";
    
    # 主代理配置
    location / {
        proxy_pass http://app_backend;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        
        # 标准代理头
        proxy_set_header Host $host;
        proxy_set_header X-Real-IP $remote_addr;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_set_header X-Forwarded-Host $host;
        proxy_set_header X-Forwarded-Port $server_port;
        
        # 超时设置
        proxy_connect_timeout 5s;
        proxy_send_timeout 10s;
        proxy_read_timeout 30s;
        
        # 错误页面
        proxy_intercept_errors on;
        error_page 500 502 503 504 /50x.html;
    }
    
    # 健康检查端点
    location /health {
        access_log off;
        return 200 "healthy\\n";
        add_header Content-Type text/plain;
    }
    
    # 静态文件（如果Nginx直接提供）
    location /static/ {
        root @PREFIX@/www;
        expires 1y;
        add_header Cache-Control "public, immutable";
    }
}
"""


def test_seed_000_http3_config_runs(make_server, upstream, tmp_path, cert):
    up = upstream("app")
    conf = base_conf(SEED_000_HTTP3.replace("@BACKEND@", str(up.port)).replace("@CERT@", str(cert)))
    srv = make_server(conf, start=False)
    (srv.prefix / "www" / "static").mkdir(parents=True)
    (srv.prefix / "www" / "static" / "app.js").write_text("console.log(1)\n")
    srv.ports = [harness.PortLease().port]
    srv.write_conf()
    check = harness.cli(["-t", "-c", str(srv.conf_path)], prefix=srv.prefix)
    assert check.returncode == 0, check.stderr
    srv.start()
    dl = tmp_path / "dl"
    dl.mkdir()
    out = gtls(srv.port, "/health", download=dl)
    out = gtls(srv.port, "/health")
    assert statuses(out) == ["200"], out
    assert (dl / "health").read_text() == "healthy\n"
    # The location's own add_header replaces the server's (nginx's inheritance).
    assert header(out, "content-type") == "text/plain" and header(out, "strict-transport-security") is None
    assert header(out, "server") == "torii"
    out = gtls(srv.port, "/static/app.js")
    assert statuses(out) == ["200"] and header(out, "cache-control") is not None
    # The proxy, with the seed's headers, over HTTP/3.
    out = gtls(srv.port, "/echo")
    assert header(out, "strict-transport-security") == "max-age=31536000; includeSubDomains"
    assert header(out, "x-frame-options") == "DENY"
    gtls(srv.port, "/echo", download=dl)
    lines = (dl / "echo").read_bytes().decode("latin-1").split("\r\n")
    assert "Host: a.test" in lines and "X-Forwarded-Proto: https" in lines
    assert f"X-Forwarded-Port: {srv.port}" in lines and "X-Real-IP: 127.0.0.1" in lines
    body = tmp_path / "body"
    body.write_bytes(b"x" * 5000)
    out = gtls(srv.port, "/echo", args=["-m", "POST", "-d", str(body)])
    assert statuses(out) == ["200"], out
    # TCP clients learn where HTTP/3 is.
    assert f'alt-svc: h3=":{srv.port}"; ma=86400' in curl_head(srv.port, "/health").lower()


def test_two_workers_each_with_its_own_socket(make_server, tmp_path, cert):
    # SO_REUSEPORT: the kernel keeps a client's 4-tuple on one worker's
    # socket, so every connection finds its state (without migration).
    srv = make_server(h3_conf(cert).replace("# written by the integration tests",
                                            "worker_processes 2;"), start=False)
    big = write_site(srv.prefix)
    srv.start()
    for i in range(6):
        dl = tmp_path / f"dl{i}"
        dl.mkdir()
        out = gtls(srv.port, "/big.bin", "/index.html", download=dl)
        assert (dl / "big.bin").read_bytes() == big
        assert (dl / "index.html").read_text() == "hello h3\n"
    out = gtls(srv.port, "/index.html", args=["-n", "50"])
    assert statuses(out).count("200") == 50


@pytest.mark.parametrize("rebinding", [False, True], ids=["migration", "nat-rebinding"])
def test_client_address_change_with_two_workers(make_server, tmp_path, cert, rebinding):
    # The client moves to a new local port after the handshake, then sends
    # its request. The new 4-tuple lands on either worker's socket (the
    # kernel's hash); the connection must survive whichever it is. Eight
    # clients: a drop on the other worker would show in about half of them.
    srv = make_server(h3_conf(cert).replace("# written by the integration tests",
                                            "worker_processes 2;"), start=False)
    write_site(srv.prefix)
    srv.start()
    args = ["--change-local-addr=100ms", "--delay-stream=400ms"] + (["--nat-rebinding"] if rebinding else [])
    for i in range(8):
        dl = tmp_path / f"dl{i}"
        dl.mkdir()
        out = gtls(srv.port, "/index.html", args=args, download=dl)
        assert (dl / "index.html").exists(), f"client {i}: {out[-2000:]}"
        assert (dl / "index.html").read_text() == "hello h3\n"


RESUMED_LOCATION = """
        location = /reused {
            return 200 "reused=$ssl_session_reused\\n";
        }
"""


def reused_over_h3(port, dl, session_file, args=()):
    out = gtls(port, "/reused", args=[f"--session-file={session_file}", *args], download=dl)
    assert statuses(out) == ["200"] or (dl / "reused").exists(), out[-2000:]
    return (dl / "reused").read_text().strip()


def test_session_ticket_resumes_a_returning_client(make_server, tmp_path, cert):
    srv = make_server(h3_conf(cert, extra_server=RESUMED_LOCATION), start=False)
    write_site(srv.prefix)
    srv.start()
    session = tmp_path / "session.pem"
    dl = tmp_path / "dl"
    dl.mkdir()
    assert reused_over_h3(srv.port, dl, session) == "reused=."
    assert session.exists() and session.stat().st_size > 0, "no session ticket was issued"
    assert reused_over_h3(srv.port, dl, session) == "reused=r"
    # Each resumption brings a fresh ticket, and it resumes too.
    assert reused_over_h3(srv.port, dl, session) == "reused=r"


def test_session_tickets_off_means_full_handshakes(make_server, tmp_path, cert):
    srv = make_server(h3_conf(cert, extra_server=RESUMED_LOCATION + "ssl_session_tickets off;"), start=False)
    write_site(srv.prefix)
    srv.start()
    session = tmp_path / "session.pem"
    dl = tmp_path / "dl"
    dl.mkdir()
    assert reused_over_h3(srv.port, dl, session) == "reused=."
    assert reused_over_h3(srv.port, dl, session) == "reused=."


def test_ticket_key_file_resumes_across_restarts(make_server, tmp_path, cert):
    # The same ssl_session_ticket_key file: a ticket from one run of the
    # server resumes on the next, as on another machine sharing the file.
    keyfile = tmp_path / "ticket.key"
    keyfile.write_bytes(os.urandom(80))
    conf = h3_conf(cert, extra_server=RESUMED_LOCATION + f"ssl_session_ticket_key {keyfile};")
    session = tmp_path / "session.pem"
    dl = tmp_path / "dl"
    dl.mkdir()
    first = make_server(conf, start=False)
    write_site(first.prefix)
    first.start()
    assert reused_over_h3(first.port, dl, session) == "reused=."
    first.stop()
    second = make_server(conf.replace(str(first.port), str(first.port)), start=False)
    write_site(second.prefix)
    second.start()
    # The client's ticket names the first run's port; the server answers any.
    out = gtls(second.port, "/reused", args=[f"--session-file={session}"], download=dl)
    assert (dl / "reused").read_text().strip() == "reused=r", out[-2000:]


EARLY_LOCATION = """
        ssl_early_data on;
        location = /early {
            return 200 "early=$ssl_early_data\\n";
        }
"""


def test_zero_rtt_request_with_ssl_early_data(make_server, tmp_path, cert):
    # A returning client with a ticket and the server's transport
    # parameters sends its request in 0-RTT packets: safe methods run at
    # once and see $ssl_early_data = 1; a POST gets 425 (RFC 8470), and a
    # request after the handshake is not early.
    srv = make_server(h3_conf(cert, extra_server=EARLY_LOCATION), start=False)
    write_site(srv.prefix)
    srv.start()
    session, tp = tmp_path / "session.pem", tmp_path / "tp"
    args = [f"--session-file={session}", f"--tp-file={tp}"]
    dl = tmp_path / "dl"
    dl.mkdir()
    out = gtls(srv.port, "/early", args=args, download=dl)
    assert (dl / "early").read_text() == "early=\n", out[-2000:]
    out = gtls(srv.port, "/early", args=args, download=dl)
    assert (dl / "early").read_text() == "early=1\n", out[-2000:]
    body = tmp_path / "body"
    body.write_bytes(b"x" * 100)
    out = gtls(srv.port, "/early", args=args + ["-m", "POST", "-d", str(body)])
    assert statuses(out) == ["425"], out[-2000:]


def test_zero_rtt_off_by_default(make_server, tmp_path, cert):
    srv = make_server(h3_conf(cert, extra_server=EARLY_LOCATION.replace("ssl_early_data on;", "")), start=False)
    write_site(srv.prefix)
    srv.start()
    session, tp = tmp_path / "session.pem", tmp_path / "tp"
    args = [f"--session-file={session}", f"--tp-file={tp}"]
    dl = tmp_path / "dl"
    dl.mkdir()
    gtls(srv.port, "/early", args=args, download=dl)
    out = gtls(srv.port, "/early", args=args, download=dl)
    assert (dl / "early").read_text() == "early=\n", out[-2000:]


class RecordingRelay:
    """A UDP relay between one client and the server that keeps the
    client's datagrams, so a test can send them again verbatim as an
    attacker on the path would."""

    def __init__(self, server_port, forward_limit=None):
        # forward_limit: after that many client datagrams, the client's
        # packets are dropped (it seems to go silent); the server's still pass.
        self.forward_limit = forward_limit
        self.server = ("127.0.0.1", server_port)
        self.front = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.front.bind(("127.0.0.1", 0))
        self.back = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.back.connect(self.server)
        self.port = self.front.getsockname()[1]
        self.sent = []
        self.client = None
        self.done = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.done:
            ready, _, _ = select.select([self.front, self.back], [], [], 0.1)
            for s in ready:
                if s is self.front:
                    data, self.client = s.recvfrom(65535)
                    self.sent.append(data)
                    if self.forward_limit is None or len(self.sent) <= self.forward_limit:
                        self.back.send(data)
                elif self.client:
                    self.front.sendto(s.recv(65535), self.client)

    def close(self):
        self.done = True
        self.thread.join()
        self.front.close()
        self.back.close()


def test_replayed_zero_rtt_flight_does_not_run_twice(make_server, tmp_path, cert):
    # An attacker who captured a client's first flight (Initial with the
    # ClientHello, then the 0-RTT request) sends it again from elsewhere.
    # The replay cannot finish the handshake, and its early data must be
    # refused, so the request reaches the application once (RFC 9001 9.2,
    # RFC 8446 8).
    upstream = CountingUpstream()  # counts the requests that reach it: what a replay would repeat
    upstream.route("/counted", body=b"ok\n")
    srv = make_server(h3_conf(cert, extra_server=EARLY_LOCATION + f"""
        location = /counted {{
            proxy_pass http://127.0.0.1:{upstream.port};
        }}
"""), start=False)
    write_site(srv.prefix)
    srv.start()
    session, tp = tmp_path / "session.pem", tmp_path / "tp"
    args = [f"--session-file={session}", f"--tp-file={tp}"]
    dl = tmp_path / "dl"
    dl.mkdir()
    gtls(srv.port, "/early", args=args, download=dl)
    relay = RecordingRelay(srv.port)
    try:
        out = subprocess.run(["gtlsclient", "--no-quic-dump", "--no-http-dump", "--exit-on-all-streams-close",
                              "--timeout=10s", "-q", f"--download={dl}", *args, "127.0.0.1", str(relay.port),
                              f"https://a.test:{srv.port}/counted"], capture_output=True, timeout=30)
    finally:
        relay.close()
    assert (dl / "counted").read_text() == "ok\n", out.stdout[-2000:]
    assert upstream.count("/counted") == 1
    attacker = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    attacker.settimeout(0.2)
    # Until the original connection's closing period is over, the server
    # takes the replay for duplicate packets of it; then as a new connection.
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        for data in relay.sent[:2]:
            attacker.sendto(data, ("127.0.0.1", srv.port))
        try:
            while True:
                attacker.recv(65535)  # the server's handshake flight, unanswered
        except socket.timeout:
            pass
    attacker.close()
    upstream.stop()
    assert upstream.count("/counted") == 1


def test_request_cut_by_a_vanished_client_is_logged(make_server, tmp_path, cert):
    # The client disappears mid-download (no CONNECTION_CLOSE; its small
    # flow-control window keeps the response unfinished): when the idle
    # timeout ends the connection, the request still gets its access-log
    # line, as every request does.
    srv = make_server(h3_conf(cert, extra_server="keepalive_timeout 1s;"), start=False)
    write_site(srv.prefix)
    srv.start()
    gtls_until(srv.port, "/big.bin", b":status: 200", 10,
               args=["--max-data=30000", "--max-stream-data-bidi-local=30000"])
    wait_until(lambda: srv.access_log.exists() and "GET /big.bin" in srv.access_log.read_text(), 10,
               what="the access-log line of the cut request")



def test_flood_of_initials_turns_on_retry(make_server, tmp_path, cert):
    # 300 new connections from one address that never finish their
    # handshakes (a real client's Initial, protected again under fresh
    # connection IDs). Past 256 handshakes in progress, quic_retry off or
    # not, a new Initial gets a Retry (one stateless packet) instead of a
    # connection and a TLS handshake; a real client still gets through.
    import quic_initial
    srv = make_server(h3_conf(cert, extra_server="client_header_timeout 30s;"), start=False)
    write_site(srv.prefix)
    srv.start()
    first = quic_initial.capture_first_initial(port=srv.port)
    flood = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    flood.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    answers = []

    def collect(first_wait, quiet):
        # Blocks for the first answer, then takes what follows until quiet.
        flood.settimeout(first_wait)
        try:
            while True:
                answers.append(flood.recv(65535))
                flood.settimeout(quiet)
        except socket.timeout:
            pass

    retries_before_256 = 0
    for i in range(300):
        # One at a time, each after the previous one's answer: nothing is
        # lost to a full socket buffer, however slow the server is.
        if i == 256:
            retries_before_256 = sum(1 for a in answers if a[0] & 0xF0 == 0xF0)
        flood.sendto(quic_initial.with_dcid(first, os.urandom(first[5])), ("127.0.0.1", srv.port))
        collect(5.0, 0.001)
    collect(1.0, 1.0)
    flood.close()
    assert retries_before_256 == 0
    retries = [a for a in answers if a[0] & 0xF0 == 0xF0]  # long header, packet type Retry
    assert len(retries) == 300 - 256, (len(retries), len(answers))
    assert len(answers) > len(retries)  # the first 256 got their handshake flights
    dl = tmp_path / "dl"
    dl.mkdir()
    out = gtls(srv.port, "/index.html", download=dl)
    assert (dl / "index.html").read_text() == "hello h3\n", out[-2000:]


@pytest.mark.parametrize("loss", [["-t", "0.05"], ["-r", "0.05"], ["-t", "0.03", "-r", "0.03"]],
                         ids=["client-tx-loss", "client-rx-loss", "both"])
def test_download_survives_packet_loss(make_server, tmp_path, cert, loss):
    # gtlsclient drops a share of the packets it sends (its requests and
    # acknowledgements) or receives (our response): loss recovery must
    # still deliver every byte of 1 MB.
    srv = make_server(h3_conf(cert), start=False)
    big = write_site(srv.prefix)
    srv.start()
    dl = tmp_path / "dl"
    dl.mkdir()
    out = gtls(srv.port, "/big.bin", args=loss, download=dl, timeout=60)
    assert (dl / "big.bin").read_bytes() == big, out[-2000:]


def test_datagrams_sent_as_one_gso_batch_are_each_handled(make_server, tmp_path, cert):
    # A client that sends with UDP_SEGMENT (as browsers on Linux do): five
    # Initials of distinct connections leave in one sendmsg. Where the
    # kernel offers UDP_GRO the server reads them as one buffer and must
    # split it; every one of the five gets its own handshake answer.
    import quic_initial
    srv = make_server(h3_conf(cert), start=False)
    write_site(srv.prefix)
    srv.start()
    first = quic_initial.capture_first_initial(port=srv.port)
    assert len(first) == 1200
    client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    client.connect(("127.0.0.1", srv.port))
    batch = b"".join(quic_initial.with_dcid(first, os.urandom(first[5])) for _ in range(5))
    udp_segment = 103
    client.sendmsg([batch], [(socket.IPPROTO_UDP, udp_segment, (1200).to_bytes(2, "little"))])
    answered = set()
    client.settimeout(1.0)
    try:
        while len(answered) < 5:
            a = client.recv(65535)
            # The server's Initial names our connection by its own new SCID:
            # one distinct SCID per connection it opened.
            dcid_len = a[5]
            scid_len = a[6 + dcid_len]
            answered.add(a[7 + dcid_len:7 + dcid_len + scid_len])
    except socket.timeout:
        pass
    client.close()
    assert len(answered) == 5, len(answered)


def test_client_silent_mid_body_gets_408(make_server, tmp_path, cert):
    # The client sends its headers and part of a 1 MB body, then goes
    # silent: after client_body_timeout the stream is answered 408 (and the
    # rest of the body is declined with STOP_SENDING), as over HTTP/1.1 and 2.
    # (The relay keeps dropping the client's packets, so the client never
    # sees its stream close: the test ends it once the 408 has arrived.)
    srv = make_server(h3_conf(cert, extra_server="""
        client_body_timeout 1s;
        keepalive_timeout 30s;
        location = /upload {
            client_max_body_size 10m;
            proxy_pass http://127.0.0.1:9;
        }
"""), start=False)
    write_site(srv.prefix)
    srv.start()
    body = tmp_path / "body"
    body.write_bytes(os.urandom(1024 * 1024))
    relay = RecordingRelay(srv.port, forward_limit=30)
    try:
        start = time.monotonic()
        out = gtls_until(srv.port, "/upload", b":status:", 15, connect_port=relay.port,
                         args=["--timeout=20s", "-m", "POST", "-d", str(body)])
        elapsed = time.monotonic() - start
    finally:
        relay.close()
    assert statuses(out) == ["408"], out[-2000:]
    assert elapsed < 10, elapsed  # client_body_timeout, not the 30 s idle timeout
    wait_until(lambda: "while reading client request body" in srv.error_log_text(), 5, what="the timeout's log line")
