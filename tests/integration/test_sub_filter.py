"""sub_filter as nginx's sub module: several strings, case-insensitive
matching, sub_filter_once, variables in the replacement and in the string,
sub_filter_types, sub_filter_last_modified and the head it leaves (no
length, no validators), matches across the pieces a proxied body arrives
in, across the slices a large file is read in, a gzip-encoded upstream body
left alone and a replaced body then compressed. Also runs against nginx
(TORII_BIN=/usr/sbin/nginx)."""

import gzip
import socket

import pytest

import harness
from scripted_upstream import SteppedUpstream

LARGE_SLICE = 65536  # where a large file's first read slice ends in torii


@pytest.fixture
def srv(make_server, tmp_path):
    html = tmp_path / "html"
    (html / "t").mkdir(parents=True)
    (html / "once.html").write_text("<p>Hello World, hello world, HELLO world.</p>")
    (html / "t" / "plain.txt").write_text("hello there")
    (html / "order.html").write_text("abcd ab abc")
    (html / "empty.html").write_text("")
    # A string that straddles the end of the first 64 KB slice, and many more.
    big = bytearray(b"x" * (LARGE_SLICE - 3)) + b"needle" + b"y" * 1000
    for _ in range(200):
        big += b"-needle-" + b"z" * 5000
    (html / "big.html").write_bytes(bytes(big))
    conf = harness.base_conf(http=f"""
    server {{
        listen 127.0.0.1:@PORT@;
        root {html};
        location = /once.html {{
            sub_filter hello bye;
            sub_filter WORLD "planet $host";
        }}
        location = /all.html {{
            alias {html}/once.html;
            sub_filter hello bye;
            sub_filter_once off;
        }}
        location = /order.html {{
            sub_filter ab 1;
            sub_filter abc 2;
            sub_filter_once off;
        }}
        location = /dyn.html {{
            alias {html}/once.html;
            sub_filter $arg_find "[$arg_find]";
            sub_filter_once off;
        }}
        location = /lm.html {{
            alias {html}/once.html;
            sub_filter hello bye;
            sub_filter_last_modified on;
        }}
        location = /empty.html {{ sub_filter hello bye; }}
        location = /big.html {{
            sub_filter needle N;
            sub_filter_once off;
        }}
        location /t/ {{ sub_filter hello bye; }}
        location /typed/ {{
            alias {html}/t/;
            sub_filter hello bye;
            sub_filter_types text/plain;
        }}
        location /gz/ {{
            alias {html}/;
            gzip on;
            gzip_min_length 1;
            sub_filter_once off;
            sub_filter hello bye;
        }}
    }}
""")
    return make_server(conf)


def test_first_occurrence_of_each_string_case_insensitive(srv):
    r = harness.http(srv.port, "/once.html", host="example.test")
    assert r.status == 200
    # "World" comes before the second "hello": each string once, in body order.
    assert r.body == b"<p>bye planet example.test, hello world, HELLO world.</p>"


def test_once_off_replaces_every_occurrence(srv):
    r = harness.http(srv.port, "/all.html")
    assert r.body == b"<p>bye World, bye world, bye world.</p>"


def test_first_string_written_wins_at_a_position(srv):
    # "abc" is never tried where "ab", written first, matches.
    r = harness.http(srv.port, "/order.html")
    assert r.body == b"1cd 1 1c"


def test_string_with_variables(srv):
    r = harness.http(srv.port, "/dyn.html?find=WoRlD")
    assert r.body == b"<p>Hello [WoRlD], hello [WoRlD], HELLO [WoRlD].</p>"
    # A string that renders empty is left out: the body passes as it is.
    r = harness.http(srv.port, "/dyn.html")
    assert r.body == b"<p>Hello World, hello world, HELLO world.</p>"


def test_head_loses_length_and_validators(srv):
    r = harness.http(srv.port, "/once.html")
    assert r.header("Content-Length") is None
    assert r.header("Transfer-Encoding") == "chunked"
    assert r.header("Last-Modified") is None
    assert r.header("ETag") is None


def test_a_range_gets_the_whole_filtered_body(srv):
    # The file's byte ranges do not apply to the filtered body: nginx's
    # range filter finds no length and answers 200 without Accept-Ranges.
    for headers in ({}, {"Range": "bytes=0-9"}):
        r = harness.http(srv.port, "/once.html", headers=headers)
        assert r.status == 200, r
        assert r.header("Accept-Ranges") is None and r.header("Content-Range") is None
        assert r.body.startswith(b"<p>bye"), r


def test_last_modified_on_keeps_it_and_weakens_etag(srv):
    r = harness.http(srv.port, "/lm.html")
    assert r.body.startswith(b"<p>bye World")
    assert r.header("Last-Modified") is not None
    assert r.header("ETag", "").startswith('W/"')
    assert r.header("Content-Length") is None


def test_empty_body_untouched(srv):
    r = harness.http(srv.port, "/empty.html")
    assert r.status == 200
    assert r.header("Content-Length") == "0"
    assert r.header("ETag") is not None


def test_types(srv):
    r = harness.http(srv.port, "/t/plain.txt")
    assert r.body == b"hello there"
    assert r.header("Content-Length") == "11"
    r = harness.http(srv.port, "/typed/plain.txt")
    assert r.body == b"bye there"


def test_large_file_across_read_slices(srv):
    r = harness.http(srv.port, "/big.html")
    assert r.status == 200
    assert b"needle" not in r.body
    assert r.body.count(b"N") == 201
    assert r.body[LARGE_SLICE - 3:LARGE_SLICE - 2] == b"N"
    assert len(r.body) == (LARGE_SLICE - 3) + 1 + 1000 + 200 * (2 + 1 + 5000)


def test_replaced_body_is_then_compressed(srv):
    r = harness.http(srv.port, "/gz/all-hello.html", headers={"Accept-Encoding": "gzip"})
    assert r.status == 404  # not a file: the 404 page passes too (text/html)
    r = harness.http(srv.port, "/gz/once.html", headers={"Accept-Encoding": "gzip"})
    assert r.header("Content-Encoding") == "gzip"
    assert gzip.decompress(r.body) == b"<p>bye World, bye world, bye world.</p>"


# ---------------------------------------------------------------------------
# Proxied bodies


def dechunk(data):
    out = b""
    while True:
        line, _, data = data.partition(b"\r\n")
        size = int(line.split(b";")[0], 16)
        if size == 0:
            return out
        out += data[:size]
        data = data[size + 2:]


def proxy_conf(port, extra=""):
    return harness.base_conf(http=f"""
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{
            proxy_pass http://127.0.0.1:{port};
            proxy_buffering off;
            proxy_set_header Accept-Encoding "";
            sub_filter_once off;
            sub_filter world planet;
            sub_filter "<b>" "<i>";
            {extra}
        }}
    }}
""")


def test_match_across_proxied_pieces(make_server):
    up = SteppedUpstream([b"hello wor", b"ld and <", b"b>bold</b> worl", b"d"])
    try:
        srv = make_server(proxy_conf(up.port))
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        s.sendall(b"GET /x HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        got = b""

        def read_until(marker):
            nonlocal got
            while marker not in got:
                data = s.recv(65536)
                assert data, got
                got += data

        # Only what cannot start a match goes out before the next piece.
        read_until(b"hello ")
        up.go[1].set()
        read_until(b"planet and ")
        up.go[2].set()
        read_until(b"<i>bold</b> ")
        up.go[3].set()
        read_until(b"\r\n0\r\n\r\n")
        s.close()
        head, _, body = got.partition(b"\r\n\r\n")
        assert b"Content-Length" not in head
        assert dechunk(body) == b"hello planet and <i>bold</b> planet"
        assert b"accept-encoding: \r\n" not in up.request.lower()
    finally:
        up.close()


def test_encoded_upstream_body_left_alone(make_server):
    body = gzip.compress(b"hello world " * 50)
    up = SteppedUpstream([body], headers=b"Content-Type: text/html\r\nContent-Encoding: gzip\r\n")
    try:
        srv = make_server(proxy_conf(up.port))
        r = harness.http(srv.port, "/x")
        assert r.header("Content-Encoding") == "gzip"
        assert gzip.decompress(r.body) == b"hello world " * 50
    finally:
        up.close()


def test_held_tail_goes_out_at_the_end(make_server):
    # The body ends inside a possible match: those bytes go out unchanged.
    up = SteppedUpstream([b"hello wor"])
    try:
        srv = make_server(proxy_conf(up.port))
        r = harness.http(srv.port, "/x")
        assert r.body == b"hello wor"
    finally:
        up.close()


def test_config_errors(tmp_path):
    conf = harness.base_conf(http="""
    server { listen 127.0.0.1:1; location / { sub_filter "" x; } }
""")
    path = tmp_path / "bad.conf"
    path.write_text(conf.replace("@PREFIX@", str(tmp_path)))
    (tmp_path / "logs").mkdir()
    r = harness.cli(["-t", "-c", str(path)], prefix=tmp_path)
    assert r.returncode != 0
    assert "empty search pattern" in r.stdout + r.stderr
