"""`torii -s reload` (SIGHUP) keeps what is running: a WebSocket tunnel
through the proxy, an HTTP/2 stream in flight, a long download and a QUIC
connection all finish on the old config while new requests get the new
one; certificates are read again; and a reload storm under load fails no
request and leaves no descriptor or thread behind."""

import hashlib
import os
import re
import shutil
import signal
import ssl
import subprocess
import threading
import time

import pytest

import harness
from bad_upstream import BadUpstream
from harness import base_conf, wait_body, wait_until
from slow_backend import Backend


@pytest.fixture
def backend():
    b = Backend("slow")
    yield b
    b.close()


@pytest.fixture
def ws_upstream():
    u = BadUpstream("ws")
    yield u
    u.stop()


def proxy_conf(version, backend_port, listen="listen 127.0.0.1:@PORT@;", server_extra="", http_extra=""):
    return base_conf(f"""
    map $http_upgrade $connection_upgrade {{
        default upgrade;
        ''      close;
    }}
    {http_extra}
    server {{
        {listen}
        server_name localhost;
        {server_extra}
        location = /v {{ return 200 "{version}"; }}
        location / {{
            proxy_pass http://127.0.0.1:{backend_port};
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_read_timeout 60s;
        }}
    }}""", main="worker_processes 2;")


def echo(conn, msg):
    conn.send(msg)
    got = b""
    while len(got) < len(msg):
        got += conn.buf
        conn.buf = b""
        if len(got) < len(msg):
            conn._fill()
    return got


def test_websocket_through_the_proxy_survives_reload(make_server, ws_upstream):
    server = make_server(proxy_conf("v1", ws_upstream.port))
    with harness.Conn(server.port) as c:
        c.send(harness.build_request("GET", "/ws", [("Upgrade", "websocket"), ("Connection", "Upgrade")]))
        assert c.read_response().status == 101
        assert echo(c, b"before") == b"before"
        server.reload(proxy_conf("v2", ws_upstream.port))
        wait_body(server.port, "/v", "v2")
        assert echo(c, b"after the reload") == b"after the reload"
        assert echo(c, b"x" * 200000) == b"x" * 200000


def h2c_body(port, path):
    r = subprocess.run(["curl", "-s", "--http2-prior-knowledge", f"http://127.0.0.1:{port}{path}"],
                       capture_output=True, timeout=20)
    return r.stdout.decode()


def test_http2_stream_in_flight_survives_reload(make_server, backend):
    server = make_server(proxy_conf("v1", backend.port, listen="listen 127.0.0.1:@PORT@ http2;"))
    curl = subprocess.Popen(["curl", "-s", "--http2-prior-knowledge", "-o", "-", "-w", "\n%{http_code} %{http_version}",
                             f"http://127.0.0.1:{server.port}/slow"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        assert backend.slow_started.wait(10)
        server.reload(proxy_conf("v2", backend.port, listen="listen 127.0.0.1:@PORT@ http2;"))
        wait_until(lambda: h2c_body(server.port, "/v") == "v2", 15, what="the reload")
        backend.release_slow.set()
        out, _ = curl.communicate(timeout=20)
    finally:
        if curl.poll() is None:
            curl.kill()
            curl.wait()
    assert out.decode().splitlines() == ["slow", "200 2"]


def test_long_download_survives_reload(make_server, tmp_path):
    from test_lifecycle import BIG_SIZE, SlowDownload
    server = make_server(base_conf("""
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        root @PREFIX@/www;
        location = /v { return 200 "v1"; }
    }"""), start=False)
    www = server.prefix / "www"
    www.mkdir()
    data = os.urandom(BIG_SIZE)
    (www / "big.bin").write_bytes(data)
    server.start()
    dl = SlowDownload(server.port, rate=4 * 1024 * 1024)
    dl.start()
    assert dl.started_body.wait(10)
    server.reload(server.template.replace('"v1"', '"v2"'))
    wait_body(server.port, "/v", "v2")
    assert dl.is_alive() and dl.received < BIG_SIZE, "the download ended before the reload; nothing was shown"
    dl.join(30)
    assert dl.error is None, dl.error
    assert (dl.status, dl.received) == (200, BIG_SIZE)
    assert dl.sha.hexdigest() == hashlib.sha256(data).hexdigest()


def make_cert(d, name, cn="a.test"):
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key",
                        "-out", f"{name}.pem", "-days", "2", "-subj", f"/CN={cn}/O={name}",
                        "-addext", f"subjectAltName=DNS:{cn}"], cwd=d, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr


def tls_conf(version, backend_port, cert_dir, h3=False):
    listen = "listen 127.0.0.1:@PORT@ ssl;" + ("\n        listen 127.0.0.1:@PORT@ quic;\n        http3 on;" if h3 else "")
    return proxy_conf(version, backend_port, listen=listen, server_extra=f"""
        ssl_certificate {cert_dir}/site.pem;
        ssl_certificate_key {cert_dir}/site.key;""")


def served_cert(port):
    return ssl.DER_cert_to_PEM_cert(ssl.PEM_cert_to_DER_cert(ssl.get_server_certificate(("127.0.0.1", port))))


def same_pem(a, b):
    return ssl.PEM_cert_to_DER_cert(a) == ssl.PEM_cert_to_DER_cert(b)


def curl_k(port, path):
    r = subprocess.run(["curl", "-sk", "--resolve", f"a.test:{port}:127.0.0.1", f"https://a.test:{port}{path}"],
                       capture_output=True, timeout=20)
    return r.stdout.decode()


def test_certificates_are_read_again_on_reload(make_server, backend, tmp_path):
    certs = tmp_path / "certs"
    certs.mkdir()
    make_cert(certs, "first")
    make_cert(certs, "second")
    for ext in ("pem", "key"):
        shutil.copy(certs / f"first.{ext}", certs / f"site.{ext}")
    server = make_server(tls_conf("v1", backend.port, certs))
    assert same_pem(served_cert(server.port), (certs / "first.pem").read_text())
    for ext in ("pem", "key"):
        shutil.copy(certs / f"second.{ext}", certs / f"site.{ext}")
    server.reload()  # the same config text: only the files changed
    wait_until(lambda: same_pem(served_cert(server.port), (certs / "second.pem").read_text()), 15,
               what="the new certificate")


@pytest.mark.skipif(harness.IS_NGINX, reason="Debian's nginx has no HTTP/3")
@pytest.mark.skipif(shutil.which("gtlsclient") is None, reason="needs gtlsclient (ngtcp2-client)")
def test_quic_connection_with_a_request_in_flight_survives_reload(make_server, backend, tmp_path):
    certs = tmp_path / "certs"
    certs.mkdir()
    make_cert(certs, "site")
    server = make_server(tls_conf("v1", backend.port, certs, h3=True))
    port = server.port
    cmd = ["gtlsclient", "--no-quic-dump", "--no-http-dump", "--exit-on-all-streams-close", "--timeout=30s",
           "127.0.0.1", str(port), f"https://a.test:{port}/slow", f"https://a.test:{port}/v"]
    client = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        assert backend.slow_started.wait(10)
        server.reload(tls_conf("v2", backend.port, certs, h3=True))
        wait_until(lambda: curl_k(port, "/v") == "v2", 15, what="the reload")
        backend.release_slow.set()
        out, _ = client.communicate(timeout=30)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
    out = out.decode("latin-1")
    # Both streams of the one connection were answered: the one in flight
    # during the reload, and the other sent with it.
    assert re.findall(r"\[:status: (\d+)\]", out) == ["200", "200"], out


def fds(pid):
    """(sockets, the other descriptors by what they point to). A descriptor
    closed between the listing and its readlink is not counted."""
    links = []
    for f in os.listdir(f"/proc/{pid}/fd"):
        try:
            links.append(os.readlink(f"/proc/{pid}/fd/{f}"))
        except FileNotFoundError:
            pass
    return sum(1 for link in links if link.startswith("socket:")), sorted(l for l in links if not l.startswith("socket:"))


def thread_count(pid):
    return len(os.listdir(f"/proc/{pid}/task"))


def worker_pid(server):
    """The process that holds the sockets: torii's only one, nginx's workers
    come and go on reload, so nginx's count is its master's."""
    return server.proc.pid


@pytest.mark.skipif(shutil.which("wrk") is None, reason="needs wrk")
def test_reload_storm_under_load_fails_nothing_and_leaks_nothing(make_server, backend):
    if harness.IS_NGINX:
        pytest.xfail("nginx's retiring workers close keep-alive connections: wrk sees read errors")
    conf = lambda v: proxy_conf(v, backend.port, http_extra="""
    upstream pool { server 127.0.0.1:@BACKEND@; keepalive 8; }""".replace("@BACKEND@", str(backend.port))).replace(
        "location / {", "location /proxied { proxy_pass http://pool; proxy_http_version 1.1; proxy_set_header Connection \"\"; }\n        location / {")
    server = make_server(conf("v0"))
    pid = worker_pid(server)
    listeners, _ = fds(pid)
    # Warm up both paths on every worker (each opens its access log on its
    # first request), then count what an idle server holds.
    for path in ("/v", "/proxied"):
        subprocess.run(["wrk", "-t1", "-c4", "-d1s", f"http://127.0.0.1:{server.port}{path}"],
                       capture_output=True, timeout=30)
    wait_until(lambda: fds(pid)[0] <= listeners + 2 * 8, 10, what="the warm-up's connections to close")
    _, files0 = fds(pid)
    threads0 = thread_count(pid)

    results = {}
    def run_wrk(path, key):
        r = subprocess.run(["wrk", "-t1", "-c8", "-d11s", "--timeout", "10s", "--latency", f"http://127.0.0.1:{server.port}{path}"],
                           capture_output=True, text=True, timeout=60)
        results[key] = r.stdout + r.stderr
    loads = [threading.Thread(target=run_wrk, args=(p, p)) for p in ("/v", "/proxied")]
    for t in loads:
        t.start()
    # 10 reloads a second for 10 seconds. Each config is renamed into
    # place, so no reload reads a file half written.
    start = time.monotonic()
    for i in range(100):
        tmp = server.conf_path.with_suffix(".tmp")
        tmp.write_text(server.render(conf(f"v{i % 10}")))
        os.replace(tmp, server.conf_path)
        server.signal(signal.SIGHUP)
        delay = start + (i + 1) * 0.1 - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    for t in loads:
        t.join(60)
    wait_body(server.port, "/v", "v9")
    for key, out in results.items():
        m = re.search(r"(\d+) requests in", out)
        assert m and int(m.group(1)) > 100, out
        assert "Socket errors" not in out, out
        assert "Non-2xx" not in out, out
    assert server.alive()
    # Connections closed, old configs released: back to what it held idle.
    wait_until(lambda: thread_count(pid) == threads0, 10, what=f"threads back to {threads0}")
    # The same files, eventfds and epolls as before; sockets: the listeners
    # and at most the upstream pools' 8 idle connections per worker.
    wait_until(lambda: fds(pid)[1] == files0, 15, what=f"descriptors back to {files0} (now {fds(pid)[1]})")
    wait_until(lambda: fds(pid)[0] <= listeners + 2 * 8, 15, what=f"sockets back to {listeners} + idle (now {fds(pid)[0]})")
