"""geoip (nginx's ngx_http_geoip_module and ngx_stream_geoip_module) with
Debian's country databases (package geoip-database): $geoip_country_* for
addresses set through realip (X-Real-IP from 127.0.0.1), IPv4 and IPv6
databases, geoip_proxy/geoip_proxy_recursive, the utf8 parameter, the
load errors in nginx's words, and the stream block. Debian ships no city
or org database, so for those only the load errors are checked (the
country database is of the wrong type for them).

Against Debian's nginx the same tests load its geoip modules
(libnginx-mod-http-geoip, libnginx-mod-stream-geoip)."""

import os
import socket

import pytest

import harness
from harness import IS_NGINX, base_conf, cli, http

V4 = "/usr/share/GeoIP/GeoIP.dat"
V6 = "/usr/share/GeoIP/GeoIPv6.dat"
HTTP_MODULE = "/usr/lib/nginx/modules/ngx_http_geoip_module.so"
STREAM_MODULE = "/usr/lib/nginx/modules/ngx_stream_module.so"
STREAM_GEOIP_MODULE = "/usr/lib/nginx/modules/ngx_stream_geoip_module.so"

pytestmark = [
    pytest.mark.skipif(not (os.path.exists(V4) and os.path.exists(V6)), reason="needs Debian's geoip-database"),
    pytest.mark.skipif(IS_NGINX and not os.path.exists(HTTP_MODULE), reason="needs libnginx-mod-http-geoip"),
]

VARS = "$geoip_country_code|$geoip_country_code3|$geoip_country_name"


def main_block(stream=False):
    if not IS_NGINX:
        return ""
    lines = [f"load_module {HTTP_MODULE};"]
    if stream:
        lines += [f"load_module {STREAM_MODULE};", f"load_module {STREAM_GEOIP_MODULE};"]
    return "\n".join(lines) + "\n"


def conf(http_level, location="", stream=""):
    server = f"""
    server {{
        listen 127.0.0.1:@PORT@;
        set_real_ip_from 127.0.0.1;
        real_ip_header X-Real-IP;
        location / {{ return 200 "{VARS}"; }}
        {location}
    }}
"""
    main = main_block(bool(stream))
    if stream:
        main += "stream {\n" + stream + "\n}\n"
    return base_conf(http_level + server, main=main)


def values(srv, ip=None, headers=None, path="/"):
    h = dict(headers or {})
    if ip is not None:
        h["X-Real-IP"] = ip
    r = http(srv.port, path, headers=h)
    assert r.status == 200, r
    return r.body.split(b"|")


def config_test(make_server, text):
    """`-t` on a config (with leased ports: nginx binds them): (ok, output)."""
    s = make_server(text, start=False)
    s.leases = [harness.PortLease() for _ in range(2)]
    s.ports = [lease.port for lease in s.leases]
    s.write_conf()
    out = cli(["-t", "-c", str(s.conf_path)], prefix=s.prefix)
    return out.returncode == 0, out.stdout + out.stderr


def check(make_server, http_level, stream=""):
    return config_test(make_server, conf(http_level, stream=stream))


@pytest.fixture(scope="module")
def v4(tmp_path_factory):
    srv = harness.Server(conf(f"geoip_country {V4};"), tmp_path_factory.mktemp("geoip4"))
    srv.start()
    yield srv
    srv.stop()


@pytest.mark.parametrize("ip,expected", [
    ("8.8.8.8", [b"US", b"USA", b"United States"]),
    ("1.1.1.1", [b"AU", b"AUS", b"Australia"]),
    ("193.0.6.139", [b"NL", b"NLD", b"Netherlands"]),
    ("::ffff:193.0.6.139", [b"NL", b"NLD", b"Netherlands"]),  # IPv4-mapped: looked up as IPv4
    ("190.185.37.205", [b"CW", b"CUW", b"Curacao"]),  # ASCII without `utf8`
])
def test_country_of_known_addresses(v4, ip, expected):
    assert values(v4, ip) == expected


def test_unknown_address_has_no_value(v4):
    # 127.0.0.1 (the peer itself, no X-Real-IP) is in no country.
    assert values(v4) == [b"", b"", b""]
    assert values(v4, "10.1.2.3") == [b"", b"", b""]


def test_ipv6_client_in_ipv4_database_has_no_value(v4):
    # nginx looks an IPv6 client up as 255.255.255.255 in an IPv4 database.
    assert values(v4, "2001:4860:4860::8888") == [b"", b"", b""]


def test_not_found_is_a_dash_in_the_log(make_server):
    srv = make_server(conf(f"""geoip_country {V4};
    log_format geo "$remote_addr $geoip_country_code $geoip_country_code3 $geoip_city $geoip_org";
    access_log @PREFIX@/logs/geo.log geo;"""))
    values(srv, "8.8.8.8")
    values(srv)
    log = srv.prefix / "logs" / "geo.log"
    harness.wait_until(lambda: log.exists() and len(log.read_text().splitlines()) >= 2, 10, what="two log lines")
    assert log.read_text().splitlines()[:2] == ["8.8.8.8 US USA - -", "127.0.0.1 - - - -"]


def test_variables_without_a_database_are_empty(make_server):
    # The variables exist whether or not a database is configured.
    srv = make_server(conf("", location='location /all { return 200 "$geoip_org|$geoip_city|$geoip_region|'
                                          '$geoip_region_name|$geoip_latitude|$geoip_area_code|$geoip_dma_code|'
                                          '$geoip_city_country_name|$geoip_postal_code"; }'))
    assert values(srv, "8.8.8.8") == [b"", b"", b""]
    assert values(srv, "8.8.8.8", path="/all") == [b""] * 9


def test_utf8_parameter(make_server):
    srv = make_server(conf(f"geoip_country {V4} utf8;"))
    assert values(srv, "190.185.37.205") == [b"CW", b"CUW", "Curaçao".encode()]
    assert values(srv, "8.8.8.8") == [b"US", b"USA", b"United States"]


def test_ipv6_database(make_server):
    srv = make_server(conf(f"geoip_country {V6};"))
    assert values(srv, "2001:4860:4860::8888") == [b"US", b"USA", b"United States"]
    assert values(srv, "2a00:1450:4001:80b::200e") == [b"DE", b"DEU", b"Germany"]
    assert values(srv, "::1") == [b"", b"", b""]
    # An IPv4 client is looked up as ::ffff:a.b.c.d.
    assert values(srv, "193.0.6.139") == [b"NL", b"NLD", b"Netherlands"]
    assert values(srv) == [b"", b"", b""]


def test_geoip_proxy_takes_x_forwarded_for(make_server):
    srv = make_server(conf(f"""geoip_country {V4};
    geoip_proxy 127.0.0.1;
    geoip_proxy 1.1.1.0/24;"""))
    # The peer (127.0.0.1) is trusted: the last address of X-Forwarded-For.
    assert values(srv, headers={"X-Forwarded-For": "8.8.8.8, 1.1.1.1"})[0] == b"AU"
    assert values(srv, headers={"X-Forwarded-For": "193.0.6.139"})[0] == b"NL"
    # Without the header, or with garbage in it, the peer is looked up.
    assert values(srv)[0] == b""
    assert values(srv, headers={"X-Forwarded-For": "not-an-address"})[0] == b""
    # realip first: a client named by X-Real-IP is not a trusted proxy.
    assert values(srv, "8.8.8.8", headers={"X-Forwarded-For": "1.1.1.1"})[0] == b"US"
    # The trusted realip client 1.1.1.1 hands over to X-Forwarded-For.
    assert values(srv, "1.1.1.1", headers={"X-Forwarded-For": "193.0.6.139"})[0] == b"NL"


def test_geoip_proxy_recursive(make_server):
    srv = make_server(conf(f"""geoip_country {V4};
    geoip_proxy 127.0.0.1;
    geoip_proxy 1.1.1.0/24;
    geoip_proxy_recursive on;"""))
    # 1.1.1.1 is trusted too, so the walk goes on to 8.8.8.8.
    assert values(srv, headers={"X-Forwarded-For": "8.8.8.8, 1.1.1.1"})[0] == b"US"
    assert values(srv, headers={"X-Forwarded-For": "193.0.6.139, 8.8.8.8, 1.1.1.1"})[0] == b"US"


def test_ipv6_database_with_proxy(make_server):
    srv = make_server(conf(f"""geoip_country {V6};
    geoip_proxy 127.0.0.1;"""))
    assert values(srv, headers={"X-Forwarded-For": "2001:4860:4860::8888"})[0] == b"US"


# ---------------------------------------------------------------------------
# Load errors (nginx's wording)


@pytest.mark.parametrize("http_level,message", [
    ("geoip_country /nonexistent/GeoIP.dat;", 'GeoIP_open("/nonexistent/GeoIP.dat") failed'),
    (f"geoip_city {V4};", f'invalid GeoIP City database "{V4}" type:1'),
    (f"geoip_org {V4};", f'invalid GeoIP database "{V4}" type:1'),
    (f"geoip_country {V4} latin1;", 'invalid parameter "latin1"'),
    (f"geoip_country {V4};\n    geoip_country {V6};", '"geoip_country" directive is duplicate'),
    (f"geoip_country {V4} utf8 extra;", 'invalid number of arguments in "geoip_country" directive'),
    ("geoip_proxy_recursive yes;", 'it must be "on" or "off"'),
    ("server { listen 127.0.0.1:@PORT1@; set $geoip_country_code x; }",
     'the duplicate "geoip_country_code" variable'),
])
def test_load_errors(make_server, http_level, message):
    ok, out = check(make_server, http_level)
    assert not ok
    assert message in out


def test_a_file_that_is_no_database(make_server, tmp_path):
    # libGeoIP takes a file without a database's trailer for a country
    # edition: nginx then accepts it for geoip_country (whose lookups find
    # nothing) and refuses it for geoip_city.
    junk = tmp_path / "junk.dat"
    junk.write_bytes(b"\0" * 64)
    ok, out = check(make_server, f"geoip_city {junk};")
    assert not ok
    assert f'invalid GeoIP City database "{junk}" type:1' in out
    srv = make_server(conf(f"geoip_country {junk};"))
    assert values(srv, "8.8.8.8") == [b"", b"", b""]


def test_bad_proxy(make_server):
    ok, out = check(make_server, "geoip_proxy 10.0.0.0/33;")
    assert not ok
    assert 'invalid network "10.0.0.0/33"' in out
    ok, out = check(make_server, "geoip_proxy 10.0.0.1/8;")
    assert ok, out
    assert "low address bits of 10.0.0.1/8 are meaningless" in out


def test_http_level_only(make_server):
    ok, out = config_test(make_server, base_conf(f"server {{ listen 127.0.0.1:@PORT@; geoip_country {V4}; }}",
                                                 main=main_block()))
    assert not ok
    assert '"geoip_country" directive is not allowed here' in out


# ---------------------------------------------------------------------------
# stream


needs_stream_geoip = pytest.mark.skipif(IS_NGINX and not os.path.exists(STREAM_GEOIP_MODULE),
                                        reason="needs libnginx-mod-stream-geoip")


@needs_stream_geoip
def test_stream_variables(make_server):
    # The stream client is 127.0.0.1 (no realip here), in no country; the
    # lookups themselves are the unit tests' (tests/unit/geoip_test.cc).
    stream = f"""
    geoip_country {V4};
    server {{
        listen 127.0.0.1:@PORT1@;
        return "[$geoip_country_code|$geoip_country_name|$geoip_city|$remote_addr]";
    }}"""
    srv = make_server(conf("", stream=stream), nports=2)
    with socket.create_connection(("127.0.0.1", srv.ports[1]), timeout=10) as s:
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    assert data == b"[|||127.0.0.1]"


@needs_stream_geoip
def test_stream_load_errors(make_server):
    ok, out = check(make_server, "", stream="geoip_country /nonexistent/GeoIP.dat;")
    assert not ok
    assert 'GeoIP_open("/nonexistent/GeoIP.dat") failed' in out
    ok, out = check(make_server, "", stream=f"geoip_city {V4};")
    assert not ok
    assert f'invalid GeoIP City database "{V4}" type:1' in out
    ok, out = check(make_server, "", stream=f"geoip_country {V4};\ngeoip_country {V4};")
    assert not ok
    assert '"geoip_country" directive is duplicate' in out
    ok, out = check(make_server, "", stream=f"server {{ listen 127.0.0.1:@PORT1@; geoip_country {V4}; return x; }}")
    assert not ok
    assert '"geoip_country" directive is not allowed here' in out


def test_reload_opens_the_new_database(make_server):
    srv = make_server(conf(f"geoip_country {V4};"))
    assert values(srv, "2001:4860:4860::8888")[0] == b""
    srv.reload(conf(f"geoip_country {V6};"))
    # Several answers in a row: nginx's old workers may take a last one.
    harness.wait_until(lambda: all(values(srv, "2001:4860:4860::8888")[0] == b"US" for _ in range(5)), 15,
                       what="the IPv6 database")
    assert values(srv, "193.0.6.139")[0] == b"NL"
    # A reload that fails keeps the running database.
    srv.reload(conf("geoip_country /nonexistent/GeoIP.dat;"))
    harness.wait_until(lambda: "GeoIP_open" in srv.error_log_text() + srv.output(), 15, what="the failed reload")
    assert values(srv, "2001:4860:4860::8888")[0] == b"US"
