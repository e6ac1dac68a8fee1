"""The reverse proxy: proxy_pass to upstream groups, with nginx and a
misbehaving Python server (bad_upstream.py) as the upstreams."""

import os
import shutil
import signal
import socket
import subprocess
import time

import zlib

import pytest

import harness
from bad_upstream import BadUpstream, swallow_and_close

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


# ---------------------------------------------------------------------------
# Fixtures


@pytest.fixture
def upstreams():
    """upstreams(name) -> a running BadUpstream, stopped after the test."""
    made = []

    def make(name="bad"):
        u = BadUpstream(name)
        made.append(u)
        return u
    yield make
    for u in made:
        u.stop()


@pytest.fixture
def refused_port():
    """A port nobody listens on (held so no other test takes it)."""
    lease = harness.PortLease()
    yield lease.port
    lease.release()


@pytest.fixture
def nginx_backend(tmp_path):
    """nginx_backend(server_block_body, files={}) -> port of an nginx upstream."""
    procs = []

    def start(body, files=None):
        lease = harness.PortLease()
        prefix = tmp_path / f"nginx{len(procs)}"
        (prefix / "logs").mkdir(parents=True)
        (prefix / "html").mkdir()
        for name, data in (files or {}).items():
            (prefix / "html" / name).write_bytes(data)
        conf = prefix / "nginx.conf"
        conf.write_text(f"""
pid {prefix}/logs/nginx.pid;
error_log {prefix}/logs/error.log;
{'user root;' if os.geteuid() == 0 else ''}
events {{ worker_connections 1024; }}
http {{
    access_log off;
    keepalive_requests 100000;
    server {{
        listen 127.0.0.1:{lease.port};
        root {prefix}/html;
        {body}
    }}
}}
""")
        lease.release()
        proc = subprocess.Popen([NGINX, "-p", str(prefix) + "/", "-c", str(conf), "-e", "stderr",
                                 "-g", "daemon off; master_process off;"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
        procs.append(proc)
        harness.wait_until(lambda: harness.connectable(lease.port), 10, what="nginx backend")
        return lease.port
    yield start
    for p in procs:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()


def proxy_conf(http):
    return harness.base_conf(http=http, error_level="info")


def error_log_has(server, text, timeout=5):
    harness.wait_until(lambda: text in server.error_log_text(), timeout, what=repr(text))


def body_of(port, path, **kw):
    return harness.http(port, path, **kw).body.decode("latin-1")


# ---------------------------------------------------------------------------
# Request forwarding


def test_headers_forwarded_byte_for_byte(make_server, upstreams):
    up = upstreams()
    srv = make_server(proxy_conf(f"""
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{
            proxy_pass http://127.0.0.1:{up.port};
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Empty "";
        }}
    }}"""))
    resp = harness.http(srv.port, "/echo/a%20b?x=1&y=%41",
                        headers=[("X-Forwarded-For", "10.0.0.1"), ("X-Custom", "  v1 "),
                                 ("X-Empty", "gone"), ("Keep-Alive", "300"), ("TE", "trailers"),
                                 ("Upgrade", "foo"), ("Cookie", "a=b")])
    assert resp.status == 200
    sent = resp.body.decode("latin-1")
    lines = sent.split("\r\n")
    assert lines[0] == "GET /echo/a%20b?x=1&y=%41 HTTP/1.0"
    # proxy_set_header fields first, then the defaults Host $proxy_host and
    # Connection close, then the client's fields (nginx's order).
    assert lines[1] == "X-Forwarded-For: 10.0.0.1, 127.0.0.1"
    assert lines[2] == f"Host: 127.0.0.1:{up.port}"
    assert lines[3] == "Connection: close"
    assert "X-Custom: v1" in lines
    assert "Cookie: a=b" in lines
    for hop in ("Keep-Alive", "TE", "Upgrade", "X-Empty"):
        assert not any(l.lower().startswith(hop.lower() + ":") for l in lines), hop
    # Hop-by-hop fields of the response are not passed back either.
    assert resp.header("Keep-Alive") is None and resp.header("X-Hop") == "1"
    assert resp.header("Server", "").startswith("nginx" if harness.IS_NGINX else "torii")


def test_upstream_variables_in_add_header(make_server, upstreams):
    # A header filter already sees the try that answered (a common
    # `add_header X-Upstream $upstream_addr` for debugging).
    up = upstreams()
    srv = make_server(proxy_conf(f"""
    upstream u {{ server 127.0.0.1:{up.port}; }}
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{
            proxy_pass http://u;
            add_header X-IP "[$upstream_addr]";
            add_header X-St "[$upstream_status]";
        }}
    }}"""))
    r = harness.http(srv.port, "/echo/")
    assert r.status == 200
    assert r.header("X-IP") == f"[127.0.0.1:{up.port}]" and r.header("X-St") == "[200]"


def test_each_set_header_line_is_a_field(make_server, upstreams):
    # Two lines of one name send both, in order; an empty one is left out.
    # Jenkins' documented block writes `Connection $connection_upgrade;`
    # then `Connection "";`: the first still goes.
    up = upstreams()
    srv = make_server(proxy_conf(f"""
    map $http_upgrade $connection_upgrade {{
        default upgrade;
        ''      close;
    }}
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{
            proxy_pass http://127.0.0.1:{up.port};
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Connection "";
            proxy_set_header X-A one;
            proxy_set_header X-A two;
        }}
    }}"""))
    lines = body_of(srv.port, "/echo/").split("\r\n")
    assert "Connection: close" in lines
    assert [l for l in lines if l.startswith("X-A:")] == ["X-A: one", "X-A: two"]


def test_host_and_uri_rules(make_server, upstreams):
    up = upstreams()
    srv = make_server(proxy_conf(f"""
    upstream grp {{ server 127.0.0.1:{up.port}; }}
    server {{
        listen 127.0.0.1:@PORT@;
        server_name example.test;
        location /a/ {{ proxy_pass http://grp/echo/; }}
        location /b/ {{ proxy_pass http://grp; proxy_set_header Host $host; }}
        location /c {{ proxy_pass http://127.0.0.1:{up.port}/echo; }}
        location ~ ^/re/ {{ proxy_pass http://grp; }}
    }}"""))
    first = lambda p, **kw: body_of(srv.port, p, **kw).split("\r\n")
    lines = first("/a/x/y?q=1")
    assert lines[0] == "GET /echo/x/y?q=1 HTTP/1.0" and lines[1] == "Host: grp"
    lines = first("/b/echo%2Fz", host="example.test")
    assert lines[0] == "GET /b/echo%2Fz HTTP/1.0" and lines[1] == "Host: example.test"
    assert first("/cdef")[0] == "GET /echodef HTTP/1.0"
    assert first("/re/echo")[0] == "GET /re/echo HTTP/1.0"


def test_request_bodies(make_server, upstreams):
    up = upstreams()
    srv = make_server(proxy_conf(f"""
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{ proxy_pass http://127.0.0.1:{up.port}; proxy_http_version 1.1; }}
        location /stream/ {{
            proxy_pass http://127.0.0.1:{up.port}/echo/;
            proxy_http_version 1.1;
            proxy_request_buffering off;
        }}
    }}"""))
    body = bytes(range(256)) * 100
    resp = harness.http(srv.port, "/echo", method="POST", body=body)
    assert resp.body.endswith(b"\r\nContent-Length: 25600\r\n\r\n" + body)
    # A chunked request body is read whole and sent with a length.
    chunked = b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
    resp = harness.http(srv.port, "/echo", method="PUT", body=chunked,
                        headers=[("Transfer-Encoding", "chunked")])
    assert resp.body.endswith(b"\r\nContent-Length: 11\r\n\r\nhello world")
    # Without request buffering it streams: chunked (nginx sends a length
    # when the whole body came with the head).
    resp = harness.http(srv.port, "/stream/", method="POST", body=chunked,
                        headers=[("Transfer-Encoding", "chunked")])
    if harness.IS_NGINX:
        assert resp.body.endswith(b"hello world")
    else:
        assert b"\r\nTransfer-Encoding: chunked\r\n\r\n" in resp.body
        assert resp.body.endswith(b"hello\r\n6\r\n world\r\n0\r\n\r\n")
    resp = harness.http(srv.port, "/stream/", method="POST", body=body)
    assert resp.body.endswith(b"\r\nContent-Length: 25600\r\n\r\n" + body)


def test_large_buffered_body_goes_through_a_temp_file(make_server, upstreams):
    # Beyond client_body_buffer_size the body waits in a nameless file under
    # client_body_temp_path; a retry sends it again from the start.
    up = upstreams()
    closer = swallow_and_close()
    srv = make_server(proxy_conf(f"""
    upstream pair {{ server 127.0.0.1:{closer.port}; server 127.0.0.1:{up.port}; }}
    client_max_body_size 8m;
    client_body_buffer_size 16k;
    client_body_temp_path @PREFIX@/bodies 1 2;
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{ proxy_pass http://127.0.0.1:{up.port}; proxy_http_version 1.1; }}
        location /retry/ {{ proxy_pass http://pair/echo/; }}
    }}"""))
    body = os.urandom(4 * 1024 * 1024)
    resp = harness.http(srv.port, "/echo", method="POST", body=body, timeout=30)
    assert resp.status == 200
    assert resp.body.endswith(b"\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    temp_dir = srv.prefix / "bodies"
    assert temp_dir.is_dir() and [p for p in temp_dir.rglob("*") if not p.is_dir()] == []  # nothing left
    # The first server takes some bytes and hangs up; PUT is retried in full.
    resp = harness.http(srv.port, "/retry/x", method="PUT", body=body, timeout=30)
    assert resp.status == 200
    assert closer.received and resp.body.endswith(b"\r\n\r\n" + body)


@pytest.mark.skipif(harness.IS_NGINX, reason="nginx makes its temp paths at startup and will not start")
def test_body_temp_file_failure_is_a_500(make_server, upstreams):
    # torii makes the folder when a body first needs it; if it cannot, that
    # request gets a 500 and the error log says why.
    up = upstreams()
    srv = make_server(proxy_conf(f"""
    client_body_temp_path @PREFIX@/conf/not-a-dir/bodies;
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{ proxy_pass http://127.0.0.1:{up.port}; }}
    }}"""), start=False)
    (srv.prefix / "conf").mkdir(parents=True, exist_ok=True)
    (srv.prefix / "conf" / "not-a-dir").write_text("a file")
    srv.start()
    # A small body stays in memory and needs no temporary file.
    assert harness.http(srv.port, "/echo", method="POST", body=b"small").status == 200
    resp = harness.http(srv.port, "/echo", method="POST", body=b"x" * 100_000)
    assert resp.status == 500
    error_log_has(srv, "open() temporary file")
    assert up.requests and all(b"x" * 100 not in r for r in up.requests)


# ---------------------------------------------------------------------------
# nginx as the backend: keep-alive, large bodies


def test_server_and_date_once_and_passed_when_asked(make_server, upstreams):
    # The upstream's Server and Date are hidden by default (the proxy's own
    # go out); proxy_pass_header passes them instead, never beside ours.
    up = upstreams()
    server = make_server(proxy_conf(f"""
    server {{
        listen 127.0.0.1:@PORT@;
        location /own/ {{ proxy_pass http://127.0.0.1:{up.port}/; }}
        location /passed/ {{
            proxy_pass http://127.0.0.1:{up.port}/;
            proxy_pass_header Server;
            proxy_pass_header Date;
        }}
    }}
"""))
    own = harness.http(server.port, "/own/stamped")
    assert own.status == 200
    assert len(own.header_all("Server")) == 1 and own.header("Server") != "bad-upstream"
    assert len(own.header_all("Date")) == 1 and "2001" not in own.header("Date")
    passed = harness.http(server.port, "/passed/stamped")
    assert passed.header_all("Server") == ["bad-upstream"]
    assert passed.header_all("Date") == ["Mon, 01 Jan 2001 00:00:00 GMT"]


def test_keepalive_reuses_upstream_connections(make_server, nginx_backend):
    port = nginx_backend('location / { return 200 "conn=$connection req=$connection_requests"; }')
    srv = make_server(proxy_conf(f"""
    upstream app {{ server 127.0.0.1:{port}; keepalive 4; }}
    server {{
        listen 127.0.0.1:@PORT@;
        location /ka/ {{ proxy_pass http://app/; proxy_http_version 1.1; proxy_set_header Connection ""; }}
        location /noka/ {{ proxy_pass http://app/; }}
    }}"""))
    conns = {body_of(srv.port, f"/ka/{i}").split()[0] for i in range(10)}
    assert len(conns) == 1, conns  # ten requests, from ten client connections, one upstream connection
    assert body_of(srv.port, "/ka/x").endswith("req=11")
    # Default (HTTP/1.0, Connection: close): a new upstream connection each time.
    conns = {body_of(srv.port, f"/noka/{i}").split()[0] for i in range(5)}
    assert len(conns) == 5


def test_keepalive_stale_connection_is_not_used(make_server, upstreams):
    up = upstreams()
    srv = make_server(proxy_conf(f"""
    upstream app {{ server 127.0.0.1:{up.port}; keepalive 4; }}
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{ proxy_pass http://app; proxy_http_version 1.1; proxy_set_header Connection ""; }}
    }}"""))
    assert body_of(srv.port, "/one") == "bad"
    assert body_of(srv.port, "/two") == "bad"
    assert up.connections == 1
    # The server closes a kept-alive connection after answering: the pooled
    # connection is dropped, not written into.
    assert body_of(srv.port, "/once") == "once"
    time.sleep(0.2)
    assert body_of(srv.port, "/three") == "bad"
    assert up.connections == 2


def _rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_large_response_streams_with_flat_memory(make_server, nginx_backend, monkeypatch):
    # A sanitizer build holds freed memory in quarantine (256 MB by default),
    # which would look like growth; keep it small for this measure.
    monkeypatch.setenv("ASAN_OPTIONS", os.environ.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=4")
    size = 200 * 1024 * 1024
    port = nginx_backend("location / { }")
    # A sparse file: nginx sends zeros without us writing 200 MB.
    srv = make_server(proxy_conf(f"""
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{ proxy_pass http://127.0.0.1:{port}; proxy_buffers 4 16k; }}
    }}"""))
    html = None
    for p in srv.prefix.parent.iterdir():
        if p.name.startswith("nginx"):
            html = p / "html"
    with open(html / "big.bin", "wb") as f:
        f.truncate(size)
    base = _rss_kb(srv.proc.pid)
    with socket.create_connection(("127.0.0.1", srv.port)) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        got = 0
        # A slow reader first: torii must not buffer the file for it.
        for _ in range(20):
            got += len(s.recv(4096))
            time.sleep(0.05)
        slow_rss = _rss_kb(srv.proc.pid)
        while True:
            data = s.recv(1 << 20)
            if not data:
                break
            got += len(data)
    peak = _rss_kb(srv.proc.pid)
    assert got > size
    assert slow_rss - base < 16 * 1024, (base, slow_rss)
    assert peak - base < 32 * 1024, (base, peak)


def test_large_chunked_response(make_server, upstreams):
    up = upstreams()
    srv = make_server(proxy_conf(f"""
    server {{ listen 127.0.0.1:@PORT@; location / {{ proxy_pass http://127.0.0.1:{up.port}; }} }}"""))
    resp = harness.http(srv.port, "/big/5000000")
    assert resp.status == 200 and resp.body == b"x" * 5000000


# ---------------------------------------------------------------------------
# Failures


def test_failure_modes(make_server, upstreams, refused_port):
    up = upstreams()
    srv = make_server(proxy_conf(f"""
    server {{
        listen 127.0.0.1:@PORT@;
        proxy_read_timeout 1s;
        location /refused {{ proxy_pass http://127.0.0.1:{refused_port}; }}
        location / {{ proxy_pass http://127.0.0.1:{up.port}; }}
    }}"""))
    assert harness.http(srv.port, "/refused").status == 502
    error_log_has(srv, "connect() failed (111: Connection refused) while connecting to upstream")
    error_log_has(srv, f'upstream: "http://127.0.0.1:{refused_port}/refused"')
    assert harness.http(srv.port, "/stall").status == 504
    error_log_has(srv, "upstream timed out (110: Connection timed out) while reading response header from upstream")
    assert harness.http(srv.port, "/close").status == 502
    error_log_has(srv, "upstream prematurely closed connection while reading response header from upstream")
    if not harness.IS_NGINX:
        # nginx passes an invalid status line on as an HTTP/0.9 body; torii
        # is strict: a malformed response is a 502.
        assert harness.http(srv.port, "/badstatus").status == 502
        error_log_has(srv, "upstream sent no valid HTTP/1.0 header while reading response header from upstream")
    assert harness.http(srv.port, "/badheader").status == 502
    error_log_has(srv, "upstream sent invalid header")  # nginx adds the line: ": \"Broken\\x20...\""
    # Closing mid-body: the head is out, so the client gets a cut response.
    with harness.Conn(srv.port) as c:
        c.send(harness.build_request("GET", "/midbody"))
        with pytest.raises(harness.ConnectionClosed):
            c.read_response()
    error_log_has(srv, "upstream prematurely closed connection while reading upstream")


def test_connect_timeout(make_server):
    # A listener whose backlog is full never completes a handshake.
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(0)
    port = s.getsockname()[1]
    fillers = []
    try:
        for _ in range(8):
            f = socket.socket()
            f.setblocking(False)
            try:
                f.connect(("127.0.0.1", port))
            except BlockingIOError:
                pass
            fillers.append(f)
        srv = make_server(proxy_conf(f"""
        server {{
            listen 127.0.0.1:@PORT@;
            location / {{ proxy_pass http://127.0.0.1:{port}; proxy_connect_timeout 500ms; }}
        }}"""))
        resp = harness.http(srv.port, "/")
        assert resp.status == 504
        error_log_has(srv, "upstream timed out (110: Connection timed out) while connecting to upstream")
    finally:
        for f in fillers:
            f.close()
        s.close()


def test_error_page_and_intercept(make_server, upstreams, refused_port):
    up = upstreams()
    srv = make_server(proxy_conf(f"""
    server {{
        listen 127.0.0.1:@PORT@;
        root @PREFIX@/html;
        error_page 500 502 503 504 /50x.html;
        location = /50x.html {{ }}
        location /down {{ proxy_pass http://127.0.0.1:{refused_port}; }}
        location /int/ {{ proxy_pass http://127.0.0.1:{up.port}/; proxy_intercept_errors on; }}
        location /pass/ {{ proxy_pass http://127.0.0.1:{up.port}/; }}
    }}"""), start=False)
    (srv.prefix / "html").mkdir()
    (srv.prefix / "html" / "50x.html").write_text("sorry\n")
    srv.start()
    resp = harness.http(srv.port, "/down")
    assert resp.status == 502 and resp.body == b"sorry\n"
    resp = harness.http(srv.port, "/int/status/500")
    assert resp.status == 500 and resp.body == b"sorry\n"
    resp = harness.http(srv.port, "/int/status/404")  # no error_page for 404: passed through
    assert resp.status == 404 and resp.body == b"status 404 from bad\n"
    resp = harness.http(srv.port, "/pass/status/500")
    assert resp.status == 500 and resp.body == b"status 500 from bad\n"


# ---------------------------------------------------------------------------
# Retries and passive health


def test_retries_follow_proxy_next_upstream(make_server, upstreams):
    a = upstreams("a")
    b = upstreams("b")
    srv = make_server(proxy_conf(f"""
    upstream two {{ server 127.0.0.1:{a.port} max_fails=0; server 127.0.0.1:{b.port} max_fails=0; }}
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{ proxy_pass http://two; }}
        location /ni/ {{ proxy_pass http://two/; proxy_next_upstream error timeout non_idempotent; }}
        location /off/ {{ proxy_pass http://two/; proxy_next_upstream off; }}
        location /s5/ {{ proxy_pass http://two/; proxy_next_upstream error http_503; }}
    }}"""))
    # /close fails after the request was sent: a GET is tried on the other server...
    statuses = [harness.http(srv.port, "/close").status for _ in range(4)]
    assert statuses == [502] * 4  # both servers close: tried twice each time
    assert len(a.requests) + len(b.requests) == 8
    # ... a POST is not (it may have been acted on), unless non_idempotent.
    before = len(a.requests) + len(b.requests)
    assert harness.http(srv.port, "/close", method="POST", body="x").status == 502
    assert len(a.requests) + len(b.requests) == before + 1
    assert harness.http(srv.port, "/ni/close", method="POST", body="x").status == 502
    assert len(a.requests) + len(b.requests) == before + 3
    assert harness.http(srv.port, "/off/close").status == 502
    assert len(a.requests) + len(b.requests) == before + 4
    # http_503: the other server answers; with both 503, the last one goes back.
    resp = harness.http(srv.port, "/s5/status/503")
    assert resp.status == 503 and resp.body.startswith(b"status 503")
    assert len(a.requests) + len(b.requests) == before + 6


def test_refused_server_is_skipped_and_comes_back(make_server, upstreams, refused_port):
    good = upstreams("good")
    srv = make_server(proxy_conf(f"""
    upstream app {{
        server 127.0.0.1:{refused_port} max_fails=1 fail_timeout=2s;
        server 127.0.0.1:{good.port};
    }}
    server {{ listen 127.0.0.1:@PORT@; location / {{ proxy_pass http://app; }} }}"""))
    for _ in range(6):
        assert body_of(srv.port, "/") == "good"  # the refused try is retried on the good one
    text = srv.error_log_text()
    assert text.count("Connection refused") == 1  # then the server is out for fail_timeout
    time.sleep(3.1)  # nginx counts fail_timeout in whole seconds
    for _ in range(4):
        assert body_of(srv.port, "/") == "good"
    assert srv.error_log_text().count("Connection refused") == 2  # tried once again, out again


def test_all_servers_down(make_server, refused_port):
    srv = make_server(proxy_conf(f"""
    upstream app {{ server 127.0.0.1:{refused_port} max_fails=1 fail_timeout=30s;
                    server 127.0.0.2:{refused_port} max_fails=1 fail_timeout=30s; }}
    server {{ listen 127.0.0.1:@PORT@; location / {{ proxy_pass http://app; }} }}"""))
    assert harness.http(srv.port, "/").status == 502
    assert harness.http(srv.port, "/").status == 502
    error_log_has(srv, 'no live upstreams while connecting to upstream')


def test_backup_server(make_server, upstreams, refused_port):
    backup = upstreams("backup")
    srv = make_server(proxy_conf(f"""
    upstream app {{ server 127.0.0.1:{refused_port}; server 127.0.0.1:{backup.port} backup; }}
    server {{ listen 127.0.0.1:@PORT@; location / {{ proxy_pass http://app; }} }}"""))
    assert body_of(srv.port, "/") == "backup"


# ---------------------------------------------------------------------------
# Balancing


def _spread(port, n, path="/", **kw):
    counts = {}
    for i in range(n):
        name = body_of(port, path.replace("@I@", str(i)), **kw)
        counts[name] = counts.get(name, 0) + 1
    return counts


def test_balancers(make_server, upstreams):
    ups = [upstreams(f"u{i}") for i in range(3)]
    servers = lambda extra="": "\n".join(
        f"server 127.0.0.1:{u.port}{' weight=2' if i == 0 and extra else ''};" for i, u in enumerate(ups))
    srv = make_server(proxy_conf(f"""
    upstream rr {{ {servers()} }}
    upstream wrr {{ {servers('w')} }}
    upstream lc {{ least_conn; {servers()} }}
    upstream iph {{ ip_hash; {servers()} }}
    upstream h {{ hash $arg_k; {servers()} }}
    upstream hc {{ hash $arg_k consistent; {servers()} }}
    upstream rnd {{ random two; {servers()} }}
    server {{
        listen 127.0.0.1:@PORT@;
        location /rr {{ proxy_pass http://rr; }}
        location /wrr {{ proxy_pass http://wrr; }}
        location /lc {{ proxy_pass http://lc; }}
        location /iph {{ proxy_pass http://iph; }}
        location /h {{ proxy_pass http://h; }}
        location /hc {{ proxy_pass http://hc; }}
        location /rnd {{ proxy_pass http://rnd; }}
    }}"""))
    assert _spread(srv.port, 9, "/rr") == {"u0": 3, "u1": 3, "u2": 3}
    assert _spread(srv.port, 8, "/wrr") == {"u0": 4, "u1": 2, "u2": 2}
    assert _spread(srv.port, 9, "/lc") == {"u0": 3, "u1": 3, "u2": 3}  # idle servers: round robin
    assert len(_spread(srv.port, 6, "/iph")) == 1
    for path in ("/h?k=@I@", "/hc?k=@I@"):
        first = [body_of(srv.port, path.replace("@I@", str(i))) for i in range(12)]
        again = [body_of(srv.port, path.replace("@I@", str(i))) for i in range(12)]
        assert first == again and len(set(first)) > 1, (path, first)
    assert sum(_spread(srv.port, 12, "/rnd").values()) == 12


def _memcached_hash_choice(key, weights):
    """Cache::Memcached's choice, which nginx's `hash` follows: the sum of
    (crc32([n] KEY) >> 16) & 0x7fff mapped onto the weights (all servers
    up, so the first try stands)."""
    h = (zlib.crc32(key.encode()) >> 16) & 0x7fff
    w = h % sum(weights)
    for i, weight in enumerate(weights):
        if w < weight:
            return i
        w -= weight


def _ketama_choice(key, addresses, weights):
    """Cache::Memcached::Fast's consistent points, which nginx's `hash ...
    consistent` builds: 160 per weight unit of crc32(HOST \\0 PORT PREV)."""
    points = []
    for i, (addr, weight) in enumerate(zip(addresses, weights)):
        host, port = addr.rsplit(":", 1)
        prev = 0
        for _ in range(160 * weight):
            prev = zlib.crc32(host.encode() + b"\0" + port.encode() + prev.to_bytes(4, "little"))
            points.append((prev, i))
    points.sort(key=lambda p: p[0])
    h = zlib.crc32(key.encode())
    for point, i in points:
        if point >= h:
            return i
    return points[0][1]


def test_hash_balancers_pick_what_memcached_clients_pick(make_server, upstreams):
    # An application writing to memcached with Cache::Memcached(::Fast)
    # and nginx reading with memcached_pass agree on the node only if the
    # server computes their formulas; so do caches warmed behind nginx.
    ups = [upstreams(f"u{i}") for i in range(3)]
    weights = [2, 1, 1]
    addresses = [f"127.0.0.1:{u.port}" for u in ups]
    servers = "\n".join(f"server {a} weight={w};" for a, w in zip(addresses, weights))
    srv = make_server(proxy_conf(f"""
    upstream h {{ hash $arg_k; {servers} }}
    upstream hc {{ hash $arg_k consistent; {servers} }}
    server {{
        listen 127.0.0.1:@PORT@;
        location /h {{ proxy_pass http://h; }}
        location /hc {{ proxy_pass http://hc; }}
    }}"""))
    keys = [f"key{i}" for i in range(24)] + ["/index.html", "user:42"]
    got = [body_of(srv.port, f"/h?k={k}") for k in keys]
    assert got == [f"u{_memcached_hash_choice(k, weights)}" for k in keys]
    got = [body_of(srv.port, f"/hc?k={k}") for k in keys]
    assert got == [f"u{_ketama_choice(k, addresses, weights)}" for k in keys]


def test_least_conn_prefers_idle_server(make_server, upstreams):
    busy = upstreams("busy")
    idle = upstreams("idle")
    srv = make_server(proxy_conf(f"""
    upstream lc {{ least_conn; server 127.0.0.1:{busy.port}; server 127.0.0.1:{idle.port}; }}
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{ proxy_pass http://lc; proxy_read_timeout 5s; proxy_next_upstream off; }}
    }}"""))
    # One request stalls on one server; while it lasts, everything goes to the other.
    staller = harness.Conn(srv.port)
    staller.send(harness.build_request("GET", "/stall"))
    harness.wait_until(lambda: len(busy.requests) + len(idle.requests) == 1, 5, what="stalled request")
    stalled_on = "busy" if busy.requests else "idle"
    other = "idle" if stalled_on == "busy" else "busy"
    assert _spread(srv.port, 6, "/") == {other: 6}
    staller.close()


# ---------------------------------------------------------------------------
# Upgrade


def test_websocket_upgrade_tunnel(make_server, upstreams):
    up = upstreams("ws")
    srv = make_server(proxy_conf(f"""
    map $http_upgrade $connection_upgrade {{
        default upgrade;
        ''      close;
    }}
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{
            proxy_pass http://127.0.0.1:{up.port};
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_read_timeout 2s;
        }}
    }}"""))
    with harness.Conn(srv.port) as c:
        c.send(harness.build_request("GET", "/ws", [("Upgrade", "websocket"), ("Connection", "Upgrade")]))
        resp = c.read_response()
        assert resp.status == 101
        assert resp.header("Upgrade") == "websocket"
        assert resp.header("Connection").lower() == "upgrade"
        for msg in (b"hello", b"x" * 100000):
            c.send(msg)
            got = b""
            while len(got) < len(msg):
                got += c.buf
                c.buf = b""
                if len(got) < len(msg):
                    c._fill()
            assert got == msg
        # Idle past proxy_read_timeout: the tunnel closes.
        assert c.closed_within(6)
    req = up.requests[0].decode()
    assert "\r\nUpgrade: websocket\r\n" in req and "\r\nConnection: upgrade\r\n" in req


# ---------------------------------------------------------------------------
# The seeds' configs


SEED_000 = """
upstream app_backend {
    least_conn;
    server 127.0.0.1:@BACKEND@ max_fails=3 fail_timeout=30s;
    keepalive 32;
}

server {
	listen 127.0.0.1:@PORT@;

	server_name demo_tls;
    server_tokens off;

	root @PREFIX@/html;

	index index.html index.htm index.nginx-debian.html;

	server_name _;

    location / {
        limit_except GET POST {
                deny all;
        }
        proxy_pass      http://app_backend;
        proxy_http_version 1.1;
        proxy_redirect  off;
        proxy_set_header        Host            $host;
        proxy_set_header        X-Real-IP       $remote_addr;
        proxy_set_header        X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_connect_timeout 90;
        proxy_send_timeout  90;
        proxy_read_timeout  90;
        proxy_buffers 4 32k;
        proxy_busy_buffers_size 64k;
    }

}
"""

SEED_003 = """
upstream whoami { server 127.0.0.1:@B1@; server 127.0.0.1:@B2@; server 127.0.0.1:@B3@; server 127.0.0.1:@B4@; keepalive 300; } server { listen 127.0.0.1:@PORT@; server_name benchmark.whoami; access_log off; error_log /dev/null crit; location / { proxy_pass http://whoami; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for; proxy_set_header X-Forwarded-Host $host; proxy_set_header X-Forwarded-Port 80; proxy_set_header X-Forwarded-Proto $scheme; proxy_set_header X-Forwarded-Server $server_addr; proxy_set_header X-Real-IP $remote_addr; } }
"""


def test_seed_000_config(make_server, upstreams):
    up = upstreams("app")
    srv = make_server(proxy_conf(SEED_000.replace("@BACKEND@", str(up.port))), start=False)
    srv.ports = [harness.PortLease().port]
    srv.write_conf()
    check = harness.cli(["-t", "-c", str(srv.conf_path)], prefix=srv.prefix)
    assert check.returncode == 0, check.stderr
    srv.start()
    resp = harness.http(srv.port, "/echo", host="demo.test", headers=[("X-Forwarded-For", "9.9.9.9")])
    assert resp.status == 200 and resp.header("Server") == ("nginx" if harness.IS_NGINX else "torii")
    lines = resp.body.decode().split("\r\n")
    assert "Host: demo.test" in lines and "X-Real-IP: 127.0.0.1" in lines
    assert "X-Forwarded-For: 9.9.9.9, 127.0.0.1" in lines
    assert harness.http(srv.port, "/echo", method="POST", body="b").status == 200
    assert harness.http(srv.port, "/echo", method="PUT", body="b").status == 403


def test_seed_003_whoami_config(make_server, upstreams):
    ups = [upstreams(f"whoami-{i}") for i in range(1, 5)]
    conf = SEED_003
    for i, u in enumerate(ups, 1):
        conf = conf.replace(f"@B{i}@", str(u.port))
    srv = make_server(proxy_conf(conf))
    names = {body_of(srv.port, "/bench", host="benchmark.whoami") for _ in range(8)}
    assert names == {"whoami-1", "whoami-2", "whoami-3", "whoami-4"}
    lines = body_of(srv.port, "/echo", host="benchmark.whoami").split("\r\n")
    assert lines[0] == "GET /echo HTTP/1.1" and "X-Forwarded-Port: 80" in lines
    assert "X-Forwarded-Proto: http" in lines and "X-Forwarded-Server: 127.0.0.1" in lines
    assert not any(l.lower().startswith("connection:") for l in lines)
    assert sum(u.connections for u in ups) <= 5  # keep-alive: about one connection per server


def test_config_errors(tmp_path):
    cases = {
        "upstream u { }": "no servers are inside upstream",
        "upstream u { server 127.0.0.1:1 bogus=1; }": "invalid parameter \"bogus=1\"",
        "server { location ~ /x { proxy_pass http://127.0.0.1:1/uri; } }": "cannot have URI part",
        "server { location / { proxy_pass http://no.such.host.invalid; } }": "host not found",
        "server { location / { proxy_next_upstream sometimes; } }": "invalid value \"sometimes\"",
    }
    for snippet, message in cases.items():
        conf = tmp_path / "bad.conf"
        conf.write_text(harness.base_conf(http=snippet).replace("@PREFIX@", str(tmp_path)))
        (tmp_path / "logs").mkdir(exist_ok=True)
        r = harness.cli(["-t", "-c", str(conf)], prefix=tmp_path)
        assert r.returncode != 0 and message in r.stderr + r.stdout, (snippet, r.stderr)


def test_no_live_upstreams_after_a_failed_try(make_server, refused_port):
    """A try fails and the only other server failed before (max_fails):
    nginx's "no live upstreams" line, the group's name in $upstream_addr
    after the try, 502. A server marked `down` does not count."""
    srv = make_server(harness.base_conf(http=f"""
    upstream pair {{
        server 127.0.0.1:{refused_port} max_fails=0;
        server 127.0.0.2:{refused_port} max_fails=1 fail_timeout=60s;
    }}
    upstream marked {{
        server 127.0.0.1:{refused_port};
        server 127.0.0.2:{refused_port} down;
    }}
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{
            proxy_pass http://pair;
            add_header X-Upstream $upstream_addr always;
        }}
        location /marked {{
            proxy_pass http://marked;
            add_header X-Upstream $upstream_addr always;
        }}
    }}"""))
    first = harness.http(srv.port, "/")  # both tried: the second one now counts as failed
    assert first.status == 502
    assert sorted(first.header("X-Upstream").split(", ")) == [f"127.0.0.1:{refused_port}", f"127.0.0.2:{refused_port}"]
    r = harness.http(srv.port, "/")
    assert r.status == 502
    assert r.header("X-Upstream") == f"127.0.0.1:{refused_port}, pair"
    r = harness.http(srv.port, "/marked")
    assert r.status == 502 and r.header("X-Upstream") == f"127.0.0.1:{refused_port}"
    harness.wait_until(lambda: "no live upstreams while connecting to upstream" in srv.error_log.read_text(), 10,
                       what="the error line")
