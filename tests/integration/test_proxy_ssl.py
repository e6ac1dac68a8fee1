"""HTTPS upstreams: proxy_pass https:// (an address and an upstream {}
group with keepalive), proxy_ssl_verify with proxy_ssl_trusted_certificate
and proxy_ssl_name, proxy_ssl_server_name, a client certificate
(proxy_ssl_certificate/_key), proxy_ssl_protocols and session reuse.

The upstream is Debian's nginx on a certificate made by openssl for each
run; it logs $ssl_session_reused, $connection, $ssl_server_name and the
client certificate's subject, so what torii did is counted on the upstream
side. The same file passes with TORII_BIN=/usr/sbin/nginx."""

import os
import re
import shutil
import subprocess

import pytest

import harness
from harness import base_conf, cli, http, Conn, wait_until

NGINX = "/usr/sbin/nginx"
BIG = os.urandom(3 * 1024 * 1024 + 7)
pytestmark = pytest.mark.skipif(shutil.which("openssl") is None or not os.access(NGINX, os.X_OK),
                                reason="needs openssl and Debian's nginx")


def openssl(*args, cwd):
    r = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """A CA, the upstream's certificate (upstream.test and 127.0.0.1), a
    client certificate from the same CA, and an unrelated CA."""
    d = tmp_path_factory.mktemp("pki")
    (d / "ext.cnf").write_text("subjectAltName = DNS:upstream.test, IP:127.0.0.1\n")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
            "-subj", "/O=Torii Test/CN=Upstream CA", cwd=d)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "other.key", "-out", "other.crt",
            "-days", "2", "-subj", "/O=Torii Test/CN=Other CA", cwd=d)
    for name, ext in (("upstream", ["-extfile", "ext.cnf"]), ("client", [])):
        openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
                "-subj", f"/O=Torii Test/CN={name}", cwd=d)
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", f"{name}.crt", "-days", "2", *ext, cwd=d)
    openssl("pkey", "-in", "client.key", "-aes256", "-passout", "pass:secret", "-out", "client-enc.key", cwd=d)
    (d / "passwords").write_text("wrong\nsecret\n")  # each tried in order
    make_crls(d)
    return d


def make_crls(d):
    """revoked.crl lists the upstream's certificate; clean.crl lists none.
    Both from the CA, made with openssl ca and its index file."""
    (d / "index.txt").write_text("")
    (d / "crlnumber").write_text("01\n")
    (d / "ca.cnf").write_text(f"""[ ca ]
default_ca = test_ca
[ test_ca ]
database = {d}/index.txt
crlnumber = {d}/crlnumber
certificate = {d}/ca.crt
private_key = {d}/ca.key
default_md = sha256
default_crl_days = 2
""")
    openssl("ca", "-config", "ca.cnf", "-gencrl", "-out", "clean.crl", cwd=d)
    openssl("ca", "-config", "ca.cnf", "-revoke", "upstream.crt", cwd=d)
    openssl("ca", "-config", "ca.cnf", "-gencrl", "-out", "revoked.crl", cwd=d)


class NginxUpstream(harness.Server):
    """Debian's nginx as the TLS upstream, whatever binary is under test."""

    def command(self):
        g = "daemon off; master_process on; worker_processes 1;" + (" user root;" if os.geteuid() == 0 else "")
        return [NGINX, "-p", str(self.prefix) + "/", "-c", str(self.conf_path), "-e", "stderr", "-g", g]


UPSTREAM = r"""
    log_format up '$ssl_session_reused $connection sni=$ssl_server_name dn=$ssl_client_s_dn "$request"';
    server {
        listen 127.0.0.1:@PORT@ ssl;
        access_log @PREFIX@/logs/access.log up;
        ssl_certificate @PKI@/upstream.crt;
        ssl_certificate_key @PKI@/upstream.key;
        ssl_session_cache shared:up:1m;
        ssl_verify_client optional;
        ssl_client_certificate @PKI@/ca.crt;
        keepalive_requests 1000;
        location / { return 200 "up $uri sni=$ssl_server_name dn=$ssl_client_s_dn\n"; }
        location = /big.bin { root @PREFIX@/html; }
        location = /protocol { return 200 "$ssl_protocol\n"; }
    }
"""

FRONT = r"""
    upstream tls_pool {
        server 127.0.0.1:@UP@;
        keepalive 4;
    }
    server {
        listen 127.0.0.1:@PORT@;
        location /plain/ {
            proxy_pass https://127.0.0.1:@UP@/;
        }
        location /verify/ {
            proxy_pass https://127.0.0.1:@UP@/;
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate @PKI@/ca.crt;
            proxy_ssl_name upstream.test;
            proxy_ssl_server_name on;
        }
        location /verify-address/ {
            proxy_pass https://127.0.0.1:@UP@/;
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate @PKI@/ca.crt;
        }
        location /wrong-name/ {
            proxy_pass https://127.0.0.1:@UP@/;
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate @PKI@/ca.crt;
            proxy_ssl_name wrong.test;
        }
        location /untrusted/ {
            proxy_pass https://127.0.0.1:@UP@/;
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate @PKI@/other.crt;
            proxy_ssl_name upstream.test;
        }
        location /revoked/ {
            proxy_pass https://127.0.0.1:@UP@/;
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate @PKI@/ca.crt;
            proxy_ssl_name upstream.test;
            proxy_ssl_crl @PKI@/revoked.crl;
            # nginx keeps sessions per upstream server, not per settings: a
            # session resumed from /crl-clean/ would skip the check there.
            proxy_ssl_session_reuse off;
        }
        location /crl-clean/ {
            proxy_pass https://127.0.0.1:@UP@/;
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate @PKI@/ca.crt;
            proxy_ssl_name upstream.test;
            proxy_ssl_crl @PKI@/clean.crl;
        }
        location /client-cert/ {
            proxy_pass https://127.0.0.1:@UP@/;
            proxy_ssl_certificate @PKI@/client.crt;
            proxy_ssl_certificate_key @PKI@/client.key;
        }
        location /client-cert-encrypted/ {
            proxy_pass https://127.0.0.1:@UP@/;
            proxy_ssl_certificate @PKI@/client.crt;
            proxy_ssl_certificate_key @PKI@/client-enc.key;
            proxy_ssl_password_file @PKI@/passwords;
        }
        location /conf-command/ {
            proxy_pass https://127.0.0.1:@UP@/;
            proxy_ssl_protocols TLSv1.2 TLSv1.3;
            proxy_ssl_conf_command MaxProtocol TLSv1.2;
        }
        location /no-reuse/ {
            proxy_pass https://127.0.0.1:@UP@/;
            proxy_ssl_session_reuse off;
        }
        location /tls12/ {
            proxy_pass https://127.0.0.1:@UP@/;
            proxy_ssl_protocols TLSv1.2;
        }
        location /var/ {
            set $up 127.0.0.1:@UP@;
            proxy_pass https://$up;
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate @PKI@/ca.crt;
            proxy_ssl_name upstream.test;
        }
        location /pool/ {
            proxy_pass https://tls_pool/;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
"""


@pytest.fixture
def upstream(tmp_path, pki):
    server = NginxUpstream(base_conf(UPSTREAM.replace("@PKI@", str(pki))), tmp_path / "upstream")
    (server.prefix / "html").mkdir()
    (server.prefix / "html" / "big.bin").write_bytes(BIG)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def front(make_server, upstream, pki):
    conf = base_conf(FRONT.replace("@PKI@", str(pki)).replace("@UP@", str(upstream.port)))
    return make_server(conf, name="front")


def upstream_lines(upstream, count):
    """The upstream's access log once it holds `count` lines."""
    def lines():
        text = upstream.access_log.read_text() if upstream.access_log.exists() else ""
        got = [line for line in text.splitlines() if line.strip()]
        return got if len(got) >= count else None
    return wait_until(lines, 10, what=f"{count} upstream log lines")


def test_https_upstream_without_verification(front, upstream):
    r = http(front.port, "/plain/hello")
    assert r.status == 200, r
    assert r.text().startswith("up /hello"), r.text()
    # No SNI unless proxy_ssl_server_name is on, no client certificate
    # without proxy_ssl_certificate.
    assert r.text().endswith(" sni= dn=\n"), r.text()


def test_verified_upstream_with_server_name(front, upstream):
    r = http(front.port, "/verify/x")
    assert r.status == 200, (r, front.error_log_text())
    assert "sni=upstream.test" in r.text(), r.text()


@pytest.mark.skipif(harness.IS_NGINX, reason="nginx checks names with X509_check_host only: an address never matches")
def test_verified_address_matches_ip_san(front, upstream):
    # proxy_ssl_name defaults to the proxy_pass host: 127.0.0.1 is in the
    # certificate's subjectAltName (an iPAddress entry, RFC 6125).
    r = http(front.port, "/verify-address/x")
    assert r.status == 200, (r, front.error_log_text())


def test_wrong_name_is_refused_with_502(front, upstream):
    r = http(front.port, "/wrong-name/x")
    assert r.status == 502, r
    wait_until(lambda: 'upstream SSL certificate does not match "wrong.test" while SSL handshaking to upstream'
               in front.error_log_text(), 10, what="the name mismatch in the error log")


def test_untrusted_certificate_is_refused_with_502(front, upstream):
    r = http(front.port, "/untrusted/x")
    assert r.status == 502, r
    wait_until(lambda: re.search(r"upstream SSL certificate verify error: \(\d+:[^)]+\) while SSL handshaking "
                                 r"to upstream", front.error_log_text()), 10, what="the verify error in the log")


def test_encrypted_client_key_with_password_file(front, upstream):
    r = http(front.port, "/client-cert-encrypted/x")
    assert r.status == 200, (r, front.error_log_text())
    assert "dn=CN=client,O=Torii Test" in r.text(), r.text()


def test_conf_command_on_the_upstream_context(front, upstream):
    # TLSv1.3 is allowed there, and would be chosen without the command.
    r = http(front.port, "/conf-command/protocol")
    assert r.status == 200, (r, front.error_log_text())
    assert r.text() == "TLSv1.2\n"


def test_revoked_certificate_is_refused_with_502(front, upstream):
    r = http(front.port, "/crl-clean/x")
    assert r.status == 200, (r, front.error_log_text())
    r = http(front.port, "/revoked/x")
    assert r.status == 502, r
    wait_until(lambda: "upstream SSL certificate verify error: (23:certificate revoked) while SSL handshaking "
               "to upstream" in front.error_log_text(), 10, what="the revocation in the error log")


def test_client_certificate_is_presented(front, upstream):
    r = http(front.port, "/client-cert/x")
    assert r.status == 200, (r, front.error_log_text())
    assert "dn=CN=client,O=Torii Test" in r.text(), r.text()


def test_new_connections_resume_the_session(front, upstream):
    for _ in range(5):
        r = http(front.port, "/plain/resume")
        assert r.status == 200, r
    lines = upstream_lines(upstream, 5)
    reused = [line.split()[0] for line in lines]
    connections = {line.split()[1] for line in lines}
    assert len(connections) == 5, lines  # a new upstream connection each time (no keepalive)
    assert reused[0] == ".", lines
    assert reused[1:] == ["r"] * 4, lines


def test_resumption_with_tls12(front, upstream):
    for _ in range(3):
        assert http(front.port, "/tls12/x").status == 200
    reused = [line.split()[0] for line in upstream_lines(upstream, 3)]
    assert reused == [".", "r", "r"], reused


def test_session_reuse_off_never_resumes(front, upstream):
    for _ in range(3):
        assert http(front.port, "/no-reuse/x").status == 200
    reused = [line.split()[0] for line in upstream_lines(upstream, 3)]
    assert reused == ["."] * 3, reused


def test_keepalive_pool_reuses_the_tls_connection(front, upstream):
    with Conn(front.port) as c:
        for i in range(6):
            r = c.request("GET", f"/pool/{i}")
            assert r.status == 200, r
            assert r.text().startswith(f"up /{i}"), r.text()
    lines = upstream_lines(upstream, 6)
    assert len({line.split()[1] for line in lines}) == 1, lines  # one upstream TLS connection
    # And from separate client connections too.
    for i in range(3):
        assert http(front.port, f"/pool/again{i}").status == 200
    lines = upstream_lines(upstream, 9)
    assert len({line.split()[1] for line in lines}) == 1, lines


def test_large_bodies_both_ways(front, upstream):
    # Many TLS records each way: a body bigger than client_body_buffer_size
    # (it goes from a temporary file) and a 3 MB file back.
    body = os.urandom(300_000)
    r = http(front.port, "/pool/upload", method="POST", body=body)
    assert r.status == 200, (r, front.error_log_text())
    for path in ("/pool/big.bin", "/plain/big.bin"):
        r = http(front.port, path, timeout=30)
        assert r.status == 200, r
        assert r.body == BIG, (len(r.body), path)


def test_proxy_pass_https_with_variables(front, upstream):
    r = http(front.port, "/var/v")
    assert r.status == 200, (r, front.error_log_text())
    assert r.text().startswith("up /var/v"), r.text()


@pytest.mark.parametrize("directives,message", [
    ("proxy_ssl_verify on;", "no proxy_ssl_trusted_certificate for proxy_ssl_verify"),
    ("proxy_ssl_certificate @PKI@/client.crt;",
     'no "proxy_ssl_certificate_key" is defined for certificate'),
    ("proxy_ssl_trusted_certificate @PKI@/missing.crt; proxy_ssl_verify on;", "missing.crt"),
    ("proxy_ssl_trusted_certificate @PKI@/ca.crt; proxy_ssl_verify on; proxy_ssl_crl @PKI@/missing.crl;",
     "missing.crl"),
    ("proxy_ssl_certificate @PKI@/client.crt; proxy_ssl_certificate_key @PKI@/client-enc.key;",
     'cannot load certificate key "@PKI@/client-enc.key"'),
    ("proxy_ssl_conf_command NoSuchCommand 1;", 'SSL_CONF_cmd("NoSuchCommand", "1") failed'),
    ("proxy_ssl_certificate @PKI@/client.crt; proxy_ssl_certificate_key @PKI@/client-enc.key; "
     "proxy_ssl_password_file @PKI@/ca.crt;", 'cannot load certificate key "@PKI@/client-enc.key"'),
])
def test_bad_settings_fail_the_load(tmp_path, pki, directives, message):
    conf = tmp_path / "bad.conf"
    (tmp_path / "logs").mkdir()
    conf.write_text(f"""pid {tmp_path}/logs/pid;
error_log {tmp_path}/logs/error.log;
events {{}}
http {{
    server {{
        listen 127.0.0.1:1;
        location / {{ proxy_pass https://127.0.0.1:1; {directives.replace("@PKI@", str(pki))} }}
    }}
}}
""")
    p = cli(["-t", "-c", str(conf)], prefix=tmp_path)
    assert p.returncode != 0, p.stderr
    assert message.replace("@PKI@", str(pki)) in p.stderr, p.stderr
