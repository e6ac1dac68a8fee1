"""HTTP/3 over QUIC, checked with an independent client: gtlsclient from
Debian's ngtcp2-client (ngtcp2 + nghttp3 + GnuTLS). It always exits 0, so
every check reads the `:status` lines and the bodies it saved.

torii only: Debian's nginx 1.22 has no HTTP/3 module (nginx-light lacks
http_v3), so these configs cannot run there. The forms are nginx's own
(`listen ... quic reuseport`, `http3 on`, the http3_*/quic_* directives)
plus the form seed 000 uses (`http3 on` beside `listen ... ssl`).
"""

import os
import re
import shutil
import socket
import subprocess

import pytest

import harness
from harness import base_conf, wait_until

pytestmark = [
    pytest.mark.skipif(shutil.which("gtlsclient") is None, reason="needs gtlsclient (ngtcp2-client)"),
    pytest.mark.skipif(harness.IS_NGINX, reason="Debian's nginx has no HTTP/3"),
]


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    d = tmp_path_factory.mktemp("h3certs")
    r = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "a.test.key",
                        "-out", "a.test.pem", "-days", "2", "-subj", "/CN=a.test",
                        "-addext", "subjectAltName=DNS:a.test"], cwd=d, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return d


def write_site(prefix):
    html = prefix / "html"
    html.mkdir(parents=True, exist_ok=True)
    (html / "index.html").write_text("hello h3\n")
    big = os.urandom(1024 * 1024)
    (html / "big.bin").write_bytes(big)
    (html / "50x.html").write_text("sorry\n")
    return big


def h3_conf(cert, listen="listen 127.0.0.1:@PORT0@ ssl;\n        http3 on;", extra_server="", extra_http=""):
    return base_conf(f"""
    {extra_http}
    server {{
        {listen}
        server_name a.test;
        ssl_certificate {cert}/a.test.pem;
        ssl_certificate_key {cert}/a.test.key;
        root @PREFIX@/html;
        add_header X-Test h3;
        location = /hello {{
            return 200 "proto=$server_protocol h3=$http3\\n";
        }}
        location = /moved {{
            return 301 /index.html;
        }}
        {extra_server}
    }}
""", error_level="info")


def gtls(port, *paths, args=(), download=None, timeout=30):
    """Runs gtlsclient against 127.0.0.1:port for https://a.test:port/PATH...
    Returns its output (headers as `[name: value]` lines)."""
    cmd = ["gtlsclient", "--no-quic-dump", "--no-http-dump", "--exit-on-all-streams-close", "--timeout=10s"]
    if download is not None:
        cmd += ["-q", f"--download={download}"]
    cmd += list(args) + ["127.0.0.1", str(port)] + [f"https://a.test:{port}{p}" for p in paths]
    r = subprocess.run(cmd, capture_output=True, timeout=timeout)
    return r.stdout.decode("latin-1") + r.stderr.decode("latin-1")


def statuses(out):
    return re.findall(r"\[:status: (\d+)\]", out)


def header(out, name):
    m = re.search(r"\[" + re.escape(name) + r": ([^\]]*)\]", out)
    return m.group(1) if m else None


def test_get_small_and_1mb_file_byte_for_byte(make_server, tmp_path, cert):
    srv = make_server(h3_conf(cert), start=False)
    big = write_site(srv.prefix)
    srv.start()
    out = gtls(srv.port, "/index.html")
    assert statuses(out) == ["200"], out
    assert header(out, "x-test") == "h3"
    assert header(out, "content-length") == "9"
    dl = tmp_path / "dl"
    dl.mkdir()
    gtls(srv.port, "/big.bin", download=dl)
    assert (dl / "big.bin").read_bytes() == big
    log = srv.access_log.read_text()
    assert '"GET /big.bin HTTP/3.0" 200 1048576' in log


def test_200_requests_on_one_connection(make_server, cert):
    srv = make_server(h3_conf(cert), start=False)
    write_site(srv.prefix)
    srv.start()
    out = gtls(srv.port, "/index.html", args=["-n", "200"], timeout=60)
    assert statuses(out).count("200") == 200, out[-2000:]
    wait_until(lambda: srv.access_log.read_text().count("HTTP/3.0\" 200") == 200, 10, what="200 log lines")


def test_404_error_page_and_return(make_server, cert):
    srv = make_server(h3_conf(cert, extra_server="error_page 404 /50x.html;"), start=False)
    write_site(srv.prefix)
    srv.start()
    dl = srv.prefix / "dl"
    dl.mkdir()
    out = gtls(srv.port, "/missing", download=dl)
    out = gtls(srv.port, "/missing")
    assert statuses(out) == ["404"], out
    assert header(out, "content-length") == "6"  # the error_page's file
    out = gtls(srv.port, "/moved")
    assert statuses(out) == ["301"], out
    assert header(out, "location") == f"https://a.test:{srv.port}/index.html"
    gtls(srv.port, "/hello", download=dl)
    assert (dl / "hello").read_text() == "proto=HTTP/3.0 h3=h3\n"


def test_quic_listen_form_answers_on_udp_only(make_server, cert):
    # nginx's own form: a quic listen (UDP) beside a plain TCP one.
    conf = h3_conf(cert, listen="listen 127.0.0.1:@PORT0@;\n        listen 127.0.0.1:@PORT1@ quic reuseport;")
    srv = make_server(conf, nports=2, start=False, wait_ports=[0])
    write_site(srv.prefix)
    srv.start()
    out = gtls(srv.ports[1], "/index.html")
    assert statuses(out) == ["200"], out
    # Nothing listens on TCP at the quic port.
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", srv.ports[1]), timeout=2).close()


@pytest.mark.parametrize("directive, message", [
    ("http3_hq on;", '"http3_hq on" is not yet supported'),
    ("http3_stream_buffer_size 0;", 'invalid value "0" in "http3_stream_buffer_size"'),
    ("quic_active_connection_id_limit 1;", 'invalid value "1"'),
])
def test_refused_directives_name_themselves(tmp_path, cert, directive, message):
    prefix = tmp_path / "p"
    (prefix / "logs").mkdir(parents=True)
    conf = prefix / "t.conf"
    conf.write_text(h3_conf(cert, extra_server=directive).replace("@PREFIX@", str(prefix)).replace("@PORT0@", "1"))
    r = harness.cli(["-t", "-c", str(conf)], prefix=prefix)
    assert r.returncode != 0
    assert message in (r.stdout + r.stderr)


def test_quic_with_ssl_parameter_is_refused(tmp_path, cert):
    prefix = tmp_path / "p"
    (prefix / "logs").mkdir(parents=True)
    conf = prefix / "t.conf"
    conf.write_text(h3_conf(cert, listen="listen 127.0.0.1:1 quic ssl;").replace("@PREFIX@", str(prefix)))
    r = harness.cli(["-t", "-c", str(conf)], prefix=prefix)
    assert r.returncode != 0
    assert '"ssl" parameter is incompatible with "quic"' in (r.stdout + r.stderr)
