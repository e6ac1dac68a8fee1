"""A directive written twice in one block. nginx takes a second line of its
bitmask and type-list directives (ssl_protocols, *_next_upstream,
*_cache_use_stale, gzip_proxied, charset_types, ...) and of
ssl_session_cache as more values, where other directives are "duplicate".
A site's own ssl_protocols and ssl_session_cache beside certbot's included
options file is the everyday case. Runs against nginx too."""

import subprocess

import pytest

import harness
from harness import base_conf, http


@pytest.fixture(scope="module")
def cert(tmp_path_factory):
    d = tmp_path_factory.mktemp("cert")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "k.pem", "-out", "c.pem",
                    "-days", "2", "-subj", "/CN=localhost"], cwd=d, check=True, capture_output=True)
    return d


def handshake(port, version):
    r = subprocess.run(["openssl", "s_client", "-connect", f"127.0.0.1:{port}", version],
                       input=b"", capture_output=True, timeout=15)
    out = r.stdout.decode("latin-1")
    return "Cipher is (NONE)" not in out and "BEGIN CERTIFICATE" in out


def test_site_lines_and_an_included_options_file_add_up(make_server, cert):
    srv = make_server(base_conf(f"""
    server {{
        listen 127.0.0.1:@PORT@ ssl;
        ssl_certificate {cert}/c.pem;
        ssl_certificate_key {cert}/k.pem;
        ssl_protocols TLSv1.3;
        ssl_session_cache shared:site:1m;
        include @PREFIX@/options-ssl.conf;
        location / {{ return 200 "$ssl_protocol\\n"; }}
    }}
"""), start=False)
    # The shape of the options file certbot writes and sites include.
    (srv.prefix / "options-ssl.conf").write_text(
        "ssl_session_cache shared:options_SSL:1m;\nssl_session_timeout 1440m;\n"
        "ssl_protocols TLSv1.2;\nssl_prefer_server_ciphers off;\n")
    srv.start()
    assert handshake(srv.port, "-tls1_3")
    assert handshake(srv.port, "-tls1_2"), "the second ssl_protocols line adds TLSv1.2"


def test_next_upstream_off_on_a_second_line_wins(make_server):
    # The first server refuses connections: with `error` the request goes
    # on to the second; with `off` added on a second line it does not.
    dead = harness.PortLease()
    try:
        srv = make_server(base_conf(f"""
    upstream retry {{
        server 127.0.0.1:{dead.port};
        server 127.0.0.1:@PORT1@;
    }}
    upstream once {{
        server 127.0.0.1:{dead.port};
        server 127.0.0.1:@PORT1@;
    }}
    server {{
        listen 127.0.0.1:@PORT1@;
        location / {{ return 200 "second\\n"; }}
    }}
    server {{
        listen 127.0.0.1:@PORT@;
        location /retry/ {{ proxy_pass http://retry; proxy_next_upstream error; proxy_next_upstream timeout; }}
        location /once/ {{ proxy_pass http://once; proxy_next_upstream error timeout; proxy_next_upstream off; }}
    }}
"""), nports=2)
        # Round robin: two requests each, so one of them starts on the dead server.
        retry = [http(srv.port, "/retry/").status for _ in range(2)]
        once = [http(srv.port, "/once/").status for _ in range(2)]
    finally:
        dead.release()
    assert retry == [200, 200]
    assert sorted(once) == [200, 502]


@pytest.mark.parametrize("lines", [
    "charset_types text/css; charset_types text/xml;",
    "gzip_proxied off; gzip_proxied any;",
    "location / { proxy_cache_use_stale off; proxy_cache_use_stale error; proxy_pass http://127.0.0.1:1; }",
    "location / { proxy_ignore_headers Expires; proxy_ignore_headers Set-Cookie; proxy_pass http://127.0.0.1:1; }",
    "location / { proxy_cache_methods GET; proxy_cache_methods HEAD; proxy_pass http://127.0.0.1:1; }",
])
def test_repeats_that_add_values_are_accepted(tmp_path, lines):
    (tmp_path / "logs").mkdir()
    c = tmp_path / "t.conf"
    c.write_text("events {}\nhttp {\n server { listen 127.0.0.1:1; %s }\n}\n" % lines)
    r = harness.cli(["-t", "-c", str(c)], prefix=tmp_path)
    assert r.returncode == 0, r.stderr


def test_other_repeats_stay_duplicate(tmp_path):
    (tmp_path / "logs").mkdir()
    c = tmp_path / "t.conf"
    c.write_text("events {}\nhttp {\n server { listen 127.0.0.1:1;\n root /a; root /b; }\n}\n")
    r = harness.cli(["-t", "-c", str(c)], prefix=tmp_path)
    assert r.returncode != 0
    assert '"root" directive is duplicate' in r.stderr
