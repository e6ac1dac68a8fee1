"""ssl_reject_handshake: a server that refuses the handshakes its name
picks (unrecognized_name), and needs no certificate for it. Every
expectation is nginx's: the file passes with TORII_BIN=/usr/sbin/nginx."""

import socket
import ssl
import subprocess

import pytest

import harness


def config_check(make_server, http, main=""):
    """`-t` on a config with `http` in its http block: (ok, output)."""
    s = make_server(harness.base_conf(http=http, main=main), start=False)
    s.ports = [0]
    s.write_conf()
    out = harness.cli(["-t", "-c", str(s.conf_path)], prefix=s.prefix)
    return out.returncode == 0, out.stdout + out.stderr


# ---------------------------------------------------------------------------
# ssl_reject_handshake


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    d = tmp_path_factory.mktemp("cert")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", str(d / "good.key"), "-out", str(d / "good.crt"), "-days", "2",
                    "-subj", "/CN=good.example"], check=True, capture_output=True)
    return d


def reject_conf(cert):
    return harness.base_conf(http=f"""
    server {{
        listen 127.0.0.1:@PORT@ ssl default_server;
        ssl_reject_handshake on;
    }}
    server {{
        listen 127.0.0.1:@PORT@ ssl;
        server_name good.example;
        ssl_certificate {cert}/good.crt;
        ssl_certificate_key {cert}/good.key;
        location / {{ return 200 "good\\n"; }}
    }}
""")


def tls_get(port, server_name):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname=server_name) as t:
            t.sendall(b"GET / HTTP/1.1\r\nHost: good.example\r\nConnection: close\r\n\r\n")
            data = b""
            while chunk := t.recv(65536):
                data += chunk
            return data


def test_ssl_reject_handshake_refuses_names_it_picks(make_server, cert):
    s = make_server(reject_conf(cert))
    assert tls_get(s.port, "good.example").endswith(b"\r\n\r\ngood\n")
    for name in ("other.example", None):  # another name, and no name at all: the default server's
        with pytest.raises(ssl.SSLError) as refused:
            tls_get(s.port, name)
        assert "UNRECOGNIZED_NAME" in str(refused.value).upper()


def test_ssl_reject_handshake_needs_no_certificate(make_server, cert):
    ok, out = config_check(make_server, """
    server { listen 127.0.0.1:8443 ssl default_server; ssl_reject_handshake on; }
""")
    assert ok, out
    # Without it, the default server still needs one; so does a server that
    # neither has a certificate nor refuses, beside a refusing default.
    ok, out = config_check(make_server, "server { listen 127.0.0.1:8443 ssl default_server; }")
    assert not ok and 'no "ssl_certificate" is defined for the "listen ... ssl" directive' in out
    ok, out = config_check(make_server, """
    server { listen 127.0.0.1:8443 ssl default_server; ssl_reject_handshake on; }
    server { listen 127.0.0.1:8443 ssl; server_name b.example; }
""")
    assert not ok and 'no "ssl_certificate" is defined for the "listen ... ssl" directive' in out


def test_ssl_reject_handshake_bad_value(make_server):
    ok, out = config_check(make_server, "ssl_reject_handshake maybe;")
    assert not ok
    assert 'invalid value "maybe" in "ssl_reject_handshake" directive, it must be "on" or "off"' in out
