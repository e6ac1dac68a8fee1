"""memcached_pass against Debian's memcached daemon (started by each test on
a leased port) and a fake memcached for the replies a real one never sends:
hits typed by the location's types, a miss as 404 handed to the usual
`error_page 404 = @fallback` (a backend behind proxy_pass), the gzip flag,
$memcached_key from variables and nginx's escaping of it, binary and 1 MB
values, HEAD, ranges, keep-alive through the upstream pool, a dead or slow
memcached (502/504, next_upstream), malformed replies with nginx's log
lines, the access log's $upstream_* fields, and bad config lines refused.
The same tests pass against nginx (TORII_BIN=/usr/sbin/nginx)."""

import gzip
import re
import socket
import threading

import pytest

import harness
from memcached_peers import FakeMemcached, Memcached


@pytest.fixture
def mc():
    m = Memcached()
    yield m
    m.stop()


@pytest.fixture
def fake():
    made = []

    def make(reply):
        f = FakeMemcached(reply)
        made.append(f)
        return f

    yield make
    for f in made:
        f.stop()


LOG_FORMAT = ('log_format up "$request_uri $status $upstream_addr $upstream_status '
              '$upstream_response_length $body_bytes_sent";')


def site(make_server, location, extra_http="", extra_server="", error_level="info"):
    """A server whose `location /` is `location`, a backend on @PORT1@ for
    fallbacks, and an access log in the `up` format."""
    return make_server(harness.base_conf(http=f"""
    {LOG_FORMAT}
    access_log @PREFIX@/logs/up.log up;
    {extra_http}
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{
            {location}
        }}
        location @fallback {{
            proxy_pass http://127.0.0.1:@PORT1@;
        }}
        {extra_server}
    }}
    server {{
        listen 127.0.0.1:@PORT1@;
        location / {{ return 200 "backend for $uri\\n"; }}
    }}""", error_level=error_level), nports=2)


def up_log(srv, uri):
    """The `up` access-log line of the request for `uri` (polled: the line is
    written after the response)."""
    def find():
        path = srv.prefix / "logs" / "up.log"
        if not path.exists():
            return None
        for line in path.read_text().splitlines():
            if line.split(" ", 1)[0] == uri:
                return line.split(" ")
        return None
    return harness.wait_until(find, 5, what=f"access log line for {uri}")


def error_log_has(srv, pattern):
    return harness.wait_until(lambda: re.search(pattern, srv.error_log.read_text()), 5,
                              what=f"error log line {pattern!r}")


def test_hit_is_typed_by_the_location_types(make_server, mc):
    mc.set("/page.html", "<h1>cached page</h1>")
    mc.set("/data.json", '{"a": 1}')
    mc.set("/noext", "plain bytes")
    srv = site(make_server, f"set $memcached_key $uri; memcached_pass {mc.address};")
    r = harness.http(srv.port, "/page.html")
    assert r.status == 200 and r.body == b"<h1>cached page</h1>", r
    assert r.header("Content-Type") == "text/html"
    assert r.header("Content-Length") == str(len(r.body))
    assert r.header("Accept-Ranges") == "bytes"
    assert r.header("Content-Encoding") is None
    assert harness.http(srv.port, "/data.json").header("Content-Type") == "application/json"
    r = harness.http(srv.port, "/noext")
    assert r.body == b"plain bytes" and r.header("Content-Type") == "application/octet-stream"
    line = up_log(srv, "/page.html")
    assert line[1:] == ["200", mc.address, "200", str(len("<h1>cached page</h1>") + 7), "20"], line


def test_unix_socket(make_server, tmp_path):
    m = Memcached(unix_path=tmp_path / "mc.sock")
    try:
        m.set("/u", "over a unix socket")
        srv = site(make_server, f"set $memcached_key $uri; memcached_pass {m.address};")
        r = harness.http(srv.port, "/u")
        assert r.status == 200 and r.body == b"over a unix socket", r
    finally:
        m.stop()


def test_miss_goes_to_the_fallback_location(make_server, mc):
    mc.set("/here", "from memcached")
    srv = site(make_server, f"set $memcached_key $uri; memcached_pass {mc.address}; error_page 404 = @fallback;")
    assert harness.http(srv.port, "/here").body == b"from memcached"
    r = harness.http(srv.port, "/missing/page?x=1")
    assert r.status == 200 and r.body == b"backend for /missing/page\n", r
    error_log_has(srv, r'\[info\] .*key: "/missing/page" was not found by memcached while reading response '
                       r'header from upstream.*upstream: "memcached://' + re.escape(mc.address) + '"')
    assert up_log(srv, "/missing/page?x=1")[1] == "200"


def test_miss_without_error_page_is_the_404_page(make_server, mc):
    srv = site(make_server, f"set $memcached_key $uri; memcached_pass {mc.address};")
    r = harness.http(srv.port, "/nothing")
    assert r.status == 404 and b"404 Not Found" in r.body, r
    assert r.header("Content-Type") == "text/html"


def test_gzip_flag_adds_content_encoding(make_server, mc):
    packed = gzip.compress(b"compressed page " * 50)
    mc.set("/gz", packed, flags=3)
    mc.set("/plain", "not compressed", flags=4)
    srv = site(make_server, f"set $memcached_key $uri; memcached_pass {mc.address}; memcached_gzip_flag 2;")
    r = harness.http(srv.port, "/gz")
    assert r.status == 200 and r.header("Content-Encoding") == "gzip" and r.body == packed
    assert gzip.decompress(r.body) == b"compressed page " * 50
    r = harness.http(srv.port, "/plain")
    assert r.body == b"not compressed" and r.header("Content-Encoding") is None
    # Without memcached_gzip_flag the flags mean nothing.
    srv2 = site(make_server, f"set $memcached_key $uri; memcached_pass {mc.address};")
    assert harness.http(srv2.port, "/gz").header("Content-Encoding") is None


def test_key_from_variables_and_nginx_escaping(make_server, mc):
    mc.set("localhost:item-7", "by host and argument")
    mc.set("/a%20b%25c", "escaped key")
    srv = site(make_server, f"""
        set $memcached_key "$host:item-$arg_id";
        if ($arg_id = "") {{ set $memcached_key $uri; }}
        memcached_pass {mc.address};""")
    r = harness.http(srv.port, "/anything?id=7")
    assert r.status == 200 and r.body == b"by host and argument", r
    # $uri is decoded ("/a b%c"); the key goes as nginx escapes it.
    r = harness.http(srv.port, "/a%20b%25c")
    assert r.status == 200 and r.body == b"escaped key", r


def test_binary_value_and_the_trailer_inside_it(make_server, mc):
    value = bytes(range(256)) * 4 + b"\r\nEND\r\n" + b"\x00tail"
    mc.set("/bin", value)
    srv = site(make_server, f"set $memcached_key $uri; memcached_pass {mc.address};")
    r = harness.http(srv.port, "/bin")
    assert r.status == 200 and r.body == value


def test_one_megabyte_value(make_server, mc):
    value = bytes((i * 31 + i // 1024) & 0xff for i in range(1 << 20))
    mc.set("/big", value)
    srv = site(make_server, f"set $memcached_key $uri; memcached_pass {mc.address}; memcached_buffer_size 8k;")
    r = harness.http(srv.port, "/big")
    assert r.status == 200 and r.header("Content-Length") == str(1 << 20)
    assert r.body == value


def test_value_streams_before_all_of_it_came(make_server, fake):
    half = bytes(range(256)) * 2048  # 512 KB
    go = threading.Event()
    stream = fake(lambda key: [b"VALUE /big 0 %d\r\n" % (2 * len(half)) + half, go, half + b"\r\nEND\r\n"])
    srv = site(make_server, f"set $memcached_key $uri; memcached_pass {stream.address};")
    try:
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
            s.sendall(b"GET /big HTTP/1.1\r\nHost: localhost\r\n\r\n")
            got = b""
            # Half of the value reaches the client while memcached holds the rest.
            while len(got) < 256 * 1024:
                chunk = s.recv(65536)
                assert chunk, got[:200]
                got += chunk
            go.set()
            head, _, body = got.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200") and b"Content-Length: %d" % (2 * len(half)) in head
            while len(body) < 2 * len(half):
                chunk = s.recv(65536)
                assert chunk
                body += chunk
            assert body == half * 2
    finally:
        go.set()


def test_head_and_ranges(make_server, mc):
    mc.set("/r.txt", "0123456789")
    srv = site(make_server, f"set $memcached_key $uri; memcached_pass {mc.address};")
    r = harness.http(srv.port, "/r.txt", method="HEAD")
    assert r.status == 200 and r.body == b"" and r.header("Content-Length") == "10"
    r = harness.http(srv.port, "/r.txt", headers={"Range": "bytes=2-5"})
    assert r.status == 206 and r.body == b"2345", r
    assert r.header("Content-Range") == "bytes 2-5/10"
    assert r.header("Accept-Ranges") is None
    # One range at most (nginx's single_range for upstream responses).
    r = harness.http(srv.port, "/r.txt", headers={"Range": "bytes=0-1,4-5"})
    assert r.status == 200 and r.body == b"0123456789"
    r = harness.http(srv.port, "/r.txt", headers={"Range": "bytes=50-"})
    assert r.status == 416 and r.header("Content-Range") == "bytes */10"


def test_only_get_and_head(make_server, mc):
    srv = site(make_server, f"set $memcached_key $uri; memcached_pass {mc.address};")
    assert harness.http(srv.port, "/x", method="POST", body=b"data").status == 405
    assert harness.http(srv.port, "/x", method="DELETE").status == 405


def test_empty_key_is_500(make_server, mc):
    srv = site(make_server, f"set $memcached_key $arg_k; memcached_pass {mc.address};")
    assert harness.http(srv.port, "/x").status == 500
    error_log_has(srv, r'\[error\] .*the "\$memcached_key" variable is not set, client: 127\.0\.0\.1')


def test_keepalive_pool_serves_hits_and_misses(make_server, mc):
    mc.set("/k", "kept")
    srv = site(make_server, "set $memcached_key $uri; memcached_pass mcgroup;",
               extra_http=f"upstream mcgroup {{ server {mc.address}; keepalive 4; }}")
    before = int(mc.stats()["total_connections"])
    for i in range(10):
        assert harness.http(srv.port, "/k").body == b"kept"
        assert harness.http(srv.port, f"/miss{i}").status == 404
    opened = int(mc.stats()["total_connections"]) - before - 1  # our own stats connection
    assert opened <= 2, opened


def test_dead_memcached_then_the_next_server(make_server, mc):
    mc.set("/k", "from the live one")
    dead = harness.PortLease()
    try:
        srv = site(make_server, "set $memcached_key $uri; memcached_pass pair;",
                   extra_http=f"upstream pair {{ server 127.0.0.1:{dead.port}; server {mc.address}; }}")
        r = harness.http(srv.port, "/k")
        assert r.status == 200 and r.body == b"from the live one"
        error_log_has(srv, r"connect\(\) failed \(111: Connection refused\) while connecting to upstream.*"
                           r'upstream: "memcached://127\.0\.0\.1:' + str(dead.port) + '"')
        line = up_log(srv, "/k")
        # "$upstream_addr $upstream_status $upstream_response_length", each "first, second".
        assert line[2:8] == [f"127.0.0.1:{dead.port},", mc.address, "502,", "200", "0,",
                             str(len("from the live one") + 7)], line

        alone = site(make_server, f"set $memcached_key $uri; memcached_pass 127.0.0.1:{dead.port};")
        assert harness.http(alone.port, "/k").status == 502
    finally:
        dead.release()


def test_slow_memcached_is_504(make_server, fake):
    slow = fake(lambda key: None)
    srv = site(make_server, f"set $memcached_key $uri; memcached_pass {slow.address}; memcached_read_timeout 300ms;")
    r = harness.http(srv.port, "/slow")
    assert r.status == 504, r
    error_log_has(srv, r"upstream timed out \(110: Connection timed out\) while reading response header from upstream")
    assert slow.commands == [b"get /slow"]


def test_next_upstream_not_found(make_server, mc, fake):
    mc.set("/k", "found on the second")
    missing = fake(lambda key: b"END\r\n")
    group = f"upstream pair {{ server {missing.address}; server {mc.address}; }}"
    srv = site(make_server, "set $memcached_key $uri; memcached_pass pair; memcached_next_upstream not_found;",
               extra_http=group)
    r = harness.http(srv.port, "/k")
    assert r.status == 200 and r.body == b"found on the second"
    assert missing.commands == [b"get /k"]
    # Without not_found, a miss is the answer.
    srv2 = site(make_server, "set $memcached_key $uri; memcached_pass pair2;",
                extra_http=f"upstream pair2 {{ server {missing.address}; server {mc.address}; }}")
    assert harness.http(srv2.port, "/k").status == 404


@pytest.mark.parametrize("reply,status,logged", [
    (b"VALUE other 0 3\r\nabc\r\nEND\r\n", 502,
     r'memcached sent invalid key in response "VALUE other 0 3" for key "/k" while reading response header'),
    (b"SERVER_ERROR out of memory\r\n", 502,
     r'memcached sent invalid response: "SERVER_ERROR out of memory" while reading response header'),
    (b"VALUE /k 0 many\r\nabc\r\nEND\r\n", 502,
     r'memcached sent invalid length in response "VALUE /k 0 many" for key "/k"'),
    (b"VALUE /k 0 3\nabc\r\nEND\r\n", 502, r'memcached sent invalid response: "VALUE /k 0 3"'),
    (b"VALUE /k 0 3\r\nabcdef\r\nEND\r\n", 200, r"memcached sent invalid trailer while reading (response header from )?upstream, client: "),
])
def test_malformed_replies(make_server, fake, reply, status, logged):
    bad = fake(lambda key: reply)
    srv = site(make_server, f"set $memcached_key $uri; memcached_pass {bad.address};")
    r = harness.http(srv.port, "/k")
    assert r.status == status, r
    if status == 200:
        assert r.body == b"abc"  # the value went out whole
    error_log_has(srv, r"\[error\] .*" + logged)


def test_invalid_flags_with_gzip_flag(make_server, fake):
    bad = fake(lambda key: b"VALUE /k x1 3\r\nabc\r\nEND\r\n")
    srv = site(make_server, f"set $memcached_key $uri; memcached_pass {bad.address}; memcached_gzip_flag 1;")
    assert harness.http(srv.port, "/k").status == 502
    error_log_has(srv, r'memcached sent invalid flags in response "VALUE /k x1 3" for key "/k"')
    srv2 = site(make_server, f"set $memcached_key $uri; memcached_pass {bad.address};")
    assert harness.http(srv2.port, "/k").body == b"abc"


@pytest.mark.parametrize("where,line,message", [
    ("location", "memcached_pass 127.0.0.1;", 'no port in upstream "127.0.0.1"'),
    ("location", "memcached_pass memcached://127.0.0.1:11211;", 'invalid host in upstream "memcached://127.0.0.1:11211"'),
    ("location", "memcached_pass 127.0.0.1:11211; memcached_pass 127.0.0.1:11212;", '"memcached_pass" directive is duplicate'),
    ("http", "memcached_pass 127.0.0.1:11211;", '"memcached_pass" directive is not allowed here'),
    ("http", "memcached_gzip_flag yes;", '"memcached_gzip_flag" directive invalid number'),
    ("http", "memcached_next_upstream http_500;", 'invalid value "http_500"'),
    ("http", "memcached_socket_keepalive maybe;", '"memcached_socket_keepalive"'),
])
def test_bad_config_lines(tmp_path, where, line, message):
    (tmp_path / "logs").mkdir()
    body = f"server {{ listen 127.0.0.1:1; location / {{ set $memcached_key $uri; {line} }} }}" if where == "location" \
        else f"{line} server {{ listen 127.0.0.1:1; location / {{ set $memcached_key $uri; }} }}"
    (tmp_path / "t.conf").write_text(f"events {{}} http {{ {body} }}")
    r = harness.cli(["-t", "-c", str(tmp_path / "t.conf")], prefix=tmp_path)
    assert r.returncode != 0
    assert message in r.stdout + r.stderr, r.stdout + r.stderr


def test_memcached_key_must_exist(tmp_path):
    (tmp_path / "logs").mkdir()
    (tmp_path / "t.conf").write_text(
        "events {} http { server { listen 127.0.0.1:1; location / { memcached_pass 127.0.0.1:11211; } } }")
    r = harness.cli(["-t", "-c", str(tmp_path / "t.conf")], prefix=tmp_path)
    assert r.returncode != 0
    assert 'unknown "memcached_key" variable' in r.stdout + r.stderr, r.stdout + r.stderr
