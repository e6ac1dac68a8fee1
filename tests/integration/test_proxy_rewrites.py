"""What the proxy rewrites in the upstream's answer: Set-Cookie through
proxy_cookie_domain, proxy_cookie_path and proxy_cookie_flags, and Location
through proxy_redirect with regular expressions, several lines, `default`
among them, variables and `off`. A scripted upstream sends the fields each
request asks for (`a=Set-Cookie:...`, `status=302&h=Location:...`); the
same tests pass against nginx."""

import urllib.parse

import pytest

import harness
from scripted_upstream import ScriptedUpstream

CONF = r"""
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;

        location /c/ {
            proxy_pass http://127.0.0.1:@BACKEND@/;
            proxy_cookie_domain localhost example.org;
            proxy_cookie_domain ~\.([-0-9a-z]+\.[a-z]+)$ $1;
            proxy_cookie_path /one/ /;
            proxy_cookie_path ~*^/user/([^/]+) /u/$1;
            proxy_cookie_flags one httponly samesite=strict;
            proxy_cookie_flags ~^tw nosecure samesite=lax;
            proxy_cookie_flags $arg_flagged secure;

            location /c/off/ {
                proxy_pass http://127.0.0.1:@BACKEND@/;
                proxy_cookie_domain off;
                proxy_cookie_path off;
                proxy_cookie_flags off;
            }
        }

        location /r/ {
            proxy_pass http://127.0.0.1:@BACKEND@/;
            proxy_redirect ~^http://[^/]+/app/(.*)$ /new/$1;
            proxy_redirect ~*^HTTP://UP\.EXAMPLE/(.*)$ /ci/$1;
            proxy_redirect http://other/ http://elsewhere/;
            proxy_redirect http://$host/ /v/;
            proxy_redirect default;
        }
        location /off/ {
            proxy_pass http://127.0.0.1:@BACKEND@/;
            proxy_redirect off;
        }
    }
"""


@pytest.fixture(scope="module")
def upstream():
    u = ScriptedUpstream()
    yield u
    u.stop()


@pytest.fixture(scope="module")
def srv(upstream, tmp_path_factory):
    s = harness.Server(harness.base_conf(CONF.replace("@BACKEND@", str(upstream.port))),
                       tmp_path_factory.mktemp("rewrites"), 1)
    s.start()
    yield s
    s.stop()


def cookies(srv, path, *values, extra=""):
    query = "&".join("a=" + urllib.parse.quote("Set-Cookie:" + v) for v in values)
    r = harness.http(srv.port, f"{path}?n=5&{query}{extra}")
    assert r.status == 200
    return r.header_all("Set-Cookie")


def location(srv, path, value):
    r = harness.http(srv.port, f"{path}?n=5&status=302&h=" + urllib.parse.quote("Location:" + value))
    assert r.status == 302
    return r.header("Location")


def test_cookie_domain_whole_name_any_case_and_leading_dot(srv):
    assert cookies(srv, "/c/", "a=1; Domain=localhost; Path=/x") == ["a=1; Domain=example.org; Path=/x"]
    assert cookies(srv, "/c/", "a=1; domain=.LocalHost") == ["a=1; domain=.example.org"]
    assert cookies(srv, "/c/", "a=1; Domain=localhost.net") == ["a=1; Domain=localhost.net"]


def test_cookie_domain_regex_with_capture(srv):
    assert cookies(srv, "/c/", "a=1; Domain=.shop.sub.example.com") == ["a=1; Domain=example.com"]


def test_cookie_path_prefix_and_caseless_regex(srv):
    assert cookies(srv, "/c/", "a=1; Path=/one/some/uri/") == ["a=1; Path=/some/uri/"]
    assert cookies(srv, "/c/", "a=1; Path=/USER/alice/x") == ["a=1; Path=/u/alice"]
    assert cookies(srv, "/c/", "a=1; Path=/ONE/x") == ["a=1; Path=/ONE/x"]


def test_cookie_left_byte_for_byte_when_no_rule_matches(srv):
    assert cookies(srv, "/c/", "three=3;Path=/x;  HttpOnly") == ["three=3;Path=/x;  HttpOnly"]


def test_cookie_flags_added_changed_and_removed(srv):
    assert cookies(srv, "/c/", "one=1; Secure", "two=2; Secure; samesite=none; Path=/",
                   "other=3; HttpOnly") == [
        "one=1; Secure; HttpOnly; SameSite=Strict",
        "two=2; SameSite=Lax; Path=/",
        "other=3; HttpOnly",
    ]


def test_cookie_flags_name_from_a_variable(srv):
    assert cookies(srv, "/c/", "sid=9; Path=/", extra="&flagged=sid") == ["sid=9; Path=/; Secure"]


def test_cookie_rules_off_in_a_nested_location(srv):
    assert cookies(srv, "/c/off/", "one=1; Domain=localhost; Path=/one/x") == ["one=1; Domain=localhost; Path=/one/x"]


def test_redirect_regex_replaces_the_whole_value_with_captures(srv):
    assert location(srv, "/r/", "http://up.example:81/app/page?x=1") == f"http://localhost:{srv.port}/new/page?x=1"


def test_redirect_caseless_regex(srv):
    assert location(srv, "/r/", "http://up.example/Doc") == f"http://localhost:{srv.port}/ci/Doc"


def test_redirect_lines_are_tried_in_order(srv):
    assert location(srv, "/r/", "http://other/x") == "http://elsewhere/x"
    assert location(srv, "/r/", "http://localhost/z") == f"http://localhost:{srv.port}/v/z"


def test_redirect_default_among_other_lines(srv, upstream):
    assert location(srv, "/r/", f"http://127.0.0.1:{upstream.port}/abc") == f"http://localhost:{srv.port}/r/abc"
    assert location(srv, "/r/", "http://unmatched.example/abc") == "http://unmatched.example/abc"


def test_redirect_off_passes_location_as_it_is(srv, upstream):
    value = f"http://127.0.0.1:{upstream.port}/abc"
    assert location(srv, "/off/", value) == value


def refresh(srv, path, value):
    r = harness.http(srv.port, f"{path}?n=5&h=" + urllib.parse.quote("Refresh:" + value))
    assert r.status == 200
    return r.header("Refresh")


def test_redirect_rewrites_the_url_part_of_refresh(srv, upstream):
    # Only what follows "url=" (in any case) is matched and rewritten, and
    # a path stays a path: Refresh is not made absolute as Location is.
    assert refresh(srv, "/r/", "5; url=http://other/next") == "5; url=http://elsewhere/next"
    assert refresh(srv, "/r/", "0;URL=http://up.example:81/app/p") == "0;URL=/new/p"
    assert refresh(srv, "/r/", f"3; url=http://127.0.0.1:{upstream.port}/abc") == "3; url=/r/abc"
    # No url= part, or no rule for it: the value as it came.
    assert refresh(srv, "/r/", "http://other/next") == "http://other/next"
    assert refresh(srv, "/r/", "1; url=http://unmatched.example/") == "1; url=http://unmatched.example/"
