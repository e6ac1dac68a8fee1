"""The SSI module as nginx's ngx_http_ssi_module: echo (encodings, default,
request variables), set, if/elif/else/endif with regex captures, config
errmsg, block and stub, include virtual= (static, relative, nested,
wait="yes", set=, a proxied location, a missing one), file=, a command
split across the pieces an upstream body arrives in, broken commands and
ssi_silent_errors, a page that includes itself, and the head nginx leaves
(no length, no validators unless ssi_last_modified). Also runs against
nginx (TORII_BIN=/usr/sbin/nginx)."""

import socket

import pytest

import harness
from counting_upstream import CountingUpstream
from scripted_upstream import SteppedUpstream

ERR = b"[an error occurred while processing the directive]"


@pytest.fixture
def backend():
    """Fixed bodies by path (404 for others)."""
    b = CountingUpstream()
    b.route("/frag", body=b"[proxied fragment]", headers={"Content-Type": "text/html"})
    b.route("/ssi-frag", body=b"<i><!--#echo var=\"uri\" --></i>", headers={"Content-Type": "text/html"})
    yield b
    b.stop()


PAGES = {
    "echo.html": (
        '<!--#set var="v" value="<a href=\'x\'>&amp;" -->'
        "e=<!--#echo var=\"v\" -->;"
        "n=<!--#echo var=\"v\" encoding=\"none\" -->;"
        "u=<!--#echo var=\"v\" encoding=\"url\" -->;"
        "sticky=<!--#echo var=\"v\" -->;"
        "d=<!--#echo var=\"missing\" default=\"dflt\" -->;"
        "none=<!--#echo var=\"missing\" encoding=\"none\" -->;"
        "arg=<!--#echo var=\"arg_q\" -->;"
        "uri=<!--#echo var=\"URI\" -->;"
        '<!--#set var="w" value="${v}-$arg_q \\$x" -->'
        "w=<!--#echo var=\"w\" -->."
    ),
    "cond.html": (
        '<!--#if expr="$arg_c = one" -->ONE'
        '<!--#elif expr="$arg_c = /^t(w)(?<rest>.)\\$/" -->TWO:<!--#echo var="1" -->:<!--#echo var="rest" -->'
        '<!--#elif expr="$arg_c != three" -->OTHER'
        "<!--#else -->THREE<!--#echo var=\"never\" --><!--#endif -->."
    ),
    "inc.html": 'a<!--#include virtual="/frags/one.html" -->b<!--#include virtual="two.html" -->c',
    "frags/one.html": "[one]",
    "two.html": "[two:<!--#echo var=\"uri\" -->]",
    "nested.html": 'N<!--#include virtual="/nest/outer.html" -->N',
    "nest/outer.html": 'O<!--#include virtual="inner.html" -->O',
    "nest/inner.html": "I<!--#echo var=\"uri\" -->I",
    "wait.html": '<!--#include virtual="/frags/one.html" wait="yes" -->|<!--#include file="frags/one.html" -->',
    "setinc.html": '<!--#include virtual="/frags/one.html" set="got" -->got=<!--#echo var="got" -->.',
    "stub.html": (
        '<!--#block name="fallback" -->[fallback <!--#echo var="x" -->]<!--#endblock -->'
        'x<!--#include virtual="/nothing-here.html" stub="fallback" -->y'
        '<!--#include virtual="/frags/one.html" stub="fallback" -->z'
    ),
    "missing.html": 'x<!--#include virtual="/nothing-here.html" -->y',
    "broken.html": 'a<!--#echo var=x -->b<!--#nosuch -->c<!--#include -->d<!--#echo var="a" var="b" -->e',
    "errmsg.html": '<!--#config errmsg="[oops]" -->a<!--#echo -->b',
    "self.html": 'A<!--#include virtual="/self.html" -->B',
    "proxied.html": 'p<!--#include virtual="/up/frag" -->q<!--#include virtual="/up/ssi-frag" -->r',
    "plain.txt": '<!--#echo var="uri" -->',
    "empty.html": "",
    "header.html": 'X<!--#echo var="http_bar" -->X',
}


@pytest.fixture
def srv(make_server, tmp_path, backend):
    html = tmp_path / "html"
    for name, text in PAGES.items():
        path = html / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    conf = harness.base_conf(http=f"""
    server {{
        listen 127.0.0.1:@PORT@;
        root {html};
        ssi on;
        location /up/ {{
            proxy_pass http://127.0.0.1:{backend.port}/;
        }}
        location /silent/ {{
            alias {html}/;
            ssi_silent_errors on;
        }}
        location /lm/ {{
            alias {html}/;
            ssi_last_modified on;
        }}
        location /off/ {{
            alias {html}/;
            ssi off;
        }}
        location /typed/ {{
            alias {html}/;
            ssi_types text/plain;
        }}
        location /setter/ {{
            set $http_bar "set here";
        }}
    }}
""")
    return make_server(conf)


def get(srv, path):
    r = harness.http(srv.port, path)
    assert r.status == 200, (path, r.status, r.body)
    return r.body


def test_echo_of_a_header_variable_another_location_sets(srv):
    """`set $http_bar` in another location does not hide the request's Bar
    header from an echo here, as nginx."""
    r = harness.http(srv.port, "/header.html", headers={"Bar": "from-client"})
    assert r.body == b"Xfrom-clientX"


def test_echo_set_and_encodings(srv):
    body = get(srv, "/echo.html?q=A%20b")
    assert body == (
        b"e=&lt;a href='x'&gt;&amp;amp;;"
        b"n=<a href='x'>&amp;;"
        b"u=%3Ca%20href=%27x%27%3E&amp;;"
        b"sticky=%3Ca%20href=%27x%27%3E&amp;;"
        b"d=dflt;none=(none);arg=A%20b;uri=/echo.html;"
        b"w=<a href='x'>&amp;-A%20b $x."
    )


@pytest.mark.parametrize("arg, expected", [
    ("one", b"ONE."), ("two", b"TWO:w:o."), ("four", b"OTHER."), ("three", b"THREE(none)."),
])
def test_if_elif_else(srv, arg, expected):
    assert get(srv, f"/cond.html?c={arg}") == expected


def test_include_virtual_absolute_and_relative(srv):
    assert get(srv, "/inc.html") == b"a[one]b[two:/two.html]c"


def test_nested_includes(srv):
    assert get(srv, "/nested.html") == b"NOI/nest/inner.htmlION"


def test_include_wait_and_file(srv):
    assert get(srv, "/wait.html") == b"[one]|[one]"


def test_include_set(srv):
    assert get(srv, "/setinc.html") == b"got=[one]."


def test_stub_replaces_a_failed_include(srv):
    # The block's commands run when it is output.
    assert get(srv, "/stub.html") == b"x[fallback (none)]y[one]z"


def test_missing_include_inserts_the_error_page(srv):
    body = get(srv, "/missing.html")
    assert body.startswith(b"x<html>") and body.endswith(b"</html>\r\ny")
    assert b"404 Not Found" in body


def test_include_of_a_proxied_location(srv):
    # The second fragment is parsed too (`ssi on` applies to its location),
    # its $uri the subrequest's.
    assert get(srv, "/proxied.html") == b"p[proxied fragment]q<i>/up/ssi-frag</i>r"


def test_broken_commands_print_the_error(srv):
    assert get(srv, "/broken.html") == b"a" + ERR + b"b" + ERR + b"c" + ERR + b"d" + ERR + b"e"
    assert get(srv, "/silent/broken.html") == b"abcde"
    assert get(srv, "/errmsg.html") == b"a[oops]b"


def test_page_that_includes_itself_stops(srv):
    body = get(srv, "/self.html")
    depth = body.count(b"A")
    assert depth == body.count(b"B")
    assert 40 <= depth <= 60
    assert body == b"A" * depth + ERR + b"B" * depth


def test_head_as_nginx(srv):
    r = harness.http(srv.port, "/inc.html")
    assert r.header("Content-Length") is None
    assert r.header("Last-Modified") is None
    assert r.header("ETag") is None
    r = harness.http(srv.port, "/lm/inc.html")
    assert r.body == b"a[one]b[two:/lm/two.html]c"
    assert r.header("Content-Length") is None
    assert r.header("Last-Modified") is not None
    assert r.header("ETag", "").startswith('W/"')


def test_off_types_and_empty(srv):
    r = harness.http(srv.port, "/off/inc.html")
    assert r.body == PAGES["inc.html"].encode()
    assert r.header("Content-Length") == str(len(PAGES["inc.html"]))
    assert harness.http(srv.port, "/plain.txt").body == PAGES["plain.txt"].encode()
    assert harness.http(srv.port, "/typed/plain.txt").body == b"/typed/plain.txt"
    r = harness.http(srv.port, "/empty.html")
    assert r.status == 200 and r.body == b"" and r.header("Content-Length") == "0"


def test_head_request_has_no_body(srv):
    with harness.Conn(srv.port) as c:
        r = c.request("HEAD", "/inc.html")
        assert r.status == 200 and r.body == b""
        assert r.header("Content-Length") is None


# ---------------------------------------------------------------------------
# A proxied page whose body arrives in pieces


def dechunk(data):
    out = b""
    while True:
        line, _, data = data.partition(b"\r\n")
        size = int(line.split(b";")[0], 16)
        if size == 0:
            return out
        out += data[:size]
        data = data[size + 2:]


def test_command_split_across_upstream_pieces(make_server):
    up = SteppedUpstream([b"before <!--#ec", b"ho var=\"ar", b"g_q\" --> mid <!", b"-- plain --> end"])
    try:
        srv = make_server(harness.base_conf(http=f"""
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{
            proxy_pass http://127.0.0.1:{up.port};
            proxy_buffering off;
            ssi on;
        }}
    }}
"""))
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
        s.sendall(b"GET /x?q=V HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        got = b""

        def read_until(marker):
            nonlocal got
            while marker not in got:
                data = s.recv(65536)
                assert data, got
                got += data

        # Text before a command goes out before the rest of it arrives.
        read_until(b"before ")
        up.go[1].set()
        up.go[2].set()
        read_until(b"V mid ")
        up.go[3].set()
        read_until(b"\r\n0\r\n\r\n")
        s.close()
        head, _, body = got.partition(b"\r\n\r\n")
        assert b"content-length" not in head.lower()
        assert dechunk(body) == b"before V mid <!-- plain --> end"
    finally:
        up.close()


def test_range_request_gets_the_whole_processed_page(srv):
    # nginx's range filter finds ranges turned off by SSI: a 200 of the page.
    r = harness.http(srv.port, "/inc.html", headers={"Range": "bytes=0-3"})
    assert r.status == 200
    assert r.body == b"a[one]b[two:/two.html]c"
    assert r.header("Accept-Ranges") is None
