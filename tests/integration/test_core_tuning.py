"""http-core and gzip directives that nginx added late or that old configs
carry: max_headers (nginx 1.27.0), keepalive_min_timeout (nginx 1.27.4),
client_body_in_file_only, client_body_in_single_buffer,
subrequest_output_buffer_size, gzip_no_buffer and postpone_gzipping.
The tests of the directives nginx 1.22 has pass with
TORII_BIN=/usr/sbin/nginx; those of the two newer ones skip there (1.22
refuses them as unknown)."""

import os
import re
import signal
import subprocess
import time

import pytest

import harness


def site_conf(server="", http="", listen="listen 127.0.0.1:@PORT@;"):
    return harness.base_conf(error_level="info", http=f"""
    {http}
    server {{
        {listen}
        server_name localhost;
        root @PREFIX@/www;
        location /ret {{ return 200 "returned\\n"; }}
        {server}
    }}
""")


@pytest.fixture
def site(make_server):
    def make(server="", http="", **kwargs):
        s = make_server(site_conf(server, http, **kwargs), start=False)
        (s.prefix / "www").mkdir(exist_ok=True)
        (s.prefix / "www" / "index.html").write_text("hello\n")
        s.start()
        return s
    return make


@pytest.fixture
def newer_than_122():
    harness.skip_if_nginx_older((1, 27), "a directive nginx added in 1.27")


def config_check(make_server, http):
    """`-t` on a config with `http` in its http block: (ok, output)."""
    s = make_server(harness.base_conf(http=http), start=False)
    s.ports = [0]
    s.write_conf()
    out = harness.cli(["-t", "-c", str(s.conf_path)], prefix=s.prefix)
    return out.returncode == 0, out.stdout + out.stderr


def raw_request(n_fields):
    """A GET with Host and n_fields - 1 more fields: n_fields in all."""
    lines = ["GET /ret HTTP/1.1", "Host: localhost"]
    lines += [f"X-Field-{i}: {i}" for i in range(n_fields - 1)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


# ---------------------------------------------------------------------------
# max_headers


def test_max_headers_http1_refuses_one_field_more(site, newer_than_122):
    s = site(http="max_headers 5;")
    with harness.Conn(s.port) as c:
        c.send(raw_request(5))
        r = c.read_response()
        assert r.status == 200 and r.body == b"returned\n"
    with harness.Conn(s.port) as c:
        c.send(raw_request(6))
        r = c.read_response()
        assert r.status == 400, r
        assert b"Request Header Or Cookie Too Large" in r.body
        assert c.closed_within(5)
    harness.wait_until(lambda: "client sent too many header lines" in s.error_log_text(), 5,
                       what="the info line")


def test_max_headers_default_is_1000(site, newer_than_122):
    s = site()
    with harness.Conn(s.port) as c:
        c.send(raw_request(1000))
        assert c.read_response().status == 200
    with harness.Conn(s.port) as c:
        c.send(raw_request(1001))
        assert c.read_response().status == 400


def test_max_headers_in_a_server_block(site, newer_than_122):
    s = site(server="max_headers 3;")
    with harness.Conn(s.port) as c:
        c.send(raw_request(4))
        assert c.read_response().status == 400


def curl_h2(port, n_extra):
    """curl over h2c with only pseudo-headers and n_extra fields of ours."""
    cmd = ["curl", "-s", "--http2-prior-knowledge", "-o", "/dev/null", "-w", "%{http_code} %{http_version}",
           "-H", "User-Agent:", "-H", "Accept:", f"http://127.0.0.1:{port}/ret"]
    for i in range(n_extra):
        cmd[-1:-1] = ["-H", f"x-field-{i}: {i}"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout


def test_max_headers_http2(site, newer_than_122):
    s = site(http="max_headers 4;", listen="listen 127.0.0.1:@PORT@ http2;")
    assert curl_h2(s.port, 4) == "200 2"
    assert curl_h2(s.port, 5) == "400 2"
    harness.wait_until(lambda: "client sent too many header lines" in s.error_log_text(), 5,
                       what="the info line")


def test_max_headers_bad_value(make_server, newer_than_122):
    ok, out = config_check(make_server, "max_headers lots;")
    assert not ok and '"max_headers" directive invalid number' in out, out
    ok, out = config_check(make_server, "server { location / { max_headers 5; } }")
    assert not ok and '"max_headers" directive is not allowed here' in out, out


# ---------------------------------------------------------------------------
# keepalive_min_timeout


def stop_gracefully_and_wait_for_listener_gone(s):
    s.signal(signal.SIGQUIT)
    harness.wait_until(lambda: not harness.connectable(s.port), 10, what="the listener to close")


def test_keepalive_min_timeout_keeps_an_idle_connection_through_a_graceful_stop(site, newer_than_122):
    s = site(server="keepalive_min_timeout 30s;")
    with harness.Conn(s.port) as c:
        assert c.request("GET", "/ret").status == 200
        stop_gracefully_and_wait_for_listener_gone(s)
        # Still open: the next request is answered, and the connection ends after it.
        r = c.request("GET", "/ret")
        assert r.status == 200 and r.body == b"returned\n"
        assert r.header("Connection", "").lower() == "close"
        assert c.closed_within(10)
    assert s.wait_exit(10) is not None


def test_keepalive_min_timeout_then_the_idle_connection_closes(site, newer_than_122):
    s = site(server="keepalive_min_timeout 2s;")
    with harness.Conn(s.port) as c:
        assert c.request("GET", "/ret").status == 200
        idle_since = time.monotonic()
        stop_gracefully_and_wait_for_listener_gone(s)
        assert c.closed_within(20)
        assert time.monotonic() - idle_since >= 1.9
    assert s.wait_exit(10) is not None


def test_without_keepalive_min_timeout_a_graceful_stop_closes_idle_connections(site):
    s = site()
    with harness.Conn(s.port) as c:
        assert c.request("GET", "/ret").status == 200
        stop_gracefully_and_wait_for_listener_gone(s)
        assert c.closed_within(10)
    assert s.wait_exit(10) is not None


def test_keepalive_min_timeout_bad_value(make_server, newer_than_122):
    ok, out = config_check(make_server, "keepalive_min_timeout soon;")
    assert not ok and '"keepalive_min_timeout" directive invalid value' in out, out


# ---------------------------------------------------------------------------
# client_body_in_file_only


def body_site(make_server, mode):
    conf = harness.base_conf(error_level="notice", http=f"""
    client_body_temp_path @PREFIX@/body;
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{
            client_body_in_file_only {mode};
            proxy_pass http://127.0.0.1:@PORT1@;
        }}
    }}
    server {{
        listen 127.0.0.1:@PORT1@;
        location / {{ return 200 "upstream got $http_content_length\\n"; }}
    }}
""")
    return make_server(conf, nports=2)


def kept_files(s):
    d = s.prefix / "body"
    return sorted(p for p in d.rglob("*") if p.is_file()) if d.exists() else []


def test_client_body_in_file_only_on_keeps_the_body_file(make_server):
    s = body_site(make_server, "on")
    r = harness.http(s.port, "/up", method="POST", body="small body")
    assert r.status == 200 and r.body == b"upstream got 10\n"
    files = harness.wait_until(lambda: kept_files(s), 5, what="the kept body file")
    assert len(files) == 1 and re.fullmatch(r"\d{10}", files[0].name), files
    assert files[0].read_bytes() == b"small body"
    harness.wait_until(lambda: f"a client request body is buffered to a temporary file {files[0]}"
                       in s.error_log_text(), 5, what="the notice line")
    r = harness.http(s.port, "/up", method="POST", body="another one")
    assert r.status == 200
    files = harness.wait_until(lambda: len(kept_files(s)) == 2 and kept_files(s), 5, what="a second file")
    assert sorted(f.read_bytes() for f in files) == [b"another one", b"small body"]


def test_client_body_in_file_only_clean_removes_it(make_server):
    s = body_site(make_server, "clean")
    r = harness.http(s.port, "/up", method="POST", body="small body")
    assert r.status == 200 and r.body == b"upstream got 10\n"
    # The body went through a named file (the notice line names it) that is gone.
    line = harness.wait_until(
        lambda: re.search(r"a client request body is buffered to a temporary file (\S+)", s.error_log_text()), 5,
        what="the notice line")
    harness.wait_until(lambda: not os.path.exists(line.group(1).rstrip(",")), 5, what="the file to go")
    assert kept_files(s) == []


def test_client_body_in_file_only_off_keeps_nothing(make_server):
    s = body_site(make_server, "off")
    r = harness.http(s.port, "/up", method="POST", body="small body")
    assert r.status == 200 and r.body == b"upstream got 10\n"
    assert kept_files(s) == []
    assert "a client request body is buffered" not in s.error_log_text()


# ---------------------------------------------------------------------------
# Accepted with nginx's checks


def test_old_directives_load(make_server):
    ok, out = config_check(make_server, """
    client_body_in_single_buffer on;
    client_body_in_file_only clean;
    subrequest_output_buffer_size 16k;
    gzip_no_buffer on;
    postpone_gzipping 2k;
    server {
        location / {
            client_body_in_single_buffer off;
            client_body_in_file_only off;
            subrequest_output_buffer_size 8k;
            gzip_no_buffer off;
            postpone_gzipping 0;
        }
    }
""")
    assert ok, out


@pytest.mark.parametrize("line,message", [
    ("client_body_in_file_only sometimes;", 'invalid value "sometimes"'),
    ("client_body_in_single_buffer yes;", 'invalid value "yes" in "client_body_in_single_buffer" directive'),
    ("gzip_no_buffer yes;", 'invalid value "yes" in "gzip_no_buffer" directive'),
    ("postpone_gzipping lots;", '"postpone_gzipping" directive invalid value'),
    ("subrequest_output_buffer_size lots;", '"subrequest_output_buffer_size" directive invalid value'),
])
def test_old_directives_bad_values(make_server, line, message):
    ok, out = config_check(make_server, line)
    assert not ok and message in out, out
