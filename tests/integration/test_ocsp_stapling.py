"""OCSP stapling: ssl_stapling, ssl_stapling_verify, ssl_stapling_file,
ssl_stapling_responder, ssl_trusted_certificate. A CA and leaf
certificates (with an AIA OCSP URL on loopback) are made with openssl for
each run; `openssl ocsp` answers as the responder; `openssl s_client
-status` reads what the server staples. nginx fetches a status only once
a handshake asks for one, so the tests ask until the staple shows."""

import shutil
import subprocess

import pytest

from harness import PortLease, base_conf, wait_until

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


def openssl(*args, cwd):
    r = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture(scope="module")
def responder_port():
    lease = PortLease()
    yield lease.port
    lease.release()


@pytest.fixture(scope="module")
def dead_port():
    """A leased port nothing listens on: a responder that is down."""
    lease = PortLease()
    yield lease.port
    lease.release()


@pytest.fixture(scope="module")
def pki(tmp_path_factory, responder_port, dead_port):
    d = tmp_path_factory.mktemp("ocsp-pki")
    (d / "ca.cnf").write_text(f"""[ca]
default_ca = test_ca
[test_ca]
dir = .
database = index.txt
new_certs_dir = .
certificate = ca.crt
private_key = ca.key
serial = serial
default_md = sha256
default_days = 2
policy = any
copy_extensions = none
[any]
commonName = supplied
[leaf]
basicConstraints = CA:FALSE
subjectAltName = DNS:localhost
authorityInfoAccess = OCSP;URI:http://127.0.0.1:{responder_port}/
[leaf_down]
basicConstraints = CA:FALSE
subjectAltName = DNS:localhost
authorityInfoAccess = OCSP;URI:http://127.0.0.1:{dead_port}/
[leaf_no_aia]
basicConstraints = CA:FALSE
subjectAltName = DNS:localhost
""")
    (d / "index.txt").write_text("")
    (d / "serial").write_text("2000\n")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
            "-subj", "/O=Torii Test/CN=Test OCSP CA", cwd=d)
    for name, ext in (("good", "leaf"), ("revoked", "leaf"), ("down", "leaf_down"), ("noaia", "leaf_no_aia")):
        openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
                "-subj", f"/O=Torii Test/CN={name}", cwd=d)
        openssl("ca", "-batch", "-config", "ca.cnf", "-extensions", ext, "-in", f"{name}.csr", "-out",
                f"{name}.crt", "-notext", cwd=d)
    openssl("ca", "-config", "ca.cnf", "-revoke", "revoked.crt", cwd=d)
    # The leaf followed by its CA: the issuer is found in the chain.
    (d / "good-chain.crt").write_text((d / "good.crt").read_text() + (d / "ca.crt").read_text())
    return d


@pytest.fixture(scope="module")
def responder(pki, responder_port):
    proc = subprocess.Popen(["openssl", "ocsp", "-index", "index.txt", "-port", str(responder_port),
                             "-rsigner", "ca.crt", "-rkey", "ca.key", "-CA", "ca.crt", "-ndays", "1"],
                            cwd=pki, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def answers():
        r = subprocess.run(["openssl", "ocsp", "-issuer", "ca.crt", "-cert", "good.crt", "-url",
                            f"http://127.0.0.1:{responder_port}/", "-CAfile", "ca.crt"],
                           cwd=pki, capture_output=True, text=True, timeout=10)
        return "good.crt: good" in r.stdout

    try:
        wait_until(answers, 15, interval=0.1, what="the OCSP responder")
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture(scope="module")
def response_file(pki, responder, responder_port):
    openssl("ocsp", "-issuer", "ca.crt", "-cert", "noaia.crt", "-url",
            f"http://127.0.0.1:{responder_port}/", "-CAfile", "ca.crt",
            "-respout", "noaia.der", cwd=pki)
    return pki / "noaia.der"


def server_block(port, cert, extra=""):
    return f"""
    server {{
        listen 127.0.0.1:@PORT{port}@ ssl;
        server_name localhost;
        ssl_certificate @PKI@/{cert}.crt;
        ssl_certificate_key @PKI@/{cert.split('-')[0]}.key;
        ssl_stapling on;
        {extra}
        location / {{ return 200 "ok\\n"; }}
    }}"""


CONF = (
    "    ssl_trusted_certificate @PKI@/ca.crt;\n" +
    server_block(0, "good", "ssl_stapling_verify on;") +
    server_block(1, "revoked", "ssl_stapling_verify on;") +
    server_block(2, "down") +
    server_block(3, "noaia", "ssl_stapling_file @PKI@/noaia.der;") +
    server_block(4, "noaia", "ssl_stapling_responder http://127.0.0.1:@RESPONDER@/; ssl_stapling_verify on;") +
    server_block(5, "good-chain", "ssl_stapling_verify on;") +
    server_block(6, "noaia"))


@pytest.fixture(scope="module")
def srv(pki, responder, response_file, responder_port, tmp_path_factory):
    from harness import Server
    conf = CONF.replace("@PKI@", str(pki)).replace("@RESPONDER@", str(responder_port))
    server = Server(base_conf(conf, error_level="info"), tmp_path_factory.mktemp("ocsp"), nports=7)
    server.start()
    yield server
    server.stop()


def status(port):
    """What `openssl s_client -status` says about the staple, and whether
    the handshake (and a request over it) went through."""
    r = subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{port}", "-servername", "localhost",
                        "-status", "-ign_eof"],
                       input="GET / HTTP/1.0\r\nHost: localhost\r\n\r\n", capture_output=True, text=True, timeout=20)
    out = r.stdout
    return {
        "stapled": "OCSP Response Status: successful" in out,
        "none": "OCSP response: no response sent" in out,
        "good": "Cert Status: good" in out,
        "answered": "HTTP/1.1 200 OK" in out,
    }


def stapled(port):
    s = status(port)
    return s if s["stapled"] else None


def test_good_certificate_is_stapled(srv):
    s = wait_until(lambda: stapled(srv.ports[0]), 20, interval=0.2, what="a staple")
    assert s["good"] and s["answered"]


def test_issuer_from_the_chain(srv):
    s = wait_until(lambda: stapled(srv.ports[5]), 20, interval=0.2, what="a staple")
    assert s["good"] and s["answered"]


def test_responder_directive(srv):
    s = wait_until(lambda: stapled(srv.ports[4]), 20, interval=0.2, what="a staple")
    assert s["good"]


def test_stapling_file(srv):
    s = status(srv.ports[3])
    assert s["stapled"] and s["good"] and s["answered"]


def test_revoked_is_not_stapled(srv):
    def logged():
        status(srv.ports[1])  # nginx asks the responder after a handshake asks for a status
        return 'certificate status "revoked" in the OCSP response' in srv.error_log_text()

    wait_until(logged, 20, interval=0.2, what="the revoked status logged")
    s = status(srv.ports[1])
    assert s["none"] and s["answered"]


def test_responder_down_means_no_staple(srv, dead_port):
    def logged():
        status(srv.ports[2])
        return any("while requesting certificate status" in line and "down.crt" in line
                   for line in srv.error_log_text().splitlines())

    wait_until(logged, 20, interval=0.2, what="the failed request logged")
    s = status(srv.ports[2])
    assert s["none"] and s["answered"]


def test_no_responder_url_warns_and_serves(srv):
    s = status(srv.ports[6])
    assert s["none"] and s["answered"]
    assert "no OCSP responder URL in the certificate" in srv.output() + srv.error_log_text()


def test_reload_keeps_the_staple(pki, responder, responder_port, make_server, nginx_only_skip):
    # nginx forgets its staples on reload and fetches again after a
    # handshake asks; torii's new context takes the response it had.
    conf = base_conf("    ssl_trusted_certificate @PKI@/ca.crt;\n" + server_block(0, "good", "ssl_stapling_verify on;"),
                     error_level="info").replace("@PKI@", str(pki))
    srv = make_server(conf)
    wait_until(lambda: stapled(srv.port), 20, interval=0.2, what="a staple")
    srv.reload()
    wait_until(lambda: "reconfiguration done" in srv.error_log_text(), 10, what="the reload")
    s = status(srv.port)
    assert s["stapled"] and s["good"]
    # One fetch for the certificate, before the reload, none after it.
    assert srv.error_log_text().count('OCSP response for certificate "') == 1
