"""The rewrite module (set, if, rewrite, break, return, rewrite_log,
uninitialized_variable_warn) with the patterns real configs use. Every
expectation here is nginx's: the file passes with TORII_BIN=/usr/sbin/nginx."""

import os
import re

import pytest

import harness
from harness import http

CONF = r"""
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        root @PREFIX@/www;
        rewrite_log on;

        rewrite ^/legacy/(.*)$ /new/$1;

        location /new/ { return 200 "new uri=$uri one=$1 args=$args\n"; }

        location / {
            set $x "v-$uri";
            add_header X-Var $x;
            if ($http_user_agent ~* (bot|crawl)) { return 403; }
            rewrite ^/(.*)/$ /$1 permanent;
            if (!-e $request_filename) { rewrite ^(.+)$ /index.php?q=$1 last; }
        }
        location = /index.php { return 200 "php q=$arg_q args=$args\n"; }

        location /maint/ { rewrite ^ /maintenance.html break; }
        location /loop { rewrite ^/loop(.*)$ /loop$1x last; }
        location /red/ { rewrite ^/red/(.*)$ http://example.com/$1?from=red; }
        location /drop/ { rewrite ^ /new/dropped? last; }
        location /perm/ { rewrite ^/perm/(.*)$ /new/$1 permanent; }
        location /temp/ { rewrite ^/temp/(.*)$ /new/$1 redirect; }
        location /go { rewrite ^ $arg_r? redirect; }
        location /chain/ { rewrite ^/chain/a(.*)$ /chain/b$1; rewrite ^/chain/b(.*)$ /new/c$1; }
        location /order/ { return 200 "first\n"; rewrite ^ /new/x last; }
        location ~ ^/user/(?<name>[a-z]+)/(\d+)$ { return 200 "name=$name id=$2\n"; }
        location ~ ^/re/(.*)$ { rewrite ^ /new/$1 last; }

        location /if-headers/ {
            add_header X-Outer 1;
            if ($arg_a) { add_header X-First 1; }
            if ($arg_b) { add_header X-Second 1; }
            return 200 "ok\n";
        }
        location /deny/ { deny all; return 200 "return runs before access\n"; }
        location /eq/ {
            if ($arg_v = yes) { return 200 "eq\n"; }
            if ($arg_v != "") { return 200 "ne\n"; }
            return 200 "none\n";
        }
        location /re-neg/ {
            if ($http_user_agent !~* ^curl) { return 200 "not curl\n"; }
            if ($http_user_agent ~ ^curl/(\d+)) { return 200 "curl $1\n"; }
        }
        location /file/ {
            if (-f $document_root$arg_p) { return 200 "f\n"; }
            if (-d $document_root$arg_p) { return 200 "d\n"; }
            if (!-e $document_root$arg_p) { return 200 "missing\n"; }
            return 200 "other\n";
        }
        location /exec/ {
            if (-x $document_root$arg_p) { return 200 "x\n"; }
            if (!-x $document_root$arg_p) { return 200 "not x\n"; }
        }
        location /brk/ {
            set $a 1;
            if ($arg_stop) { break; }
            set $a 2;
            return 200 "a=$a\n";
        }
        location /setargs/ { set $args "a=1"; return 200 "$args $arg_a\n"; }
        location /noflag/ { rewrite ^/noflag/(.*)$ /new/$1; return 200 "returned $uri\n"; }
        location /ep/ { error_page 404 /legacy/ep; }
        location /limited/ { limit_except GET { deny all; } return 200 "get\n"; }
        location /al/ { alias @PREFIX@/www/; rewrite ^ /al/page.html break; }
        location /uninit/ { return 200 "[$never]\n"; }
        location /setnever/ { set $never 1; return 200 "$never\n"; }

        location /api/ {
            rewrite ^/api/(.*)$ /$1 break;
            proxy_pass http://127.0.0.1:@PORT1@;
        }
        location /api2/ {
            rewrite ^/api2/(.*)$ /x/$1 break;
            proxy_pass http://127.0.0.1:@PORT1@/base/;
        }
        location /to-api2/ { rewrite ^/to-api2/(.*)$ /api2/$1 last; }
        location /uripart/ { proxy_pass http://127.0.0.1:@PORT1@/base/; }
        location /ifproxy/ {
            proxy_pass http://127.0.0.1:@PORT1@;
            if ($arg_t) { add_header X-If 1; }
        }
        location /ifpass/ {
            if ($arg_up) { proxy_pass http://127.0.0.1:@PORT1@; }
        }
    }
    server {
        listen 127.0.0.1:@PORT1@;
        location / { return 200 "backend $request_uri\n"; }
    }
    server {
        listen 127.0.0.1:@PORT2@;
        server_name localhost;
        if ($scheme = http) { return 301 https://$host$request_uri; }
        location / { return 200 "secure\n"; }
    }
"""


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("rewrite")
    www = prefix / "www"
    (www / "dir").mkdir(parents=True)
    (www / "index.html").write_text("home\n")
    (www / "maintenance.html").write_text("down for maintenance\n")
    (www / "page.html").write_text("page\n")
    tool = www / "tool.sh"
    tool.write_text("#!/bin/sh\n")
    os.chmod(tool, 0o755)
    server = harness.Server(harness.base_conf(CONF), prefix, nports=3)
    server.start()
    try:
        yield server
    finally:
        server.stop()


# (path, request headers, status, Location or None, body or None)
CASES = [
    # if ($scheme = http) { return 301 https://$host$request_uri; }
    ("scheme", "/a/b?c=d", {}, 301, "https://localhost/a/b?c=d", None),
    # rewrite ^/(.*)/$ /$1 permanent;
    ("slash", "/page/", {}, 301, "http://localhost:@PORT@/page", None),
    ("slash-args", "/page/?x=1", {}, 301, "http://localhost:@PORT@/page?x=1", None),
    # if (!-e $request_filename) { rewrite ^(.+)$ /index.php?q=$1 last; }
    ("front-controller", "/blog/post?id=3", {}, 200, None, "php q=/blog/post args=q=/blog/post&id=3\n"),
    # A percent-encoded URI: captures are escaped again in the arguments.
    ("front-controller-quoted", "/blog/a%20b%26c", {}, 200, None,
     "php q=/blog/a%20b%26c args=q=/blog/a%20b%26c\n"),
    ("existing-file", "/page.html", {}, 200, None, "page\n"),
    # if ($http_user_agent ~* (bot|crawl)) { return 403; }
    ("bot", "/page.html", {"User-Agent": "Mozilla/5.0 (compatible; GoogleBot)"}, 403, None, None),
    ("crawler", "/page.html", {"User-Agent": "SomeCrawler/1"}, 403, None, None),
    # rewrite ^ /maintenance.html break;
    ("maintenance", "/maint/anything", {}, 200, None, "down for maintenance\n"),
    # Server-level rewrite before location selection; captures stay set.
    ("server-rewrite", "/legacy/x?k=v", {}, 200, None, "new uri=/new/x one=x args=k=v\n"),
    ("loop", "/loop", {}, 500, None, None),
    ("absolute", "/red/p?a=b", {}, 302, "http://example.com/p?from=red&a=b", None),
    ("drop-args", "/drop/?a=b", {}, 200, None, "new uri=/new/dropped one= args=\n"),
    ("permanent", "/perm/a?z=1", {}, 301, "http://localhost:@PORT@/new/a?z=1", None),
    ("redirect", "/temp/a", {}, 302, "http://localhost:@PORT@/new/a", None),
    ("redirect-quoted", "/perm/a%20b", {}, 301, "http://localhost:@PORT@/new/a%20b", None),
    ("redirect-plus", "/perm/a+b%3F", {}, 301, "http://localhost:@PORT@/new/a+b?", None),
    # A redirect's target is unescaped up to its query: the URL an
    # argument carried goes out whole, line breaks stay escaped.
    ("redirect-to-argument", "/go?r=http%3A%2F%2Fexample.com%2Fa%20b%3Ffrom%3D%2F", {}, 302,
     "http://example.com/a%20b?from%3D%2F", None),
    ("redirect-keeps-line-breaks-escaped", "/go?r=http%3A%2F%2Fexample.com%0D%0ASet-Cookie:x", {}, 302,
     "http://example.com%0D%0ASet-Cookie:x", None),
    ("set-args", "/setargs/?z=9", {}, 200, None, "a=1 1\n"),
    ("no-flag-goes-on", "/noflag/x", {}, 200, None, "returned /new/x\n"),
    # error_page redirects start again at the server's rewrites.
    ("error-page-server-rewrite", "/ep/none", {}, 404, None, "new uri=/new/ep one=ep args=\n"),
    ("chain", "/chain/a1", {}, 200, None, "new uri=/new/c1 one=1 args=\n"),
    ("order", "/order/", {}, 200, None, "first\n"),
    ("named-capture", "/user/ann/42", {}, 200, None, "name=ann id=42\n"),
    # The rewrite's own match (no groups) empties $1, as in nginx.
    ("regex-location", "/re/q", {}, 200, None, "new uri=/new/ one= args=\n"),
    ("deny-after-return", "/deny/", {}, 200, None, "return runs before access\n"),
    ("eq", "/eq/?v=yes", {}, 200, None, "eq\n"),
    ("ne", "/eq/?v=no", {}, 200, None, "ne\n"),
    ("none", "/eq/", {}, 200, None, "none\n"),
    ("not-curl", "/re-neg/", {"User-Agent": "wget"}, 200, None, "not curl\n"),
    ("curl", "/re-neg/", {"User-Agent": "curl/8.1"}, 200, None, "curl 8\n"),
    ("-f", "/file/?p=/page.html", {}, 200, None, "f\n"),
    ("-d", "/file/?p=/dir", {}, 200, None, "d\n"),
    ("!-e", "/file/?p=/none", {}, 200, None, "missing\n"),
    ("-x", "/exec/?p=/tool.sh", {}, 200, None, "x\n"),
    ("!-x", "/exec/?p=/page.html", {}, 200, None, "not x\n"),
    # alias cannot map a URI rewritten in its location (nginx: 500 and an alert).
    ("alias-after-break", "/al/x", {}, 500, None, None),
    ("set-goes-on", "/brk/", {}, 200, None, "a=2\n"),
    ("break-in-if", "/brk/?stop=1", {}, 404, None, None),
    ("uninitialized", "/uninit/", {}, 200, None, "[]\n"),
    ("set", "/setnever/", {}, 200, None, "1\n"),
    ("rewrite-break-proxy", "/api/v1/items?x=1", {}, 200, None, "backend /v1/items?x=1\n"),
    # proxy_pass with a URI part after `rewrite ... break`: the whole new URI goes.
    ("rewrite-break-proxy-uri", "/api2/a%20b?q=1", {}, 200, None, "backend /x/a%20b?q=1\n"),
    ("last-then-break-proxy-uri", "/to-api2/y", {}, 200, None, "backend /x/y\n"),
    ("proxy-uri-part", "/uripart/a%20b", {}, 200, None, "backend /base/a%20b\n"),
    ("if-keeps-proxy", "/ifproxy/p?t=1", {}, 200, None, "backend /ifproxy/p?t=1\n"),
    ("proxy-in-if", "/ifpass/p?up=1", {}, 200, None, "backend /ifpass/p?up=1\n"),
    ("proxy-in-if-false", "/ifpass/p", {}, 404, None, None),
]


@pytest.mark.parametrize("name,path,headers,status,location,body", CASES, ids=[c[0] for c in CASES])
def test_rewrite(srv, name, path, headers, status, location, body):
    p = srv.port if name != "scheme" else srv.ports[2]
    r = http(p, path, headers=headers)
    assert r.status == status, r
    if location is not None:
        assert r.header("Location") == location.replace("@PORT@", str(srv.port)), r
    else:
        assert r.header("Location") is None, r
    if body is not None:
        assert r.text() == body, r


def test_limit_except_skips_the_rewrite_directives(srv):
    # A method limit_except does not list runs under its block, which has
    # no rewrite directives: access control answers, not the return.
    assert http(srv.port, "/limited/").text() == "get\n"
    r = http(srv.port, "/limited/", method="POST", body=b"x")
    assert r.status == 403, r


def test_set_variable_in_add_header(srv):
    r = http(srv.port, "/page.html")
    assert r.status == 200
    assert r.header("X-Var") == "v-/page.html"
    # The 301 of the same location carries it too (add_header on redirects).
    r = http(srv.port, "/page/")
    assert r.header("X-Var") == "v-/page/"


def test_if_settings_replace_the_locations(srv):
    # "If is evil": the settings of the last true `if` are the ones used.
    r = http(srv.port, "/if-headers/?a=1&b=1")
    assert (r.header("X-Outer"), r.header("X-First"), r.header("X-Second")) == (None, None, "1")
    r = http(srv.port, "/if-headers/?a=1")
    assert (r.header("X-Outer"), r.header("X-First"), r.header("X-Second")) == (None, "1", None)
    r = http(srv.port, "/if-headers/")
    assert (r.header("X-Outer"), r.header("X-First"), r.header("X-Second")) == ("1", None, None)
    r = http(srv.port, "/ifproxy/p?t=1")
    assert r.header("X-If") == "1"


def test_error_log_lines(srv):
    http(srv.port, "/loop")
    http(srv.port, "/uninit/")
    http(srv.port, "/perm/a")
    http(srv.port, "/al/x")

    def logged():
        text = srv.error_log_text()
        return ("rewrite or internal redirection cycle while processing \"/loopxxxxxxxxxxx\"" in text
                and "using uninitialized \"never\" variable" in text
                and "\"^/perm/(.*)$\" matches \"/perm/a\"" in text
                and "rewritten redirect: \"/new/a\"" in text
                and "\"^/loop(.*)$\" matches \"/loop\"" in text
                and "rewritten data: \"/loopx\", args: \"\"" in text
                and "\"alias\" cannot be used in location \"/al/\" where URI was rewritten" in text)
    harness.wait_until(logged, 10, what="the rewrite lines in the error log")


def test_config_errors(tmp_path):
    bad = [
        ("location / { if ($uri) { try_files $uri =404; } }", "\"try_files\" directive is not allowed"),
        ("location / { rewrite ^ /x bogus; }", "invalid parameter \"bogus\""),
        ("set $uri x;", "the duplicate \"uri\" variable"),
        ("location / { if ($uri < 1) { } }", "unexpected \"<\" in condition"),
    ]
    (tmp_path / "logs").mkdir()
    for body, message in bad:
        conf = tmp_path / "bad.conf"
        conf.write_text(harness.base_conf("server { listen 127.0.0.1:9; " + body + " }")
                        .replace("@PREFIX@", str(tmp_path)))
        r = harness.cli(["-t", "-c", str(conf)], prefix=tmp_path)
        assert r.returncode != 0, body
        assert message in r.stderr, (body, r.stderr)


def test_uninitialized_variable_warn_off(make_server):
    conf = harness.base_conf(r"""
    server {
        listen 127.0.0.1:@PORT@;
        location /quiet/ { uninitialized_variable_warn off; return 200 "[$later]\n"; }
        location /loud/ { return 200 "[$later]\n"; }
        location /set/ { set $later 1; return 200 "[$later]\n"; }
    }
    """)
    s = make_server(conf)
    assert http(s.port, "/quiet/").text() == "[]\n"
    assert http(s.port, "/set/").text() == "[1]\n"
    assert "using uninitialized" not in s.error_log_text()
    assert http(s.port, "/loud/").text() == "[]\n"
    harness.wait_until(lambda: "using uninitialized \"later\" variable" in s.error_log_text(), 10,
                       what="the warning")
