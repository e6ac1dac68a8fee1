"""A real browser against the server: Debian's Chromium, headless, loads a
page over HTTP/1.1, over TLS with HTTP/2, and over HTTP/3 (QUIC forced
for the origin), and the page's own script reports what the browser saw:
the protocol of the page and of each subresource, a 1 MB download's
checksum, 60 parallel small fetches, and a 256 KB upload echoed back by a
proxied backend. Chromium's network stack (its own HTTP/2 and QUIC code)
is independent of every other client the tests use.

The HTTP/1.1 and HTTP/2 cases pass against Debian's nginx (1.22); it has
no HTTP/3, so that case is torii's only."""

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile

import pytest

import harness
from echo_backend import AppBackend
from harness import base_conf

CHROMIUM = shutil.which("chromium")

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium")

PAGE = """<!doctype html>
<html><head><title>t</title></head><body><pre id="out">pending</pre>
<script>
// FNV-1a, 32 bits: crypto.subtle needs a secure context, which plain
// http://a.test is not.
function fnv(buf) {
  let h = 0x811c9dc5;
  for (const b of new Uint8Array(buf)) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h.toString(16);
}
function proto(path) {
  const e = performance.getEntriesByName(new URL(path, location.href).href);
  return e.length ? e[e.length - 1].nextHopProtocol : "none";
}
async function run() {
  const out = {};
  out.page = performance.getEntriesByType("navigation")[0].nextHopProtocol;
  const big = await fetch("/big.bin", {cache: "no-store"});
  out.big_status = big.status;
  out.big = fnv(await big.arrayBuffer());
  out.big_proto = proto("/big.bin");
  const small = await Promise.all([...Array(60).keys()].map(
      i => fetch("/small.txt?i=" + i, {cache: "no-store"}).then(r => r.text())));
  out.small_ok = small.filter(t => t === "small\\n").length;
  const body = new Uint8Array(262144);
  for (let i = 0; i < body.length; i++) body[i] = (i * 7 + 3) & 255;
  const echo = await fetch("/echo", {method: "POST", body: body, cache: "no-store"});
  out.echo_status = echo.status;
  out.echo = fnv(await echo.arrayBuffer());
  out.echo_sent = fnv(body);
  document.getElementById("out").textContent = "RESULT " + JSON.stringify(out);
}
run().catch(e => { document.getElementById("out").textContent = "RESULT " + JSON.stringify({error: String(e)}); });
</script></body></html>
"""


@pytest.fixture(scope="module")
def echo_backend():
    """Answers a POST with its body."""
    server = AppBackend(lambda request: (200, {"Content-Type": "application/octet-stream"}, request.body))
    yield server.port
    server.stop()


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    d = tmp_path_factory.mktemp("browsercert")
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-keyout", "a.test.key", "-out", "a.test.pem", "-days", "2", "-subj", "/CN=a.test",
                        "-addext", "subjectAltName=DNS:a.test"], cwd=d, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return d


def spki_hash(cert_dir):
    """Chromium's --ignore-certificate-errors-spki-list value for the cert."""
    pub = subprocess.run(["openssl", "x509", "-in", str(cert_dir / "a.test.pem"), "-pubkey", "-noout"],
                         capture_output=True, check=True).stdout
    der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "der"], input=pub, capture_output=True,
                         check=True).stdout
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def site(make_server, echo_port, listen, server_extra=""):
    conf = base_conf(f"""
    server {{
        {listen}
        server_name a.test;
        root @PREFIX@/html;
        client_max_body_size 10m;
        {server_extra}
        location = /echo {{ proxy_pass http://127.0.0.1:{echo_port}; }}
    }}
""")
    s = make_server(conf, start=False)
    html = s.prefix / "html"
    html.mkdir(parents=True, exist_ok=True)
    (html / "index.html").write_text(PAGE)
    (html / "small.txt").write_text("small\n")
    big = os.urandom(1024 * 1024)
    (html / "big.bin").write_bytes(big)
    s.start()
    return s, fnv(big)


def fnv(data):
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return format(h, "x")


def browse(url, extra_flags=()):
    with tempfile.TemporaryDirectory() as profile:
        cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", "--host-resolver-rules=MAP a.test 127.0.0.1",
               "--virtual-time-budget=30000", *extra_flags, "--dump-dom", url]
        r = subprocess.run(cmd, capture_output=True, timeout=90)
    m = re.search(rb"RESULT (\{.*?\})</pre>", r.stdout)
    assert m, f"no result from the page: {r.stdout[-2000:]!r} {r.stderr[-3000:]!r}"
    return json.loads(m.group(1).replace(b"&quot;", b'"'))


def check_page(result, big_sum, protocol):
    assert "error" not in result, result
    assert result["page"] == protocol, result
    assert result["big_status"] == 200 and result["big"] == big_sum, result
    assert result["big_proto"] == protocol, result
    assert result["small_ok"] == 60, result
    assert result["echo_status"] == 200 and result["echo"] == result["echo_sent"], result


def test_page_over_http1(make_server, echo_backend):
    s, big_sum = site(make_server, echo_backend, "listen 127.0.0.1:@PORT@;")
    check_page(browse(f"http://a.test:{s.port}/index.html"), big_sum, "http/1.1")


def test_page_over_tls_and_http2(make_server, echo_backend, cert):
    s, big_sum = site(make_server, echo_backend, f"""listen 127.0.0.1:@PORT@ ssl http2;
        ssl_certificate {cert}/a.test.pem;
        ssl_certificate_key {cert}/a.test.key;""")
    result = browse(f"https://a.test:{s.port}/index.html", [f"--ignore-certificate-errors-spki-list={spki_hash(cert)}"])
    check_page(result, big_sum, "h2")


@pytest.mark.skipif(harness.IS_NGINX, reason="Debian's nginx has no HTTP/3")
def test_page_over_http3(make_server, echo_backend, cert):
    s, big_sum = site(make_server, echo_backend, f"""listen 127.0.0.1:@PORT@ ssl;
        listen 127.0.0.1:@PORT@ quic reuseport;
        http2 on;
        ssl_certificate {cert}/a.test.pem;
        ssl_certificate_key {cert}/a.test.key;""")
    result = browse(f"https://a.test:{s.port}/index.html",
                    [f"--ignore-certificate-errors-spki-list={spki_hash(cert)}", "--enable-quic",
                     f"--origin-to-force-quic-on=a.test:{s.port}"])
    check_page(result, big_sum, "h3")
    log = s.access_log.read_text()
    assert "HTTP/3.0" in log, log[-2000:]
