"""userid (nginx's ngx_http_userid_filter_module): the cookie's exact
bytes (base64 of four 32-bit words, nginx's layout for `on` and `v1`),
its attributes, userid_mark, $uid_reset, $uid_got/$uid_set in the access
log. The same cookie text gives the same $uid_got here and in nginx, so a
cookie either one set is read by the other. Also runs against nginx
(TORII_BIN=/usr/sbin/nginx)."""

import base64
import itertools
import re
import struct

import pytest

import harness

CONF = r"""
    log_format uid '$request_uri|$uid_got|$uid_set';
    server {
        listen 127.0.0.1:@PORT@;
        root @PREFIX@;
        access_log @PREFIX@/logs/uid.log uid;
        location / { userid on; }
        location /attrs/ {
            userid on;
            userid_name visitor;
            userid_domain example.com;
            userid_path /attrs/;
            userid_expires max;
            userid_flags httponly samesite=lax;
            userid_p3p 'CP="CUR ADM OUR NOR STA NID"';
        }
        location /expires/ { userid on; userid_expires 1h; userid_flags secure; }
        location /v1/ { userid v1; userid_service 1234; }
        location /svc/ { userid on; userid_service 1234; }
        location /log/ { userid log; }
        location /mark/ { userid on; userid_mark Z; }
        location /reset/ { userid on; set $uid_reset 1; }
        location = /reset-value { userid on; return 200 "[$uid_reset]"; }
        location /off/ { userid off; }
    }
"""

# Four words as an x86 nginx stores them for `userid on` on 127.0.0.1.
KNOWN = "fwAAAWbSkR8D0CksAwMEAg=="


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("userid")
    for d in ("attrs", "expires", "v1", "svc", "log", "mark", "reset", "off"):
        (prefix / d).mkdir()
        (prefix / d / "index.html").write_text("x\n")
    (prefix / "index.html").write_text("x\n")
    server = harness.Server(harness.base_conf(CONF), prefix)
    server.start()
    yield server
    server.stop()


def words(cookie_value):
    return struct.unpack("<4I", base64.b64decode(cookie_value[:22] + "=="))


def text(name, w):
    return name + "=" + "".join("%08X" % x for x in w)


# Each request carries a query of its own, so the log line of the last
# request for a path cannot be mistaken for an earlier one's.
_request_numbers = itertools.count()
_last_uri = {}


def log_line(srv, path):
    """The access log line of the last request for `path` (polled: the line
    is written once the response is out)."""
    uri = _last_uri[path]

    def find():
        log = srv.prefix.joinpath("logs", "uid.log")
        if not log.exists():  # torii creates an access log with its first line
            return None
        lines = [ln for ln in log.read_text().splitlines() if ln.startswith(uri + "|")]
        return lines[-1] if lines else None
    return harness.wait_until(find, 10, what=f"log line for {uri}").split("|")


def get(srv, path, cookie=None):
    headers = {"Cookie": cookie} if cookie else None
    _last_uri[path] = f"{path}?n={next(_request_numbers)}"
    return harness.http(srv.port, _last_uri[path], headers=headers)


def test_new_visitor_gets_a_cookie(srv):
    r = get(srv, "/")
    assert r.status == 200
    sc = r.header("Set-Cookie")
    m = re.fullmatch(r"uid=([A-Za-z0-9+/]{22}==); path=/", sc)
    assert m, sc
    w = words(m.group(1))
    assert w[0] == struct.unpack("<I", bytes([127, 0, 0, 1]))[0]  # the server's address, network order
    assert w[3] != 0
    _, got, uid_set = log_line(srv, "/")
    assert got == "-"
    assert uid_set == text("uid", w)
    # Back with it: nothing set, the log shows what came.
    r2 = get(srv, "/index.html", cookie="uid=" + m.group(1))
    assert r2.header("Set-Cookie") is None
    _, got2, set2 = log_line(srv, "/index.html")
    assert got2 == text("uid", w) and set2 == "-"


def test_known_cookie_reads_the_same_as_nginx(srv):
    # The words are the cookie's bytes read in host order, as nginx prints them.
    get(srv, "/off/")  # userid off: no $uid_got at all
    assert log_line(srv, "/off/")[1] == "-"
    get(srv, "/log/", cookie="other=1; uid=" + KNOWN)
    assert log_line(srv, "/log/")[1:] == [text("uid", words(KNOWN)), "-"]
    assert text("uid", words(KNOWN)) == "uid=0100007F1F91D2662C29D00302040303"


def test_attributes(srv):
    sc = get(srv, "/attrs/").header("Set-Cookie")
    assert re.fullmatch(r"visitor=[A-Za-z0-9+/]{22}==; expires=Thu, 31-Dec-37 23:55:55 GMT; "
                        r"domain=example.com; path=/attrs/; httponly; samesite=lax", sc), sc
    assert get(srv, "/attrs/").header("P3P") == 'CP="CUR ADM OUR NOR STA NID"'
    sc = get(srv, "/expires/").header("Set-Cookie")
    assert re.fullmatch(r"uid=[A-Za-z0-9+/]{22}==; expires=(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d-[A-Z][a-z]{2}-\d\d "
                        r"\d\d:\d\d:\d\d GMT; path=/; secure", sc), sc


def test_service_in_v1_and_on(srv):
    w = words(get(srv, "/v1/").header("Set-Cookie")[4:])
    assert w[0] == 1234  # v1: host order
    w = words(get(srv, "/svc/").header("Set-Cookie")[4:])
    assert w[0] == struct.unpack("<I", struct.pack(">I", 1234))[0]  # on: network order


def test_log_mode_sets_nothing(srv):
    r = get(srv, "/log/")
    assert r.header("Set-Cookie") is None
    assert log_line(srv, "/log/")[1:] == ["-", "-"]


def test_mark(srv):
    # An unmarked cookie is set again with the mark in place of its first '='.
    sc = get(srv, "/mark/", cookie="uid=" + KNOWN).header("Set-Cookie")
    assert sc == "uid=" + KNOWN[:22] + "Z=; path=/"
    assert get(srv, "/mark/", cookie="uid=" + KNOWN[:22] + "Z=").header("Set-Cookie") is None
    fresh = get(srv, "/mark/").header("Set-Cookie")
    assert re.fullmatch(r"uid=[A-Za-z0-9+/]{22}Z=; path=/", fresh), fresh


def test_reset(srv):
    sc = get(srv, "/reset/", cookie="uid=" + KNOWN).header("Set-Cookie")
    assert sc and not sc.startswith("uid=" + KNOWN[:22])
    _, got, uid_set = log_line(srv, "/reset/")
    assert got == text("uid", words(KNOWN)) and uid_set == text("uid", words(sc[4:]))


def test_reset_reads_empty_where_nothing_sets_it(srv):
    # nginx's $uid_reset exists in every config: "" until a `set` writes it.
    assert get(srv, "/reset-value").body == b"[]"


def test_bad_cookie_is_ignored(srv):
    r = get(srv, "/", cookie="uid=short")
    assert r.header("Set-Cookie") is not None
    harness.wait_until(lambda: "client sent too short userid cookie" in srv.error_log_text(), 10, what="error line")


@pytest.mark.parametrize("line,message", [
    ("userid maybe;", 'invalid value "maybe"'),
    ("userid_mark ab;", 'value must be "off" or a single letter, digit or "="'),
    ("userid_expires soon;", '"userid_expires" directive invalid value'),
    ("userid_flags secure sometimes;", 'invalid value "sometimes"'),
])
def test_bad_values(tmp_path, line, message):
    conf = harness.base_conf(f"server {{ listen 127.0.0.1:1; location / {{ {line} }} }}")
    harness.check_test_fails(tmp_path, conf, message)


def test_reset_by_a_map(make_server):
    """$uid_reset defined by a map (after the server that reads it): its
    value resets the cookie, "log" also logs it; a `set` still wins."""
    server = make_server(harness.base_conf("""
        server {
            listen 127.0.0.1:@PORT@;
            location / { userid on; return 200 "x"; }
            location /set/ { userid on; set $uid_reset 0; return 200 "x"; }
        }
        map $arg_reset $uid_reset { default 0; yes 1; log log; }
    """))
    cookie = {"Cookie": "uid=" + KNOWN}
    assert harness.http(server.port, "/", headers=cookie).header("Set-Cookie") is None
    sc = harness.http(server.port, "/?reset=yes", headers=cookie).header("Set-Cookie")
    assert sc and sc.startswith("uid=") and not sc.startswith("uid=" + KNOWN[:22])
    assert harness.http(server.port, "/set/?reset=yes", headers=cookie).header("Set-Cookie") is None
    sc = harness.http(server.port, "/?reset=log", headers=cookie).header("Set-Cookie")
    assert sc and not sc.startswith("uid=" + KNOWN[:22])
    harness.wait_until(lambda: 'userid cookie "uid=%s" was reset' % text("uid", words(KNOWN))[4:]
                       in server.error_log_text(), 10, what="the reset line")
