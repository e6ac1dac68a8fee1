"""gzip as nginx's gzip module does it: which responses are compressed
(status, type, length, existing Content-Encoding), for which requests
(Accept-Encoding with q-values, HTTP version, gzip_proxied on Via,
gzip_disable), what the head becomes (Content-Encoding, no length, chunked,
Vary, weak ETag), static and proxied, HTTP/1.1 and HTTP/2, bodies decoded
by real decoders (Python's gzip, curl --compressed). Also runs against
nginx (TORII_BIN=/usr/sbin/nginx); the few torii-only rules say so."""

import gzip
import os
import re
import socket
import subprocess
import time
import zlib

import pytest

import harness
from scripted_upstream import ScriptedUpstream, text_body

PAGE = text_body(20000)
CSS = text_body(3000)
JSON = b'{"k": "' + text_body(3000) + b'"}'
TINY = b"<p>tiny</p>"
LONG_TEXT = "return text " * 40

PROXIED_VALUES = ["off", "expired", "no-cache", "no-store", "private", "no_last_modified", "no_etag",
                  "auth", "any"]


@pytest.fixture
def gz(make_server, upstream, tmp_path):
    """A server with gzip on and a location per rule under test."""
    proxied = "\n".join(f"""
        location /p/{v}/ {{
            gzip_proxied {v};
            proxy_pass http://127.0.0.1:{upstream.port};
            proxy_http_version 1.1;
        }}""" for v in PROXIED_VALUES)
    conf = harness.base_conf(http=f"""
    log_format ratio '$uri $status $gzip_ratio';
    gzip on;
    gzip_vary on;
    gzip_min_length 100;
    gzip_types text/css;
    gzip_buffers 16 8k;
    server {{
        listen 127.0.0.1:@PORT0@;
        listen 127.0.0.1:@PORT1@ http2;
        root @PREFIX@/html;
        access_log @PREFIX@/logs/ratio.log ratio;
        location /all/ {{ gzip_types *; }}
        location /off/ {{ gzip off; }}
        location /lvl9/ {{ gzip_comp_level 9; }}
        location /http10/ {{ gzip_http_version 1.0; }}
        location /ua/ {{ gzip_disable msie6 "^BadBot"; }}
        location /novary/ {{ gzip_vary off; }}
        location /same9/ {{ gzip_comp_level 9; alias @PREFIX@/html/; }}
        location = /ret.html {{ return 200 "{LONG_TEXT}"; }}
        location = /ret500.html {{ return 500 "{LONG_TEXT}"; }}
        location = /ret204.html {{ return 204; }}
        location = /forbidden.html {{ return 403; }}
        location /up/ {{
            proxy_pass http://127.0.0.1:{upstream.port};
            proxy_http_version 1.1;
            proxy_buffering off;
            gzip_proxied any;
        }}
        {proxied}
    }}""")
    srv = make_server(conf, nports=2, start=False)
    html = srv.prefix / "html"
    for d in ("", "all", "off", "lvl9", "http10", "ua", "novary"):
        (html / d).mkdir(parents=True, exist_ok=True)
        (html / d / "page.html").write_bytes(PAGE)
    (html / "style.css").write_bytes(CSS)
    (html / "data.json").write_bytes(JSON)
    (html / "all" / "data.json").write_bytes(JSON)
    (html / "tiny.html").write_bytes(TINY)
    srv.start()
    return srv


def get(port, path, ae="gzip", headers=None, method="GET", version="HTTP/1.1"):
    hdrs = [("Connection", "close")]
    if ae is not None:
        hdrs.append(("Accept-Encoding", ae))
    hdrs += list(headers or [])
    with harness.Conn(port) as c:
        c.send(harness.build_request(method, path, hdrs, version=version))
        return c.read_response(method)


def assert_gzipped(resp, original):
    assert resp.status in (200, 403, 404), resp
    assert resp.header("Content-Encoding") == "gzip", resp
    assert resp.header("Content-Length") is None
    assert resp.header("Accept-Ranges") is None
    assert gzip.decompress(resp.body) == original


def assert_identity(resp, original=None):
    assert resp.header("Content-Encoding") is None, resp
    if original is not None:
        assert resp.body == original


# ---------------------------------------------------------------------------
# Static files, HTTP/1.1


def test_static_html_is_gzipped_chunked_with_vary_and_weak_etag(gz):
    plain = get(gz.port, "/page.html", ae=None)
    assert_identity(plain, PAGE)
    assert plain.header("Content-Length") == str(len(PAGE))
    assert plain.header("Vary") == "Accept-Encoding"  # gzip_vary: also when not compressed
    strong = plain.header("ETag")
    assert strong.startswith('"')

    resp = get(gz.port, "/page.html")
    assert_gzipped(resp, PAGE)
    assert resp.header("Transfer-Encoding") == "chunked"
    assert resp.header("Vary") == "Accept-Encoding"
    assert resp.header("ETag") == "W/" + strong
    assert resp.header("Last-Modified") == plain.header("Last-Modified")
    assert len(resp.body) < len(PAGE) // 3


def test_gzip_off_and_gzip_vary_off(gz):
    assert_identity(get(gz.port, "/off/page.html"), PAGE)
    resp = get(gz.port, "/novary/page.html")
    assert_gzipped(resp, PAGE)
    assert resp.header("Vary") is None


def test_gzip_types(gz):
    assert_gzipped(get(gz.port, "/style.css"), CSS)          # listed
    assert_identity(get(gz.port, "/data.json"), JSON)        # not listed
    assert_gzipped(get(gz.port, "/all/data.json"), JSON)     # gzip_types *
    assert_gzipped(get(gz.port, "/page.html"), PAGE)         # text/html always


def test_gzip_min_length_from_content_length(gz):
    resp = get(gz.port, "/tiny.html")
    assert_identity(resp, TINY)
    assert resp.header("Vary") is None  # not eligible at all


def test_comp_level_changes_the_size_not_the_content(gz):
    fast = get(gz.port, "/page.html")
    best = get(gz.port, "/lvl9/page.html")
    assert_gzipped(fast, PAGE)
    assert_gzipped(best, PAGE)
    assert len(best.body) < len(fast.body)


def test_gzip_ratio_variable(gz):
    resp = get(gz.port, "/page.html")
    assert_gzipped(resp, PAGE)
    assert_gzipped(get(gz.port, "/page.html"), PAGE)  # the same ratio when sent again
    get(gz.port, "/data.json")
    expected = len(PAGE) / len(resp.body)
    log = harness.wait_until(lambda: gz.prefix.joinpath("logs/ratio.log").exists() and
                             "/data.json" in gz.prefix.joinpath("logs/ratio.log").read_text() and
                             gz.prefix.joinpath("logs/ratio.log").read_text(), 10, what="log lines")
    lines = log.splitlines()
    pages = [l for l in lines if l.startswith("/page.html")]
    assert len(pages) == 2
    for page in pages:
        ratio = float(page.split()[2])
        assert abs(ratio - expected) < 0.02, (page, expected)
    assert next(l for l in lines if l.startswith("/data.json")).split()[2] == "-"


def test_static_file_again_and_after_a_change(gz):
    # Twice the same bytes (the second may come from stored output), the
    # same file at another level in another location, then the file changes
    # and the next response has the new content.
    first = get(gz.port, "/page.html")
    again = get(gz.port, "/page.html")
    assert_gzipped(first, PAGE)
    assert_gzipped(again, PAGE)
    assert again.header("ETag") == first.header("ETag")
    other_level = get(gz.port, "/same9/page.html")
    assert_gzipped(other_level, PAGE)
    assert len(other_level.body) < len(first.body)
    path = gz.prefix / "html" / "page.html"
    changed = PAGE.replace(b"alpha", b"omega")
    assert len(changed) == len(PAGE)
    path.write_bytes(changed)
    st = path.stat()
    import os
    os.utime(path, (st.st_atime, st.st_mtime + 5))
    after = get(gz.port, "/page.html")
    assert_gzipped(after, changed)
    assert after.header("ETag") != first.header("ETag")
    assert_gzipped(get(gz.port, "/page.html"), changed)


# ---------------------------------------------------------------------------
# Accept-Encoding


@pytest.mark.parametrize("ae,compressed", [
    ("gzip", True),
    ("GZIP", True),
    ("deflate, gzip", True),
    ("gzip;q=0.5, identity", True),
    ("gzip; q=1.0", True),
    ("gzip;q=0.001", True),
    ("gzip;q=0", False),
    ("gzip; q=0.000", False),
    ("deflate", False),
    ("identity", False),
    ("", False),
    ("xgzip", False),
])
def test_accept_encoding_q_values(gz, ae, compressed):
    resp = get(gz.port, "/page.html", ae=ae)
    if compressed:
        assert_gzipped(resp, PAGE)
    else:
        assert_identity(resp, PAGE)


@pytest.mark.parametrize("ae,compressed", [
    ("*", True),
    ("br;q=1, *;q=0.5", True),
    ("*;q=0", False),
    ("gzip;q=0, *", False),
])
def test_accept_encoding_star(gz, ae, compressed, nginx_only_skip):
    # torii applies RFC 9110's "*" to gzip; nginx looks only for "gzip".
    resp = get(gz.port, "/page.html", ae=ae)
    if compressed:
        assert_gzipped(resp, PAGE)
    else:
        assert_identity(resp, PAGE)


# ---------------------------------------------------------------------------
# Responses that are never compressed


def test_head_gets_the_head_of_a_get_without_body(gz):
    resp = get(gz.port, "/page.html", method="HEAD")
    assert resp.status == 200
    assert resp.header("Content-Encoding") == "gzip"
    assert resp.header("Content-Length") is None
    assert resp.header("ETag", "").startswith("W/")
    # Nothing follows the head: the connection closes with no body bytes.
    with harness.Conn(gz.port) as c:
        c.send(harness.build_request("HEAD", "/page.html", [("Accept-Encoding", "gzip"), ("Connection", "close")]))
        c.read_response("HEAD")
        assert c._read_to_eof() == b""


def test_304_is_not_compressed_and_weak_etag_revalidates(gz):
    first = get(gz.port, "/page.html")
    resp = get(gz.port, "/page.html", headers=[("If-None-Match", first.header("ETag"))])
    assert resp.status == 304
    assert resp.header("Content-Encoding") is None
    assert resp.body == b""


def test_range_request(gz):
    resp = get(gz.port, "/page.html", headers=[("Range", "bytes=0-99")])
    # nginx's gzip filter clears Accept-Ranges, so the range filter passes
    # the whole body, compressed.
    assert resp.status == 200
    assert_gzipped(resp, PAGE)


def test_statuses(gz):
    assert_gzipped(get(gz.port, "/ret.html"), LONG_TEXT.encode())
    assert_gzipped(get(gz.port, "/forbidden.html"), get(gz.port, "/forbidden.html", ae=None).body)
    missing = get(gz.port, "/missing.html")
    assert missing.status == 404
    assert_gzipped(missing, get(gz.port, "/missing.html", ae=None).body)
    err = get(gz.port, "/ret500.html")
    assert err.status == 500
    assert_identity(err, LONG_TEXT.encode())
    empty = get(gz.port, "/ret204.html")
    assert empty.status == 204
    assert_identity(empty, b"")


def test_existing_content_encoding_passes_untouched(gz, upstream):
    resp = get(gz.port, "/up/x?gz=1&n=5000")
    assert resp.status == 200
    assert resp.header("Content-Encoding") == "gzip"
    assert gzip.decompress(resp.body) == text_body(5000)  # compressed once, not twice


# ---------------------------------------------------------------------------
# Request rules


def test_gzip_http_version(gz):
    assert_identity(get(gz.port, "/page.html", version="HTTP/1.0"), PAGE)
    resp = get(gz.port, "/http10/page.html", version="HTTP/1.0")
    assert resp.header("Content-Encoding") == "gzip"
    assert gzip.decompress(resp.body) == PAGE  # delimited by the close


@pytest.mark.parametrize("ua,compressed", [
    ("Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1)", False),
    ("Mozilla/4.0 (compatible; MSIE 5.5; Windows 98)", False),
    ("Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)", True),
    ("Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0)", True),
    ("badbot/1.0", False),  # caseless regex
    ("curl/8", True),
])
def test_gzip_disable(gz, ua, compressed):
    resp = get(gz.port, "/ua/page.html", headers=[("User-Agent", ua)])
    if compressed:
        assert_gzipped(resp, PAGE)
    else:
        assert_identity(resp, PAGE)


PAST = "Thu, 01 Jan 1970 00:00:01 GMT"
FUTURE = "Thu, 31 Dec 2037 23:55:55 GMT"

# (gzip_proxied value, response headers, request headers, compressed?)
PROXIED_CASES = [
    ("off", [], [], False),
    ("any", [("Cache-Control", "public")], [], True),
    ("expired", [("Expires", PAST)], [], True),
    ("expired", [("Expires", FUTURE)], [], False),
    ("expired", [("Cache-Control", "no-cache")], [], False),
    ("expired", [], [], True),  # nothing says it may be cached: allowed
    ("no-cache", [("Cache-Control", "no-cache")], [], True),
    ("no-cache", [("Cache-Control", "max-age=60")], [], False),
    ("no-store", [("Cache-Control", "max-age=0, no-store")], [], True),
    ("no-store", [("Cache-Control", "no-cache")], [], False),
    ("private", [("Cache-Control", "private")], [], True),
    ("private", [("Cache-Control", "public")], [], False),
    ("no_last_modified", [], [], True),
    ("no_last_modified", [("Last-Modified", PAST)], [], False),
    ("no_etag", [], [], True),
    ("no_etag", [("ETag", '"abc"')], [], False),
    ("auth", [("Cache-Control", "public")], [("Authorization", "Basic dTpw")], True),
    ("auth", [("Cache-Control", "public")], [], False),
]


def upstream_path(prefix, headers, n=3000):
    from urllib.parse import quote
    q = "&".join(f"h={quote(k + ':' + v)}" for k, v in headers)
    return f"{prefix}x?n={n}" + ("&" + q if q else "")


@pytest.mark.parametrize("value,resp_headers,req_headers,compressed", PROXIED_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(PROXIED_CASES)])
def test_gzip_proxied(gz, value, resp_headers, req_headers, compressed):
    path = upstream_path(f"/p/{value}/", resp_headers)
    original = text_body(3000)
    # Without Via the request is not proxied: gzip_proxied does not apply.
    assert_gzipped(get(gz.port, path, headers=req_headers), original)
    resp = get(gz.port, path, headers=[("Via", "1.1 cdn")] + req_headers)
    assert resp.status == 200
    if compressed:
        assert_gzipped(resp, original)
    else:
        assert_identity(resp, original)


def test_proxied_strong_etag_becomes_weak(gz):
    resp = get(gz.port, upstream_path("/up/", [("ETag", '"v1"')]))
    assert_gzipped(resp, text_body(3000))
    assert resp.header("ETag") == 'W/"v1"'


# ---------------------------------------------------------------------------
# Proxied bodies: chunked upstream, streaming


def test_proxied_chunked_upstream(gz):
    body = text_body(1_000_000)
    resp = get(gz.port, "/up/x?chunked=1&n=1000000")
    assert_gzipped(resp, body)
    resp = get(gz.port, "/up/x?n=1000000")  # Content-Length upstream
    assert_gzipped(resp, body)


@pytest.mark.parametrize("framing", ["chunked=1&", ""], ids=["chunked", "content-length"])
def test_streaming_upstream_is_flushed_when_it_pauses(gz, upstream, framing):
    """The upstream sends its first 16 KB and waits: the client must be able
    to decode those bytes before the upstream goes on. With a Content-Length
    the body is not held back waiting for the rest of it either."""
    body = text_body(100_000)
    with harness.Conn(gz.port, timeout=10) as c:
        c.send(harness.build_request("GET", f"/up/x?{framing}pause=1&n=100000",
                                     [("Accept-Encoding", "gzip"), ("Connection", "close")]))
        head = c._read_until(b"\r\n\r\n")
        assert b"Content-Encoding: gzip" in head
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        got = b""
        deadline = time.monotonic() + 10
        # Chunked framing: read whole chunks while the upstream is paused.
        while len(got) < 16384:
            assert time.monotonic() < deadline, f"only {len(got)} bytes decoded while the upstream paused"
            size = int(c._read_until(b"\r\n").split(b";")[0], 16)
            assert size > 0, "the body ended while the upstream was paused"
            got += d.decompress(c._read_exact(size))
            c._read_exact(2)
        assert got == body[:len(got)]
        gz_upstream_release = upstream.release
        gz_upstream_release()
        rest = c._read_to_eof()
    # The rest of the chunked body, decoded.
    tail = b""
    while rest:
        line, _, rest = rest.partition(b"\r\n")
        size = int(line.split(b";")[0], 16)
        if size == 0:
            break
        tail += rest[:size]
        rest = rest[size + 2:]
    assert got + d.decompress(tail) + d.flush() == body


def server_rss_kb(srv):
    """Resident memory of the server and its children (nginx's workers)."""
    pids = {srv.proc.pid}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == srv.proc.pid:
                        pids.add(int(entry))
            except (OSError, ValueError, IndexError):
                pass
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


@pytest.mark.parametrize("ae", ["gzip", "identity"])
def test_large_proxied_body_is_held_back_and_memory_stays_flat(gz, upstream, ae):
    """48 MB that do not compress, through gzip (and, for comparison,
    without), to a client that stops reading: the upstream must be held
    back (it stops making progress long before the end) with the server's
    memory flat, then every byte arrives."""
    megabytes = 48
    before = server_rss_kb(gz)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 * 1024)  # before connect: a small window
    sock.settimeout(30)
    sock.connect(("127.0.0.1", gz.port))
    try:
        sock.sendall(harness.build_request("GET", f"/up/x?random={megabytes}",
                                           [("Accept-Encoding", ae), ("Connection", "close")]))
        # Not reading: wait until the upstream makes no progress for a second.
        last, still_since = -1, time.monotonic()
        while time.monotonic() - still_since < 1.0:
            sent = upstream.random_sent
            if sent != last:
                last, still_since = sent, time.monotonic()
            if sent >= megabytes << 20:
                break
            time.sleep(0.05)
        held_at = upstream.random_sent
        grown = server_rss_kb(gz) - before
        assert held_at < (megabytes << 20) // 2, f"the upstream sent {held_at >> 20} MB to a client that reads nothing"
        assert grown < 24 * 1024, f"server memory grew by {grown // 1024} MB"

        data = b""
        while b"\r\n\r\n" not in data:
            data += sock.recv(65536)
        head, _, raw = data.partition(b"\r\n\r\n")
        assert (b"Content-Encoding: gzip" in head) == (ae == "gzip")
        d = zlib.decompressobj(16 + zlib.MAX_WBITS) if ae == "gzip" else None
        decoded = 0
        while True:
            # Chunked framing: decode the whole chunks received so far.
            while True:
                line_end = raw.find(b"\r\n")
                if line_end < 0:
                    break
                size = int(raw[:line_end].split(b";")[0], 16)
                if size == 0 or len(raw) < line_end + 2 + size + 2:
                    break
                piece = raw[line_end + 2:line_end + 2 + size]
                decoded += len(d.decompress(piece)) if d else len(piece)
                raw = raw[line_end + 2 + size + 2:]
            try:
                chunk = sock.recv(1 << 20)
            except socket.timeout:
                raise AssertionError(f"stalled: decoded {decoded}, upstream sent {upstream.random_sent}, raw {len(raw)} {raw[:20]!r}")
            if not chunk:
                break
            raw += chunk
        if d:
            decoded += len(d.flush())
        assert decoded == megabytes << 20
    finally:
        sock.close()


# ---------------------------------------------------------------------------
# HTTP/2


def curl_h2(port, path, ae="gzip"):
    out = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-D", "-", "-o", "-",
                          "-H", f"Accept-Encoding: {ae}", f"http://127.0.0.1:{port}{path}"],
                         capture_output=True, timeout=30, check=True).stdout
    head, _, body = out.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines[0].startswith("HTTP/2 "), lines[0]
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    return int(lines[0].split()[1]), headers, body


@pytest.mark.parametrize("path,size", [
    ("/page.html", None),
    ("/up/x?chunked=1&n=300000", 300000),
    ("/up/x?n=300000", 300000),
], ids=["static", "proxied-chunked", "proxied-length"])
def test_http2(gz, path, size):
    original = PAGE if size is None else text_body(size)
    status, headers, body = curl_h2(gz.ports[1], path)
    assert status == 200
    assert headers.get("content-encoding") == "gzip"
    assert "content-length" not in headers
    assert headers.get("vary") == "Accept-Encoding"
    assert gzip.decompress(body) == original


def test_http2_streaming_upstream_is_flushed_when_it_pauses(gz, upstream):
    """The SSE-like case over HTTP/2 (h2c, Python's h2 as the client): the
    first 16 KB decode before the upstream sends the rest."""
    import h2.config
    import h2.connection
    import h2.events
    body = text_body(100_000)
    sock = socket.create_connection(("127.0.0.1", gz.ports[1]), timeout=10)
    try:
        conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        conn.initiate_connection()
        conn.send_headers(1, [(":method", "GET"), (":scheme", "http"), (":authority", "localhost"),
                              (":path", "/up/x?chunked=1&pause=1&n=100000"), ("accept-encoding", "gzip")],
                          end_stream=True)
        sock.sendall(conn.data_to_send())
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        decoded = b""
        headers = {}
        released = False
        ended = False
        deadline = time.monotonic() + 20
        while not ended:
            assert time.monotonic() < deadline, f"only {len(decoded)} bytes decoded"
            data = sock.recv(65536)
            assert data, "connection closed"
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived):
                    headers = {k.decode(): v.decode() for k, v in event.headers}
                elif isinstance(event, h2.events.DataReceived):
                    conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
                    decoded += d.decompress(event.data)
                elif isinstance(event, h2.events.StreamEnded):
                    ended = True
            sock.sendall(conn.data_to_send())
            if not released and len(decoded) >= 16384:
                # Decoded while the upstream still holds the rest back.
                assert decoded == body[:len(decoded)]
                released = True
                upstream.release()
        assert released, "nothing decodable arrived before the end"
        assert headers.get("content-encoding") == "gzip"
        assert decoded + d.flush() == body
    finally:
        sock.close()


def test_http2_curl_compressed_and_identity(gz):
    out = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "--compressed",
                          f"http://127.0.0.1:{gz.ports[1]}/style.css"], capture_output=True, timeout=30,
                         check=True).stdout
    assert out == CSS
    status, headers, body = curl_h2(gz.ports[1], "/style.css", ae="identity")
    assert "content-encoding" not in headers and body == CSS


def test_http1_curl_compressed(gz):
    out = subprocess.run(["curl", "-s", "--compressed", f"http://127.0.0.1:{gz.port}/up/x?chunked=1&n=200000"],
                         capture_output=True, timeout=30, check=True).stdout
    assert out == text_body(200000)
