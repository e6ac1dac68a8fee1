"""Which server answers a request refused before its Host is known, as in
nginx: over TLS the one the client named in SNI (h5bp's TLS site in
tests/corpus/ adds its security headers with `add_header ... always`, and
its 400 pages carry them), else the address's default server; once a valid
Host was read, that Host's server (a duplicate Host, a bad body framing); an
HTTP/1.1 request with no Host at all, the default server. Its add_header
and error_page apply. Every expectation is nginx's: the file passes with
TORII_BIN=/usr/sbin/nginx (1.22)."""

import socket
import ssl
import subprocess

import pytest

import harness


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("early-tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=a.test",
                    "-keyout", str(d / "key.pem"), "-out", str(d / "cert.pem")], check=True, capture_output=True)
    return d


@pytest.fixture
def site(make_server, tls_files):
    s = make_server(harness.base_conf(http=f"""
    ssl_certificate {tls_files}/cert.pem;
    ssl_certificate_key {tls_files}/key.pem;
    server {{
        listen 127.0.0.1:@PORT0@ ssl;
        listen 127.0.0.1:@PORT1@;
        server_name a.test;
        add_header X-Server a always;
    }}
    server {{
        listen 127.0.0.1:@PORT0@ ssl;
        listen 127.0.0.1:@PORT1@;
        server_name b.test;
        root @PREFIX@/b;
        add_header X-Server b always;
        error_page 400 /bad.html;
    }}
"""), nports=2, start=False)
    (s.prefix / "b").mkdir()
    (s.prefix / "b" / "bad.html").write_text("b's bad request page\n")
    return s.start()


def exchange(port, raw, sni=None):
    """Sends raw bytes (over TLS when `sni` is given); returns the parsed response."""
    c = harness.Conn(port)
    if sni is not None:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        c.sock = ctx.wrap_socket(c.sock, server_hostname=sni)
    with c:
        c.send(raw)
        return c.read_response()


def assert_from(r, server):
    assert r.status == 400, r
    assert r.header("X-Server") == server, r
    if server == "b":
        assert r.body == b"b's bad request page\n"
    else:
        assert b"400 Bad Request" in r.body


BAD_URI = b"GET /%2e%2e/x HTTP/1.1\r\nHost: b.test\r\nConnection: close\r\n\r\n"
BAD_LINE = b"BAD\r\n\r\n"
NO_HOST = b"GET /x HTTP/1.1\r\nConnection: close\r\n\r\n"
TWO_HOSTS = b"GET /x HTTP/1.1\r\nHost: b.test\r\nHost: b.test\r\nConnection: close\r\n\r\n"
BAD_FRAMING = b"POST /x HTTP/1.1\r\nHost: b.test\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"


def test_over_tls_an_early_error_belongs_to_the_sni_server(site):
    tls = site.ports[0]
    assert_from(exchange(tls, BAD_URI, sni="b.test"), "b")
    assert_from(exchange(tls, BAD_LINE, sni="b.test"), "b")
    assert_from(exchange(tls, BAD_URI, sni="other.test"), "a")  # SNI naming no server: the default
    assert_from(exchange(tls, BAD_URI, sni="a.test"), "a")


def test_without_sni_an_error_before_the_host_belongs_to_the_default_server(site):
    plain = site.ports[1]
    assert_from(exchange(plain, BAD_URI), "a")
    assert_from(exchange(plain, BAD_LINE), "a")


def test_after_a_valid_host_the_error_belongs_to_its_server(site):
    for port, sni in ((site.ports[1], None), (site.ports[0], "a.test")):
        assert_from(exchange(port, TWO_HOSTS, sni=sni), "b")
        assert_from(exchange(port, BAD_FRAMING, sni=sni), "b")


def test_a_request_without_host_gets_the_default_server_even_with_sni(site):
    assert_from(exchange(site.ports[0], NO_HOST, sni="b.test"), "a")
    assert_from(exchange(site.ports[1], NO_HOST), "a")
    # The SNI server still answers the requests that name it.
    ok = exchange(site.ports[0], b"GET /bad.html HTTP/1.1\r\nHost: b.test\r\nConnection: close\r\n\r\n", sni="b.test")
    assert (ok.status, ok.header("X-Server")) == (200, "b")
