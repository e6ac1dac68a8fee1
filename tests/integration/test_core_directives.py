"""http-core directives that tune a client connection or a detail of a
response: keepalive_time and the others kept in CoreSettings. Every
expectation is nginx's: the file passes with TORII_BIN=/usr/sbin/nginx
(1.22), except where a test says it checks torii's own log text."""

import email.utils
import gzip
import os
import select
import socket
import time

import pytest

import harness
from h2raw import DATA, END_STREAM, GOAWAY, H2, HEADERS


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
        www = s.prefix / "www"
        www.mkdir(exist_ok=True)
        (www / "index.html").write_text("hello\n")
        (www / "big.txt").write_text("0123456789abcdef" * 4096)
        s.start()
        return s
    return make


def config_check(make_server, http, main=""):
    """`-t` on a config with `http` in its http block: (ok, output)."""
    s = make_server(harness.base_conf(http=http, main=main), start=False)
    s.ports = [0]
    s.write_conf()
    out = harness.cli(["-t", "-c", str(s.conf_path)], prefix=s.prefix)
    return out.returncode == 0, out.stdout + out.stderr


# ---------------------------------------------------------------------------
# keepalive_time


def test_keepalive_time_closes_an_old_http1_connection(site):
    s = site(server="keepalive_time 1s;")
    with harness.Conn(s.port) as c:
        opened = time.monotonic()
        first = c.request("GET", "/ret")
        assert first.status == 200 and first.header("Connection", "").lower() != "close"
        last = first
        while last.header("Connection", "").lower() != "close":
            assert time.monotonic() - opened < 10, "keep-alive never ended"
            time.sleep(0.1)  # pace the requests; the connection's age is what is tested
            last = c.request("GET", "/ret")
            assert last.status == 200
        assert time.monotonic() - opened >= 1.0
        assert c.closed_within(5)


def test_keepalive_time_sends_goaway_on_http2(site):
    s = site(server="keepalive_time 1s;", listen="listen 127.0.0.1:@PORT@ http2;")
    c = H2(s.port)
    opened = time.monotonic()
    c.handshake()
    answered, goaway, sid = set(), None, 1
    while goaway is None:
        assert time.monotonic() - opened < 10, "no GOAWAY"
        c.request(sid, "/ret")
        while sid not in answered:
            f = c.read_frame()
            assert f is not None, "closed before GOAWAY"
            if f[0] in (DATA, HEADERS) and f[1] & END_STREAM:
                answered.add(f[2])
            elif f[0] == GOAWAY:
                goaway = f
        if goaway is None:
            sid += 2
            time.sleep(0.1)
    assert time.monotonic() - opened >= 1.0
    last_id = int.from_bytes(goaway[3][:4], "big") & 0x7FFFFFFF
    assert last_id == sid and sid in answered and sid > 1
    assert int.from_bytes(goaway[3][4:8], "big") == 0  # NO_ERROR
    c.close()


def test_keepalive_time_bad_value(make_server):
    ok, out = config_check(make_server, "keepalive_time 5x;")
    assert not ok
    assert '"keepalive_time" directive invalid value' in out


# ---------------------------------------------------------------------------
# keepalive_disable

MSIE6 = "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.0)"
SAFARI = ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) "
          "Version/17.0 Safari/605.1.15")
CHROME = ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) "
          "Chrome/120.0.0.0 Safari/537.36")


def keeps_alive(port, path, method="GET", ua=None):
    headers = [("User-Agent", ua)] if ua else []
    with harness.Conn(port) as c:
        r = c.request(method, path, headers, body="x=1" if method == "POST" else None)
        assert r.status == 200, r
        return r.header("Connection", "").lower() != "close"


def test_keepalive_disable(site):
    s = site(server="""
        location /default { return 200 "d\\n"; }
        location /safari { keepalive_disable safari; return 200 "s\\n"; }
        location /none { keepalive_disable none; return 200 "n\\n"; }
""")
    # nginx's default is msie6: old MSIE gets no keep-alive after a POST.
    assert not keeps_alive(s.port, "/default", "POST", MSIE6)
    assert keeps_alive(s.port, "/default", "GET", MSIE6)
    assert keeps_alive(s.port, "/default", "POST", SAFARI)
    assert keeps_alive(s.port, "/none", "POST", MSIE6)
    assert not keeps_alive(s.port, "/safari", "GET", SAFARI)
    assert keeps_alive(s.port, "/safari", "GET", CHROME)  # Chrome/ says it is not Safari
    assert keeps_alive(s.port, "/safari", "POST", MSIE6)  # the list replaces msie6


def test_keepalive_disable_bad_value(make_server):
    ok, out = config_check(make_server, "keepalive_disable chrome;")
    assert not ok
    assert 'invalid value "chrome"' in out


# ---------------------------------------------------------------------------
# lingering_close, lingering_time, lingering_timeout

BIG_HEAD = (b"POST /up HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000000\r\n\r\n")


def linger_site(site, directives):
    return site(server=f"client_max_body_size 1k; {directives} location /up {{ return 200; }}")


def server_holds(server_port, client_port):
    """True while the server process still has its end of this connection
    open: the kernel's entry for it has an inode (a closed socket that is
    still finishing its FIN exchange has none)."""
    local = f"0100007F:{server_port:04X}"
    remote = f"0100007F:{client_port:04X}"
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if fields[1] == local and fields[2] == remote:
                return fields[9] != "0"
    return False


def seconds_until_closed(sock, server_port, keep_sending=False, limit=15.0):
    """From now until the server closes its end of `sock`; with
    keep_sending, a little more body goes out every 0.2 s meanwhile."""
    start = last_send = time.monotonic()
    client_port = sock.getsockname()[1]
    sock.setblocking(False)
    while time.monotonic() - start < limit:
        if not server_holds(server_port, client_port):
            return time.monotonic() - start
        if keep_sending and time.monotonic() - last_send >= 0.2:
            last_send = time.monotonic()
            try:
                sock.send(b"y" * 1024)
            except (BlockingIOError, ConnectionResetError, BrokenPipeError):
                pass
        time.sleep(0.02)  # poll interval
    return None


def answered_413(sock):
    sock.sendall(BIG_HEAD + b"x" * 65536)
    sock.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    assert data.startswith(b"HTTP/1.1 413"), data


def test_lingering_timeout_bounds_each_wait(site):
    s = linger_site(site, "lingering_timeout 1s;")
    with socket.create_connection(("127.0.0.1", s.port)) as sock:
        answered_413(sock)
        waited = seconds_until_closed(sock, s.port)
    assert waited is not None and waited < 3.5  # nginx's default would be 5 s


def test_lingering_time_bounds_the_whole_linger(site):
    s = linger_site(site, "lingering_time 2s; lingering_timeout 1s;")
    with socket.create_connection(("127.0.0.1", s.port)) as sock:
        answered_413(sock)
        waited = seconds_until_closed(sock, s.port, keep_sending=True)
    # A client that keeps sending is read for lingering_time, then dropped.
    assert waited is not None and 1.0 <= waited < 4.5


def answered_and_closed(port, path, extra=b""):
    """A request that ends the connection, then `extra` bytes; returns the
    socket once the response and the server's FIN have arrived."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode() + extra)
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    assert data.startswith(b"HTTP/1.1 200"), data
    return sock


def reset_within(sock, seconds):
    """Sends a byte every 50 ms: True once the server answers with a reset
    (it closed its socket), False if it is still reading after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            sock.send(b"z")
            select.select([sock], [], [], 0.05)
            sock.recv(65536)  # b"" after the FIN, until a reset arrives
        except (ConnectionResetError, BrokenPipeError):
            return True
        time.sleep(0.05)
    return False


def test_lingering_close_on_off_always(site):
    s = site(server="""
        location /off { lingering_close off; return 200; }
        location /always { lingering_close always; return 200; }
""")
    pipelined = b"GET /ret HTTP/1.1\r\n"  # the client may send more: on lingers
    with answered_and_closed(s.port, "/ret", pipelined) as sock:
        assert not reset_within(sock, 1.0)
    with answered_and_closed(s.port, "/off", pipelined) as sock:
        assert reset_within(sock, 5.0)  # closed at once
    with answered_and_closed(s.port, "/ret") as sock:
        assert reset_within(sock, 5.0)  # nothing more expected: on closes too
    with answered_and_closed(s.port, "/always") as sock:
        assert not reset_within(sock, 1.0)


def test_lingering_bad_values(make_server):
    ok, out = config_check(make_server, "lingering_close sometimes;")
    assert not ok and 'invalid value "sometimes"' in out
    ok, out = config_check(make_server, "lingering_time 3q;")
    assert not ok and '"lingering_time" directive invalid value' in out


# ---------------------------------------------------------------------------
# chunked_transfer_encoding


def test_chunked_transfer_encoding_off_ends_by_close(site):
    s = site(http="gzip on; gzip_min_length 1; gzip_types text/plain;",
             server="location /plain/ { chunked_transfer_encoding off; }")
    (s.prefix / "www" / "plain").mkdir()
    text = ("0123456789abcdef" * 4096).encode()
    (s.prefix / "www" / "plain" / "big.txt").write_bytes(text)
    gz = [("Accept-Encoding", "gzip")]
    with harness.Conn(s.port) as c:  # the default: chunked, and the connection stays
        r = c.request("GET", "/big.txt", gz)
        assert r.header("Transfer-Encoding") == "chunked" and r.header("Content-Length") is None
        assert gzip.decompress(r.body) == text
        assert c.request("GET", "/ret").status == 200
    with harness.Conn(s.port) as c:
        r = c.request("GET", "/plain/big.txt", gz)
        assert r.status == 200 and r.header("Transfer-Encoding") is None and r.header("Content-Length") is None
        assert r.header("Connection", "").lower() == "close"
        assert gzip.decompress(r.body) == text  # read up to the close


def test_chunked_transfer_encoding_bad_value(make_server):
    ok, out = config_check(make_server, "chunked_transfer_encoding maybe;")
    assert not ok and 'it must be "on" or "off"' in out


# ---------------------------------------------------------------------------
# if_modified_since

MTIME = 1_700_000_000


def test_if_modified_since(site):
    s = site(server="""
        location /before/ { if_modified_since before; }
        location /off/ { if_modified_since off; }
""")
    for d in ("exact", "before", "off"):
        (s.prefix / "www" / d).mkdir()
        f = s.prefix / "www" / d / "f.txt"
        f.write_text("file\n")
        os.utime(f, (MTIME, MTIME))

    def status(path, when):
        return harness.http(s.port, path, {"If-Modified-Since": email.utils.formatdate(when, usegmt=True)}).status

    assert status("/exact/f.txt", MTIME) == 304
    assert status("/exact/f.txt", MTIME + 100) == 200
    assert status("/before/f.txt", MTIME + 100) == 304
    assert status("/before/f.txt", MTIME) == 304
    assert status("/before/f.txt", MTIME - 100) == 200
    assert status("/off/f.txt", MTIME) == 200


def test_if_modified_since_bad_value(make_server):
    ok, out = config_check(make_server, "if_modified_since later;")
    assert not ok and 'invalid value "later"' in out


# ---------------------------------------------------------------------------
# max_ranges


def test_max_ranges(site):
    s = site(server="""
        location /none/ { max_ranges 0; }
        location /two/ { max_ranges 2; }
""")
    for d in ("none", "two"):
        (s.prefix / "www" / d).mkdir()
        (s.prefix / "www" / d / "f.txt").write_text("0123456789" * 10)

    def get(path, ranges):
        return harness.http(s.port, path, {"Range": "bytes=" + ranges})

    r = get("/none/f.txt", "0-9")
    assert r.status == 200 and len(r.body) == 100 and r.header("Accept-Ranges") is None
    r = get("/two/f.txt", "0-1,5-6")
    assert r.status == 206 and r.header("Content-Type", "").startswith("multipart/byteranges")
    r = get("/two/f.txt", "0-1,5-6,10-11")
    assert r.status == 200 and len(r.body) == 100 and r.header("Accept-Ranges") == "bytes"
    (s.prefix / "www" / "f.txt").write_text("0123456789" * 10)
    r = get("/f.txt", "0-1,5-6,10-11")  # no max_ranges: as many as the client asks
    assert r.status == 206


def test_max_ranges_bad_value(make_server):
    ok, out = config_check(make_server, "max_ranges lots;")
    assert not ok and '"max_ranges" directive invalid number' in out


@pytest.mark.parametrize("path,merged,kept", [
    ("/foo//bar", "/foo/bar", "/foo//bar"),
    ("/foo//../bar", "/bar", "/foo/bar"),       # ".." cancels the empty segment alone
    ("/foo///../bar", "/bar", "/foo//bar"),
    ("/a/./b//", "/a/b/", "/a/b//"),
])
def test_merge_slashes(make_server, path, merged, kept):
    srv = make_server(harness.base_conf(access_log=False, http="""
    server {
        listen 127.0.0.1:@PORT0@;
        location / { return 200 "uri=$uri"; }
    }
    server {
        listen 127.0.0.1:@PORT1@;
        merge_slashes off;
        location / { return 200 "uri=$uri"; }
    }"""), nports=2)
    assert harness.http(srv.ports[0], path).text() == "uri=" + merged
    assert harness.http(srv.ports[1], path).text() == "uri=" + kept
