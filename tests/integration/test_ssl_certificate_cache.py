"""ssl_certificate_cache (nginx 1.27.4) for certificates named with
$ssl_server_name: off (the default) reads the files at every handshake;
max=N keeps a pair once read, and past valid= rereads it only if its
files changed. Also the proxy_/grpc_/uwsgi_ forms' checks. The tests of
the directive skip on nginx 1.22, which lacks it."""

import re
import shutil
import subprocess
import time

import pytest

import harness

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None or shutil.which("curl") is None,
                                reason="needs openssl and curl")


@pytest.fixture
def newer_than_122():
    if harness.IS_NGINX:
        out = subprocess.run([harness.BIN, "-v"], capture_output=True, text=True).stderr
        m = re.search(r"nginx/(\d+)\.(\d+)", out)
        if m and (int(m.group(1)), int(m.group(2))) < (1, 27):
            pytest.skip("ssl_certificate_cache came in nginx 1.27.4")


def make_cert(folder, name, stem=None):
    stem = stem or name
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                        "-keyout", f"{stem}.key", "-out", f"{stem}.crt", "-subj", f"/CN={name}",
                        "-addext", f"subjectAltName=DNS:{name}"], cwd=folder, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    d = tmp_path_factory.mktemp("cache-certs")
    make_cert(d, "a.test")
    make_cert(d, "a.test", stem="a.test.new")  # the same name, another key
    return d


def serve(make_server, certs, cache_line):
    s = make_server(harness.base_conf(f"""
    server {{
        listen 127.0.0.1:@PORT@ ssl;
        {cache_line}
        ssl_certificate certs/$ssl_server_name.crt;
        ssl_certificate_key certs/$ssl_server_name.key;
        location / {{ return 200 "$ssl_server_name\\n"; }}
    }}
"""), start=False)
    (s.prefix / "certs").mkdir(parents=True)
    for ext in ("crt", "key"):
        shutil.copy(certs / f"a.test.{ext}", s.prefix / "certs" / f"a.test.{ext}")
    s.start()
    return s


def trusts(port, ca):
    """The handshake for a.test verifies against `ca`."""
    r = subprocess.run(["curl", "-s", "--cacert", str(ca), f"https://a.test:{port}/",
                        "--resolve", f"a.test:{port}:127.0.0.1"], capture_output=True, text=True, timeout=20)
    return r.returncode == 0 and r.stdout == "a.test\n"


def replace_pair(s, certs):
    for ext in ("crt", "key"):
        tmp = s.prefix / "certs" / f"next.{ext}"
        shutil.copy(certs / f"a.test.new.{ext}", tmp)
        tmp.rename(s.prefix / "certs" / f"a.test.{ext}")


def test_off_reads_a_replaced_pair_at_once(make_server, certs):
    s = serve(make_server, certs, "")
    assert trusts(s.port, certs / "a.test.crt")
    replace_pair(s, certs)
    assert trusts(s.port, certs / "a.test.new.crt")


def test_cache_keeps_what_it_read(make_server, certs, newer_than_122):
    s = serve(make_server, certs, "ssl_certificate_cache max=10 inactive=1h valid=1h;")
    assert trusts(s.port, certs / "a.test.crt")
    replace_pair(s, certs)
    assert trusts(s.port, certs / "a.test.crt")
    (s.prefix / "certs" / "a.test.crt").unlink()
    assert trusts(s.port, certs / "a.test.crt")


def test_cache_rereads_a_changed_pair_once_valid_has_passed(make_server, certs, newer_than_122):
    s = serve(make_server, certs, "ssl_certificate_cache max=10 inactive=1h valid=1s;")
    assert trusts(s.port, certs / "a.test.crt")
    replaced = time.monotonic()
    replace_pair(s, certs)
    harness.wait_until(lambda: trusts(s.port, certs / "a.test.new.crt"), 15, interval=0.2,
                       what="the new pair to be served")
    assert time.monotonic() - replaced >= 0.9  # not before `valid` ran out


def check(make_server, http):
    s = make_server(harness.base_conf(http), start=False)
    s.ports = [0]
    s.write_conf()
    out = harness.cli(["-t", "-c", str(s.conf_path)], prefix=s.prefix)
    return out.returncode == 0, out.stdout + out.stderr


def test_accepted_forms(make_server, newer_than_122):
    ok, out = check(make_server, """
    ssl_certificate_cache max=100 inactive=20s valid=1m;
    proxy_ssl_certificate_cache max=10;
    grpc_ssl_certificate_cache off;
    uwsgi_ssl_certificate_cache max=5 valid=30s;
    server { ssl_certificate_cache off; }
""")
    assert ok, out


@pytest.mark.parametrize("line,message", [
    ("ssl_certificate_cache inactive=10s;", '"ssl_certificate_cache" must have the "max" parameter'),
    ("ssl_certificate_cache max=0;", 'invalid parameter "max=0"'),
    ("proxy_ssl_certificate_cache max=10 valid=soon;", 'invalid parameter "valid=soon"'),
    ("grpc_ssl_certificate_cache on;", 'invalid parameter "on"'),
])
def test_bad_values(make_server, newer_than_122, line, message):
    ok, out = check(make_server, line)
    assert not ok and message in out, out
