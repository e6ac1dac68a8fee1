"""The WebDAV extension (the nginx-dav-ext-module, Debian's
libnginx-mod-http-dav-ext): OPTIONS' headers; PROPFIND on files and
folders at Depth 0 and 1 with allprop, propname, a named list and an empty
body, its refusals (a body that is not XML, Depth infinity, a body past
client_max_body_size) and its escaping; LOCK, UNLOCK and the 423/412 that
PUT, DELETE, MKCOL, COPY and MOVE get on a locked resource, the If
header's forms, lock renewal, expiry and a reload; cadaver as a real
client. The returned XML is parsed and compared property by property.
Also runs against nginx with the module loaded (TORII_BIN=/usr/sbin/nginx)."""

import email.utils
import os
import re
import shutil
import subprocess
import time
import xml.etree.ElementTree as ET

import pytest

import harness

MODULE = "/usr/lib/nginx/modules/ngx_http_dav_ext_module.so"

pytestmark = pytest.mark.skipif(harness.IS_NGINX and not os.path.exists(MODULE),
                                reason="needs libnginx-mod-http-dav-ext")

D = "{DAV:}"
ALLOW = "GET,HEAD,PUT,DELETE,MKCOL,COPY,MOVE,PROPFIND,OPTIONS,LOCK,UNLOCK"

CONF = r"""
    client_body_temp_path @PREFIX@/client_body_temp;
    dav_ext_lock_zone zone=foo:10m;
    dav_ext_lock_zone zone=short:1m timeout=2s;
    server {
        listen 127.0.0.1:@PORT@;
        root @PREFIX@/www;
        location /dav/ {
            dav_methods PUT DELETE MKCOL COPY MOVE;
            dav_ext_methods PROPFIND OPTIONS LOCK UNLOCK;
            dav_ext_lock zone=foo;
            create_full_put_path on;
            dav_access user:rw group:rw all:r;
            autoindex on;
        }
        location /nolock/ {
            dav_methods PUT;
            dav_ext_methods PROPFIND OPTIONS LOCK UNLOCK;
        }
        location /short/ {
            dav_methods PUT DELETE;
            dav_ext_methods PROPFIND LOCK UNLOCK;
            dav_ext_lock zone=short;
        }
        location /small/ {
            client_max_body_size 100;
            dav_ext_methods PROPFIND;
        }
        location /plain/ { }
    }
"""


def conf(http):
    main = f"load_module {MODULE};" if harness.IS_NGINX else ""
    return harness.base_conf(http, main=main)


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("davext")
    www = prefix / "www"
    for d in ("dav/d/sub", "dav/esc", "nolock", "short", "small", "plain"):
        (www / d).mkdir(parents=True)
    (www / "dav/a.txt").write_bytes(b"hello")
    (www / "dav/d/f1.txt").write_bytes(b"12345678")
    (www / "dav/d/.hidden").write_bytes(b"x")
    for name in ("sp ace.txt", "a&b<c>.txt", "caf\u00e9.txt", "q?#%.txt"):
        (www / "dav/esc" / name).write_bytes(b"e")
    (www / "nolock/n.txt").write_bytes(b"n")
    (www / "small/s.txt").write_bytes(b"s")
    (prefix / "client_body_temp").mkdir()
    server = harness.Server(conf(CONF), prefix)
    server.start()
    yield server
    server.stop()


def www(srv, rel=""):
    return srv.prefix / "www" / rel


def req(srv, method, path, headers=None, body=None):
    return harness.http(srv.port, path, headers=headers or {}, method=method, body=body)


def propfind(srv, path, depth=None, body=None):
    headers = {} if depth is None else {"Depth": depth}
    if body is not None:
        headers["Content-Type"] = "application/xml"
    return req(srv, "PROPFIND", path, headers, body)


def responses(r):
    """{href: {property local name: element}} of a 207, checking that each
    response has one propstat, with status 200."""
    assert r.status == 207, r
    assert r.header("Content-Type") == "text/xml; charset=utf-8"
    root = ET.fromstring(r.body)
    assert root.tag == D + "multistatus"
    out = {}
    for resp in root.findall(D + "response"):
        href = resp.find(D + "href").text
        stats = resp.findall(D + "propstat")
        assert len(stats) == 1
        assert stats[0].find(D + "status").text == "HTTP/1.1 200 OK"
        out[href] = {child.tag[len(D):]: child for child in stats[0].find(D + "prop")}
    return out


def lock(srv, path, headers=None):
    r = req(srv, "LOCK", path, headers)
    token = r.header("Lock-Token")
    return r, token


def if_token(token, tag=None):
    """An If header offering `token` ("<urn:...>"), tagged or not."""
    return (f"<{tag}> " if tag else "") + f"({token})"


PROPFIND_ALL = b'<?xml version="1.0" encoding="utf-8" ?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>'
PROPFIND_NAMES = b'<?xml version="1.0"?><propfind xmlns="DAV:"><propname/></propfind>'
PROPFIND_SOME = (b'<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:x="urn:x"><D:prop>'
                 b'<D:displayname/><D:getcontentlength/><x:color/></D:prop></D:propfind>')
PROPFIND_UNKNOWN = b'<?xml version="1.0"?><propfind xmlns="DAV:"><prop><quota-used-bytes/></prop></propfind>'
ALL_SIX = {"displayname", "getcontentlength", "getlastmodified", "resourcetype", "lockdiscovery",
           "supportedlock"}


# --- OPTIONS ---------------------------------------------------------------

def test_options_headers(srv):
    r = req(srv, "OPTIONS", "/dav/a.txt")
    assert r.status == 200
    assert r.header("DAV") == "2"  # a lock zone here
    assert r.header("Allow") == ALLOW
    assert r.header("Content-Length") == "0" and r.body == b""
    r = req(srv, "OPTIONS", "/nolock/anything")  # whether or not the file exists
    assert r.status == 200 and r.header("DAV") == "1" and r.header("Allow") == ALLOW


def test_methods_not_listed_are_refused(srv):
    assert req(srv, "OPTIONS", "/plain/").status == 405
    assert propfind(srv, "/plain/").status == 405
    assert req(srv, "OPTIONS", "/short/").status == 405  # OPTIONS not in its dav_ext_methods
    assert req(srv, "LOCK", "/nolock/n.txt").status == 405  # no lock zone
    assert req(srv, "UNLOCK", "/nolock/n.txt").status == 405


# --- PROPFIND --------------------------------------------------------------

def check_file_props(props, name, size, mtime):
    assert props["displayname"].text == name
    assert props["getcontentlength"].text == str(size)
    assert email.utils.parsedate_to_datetime(props["getlastmodified"].text).timestamp() == int(mtime)
    assert props["getlastmodified"].text.endswith(" GMT")
    assert list(props["resourcetype"]) == []


def test_propfind_file_depth_0(srv):
    for body in (None, PROPFIND_ALL):  # an empty body asks for all, as allprop
        r = propfind(srv, "/dav/a.txt", body=body)
        res = responses(r)
        assert list(res) == ["/dav/a.txt"]
        props = res["/dav/a.txt"]
        assert set(props) == ALL_SIX
        check_file_props(props, "a.txt", 5, www(srv, "dav/a.txt").stat().st_mtime)
        assert list(props["lockdiscovery"]) == []
        entry = props["supportedlock"].find(D + "lockentry")
        assert entry.find(D + "lockscope").find(D + "exclusive") is not None
        assert entry.find(D + "locktype").find(D + "write") is not None
    # Depth 1 on a file is the file alone.
    assert list(responses(propfind(srv, "/dav/a.txt", "1"))) == ["/dav/a.txt"]


def test_propfind_folder_depth_0_and_1(srv):
    res = responses(propfind(srv, "/dav/d/", "0"))
    assert list(res) == ["/dav/d/"]
    props = res["/dav/d/"]
    assert props["displayname"].text == "d"
    assert "getcontentlength" not in props  # none for a folder
    assert props["resourcetype"].find(D + "collection") is not None

    res = responses(propfind(srv, "/dav/d/", "1"))
    # The folder first; hidden names are left out.
    assert list(res)[0] == "/dav/d/"
    assert set(res) == {"/dav/d/", "/dav/d/f1.txt", "/dav/d/sub/"}
    check_file_props(res["/dav/d/f1.txt"], "f1.txt", 8, www(srv, "dav/d/f1.txt").stat().st_mtime)
    assert res["/dav/d/sub/"]["displayname"].text == "sub"
    assert res["/dav/d/sub/"]["resourcetype"].find(D + "collection") is not None

    # Without the slash the folder's href stays as asked; members get one.
    res = responses(propfind(srv, "/dav/d", "1"))
    assert set(res) == {"/dav/d", "/dav/d/f1.txt", "/dav/d/sub/"}
    # The root's name is "/".
    assert responses(propfind(srv, "/dav/", "0"))["/dav/"]["displayname"].text == "dav"


def test_propfind_propname(srv):
    res = responses(propfind(srv, "/dav/d/", "1", PROPFIND_NAMES))
    assert len(res) == 3
    for props in res.values():
        assert set(props) == ALL_SIX
        assert all(e.text is None and list(e) == [] for e in props.values())


def test_propfind_named_and_unknown_properties(srv):
    # The module answers the properties it knows in one 200 propstat and
    # leaves the others out (no 404 propstat for them).
    props = responses(propfind(srv, "/dav/a.txt", "0", PROPFIND_SOME))["/dav/a.txt"]
    assert set(props) == {"displayname", "getcontentlength"}
    assert props["displayname"].text == "a.txt" and props["getcontentlength"].text == "5"
    props = responses(propfind(srv, "/dav/d/", "0", PROPFIND_SOME))["/dav/d/"]
    assert set(props) == {"displayname"}  # a folder has no length
    assert responses(propfind(srv, "/dav/a.txt", "0", PROPFIND_UNKNOWN))["/dav/a.txt"] == {}
    # Any namespace: elements are known by their local name.
    body = b'<propfind xmlns="urn:other"><prop><resourcetype/></prop></propfind>'
    assert set(responses(propfind(srv, "/dav/a.txt", "0", body))["/dav/a.txt"]) == {"resourcetype"}


def test_propfind_refusals(srv):
    assert propfind(srv, "/dav/a.txt", "0", b"this is not xml").status == 400
    assert propfind(srv, "/dav/a.txt", "0", b'<propfind xmlns="DAV:"><prop>').status == 400
    assert propfind(srv, "/dav/a.txt", "infinity").status == 403
    assert propfind(srv, "/dav/d/", "infinity").status == 403
    assert propfind(srv, "/dav/a.txt", "2").status == 400
    assert propfind(srv, "/dav/a.txt", "Infinity").status == 400  # the module's match is exact
    assert propfind(srv, "/dav/missing.txt", "0").status == 404
    assert propfind(srv, "/dav/missing/", "1").status == 404
    # The body obeys client_max_body_size.
    assert propfind(srv, "/small/s.txt", "0", PROPFIND_ALL + b" " * 100).status == 413
    assert propfind(srv, "/small/s.txt", "0", b"<propfind/>").status == 207


def test_propfind_escaped_names(srv):
    r = propfind(srv, "/dav/esc/", "1")
    res = responses(r)
    # hrefs: percent-encoded as nginx 1.22's URI escape (space, '"', '#',
    # '%', '<', '>', '?', '\\', '^', '`', '{', '|', '}', bytes past 0x7e),
    # then XML-escaped ('&' stays for that); displaynames XML-escaped only.
    assert set(res) == {"/dav/esc/", "/dav/esc/sp%20ace.txt", "/dav/esc/a&b%3Cc%3E.txt",
                        "/dav/esc/caf%C3%A9.txt", "/dav/esc/q%3F%23%25.txt"}
    assert res["/dav/esc/a&b%3Cc%3E.txt"]["displayname"].text == "a&b<c>.txt"
    assert res["/dav/esc/caf%C3%A9.txt"]["displayname"].text == "caf\u00e9.txt"
    assert res["/dav/esc/sp%20ace.txt"]["displayname"].text == "sp ace.txt"
    assert b"<D:href>/dav/esc/a&amp;b%3Cc%3E.txt</D:href>" in r.body
    assert b"<D:displayname>a&amp;b&lt;c&gt;.txt</D:displayname>" in r.body
    assert "<D:displayname>caf\u00e9.txt</D:displayname>".encode() in r.body
    # Asked for by its encoded URI, the file answers under the same href.
    assert list(responses(propfind(srv, "/dav/esc/caf%C3%A9.txt", "0"))) == ["/dav/esc/caf%C3%A9.txt"]


def test_propfind_names_no_xml_may_hold(srv, nginx_only_skip):
    """torii only: nginx's module writes such names as they are, and its
    document is not well-formed; torii puts U+FFFD in their place."""
    d = www(srv, "dav/odd")
    d.mkdir(exist_ok=True)
    (d / "ctl\x01.txt").write_bytes(b"")
    os.close(os.open(os.path.join(os.fsencode(d), b"bad\xff.txt"), os.O_CREAT | os.O_WRONLY, 0o644))
    res = responses(propfind(srv, "/dav/odd/", "1"))
    names = {props["displayname"].text for props in res.values()}
    assert names == {"odd", "ctl\ufffd.txt", "bad\ufffd.txt"}
    assert {"/dav/odd/ctl%01.txt", "/dav/odd/bad%FF.txt"} <= set(res)


# --- LOCK and UNLOCK ---------------------------------------------------------

def activelock(body):
    root = ET.fromstring(body)
    assert root.tag == D + "prop"
    return root.find(D + "lockdiscovery").find(D + "activelock")


def test_lock_put_unlock(srv):
    path = "/dav/locked.txt"
    www(srv, "dav/locked.txt").write_bytes(b"v1")
    r, token = lock(srv, path)
    assert r.status == 200  # the file was there
    assert r.header("Content-Type") == "text/xml; charset=utf-8"
    assert re.fullmatch(r"<urn:[0-9a-f]{8}>", token)
    a = activelock(r.body)
    assert a.find(D + "locktype").find(D + "write") is not None
    assert a.find(D + "lockscope").find(D + "exclusive") is not None
    assert a.find(D + "depth").text == "infinity"
    assert a.find(D + "timeout").text == "Second-60"  # the zone's default minute
    assert a.find(D + "locktoken").find(D + "href").text == token[1:-1]
    assert a.find(D + "lockroot").find(D + "href").text == path

    # PROPFIND shows it.
    props = responses(propfind(srv, path, "0"))[path]
    found = props["lockdiscovery"].find(D + "activelock")
    assert found.find(D + "locktoken").find(D + "href").text == token[1:-1]

    assert req(srv, "PUT", path, body=b"v2").status == 423
    assert req(srv, "PUT", path, {"If": "(<urn:00000001>)"}, b"v2").status == 412
    assert www(srv, "dav/locked.txt").read_bytes() == b"v1"
    assert req(srv, "PUT", path, {"If": if_token(token)}, b"v2").status == 204
    assert req(srv, "PUT", path, {"If": if_token(token, f"http://localhost:{srv.port}{path}")},
               b"v3").status == 204
    assert www(srv, "dav/locked.txt").read_bytes() == b"v3"

    # A second LOCK: 423 without the token; with it the lock is renewed.
    assert lock(srv, path)[0].status == 423
    r, again = lock(srv, path, {"If": if_token(token)})
    assert r.status == 200 and again == token

    # UNLOCK with another token leaves the lock; its own removes it. Both 204.
    assert req(srv, "UNLOCK", path, {"Lock-Token": "<urn:00000001>"}).status == 204
    assert req(srv, "PUT", path, body=b"v4").status == 423
    assert req(srv, "UNLOCK", path, {"Lock-Token": token.upper().replace("URN", "urn")}).status == 204
    assert req(srv, "PUT", path, body=b"v4").status == 204
    assert www(srv, "dav/locked.txt").read_bytes() == b"v4"


def test_lock_creates_an_empty_file(srv):
    r, token = lock(srv, "/dav/new-by-lock.txt")
    assert r.status == 201
    assert www(srv, "dav/new-by-lock.txt").read_bytes() == b""
    assert req(srv, "GET", "/dav/new-by-lock.txt").status == 200
    assert req(srv, "DELETE", "/dav/new-by-lock.txt").status == 423
    # DELETE with the token removes the file and its lock: a new LOCK is granted.
    assert req(srv, "DELETE", "/dav/new-by-lock.txt", {"If": if_token(token)}).status == 204
    r, token2 = lock(srv, "/dav/new-by-lock.txt")
    assert r.status == 201 and token2 != token
    assert req(srv, "UNLOCK", "/dav/new-by-lock.txt", {"Lock-Token": token2}).status == 204


def test_lock_refusals(srv):
    assert req(srv, "LOCK", "/dav/a.txt", {"Depth": "1"}).status == 400
    assert req(srv, "LOCK", "/dav/a.txt", {"Depth": "x"}).status == 400
    # No folder to put the file in: 409 (RFC 4918 says not to make it).
    assert req(srv, "LOCK", "/dav/no/such/file.txt").status == 409
    assert not www(srv, "dav/no").exists()


def test_lock_refused_creation_leaves_no_lock(srv, nginx_only_skip):
    """torii only: the module keeps the lock of a LOCK that failed with 409
    until it expires (a second LOCK is 423); torii takes it back."""
    assert req(srv, "LOCK", "/dav/none/f.txt").status == 409
    assert req(srv, "LOCK", "/dav/none/f.txt").status == 409


def test_folder_locks(srv):
    assert req(srv, "MKCOL", "/dav/coll/").status == 201
    r, token = lock(srv, "/dav/coll/")
    assert r.status == 200
    tagged = if_token(token, "/dav/coll/")
    # Everything under an infinite lock needs the token.
    assert req(srv, "PUT", "/dav/coll/x.txt", body=b"x").status == 423
    assert req(srv, "PUT", "/dav/coll/x.txt", {"If": tagged}, b"x").status == 201
    assert req(srv, "PUT", "/dav/coll/deep/er/y.txt", body=b"y").status == 423
    assert req(srv, "MKCOL", "/dav/coll/sub/").status == 423
    assert req(srv, "MKCOL", "/dav/coll/sub/", {"If": tagged}).status == 201
    assert req(srv, "DELETE", "/dav/coll/x.txt").status == 423
    # A list tagged with another resource offers nothing here.
    assert req(srv, "DELETE", "/dav/coll/x.txt", {"If": if_token(token, "/dav/other/")}).status == 423
    # COPY into the locked folder is checked against the Destination.
    dest = f"http://localhost:{srv.port}/dav/coll/copy.txt"
    assert req(srv, "COPY", "/dav/a.txt", {"Destination": dest}).status == 423
    assert req(srv, "COPY", "/dav/a.txt", {"Destination": dest, "If": tagged}).status == 204  # a file's: nginx's 204
    assert www(srv, "dav/coll/copy.txt").read_bytes() == b"hello"
    # MOVE out of it needs the token for the source.
    out = f"http://localhost:{srv.port}/dav/moved.txt"
    assert req(srv, "MOVE", "/dav/coll/copy.txt", {"Destination": out}).status == 423
    assert req(srv, "MOVE", "/dav/coll/copy.txt", {"Destination": out, "If": tagged}).status == 204
    # A lock inside the folder conflicts with a new one on the folder.
    assert req(srv, "UNLOCK", "/dav/coll/", {"Lock-Token": token}).status == 204
    r, inner = lock(srv, "/dav/coll/x.txt")
    assert r.status == 200
    assert lock(srv, "/dav/coll/")[0].status == 423
    assert req(srv, "UNLOCK", "/dav/coll/x.txt", {"Lock-Token": inner}).status == 204


def test_depth_0_folder_lock(srv):
    assert req(srv, "MKCOL", "/dav/shallow/").status == 201
    r, token = lock(srv, "/dav/shallow/", {"Depth": "0"})
    assert r.status == 200
    assert activelock(r.body).find(D + "depth").text == "0"
    # Its direct members are locked; deeper ones are not.
    assert req(srv, "PUT", "/dav/shallow/a.txt", body=b"a").status == 423
    assert req(srv, "PUT", "/dav/shallow/in/b.txt", body=b"b").status == 201
    assert req(srv, "UNLOCK", "/dav/shallow/", {"Lock-Token": token}).status == 204


def test_if_header_forms(srv):
    path = "/dav/iffy.txt"
    www(srv, "dav/iffy.txt").write_bytes(b"")
    r, token = lock(srv, path)
    assert r.status == 200
    # A Not condition and an entity tag are passed over; a later token counts.
    for value in (f'(Not <urn:00000000> {token})', f'(["etag"] {token})',
                  f'(<urn:zzzzzzzz>) ({token})', f'</dav/other.txt> (<urn:00000001>) <{path}> ({token})'):
        assert req(srv, "PUT", path, {"If": value}, b"x").status == 204, value
    # Another host's URL in the tag does not cover this resource.
    assert req(srv, "PUT", path, {"If": if_token(token, f"http://elsewhere{path}")}, b"x").status == 423
    assert req(srv, "UNLOCK", path, {"Lock-Token": token}).status == 204


def test_lock_expires(srv):
    r, token = lock(srv, "/short/t.txt")
    assert r.status == 201
    assert activelock(r.body).find(D + "timeout").text == "Second-2"
    assert req(srv, "PUT", "/short/t.txt", body=b"x").status == 423
    # The lock lasts the timeout and ends within the second after it.
    time.sleep(3.5)
    assert req(srv, "PUT", "/short/t.txt", body=b"x").status == 204
    props = responses(propfind(srv, "/short/t.txt", "0"))["/short/t.txt"]
    assert list(props["lockdiscovery"]) == []


def test_lock_survives_reload(srv):
    r, token = lock(srv, "/dav/kept.txt")
    assert r.status == 201
    srv.reload()
    harness.wait_until(lambda: req(srv, "PUT", "/dav/kept.txt", body=b"x").status == 423, 10,
                       what="the lock after the reload")
    assert req(srv, "UNLOCK", "/dav/kept.txt", {"Lock-Token": token}).status == 204


# --- Configuration -------------------------------------------------------------

@pytest.mark.parametrize("http,message", [
    ("dav_ext_lock_zone timeout=10s;", '"dav_ext_lock_zone" must have "zone" parameter'),
    ("dav_ext_lock_zone zone=z;", 'invalid zone size "zone=z"'),
    ("dav_ext_lock_zone zone=z:1k;", 'zone "zone=z:1k" is too small'),
    ("dav_ext_lock_zone zone=z:1m timeout=0;", 'invalid timeout value "timeout=0"'),
    ("dav_ext_lock_zone zone=z:1m size=1;", 'invalid parameter "size=1"'),
    ("dav_ext_lock_zone zone=z:1m; dav_ext_lock_zone zone=z:1m;", 'duplicate zone "z"'),
    ("dav_ext_lock zone=missing;", 'zero size shared memory zone "missing"'),
    ("dav_ext_lock name=z;", 'invalid parameter "name=z"'),
    ("dav_ext_methods PROPFIND PATCH;", 'invalid value "PATCH"'),
    ("server { dav_ext_lock_zone zone=z:1m; }", '"dav_ext_lock_zone" directive is not allowed here'),
])
def test_bad_lines(tmp_path, http, message):
    harness.check_test_fails(tmp_path, conf(http), message)


def test_lock_zone_later_in_the_block(tmp_path):
    (tmp_path / "logs").mkdir()
    path = tmp_path / "ok.conf"
    path.write_text(conf("dav_ext_lock zone=later; dav_ext_lock_zone zone=later:1m timeout=1h;")
                    .replace("@PREFIX@", str(tmp_path)))
    r = harness.cli(["-t", "-c", str(path)], prefix=tmp_path)
    assert r.returncode == 0, r.stderr


# --- A real client ---------------------------------------------------------------

@pytest.mark.skipif(shutil.which("cadaver") is None, reason="needs cadaver")
def test_cadaver(srv, tmp_path):
    (tmp_path / "up.txt").write_bytes(b"from cadaver\n")
    script = "\n".join(["ls", "mkcol cad", "cd cad", f"put {tmp_path}/up.txt", "lock up.txt",
                        "ls", "propget up.txt", "unlock up.txt", "quit", ""])
    out = subprocess.run(["cadaver", f"http://127.0.0.1:{srv.port}/dav/"], input=script.encode(),
                         capture_output=True, timeout=30, cwd=tmp_path,
                         env={**os.environ, "HOME": str(tmp_path)}).stdout.decode("utf-8", "replace")
    assert www(srv, "dav/cad/up.txt").read_bytes() == b"from cadaver\n"
    # The listing shows the folder's members with their sizes.
    assert re.search(r"a\.txt\s+5\b", out), out
    assert re.search(r"up\.txt\s+13\b", out), out
    assert "Locking `up.txt': succeeded" in out, out
    assert "Unlocking `up.txt': succeeded" in out, out
    assert "getcontentlength" in out and "13" in out, out


def test_load_module_line_is_quiet(tmp_path):
    # Built in: the module's load_module line loads without a word.
    (tmp_path / "logs").mkdir()
    path = tmp_path / "mod.conf"
    text = harness.base_conf("server { listen 127.0.0.1:1; location / { dav_ext_methods PROPFIND; } }",
                             main=f"load_module {MODULE};")
    path.write_text(text.replace("@PREFIX@", str(tmp_path)))
    r = harness.cli(["-t", "-c", str(path)], prefix=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "ignored" not in r.stdout + r.stderr and "warn" not in r.stdout + r.stderr
