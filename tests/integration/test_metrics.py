"""The metrics handler (`metrics;`, torii's own): Prometheus text that
promtool accepts, with counters that match the requests the test sent."""

import re
import shutil
import subprocess

import pytest

import harness

pytestmark = pytest.mark.skipif(harness.IS_NGINX, reason="metrics is torii's own directive")


def scrape(port):
    r = harness.http(port, "/metrics", host="scrape.test")
    assert r.status == 200, r
    assert r.header("Content-Type").startswith("text/plain; version=0.0.4")
    return r.text()


def value(text, name, **labels):
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = re.fullmatch(r"([a-z_]+)(\{(.*)\})? (\S+)", line)
        if not m or m.group(1) != name:
            continue
        got = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        if got == {k: str(v) for k, v in labels.items()}:
            return float(m.group(4))
    return 0.0


def test_metrics_text_passes_promtool_and_counts_what_was_sent(make_server, tmp_path):
    server = make_server(harness.base_conf("""
    upstream app { server 127.0.0.1:@PORT@; }
    server {
        listen 127.0.0.1:@PORT@;
        server_name metrics.test;
        http2 on;
        location = /ok { return 200 "ok"; }
        location = /gone { return 404; }
        location = /proxied { proxy_pass http://app/ok; }
    }
    server {
        listen 127.0.0.1:@PORT@;
        server_name scrape.test;
        location = /metrics { metrics; }
    }""", main="worker_processes 2;", access_log=False))
    for _ in range(7):
        assert harness.http(server.port, "/ok").status == 200
    for _ in range(3):
        assert harness.http(server.port, "/gone").status == 404
    for _ in range(2):
        assert harness.http(server.port, "/proxied").body == b"ok"
    out = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-o", "/dev/null", "-w", "%{http_code}",
                          f"http://127.0.0.1:{server.port}/ok"], capture_output=True, text=True, timeout=10)
    assert out.stdout == "200"

    # Counted at the log phase: poll until the last request is in.
    text = harness.wait_until(
        lambda: (lambda t: t if value(t, "torii_http_requests_total", server="metrics.test", status="2xx",
                                      protocol="HTTP/2.0") == 1 else None)(scrape(server.port)),
        10, what="the HTTP/2 request counted")
    # 7 /ok + 2 /proxied from the client; the 2 proxied /ok from torii itself are HTTP/1.0
    assert value(text, "torii_http_requests_total", server="metrics.test", status="2xx", protocol="HTTP/1.1") == 9
    assert value(text, "torii_http_requests_total", server="metrics.test", status="2xx", protocol="HTTP/1.0") == 2
    assert value(text, "torii_http_requests_total", server="metrics.test", status="4xx", protocol="HTTP/1.1") == 3
    assert value(text, "torii_upstream_response_duration_seconds_count") == 2
    assert value(text, "torii_upstream_server_up", upstream="app", server=f"127.0.0.1:{server.port}") == 1
    # Earlier scrapes were counted too, so at least what was sent.
    assert value(text, "torii_http_request_duration_seconds_count") >= 15
    assert value(text, "torii_http_request_duration_seconds_bucket", le="+Inf") == \
        value(text, "torii_http_request_duration_seconds_count")
    assert value(text, "torii_http_sent_bytes_total") > 0 and value(text, "torii_http_received_bytes_total") > 0
    assert value(text, "torii_config_generation") == 1
    # Connections by protocol: the one h2c connection, and at least the 12
    # HTTP/1.1 client connections, the 2 the proxy opened and a scrape.
    assert value(text, "torii_connections_by_protocol_total", protocol="HTTP/2") == 1
    assert value(text, "torii_connections_by_protocol_total", protocol="HTTP/1") >= 15
    assert value(text, "torii_connections_by_protocol_total", protocol="HTTP/3") == 0

    server.reload()
    harness.wait_until(lambda: "reconfiguration done" in server.error_log_text(), 10, what="reload")
    text = scrape(server.port)
    assert value(text, "torii_reloads_total") == 1 and value(text, "torii_config_generation") == 2

    promtool = shutil.which("promtool")
    if not promtool:
        pytest.skip("promtool is not installed")
    r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr + text


def test_without_metrics_location_nothing_is_counted_and_the_directive_is_checked(tmp_path):
    (tmp_path / "logs").mkdir()
    conf = harness.base_conf("server { listen 127.0.0.1:1; metrics; }")
    (tmp_path / "t.conf").write_text(conf.replace("@PREFIX@", str(tmp_path)))
    r = harness.cli(["-t", "-c", str(tmp_path / "t.conf")], prefix=tmp_path)
    assert r.returncode != 0 and '"metrics" directive is not allowed here' in r.stderr, r.stderr


def test_cache_counters(make_server):
    server = make_server(harness.base_conf("""
    proxy_cache_path @PREFIX@/cache keys_zone=pages:1m;
    server {
        listen 127.0.0.1:@PORT@;
        server_name origin.test;
        location = /page { return 200 "page"; }
    }
    server {
        listen 127.0.0.1:@PORT@;
        server_name scrape.test;
        location = /metrics { metrics; }
        location / {
            proxy_pass http://127.0.0.1:@PORT@;
            proxy_set_header Host origin.test;
            proxy_cache pages;
            proxy_cache_valid 200 10m;
        }
    }""", access_log=False))
    for _ in range(3):
        assert harness.http(server.port, "/page", host="scrape.test").body == b"page"
    text = scrape(server.port)
    assert value(text, "torii_cache_requests_total", zone="pages", status="MISS") == 1
    assert value(text, "torii_cache_requests_total", zone="pages", status="HIT") == 2
    assert value(text, "torii_cache_stored_total", zone="pages") == 1
    assert value(text, "torii_cache_size_bytes", zone="pages") > 0


def test_tls_handshakes_are_counted_by_outcome(make_server, tmp_path):
    import socket
    import ssl
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "k.pem", "-out",
                        "c.pem", "-days", "2", "-subj", "/CN=a.test"], cwd=tmp_path, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    server = make_server(harness.base_conf(f"""
    server {{
        listen 127.0.0.1:@PORT@ ssl;
        server_name a.test;
        ssl_certificate {tmp_path}/c.pem;
        ssl_certificate_key {tmp_path}/k.pem;
        ssl_protocols TLSv1.2 TLSv1.3;
        location = /ok {{ return 200 "ok"; }}
    }}
    server {{
        listen 127.0.0.1:@PORT1@;
        server_name scrape.test;
        location = /metrics {{ metrics; }}
    }}""", access_log=False), nports=2)
    for _ in range(3):
        out = subprocess.run(["curl", "-sk", f"https://127.0.0.1:{server.port}/ok"], capture_output=True, timeout=10)
        assert out.stdout == b"ok"
    # A client that closes in the middle of its hello.
    with socket.create_connection(("127.0.0.1", server.port)) as s:
        s.sendall(b"\x16\x03\x01\x00\x80\x01\x00\x00\x7c\x03\x03")
    # A client that offers only TLS 1.1.
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_ciphers("DEFAULT:@SECLEVEL=0")
    ctx.minimum_version = ssl.TLSVersion.TLSv1
    ctx.maximum_version = ssl.TLSVersion.TLSv1_1
    with socket.create_connection(("127.0.0.1", server.port)) as raw:
        with pytest.raises(ssl.SSLError):
            ctx.wrap_socket(raw).do_handshake()
    # A record that is not a handshake at all after its first byte.
    with socket.create_connection(("127.0.0.1", server.port)) as s:
        s.sendall(b"\x16\x03\x03\x00\x05hello")
        s.settimeout(5)
        try:
            s.recv(100)
        except OSError:
            pass

    def scraped():
        text = scrape(server.ports[1])
        failed = sum(value(text, "torii_tls_handshakes_total", outcome=o) for o in
                     ("peer_closed", "io_error", "protocol_version", "no_shared_cipher", "no_alpn",
                      "client_certificate", "protocol_error"))
        return text if failed >= 3 else None
    text = harness.wait_until(scraped, 10, what="three failed handshakes counted")
    assert value(text, "torii_tls_handshakes_total", outcome="completed") == 3
    assert value(text, "torii_tls_handshakes_total", outcome="peer_closed") == 1
    assert value(text, "torii_tls_handshakes_total", outcome="protocol_version") == 1
    assert value(text, "torii_tls_handshakes_total", outcome="protocol_error") == 1
    promtool = shutil.which("promtool")
    if promtool:
        r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, r.stdout + r.stderr


def test_limit_req_and_limit_conn_outcomes_are_counted(make_server):
    server = make_server(harness.base_conf("""
    limit_req_zone $binary_remote_addr zone=one:1m rate=1r/m;
    limit_conn_zone $binary_remote_addr zone=addr:1m;
    server {
        listen 127.0.0.1:@PORT@;
        server_name scrape.test;
        root @PREFIX@/www;
        location = /limited { limit_req zone=one; }
        location = /conn { limit_conn addr 10; }
        location = /metrics { metrics; }
    }""", access_log=False), start=False)
    (server.prefix / "www").mkdir()
    for name in ("limited", "conn"):
        (server.prefix / "www" / name).write_text("ok")
    server.start()
    statuses = [harness.http(server.port, "/limited").status for _ in range(4)]
    assert statuses == [200, 503, 503, 503]
    for _ in range(2):
        assert harness.http(server.port, "/conn").status == 200
    text = harness.wait_until(
        lambda: (lambda t: t if value(t, "torii_limit_conn_requests_total", status="passed") == 2 else None)(
            scrape(server.port)), 10, what="the counts")
    assert value(text, "torii_limit_req_requests_total", status="passed") == 1
    assert value(text, "torii_limit_req_requests_total", status="rejected") == 3
    assert value(text, "torii_limit_conn_requests_total", status="rejected") == 0
