"""fastcgi_pass to Debian's php-fpm, started by each test in its own
directory: the Debian fastcgi_params / fastcgi.conf / fastcgi-php.conf
includes unchanged, PATH_INFO by fastcgi_split_path_info, try_files,
Status and Location from PHP, stderr in the error log, 504 and 502,
uploads and downloads streamed with bounded memory, keep-alive FastCGI
connections, HTTP/2 clients. The same tests pass against nginx
(TORII_BIN=/usr/sbin/nginx)."""

import hashlib
import json
import os
import socket
import subprocess
import threading
import time

import pytest

import harness
from gateway_apps import PhpFpm, copy_debian_params, established_to, server_peak_rss_kb, server_rss_kb

PHP_FILES = {
    "protected.php": r"""<?php
header("Content-Type: application/pdf");
header('Content-Disposition: attachment; filename="report.pdf"');
header("X-Accel-Redirect: /protected/report.pdf");
echo "the application's own body, never sent";
""",
    "info.php": r"""<?php
error_log("hello from php " . ($_GET["tag"] ?? ""));
header("Content-Type: application/json");
$keys = ["SCRIPT_FILENAME", "SCRIPT_NAME", "REQUEST_URI", "QUERY_STRING", "PATH_INFO", "HTTPS",
         "REQUEST_METHOD", "SERVER_SOFTWARE", "DOCUMENT_ROOT", "DOCUMENT_URI", "HTTP_HOST", "HTTP_X_CUSTOM",
         "CONTENT_LENGTH", "CONTENT_TYPE", "GATEWAY_INTERFACE", "SERVER_PROTOCOL", "REMOTE_ADDR",
         "SERVER_PORT", "REQUEST_SCHEME", "A", "B", "C", "MAYBE", "HTTP_X_GUARD", "HTTP_PROXY"];
$out = [];
foreach ($keys as $k) { if (array_key_exists($k, $_SERVER)) $out[$k] = $_SERVER[$k]; }
echo json_encode($out);
""",
    "status.php": r"""<?php
header("Status: 404 Not Found");
header("X-From: php");
echo "php says missing";
""",
    "redirect.php": r"""<?php
header("Location: /elsewhere");
""",
    "slow.php": r"""<?php
sleep((int)$_GET["s"]);
echo "late";
""",
    "upload.php": r"""<?php
$in = fopen("php://input", "rb");
$ctx = hash_init("md5");
$n = 0;
while (!feof($in)) {
    $chunk = fread($in, 65536);
    if ($chunk === false) break;
    $n += strlen($chunk);
    hash_update($ctx, $chunk);
}
header("Content-Type: application/json");
echo json_encode(["length" => $n, "md5" => hash_final($ctx)]);
""",
    "download.php": r"""<?php
$mb = (int)$_GET["mb"];
$block = str_repeat("0123456789abcdef", 65536);
for ($i = 0; $i < $mb; $i++) { echo $block; flush(); }
""",
    "caught.php": r"""<?php
error_log("FATAL-MARK in the application");
echo "should not be seen";
""",
    "extra.php": r"""<?php
header("Content-Length: 8");
echo "SEE-THIS-BUT-NOT-THIS";
""",
    "short.php": r"""<?php
header("Content-Length: 100");
echo "TOO-SHORT";
""",
    "pid.php": r"""<?php
echo getmypid();
""",
    "clock.php": r"""<?php
echo hrtime(true);
""",
}


@pytest.fixture
def php(tmp_path):
    """php(tcp=False) -> a running PhpFpm serving tmp_path/www."""
    made = []
    www = tmp_path / "www"
    www.mkdir()
    for name, text in PHP_FILES.items():
        (www / name).write_text(text)
    (www / "app").mkdir()
    (www / "app" / "index.php").write_text("<?php echo 'index of app';")
    (www / "custom404.html").write_text("custom not found page\n")

    def make(tcp=False, **kwargs):
        fpm = PhpFpm(tmp_path / f"fpm{len(made)}", tcp=tcp, **kwargs)
        made.append(fpm)
        return fpm

    make.www = www
    yield make
    for fpm in made:
        fpm.stop()


def site(make_server, tmp_path, http, listen="listen 127.0.0.1:@PORT@;", error_level="info", **kwargs):
    server = make_server(harness.base_conf(http=http, error_level=error_level), start=False, **kwargs)
    copy_debian_params(server.prefix)
    server.start()
    return server


def php_location(fpm, www, extra=""):
    """The PHP location as Debian's default site has it (in the form that
    lets PATH_INFO through)."""
    return f"""
    server {{
        listen 127.0.0.1:@PORT@;
        root {www};
        index index.php;
        location ~ [^/]\\.php(/|$) {{
            include snippets/fastcgi-php.conf;
            fastcgi_pass {fpm.address};
            {extra}
        }}
    }}"""


def test_variables_with_debian_snippet(make_server, tmp_path, php):
    fpm = php()
    srv = site(make_server, tmp_path, php_location(fpm, php.www))
    r = harness.http(srv.port, "/info.php/extra/path?a=1&b=two&tag=t1", headers={"X-Custom": "v1"}, host="example.test")
    assert r.status == 200, r.body
    assert r.header("Content-Type") == "application/json"
    v = json.loads(r.body)
    assert v["SCRIPT_FILENAME"] == f"{php.www}/info.php"
    assert v["SCRIPT_NAME"] == "/info.php"
    assert v["PATH_INFO"] == "/extra/path"
    assert v["REQUEST_URI"] == "/info.php/extra/path?a=1&b=two&tag=t1"
    assert v["QUERY_STRING"] == "a=1&b=two&tag=t1"
    assert v["REQUEST_METHOD"] == "GET"
    assert v["DOCUMENT_ROOT"] == str(php.www)
    assert v["HTTP_HOST"] == "example.test"
    assert v["HTTP_X_CUSTOM"] == "v1"
    assert v["GATEWAY_INTERFACE"] == "CGI/1.1"
    assert v["SERVER_PROTOCOL"] == "HTTP/1.1"
    assert v["SERVER_SOFTWARE"].startswith("nginx/")
    assert v["REQUEST_SCHEME"] == "http" and v["REMOTE_ADDR"] == "127.0.0.1"
    assert v["SERVER_PORT"] == str(srv.port)
    assert "HTTPS" not in v  # if_not_empty: plain HTTP sends none
    # stderr goes to the error log, as nginx writes it.
    harness.wait_until(lambda: 'FastCGI sent in stderr: "PHP message: hello from php t1"' in srv.error_log_text(), 5,
                       what="the stderr line")
    line = [l for l in srv.error_log_text().splitlines() if "FastCGI sent in stderr" in l][0]
    assert "[error]" in line and "while reading response header from upstream" in line
    assert f'upstream: "fastcgi://{fpm.address}' in line


def test_try_files_404_before_php(make_server, tmp_path, php):
    fpm = php()
    srv = site(make_server, tmp_path, php_location(fpm, php.www))
    r = harness.http(srv.port, "/missing.php")
    assert r.status == 404
    assert b"No input file" not in r.body and b"File not found" not in r.body  # PHP never saw it


def test_try_files_uri_in_php_location(make_server, tmp_path, php):
    fpm = php()
    srv = site(make_server, tmp_path, f"""
    server {{
        listen 127.0.0.1:@PORT@;
        root {php.www};
        location ~ \\.php$ {{
            try_files $uri =404;
            include fastcgi.conf;
            fastcgi_pass {fpm.address};
        }}
    }}""")
    assert harness.http(srv.port, "/nothing-here.php").status == 404
    r = harness.http(srv.port, "/info.php?x=1")
    assert r.status == 200 and json.loads(r.body)["QUERY_STRING"] == "x=1"


def test_split_path_info_and_index(make_server, tmp_path, php):
    fpm = php()
    srv = site(make_server, tmp_path, f"""
    server {{
        listen 127.0.0.1:@PORT@;
        root {php.www};
        location ~ ^(.+\\.php)(.*)$ {{
            fastcgi_split_path_info ^(.+\\.php)(.*)$;
            include fastcgi_params;
            fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;
            fastcgi_param PATH_INFO $fastcgi_path_info;
            fastcgi_pass {fpm.address};
        }}
        location /app/ {{
            fastcgi_index index.php;
            include fastcgi.conf;
            fastcgi_pass {fpm.address};
        }}
    }}""")
    v = json.loads(harness.http(srv.port, "/info.php/a/b.html").body)
    assert v["SCRIPT_NAME"] == "/info.php" and v["PATH_INFO"] == "/a/b.html"
    assert v["SCRIPT_FILENAME"] == f"{php.www}/info.php"
    r = harness.http(srv.port, "/app/")
    assert r.status == 200 and r.body == b"index of app"


def test_param_inheritance_and_if_not_empty(make_server, tmp_path, php):
    # A level with any fastcgi_param replaces the parent's list.
    fpm = php()
    srv = site(make_server, tmp_path, f"""
    server {{
        listen 127.0.0.1:@PORT@;
        root {php.www};
        fastcgi_param SCRIPT_FILENAME $document_root/info.php;
        fastcgi_param REQUEST_METHOD $request_method;
        fastcgi_param A server-a;
        fastcgi_param B server-b;
        fastcgi_param HTTP_X_GUARD from-config;
        location /inherits {{
            fastcgi_pass {fpm.address};
        }}
        location /own {{
            fastcgi_param SCRIPT_FILENAME $document_root/info.php;
            fastcgi_param REQUEST_METHOD $request_method;
            fastcgi_param C own-c;
            fastcgi_param MAYBE $http_x_maybe if_not_empty;
            fastcgi_param HTTP_PROXY "";
            fastcgi_pass {fpm.address};
        }}
    }}""")
    v = json.loads(harness.http(srv.port, "/inherits", headers={"X-Guard": "from-client"}).body)
    assert v["A"] == "server-a" and v["B"] == "server-b" and "C" not in v
    assert v["HTTP_X_GUARD"] == "from-config"  # the param wins over the client's header, sent once
    v = json.loads(harness.http(srv.port, "/own").body)
    assert v["C"] == "own-c" and "A" not in v and "B" not in v and "MAYBE" not in v
    v = json.loads(harness.http(srv.port, "/own", headers={"X-Maybe": "yes"}).body)
    assert v["MAYBE"] == "yes"
    # The httpoxy guard: an HTTP_ param written as "" hides the header and
    # is not sent itself.
    v = json.loads(harness.http(srv.port, "/own", headers={"Proxy": "http://evil.test"}).body)
    assert "HTTP_PROXY" not in v, v


def test_status_and_location_from_php(make_server, tmp_path, php):
    fpm = php()
    srv = site(make_server, tmp_path, php_location(fpm, php.www))
    r = harness.http(srv.port, "/status.php")
    assert r.status == 404 and r.body == b"php says missing" and r.header("X-From") == "php"
    assert r.header("Status") is None
    r = harness.http(srv.port, "/redirect.php")
    # As the app sent it: FastCGI has no proxy_redirect, and nginx makes
    # only its own redirects absolute.
    assert r.status == 302 and r.header("Location") == "/elsewhere", r


def test_the_declared_length_is_held_to(make_server, tmp_path, php):
    fpm = php()
    srv = site(make_server, tmp_path, php_location(fpm, php.www, "fastcgi_keep_conn on;"))
    with harness.Conn(srv.port) as c:  # keep-alive: a byte too many would start the next response
        c.send(harness.build_request("GET", "/extra.php", headers=[("Connection", "keep-alive")]))
        r = c.read_response()
        assert r.status == 200 and r.body == b"SEE-THIS"
        c.send(harness.build_request("GET", "/pid.php"))
        assert c.read_response().status == 200
    harness.wait_until(lambda: "upstream sent more data than specified in \"Content-Length\" header"
                       in srv.error_log.read_text(), 10, what="the warning")
    # Short of its length: the client sees the connection end, not a whole response.
    raw = harness.raw_until_close(srv.port, b"GET /short.php HTTP/1.1\r\nHost: x\r\n\r\n")
    assert raw.endswith(b"TOO-SHORT"), raw
    harness.wait_until(lambda: "upstream prematurely closed" in srv.error_log.read_text(), 10, what="the error")


@pytest.mark.parametrize("tcp", [False, True])
def test_fastcgi_pass_with_variables(make_server, tmp_path, php, tcp):
    """fastcgi_pass $var: an address (unix: or host:port) rendered per
    request, or the name of an upstream {}; a value that is no address is a
    500 with nginx's words."""
    fpm = php(tcp=tcp)
    srv = site(make_server, tmp_path, f"""
    upstream phpgroup {{ server {fpm.address}; }}
    map $arg_via $php_backend {{
        default {fpm.address};
        group   phpgroup;
        bad     "127.0.0.1";
    }}""" + php_location(fpm, php.www).replace(f"fastcgi_pass {fpm.address};", "fastcgi_pass $php_backend;"))
    for via in ("", "group"):
        r = harness.http(srv.port, f"/pid.php?via={via}")
        assert r.status == 200 and r.body.isdigit(), r
    assert harness.http(srv.port, "/pid.php?via=bad").status == 500
    harness.wait_until(lambda: "no port in upstream \"127.0.0.1\"" in srv.error_log.read_text(), 10, what="the error")


def test_intercept_errors(make_server, tmp_path, php):
    fpm = php()
    srv = site(make_server, tmp_path, php_location(
        fpm, php.www, "fastcgi_intercept_errors on; error_page 404 /custom404.html;"))
    r = harness.http(srv.port, "/status.php")
    assert r.status == 404 and r.body == b"custom not found page\n"


def test_catch_stderr_fails_the_try(make_server, tmp_path, php):
    fpm = php()
    srv = site(make_server, tmp_path, php_location(fpm, php.www, 'fastcgi_catch_stderr "FATAL-MARK";'))
    r = harness.http(srv.port, "/caught.php")
    assert r.status == 502 and b"should not be seen" not in r.body
    assert harness.http(srv.port, "/info.php").status == 200


def test_read_timeout_is_504(make_server, tmp_path, php):
    fpm = php()
    srv = site(make_server, tmp_path, php_location(fpm, php.www, "fastcgi_read_timeout 1s;"))
    started = time.monotonic()
    r = harness.http(srv.port, "/slow.php?s=4")
    assert r.status == 504 and time.monotonic() - started < 3.5
    harness.wait_until(lambda: "upstream timed out" in srv.error_log_text(), 5, what="the timeout line")
    assert "while reading response header from upstream" in srv.error_log_text()


def test_dead_socket_is_502(make_server, tmp_path, php):
    # One socket path nobody ever created, one bound by nobody listening.
    dead = tmp_path / "dead.sock"
    holder = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    holder.bind(str(dead))
    try:
        srv = site(make_server, tmp_path, f"""
        server {{
            listen 127.0.0.1:@PORT@;
            root {php.www};
            location /none {{ include fastcgi.conf; fastcgi_pass unix:{tmp_path}/none.sock; }}
            location /dead {{ include fastcgi.conf; fastcgi_pass unix:{dead}; }}
        }}""")
        assert harness.http(srv.port, "/none").status == 502
        assert harness.http(srv.port, "/dead").status == 502
        assert "connect() to unix:" in srv.error_log_text() or "connect() failed" in srv.error_log_text()
    finally:
        holder.close()


def test_next_upstream_skips_a_dead_server(make_server, tmp_path, php):
    fpm = php()
    srv = site(make_server, tmp_path, f"""
    upstream php {{ server unix:{tmp_path}/none.sock; server {fpm.address}; }}
    server {{
        listen 127.0.0.1:@PORT@;
        root {php.www};
        location ~ \\.php$ {{ include fastcgi.conf; fastcgi_pass php; }}
    }}""")
    for _ in range(4):
        assert harness.http(srv.port, "/pid.php").status == 200


def _keepalive_site(make_server, tmp_path, php, fpm, keep_conn):
    return site(make_server, tmp_path, f"""
    upstream php {{ server {fpm.address}; keepalive 4; }}
    server {{
        listen 127.0.0.1:@PORT@;
        root {php.www};
        location ~ \\.php$ {{
            include fastcgi.conf;
            fastcgi_keep_conn {keep_conn};
            fastcgi_pass php;
        }}
    }}""")


def test_keep_conn_reuses_fastcgi_connections(make_server, tmp_path, php):
    fpm = php(tcp=True)
    srv = _keepalive_site(make_server, tmp_path, php, fpm, "on")
    seen = set()
    for i in range(10):
        r = harness.http(srv.port, f"/pid.php?i={i}")
        assert r.status == 200
        seen |= established_to(fpm.port)
    # One connection to php-fpm served every request, and it is still open.
    assert len(seen) == 1, seen
    assert established_to(fpm.port) == seen


def test_without_keep_conn_each_request_connects(make_server, tmp_path, php):
    fpm = php(tcp=True)
    srv = _keepalive_site(make_server, tmp_path, php, fpm, "off")
    for i in range(3):
        assert harness.http(srv.port, f"/pid.php?i={i}").status == 200
        # php-fpm ends the connection after the request; so does the server.
        harness.wait_until(lambda: not established_to(fpm.port), 5, what="the FastCGI connection to close")


def _upload(port, path, size, chunk=1 << 20):
    """Streams `size` bytes of a known pattern as the body; returns the
    response and the body's md5."""
    md5 = hashlib.md5()
    block = bytes(range(256)) * (chunk // 256)
    with harness.Conn(port, timeout=60) as c:
        c.send(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
               f"Content-Length: {size}\r\nConnection: close\r\n\r\n")
        sent = 0
        while sent < size:
            piece = block[:min(chunk, size - sent)]
            c.sock.sendall(piece)
            md5.update(piece)
            sent += len(piece)
        return c.read_response("POST"), md5.hexdigest()


@pytest.mark.parametrize("buffering", ["on", "off"])
def test_100mb_upload_streams_with_flat_memory(make_server, tmp_path, php, buffering, monkeypatch):
    # A sanitizer build holds freed memory in quarantine (256 MB by default),
    # which would look like growth; keep it small for this measure.
    monkeypatch.setenv("ASAN_OPTIONS", os.environ.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=4")
    fpm = php(ini={"post_max_size": "0"})
    srv = site(make_server, tmp_path, php_location(
        fpm, php.www, f"fastcgi_request_buffering {buffering}; client_max_body_size 200m;"))
    assert harness.http(srv.port, "/pid.php").status == 200  # warmed up
    before = server_rss_kb(srv)
    size = 100 * 1024 * 1024
    r, md5 = _upload(srv.port, "/upload.php", size)
    assert r.status == 200, r.body[:300]
    got = json.loads(r.body)
    assert got == {"length": size, "md5": md5}
    # The body went through, not into memory.
    assert server_peak_rss_kb(srv) - before < 40 * 1024, (before, server_peak_rss_kb(srv))


def test_large_response_streams_with_back_pressure(make_server, tmp_path, php, monkeypatch):
    # A sanitizer build holds freed memory in quarantine (256 MB by default),
    # which would look like growth; keep it small for this measure.
    monkeypatch.setenv("ASAN_OPTIONS", os.environ.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=4")
    fpm = php()
    srv = site(make_server, tmp_path, php_location(fpm, php.www))
    assert harness.http(srv.port, "/pid.php").status == 200
    before = server_rss_kb(srv)
    mb = 64
    with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)
        s.sendall(f"GET /download.php?mb={mb} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        data = bytearray()
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            time.sleep(0.0005)  # a slow reader: the server must not buffer ahead of it
    head, _, body = bytes(data).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    assert b"chunked" in head.lower()
    # De-chunk.
    out = bytearray()
    at = 0
    while True:
        eol = body.index(b"\r\n", at)
        n = int(body[at:eol], 16)
        if n == 0:
            break
        out += body[eol + 2:eol + 2 + n]
        at = eol + 2 + n + 2
    assert len(out) == mb * 1024 * 1024
    assert out[:32] == b"0123456789abcdef" * 2
    assert server_peak_rss_kb(srv) - before < 32 * 1024


def test_http2_clients(make_server, tmp_path, php):
    fpm = php()
    srv = site(make_server, tmp_path, php_location(fpm, php.www, "client_max_body_size 10m;").replace(
        "listen 127.0.0.1:@PORT@;", "listen 127.0.0.1:@PORT@ http2;"))
    url = f"http://127.0.0.1:{srv.port}"
    out = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-H", "X-Custom: h2",
                          f"{url}/info.php/p?q=1"], capture_output=True, check=True, timeout=30).stdout
    assert out.startswith(b"{"), out
    v = json.loads(out)
    assert v["PATH_INFO"] == "/p" and v["QUERY_STRING"] == "q=1" and v["HTTP_X_CUSTOM"] == "h2"
    assert v["SERVER_PROTOCOL"] == "HTTP/2.0"
    body = tmp_path / "body.bin"
    body.write_bytes(b"x" * (3 * 1024 * 1024 + 7))
    out = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "--data-binary", f"@{body}",
                          "-H", "Content-Type: application/octet-stream", f"{url}/upload.php"],
                         capture_output=True, check=True, timeout=30).stdout
    assert json.loads(out) == {"length": 3 * 1024 * 1024 + 7,
                               "md5": hashlib.md5(body.read_bytes()).hexdigest()}
    out = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-o", "/dev/null", "-w", "%{http_code} %{size_download}",
                          f"{url}/download.php?mb=8"], capture_output=True, check=True, timeout=30).stdout
    assert out == f"200 {8 * 1024 * 1024}".encode()


def test_chunked_upload_is_buffered_with_its_length(make_server, tmp_path, php, nginx_only_skip):
    # FastCGI applications need CONTENT_LENGTH: a chunked body is read whole
    # first (even with fastcgi_request_buffering off) and $content_length
    # is then its size, as nginx's current sources count it
    # (ngx_http_variable_content_length falls back to content_length_n).
    # Debian's nginx 1.22 sends an empty CONTENT_LENGTH and PHP reads no
    # body, hence torii only.
    fpm = php()
    srv = site(make_server, tmp_path, php_location(fpm, php.www, "fastcgi_request_buffering off;"))
    pieces = [b"a" * 1000, b"b" * 70000, b"c" * 5]
    body = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"
    with harness.Conn(srv.port) as c:
        c.send(b"POST /upload.php HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n" + body)
        r = c.read_response("POST")
    whole = b"".join(pieces)
    assert r.status == 200 and json.loads(r.body) == {"length": len(whole), "md5": hashlib.md5(whole).hexdigest()}


def test_fastcgi_cache_shares_the_proxy_cache(make_server, tmp_path, php):
    """fastcgi_cache*: the same engine and $upstream_cache_status as proxy_cache."""
    fpm = php()
    http = "fastcgi_cache_path @PREFIX@/fcache levels=1:2 keys_zone=php:1m;\n" + php_location(fpm, php.www, """
            fastcgi_cache php;
            fastcgi_cache_key $request_uri;
            fastcgi_cache_valid 200 10m;
            add_header X-Cache $upstream_cache_status always;
    """)
    srv = site(make_server, tmp_path, http)
    first = harness.http(srv.port, "/clock.php")
    second = harness.http(srv.port, "/clock.php")
    other = harness.http(srv.port, "/clock.php?x=1")
    assert (first.status, first.header("X-Cache")) == (200, "MISS")
    assert (second.status, second.header("X-Cache")) == (200, "HIT")
    assert second.body == first.body  # the application ran once
    assert other.header("X-Cache") == "MISS" and other.body != first.body


def test_accel_redirect_from_php_serves_a_protected_file(make_server, tmp_path, php):
    """The protected download of PHP apps: the script checks access and
    names an internal location; the file goes out with the script's fields."""
    fpm = php()
    (php.www / "protected").mkdir()
    (php.www / "protected" / "report.pdf").write_bytes(b"%PDF-1.4 protected\n")
    srv = site(make_server, tmp_path, php_location(fpm, php.www).rstrip().rstrip("}") +
               "    location /protected/ { internal; }\n    }")
    assert harness.http(srv.port, "/protected/report.pdf").status == 404
    r = harness.http(srv.port, "/protected.php")
    assert r.status == 200 and r.body == b"%PDF-1.4 protected\n"
    assert r.header("Content-Type") == "application/pdf"
    assert r.header("Content-Disposition") == 'attachment; filename="report.pdf"'
    assert r.header("X-Accel-Redirect") is None
