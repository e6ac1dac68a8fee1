"""Variables configs copy from guides: $request_id, $cookie_NAME,
$arg_NAME, $sent_http_NAME, $upstream_http_NAME, $upstream_cookie_NAME,
$msec, $time_iso8601, $time_local, $connection_requests, $pid, $hostname,
$request_length, $bytes_sent, $body_bytes_sent, and named captures in
server_name and map regexes. Every expectation is nginx's: the file passes
with TORII_BIN=/usr/sbin/nginx."""

import re
import socket

import pytest

import harness
from echo_backend import EchoBackend


@pytest.fixture
def backend():
    b = EchoBackend("app")
    yield b.port
    b.stop()


def conf(port):
    return harness.base_conf(access_log=False, http=f"""
    log_format vars '$request_id|$sent_http_content_type|$upstream_http_x_backend|$connection_requests|'
                    '$pid|$hostname|$request_length|$bytes_sent|$body_bytes_sent|$msec|$time_iso8601|'
                    '$time_local|$upstream_cookie_sid';
    map $uri $mapped {{
        ~^/map/(?<part>[a-z]+)/(\\d+)$ "$2-$part";
        default none;
    }}
    server {{
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        access_log @PREFIX@/logs/vars.log vars;
        location /id {{
            add_header X-Id $request_id;
            return 200 "$request_id\\n";
        }}
        location /ca {{ return 200 "cookie=$cookie_session arg=$arg_b noname=[$arg_]\\n"; }}
        location /up/ {{
            add_header X-Up $upstream_http_x_backend;
            add_header X-Up-Cookie $upstream_cookie_sid;
            proxy_pass http://127.0.0.1:{port};
        }}
        location /map/ {{ return 200 "mapped=$mapped part=$part\\n"; }}
    }}
    server {{
        listen 127.0.0.1:@PORT@;
        server_name ~^(?<sub>[a-z]+)\\.example\\.test$;
        location / {{ return 200 "sub=$sub one=$1\\n"; }}
    }}
""")


def test_request_id_is_random_per_request_and_stable_within_it(make_server, backend):
    srv = make_server(conf(backend))
    a = harness.http(srv.port, "/id")
    b = harness.http(srv.port, "/id")
    assert re.fullmatch(r"[0-9a-f]{32}\n", a.text())
    assert a.header("X-Id") + "\n" == a.text()
    assert a.text() != b.text()


def test_cookie_and_arg(make_server, backend):
    srv = make_server(conf(backend))
    r = harness.http(srv.port, "/ca?a=1&b=two", headers={"Cookie": "x=1; session=abc"})
    assert r.text() == "cookie=abc arg=two noname=[]\n"  # $arg_ names no argument: empty


def test_upstream_http_and_upstream_cookie(make_server, backend):
    srv = make_server(conf(backend))
    r = harness.http(srv.port, "/up/x")
    assert r.status == 200
    assert r.header("X-Up") == "app"
    assert r.header("X-Up-Cookie") == "app"


def test_log_variables(make_server, backend):
    srv = make_server(conf(backend))
    with harness.Conn(srv.port) as c:
        c.request("GET", "/up/one")
        c.request("GET", "/up/two")
    log = srv.prefix / "logs" / "vars.log"
    lines = harness.wait_until(lambda: log.exists() and len(log.read_text().splitlines()) >= 2 and
                               log.read_text().splitlines(), 10, what="two log lines")
    second = lines[1].split("|")
    rid, ctype, up, creq, pid, host, rlen, sent, body, msec, iso, local, cookie = second
    assert re.fullmatch(r"[0-9a-f]{32}", rid)
    assert ctype == "text/plain" and up == "app" and cookie == "app"
    assert creq == "2"
    assert pid.isdigit() and host == socket.gethostname()
    assert int(rlen) > len("GET /up/two HTTP/1.1\r\n")
    assert int(body) == len("backend=app uri=/up/two host=127.0.0.1:0\n") - 1 + len(str(backend))
    assert int(sent) > int(body)
    assert re.fullmatch(r"\d{10}\.\d{3}", msec)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", iso)
    assert re.fullmatch(r"\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}", local)


def test_named_captures_in_map(make_server, backend):
    srv = make_server(conf(backend))
    assert harness.http(srv.port, "/map/abc/42").text() == "mapped=42-abc part=abc\n"
    assert harness.http(srv.port, "/map/x").text() == "mapped=none part=\n"


def test_named_captures_in_server_name(make_server, backend):
    srv = make_server(conf(backend))
    r = harness.http(srv.port, "/", host="shop.example.test")
    assert r.text() == "sub=shop one=shop\n"


def test_variables_used_before_the_block_that_defines_them(make_server):
    # A log_format, headers and a return above the map {}, geo {} and
    # split_clients {} that define their variables (Jellyfin's guide puts
    # its log_format first): nginx resolves variables once the file is read.
    srv = make_server(harness.base_conf(access_log=False, http="""
    log_format hidden '$masked|$zone|$bucket';
    server {
        listen 127.0.0.1:@PORT@;
        access_log @PREFIX@/logs/hidden.log hidden;
        location / {
            add_header X-Zone $zone;
            return 200 "$masked $bucket $other\\n";
        }
    }
    map $request_uri $masked {
        ~^(?<pre>.*[?&]api_key=)[^&]*(?<post>.*)$ "${pre}***$post";
        default $request_uri;
    }
    geo $zone { default outside; 127.0.0.0/8 loopback; }
    split_clients "$remote_addr" $bucket { * all; }
    map $uri $other { default second; }
    """))
    r = harness.http(srv.port, "/p?api_key=secret&x=1")
    assert r.text() == "/p?api_key=***&x=1 all second\n"
    assert r.header("X-Zone") == "loopback"
    log = srv.prefix / "logs" / "hidden.log"
    line = harness.wait_until(lambda: log.exists() and log.read_text().strip(), 10, what="the log line")
    assert line == "/p?api_key=***&x=1|loopback|all"


def test_a_variable_no_block_defines_is_refused(make_server):
    srv = make_server(harness.base_conf(http="""
    log_format f '$nowhere';
    server { listen 127.0.0.1:8; }
    """), start=False)
    srv.write_conf()
    out = harness.cli(["-t", "-c", str(srv.conf_path)], prefix=srv.prefix)
    assert out.returncode != 0 and 'unknown "nowhere" variable' in out.stdout + out.stderr


def test_set_on_a_variable_a_block_defines(make_server):
    # Nginx Proxy Manager's pattern: an http-level `map $host $forward_scheme`
    # and, in each generated server, `set $forward_scheme https`. The server
    # that sets it reads what it set, from the `set` on; the others read
    # the map's value. The same holds for geo {}, and for a `set` written
    # above the block in the file.
    srv = make_server(harness.base_conf(access_log=False, http="""
    log_format scheme '$forward_scheme|$zone';
    server {
        listen 127.0.0.1:@PORT@;
        server_name setter.test;
        access_log @PREFIX@/logs/scheme.log scheme;
        location / {
            set $before $forward_scheme;
            set $forward_scheme "https";
            set $zone "overridden";
            return 200 "$before $forward_scheme $zone\\n";
        }
    }
    map $host $forward_scheme { default http; }
    geo $zone { default outside; 127.0.0.0/8 loopback; }
    server {
        listen 127.0.0.1:@PORT@;
        server_name plain.test;
        location / { return 200 "$forward_scheme $zone\\n"; }
    }
    """))
    assert harness.http(srv.port, "/", host="setter.test").text() == "http https overridden\n"
    assert harness.http(srv.port, "/", host="plain.test").text() == "http loopback\n"
    log = srv.prefix / "logs" / "scheme.log"
    line = harness.wait_until(lambda: log.exists() and log.read_text().strip(), 10, what="the log line")
    assert line == "https|overridden"


def test_request_filename_after_an_index_redirect(make_server):
    # MediaWiki's recipe passes `SCRIPT_FILENAME $request_filename`: after
    # `index` sends "/" on to "/index.php", it names the index file, not
    # the directory the first location mapped.
    srv = make_server(harness.base_conf(access_log=False, http="""
    server {
        listen 127.0.0.1:@PORT@;
        root @PREFIX@/www;
        index index.php;
        location ~ \\.php$ { return 200 "$uri $request_filename\\n"; }
        error_page 404 /missing.php;
    }
    """), start=False)
    (srv.prefix / "www" / "sub").mkdir(parents=True)
    (srv.prefix / "www" / "index.php").write_text("")
    (srv.prefix / "www" / "sub" / "index.php").write_text("")
    srv.start()
    www = srv.prefix / "www"
    assert harness.http(srv.port, "/").text() == f"/index.php {www}/index.php\n"
    assert harness.http(srv.port, "/sub/").text() == f"/sub/index.php {www}/sub/index.php\n"
    r = harness.http(srv.port, "/nothing.txt")
    assert r.status == 404 and r.text() == f"/missing.php {www}/missing.php\n"


def test_proxy_port_and_a_dot_server_name(make_server, backend):
    # The proxy docs' `proxy_set_header Host $host:$proxy_port;`, and
    # $server_name of a ".example.net" name (nginx drops the dot).
    srv = make_server(harness.base_conf(access_log=False, http=f"""
    upstream named {{ server 127.0.0.1:{backend}; }}
    server {{
        listen 127.0.0.1:@PORT@;
        server_name .example.net;
        location /up/ {{
            proxy_pass http://127.0.0.1:{backend};
            proxy_set_header Host $host:$proxy_port;
        }}
        location /named/ {{
            proxy_pass http://named;
            add_header X-Proxy-Port $proxy_port;
        }}
        location / {{ return 200 "$server_name\\n"; }}
    }}
    """))
    r = harness.http(srv.port, "/up/x", host="www.example.net")
    assert r.status == 200 and f"host=www.example.net:{backend}" in r.text(), r.text()
    r = harness.http(srv.port, "/named/x", host="www.example.net")
    assert r.status == 200 and r.header("X-Proxy-Port") == "80", r
    assert harness.http(srv.port, "/", host="www.example.net").text() == "example.net\n"


def test_host_of_a_request_without_host(make_server):
    # HTTP/1.0 without Host: $host is the server's name, "" when it has
    # none (the common `return 301 https://$host$request_uri` then names no
    # host, as with nginx), never the local address.
    srv = make_server(harness.base_conf(access_log=False, http="""
    server {
        listen 127.0.0.1:@PORT@ default_server;
        location / { return 200 "[$host]\\n"; }
    }
    server {
        listen 127.0.0.1:@PORT1@;
        server_name named.example other.example;
        location / { return 200 "[$host]\\n"; }
    }
    """), nports=2)
    r, _ = harness.http_raw(srv.ports[0], b"GET / HTTP/1.0\r\n\r\n", wait_close=0)
    assert r.status == 200 and r.body == b"[]\n"
    r, _ = harness.http_raw(srv.ports[1], b"GET / HTTP/1.0\r\n\r\n", wait_close=0)
    assert r.status == 200 and r.body == b"[named.example]\n"


def test_set_of_a_header_variable_stands_only_where_it_ran(make_server):
    # Artifactory's documented `if ($http_x_forwarded_proto = '') { set
    # $http_x_forwarded_proto $scheme; }`: the header's value wherever the
    # set did not run; a set in a location never used hides nothing.
    srv = make_server(harness.base_conf(access_log=False, http="""
    server {
        listen 127.0.0.1:@PORT@;
        location / {
            if ($http_x_forwarded_proto = '') { set $http_x_forwarded_proto $scheme; }
            return 200 "[$http_x_forwarded_proto]\\n";
        }
        location /plain { return 200 "[$http_x_forwarded_proto][$arg_a]\\n"; }
        location /never { set $http_x_forwarded_proto never; set $arg_a never; return 200 "x"; }
    }
    """))
    assert harness.http(srv.port, "/", headers={"X-Forwarded-Proto": "https"}).body == b"[https]\n"
    assert harness.http(srv.port, "/").body == b"[http]\n"
    r = harness.http(srv.port, "/plain?a=1", headers={"X-Forwarded-Proto": "https"})
    assert r.body == b"[https][1]\n"


def test_connection_variables(make_server):
    """$pipe, $connection_time, $tcpinfo_*, $date_gmt and $date_local."""
    srv = make_server(harness.base_conf(access_log=False, http="""
    server {
        listen 127.0.0.1:@PORT@;
        location / {
            return 200 "$pipe|$connection_time|$tcpinfo_rtt|$tcpinfo_rttvar|$tcpinfo_snd_cwnd|$tcpinfo_rcv_space|$date_gmt|$date_local\\n";
        }
    }"""))
    one = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
    last = "GET /b HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
        s.sendall(one.encode())  # alone, answered before the next is sent
        first = b""
        while not first.endswith(b"\n") or b"\r\n\r\n" not in first:
            first += s.recv(4096)
        s.sendall((one + last).encode())  # two at once: the second is pipelined
        rest = b""
        while chunk := s.recv(4096):
            rest += chunk
    lines = [first.split(b"\r\n\r\n", 1)[1].decode()] + [m.decode() for m in re.findall(rb"\r\n\r\n([^\n]*\n)", rest)]
    assert len(lines) == 3, (first, rest)
    fields = [line.strip().split("|") for line in lines]
    assert [f[0] for f in fields] == [".", ".", "p"]
    for f in fields:
        assert re.fullmatch(r"\d+\.\d{3}", f[1]), f
        assert all(re.fullmatch(r"\d+", v) for v in f[2:6]), f
        assert re.fullmatch(r"\w+, \d\d-\w{3}-\d{4} \d\d:\d\d:\d\d GMT", f[6]), f
        assert re.fullmatch(r"\w+, \d\d-\w{3}-\d{4} \d\d:\d\d:\d\d \w+", f[7]), f


def test_subrequests_share_the_request_id(make_server):
    """An SSI include sees its page's $request_id (nginx's subrequests
    share the request's variables; auth_request, mirror and slice
    subrequests take it the same way), so a tracing ID passed on with
    proxy_set_header is one ID for all of them."""
    srv = make_server(harness.base_conf(access_log=False, http="""
    server {
        listen 127.0.0.1:@PORT@;
        location /page {
            ssi on;
            default_type text/html;
            add_header X-Request-Id $request_id;
            return 200 'main=$request_id sub=<!--#include virtual="/id" -->';
        }
        location /id { return 200 $request_id; }
    }"""))
    r = harness.http(srv.port, "/page")
    assert re.fullmatch(r"[0-9a-f]{32}", r.header("X-Request-Id"))
    assert r.text() == f"main={r.header('X-Request-Id')} sub={r.header('X-Request-Id')}"


def test_upstream_cookie_spacing(make_server):
    """$upstream_cookie_NAME reads Set-Cookie as nginx: spaces around '='
    are skipped, the value ends at ';'."""
    from scripted_upstream import replying
    up = replying(lambda request: b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
                                  b"Set-Cookie: empty= ;Path=/\r\nSet-Cookie: spaced = content\r\n"
                                  b"Set-Cookie: plain=v1; HttpOnly\r\n\r\n")
    try:
        srv = make_server(harness.base_conf(access_log=False, http=f"""
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{
            proxy_pass http://127.0.0.1:{up.port};
            add_header X-Cookies "[$upstream_cookie_empty][$upstream_cookie_spaced][$upstream_cookie_plain]";
        }}
    }}"""))
        assert harness.http(srv.port, "/").header("X-Cookies") == "[][content][v1]"
    finally:
        up.close()
