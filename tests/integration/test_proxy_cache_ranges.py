"""Ranges and the cache, as nginx: a hit serves one range or several
(multipart/byteranges, as a static file); a miss that will be stored serves
one range of the response as it streams (the upstream is asked for the
whole response), but several ranges get the whole response; without the
upstream's Accept-Ranges the whole response goes. Passes against nginx
(TORII_BIN=/usr/sbin/nginx)."""

import re

import pytest

import harness
from counting_upstream import CountingUpstream
from test_proxy_cache import cache_conf, status_of

BODY = bytes(range(256)) * 80  # 20 KB


@pytest.fixture
def up():
    u = CountingUpstream()
    yield u
    u.stop()


@pytest.fixture
def srv(make_server, up):
    up.route("/r", body=BODY, headers={"Accept-Ranges": "bytes", "Content-Type": "application/x-test"})
    up.route("/plain", body=BODY)
    return make_server(cache_conf(up.port, "proxy_cache_valid 200 10m;"))


def parts(r):
    """The parts of a multipart/byteranges response: [(content-range, type, bytes)]."""
    m = re.fullmatch(r"multipart/byteranges; boundary=(\S+)", r.header("Content-Type"))
    assert m, r.header("Content-Type")
    boundary = m.group(1).encode()
    chunks = r.body.split(b"--" + boundary)
    assert chunks[-1] in (b"--\r\n", b"--"), chunks[-1][:40]
    out = []
    for c in chunks[1:-1]:
        head, _, data = c.partition(b"\r\n\r\n")
        fields = dict(line.split(": ", 1) for line in head.decode().strip().split("\r\n"))
        assert data.endswith(b"\r\n")
        out.append((fields["Content-Range"], fields.get("Content-Type"), data[:-2]))
    return out


def test_hit_with_several_ranges_is_multipart(srv, up):
    assert status_of(srv, "/r")[0] == "MISS"
    st, r = status_of(srv, "/r", headers={"Range": "bytes=0-9,100-199,-5"})
    assert (st, r.status) == ("HIT", 206)
    assert r.header("Content-Length") == str(len(r.body))
    assert parts(r) == [
        (f"bytes 0-9/{len(BODY)}", "application/x-test", BODY[0:10]),
        (f"bytes 100-199/{len(BODY)}", "application/x-test", BODY[100:200]),
        (f"bytes {len(BODY) - 5}-{len(BODY) - 1}/{len(BODY)}", "application/x-test", BODY[-5:]),
    ]
    assert up.count("/r") == 1


def test_miss_with_one_range_gets_the_range(srv, up):
    st, r = status_of(srv, "/r", headers={"Range": "bytes=1000-1999"})
    assert (st, r.status, r.body) == ("MISS", 206, BODY[1000:2000])
    assert r.header("Content-Range") == f"bytes 1000-1999/{len(BODY)}"
    _, _, headers = up.seen[0]
    assert "Range" not in headers  # the whole response was asked for, and stored
    st, r = status_of(srv, "/r")
    assert (st, r.status, r.body) == ("HIT", 200, BODY)


def test_miss_with_a_suffix_range(srv, up):
    st, r = status_of(srv, "/r", headers={"Range": "bytes=-100"})
    assert (st, r.status, r.body) == ("MISS", 206, BODY[-100:])


def test_miss_with_several_ranges_gets_the_whole_response(srv, up):
    st, r = status_of(srv, "/r", headers={"Range": "bytes=0-9,100-199"})
    assert (st, r.status, r.body) == ("MISS", 200, BODY)


def test_miss_without_accept_ranges_gets_the_whole_response(srv, up):
    st, r = status_of(srv, "/plain", headers={"Range": "bytes=0-9"})
    assert (st, r.status, r.body) == ("MISS", 200, BODY)
    st, r = status_of(srv, "/plain", headers={"Range": "bytes=0-9,20-29"})
    assert (st, r.status, r.body) == ("HIT", 200, BODY)


def test_miss_not_stored_gets_the_whole_response(make_server, up):
    up.route("/cookie", body=BODY, headers={"Accept-Ranges": "bytes", "Set-Cookie": "a=b"})
    srv = make_server(cache_conf(up.port, "proxy_cache_valid 200 10m;"))
    st, r = status_of(srv, "/cookie", headers={"Range": "bytes=0-9"})
    assert (st, r.status, r.body) == ("MISS", 200, BODY)


def test_miss_with_an_unsatisfiable_range(srv, up):
    st, r = status_of(srv, "/r", headers={"Range": f"bytes={len(BODY) + 10}-"})
    assert (st, r.status) == ("MISS", 416)
    assert r.header("Content-Range") == f"bytes */{len(BODY)}"
    # As nginx: that response is not stored.
    st, r = status_of(srv, "/r")
    assert (st, r.status, r.body) == ("MISS", 200, BODY)
