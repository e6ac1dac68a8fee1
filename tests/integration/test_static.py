"""Static files and the request pipeline around them: MIME types, validators,
conditional and range requests, index/alias/try_files, headers, error pages,
return, location and server selection, access control, path safety."""

import calendar
import email.utils
import os
import random
import re

import pytest

import harness
from harness import Conn, http

MTIME = calendar.timegm((2020, 1, 2, 3, 4, 5))  # fixed, so Last-Modified is exact
MTIME_HTTP = "Thu, 02 Jan 2020 03:04:05 GMT"
BLOB = random.Random(7).randbytes(20 * 1024)
SECRET = b"TOPSECRET-outside-root\n"

CONF = r"""
    server_tokens on;
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        root @PREFIX@/www;
        index index.html;

        location /alias/ { alias @PREFIX@/other/; }

        location /tf/ { try_files $uri $uri/ /fallback.html; }
        location /tf404/ { try_files $uri =404; }

        location /exp/ { expires 1y; }

        location /ah/ {
            add_header X-Plain yes;
            add_header X-Always yes always;
            add_header Server extra;
        }

        # add_header of a validator replaces the file's; empty removes it.
        location /ah-set/ {
            alias @PREFIX@/www/;
            add_header Last-Modified "Mon, 28 Sep 1970 06:00:00 GMT";
            add_header ETag '"own-tag"';
        }
        location /ah-hide/ { alias @PREFIX@/www/; add_header Last-Modified ""; add_header ETag ""; }

        location /ep/ { error_page 404 /custom404.html; }
        location /ep200/ { error_page 404 =200 /x.html; }

        location = /ret200 { return 200 "text"; }
        location = /ret301 { return 301 http://example.com/new; }
        location = /ret404 { return 404; }

        location = /prec { return 200 "exact"; }
        location ^~ /prec/static/ { return 200 "prefix-noregex"; }
        location ~ ^/prec/.*\.php$ { return 200 "regex"; }
        location ~* ^/prec/.*\.jpg$ { return 200 "regex-icase"; }
        location /prec/ { return 200 "prefix"; }
        location /prec/longer/ { return 200 "longer-prefix"; }

        location /le/ {
            limit_except GET { deny all; }
        }
        location /acl-allow/ { allow 127.0.0.1; deny all; }
        location /acl-deny/ { deny 127.0.0.1; allow all; }
    }

    # Name-based selection on a second port.
    server { listen 127.0.0.1:@PORT1@; server_name exact.test; return 200 "exact"; }
    server { listen 127.0.0.1:@PORT1@; server_name *.wild.test; return 200 "wild-front"; }
    server { listen 127.0.0.1:@PORT1@; server_name mail.*; return 200 "wild-back"; }
    server { listen 127.0.0.1:@PORT1@; server_name ~^re\d+\.test$; return 200 "regex"; }
    # A capital letter makes the pattern caseless: the host is lower-cased.
    server { listen 127.0.0.1:@PORT1@; server_name ~^UPPER\.(?<rest>.+)$; return 200 "upper-regex"; }
    server { listen 127.0.0.1:@PORT1@ default_server; server_name _; return 200 "default"; }
    server { listen 127.0.0.1:@PORT1@; server_name late.test; return 200 "late"; }

    # server_tokens off on a third port.
    server {
        listen 127.0.0.1:@PORT2@;
        server_tokens off;
        root @PREFIX@/www;
    }
"""


def _write(path, data, mtime=MTIME):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    os.utime(path, (mtime, mtime))


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("static")
    www = prefix / "www"
    _write(www / "index.html", "<html>index</html>\n")
    _write(www / "blob.png", BLOB)
    _write(www / "style.css", "body{}\n")
    _write(www / "noext", "no extension\n")
    _write(www / "sub" / "index.html", "sub index\n")
    _write(www / "sub" / "page.html", "sub page\n")
    _write(www / "noindex" / "a.txt", "a\n")
    _write(www / "hello world.txt", "spaced\n")
    _write(www / "caf\u00e9.txt", "utf8 name\n")
    _write(www / "100%.txt", "percent\n")
    _write(www / "tf" / "exists.txt", "tf exists\n")
    _write(www / "tf" / "dir" / "index.html", "tf dir index\n")
    _write(www / "tf404" / "x.txt", "tf404 x\n")
    _write(www / "fallback.html", "fallback\n")
    _write(www / "exp" / "a.txt", "expires\n")
    _write(www / "ah" / "a.txt", "ah\n")
    _write(www / "custom404.html", "custom not found\n")
    _write(www / "x.html", "x page\n")
    _write(www / "le" / "a.txt", "le\n")
    _write(www / "acl-allow" / "a.txt", "allowed\n")
    _write(www / "acl-deny" / "a.txt", "denied\n")
    _write(prefix / "other" / "a.txt", "ALIAS\n")
    _write(prefix / "secret.txt", SECRET)
    server = harness.Server(harness.base_conf(CONF), prefix, nports=3)
    server.start()
    try:
        yield server
    finally:
        server.stop()


# -- plain GET / HEAD --------------------------------------------------------


def test_get_file_headers_and_body(srv):
    r = http(srv.port, "/blob.png")
    assert r.status == 200
    assert r.header("Content-Type") == "image/png"
    assert r.header("Content-Length") == str(len(BLOB))
    assert r.header("Last-Modified") == MTIME_HTTP
    etag = r.header("ETag")
    assert etag and re.fullmatch(r'"[^"]+"', etag), etag
    assert r.body == BLOB
    assert email.utils.parsedate_to_datetime(r.header("Date"))
    assert r.header("Accept-Ranges") == "bytes"
    # The validator is stable for an unchanged file.
    assert http(srv.port, "/blob.png").header("ETag") == etag


@pytest.mark.parametrize("path,ctype", [
    ("/style.css", "text/css"),
    ("/noext", "application/octet-stream"),
    ("/sub/page.html", "text/html"),
])
def test_content_types(srv, path, ctype):
    r = http(srv.port, path)
    assert r.status == 200
    assert r.header("Content-Type").split(";")[0] == ctype


def test_index(srv):
    r = http(srv.port, "/")
    assert r.status == 200
    assert r.body == b"<html>index</html>\n"
    assert r.header("Content-Type").startswith("text/html")
    r = http(srv.port, "/sub/")
    assert r.status == 200 and r.body == b"sub index\n"


def test_head_has_headers_and_no_body(srv):
    get = http(srv.port, "/blob.png")
    with Conn(srv.port) as c:
        c.send(harness.build_request("HEAD", "/blob.png", {"Connection": "close"}))
        head = c.read_response("HEAD")
        rest = c._read_to_eof()
    assert head.status == 200
    assert head.header("Content-Length") == str(len(BLOB))
    assert head.header("Content-Type") == "image/png"
    assert head.header("ETag") == get.header("ETag")
    assert head.header("Last-Modified") == get.header("Last-Modified")
    assert rest == b"", "HEAD response carried a body"


def test_not_found(srv):
    r = http(srv.port, "/nope.html")
    assert r.status == 404
    assert r.header("Content-Type", "").startswith("text/html")


def test_directory_without_slash_redirects(srv):
    r = http(srv.port, "/sub")
    assert r.status == 301
    loc = r.header("Location")
    assert loc and loc.endswith("/sub/"), loc
    assert loc.startswith("/sub/") or loc.startswith("http://"), loc


def test_directory_without_index_is_forbidden(srv):
    assert http(srv.port, "/noindex/").status == 403


# -- conditional requests -----------------------------------------------------


def test_if_modified_since(srv):
    r = http(srv.port, "/blob.png", {"If-Modified-Since": MTIME_HTTP})
    assert r.status == 304
    assert r.body == b""
    assert r.header("ETag")
    old = http(srv.port, "/blob.png", {"If-Modified-Since": "Wed, 01 Jan 2014 00:00:00 GMT"})
    assert old.status == 200 and old.body == BLOB


def test_if_none_match(srv):
    etag = http(srv.port, "/blob.png").header("ETag")
    r = http(srv.port, "/blob.png", {"If-None-Match": etag})
    assert r.status == 304 and r.body == b""
    r = http(srv.port, "/blob.png", {"If-None-Match": '"other", ' + etag})
    assert r.status == 304
    r = http(srv.port, "/blob.png", {"If-None-Match": "*"})
    assert r.status == 304
    r = http(srv.port, "/blob.png", {"If-None-Match": '"not-it"'})
    assert r.status == 200 and r.body == BLOB


# -- ranges -------------------------------------------------------------------


def test_range_single(srv):
    r = http(srv.port, "/blob.png", {"Range": "bytes=0-99"})
    assert r.status == 206
    assert r.header("Content-Range") == f"bytes 0-99/{len(BLOB)}"
    assert r.header("Content-Length") == "100"
    assert r.body == BLOB[:100]
    r = http(srv.port, "/blob.png", {"Range": "bytes=20000-"})
    assert r.status == 206
    assert r.header("Content-Range") == f"bytes 20000-{len(BLOB) - 1}/{len(BLOB)}"
    assert r.body == BLOB[20000:]


def test_range_suffix(srv):
    r = http(srv.port, "/blob.png", {"Range": "bytes=-100"})
    assert r.status == 206
    assert r.header("Content-Range") == f"bytes {len(BLOB) - 100}-{len(BLOB) - 1}/{len(BLOB)}"
    assert r.body == BLOB[-100:]


def test_range_end_past_size_is_clamped(srv):
    r = http(srv.port, "/blob.png", {"Range": "bytes=20400-99999"})
    assert r.status == 206
    assert r.header("Content-Range") == f"bytes 20400-{len(BLOB) - 1}/{len(BLOB)}"
    assert r.body == BLOB[20400:]


def test_range_multi(srv):
    r = http(srv.port, "/blob.png", {"Range": "bytes=0-9,100-109"})
    assert r.status == 206
    ctype = r.header("Content-Type")
    m = re.match(r"multipart/byteranges; boundary=(\S+)$", ctype)
    assert m, ctype
    boundary = m.group(1).encode()
    assert int(r.header("Content-Length")) == len(r.body)
    parts = r.body.split(b"--" + boundary)
    # preamble, two parts, and the closing "--\r\n"
    assert parts[-1].startswith(b"--")
    bodies = []
    for part in parts[1:-1]:
        head, _, data = part.partition(b"\r\n\r\n")
        assert b"Content-Type: image/png" in head
        cr = re.search(rb"Content-Range: bytes (\d+)-(\d+)/(\d+)", head)
        assert cr, head
        start, end, total = (int(x) for x in cr.groups())
        assert total == len(BLOB)
        assert data.endswith(b"\r\n")
        data = data[:-2]
        assert data == BLOB[start:end + 1]
        bodies.append((start, end))
    assert bodies == [(0, 9), (100, 109)]


def test_range_not_satisfiable(srv):
    r = http(srv.port, "/blob.png", {"Range": "bytes=30000-40000"})
    assert r.status == 416
    assert r.header("Content-Range") == f"bytes */{len(BLOB)}"


def test_if_range(srv):
    etag = http(srv.port, "/blob.png").header("ETag")
    r = http(srv.port, "/blob.png", {"Range": "bytes=0-9", "If-Range": etag})
    assert r.status == 206 and r.body == BLOB[:10]
    r = http(srv.port, "/blob.png", {"Range": "bytes=0-9", "If-Range": MTIME_HTTP})
    assert r.status == 206 and r.body == BLOB[:10]
    r = http(srv.port, "/blob.png", {"Range": "bytes=0-9", "If-Range": '"stale"'})
    assert r.status == 200 and r.body == BLOB
    r = http(srv.port, "/blob.png",
             {"Range": "bytes=0-9", "If-Range": "Wed, 01 Jan 2014 00:00:00 GMT"})
    assert r.status == 200 and r.body == BLOB


# -- alias, try_files, expires, add_header, error_page ---------------------------


def test_alias(srv):
    r = http(srv.port, "/alias/a.txt")
    assert r.status == 200 and r.body == b"ALIAS\n"
    assert r.header("Content-Type").startswith("text/plain")
    assert http(srv.port, "/alias/missing.txt").status == 404


def test_try_files_fallback(srv):
    r = http(srv.port, "/tf/exists.txt")
    assert r.status == 200 and r.body == b"tf exists\n"
    r = http(srv.port, "/tf/dir/")
    assert r.status == 200 and r.body == b"tf dir index\n"
    r = http(srv.port, "/tf/missing")
    assert r.status == 200 and r.body == b"fallback\n"


def test_try_files_code(srv):
    r = http(srv.port, "/tf404/x.txt")
    assert r.status == 200 and r.body == b"tf404 x\n"
    assert http(srv.port, "/tf404/missing").status == 404


def test_expires(srv):
    r = http(srv.port, "/exp/a.txt")
    assert r.status == 200
    assert r.header("Cache-Control") == "max-age=31536000"
    expires = email.utils.parsedate_to_datetime(r.header("Expires"))
    date = email.utils.parsedate_to_datetime(r.header("Date"))
    assert abs((expires - date).total_seconds() - 31536000) <= 2
    # Other locations have none.
    assert http(srv.port, "/style.css").header("Cache-Control") is None


def test_add_header(srv):
    ok = http(srv.port, "/ah/a.txt")
    assert ok.status == 200
    assert ok.header("X-Plain") == "yes"
    assert ok.header("X-Always") == "yes"
    # Added beside the server's own, as nginx does (only proxy_pass_header
    # replaces it).
    servers = ok.header_all("Server")
    assert len(servers) == 2 and servers[1] == "extra" and servers[0] != "extra"
    missing = http(srv.port, "/ah/missing.txt")
    assert missing.status == 404
    assert missing.header("X-Plain") is None
    assert missing.header("X-Always") == "yes"


def test_add_header_replaces_or_removes_the_validators(srv):
    own = http(srv.port, "/ah-set/ah/a.txt")
    assert own.status == 200
    assert own.header_all("Last-Modified") == ["Mon, 28 Sep 1970 06:00:00 GMT"]
    assert own.header_all("ETag") == ['"own-tag"']
    hidden = http(srv.port, "/ah-hide/ah/a.txt")
    assert hidden.status == 200
    assert hidden.header("Last-Modified") is None and hidden.header("ETag") is None


@pytest.mark.parametrize("if_range,status", [
    ("Mon, 28 Sep 1970 06:00:00 GMT", 206),   # the date the response carries
    ('"own-tag"', 206),
    (MTIME_HTTP, 200),                        # the file's own, replaced: no longer holds
])
def test_if_range_judges_the_validators_sent(srv, if_range, status):
    r = http(srv.port, "/ah-set/ah/a.txt", headers={"Range": "bytes=0-0", "If-Range": if_range})
    assert r.status == status


def test_error_page_uri(srv):
    r = http(srv.port, "/ep/missing")
    assert r.status == 404
    assert r.body == b"custom not found\n"


def test_error_page_changes_code(srv):
    r = http(srv.port, "/ep200/missing")
    assert r.status == 200
    assert r.body == b"x page\n"


# -- return -------------------------------------------------------------------


def test_return_text(srv):
    r = http(srv.port, "/ret200")
    assert r.status == 200 and r.body == b"text"
    assert r.header("Content-Length") == "4"


def test_return_redirect(srv):
    r = http(srv.port, "/ret301")
    assert r.status == 301
    assert r.header("Location") == "http://example.com/new"


def test_return_code_only(srv):
    r = http(srv.port, "/ret404")
    assert r.status == 404
    assert b"404" in r.body  # the built-in error page


# -- location and server selection ------------------------------------------------


@pytest.mark.parametrize("path,expected", [
    ("/prec", "exact"),
    ("/prec/static/a.php", "prefix-noregex"),
    ("/prec/a.php", "regex"),
    ("/prec/A.JPG", "regex-icase"),
    ("/prec/longer/x", "longer-prefix"),
    ("/prec/longer/x.php", "regex"),
    ("/prec/other", "prefix"),
])
def test_location_precedence(srv, path, expected):
    r = http(srv.port, path)
    assert r.status == 200
    assert r.body.decode() == expected


@pytest.mark.parametrize("host,expected", [
    ("exact.test", "exact"),
    ("EXACT.test", "exact"),
    ("a.wild.test", "wild-front"),
    ("x.y.wild.test", "wild-front"),
    ("mail.example.org", "wild-back"),
    ("re42.test", "regex"),
    ("RE42.TEST", "regex"),
    ("upper.test", "upper-regex"),
    ("Upper.Test", "upper-regex"),
    ("late.test", "late"),
    ("unknown.test", "default"),
])
def test_server_name_selection(srv, host, expected):
    r = http(srv.ports[1], "/", host=host)
    assert r.status == 200
    assert r.body.decode() == expected


def test_server_name_with_port_in_host(srv):
    r = http(srv.ports[1], "/", host=f"exact.test:{srv.ports[1]}")
    assert r.body == b"exact"


def test_server_tokens(srv):
    on = http(srv.port, "/nope")
    off = http(srv.ports[2], "/nope")
    product = "nginx" if harness.IS_NGINX else "torii"
    assert re.fullmatch(product + r"/\d+\.\d+\.\d+.*", on.header("Server", "")), on.header("Server")
    assert off.header("Server") == product
    assert off.status == 404
    assert not re.search(rb"/\d+\.\d+", off.body), off.body


# -- access control --------------------------------------------------------------


def test_limit_except(srv):
    assert http(srv.port, "/le/a.txt").status == 200
    with Conn(srv.port) as c:
        head = c.request("HEAD", "/le/a.txt", {"Connection": "close"})
    assert head.status == 200
    r = http(srv.port, "/le/a.txt", method="POST", body=b"x=1")
    assert r.status == 403


def test_allow_deny(srv):
    r = http(srv.port, "/acl-allow/a.txt")
    assert r.status == 200 and r.body == b"allowed\n"
    assert http(srv.port, "/acl-deny/a.txt").status == 403


# -- path safety and encoding ------------------------------------------------------


@pytest.mark.parametrize("path", [
    "/../secret.txt",
    "/../../../../../../etc/passwd",
    "/sub/../../secret.txt",
    "/%2e%2e/secret.txt",
    "/%2E%2E/secret.txt",
    "/.%2e/secret.txt",
    "/sub/%2e%2e/%2e%2e/secret.txt",
    "/..%2fsecret.txt",
    "/%2e%2e%2fsecret.txt",
    "/sub/..%2f..%2fsecret.txt",
    "/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "/alias/../../secret.txt",
    "/alias/%2e%2e/secret.txt",
    "/alias/..%2f..%2fsecret.txt",
])
def test_path_traversal_never_escapes_root(srv, path):
    r = http(srv.port, path)
    assert r.status in (400, 404), (path, r.status)
    assert SECRET not in r.body
    assert b"root:" not in r.body


@pytest.mark.parametrize("path,body", [
    ("/hello%20world.txt", b"spaced\n"),
    ("/caf%C3%A9.txt", b"utf8 name\n"),
    ("/100%25.txt", b"percent\n"),
    ("/%73tyle.css", b"body{}\n"),
    ("/sub/./page.html", b"sub page\n"),
    ("/sub//page.html", b"sub page\n"),
    ("/noindex/../sub/page.html", b"sub page\n"),
])
def test_encoded_and_normalised_paths(srv, path, body):
    r = http(srv.port, path)
    assert r.status == 200, (path, r.status)
    assert r.body == body
