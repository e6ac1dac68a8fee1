"""Variables in ssl_certificate / ssl_certificate_key: one server block
answers two names, each with its own certificate picked by
$ssl_server_name at the handshake; curl checks each certificate against
its name. Also nginx's "data:" form (the PEM text in the config)."""

import shutil
import subprocess

import pytest

from harness import base_conf, cli, wait_until

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None or shutil.which("curl") is None,
                                reason="needs openssl and curl")

NAMES = ("a.test", "b.test")


def make_cert(folder, name):
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                        "-keyout", f"{name}.key", "-out", f"{name}.crt", "-subj", f"/CN={name}",
                        "-addext", f"subjectAltName=DNS:{name}"], cwd=folder, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = tmp_path_factory.mktemp("named-certs")
    for name in NAMES + ("data.test",):
        make_cert(d, name)
    return d


# Relative names, as nginx reads them: from the main config file's folder
# (the server's prefix here), once the variable is rendered.
CONF = """
    server {
        listen 127.0.0.1:@PORT0@ ssl;
        ssl_certificate certs/$ssl_server_name.crt;
        ssl_certificate_key certs/${ssl_server_name}.key;
        location / { return 200 "$ssl_server_name\\n"; }
    }
    server {
        listen 127.0.0.1:@PORT1@ ssl;
        ssl_certificate "data:@DATA_CRT@";
        ssl_certificate_key "data:@DATA_KEY@";
        location / { return 200 "from data\\n"; }
    }
"""


@pytest.fixture
def srv(certs, make_server, tmp_path):
    prefix = tmp_path / "srv"
    (prefix / "certs").mkdir(parents=True)
    for name in NAMES:
        for ext in ("crt", "key"):
            shutil.copy(certs / f"{name}.{ext}", prefix / "certs" / f"{name}.{ext}")
    conf = CONF.replace("@DATA_CRT@", (certs / "data.test.crt").read_text()).replace(
        "@DATA_KEY@", (certs / "data.test.key").read_text())
    return make_server(base_conf(conf), nports=2, name="srv")


def curl(port, name, ca):
    r = subprocess.run(["curl", "-s", "--cacert", str(ca), f"https://{name}:{port}/",
                        "--resolve", f"{name}:{port}:127.0.0.1"], capture_output=True, text=True, timeout=20)
    return r.returncode, r.stdout


def test_each_name_gets_its_certificate(srv, certs):
    for _ in range(2):  # the second round comes from the cache
        for name in NAMES:
            assert curl(srv.port, name, certs / f"{name}.crt") == (0, name + "\n")
    # The other name's certificate does not verify: the choice is real.
    assert curl(srv.port, "a.test", certs / "b.test.crt")[0] != 0


def test_unknown_name_fails_the_handshake_and_logs(srv, certs):
    code, _ = curl(srv.port, "c.test", certs / "a.test.crt")
    assert code != 0
    wait_until(lambda: 'cannot load certificate "' in srv.error_log_text() and "c.test.crt" in srv.error_log_text(),
               10, what="the failed load logged")
    # The server goes on for the names it has.
    assert curl(srv.port, "a.test", certs / "a.test.crt") == (0, "a.test\n")


def test_read_at_every_handshake_without_a_cache(srv, certs):
    # nginx's default (ssl_certificate_cache off): the files are read at
    # every handshake, so a removed one fails the next (test_ssl_certificate_cache.py).
    assert curl(srv.port, "b.test", certs / "b.test.crt") == (0, "b.test\n")
    (srv.prefix / "certs" / "b.test.crt").unlink()
    assert curl(srv.port, "b.test", certs / "b.test.crt")[0] != 0


def test_data_form(srv, certs):
    assert curl(srv.ports[1], "data.test", certs / "data.test.crt") == (0, "from data\n")


def test_only_ssl_server_name(make_server, certs, nginx_only_skip):
    srv = make_server(base_conf("""
    server {
        listen 127.0.0.1:@PORT@ ssl;
        ssl_certificate certs/$host.crt;
        ssl_certificate_key certs/$host.key;
    }
"""), start=False)
    srv.ports = [1]
    srv.write_conf()
    p = cli(["-t", "-c", str(srv.conf_path)], prefix=srv.prefix)
    assert p.returncode == 1
    assert "only $ssl_server_name is supported" in p.stderr + p.stdout
