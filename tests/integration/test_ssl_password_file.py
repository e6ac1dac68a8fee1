"""ssl_password_file: an encrypted certificate key (made with openssl) is
read with the file's passwords, tried in order; with no right password the
load fails naming the key, and it never waits for a passphrase on the
terminal."""

import shutil
import subprocess

import pytest

from harness import base_conf, cli

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None or shutil.which("curl") is None,
                                reason="needs openssl and curl")


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    d = tmp_path_factory.mktemp("enc-keys")

    def run(*args):
        r = subprocess.run(["openssl", *args], cwd=d, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "plain.key", "-out", "server.crt", "-days", "2",
        "-subj", "/CN=localhost")
    run("pkey", "-in", "plain.key", "-aes256", "-passout", "pass:the right one", "-out", "encrypted.key")
    assert "ENCRYPTED" in (d / "encrypted.key").read_text()
    # Wrong first, an empty line, then the right one (CRLF, as some editors write).
    (d / "passwords").write_text("not this\n\r\nthe right one\r\n")
    (d / "wrong").write_text("not this\nnor this\n")
    return d


def conf(keys, password_line):
    return base_conf(f"""
    server {{
        listen 127.0.0.1:@PORT@ ssl;
        ssl_certificate {keys}/server.crt;
        ssl_certificate_key {keys}/encrypted.key;
        {password_line}
        location / {{ return 200 "secret key works\\n"; }}
    }}
""")


def test_encrypted_key_with_the_password_file(keys, make_server):
    srv = make_server(conf(keys, f"ssl_password_file {keys}/passwords;"))
    r = subprocess.run(["curl", "-s", "--cacert", str(keys / "server.crt"), f"https://localhost:{srv.port}/",
                        "--resolve", f"localhost:{srv.port}:127.0.0.1"], capture_output=True, text=True, timeout=20)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "secret key works\n"


@pytest.mark.parametrize("password_line", ["ssl_password_file @KEYS@/wrong;", ""])
def test_no_right_password_fails_the_load(keys, make_server, password_line):
    srv = make_server(conf(keys, password_line.replace("@KEYS@", str(keys))), start=False)
    srv.ports = [1]
    srv.write_conf()
    p = cli(["-t", "-c", str(srv.conf_path)], prefix=srv.prefix, timeout=20)
    out = p.stdout + p.stderr
    assert p.returncode == 1, out
    assert f'cannot load certificate key "{keys}/encrypted.key"' in out, out
    assert "PEM_read_bio_PrivateKey() failed" in out, out


def test_missing_password_file(keys, make_server):
    srv = make_server(conf(keys, f"ssl_password_file {keys}/absent;"), start=False)
    srv.ports = [1]
    srv.write_conf()
    p = cli(["-t", "-c", str(srv.conf_path)], prefix=srv.prefix)
    out = p.stdout + p.stderr
    assert p.returncode == 1, out
    assert f'open() "{keys}/absent" failed' in out, out


@pytest.mark.skipif(shutil.which("gtlsclient") is None, reason="needs gtlsclient (ngtcp2-client)")
def test_encrypted_key_over_quic(keys, make_server, nginx_only_skip):
    # Debian's nginx 1.22 has no HTTP/3; the key is loaded a second time, by GnuTLS, for QUIC.
    srv = make_server(base_conf(f"""
    server {{
        listen 127.0.0.1:@PORT@ ssl;
        http3 on;
        ssl_certificate {keys}/server.crt;
        ssl_certificate_key {keys}/encrypted.key;
        ssl_password_file {keys}/passwords;
        location / {{ return 200 "secret key works\\n"; }}
    }}
"""))
    r = subprocess.run(["gtlsclient", "--no-quic-dump", "--no-http-dump", "--exit-on-all-streams-close",
                        "--timeout=10s", "127.0.0.1", str(srv.port), f"https://localhost:{srv.port}/"],
                       capture_output=True, timeout=30)
    out = r.stdout.decode("latin-1") + r.stderr.decode("latin-1")
    assert "[:status: 200]" in out, out
