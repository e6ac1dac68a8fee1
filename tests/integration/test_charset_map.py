"""ngx_http_charset_module's recoding: charset_map blocks (nginx's own
koi-utf, koi-win and win-utf files, included as shipped in
/etc/nginx), source_charset and override_charset, with the body recoded
over HTTP/1.1 and HTTP/2. Passes with TORII_BIN=/usr/sbin/nginx."""

import os
import subprocess

import pytest

import harness

MAPS = "/etc/nginx"
pytestmark = pytest.mark.skipif(not os.path.exists(f"{MAPS}/koi-utf"), reason="nginx's charset maps not installed")

TEXT = "Привет, мир"
KOI = TEXT.encode("koi8_r")
UTF = TEXT.encode("utf-8")
WIN = TEXT.encode("cp1251")


def conf(extra_http=""):
    return harness.base_conf(error_level="info", http=f"""
    include {MAPS}/koi-utf;
    include {MAPS}/koi-win;
    include {MAPS}/win-utf;
    map $arg_cs $picked_charset {{ default utf-8; w windows-1251; }}
    {extra_http}
    server {{
        listen 127.0.0.1:@PORT@;
        listen 127.0.0.1:@PORT2@ http2;
        server_name localhost;
        root @PREFIX@/www;
        location /koi/ {{ charset utf-8; source_charset koi8-r; }}
        location /utf/ {{ charset koi8-r; source_charset utf-8; }}
        location /win/ {{ charset windows-1251; source_charset koi8-r; }}
        location /same/ {{ charset koi8-r; source_charset koi8-r; }}
        location /picked/ {{ charset $picked_charset; source_charset koi8-r; }}
        location /up-nomap/ {{
            charset iso-8859-5;
            override_charset on;
            proxy_pass http://127.0.0.1:@PORT1@/;
        }}
        location /plain/ {{ charset utf-8; }}
        location /up/ {{
            charset utf-8;
            override_charset on;
            proxy_pass http://127.0.0.1:@PORT1@/;
        }}
        location /up-kept/ {{
            charset utf-8;
            proxy_pass http://127.0.0.1:@PORT1@/;
        }}
    }}
    server {{
        listen 127.0.0.1:@PORT1@;
        root @PREFIX@/www;
        charset koi8-r;
    }}
""")


@pytest.fixture
def srv(make_server):
    s = make_server(conf(), nports=3, start=False)
    www = s.prefix / "www"
    for d in ("koi", "utf", "win", "same", "plain", "picked"):
        (www / d).mkdir(parents=True, exist_ok=True)
    (www / "koi" / "page.html").write_bytes(KOI)
    (www / "koi" / "data.bin").write_bytes(KOI)  # not a charset_types type
    (www / "utf" / "page.html").write_bytes(UTF + " €☃".encode() + b" \xff.")
    (www / "win" / "page.html").write_bytes(KOI)
    (www / "same" / "page.html").write_bytes(KOI)
    (www / "picked" / "page.html").write_bytes(KOI)
    (www / "plain" / "page.html").write_bytes(UTF)
    (www / "page.html").write_bytes(KOI)  # the upstream's, served as koi8-r
    s.start()
    return s


def get(s, path):
    r = harness.http(s.port, path)
    assert r.status == 200, r
    return r


def test_koi8r_file_to_utf8(srv):
    r = get(srv, "/koi/page.html")
    assert r.body == UTF
    assert r.header("Content-Type") == "text/html; charset=utf-8"
    assert r.header("Content-Length") is None  # UTF-8 changes the length


def test_a_range_of_a_file_recoded_to_utf8_gets_the_whole_body(srv):
    # Recoding changes the length: the file's ranges do not apply (nginx
    # answers 200 with the whole recoded body).
    r = harness.http(srv.port, "/koi/page.html", headers={"Range": "bytes=0-2"})
    assert r.status == 200 and r.body == UTF, r
    assert r.header("Accept-Ranges") is None and r.header("Content-Range") is None


def test_utf8_file_to_koi8r_with_references_for_missing_characters(srv):
    r = get(srv, "/utf/page.html")
    # The euro sign is in nginx's koi-utf (0x80); the snowman is not: a
    # character reference. A sequence the body's end cuts short (0xFF
    # announces four bytes) is dropped, as nginx drops it.
    assert r.body == KOI + b" \x80&#9731; "
    assert r.header("Content-Type") == "text/html; charset=koi8-r"


def test_one_byte_to_one_byte_keeps_the_length(srv):
    r = get(srv, "/win/page.html")
    assert r.body == WIN
    assert r.header("Content-Type") == "text/html; charset=windows-1251"
    assert r.header("Content-Length") == str(len(WIN))


def test_charset_from_a_variable(srv):
    # The charset docs' `charset $charset;`, chosen per request by a map.
    r = get(srv, "/picked/page.html?cs=w")
    assert r.body == WIN and r.header("Content-Type") == "text/html; charset=windows-1251"
    r = get(srv, "/picked/page.html")
    assert r.body == UTF and r.header("Content-Type") == "text/html; charset=utf-8"


def test_same_charset_is_only_named(srv):
    r = get(srv, "/same/page.html")
    assert r.body == KOI and r.header("Content-Type") == "text/html; charset=koi8-r"


def test_no_map_for_what_the_upstream_declared_leaves_it_and_logs(srv):
    r = get(srv, "/up-nomap/page.html")
    assert r.body == KOI and r.header("Content-Type") == "text/html; charset=koi8-r"
    harness.wait_until(lambda: 'no "charset_map" between the charsets "koi8-r" and "iso-8859-5"'
                       in srv.error_log_text(), 5, what="the error line")


def test_a_type_outside_charset_types_is_left_alone(srv):
    r = get(srv, "/koi/data.bin")
    assert r.body == KOI and r.header("Content-Type") == "application/octet-stream"


def test_without_source_charset_only_the_name_is_added(srv):
    r = get(srv, "/plain/page.html")
    assert r.body == UTF and r.header("Content-Type") == "text/html; charset=utf-8"


def test_override_charset_recodes_what_the_upstream_declared(srv):
    r = get(srv, "/up/page.html")
    assert r.body == UTF
    assert r.header("Content-Type") == "text/html; charset=utf-8"


def test_without_override_the_upstream_charset_stays(srv):
    r = get(srv, "/up-kept/page.html")
    assert r.body == KOI
    assert r.header("Content-Type") == "text/html; charset=koi8-r"


def test_recoded_over_http2(srv):
    out = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-D", "-",
                          f"http://127.0.0.1:{srv.ports[2]}/koi/page.html"],
                         capture_output=True, timeout=20).stdout
    head, _, body = out.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/2 200")
    assert b"content-type: text/html; charset=utf-8" in head.lower()
    assert body == UTF


@pytest.mark.parametrize("block,message", [
    ("server { location / { charset iso-8859-5; source_charset koi8-r; } }",
     'no "charset_map" between the charsets "koi8-r" and "iso-8859-5"'),
    ("charset_map koi8-r koi8-r { }", '"charset_map" between the same charsets "koi8-r" and "koi8-r"'),
    ("charset_map utf-8 koi8-u { }", '"charset_map" with "utf-8" charset should be given in the second column'),
    ("charset_map koi8-r utf-8 { }", 'duplicate "charset_map" between "koi8-r" and "utf-8"'),
    ("charset_map koi8-u utf-8 { 1FF D0B0; }", 'invalid value "1FF"'),
    ("charset_map koi8-u utf-8 { C1 D0B0D0B0; }", 'invalid value "D0B0D0B0"'),
    ("charset_map koi8-u cp866 { C1 ZZ; }", 'invalid value "ZZ"'),
    ("charset_map koi8-u cp866 { C1 A0 A1; }", "invalid parameters number"),
])
def test_bad_maps(make_server, block, message):
    if harness.IS_NGINX and ("utf-8 koi8-u" in block or "D0B0D0B0" in block):
        pytest.skip("checks current nginx has and 1.22 had not")
    s = make_server(conf(block), nports=3, start=False)
    s.ports = [1, 2, 3]  # -t binds nothing
    s.write_conf()
    out = harness.cli(["-t", "-c", str(s.conf_path)], prefix=s.prefix)
    assert out.returncode != 0
    assert message in out.stdout + out.stderr, out.stdout + out.stderr
