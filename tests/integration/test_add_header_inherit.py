"""add_header_inherit and add_trailer_inherit (ngx_http_headers_module,
nginx 1.29.3): `on` keeps the classic rule (a block's own add_header lines
replace the outer ones), `merge` adds the outer lines after the block's
own, `off` drops them (a block with no lines of its own then sends none).
The mode is inherited like any setting and may stand anywhere in its
block. Debian's nginx 1.22 predates the directives: the tests skip there,
and the classic rule they build on is checked against it in
test_add_trailer.py and the add_header tests."""

import re
import socket
import subprocess

import pytest

import harness

CONF = r"""
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        root @PREFIX@/www;
        add_header X-Server s;
        add_header X-Server-Two s2;
        add_trailer X-Trailer-Server ts;

        location /classic/ {
            add_header X-Location l;
        }
        location /merge/ {
            add_header X-Location l;
            add_header_inherit merge;    # after the line it applies to: position does not matter
            location /merge/nested/ {
                add_header X-Nested n;   # merge is inherited: nested + location + server
            }
            location /merge/none/ {
            }
        }
        location /off/ {
            add_header_inherit off;
            location /off/nested/ {      # off inherited: still nothing from outside
            }
            location /off/own/ {
                add_header X-Own o;
            }
            location /off/back-on/ {
                add_header_inherit on;   # on again: the outer block's (empty) list
            }
        }
        location /trailers/ {
            add_trailer_inherit merge;
            add_trailer X-Trailer-Location tl;
        }
        location /trailers-off/ {
            add_trailer_inherit off;
        }
        location /if/ {
            add_header_inherit merge;
            add_header X-Location l;
            if ($arg_x) {
                add_header X-If i;
            }
        }
    }
    server {
        listen 127.0.0.1:@PORT1@;
        server_name localhost;
        root @PREFIX@/www;
        add_header_inherit merge;
        add_header X-Server s;
        location / {
            add_header X-Location l;
        }
    }
"""

PATHS = ("classic", "merge", "merge/nested", "merge/none", "off", "off/nested", "off/own", "off/back-on",
         "trailers", "trailers-off", "if", "")


@pytest.fixture
def srv(make_server):
    if harness.IS_NGINX:
        out = subprocess.run([harness.BIN, "-v"], capture_output=True, text=True).stderr
        m = re.search(r"nginx/(\d+)\.(\d+)\.(\d+)", out)
        if m and tuple(map(int, m.groups())) < (1, 29, 3):
            pytest.skip("add_header_inherit came in nginx 1.29.3")
    s = make_server(harness.base_conf(CONF), nports=2, start=False)
    for d in PATHS:
        (s.prefix / "www" / d).mkdir(parents=True, exist_ok=True)
        (s.prefix / "www" / d / "a.txt").write_text("hello\n")
    s.start()
    return s


def added(port, path):
    """The X- fields of the response, in order."""
    r = harness.http(port, path)
    assert r.status == 200, r
    return [f"{k}: {v}" for k, v in r.headers if k.lower().startswith("x-")]


def test_on_is_the_classic_rule(srv):
    assert added(srv.port, "/a.txt") == ["X-Server: s", "X-Server-Two: s2"]
    assert added(srv.port, "/classic/a.txt") == ["X-Location: l"]


def test_merge_adds_the_outer_lines_after_the_own(srv):
    assert added(srv.port, "/merge/a.txt") == ["X-Location: l", "X-Server: s", "X-Server-Two: s2"]


def test_merge_is_inherited_down_the_blocks(srv):
    assert added(srv.port, "/merge/nested/a.txt") == ["X-Nested: n", "X-Location: l", "X-Server: s",
                                                      "X-Server-Two: s2"]
    assert added(srv.port, "/merge/none/a.txt") == ["X-Location: l", "X-Server: s", "X-Server-Two: s2"]


def test_off_drops_the_outer_lines(srv):
    assert added(srv.port, "/off/a.txt") == []
    assert added(srv.port, "/off/nested/a.txt") == []
    assert added(srv.port, "/off/own/a.txt") == ["X-Own: o"]
    assert added(srv.port, "/off/back-on/a.txt") == []


def test_merge_in_an_if_block(srv):
    assert added(srv.port, "/if/a.txt") == ["X-Location: l", "X-Server: s", "X-Server-Two: s2"]
    assert added(srv.port, "/if/a.txt?x=1") == ["X-If: i", "X-Location: l", "X-Server: s", "X-Server-Two: s2"]


def test_merge_set_at_server_level_reaches_its_locations(srv):
    assert added(srv.ports[1], "/a.txt") == ["X-Location: l", "X-Server: s"]


def trailers(port, path):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    return data.partition(b"\r\n\r\n")[2].split(b"0\r\n", 1)[-1] if b"chunked" in data.lower() else b""


def test_add_trailer_inherit(srv):
    assert trailers(srv.port, "/a.txt") == b"X-Trailer-Server: ts\r\n\r\n"
    assert trailers(srv.port, "/trailers/a.txt") == b"X-Trailer-Location: tl\r\nX-Trailer-Server: ts\r\n\r\n"
    assert trailers(srv.port, "/trailers-off/a.txt") == b""


@pytest.mark.parametrize("line,message", [
    ("add_header_inherit yes;", 'invalid value "yes"'),
    ("add_trailer_inherit;", 'invalid number of arguments in "add_trailer_inherit" directive'),
    ("add_header_inherit on; add_header_inherit off;", '"add_header_inherit" directive is duplicate'),
])
def test_bad_lines_are_refused(tmp_path, line, message):
    if harness.IS_NGINX:
        pytest.skip("add_header_inherit came in nginx 1.29.3")
    conf = tmp_path / "nginx.conf"
    conf.write_text(harness.base_conf(f"server {{ listen 127.0.0.1:1; {line} }}").replace("@PREFIX@", str(tmp_path)))
    (tmp_path / "logs").mkdir()
    r = harness.cli(["-t", "-c", str(conf)], prefix=tmp_path)
    assert r.returncode != 0 and message in r.stdout + r.stderr, r.stdout + r.stderr
