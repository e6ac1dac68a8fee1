"""`http3_hq on`: the hq-interop ALPN (HTTP/0.9 over QUIC) beside h3 on the
same QUIC listener. No hq client is packaged for Debian, so the client is
torii-load --hq (its own ngtcp2 + GnuTLS client: each stream sends
"GET /path\\r\\n" and its FIN and reads the body to the server's FIN;
--save writes each body to a file).

torii only: Debian's nginx 1.22 has no HTTP/3 (no http_v3 module).
"""

import os
import subprocess

import pytest

import harness
from harness import base_conf
from test_load import LOAD, run_load
from test_metrics import value

pytestmark = [
    pytest.mark.skipif(not LOAD, reason="torii-load not built"),
    pytest.mark.skipif(harness.IS_NGINX, reason="Debian's nginx 1.22 has no HTTP/3 (no http_v3 module)"),
]


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    d = tmp_path_factory.mktemp("hqcert")
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-keyout", "key.pem", "-out", "cert.pem", "-days", "2", "-subj", "/CN=localhost"],
                       cwd=d, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return d


def hq_conf(cert, hq="on"):
    return base_conf(f"""
    log_format hq '$status "$request" proto=[$server_protocol] http3=$http3 $body_bytes_sent';
    access_log @PREFIX@/logs/hq.log hq;
    large_client_header_buffers 4 1k;
    server {{
        listen 127.0.0.1:@PORT0@ ssl;
        http3 on;
        http3_hq {hq};
        server_name localhost;
        ssl_certificate {cert}/cert.pem;
        ssl_certificate_key {cert}/key.pem;
        root @PREFIX@/html;
        location = /vars {{ return 200 "proto=[$server_protocol] http3=$http3 uri=$uri args=$args\\n"; }}
        location = /close {{ return 444; }}
        location = /metrics {{ metrics; }}
    }}
""", error_level="info")


@pytest.fixture
def hq_server(make_server, cert):
    def make(hq="on"):
        srv = make_server(hq_conf(cert, hq), start=False)
        html = srv.prefix / "html"
        html.mkdir(parents=True, exist_ok=True)
        (html / "index.html").write_text("hello hq\n")
        big = os.urandom(1024 * 1024)
        (html / "big.bin").write_bytes(big)
        srv.start()
        return srv, big
    return make


def url(srv, path):
    return f"https://localhost:{srv.port}{path}"


def logged(srv):
    srv.stop()
    return (srv.prefix / "logs" / "hq.log").read_text().splitlines()


def test_hq_serves_files_on_several_streams_byte_for_byte(hq_server, tmp_path):
    srv, big = hq_server()
    saved = tmp_path / "one"
    saved.mkdir()
    s, out = run_load(tmp_path, "--hq", "-n", 1, "-c", 1, "--save", saved, url(srv, "/big.bin"))
    assert s["protocol"] == "hq-interop", out
    assert s["status"] == {"0": 1} and sum(s["errors"].values()) == 0, out
    assert (saved / "1").read_bytes() == big

    # Many streams at once on two connections, the URLs alternating.
    many = tmp_path / "many"
    many.mkdir()
    s, out = run_load(tmp_path, "--hq", "-n", 40, "-c", 2, "-m", 10, "--save", many,
                      url(srv, "/big.bin"), url(srv, "/index.html"))
    assert s["status"] == {"0": 40} and sum(s["errors"].values()) == 0, out
    bodies = [(many / str(i)).read_bytes() for i in range(1, 41)]
    # Every body whole; the URLs alternate per connection, so about half each.
    bigs = bodies.count(big)
    assert bigs + bodies.count(b"hello hq\n") == 40 and 15 <= bigs <= 25
    lines = logged(srv)
    assert len(lines) == 41
    assert lines.count(f'200 "GET /big.bin" proto=[] http3=hq {len(big)}') == bigs + 1
    assert lines.count('200 "GET /index.html" proto=[] http3=hq 9') == 40 - bigs


def test_hq_answers_through_the_request_model(hq_server, tmp_path):
    srv, _ = hq_server()
    saved = tmp_path / "saved"
    saved.mkdir()
    # A missing file: nginx's 404 page as the body (HTTP/0.9 has no status line).
    s, out = run_load(tmp_path, "--hq", "-n", 1, "-c", 1, "--save", saved, url(srv, "/missing"))
    assert s["status"] == {"0": 1}, out
    page = (saved / "1").read_text()
    assert "<title>404 Not Found</title>" in page and not page.startswith("HTTP/")
    (saved / "1").unlink()
    s, out = run_load(tmp_path, "--hq", "-n", 1, "-c", 1, "--save", saved, url(srv, "/vars?a=1"))
    assert s["status"] == {"0": 1}, out
    assert (saved / "1").read_text() == "proto=[] http3=hq uri=/vars args=a=1\n"
    # return 444: the stream is reset, no body.
    s, out = run_load(tmp_path, "--hq", "-n", 2, "-c", 1, url(srv, "/close"))
    assert s["errors"]["reset"] == 2 and s["status"] == {}, out
    lines = logged(srv)
    assert '404 "GET /missing" proto=[] http3=hq' in lines[0]
    assert lines[1].startswith('200 "GET /vars?a=1" proto=[] http3=hq')


def test_a_stream_that_is_not_http09_is_reset(hq_server, tmp_path):
    # A request line longer than large_client_header_buffers (1k) is not
    # a request we take: the stream is reset with H3_MESSAGE_ERROR.
    srv, _ = hq_server()
    # One connection, one stream at a time, the URLs alternating: the
    # connection lives on after each reset and answers the next request.
    s, out = run_load(tmp_path, "--hq", "-n", 6, "-c", 1, "-m", 1, url(srv, "/" + "a" * 1500),
                      url(srv, "/index.html"))
    assert s["errors"]["reset"] == 3 and s["status"] == {"0": 3}, out
    assert s["connections_opened"] == 1
    assert "H3_MESSAGE_ERROR" in s["error_messages"]["reset"]
    srv.stop()
    assert "client sent invalid HTTP/0.9 request" in (srv.prefix / "logs" / "error.log").read_text()


def test_h3_still_answers_beside_hq(hq_server, tmp_path):
    srv, _ = hq_server()
    s, out = run_load(tmp_path, "--h3", "-n", 10, "-c", 1, "-m", 5, url(srv, "/index.html"))
    assert s["status"] == {"200": 10}, out
    s, out = run_load(tmp_path, "--hq", "-n", 10, "-c", 2, "-m", 5, url(srv, "/index.html"))
    assert s["status"] == {"0": 10}, out
    # The metrics page tells the connections apart by protocol.
    page = subprocess.run(["curl", "-sk", f"https://127.0.0.1:{srv.port}/metrics"], capture_output=True,
                          text=True, timeout=10).stdout
    assert value(page, "torii_connections_by_protocol_total", protocol="HTTP/3") == 1, page
    assert value(page, "torii_connections_by_protocol_total", protocol="hq-interop") == 2
    assert value(page, "torii_connections_by_protocol_total", protocol="HTTP/1") == 1  # this scrape
    assert value(page, "torii_quic_handshakes_total", outcome="completed") == 3


def test_hq_off_refuses_the_alpn(hq_server, tmp_path):
    srv, _ = hq_server(hq="off")
    s, out = run_load(tmp_path, "--hq", "-n", 2, "-c", 1, url(srv, "/index.html"))
    assert s["errors"]["tls"] == 2 and s["status"] == {}, out
    # no_application_protocol (RFC 8446 6.2; RFC 9001 8.1)
    assert "TLS alert 120" in s["error_messages"]["tls"], s["error_messages"]
    s, out = run_load(tmp_path, "--h3", "-n", 2, "-c", 1, url(srv, "/index.html"))
    assert s["status"] == {"200": 2}, out


def test_keepalive_requests_ends_an_hq_connection_without_losing_requests(make_server, cert, tmp_path):
    # hq-interop has no GOAWAY: past keepalive_requests new streams are
    # refused (H3_REQUEST_REJECTED, sent again by the client) and the
    # connection closes once those in flight are answered.
    srv = make_server(hq_conf(cert).replace("large_client_header_buffers 4 1k;",
                                            "large_client_header_buffers 4 1k;\n    keepalive_requests 5;"),
                      start=False)
    (srv.prefix / "html").mkdir(parents=True, exist_ok=True)
    (srv.prefix / "html" / "index.html").write_text("hello hq\n")
    srv.start()
    s, out = run_load(tmp_path, "--hq", "-n", 30, "-c", 1, "-m", 4, url(srv, "/index.html"))
    assert s["status"] == {"0": 30} and sum(s["errors"].values()) == 0, out
    # 5 a connection, and the few already on their way when the 5th came.
    assert s["connections_opened"] >= 30 // (5 + 4) and s["retried"] > 0, out
    assert len(logged(srv)) == 30
