"""disable_symlinks with real symbolic links: `on` refuses a link as the
file (403) and as a directory on the way (404: the walk meets the link, not
a directory), `if_not_owner` follows a link only to a target of the same
owner, `from=$document_root` trusts the root's own path, and the open-file
cache never serves an entry opened under another policy. Every expectation
is nginx's: the file passes with TORII_BIN=/usr/sbin/nginx."""

import os

import pytest

import harness
from harness import base_conf, http

NOBODY = 65534


def server_block(port, root, extra=""):
    return f"""
    server {{
        listen 127.0.0.1:@PORT{port}@;
        root {root};
        {extra}
    }}"""


CONF = base_conf(http="\n".join([
    server_block(0, "@PREFIX@/www"),
    server_block(1, "@PREFIX@/www", "disable_symlinks on;"),
    server_block(2, "@PREFIX@/www", "disable_symlinks if_not_owner;"),
    # The root is reached through a link: `on` refuses every file of it,
    # from=$document_root trusts that part of the path.
    server_block(3, "@PREFIX@/wwwlink", "disable_symlinks on;"),
    server_block(4, "@PREFIX@/wwwlink", "disable_symlinks on from=$document_root;"),
    # Inherited from the server; a location may turn it off again.
    server_block(5, "@PREFIX@/www", """disable_symlinks on;
        location /sub/ { }
        location /dirlink/ { disable_symlinks off; }"""),
    # One file reached by two locations with different policies, cached.
    server_block(6, "@PREFIX@/www", """
        open_file_cache max=100 inactive=60s;
        open_file_cache_valid 60s;
        open_file_cache_errors on;
        location /loose/ { alias @PREFIX@/www/; }
        location /strict/ { alias @PREFIX@/www/; disable_symlinks on; }"""),
    # The rewrite module's file tests open under the policy too.
    server_block(7, "@PREFIX@/www", """disable_symlinks on;
        location = /on { if (-f $document_root$arg_p) { return 200 "file\\n"; } return 200 "no\\n"; }
        location = /off {
            disable_symlinks off;
            if (-f $document_root$arg_p) { return 200 "file\\n"; }
            return 200 "no\\n";
        }"""),
]))


@pytest.fixture(scope="module")
def needs_root():
    if os.geteuid() != 0:
        pytest.skip("lchown to another owner needs root")


@pytest.fixture
def srv(make_server):
    s = make_server(CONF, nports=8, start=False)
    www = s.prefix / "www"
    (www / "sub").mkdir(parents=True)
    (www / "real.html").write_text("real\n")
    (www / "sub" / "page.html").write_text("page\n")
    os.symlink("real.html", www / "link.html")
    os.symlink("sub", www / "dirlink")
    os.symlink("www", s.prefix / "wwwlink")
    if os.geteuid() == 0:
        os.symlink("real.html", www / "foreign-link.html")
        os.lchown(www / "foreign-link.html", NOBODY, NOBODY)
    return s.start()


def get(srv, port, path):
    return http(srv.ports[port], path)


@pytest.mark.parametrize("path, status", [
    ("/real.html", 200), ("/link.html", 200), ("/dirlink/page.html", 200),
])
def test_off_follows_links(srv, path, status):
    assert get(srv, 0, path).status == status


@pytest.mark.parametrize("path, status", [
    ("/real.html", 200),
    ("/sub/page.html", 200),
    ("/link.html", 403),          # the file is a link: ELOOP
    ("/dirlink/page.html", 404),  # a link on the way: ENOTDIR
])
def test_on_refuses_links(srv, path, status):
    r = get(srv, 1, path)
    assert r.status == status
    if status == 200:
        assert r.body.startswith(b"real" if "real" in path else b"page")


def test_on_logs_the_refused_open(srv):
    assert get(srv, 1, "/link.html").status == 403
    harness.wait_until(lambda: "link.html\" failed (40: Too many levels of symbolic links)" in srv.error_log_text(),
                       5, what="the open() failure in the error log")


def test_if_not_owner_follows_a_link_of_the_same_owner(srv):
    r = get(srv, 2, "/link.html")
    assert r.status == 200 and r.body == b"real\n"
    assert get(srv, 2, "/dirlink/page.html").status == 200


def test_if_not_owner_refuses_a_link_of_another_owner(srv, needs_root):
    assert get(srv, 0, "/foreign-link.html").status == 200
    assert get(srv, 2, "/foreign-link.html").status == 403


def test_link_in_the_root_path(srv):
    assert get(srv, 3, "/real.html").status == 404
    r = get(srv, 4, "/real.html")
    assert r.status == 200 and r.body == b"real\n"
    # from= trusts the root only: links below it are still refused.
    assert get(srv, 4, "/link.html").status == 403


def test_inherited_and_turned_off_in_a_location(srv):
    assert get(srv, 5, "/link.html").status == 403
    assert get(srv, 5, "/sub/page.html").status == 200
    assert get(srv, 5, "/dirlink/page.html").status == 200


def test_open_file_cache_keeps_policies_apart(srv):
    # Cached as opened with links allowed, then asked for under `on`, then
    # again without: each answer is its own policy's.
    for _ in range(2):
        assert get(srv, 6, "/loose/link.html").status == 200
        assert get(srv, 6, "/strict/link.html").status == 403
    assert get(srv, 6, "/loose/link.html").status == 200


@pytest.mark.parametrize("path, body", [
    ("/on?p=/real.html", b"file\n"),
    ("/on?p=/link.html", b"no\n"),
    ("/on?p=/dirlink/page.html", b"no\n"),
    ("/off?p=/link.html", b"file\n"),
])
def test_file_tests_follow_the_policy(srv, path, body):
    r = get(srv, 7, path)
    assert r.status == 200 and r.body == body


@pytest.mark.parametrize("line, message", [
    ("disable_symlinks maybe;", 'invalid parameter "maybe"'),
    ("disable_symlinks from=/srv;", '"disable_symlinks" must have "off", "on" or "if_not_owner" parameter'),
    ("disable_symlinks on off;", 'duplicate parameters "on off"'),
    ("disable_symlinks off from=/srv;", '"from=" cannot be used with "off" parameter'),
    ("disable_symlinks on; disable_symlinks off;", '"disable_symlinks" directive is duplicate'),
    ("disable_symlinks on from=/a from=/b;", 'invalid number of arguments in "disable_symlinks" directive'),
])
def test_bad_values_are_refused(tmp_path, line, message):
    prefix = tmp_path / "p"
    (prefix / "logs").mkdir(parents=True)
    conf_path = prefix / "t.conf"
    conf_path.write_text(base_conf(http=line).replace("@PREFIX@", str(prefix)))
    r = harness.cli(["-t", "-c", str(conf_path)], prefix=prefix)
    assert r.returncode != 0
    assert message in (r.stdout + r.stderr)
