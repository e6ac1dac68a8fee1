"""geoip2 (the ngx_http_geoip2_module and ngx_stream_geoip2_module that
Debian packages as libnginx-mod-http-geoip2 and -stream-geoip2) with small
MaxMind DB files written at test time by make_geoip2_test_db.pl (Debian's
libmaxmind-db-writer-perl): record paths printed per data type, default=,
source=, metadata, geoip2_proxy and geoip2_proxy_recursive, a map over a
country deciding a 403, the stream block, the load errors in the module's
words, and auto_reload picking up a replaced file.

The clients are 127.0.0.1, in no network of the files; a test names the
address to look up in X-Real-IP (realip from 127.0.0.1), in source=, or
in X-Forwarded-For from a trusted proxy.

Against Debian's nginx the same tests load its geoip2 modules."""

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

import harness
from harness import IS_NGINX, base_conf, cli, http

HTTP_MODULE = "/usr/lib/nginx/modules/ngx_http_geoip2_module.so"
STREAM_MODULE = "/usr/lib/nginx/modules/ngx_stream_module.so"
STREAM_GEOIP2_MODULE = "/usr/lib/nginx/modules/ngx_stream_geoip2_module.so"
MAKE_DB = Path(__file__).with_name("make_geoip2_test_db.pl")


def _has_writer():
    return subprocess.run(["perl", "-MMaxMind::DB::Writer::Tree", "-e", "1"],
                          capture_output=True).returncode == 0


pytestmark = [
    pytest.mark.skipif(not _has_writer(), reason="needs libmaxmind-db-writer-perl"),
    pytest.mark.skipif(IS_NGINX and not os.path.exists(HTTP_MODULE), reason="needs libnginx-mod-http-geoip2"),
]

needs_stream_geoip2 = pytest.mark.skipif(IS_NGINX and not os.path.exists(STREAM_GEOIP2_MODULE),
                                         reason="needs libnginx-mod-stream-geoip2")


def make_db(path, variant="1"):
    subprocess.run(["perl", str(MAKE_DB), str(path), variant], check=True)
    return path


def build_epoch(path):
    out = subprocess.run(["perl", "-MMaxMind::DB::Reader", "-e",
                          "print MaxMind::DB::Reader->new(file => $ARGV[0])->metadata->build_epoch", str(path)],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return make_db(tmp_path_factory.mktemp("geoip2db") / "test.mmdb")


def main_block(stream=False):
    if not IS_NGINX:
        return ""
    lines = [f"load_module {HTTP_MODULE};"]
    if stream:
        lines += [f"load_module {STREAM_MODULE};", f"load_module {STREAM_GEOIP2_MODULE};"]
    return "\n".join(lines) + "\n"


def conf(http_level, body, location="", stream="", error_level="notice"):
    server = f"""
    server {{
        listen 127.0.0.1:@PORT@;
        set_real_ip_from 127.0.0.1;
        real_ip_header X-Real-IP;
        location / {{ return 200 "{body}"; }}
        {location}
    }}
"""
    main = main_block(bool(stream))
    if stream:
        main += "stream {\n" + stream + "\n}\n"
    return base_conf(http_level + server, main=main, error_level=error_level)


def get(srv, ip=None, headers=None, path="/"):
    h = dict(headers or {})
    if ip is not None:
        h["X-Real-IP"] = ip
    r = http(srv.port, path, headers=h)
    assert r.status == 200, r
    return r.body.decode()


def config_test(make_server, text):
    """`-t` on a config (with leased ports: nginx binds them): (ok, output)."""
    s = make_server(text, start=False)
    s.leases = [harness.PortLease() for _ in range(2)]
    s.ports = [lease.port for lease in s.leases]
    s.write_conf()
    out = cli(["-t", "-c", str(s.conf_path)], prefix=s.prefix)
    return out.returncode == 0, out.stdout + out.stderr


# ---------------------------------------------------------------------------
# Record values

TYPES = ("$country|$name_en|$name_de|$city|$lat|$population|$eu|$radius|$offset|$ratio|$big|$raw|"
         "$subdivision|$continent")


def types_block(path):
    return f"""geoip2 {path} {{
        $country country iso_code;
        $name_en country names en;
        $name_de country names de;
        $city city names de;
        $lat location latitude;
        $population city population;
        $eu country is_in_european_union;
        $radius location accuracy_radius;
        $offset location offset;
        $ratio location ratio;
        $big big;
        $raw raw;
        $subdivision subdivisions 0 iso_code;
        $continent continent;
    }}"""


@pytest.fixture(scope="module")
def types_srv(db, tmp_path_factory):
    srv = harness.Server(conf(types_block(db), TYPES), tmp_path_factory.mktemp("geoip2types"))
    srv.start()
    yield srv
    srv.stop()


@pytest.mark.parametrize("ip,expected", [
    # Strings, a double and a float with five decimals, uint32, boolean,
    # uint16, int32, uint64, bytes, an array index; a map ($continent) has
    # no printed form.
    ("198.51.100.7", "DE|Germany|Deutschland|Berlin|52.51670|3644826|1|50|-42|1.50000|18446744073709551615|"
                     "abc|BE|"),
    ("203.0.113.9", "US|United States|Vereinigte Staaten||-33.86785||0|||||||"),
    ("192.0.2.1", "FR|France|Frankreich||||1|||||||"),
    # The IPv6 network, and an IPv4-mapped address (the file aliases
    # ::ffff:0:0/96 to its IPv4 part).
    ("2001:db8::1", "NL|Netherlands|Niederlande||||1|||||||"),
    ("::ffff:198.51.100.7", "DE|Germany|Deutschland|Berlin|52.51670|3644826|1|50|-42|1.50000|18446744073709551615|"
                            "abc|BE|"),
])
def test_values_by_type(types_srv, ip, expected):
    assert get(types_srv, ip) == expected


def test_unknown_address_is_empty(types_srv):
    assert get(types_srv) == "|" * 13  # 127.0.0.1 itself
    assert get(types_srv, "10.1.2.3") == "|" * 13
    assert get(types_srv, "2001:db9::1") == "|" * 13


def test_uint128_in_hex(make_server, db, nginx_only_skip):
    # torii-only: the module prints "0x" and 32 hex digits into a buffer
    # sized for a 64-bit number, so nginx's value is overwritten by what
    # the request allocates next; torii prints the whole number.
    srv = make_server(conf(f"geoip2 {db} {{ $huge huge; $city city names en; }}", "$huge|$city"))
    assert get(srv, "198.51.100.7") == "0x0102030405060708090a0b0c0d0e0f10|Berlin"


def test_in_a_header_and_the_log(make_server, db):
    srv = make_server(conf(f"""geoip2 {db} {{ $country country iso_code; $city city names en; }}
    log_format geo "$remote_addr $country $city";
    access_log @PREFIX@/logs/geo.log geo;""", "ok", location="add_header X-Country $country always;"))
    r = http(srv.port, "/", headers={"X-Real-IP": "198.51.100.7"})
    assert r.status == 200 and r.header("X-Country") == "DE"
    r = http(srv.port, "/")
    assert r.status == 200 and r.header("X-Country") is None  # empty: add_header leaves it out
    log = srv.prefix / "logs" / "geo.log"
    harness.wait_until(lambda: log.exists() and len(log.read_text().splitlines()) >= 2, 10, what="two log lines")
    # Not found is "-" in the log.
    assert log.read_text().splitlines()[:2] == ["198.51.100.7 DE Berlin", "127.0.0.1 - -"]


def test_default(make_server, db):
    srv = make_server(conf(f"""geoip2 {db} {{
        $country default=ZZ country iso_code;
        $city default=nowhere city names en;
        $pair default=a=b country iso_code;
    }}""", "$country|$city|$pair"))
    assert get(srv, "198.51.100.7") == "DE|Berlin|DE"
    assert get(srv, "192.0.2.1") == "FR|nowhere|FR"  # a path the record lacks
    assert get(srv) == "ZZ|nowhere|a=b"  # an address in no network


def test_source(make_server, db):
    srv = make_server(conf(f"""geoip2 {db} {{
        $by_arg default=none source=$arg_ip country iso_code;
        $by_header source=$http_x_client country names en;
        $client country iso_code;
    }}""", "$by_arg|$by_header|$client"))
    assert get(srv, path="/?ip=198.51.100.7") == "DE||"
    assert get(srv, path="/?ip=2001:db8::5", headers={"X-Client": "203.0.113.1"}) == "NL|United States|"
    # Not an address: a miss (the default), never the client's.
    assert get(srv, "192.0.2.1", path="/?ip=bogus") == "none||FR"
    assert get(srv, "192.0.2.1", path="/?ip=[2001:db8::5]") == "none||FR"
    assert get(srv, "192.0.2.1", path="/?ip=198.51.100.7:80") == "none||FR"


def test_metadata(make_server, db):
    started = int(time.time())
    srv = make_server(conf(f"""geoip2 {db} {{
        $epoch metadata build_epoch;
        $check metadata last_check;
        $change metadata last_change;
        $other metadata languages;
    }}""", "$epoch|$check|$change|$other"))
    epoch, check, change, other = get(srv).split("|")
    assert epoch == build_epoch(db)
    # Without auto_reload both are when the config was loaded.
    assert started - 1 <= int(check) <= time.time() + 1
    assert change == check
    assert other == ""


# ---------------------------------------------------------------------------
# geoip2_proxy


def proxy_conf(db, recursive):
    return conf(f"""geoip2 {db} {{ $country country iso_code; }}
    geoip2_proxy 127.0.0.1;
    geoip2_proxy 203.0.113.0/24;
    geoip2_proxy_recursive {recursive};""", "$country")


def test_proxy_takes_x_forwarded_for(make_server, db):
    srv = make_server(proxy_conf(db, "off"))
    # The peer (127.0.0.1) is trusted: the last address of X-Forwarded-For.
    assert get(srv, headers={"X-Forwarded-For": "198.51.100.7, 203.0.113.9"}) == "US"
    assert get(srv, headers={"X-Forwarded-For": "192.0.2.1"}) == "FR"
    # Without the header, or with garbage in it, the peer is looked up.
    assert get(srv) == ""
    assert get(srv, headers={"X-Forwarded-For": "not-an-address"}) == ""
    # realip first: a client named by X-Real-IP that is not trusted stays.
    assert get(srv, "198.51.100.7", headers={"X-Forwarded-For": "192.0.2.1"}) == "DE"
    # A trusted one hands over to X-Forwarded-For.
    assert get(srv, "203.0.113.9", headers={"X-Forwarded-For": "192.0.2.1"}) == "FR"


def test_proxy_recursive(make_server, db):
    srv = make_server(proxy_conf(db, "on"))
    # 203.0.113.9 is trusted too, so the walk goes on to 198.51.100.7.
    assert get(srv, headers={"X-Forwarded-For": "198.51.100.7, 203.0.113.9"}) == "DE"
    assert get(srv, headers={"X-Forwarded-For": "192.0.2.1, 198.51.100.7, 203.0.113.9"}) == "DE"
    assert get(srv, headers={"X-Forwarded-For": "203.0.113.8, 203.0.113.9"}) == "US"


def test_proxy_is_not_used_with_source(make_server, db):
    srv = make_server(conf(f"""geoip2 {db} {{ $country source=$arg_ip country iso_code; }}
    geoip2_proxy 127.0.0.1;""", "$country"))
    assert get(srv, path="/?ip=192.0.2.1", headers={"X-Forwarded-For": "198.51.100.7"}) == "FR"


# ---------------------------------------------------------------------------
# The common use: a map over the country code


def test_map_over_country_decides_403(make_server, db):
    srv = make_server(base_conf(f"""geoip2 {db} {{
        $geoip2_data_country_code default=XX country iso_code;
    }}
    map $geoip2_data_country_code $allowed_country {{
        default no;
        DE yes;
        NL yes;
    }}
    server {{
        listen 127.0.0.1:@PORT@;
        set_real_ip_from 127.0.0.1;
        real_ip_header X-Real-IP;
        location / {{
            if ($allowed_country = no) {{ return 403; }}
            return 200 "welcome from $geoip2_data_country_code";
        }}
    }}""", main=main_block()))
    r = http(srv.port, "/", headers={"X-Real-IP": "198.51.100.7"})
    assert (r.status, r.body) == (200, b"welcome from DE")
    assert http(srv.port, "/", headers={"X-Real-IP": "2001:db8::1"}).status == 200
    assert http(srv.port, "/", headers={"X-Real-IP": "203.0.113.9"}).status == 403
    assert http(srv.port, "/").status == 403  # XX, the default


def test_variables_read_before_the_block(make_server, db):
    # A log_format above the geoip2 block may name its variables, as in nginx.
    srv = make_server(conf(f"""log_format early "$early";
    access_log @PREFIX@/logs/early.log early;
    geoip2 {db} {{ $early country iso_code; }}""", "$early"))
    assert get(srv, "192.0.2.1") == "FR"
    log = srv.prefix / "logs" / "early.log"
    harness.wait_until(lambda: log.exists() and log.read_text().strip() == "FR", 10, what="the log line")


def test_set_overrides_the_variable(make_server, db):
    srv = make_server(conf(f"geoip2 {db} {{ $country country iso_code; }}", "$country",
                           location='location /set { set $country override; return 200 "$country"; }'))
    assert get(srv, "192.0.2.1") == "FR"
    assert get(srv, "192.0.2.1", path="/set") == "override"


# ---------------------------------------------------------------------------
# stream


def stream_reply(port):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
    return data.decode()


@needs_stream_geoip2
def test_stream_variables(make_server, db):
    stream = f"""
    geoip2 {db} {{
        $s_client default=none country iso_code;
        $s_by_set source=$lookup country names de;
        $s_epoch metadata build_epoch;
        $s_lat source=$lookup location latitude;
    }}
    server {{
        listen 127.0.0.1:@PORT1@;
        set $lookup 198.51.100.7;
        return "[$s_client|$s_by_set|$s_epoch|$s_lat]";
    }}"""
    srv = make_server(conf("", "ok", stream=stream), nports=2)
    assert stream_reply(srv.ports[1]) == f"[none|Deutschland|{build_epoch(db)}|52.51670]"


@needs_stream_geoip2
def test_stream_load_errors(make_server, db):
    ok, out = config_test(make_server, conf("", "ok", stream="geoip2 /nonexistent/x.mmdb { $a country iso_code; }"))
    assert not ok
    assert 'MMDB_open("/nonexistent/x.mmdb") failed - Error opening the specified MaxMind DB file' in out
    ok, out = config_test(make_server, conf("", "ok", stream=f"geoip2 {db} {{ }}\ngeoip2 {db} {{ }}"))
    assert not ok
    assert f"Duplicate GeoIP2 mmdb - {db}" in out


# ---------------------------------------------------------------------------
# Load errors (the module's wording)


@pytest.mark.parametrize("block,message", [
    ("geoip2 /nonexistent/x.mmdb { $a country iso_code; }",
     'MMDB_open("/nonexistent/x.mmdb") failed - Error opening the specified MaxMind DB file'),
    ("geoip2 @DB@ { $a country; }\n    geoip2 @DB@ { $b country; }", "Duplicate GeoIP2 mmdb - @DB@"),
    ("geoip2 @DB@ { bogus; }", 'invalid setting "bogus"'),
    ("geoip2 @DB@ { $a foo=bar country iso_code; }", 'invalid setting "foo=bar" for "$a"'),
    ("geoip2 @DB@ { $a default= country iso_code; }", 'invalid setting "default=" for "$a"'),
    ("geoip2 @DB@ { $a default=x default=y country iso_code; }", 'default has already been declared for  "$a"'),
    ("geoip2 @DB@ { $a source=$arg_a source=$arg_b country iso_code; }",
     'source has already been declared for  "$a"'),
    ("geoip2 @DB@ { $a source=arg_ip country iso_code; }", 'invalid source variable name "arg_ip"'),
    ("geoip2 @DB@ { $a source=$no_such_thing country iso_code; }", 'unknown "no_such_thing" variable'),
    ("geoip2 @DB@ { auto_reload; }", "invalid number of arguments for auto_reload"),
    ("geoip2 @DB@;", 'directive "geoip2" has no opening "{"'),
    ("geoip2_proxy 10.0.0.0/33;", 'invalid network "10.0.0.0/33"'),
    ("geoip2_proxy_recursive yes;", 'it must be "on" or "off"'),
    ("server { listen 127.0.0.1:@PORT1@; geoip2 @DB@ { } }", '"geoip2" directive is not allowed here'),
])
def test_load_errors(make_server, db, block, message):
    ok, out = config_test(make_server, conf(block.replace("@DB@", str(db)), "ok"))
    assert not ok, out
    assert message.replace("@DB@", str(db)) in out


@pytest.mark.parametrize("interval", ["soon", "500ms"])
def test_bad_auto_reload_interval(make_server, db, interval, nginx_only_skip):
    # torii-only: Debian's module (3.4) takes nginx -t down with a
    # segmentation fault on these lines; torii says what the module means to.
    ok, out = config_test(make_server, conf(f"geoip2 {db} {{ auto_reload {interval}; }}", "ok"))
    assert not ok
    assert f'invalid interval for auto_reload "{interval}"' in out


def test_not_a_database(make_server, tmp_path):
    junk = tmp_path / "junk.mmdb"
    junk.write_bytes(b"\0" * 64)
    ok, out = config_test(make_server, conf(f"geoip2 {junk} {{ $a country iso_code; }}", "ok"))
    assert not ok
    assert f'MMDB_open("{junk}") failed - ' in out


def test_relative_path_is_under_the_prefix(make_server, db):
    srv = make_server(conf("geoip2 data/test.mmdb { $country country iso_code; }", "$country"), start=False)
    (srv.prefix / "data").mkdir()
    shutil.copy(db, srv.prefix / "data" / "test.mmdb")
    srv.start()
    assert get(srv, "198.51.100.7") == "DE"


def test_load_module_lines_are_quiet(make_server, db):
    # Debian's lines for the modules (torii has them built in).
    main = ("load_module modules/ngx_http_geoip2_module.so;\n"
            "load_module modules/ngx_stream_module.so;\n"
            "load_module modules/ngx_stream_geoip2_module.so;\n")
    text = base_conf(f"geoip2 {db} {{ $a country iso_code; }}", main=main)
    s = make_server(text, start=False)
    s.write_conf()
    out = cli(["-t", "-c", str(s.conf_path)], prefix="/usr/share/nginx" if IS_NGINX else s.prefix)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "ignored" not in out.stdout + out.stderr and "warn" not in out.stdout + out.stderr


# ---------------------------------------------------------------------------
# auto_reload


def replace_file(path, make, ahead=3):
    """Writes the new file beside and renames it over `path` (as a
    database updater does), dated ahead so that its time is newer than the
    load's at whole-second precision."""
    tmp = path.with_name(path.name + ".new")
    make(tmp)
    future = time.time() + ahead
    os.utime(tmp, (future, future))
    os.replace(tmp, path)


def test_auto_reload_picks_up_a_replaced_file(make_server):
    srv = make_server(conf("""geoip2 @PREFIX@/live.mmdb {
        auto_reload 1s;
        $country country iso_code;
        $city city names de;
        $change metadata last_change;
    }""", "$country|$city|$change", error_level="info"), start=False)
    live = srv.prefix / "live.mmdb"
    make_db(live)
    srv.start()
    assert get(srv, "198.51.100.7").startswith("DE|Berlin|")
    replace_file(live, lambda p: make_db(p, "2"))
    mtime = int(os.stat(live).st_mtime)
    # The check runs once a request is over, at most once a second.
    harness.wait_until(lambda: get(srv, "198.51.100.7") == f"AT|Wien|{mtime}", 15, what="the new file")
    assert get(srv, "192.0.2.1").startswith("FR||")
    assert f'Reload MMDB "{live}"' in srv.error_log_text() + srv.output()
    # A file that does not open is logged, and the one in use kept.
    replace_file(live, lambda p: p.write_bytes(b"not a database" * 10), ahead=6)
    harness.wait_until(lambda: get(srv) is not None and "failed to reload" in srv.error_log_text() + srv.output(),
                       15, what="the failed reload")
    for _ in range(5):
        assert get(srv, "198.51.100.7") == f"AT|Wien|{mtime}"
    assert srv.alive()


def test_without_auto_reload_the_file_stays(make_server):
    srv = make_server(conf("geoip2 @PREFIX@/live.mmdb { $country country iso_code; }", "$country"), start=False)
    live = srv.prefix / "live.mmdb"
    make_db(live)
    srv.start()
    assert get(srv, "198.51.100.7") == "DE"
    replace_file(live, lambda p: make_db(p, "2"))
    time.sleep(1.5)
    for _ in range(3):
        assert get(srv, "198.51.100.7") == "DE"
