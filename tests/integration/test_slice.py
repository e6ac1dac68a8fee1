"""The slice module in front of the cache, as nginx documents it: a large
file from an upstream is fetched and cached in parts of `slice` bytes, a
whole GET is assembled from them, a range GET fetches only the parts it
touches, and a part fetched once is not fetched again. The upstream counts
the requests and the Range of each. Passes against nginx
(TORII_BIN=/usr/sbin/nginx: Debian's nginx has the slice module)."""

import threading
import time

import pytest

import harness
from counting_upstream import CountingUpstream
from scripted_upstream import head_complete, read_until
from stream_backends import TcpServer

SLICE = 4096
BODY = bytes((i * 7) % 251 for i in range(10 * 1024))  # 10 KB: parts 0-4095, 4096-8191, 8192-10239


@pytest.fixture
def up():
    u = CountingUpstream()
    u.route("/big", body=BODY, ranges=True, etag='"v1"', headers={"Content-Type": "application/octet-stream"})
    u.route("/noranges", body=BODY)
    yield u
    u.stop()


def slice_conf(port):
    return harness.base_conf(http=f"""
    proxy_cache_path @PREFIX@/cache levels=1:2 keys_zone=one:1m inactive=10m;
    server {{
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        location / {{
            slice {SLICE};
            proxy_cache one;
            proxy_cache_key $uri$is_args$args$slice_range;
            proxy_set_header Range $slice_range;
            proxy_cache_valid 200 206 1h;
            proxy_pass http://127.0.0.1:{port};
        }}
    }}
""")


def ranges_asked(up, path="/big"):
    return [h.get("Range") for _, p, h in up.seen if p == path]


def cached_parts(srv):
    """The entries stored in the cache (levels=1:2: two directory levels)."""
    return len(list((srv.prefix / "cache").glob("?/??/*")))


def get(srv, path, rng=None):
    return harness.http(srv.port, path, headers={"Range": rng} if rng else None)


def test_whole_get_is_assembled_from_slices(make_server, up):
    srv = make_server(slice_conf(up.port))
    r = get(srv, "/big")
    assert r.status == 200 and r.body == BODY
    assert r.header("Content-Length") == str(len(BODY))
    assert r.header("Content-Range") is None
    assert r.header("ETag") == '"v1"'
    assert ranges_asked(up) == ["bytes=0-4095", "bytes=4096-8191", "bytes=8192-12287"]
    # Every part is cached now.
    r = get(srv, "/big")
    assert r.status == 200 and r.body == BODY
    assert up.count("/big") == 3


def test_range_touching_two_slices_fetches_those_two(make_server, up):
    srv = make_server(slice_conf(up.port))
    r = get(srv, "/big", "bytes=4000-4200")
    assert r.status == 206 and r.body == BODY[4000:4201]
    assert r.header("Content-Range") == f"bytes 4000-4200/{len(BODY)}"
    assert ranges_asked(up) == ["bytes=0-4095", "bytes=4096-8191"]
    # Inside what is cached: nothing new upstream.
    r = get(srv, "/big", "bytes=4100-8000")
    assert r.status == 206 and r.body == BODY[4100:8001]
    assert up.count("/big") == 2
    # The last part only.
    r = get(srv, "/big", "bytes=9000-")
    assert r.status == 206 and r.body == BODY[9000:]
    assert ranges_asked(up) == ["bytes=0-4095", "bytes=4096-8191", "bytes=8192-12287"]


def test_range_in_a_later_slice_fetches_only_that_slice(make_server, up):
    srv = make_server(slice_conf(up.port))
    r = get(srv, "/big", "bytes=8200-8300")
    assert r.status == 206 and r.body == BODY[8200:8301]
    assert ranges_asked(up) == ["bytes=8192-12287"]


def test_suffix_range(make_server, up):
    """A suffix range starts with the first part (its start is not known
    before the length is), then goes on from the part that holds it."""
    srv = make_server(slice_conf(up.port))
    r = get(srv, "/big", "bytes=-100")
    assert r.status == 206 and r.body == BODY[-100:]
    assert ranges_asked(up) == ["bytes=0-4095", "bytes=8192-12287"]


def test_upstream_without_ranges_passes_through(make_server, up):
    srv = make_server(slice_conf(up.port))
    r = get(srv, "/noranges")
    assert r.status == 200 and r.body == BODY
    assert up.count("/noranges") == 1


def test_conditional_get_of_a_cached_sliced_file(make_server, up):
    """A browser revalidating a sliced (cached) file: If-None-Match with the
    current tag is a 304 without a body, If-Match with another tag a 412,
    and only the first part is asked of the upstream for either (nginx's
    not-modified filter on the assembled response)."""
    srv = make_server(slice_conf(up.port))
    r = harness.http(srv.port, "/big", headers={"If-None-Match": '"v1"'})
    assert r.status == 304 and r.body == b""
    assert r.header("ETag") == '"v1"'
    assert ranges_asked(up) == ["bytes=0-4095"]
    # The 304 leaves as soon as the part's head is known; the part goes on
    # into the cache after it (so with nginx too): wait for it to be stored.
    harness.wait_until(lambda: cached_parts(srv) == 1, 5, what="the first part in the cache")
    r = harness.http(srv.port, "/big", headers={"If-None-Match": '"v0"'})
    assert r.status == 200 and r.body == BODY
    harness.wait_until(lambda: cached_parts(srv) == 3, 5, what="every part in the cache")
    r = harness.http(srv.port, "/big", headers={"If-Match": '"v0"'})
    assert r.status == 412
    r = harness.http(srv.port, "/big", headers={"If-Match": '"v1"', "Range": "bytes=10-19"})
    assert r.status == 206 and r.body == BODY[10:20]
    assert up.count("/big") == 3  # every part once, all from the cache since


def test_part_is_cached_when_the_client_leaves_before_its_body(make_server):
    """A 304 leaves once the first part's head is known; the client then
    closes while the part's body is still on its way. As for any response
    the cache keeps, the part is read to its end and stored (nginx reads a
    cacheable upstream response on after the client has gone): a later
    range inside it asks the upstream nothing."""
    part = BODY[:SLICE]
    release = threading.Event()
    asked = []

    def answer(conn):
        request = read_until(conn, head_complete)
        if request is None:
            return
        asked.append(request)
        conn.sendall(b"HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\n"
                     b"Content-Type: application/octet-stream\r\n"
                     + f"Content-Range: bytes 0-{SLICE - 1}/{len(BODY)}\r\n"
                       f"Content-Length: {SLICE}\r\nConnection: close\r\n\r\n".encode())
        release.wait(10)
        conn.sendall(part)

    upstream = TcpServer(answer)
    try:
        srv = make_server(slice_conf(upstream.port))
        r = harness.http(srv.port, "/big", headers={"If-None-Match": '"v1"'})
        assert r.status == 304
        time.sleep(0.3)  # the client's close reaches the server first
        release.set()
        harness.wait_until(lambda: cached_parts(srv) == 1, 5, what="the part in the cache")
        r = harness.http(srv.port, "/big", headers={"Range": "bytes=10-19"})
        assert r.status == 206 and r.body == BODY[10:20]
        assert len(asked) == 1
    finally:
        release.set()
        upstream.close()
