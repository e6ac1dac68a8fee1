"""Client certificates: ssl_verify_client on|optional|optional_no_ca with
ssl_client_certificate, ssl_verify_depth and ssl_crl; nginx's 400 pages
("No required SSL certificate was sent", "The SSL certificate error") and
log lines; $ssl_client_verify, _s_dn, _i_dn, _serial, _fingerprint,
_escaped_cert. Certificates are made with openssl for each run; curl is
the client."""

import re
import shutil
import socket
import ssl
import subprocess
import time
import urllib.parse

import pytest

from harness import base_conf, wait_until

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None or shutil.which("curl") is None,
                                reason="needs openssl and curl")

SHOW = "$ssl_client_verify|$ssl_client_s_dn|$ssl_client_i_dn|$ssl_client_serial|$ssl_client_fingerprint"


def openssl(*args, cwd):
    r = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    (d / "ca.cnf").write_text("""[ca]
default_ca = test_ca
[test_ca]
dir = .
database = index.txt
new_certs_dir = .
certificate = ca.crt
private_key = ca.key
serial = serial
crlnumber = crlnumber
default_md = sha256
default_days = 2
default_crl_days = 2
policy = any
[any]
commonName = supplied
""")
    (d / "index.txt").write_text("")
    (d / "serial").write_text("1000\n")
    (d / "crlnumber").write_text("01\n")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
            "-subj", "/O=Torii Test/CN=Test Client CA", cwd=d)
    for name in ("client", "revoked"):
        openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
                "-subj", f"/O=Torii Test/CN={name}", cwd=d)
        openssl("ca", "-batch", "-config", "ca.cnf", "-in", f"{name}.csr", "-out", f"{name}.crt", "-notext", cwd=d)
    openssl("ca", "-config", "ca.cnf", "-revoke", "revoked.crt", cwd=d)
    openssl("ca", "-config", "ca.cnf", "-gencrl", "-out", "ca.crl", cwd=d)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "self.key", "-out", "self.crt", "-days", "2",
            "-subj", "/CN=self-signed", cwd=d)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.crt",
            "-days", "2", "-subj", "/CN=localhost", cwd=d)
    return d


CONF = r"""
    ssl_certificate @PKI@/server.crt;
    ssl_certificate_key @PKI@/server.key;
    log_format cert '$ssl_client_verify "$request" $status';
    access_log @PREFIX@/logs/access.log cert;
    server {
        listen 127.0.0.1:@PORT0@ ssl;
        ssl_verify_client on;
        ssl_client_certificate @PKI@/ca.crt;
        location / { return 200 "SHOW"; }
        location /escaped { return 200 "$ssl_client_escaped_cert"; }
        location /header { add_header X-Client-Cert $ssl_client_cert; return 204; }
        location /legacy { return 200 "$ssl_client_s_dn_legacy|$ssl_client_i_dn_legacy"; }
        location /validity { return 200 "$ssl_client_v_start|$ssl_client_v_end|$ssl_client_v_remain"; }
    }
    server {
        listen 127.0.0.1:@PORT1@ ssl;
        ssl_verify_client optional;
        ssl_client_certificate @PKI@/ca.crt;
        location / { return 200 "SHOW"; }
    }
    server {
        listen 127.0.0.1:@PORT2@ ssl;
        ssl_verify_client optional_no_ca;
        location / { return 200 "SHOW"; }
    }
    server {
        listen 127.0.0.1:@PORT3@ ssl;
        ssl_verify_client on;
        ssl_client_certificate @PKI@/ca.crt;
        ssl_crl @PKI@/ca.crl;
        location / { return 200 "SHOW"; }
    }
    server {
        listen 127.0.0.1:@PORT4@ ssl;
        location / { return 200 "SHOW"; }
        location /validity { return 200 "$ssl_client_v_start|$ssl_client_v_end|$ssl_client_v_remain"; }
    }
""".replace("SHOW", SHOW)


@pytest.fixture(scope="module")
def srv(pki, tmp_path_factory):
    from harness import Server
    server = Server(base_conf(CONF.replace("@PKI@", str(pki)), error_level="info"),
                    tmp_path_factory.mktemp("client-cert"), nports=5)
    server.start()
    yield server
    server.stop()


def curl(port, pki, cert=None, path="/"):
    cmd = ["curl", "-sk", "-w", "\n%{http_code}", f"https://localhost:{port}{path}",
           "--resolve", f"localhost:{port}:127.0.0.1"]
    if cert:
        cmd += ["--cert", str(pki / f"{cert}.crt"), "--key", str(pki / f"{cert}.key")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    assert r.returncode == 0, r.stderr
    body, _, code = r.stdout.rpartition("\n")
    return int(code), body


def expected_show(pki, name):
    serial = openssl("x509", "-in", f"{name}.crt", "-noout", "-serial", cwd=pki).strip().split("=", 1)[1]
    fp = openssl("x509", "-in", f"{name}.crt", "-noout", "-fingerprint", "-sha1", cwd=pki).strip().split("=", 1)[1]
    subject = openssl("x509", "-in", f"{name}.crt", "-noout", "-subject", "-nameopt", "RFC2253", cwd=pki)
    issuer = openssl("x509", "-in", f"{name}.crt", "-noout", "-issuer", "-nameopt", "RFC2253", cwd=pki)
    subject, issuer = subject.strip().split("=", 1)[1], issuer.strip().split("=", 1)[1]
    assert issuer == "CN=Test Client CA,O=Torii Test"  # RFC 2253: the last RDN first
    return f"SUCCESS|{subject}|{issuer}|{serial}|{fp.replace(':', '').lower()}"


def test_required_certificate_accepted(srv, pki):
    assert curl(srv.ports[0], pki, "client") == (200, expected_show(pki, "client"))


def test_required_certificate_missing(srv, pki):
    code, body = curl(srv.ports[0], pki)
    assert code == 400
    assert "<title>400 No required SSL certificate was sent</title>" in body
    assert "<center>No required SSL certificate was sent</center>" in body
    wait_until(lambda: "client sent no required SSL certificate" in srv.error_log_text(), 10, what="the log line")


def test_untrusted_certificate_refused(srv, pki):
    code, body = curl(srv.ports[0], pki, "self")
    assert code == 400
    assert "<title>400 The SSL certificate error</title>" in body
    wait_until(lambda: "client SSL certificate verify error: (18:self-signed certificate)" in srv.error_log_text(),
               10, what="the verify error line")
    assert curl(srv.ports[1], pki, "self")[0] == 400  # optional: a bad certificate is still refused


def test_optional(srv, pki):
    assert curl(srv.ports[1], pki) == (200, "NONE||||")
    assert curl(srv.ports[1], pki, "client") == (200, expected_show(pki, "client"))


def test_optional_no_ca_lets_an_unknown_issuer_through(srv, pki):
    code, body = curl(srv.ports[2], pki, "self")
    assert code == 200
    assert body.startswith("FAILED:self-signed certificate|CN=self-signed|CN=self-signed|")


def test_revoked_certificate(srv, pki):
    assert curl(srv.ports[3], pki, "client")[0] == 200
    assert curl(srv.ports[3], pki, "revoked")[0] == 400
    wait_until(lambda: "client SSL certificate verify error: (23:certificate revoked)" in srv.error_log_text(), 10,
               what="the revoked line")


def test_escaped_certificate(srv, pki):
    code, body = curl(srv.ports[0], pki, "client", "/escaped")
    assert code == 200
    assert urllib.parse.unquote(body) == (pki / "client.crt").read_text()
    assert "%0A" in body and "\n" not in body


def test_certificate_in_a_response_header(srv, pki):
    # $ssl_client_cert joins the PEM lines with "\n\t", a folded field:
    # nginx sends the fold, torii one line with spaces where the breaks
    # were. Unfolded as RFC 9112 5.2 has a recipient do, both are one field
    # that holds the whole certificate (the header was left out before).
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.load_cert_chain(str(pki / "client.crt"), str(pki / "client.key"))
    with socket.create_connection(("127.0.0.1", srv.ports[0]), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as s:
            s.sendall(b"GET /header HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            data = b""
            while chunk := s.recv(65536):
                data += chunk
    head = data.decode("latin-1").split("\r\n\r\n", 1)[0]
    assert head.startswith("HTTP/1.1 204 ")
    fields = [f for f in re.sub(r"\r?\n[ \t]+", " ", head).split("\r\n") if f.lower().startswith("x-client-cert:")]
    assert len(fields) == 1, head
    assert fields[0].split(":", 1)[1].split() == (pki / "client.crt").read_text().split()


def test_legacy_names(srv, pki):
    """$ssl_client_s_dn_legacy and _i_dn_legacy: OpenSSL's one-line form,
    the first RDN first."""
    assert curl(srv.ports[0], pki, "client", "/legacy") == (200, "/CN=client|/O=Torii Test/CN=Test Client CA")


def whole_days_left(end, between):
    """$ssl_client_v_remain's possible values for a certificate that ends at
    `end` (as openssl prints it), read between two times: whole days, 0 in
    the last one (the server's clock may be up to a second behind)."""
    end_s = ssl.cert_time_to_seconds(end)
    return {(end_s - int(t)) // 86400 if end_s - int(t) >= 86400 else 0
            for t in (between[0] - 1, between[1])}


def test_validity(srv, pki):
    """$ssl_client_v_start, _v_end as OpenSSL prints the dates, and
    _v_remain in whole days (the certificate is made for two days)."""
    dates = openssl("x509", "-in", "client.crt", "-noout", "-startdate", "-enddate", cwd=pki).splitlines()
    start, end = (line.split("=", 1)[1] for line in dates)
    between = [time.time()]
    status, body = curl(srv.ports[0], pki, "client", "/validity")
    between.append(time.time())
    assert status == 200 and body.rsplit("|", 1)[0] == f"{start}|{end}"
    assert int(body.rsplit("|", 1)[1]) in whole_days_left(end, between)
    assert curl(srv.ports[4], pki, "client", "/validity") == (200, "||")


def test_no_verification_means_none(srv, pki):
    assert curl(srv.ports[4], pki, "client") == (200, "NONE||||")


def test_verification_needs_a_ca(pki, make_server):
    from harness import cli
    conf = base_conf(f"""
    server {{
        listen 127.0.0.1:@PORT@ ssl;
        ssl_certificate {pki}/server.crt;
        ssl_certificate_key {pki}/server.key;
        ssl_verify_client on;
    }}
""")
    server = make_server(conf, start=False)
    server.ports = [1]
    server.write_conf()
    p = cli(["-t", "-c", str(server.conf_path)], prefix=server.prefix)
    assert p.returncode == 1
    assert "no ssl_client_certificate for ssl_verify_client" in p.stdout + p.stderr
