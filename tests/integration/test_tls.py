"""HTTPS: `listen ... ssl` with nginx's ssl_* directives, checked with real
TLS peers (curl, openssl s_client, ab). Certificates come from a test CA
made with `openssl req` in a temporary directory: a root, an intermediate
(so chains are exercised) and leaves for a.test and b.test, RSA and ECDSA.

Every config here is valid for nginx 1.22 too (TORII_BIN=/usr/sbin/nginx).
"""

import os
import re
import shutil
import socket
import subprocess
import time

import pytest

import harness
from harness import base_conf, wait_until

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None or shutil.which("curl") is None,
                                reason="needs openssl and curl")


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=kw.pop("timeout", 30), **kw)


def openssl(*args, cwd):
    r = run(["openssl", *args], cwd=cwd)
    assert r.returncode == 0, r.stderr
    return r


def make_leaf(d, name, issuer, key_type="rsa"):
    if key_type == "rsa":
        keyargs = ["-newkey", "rsa:2048"]
    else:
        keyargs = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
    openssl("req", "-new", *keyargs, "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
            "-subj", f"/CN={name.split('-')[0]}", cwd=d)
    ext = d / f"{name}.ext"
    ext.write_text(f"subjectAltName=DNS:{name.split('-')[0]}\nbasicConstraints=CA:FALSE\n")
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{issuer}.crt", "-CAkey", f"{issuer}.key",
            "-CAcreateserial", "-days", "2", "-out", f"{name}.crt", "-extfile", str(ext), cwd=d)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    """root.crt (the CA clients trust), inter (its intermediate), and for each
    of a.test and b.test: NAME.key and NAME.pem = leaf + intermediate."""
    d = tmp_path_factory.mktemp("certs")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "root.key", "-out", "root.crt",
            "-days", "2", "-subj", "/CN=torii test root", cwd=d)
    (d / "inter.ext").write_text("basicConstraints=critical,CA:TRUE\nkeyUsage=keyCertSign,cRLSign\n")
    openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", "inter.key", "-out", "inter.csr",
            "-subj", "/CN=torii test intermediate", cwd=d)
    openssl("x509", "-req", "-in", "inter.csr", "-CA", "root.crt", "-CAkey", "root.key", "-CAcreateserial",
            "-days", "2", "-out", "inter.crt", "-extfile", "inter.ext", cwd=d)
    for name, kt in (("a.test", "rsa"), ("b.test", "rsa"), ("a.test-ec", "ec"), ("c.test", "rsa")):
        make_leaf(d, name, "inter", kt)
        (d / f"{name}.pem").write_text((d / f"{name}.crt").read_text() + (d / "inter.crt").read_text())
    return d


def write_site(prefix):
    html = prefix / "html"
    html.mkdir(parents=True, exist_ok=True)
    (html / "index.html").write_text("hello tls\n")
    data = bytes((i * 7 + i // 251) & 0xff for i in range(20 * 1024))
    (html / "20k.bin").write_bytes(data)
    big = os.urandom(1024 * 1024 + 123)
    (html / "big.bin").write_bytes(big)
    return data, big


def tls_conf(certs, extra_server="", extra_http="", listen_extra="", main=""):
    # nginx 1.22's default lacks TLSv1.3 (1.23.4 added it, and torii's default has it).
    return base_conf(f"""
    ssl_protocols TLSv1.2 TLSv1.3;
    server {{
        listen 127.0.0.1:@PORT0@ ssl{listen_extra};
        server_name a.test;
        ssl_certificate {certs}/a.test.pem;
        ssl_certificate_key {certs}/a.test.key;
        root @PREFIX@/html;
        location = /vars {{
            return 200 "$scheme|$https|$ssl_protocol|$ssl_cipher|$ssl_server_name|$ssl_session_reused\\n";
        }}
        {extra_server}
    }}
    {extra_http}
""", main=main, error_level="info")


def curl(port, path="/", host="a.test", cacert=None, extra=()):
    cmd = ["curl", "-sS", "--max-time", "10", "--resolve", f"{host}:{port}:127.0.0.1"]
    cmd += ["--cacert", str(cacert)] if cacert else ["-k"]
    cmd += list(extra) + [f"https://{host}:{port}{path}"]
    return subprocess.run(cmd, capture_output=True, timeout=20)


def s_client(port, *args, request=None, timeout=15):
    """openssl s_client; returns stdout+stderr. With `request`, sends it and
    reads until the server closes (send Connection: close)."""
    cmd = ["openssl", "s_client", "-connect", f"127.0.0.1:{port}", *args]
    if request is not None:
        cmd.append("-ign_eof")
    data = request if request is not None else ""
    r = subprocess.run(cmd, input=data.encode(), capture_output=True, timeout=timeout)
    return r.stdout.decode("latin-1") + r.stderr.decode("latin-1")


GET_CLOSE = "GET /vars HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n"


# ---------------------------------------------------------------------------


def test_session_detail_variables(make_server, certs):
    details = """
        location = /details {
            return 200 "$ssl_session_id|$ssl_curve|$ssl_curves|$ssl_alpn_protocol\\n";
        }"""
    srv = make_server(tls_conf(certs, extra_server=details))
    r = curl(srv.port, "/details", extra=["--tlsv1.3", "--http1.1", "--curves", "X25519:P-256"])
    assert r.returncode == 0, r.stderr
    session_id, curve, curves, alpn = r.stdout.decode().strip().split("|")
    assert re.fullmatch(r"([0-9a-f]{2})+", session_id), session_id
    assert (curve, curves, alpn) == ("X25519", "X25519:prime256v1", "http/1.1")
    r = curl(srv.port, "/details", extra=["--tlsv1.2", "--tls-max", "1.2", "--curves", "P-256"])
    _, curve, curves, _ = r.stdout.decode().strip().split("|")
    assert (curve, curves) == ("prime256v1", "prime256v1")
    plain = s_client(srv.port, "-tls1_3", "-groups", "P-384", request="GET /details HTTP/1.0\r\n\r\n")
    assert "|secp384r1|secp384r1|\n" in plain  # no ALPN asked: not found


def test_client_cipher_list_variable(make_server, certs):
    """$ssl_ciphers: the suites of the client's hello in its order, by
    OpenSSL's names (a suite it does not know would be 0x and its hex)."""
    details = """
        location = /ciphers {
            return 200 "$ssl_ciphers|$ssl_cipher\\n";
        }"""
    srv = make_server(tls_conf(certs, extra_server=details))
    plain = s_client(srv.port, "-tls1_3", "-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256",
                     request="GET /ciphers HTTP/1.0\r\n\r\n")
    line = next((l for l in plain.splitlines() if l.startswith("TLS_") and "|" in l), plain)
    ciphers, chosen = line.split("|")
    # OpenSSL's client ends its list with the renegotiation signal.
    assert ciphers.split(":") == ["TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_GCM_SHA256",
                                  "TLS_EMPTY_RENEGOTIATION_INFO_SCSV"], line
    assert chosen == "TLS_CHACHA20_POLY1305_SHA256"  # the server follows the client's order in TLS 1.3


def test_curl_verifies_chain_and_gets_files(make_server, tmp_path, certs):
    srv = make_server(tls_conf(certs), start=False)
    data, big = write_site(srv.prefix)
    srv.start()
    r = curl(srv.port, "/index.html", cacert=certs / "root.crt")
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"hello tls\n"
    out = tmp_path / "20k"
    r = curl(srv.port, "/20k.bin", cacert=certs / "root.crt", extra=["-o", str(out)])
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == data
    r = curl(srv.port, "/big.bin", cacert=certs / "root.crt", extra=["-o", str(out)])
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == big
    # A range and keep-alive: several files over one connection.
    r = curl(srv.port, "/big.bin", extra=["-r", "1000-1999", "-o", str(out)])
    assert out.read_bytes() == big[1000:2000]
    r = curl(srv.port, "/20k.bin", extra=["-o", str(out), "-w", "%{num_connects}",
                                          f"https://a.test:{srv.port}/index.html"])
    assert r.stdout.endswith(b"0") or r.stdout.endswith(b"1")


def test_variables(make_server, certs):
    srv = make_server(tls_conf(certs))
    r = curl(srv.port, "/vars", extra=["--tlsv1.3"])
    scheme, https, proto, cipher, sni, reused = r.stdout.decode().strip().split("|")
    assert (scheme, https, proto, sni, reused) == ("https", "on", "TLSv1.3", "a.test", ".")
    assert cipher.startswith("TLS_")
    r = curl(srv.port, "/vars", extra=["--tlsv1.2", "--tls-max", "1.2"])
    assert r.stdout.decode().split("|")[2] == "TLSv1.2"


def test_tls_versions_and_tls11_refused(make_server, certs):
    srv = make_server(tls_conf(certs, extra_server="ssl_protocols TLSv1.2 TLSv1.3;"))
    out = s_client(srv.port, "-tls1_3", request=GET_CLOSE)
    assert "TLSv1.3" in out and "HTTP/1.1 200 OK" in out
    out = s_client(srv.port, "-tls1_2", request=GET_CLOSE)
    assert "Protocol  : TLSv1.2" in out and "HTTP/1.1 200 OK" in out
    out = s_client(srv.port, "-tls1_1", request=GET_CLOSE)
    assert "HTTP/1.1" not in out
    assert re.search(r"alert protocol version|no protocols available|unsupported protocol", out), out
    # The failed handshake is logged at info and the server goes on.
    wait_until(lambda: "while SSL handshaking" in srv.error_log_text(), 5, what="handshake failure logged")
    assert curl(srv.port, "/index.html").returncode in (0,)


def test_sni_picks_server_and_certificate(make_server, certs):
    srv = make_server(tls_conf(certs, extra_http=f"""
    server {{
        listen 127.0.0.1:@PORT0@ ssl;
        server_name b.test;
        ssl_certificate {certs}/b.test.pem;
        ssl_certificate_key {certs}/b.test.key;
        location / {{ return 200 "server b $ssl_server_name\\n"; }}
    }}"""))
    out = s_client(srv.port, "-servername", "b.test")
    assert "subject=CN = b.test" in out
    out = s_client(srv.port, "-servername", "a.test")
    assert "subject=CN = a.test" in out
    out = s_client(srv.port, "-noservername")
    assert "subject=CN = a.test" in out  # the default server's certificate
    out = s_client(srv.port, "-servername", "other.test")
    assert "subject=CN = a.test" in out
    r = curl(srv.port, "/", host="b.test", cacert=certs / "root.crt")
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"server b b.test\n"


def test_rsa_and_ecdsa_on_one_server(make_server, certs):
    srv = make_server(tls_conf(certs, extra_server=f"""
        ssl_certificate {certs}/a.test-ec.pem;
        ssl_certificate_key {certs}/a.test-ec.key;"""))
    out = s_client(srv.port, "-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-GCM-SHA256", "-servername", "a.test")
    assert "Cipher is ECDHE-ECDSA-AES128-GCM-SHA256" in out, out
    out = s_client(srv.port, "-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256", "-servername", "a.test")
    assert "Cipher is ECDHE-RSA-AES128-GCM-SHA256" in out, out
    out = s_client(srv.port, "-showcerts", "-servername", "a.test")
    assert out.count("-----BEGIN CERTIFICATE-----") == 2  # leaf + intermediate


def test_http_level_certificate_is_inherited(make_server, certs):
    srv = make_server(base_conf(f"""
    ssl_certificate {certs}/b.test.pem;
    ssl_certificate_key {certs}/b.test.key;
    server {{
        listen 127.0.0.1:@PORT0@ ssl;
        location / {{ return 200 "ok\\n"; }}
    }}"""))
    out = s_client(srv.port, request="GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert "subject=CN = b.test" in out and "HTTP/1.1 200 OK" in out


def test_alpn(make_server, certs):
    srv = make_server(tls_conf(certs))
    out = s_client(srv.port, "-alpn", "http/1.1")
    assert "ALPN protocol: http/1.1" in out
    out = s_client(srv.port, "-alpn", "h2,http/1.1")
    assert "ALPN protocol: http/1.1" in out  # no HTTP/2 on this server
    out = s_client(srv.port, "-alpn", "h2")
    assert "no application protocol" in out  # nothing in common: refused, as nginx does


def test_alpn_offers_h2_when_enabled(make_server, certs):
    srv = make_server(tls_conf(certs, listen_extra=" http2"))
    out = s_client(srv.port, "-alpn", "h2,http/1.1")
    assert "ALPN protocol: h2" in out


def resume_pair(port, tls_flag, extra, tmp_path, name):
    sess = tmp_path / f"{name}.sess"
    first = s_client(port, tls_flag, *extra, "-sess_out", str(sess), request=GET_CLOSE)
    assert "HTTP/1.1 200 OK" in first, first
    second = s_client(port, tls_flag, *extra, "-sess_in", str(sess), request=GET_CLOSE)
    return first, second


def test_session_cache_resumption(make_server, tmp_path, certs):
    srv = make_server(tls_conf(certs, extra_server="""
        ssl_session_cache shared:SSL:1m;
        ssl_session_timeout 10m;
        ssl_session_tickets off;"""))
    for flag in ("-tls1_2", "-tls1_3"):
        first, second = resume_pair(srv.port, flag, [], tmp_path, flag)
        assert "\nNew," in first
        assert "\nReused," in second, second
        assert "|r\n" in second  # $ssl_session_reused


@pytest.mark.parametrize("tickets", ["on", "off"])
def test_shared_cache_resumes_across_reload(make_server, tmp_path, certs, tickets):
    # A reload builds new TLS contexts; a shared:NAME cache (its sessions,
    # and the ticket keys it holds) outlives them, as nginx's shared zone.
    def conf(body):
        return tls_conf(certs, extra_server=f"""
        ssl_session_cache shared:SSL:1m;
        ssl_session_tickets {tickets};
        location = / {{ return 200 "{body}\\n"; }}""")
    root = "GET / HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n"
    srv = make_server(conf("one"))
    sessions = {}
    for flag in ("-tls1_2", "-tls1_3"):
        sessions[flag] = tmp_path / f"reload{tickets}{flag}.sess"
        first = s_client(srv.port, flag, "-sess_out", str(sessions[flag]), request=root)
        assert "\nNew," in first and "\r\n\r\none\n" in first, first
    srv.reload(conf("two"))
    harness.wait_until(lambda: "\r\n\r\ntwo\n" in s_client(srv.port, request=root), 15, what="the reloaded config")
    for flag in ("-tls1_2", "-tls1_3"):
        second = s_client(srv.port, flag, "-sess_in", str(sessions[flag]), request=root)
        assert "\nReused," in second, second
        assert "\r\n\r\ntwo\n" in second


def test_ticket_resumption_without_cache(make_server, tmp_path, certs):
    srv = make_server(tls_conf(certs, extra_server="ssl_session_cache off;"))
    for flag in ("-tls1_2", "-tls1_3"):
        first, second = resume_pair(srv.port, flag, [], tmp_path, "t" + flag)
        assert "\nReused," in second, second


def test_no_resumption_when_all_off(make_server, tmp_path, certs):
    srv = make_server(tls_conf(certs, extra_server="ssl_session_cache off; ssl_session_tickets off;"))
    sess = tmp_path / "off.sess"
    first = s_client(srv.port, "-tls1_2", "-sess_out", str(sess), request=GET_CLOSE)
    assert "HTTP/1.1 200 OK" in first
    if sess.exists():  # OpenSSL may have nothing to save
        second = s_client(srv.port, "-tls1_2", "-sess_in", str(sess), request=GET_CLOSE)
        assert "\nNew," in second


def test_ticket_key_file_shared_by_two_servers(make_server, tmp_path, certs):
    keys = tmp_path / "keys"
    keys.mkdir()
    (keys / "current.key").write_bytes(os.urandom(80))
    (keys / "old.key").write_bytes(os.urandom(48))
    conf = tls_conf(certs, extra_server=f"""
        ssl_session_cache off;
        ssl_session_ticket_key {keys}/current.key;
        ssl_session_ticket_key {keys}/old.key;""")
    one = make_server(conf, name="one")
    two = make_server(conf, name="two")
    for flag in ("-tls1_2", "-tls1_3"):
        sess = tmp_path / f"shared{flag}.sess"
        first = s_client(one.port, flag, "-sess_out", str(sess), request=GET_CLOSE)
        assert "HTTP/1.1 200 OK" in first
        second = s_client(two.port, flag, "-sess_in", str(sess), request=GET_CLOSE)
        assert "\nReused," in second, second
    # A server with other keys cannot decrypt the ticket: a full handshake.
    (keys / "other.key").write_bytes(os.urandom(80))
    three = make_server(tls_conf(certs, extra_server=f"""
        ssl_session_cache off;
        ssl_session_ticket_key {keys}/other.key;"""), name="three")
    second = s_client(three.port, "-tls1_2", "-sess_in", str(tmp_path / "shared-tls1_2.sess"), request=GET_CLOSE)
    assert "\nNew," in second


TICKET_CONFIGS = {
    "tickets": "",
    "shared-cache": "ssl_session_cache shared:SSL:1m;",
    "key-file": "ssl_session_ticket_key @PREFIX@/ticket.key;",
    "shared-cache-no-tickets": "ssl_session_cache shared:SSL:1m; ssl_session_tickets off;",
    "builtin-cache": "ssl_session_cache builtin;",
}


def ticket_server(make_server, certs, which):
    srv = make_server(tls_conf(certs, extra_server=TICKET_CONFIGS[which]), start=False)
    (srv.prefix / "ticket.key").write_bytes(os.urandom(80))
    srv.start()
    return srv


@pytest.mark.parametrize("which", sorted(TICKET_CONFIGS))
def test_tls13_tickets_never_run_dry(make_server, tmp_path, certs, which):
    """TLS 1.3 resumption, each connection using the ticket the previous one
    got (as browsers use a ticket once): two tickets after the full
    handshake, a fresh one after every resumption, so the chain never falls
    back to a full handshake. As nginx with OpenSSL's defaults."""
    srv = ticket_server(make_server, certs, which)
    sess_in = []
    for i in range(5):
        sess = tmp_path / f"{which}{i}.sess"
        out = s_client(srv.port, "-tls1_3", "-msg", *sess_in, "-sess_out", str(sess), request=GET_CLOSE)
        assert "HTTP/1.1 200 OK" in out, out
        tickets = out.count("NewSessionTicket")
        if i == 0:
            assert "\nNew," in out
            assert tickets == 2, out
        else:
            assert "\nReused," in out, f"connection {i}: {out}"
            assert tickets == 1, f"connection {i}: {out}"
        assert sess.exists(), f"connection {i} saved no ticket"
        sess_in = ["-sess_in", str(sess)]


@pytest.mark.parametrize("which", ["shared-cache", "key-file"])
def test_python_resumes_with_a_fresh_ticket_each_time(make_server, certs, which):
    """Python's ssl module: each connection resumes the session the one
    before it ended with, and that session is a new one (a fresh ticket)."""
    import ssl
    srv = ticket_server(make_server, certs, which)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    ctx.load_verify_locations(str(certs / "root.crt"))
    session = None
    seen = set()
    for i in range(4):
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname="a.test", session=session) as tls:
                tls.sendall(GET_CLOSE.encode())
                body = b""
                while chunk := tls.recv(65536):
                    body += chunk
                assert body.startswith(b"HTTP/1.1 200 OK"), body
                assert tls.session_reused == (i > 0), f"connection {i}"
                session = tls.session
                assert session.id not in seen, f"connection {i} got no new ticket"
                seen.add(session.id)


@pytest.mark.skipif(shutil.which("gnutls-cli") is None, reason="needs gnutls-cli (gnutls-bin)")
@pytest.mark.parametrize("which", ["shared-cache", "key-file"])
def test_gnutls_resumes_tls13(make_server, certs, which):
    """Another TLS implementation takes our tickets: GnuTLS resumes."""
    srv = ticket_server(make_server, certs, which)
    r = run(["gnutls-cli", "--x509cafile", str(certs / "root.crt"), "--resume", "-p", str(srv.port),
             "--sni-hostname", "a.test", "--verify-hostname", "a.test", "--priority",
             "NORMAL:-VERS-ALL:+VERS-TLS1.3", "127.0.0.1"], input=GET_CLOSE)
    out = r.stdout + r.stderr
    assert "This is a resumed session" in out, out


def test_curl_resumes_every_connection(make_server, certs):
    srv = ticket_server(make_server, certs, "shared-cache")
    url = f"https://a.test:{srv.port}/vars"
    r = curl(srv.port, "/vars", extra=["--tlsv1.3", "-H", "Connection: close", url, url, url])
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert len(lines) == 4, lines
    assert lines[0].endswith("|."), lines
    assert all(line.endswith("|r") for line in lines[1:]), lines


def test_ticket_key_rotation_renews_onto_the_current_key(make_server, tmp_path, certs):
    """TLS 1.3: a ticket made under the old key resumes on a server that
    lists it second, and the fresh ticket it gets is under the current key:
    a server that has only the current key resumes that one. (s_client
    saves no renewed TLS 1.2 ticket, so 1.2 is not checked this way.)"""
    flag = "-tls1_3"
    keys = tmp_path / "rotation"
    keys.mkdir()
    (keys / "old.key").write_bytes(os.urandom(80))
    (keys / "current.key").write_bytes(os.urandom(80))

    def server(name, *files):
        lines = "".join(f"ssl_session_ticket_key {keys}/{f};\n" for f in files)
        return make_server(tls_conf(certs, extra_server="ssl_session_cache off;\n" + lines), name=name)
    before = server("before", "old.key")
    during = server("during", "current.key", "old.key")
    after = server("after", "current.key")
    old_ticket, new_ticket = tmp_path / f"old{flag}.sess", tmp_path / f"new{flag}.sess"
    out = s_client(before.port, flag, "-sess_out", str(old_ticket), request=GET_CLOSE)
    assert "\nNew," in out
    out = s_client(during.port, flag, "-sess_in", str(old_ticket), "-sess_out", str(new_ticket), request=GET_CLOSE)
    assert "\nReused," in out, out
    out = s_client(after.port, flag, "-sess_in", str(new_ticket), request=GET_CLOSE)
    assert "\nReused," in out, out
    out = s_client(after.port, flag, "-sess_in", str(old_ticket), request=GET_CLOSE)
    assert "\nNew," in out  # the old key is gone there


def test_bad_ticket_key_size_fails_test(make_server, tmp_path, certs):
    (tmp_path / "bad.key").write_bytes(b"x" * 20)
    srv = make_server(tls_conf(certs, extra_server=f"ssl_session_ticket_key {tmp_path}/bad.key;"), start=False)
    srv.ports = [1]
    srv.write_conf()
    r = harness.cli(["-t", "-c", str(srv.conf_path)], prefix=srv.prefix)
    assert r.returncode != 0
    assert "bad.key" in r.stderr and "48" in r.stderr


def test_plain_http_to_https_port(make_server, certs):
    srv = make_server(tls_conf(certs))
    resp, closed = harness.http_raw(srv.port, b"GET /index.html HTTP/1.1\r\nHost: a.test\r\n\r\n")
    assert resp.status == 400
    assert b"The plain HTTP request was sent to HTTPS port" in resp.body
    assert closed


def test_error_page_497_redirects_to_https(make_server, certs):
    srv = make_server(tls_conf(certs, extra_server="error_page 497 https://$host:$server_port$request_uri;"))
    resp, _ = harness.http_raw(srv.port, b"GET /x?y=1 HTTP/1.1\r\nHost: a.test\r\n\r\n", wait_close=0)
    assert resp.status == 302
    assert resp.header("Location") == f"https://a.test:{srv.port}/x?y=1"


def test_plain_server_redirects_to_https(make_server, certs):
    srv = make_server(base_conf("""
    server {
        listen 127.0.0.1:@PORT0@;
        server_name a.test;
        return 301 https://$host$request_uri;
    }"""))
    resp = harness.http(srv.port, "/path?q=1", host="a.test:81")
    assert resp.status == 301
    assert resp.header("Location") == "https://a.test/path?q=1"


def test_handshake_timeout(make_server, certs):
    srv = make_server(tls_conf(certs, extra_server="client_header_timeout 1s;"))
    with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
        s.sendall(b"\x16\x03\x01")  # the start of a record, then nothing
        start = time.monotonic()
        s.settimeout(8)
        try:
            assert s.recv(100) == b""
        except ConnectionResetError:
            pass
        assert time.monotonic() - start < 6


def test_garbage_handshake_never_crashes(make_server, certs):
    srv = make_server(tls_conf(certs))
    for payload in (b"\x16\x03\x01\x00\x05hello", b"\x16" + os.urandom(3000), b"\x80\x00garbage", b"\x16"):
        with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
            s.sendall(payload)
            s.shutdown(socket.SHUT_WR)
            try:
                while s.recv(4096):
                    pass
            except (ConnectionResetError, socket.timeout):
                pass
    assert srv.alive()
    assert curl(srv.port, "/index.html").returncode == 0


@pytest.mark.parametrize("what", ["missing", "garbage", "key_mismatch"])
def test_bad_certificate_fails_config_test(make_server, tmp_path, certs, what):
    bad = tmp_path / "bad.pem"
    key = certs / "a.test.key"
    if what == "missing":
        cert = tmp_path / "nope.pem"
    elif what == "garbage":
        bad.write_text("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
        cert = bad
    else:
        cert = certs / "b.test.pem"
    conf = base_conf(f"""
    server {{
        listen 127.0.0.1:@PORT0@ ssl;
        ssl_certificate {cert};
        ssl_certificate_key {key};
    }}""")
    srv = make_server(conf, start=False)
    srv.ports = [1]
    srv.write_conf()
    r = harness.cli(["-t", "-c", str(srv.conf_path)], prefix=srv.prefix)
    assert r.returncode != 0
    named = str(key) if what == "key_mismatch" else str(cert)
    assert named in r.stderr, r.stderr


def test_listen_ssl_without_certificate_fails(make_server, tmp_path):
    srv = make_server(base_conf("server { listen 127.0.0.1:@PORT0@ ssl; }"), start=False)
    srv.ports = [1]
    srv.write_conf()
    r = harness.cli(["-t", "-c", str(srv.conf_path)], prefix=srv.prefix)
    assert r.returncode != 0
    assert 'no "ssl_certificate" is defined' in r.stderr


def test_reload_picks_new_certificate_and_keeps_old_on_error(make_server, tmp_path, certs):
    live = tmp_path / "live"
    live.mkdir()
    shutil.copy(certs / "a.test.pem", live / "cert.pem")
    shutil.copy(certs / "a.test.key", live / "cert.key")
    conf = base_conf(f"""
    server {{
        listen 127.0.0.1:@PORT0@ ssl;
        ssl_certificate {live}/cert.pem;
        ssl_certificate_key {live}/cert.key;
        location / {{ return 200 "ok\\n"; }}
    }}""", error_level="info")
    srv = make_server(conf)
    assert "subject=CN = a.test" in s_client(srv.port)
    shutil.copy(certs / "c.test.pem", live / "cert.pem")
    shutil.copy(certs / "c.test.key", live / "cert.key")
    srv.reload()
    wait_until(lambda: "subject=CN = c.test" in s_client(srv.port), 15, what="new certificate after reload")
    # A broken certificate: the reload fails and the running config stays.
    (live / "cert.pem").write_text("broken\n")
    srv.reload()
    wait_until(lambda: "cert.pem" in srv.error_log_text() and "cannot load certificate" in srv.error_log_text()
               or "PEM" in srv.error_log_text(), 15, what="reload failure logged")
    assert srv.alive()
    out = s_client(srv.port, request="GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert "subject=CN = c.test" in out and "HTTP/1.1 200 OK" in out


@pytest.mark.skipif(shutil.which("ab") is None, reason="needs ab")
@pytest.mark.parametrize("keepalive", [False, True])
def test_ab_over_https(make_server, certs, keepalive):
    srv = make_server(tls_conf(certs), start=False)
    write_site(srv.prefix)
    srv.start()
    cmd = ["ab", "-q", "-n", "300", "-c", "20"] + (["-k"] if keepalive else [])
    cmd += [f"https://127.0.0.1:{srv.port}/20k.bin"]
    r = run(cmd, timeout=120)
    assert r.returncode == 0, r.stderr
    assert re.search(r"Complete requests:\s+300", r.stdout), r.stdout
    assert re.search(r"Failed requests:\s+0", r.stdout), r.stdout
    assert re.search(r"Non-2xx responses", r.stdout) is None
    assert re.search(r"Document Length:\s+20480 bytes", r.stdout)


def test_early_data(make_server, tmp_path, certs, nginx_only_skip):
    """0-RTT: accepted with ssl_early_data on; a non-idempotent request in
    early data gets 425 Too Early (it could be a replay)."""
    srv = make_server(tls_conf(certs, extra_server="""
        ssl_early_data on;
        location = /e { return 200 "early=$ssl_early_data\\n"; }"""))
    sess = tmp_path / "ed.sess"
    first = s_client(srv.port, "-tls1_3", "-sess_out", str(sess),
                     request="GET /e HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n")
    assert "early=\n" in first
    get = tmp_path / "get.txt"
    get.write_text("GET /e HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n")
    post = tmp_path / "post.txt"
    post.write_text("POST /e HTTP/1.1\r\nHost: a.test\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    second = tmp_path / "ed2.sess"  # each ticket's early data is accepted once
    out = s_client(srv.port, "-tls1_3", "-sess_in", str(sess), "-sess_out", str(second), "-early_data", str(get),
                   request="")
    assert "Early data was accepted" in out, out
    assert "early=1" in out
    out = s_client(srv.port, "-tls1_3", "-sess_in", str(second), "-early_data", str(post), request="")
    assert "HTTP/1.1 425 Too Early" in out


def test_early_data_of_a_ticket_is_accepted_once(make_server, tmp_path, certs, nginx_only_skip):
    """0-RTT replay: the same ticket's early data is accepted once in the
    process (whichever worker sees it); a replay still resumes but its early
    data is rejected, so the request waits for the handshake. A fresh ticket
    has early data of its own. (nginx accepts every replay.)"""
    srv = make_server(tls_conf(certs, extra_server="""
        ssl_early_data on;
        location = /e { return 200 "early=$ssl_early_data\\n"; }""", main="worker_processes 2;"))
    get = tmp_path / "get.txt"
    get.write_text("GET /e HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n")
    first = tmp_path / "first.sess"
    out = s_client(srv.port, "-tls1_3", "-sess_out", str(first), request=GET_CLOSE)
    assert "\nNew," in out
    fresh = tmp_path / "fresh.sess"
    out = s_client(srv.port, "-tls1_3", "-sess_in", str(first), "-sess_out", str(fresh), "-early_data", str(get),
                   request="")
    assert "Early data was accepted" in out and "early=1" in out, out
    for _ in range(3):
        # No request after the handshake: s_client sends only the early data.
        out = s_client(srv.port, "-tls1_3", "-sess_in", str(first), "-early_data", str(get))
        assert "\nReused," in out, out
        assert "Early data was rejected" in out, out
        assert "early=1" not in out
    out = s_client(srv.port, "-tls1_3", "-sess_in", str(fresh), "-early_data", str(get), request="")
    assert "Early data was accepted" in out and "early=1" in out, out


def test_old_protocols_warn(make_server, certs, nginx_only_skip):
    srv = make_server(tls_conf(certs, extra_server="ssl_protocols TLSv1 TLSv1.1 TLSv1.2;"), start=False)
    srv.ports = [1]
    srv.write_conf()
    r = harness.cli(["-t", "-c", str(srv.conf_path)], prefix=srv.prefix)
    assert r.returncode == 0, r.stderr
    assert "[warn]" in r.stderr and "TLSv1.1" in r.stderr and "OpenSSL 3" in r.stderr
    srv.start()
    out = s_client(srv.port, "-tls1_2", request=GET_CLOSE)
    assert "HTTP/1.1 200 OK" in out


def test_old_protocols_at_security_level_0_do_not_warn(make_server, certs, nginx_only_skip):
    # Mozilla's "old" profile lowers the level in ssl_ciphers: TLSv1 then
    # works, and -t says nothing against it.
    srv = make_server(tls_conf(certs, extra_server="ssl_protocols TLSv1 TLSv1.1 TLSv1.2 TLSv1.3;\n"
                                                   "ssl_ciphers DEFAULT:@SECLEVEL=0;"), start=False)
    srv.ports = [1]
    srv.write_conf()
    r = harness.cli(["-t", "-c", str(srv.conf_path)], prefix=srv.prefix)
    assert r.returncode == 0 and "[warn]" not in r.stderr, r.stderr
    srv.start()
    out = s_client(srv.port, "-tls1", "-cipher", "DEFAULT:@SECLEVEL=0", request=GET_CLOSE)
    assert "HTTP/1.1 200 OK" in out, out[-1500:]


def test_other_directives_accepted(make_server, tmp_path, certs):
    dh = tmp_path / "dh.pem"
    # A fixed, well-known group (RFC 7919 ffdhe2048) keeps the test fast.
    r = run(["openssl", "genpkey", "-genparam", "-algorithm", "DH", "-pkeyopt", "group:ffdhe2048",
             "-out", str(dh)])
    assert r.returncode == 0, r.stderr
    srv = make_server(tls_conf(certs, extra_server=f"""
        ssl_ciphers ECDHE-RSA-AES128-GCM-SHA256:ECDHE:ECDH:AES:HIGH:!NULL:!aNULL:!MD5:!ADH:!RC4;
        ssl_prefer_server_ciphers on;
        ssl_ecdh_curve X25519:prime256v1;
        ssl_session_cache builtin:1000 shared:SSL:10m;
        ssl_session_timeout 5m;
        ssl_buffer_size 4k;
        ssl_dhparam {dh};
        ssl_conf_command Options PrioritizeChaCha;"""), start=False)
    write_site(srv.prefix)
    srv.start()
    out = s_client(srv.port, "-tls1_2", "-cipher", "DHE-RSA-AES128-GCM-SHA256", request=GET_CLOSE)
    assert "Cipher is DHE-RSA-AES128-GCM-SHA256" in out, out
    out = s_client(srv.port, "-tls1_2", request=GET_CLOSE)
    assert "Cipher is ECDHE-RSA-AES128-GCM-SHA256" in out  # the server's order
    r = curl(srv.port, "/big.bin", extra=["-o", "/dev/null", "-w", "%{size_download}"])
    assert r.stdout == str(1024 * 1024 + 123).encode()


def test_keepalive_connection_quiet_past_a_second_is_still_served(make_server, certs):
    """A quiet TLS connection gives its record buffers back after a second;
    its next requests (a small one, then a 20 KB and a 1 MB file that take
    several records) come back whole on the same connection."""
    import ssl
    srv = make_server(tls_conf(certs), start=False)
    data, big = write_site(srv.prefix)
    srv.start()
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["http/1.1"])
    sock = ctx.wrap_socket(socket.create_connection(("127.0.0.1", srv.ports[0]), timeout=10),
                           server_hostname="a.test")

    def get(path):
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: a.test\r\n\r\n".encode())
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = sock.recv(65536)
            assert chunk, "the server closed the keep-alive connection"
            buf += chunk
        head, body = buf.split(b"\r\n\r\n", 1)
        length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
        while len(body) < length:
            chunk = sock.recv(65536)
            assert chunk, "the server closed the connection mid-body"
            body += chunk
        assert head.startswith(b"HTTP/1.1 200"), head
        return body

    try:
        assert get("/index.html") == b"hello tls\n"
        for path, want in (("/index.html", b"hello tls\n"), ("/20k.bin", data), ("/big.bin", big)):
            time.sleep(1.6)  # quiet past the second after which the buffers go
            assert get(path) == want
    finally:
        sock.close()
