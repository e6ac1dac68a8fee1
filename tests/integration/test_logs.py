"""Access and error logs: combined format, custom log_format with variables,
escape=json, access_log off, error_log lines, and reopening on SIGUSR1."""

import json
import re
import signal
import subprocess

import pytest

import harness
from harness import base_conf, http, wait_until

CONF = r"""
    log_format custom '$remote_addr|$request_method|$uri|$args|$status|$body_bytes_sent|$http_x_custom|$host|$server_port|$request_time|$request';
    log_format raw escape=none 'N "$http_x_t" "$http_x_none"';
    log_format js escape=json '{"ua":"$http_user_agent","uri":"$request_uri","status":$status}';

    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        root @PREFIX@/www;

        location /custom/ {
            access_log @PREFIX@/logs/custom.log custom;
            return 200 "custom";
        }
        location /json/ {
            access_log @PREFIX@/logs/json.log js;
            return 200 "json";
        }
        location /raw/ {
            access_log @PREFIX@/logs/raw.log raw;
            return 200 "raw";
        }
        location /off/ {
            access_log off;
            return 200 "off";
        }
    }
"""


def lines_of(path):
    try:
        return path.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return []


def wait_line(path, pattern, timeout=10):
    """Waits until a line of `path` matches `pattern`; returns the match."""
    regex = re.compile(pattern)

    def find():
        for line in lines_of(path):
            m = regex.search(line)
            if m:
                return m
        return None
    return wait_until(find, timeout, what=f"a line matching {pattern!r} in {path}")


@pytest.fixture
def srv(make_server):
    server = make_server(base_conf(CONF), start=False)
    (server.prefix / "www").mkdir()
    (server.prefix / "www" / "x.txt").write_text("hello log\n")
    return server.start()


def test_combined_format(srv):
    r = http(srv.port, "/x.txt?q=1", {"Referer": "http://ref.example/page", "User-Agent": "UA-test/1.0"})
    assert r.status == 200
    pattern = (r'^127\.0\.0\.1 - - \[\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4}\] '
               r'"GET /x\.txt\?q=1 HTTP/1\.1" 200 (\d+) "http://ref\.example/page" "UA-test/1\.0"$')
    m = wait_line(srv.access_log, pattern)
    assert int(m.group(1)) == len(b"hello log\n")


def test_combined_format_dashes_for_missing(srv):
    http(srv.port, "/missing.txt", {"User-Agent": ""})
    wait_line(srv.access_log, r'"GET /missing\.txt HTTP/1\.1" 404 \d+ "-" "[^"]*"$')


def test_custom_format(srv):
    r = http(srv.port, "/custom/p?a=1&b=2", {"X-Custom": "hdr-val"}, host="example.test")
    assert r.status == 200
    m = wait_line(srv.prefix / "logs" / "custom.log", r"^127\.0\.0\.1\|GET\|/custom/p\|")
    fields = lines_of(srv.prefix / "logs" / "custom.log")[-1].split("|")
    assert fields[:9] == ["127.0.0.1", "GET", "/custom/p", "a=1&b=2", "200", "6",
                          "hdr-val", "example.test", str(srv.port)]
    assert re.fullmatch(r"\d+\.\d{3}", fields[9]), fields[9]
    assert fields[10] == "GET /custom/p?a=1&b=2 HTTP/1.1"
    assert m


def test_custom_format_missing_variable_is_dash(srv):
    http(srv.port, "/custom/q")
    m = wait_line(srv.prefix / "logs" / "custom.log", r"^127\.0\.0\.1\|GET\|/custom/q\|(.*)$")
    fields = m.group(1).split("|")
    # nginx writes "-" for an empty or missing value in an access log.
    assert fields[0] == "-"  # $args empty
    assert fields[3] == "-"  # $http_x_custom absent


def test_json_escape(srv):
    ua = 'agent "quoted" back\\slash'
    r = http(srv.port, "/json/a%22b?x=%22y", {"User-Agent": ua})
    assert r.status == 200
    wait_line(srv.prefix / "logs" / "json.log", r"/json/")
    line = lines_of(srv.prefix / "logs" / "json.log")[-1]
    record = json.loads(line)
    assert record == {"ua": ua, "uri": "/json/a%22b?x=%22y", "status": 200}


def test_json_escape_control_characters(srv):
    http(srv.port, "/json/ctl", {"User-Agent": "tab\there"})
    wait_line(srv.prefix / "logs" / "json.log", r"/json/ctl")
    record = json.loads(lines_of(srv.prefix / "logs" / "json.log")[-1])
    assert record["ua"] == "tab\there"


def test_escape_none_writes_values_as_they_are(srv):
    # No escaping at all, and nothing (not "-") for a missing value.
    http(srv.port, "/raw/", headers={"X-T": 'a"b\\c'})
    log = srv.prefix / "logs" / "raw.log"
    wait_line(log, "^N ")
    assert lines_of(log) == ['N "a"b\\c" ""']


def test_access_log_off(srv):
    assert http(srv.port, "/off/1").body == b"off"
    assert http(srv.port, "/x.txt?after-off").status == 200
    wait_line(srv.access_log, r"after-off")
    assert not any("/off/" in line for line in lines_of(srv.access_log))
    # ...and the other locations' logs did not get it either.
    for other in ("custom.log", "json.log"):
        assert not any("/off/" in line for line in lines_of(srv.prefix / "logs" / other))


def test_location_log_replaces_inherited(srv):
    http(srv.port, "/custom/only-here")
    wait_line(srv.prefix / "logs" / "custom.log", r"/custom/only-here")
    http(srv.port, "/x.txt?marker2")
    wait_line(srv.access_log, r"marker2")
    assert not any("only-here" in line for line in lines_of(srv.access_log))


def test_error_log_open_failed(srv):
    r = http(srv.port, "/does-not-exist.txt")
    assert r.status == 404
    m = wait_line(srv.error_log, r'\[error\].*open\(\) "([^"]*does-not-exist\.txt)" failed \(2: No such file or directory\)')
    assert m.group(1) == str(srv.prefix / "www" / "does-not-exist.txt")


def test_sigusr1_reopens_logs(srv):
    http(srv.port, "/x.txt?before")
    wait_line(srv.access_log, r"\?before")
    rotated = srv.access_log.with_name("access.log.1")
    srv.access_log.rename(rotated)
    srv.signal(signal.SIGUSR1)

    # The reopen happens asynchronously: keep making requests until one
    # lands in the new file. Lines may still reach the old file meanwhile.
    counter = [0]

    def new_file_has_line():
        counter[0] += 1
        http(srv.port, f"/x.txt?after{counter[0]}")
        return any("?after" in line for line in lines_of(srv.access_log))

    wait_until(new_file_has_line, 10, interval=0.05, what="a line in the reopened access log")
    assert any("?before" in line for line in lines_of(rotated))
    assert not any("?before" in line for line in lines_of(srv.access_log))
    # Once reopened, every following request goes to the new file.
    http(srv.port, "/x.txt?final")
    wait_line(srv.access_log, r"\?final")
    assert not any("?final" in line for line in lines_of(rotated))


def test_a_log_path_with_variables(make_server):
    # The log docs' mass-hosting example: a file per host, written only
    # while the host's root exists.
    srv = make_server(base_conf("""
    log_format perhost '$host $uri';
    server {
        listen 127.0.0.1:@PORT@;
        root @PREFIX@/sites/$host;
        access_log @PREFIX@/logs/vh/$host.log perhost;
        location / { return 200 "ok"; }
    }
    """), start=False)
    (srv.prefix / "sites" / "a.example").mkdir(parents=True)
    (srv.prefix / "logs" / "vh").mkdir(parents=True)
    srv.start()
    assert http(srv.port, "/one", host="a.example").status == 200
    assert http(srv.port, "/two", host="b.example").status == 200
    log = srv.prefix / "logs" / "vh" / "a.example.log"
    wait_line(log, "^a.example /one$")
    assert not (srv.prefix / "logs" / "vh" / "b.example.log").exists()
    assert not (srv.prefix / "logs" / "vh" / "$host.log").exists()


def test_gzip_access_log_is_read_by_zcat(make_server):
    # access_log ... gzip: each buffer goes out as one gzip member, so the
    # file (several flushes) reads whole with zcat.
    srv = make_server(base_conf("""
    log_format short '$uri $status';
    server {
        listen 127.0.0.1:@PORT@;
        access_log @PREFIX@/logs/short.log.gz short gzip=4 buffer=4k flush=200ms;
        location / { return 200 "ok"; }
    }
    """))
    gz = srv.prefix / "logs" / "short.log.gz"

    def unzipped():
        r = subprocess.run(["gzip", "-dc", str(gz)], capture_output=True, timeout=10)
        return r.stdout.decode() if r.returncode == 0 and r.stdout else None

    assert http(srv.port, "/first").status == 200
    assert wait_until(unzipped, 10, what="a first gzip member") == "/first 200\n"
    size = gz.stat().st_size
    assert gz.read_bytes()[:2] == b"\x1f\x8b"
    for i in range(3):
        assert http(srv.port, f"/next{i}").status == 200
    wait_until(lambda: gz.stat().st_size > size, 10, what="a second gzip member")
    wait_until(lambda: unzipped() == "/first 200\n/next0 200\n/next1 200\n/next2 200\n", 10, what="all four lines")


@pytest.mark.parametrize("args, message", [
    ("gzip=10", 'invalid compression level "10"'),
    ("flush=5s", 'no buffer is defined for access_log'),
])
def test_gzip_and_flush_refusals(tmp_path, args, message):
    conf = tmp_path / "t.conf"
    (tmp_path / "logs").mkdir()
    conf.write_text("events {}\nhttp {\n access_log %s/logs/a.log combined %s;\n"
                    " server { listen 127.0.0.1:1; }\n}\n" % (tmp_path, args))
    r = harness.cli(["-t", "-c", str(conf)], prefix=tmp_path)
    assert r.returncode != 0
    assert message in r.stderr, r.stderr
