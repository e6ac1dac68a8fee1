"""auth_request to a small Python auth service behind proxy_pass: 2xx lets
the request through, 401 and 403 are the client's answer (401 with the
service's WWW-Authenticate), anything else is a 500; auth_request_set
takes values from the subrequest. The same expectations hold against
nginx (TORII_BIN=/usr/sbin/nginx, built with the auth_request module)."""

import hashlib
import re

import pytest

import harness
from echo_backend import AppBackend
from harness import http

CONF = r"""
    server {
        listen 127.0.0.1:@PORT@;
        listen 127.0.0.1:@PORT1@ http2;
        server_name localhost;
        root @PREFIX@/www;

        location /private/ {
            auth_request /auth;
            auth_request_set $auth_user $upstream_http_x_user;
            auth_request_set $auth_status $upstream_status;
            add_header X-User $auth_user always;
            add_header X-Auth-Status $auth_status always;
        }
        location /proxied/ {
            auth_request /auth;
            proxy_pass http://127.0.0.1:@AUTHPORT@/echo/;
        }
        location /portal/ {
            auth_request /auth;
            auth_request_set $login_url $upstream_http_x_login;
            error_page 401 =302 $login_url;
        }
        location /page/ {
            auth_request /auth;
            error_page 401 /denied.html;
        }
        location /intercepted/ {
            proxy_pass http://127.0.0.1:@AUTHPORT@/check;
            proxy_intercept_errors on;
            error_page 401 /denied.html;
        }
        location /user-args/ {
            auth_request /auth;
            auth_request_set $args "user=$upstream_http_x_user";
            proxy_pass http://127.0.0.1:@AUTHPORT@/echo/;
        }
        location /any/ {
            satisfy any;
            deny all;
            auth_request /auth;
        }
        location /local-auth/ {
            auth_request /local;
        }
        location = /local { internal; return 204; }
        location = /auth {
            internal;
            proxy_pass http://127.0.0.1:@AUTHPORT@/check;
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
            proxy_set_header X-Original-URI $request_uri;
        }
    }
"""


SEEN = []  # (method, path, X-Original-URI, Content-Length) of each auth subrequest


def auth_answer(request):
    if request.path.startswith("/echo/"):
        body = f" body={len(request.body)}:{hashlib.sha256(request.body).hexdigest()[:16]}" if request.body else ""
        return 200, {}, f"echo {request.path}{body}\n".encode()
    SEEN.append((request.command, request.path, request.headers.get("X-Original-URI"),
                 request.headers.get("Content-Length")))
    token = request.headers.get("X-Token")
    if token == "good":
        return 200, {"X-User": "alice"}, b""
    if token == "bad":
        return 403, {}, b""
    if token == "boom":
        return 502, {}, b""
    return 401, {"WWW-Authenticate": 'Bearer realm="api"', "X-Login": "https://login.test/?rd=x"}, b""


@pytest.fixture
def auth_service():
    SEEN.clear()
    server = AppBackend(auth_answer, protocol="HTTP/1.0")
    yield server.port
    server.stop()


@pytest.fixture
def srv(make_server, auth_service):
    s = make_server(harness.base_conf(CONF.replace("@AUTHPORT@", str(auth_service))), nports=2, start=False)
    (s.prefix / "www").mkdir(parents=True, exist_ok=True)
    (s.prefix / "www" / "denied.html").write_text("denied page\n")
    for d in ("private", "any", "local-auth", "portal", "page"):
        (s.prefix / "www" / d).mkdir(parents=True, exist_ok=True)
        (s.prefix / "www" / d / "index.html").write_text("secret\n")
    s.start()
    return s


def test_allowed_request_gets_the_content_and_variables(srv):
    r = http(srv.port, "/private/", headers={"X-Token": "good"})
    assert r.status == 200, r
    assert r.body == b"secret\n"
    assert r.header("X-User") == "alice"
    assert r.header("X-Auth-Status") == "200"
    method, path, original, length = SEEN[-1]
    assert (method, path, original) == ("GET", "/check", "/private/")


def test_the_subrequest_is_a_get_without_body(srv):
    r = http(srv.port, "/private/", method="POST", body=b"payload", headers={"X-Token": "good"})
    # The static handler refuses POST, after access was granted.
    assert r.status == 405, r
    method, path, _, length = SEEN[-1]
    assert method == "GET" and length in (None, "0")


def test_401_passes_the_challenge_403_and_errors(srv):
    r = http(srv.port, "/private/")
    assert r.status == 401
    assert r.header("WWW-Authenticate") == 'Bearer realm="api"'
    assert r.header("X-Auth-Status") == "401"
    assert http(srv.port, "/private/", headers={"X-Token": "bad"}).status == 403
    r = http(srv.port, "/private/", headers={"X-Token": "boom"})
    assert r.status == 500
    assert re.search(r"\[error\] .*auth request unexpected status: 502", srv.error_log_text())


def test_the_challenge_survives_an_error_page(srv):
    # Authelia's recommended setup: `error_page 401 =302 $redirection_url`
    # sends the browser to the portal, and the 401's challenge goes along;
    # an error page served for the 401 keeps it too.
    r = http(srv.port, "/portal/")
    assert r.status == 302, r
    assert r.header("Location") == "https://login.test/?rd=x"
    assert r.header("WWW-Authenticate") == 'Bearer realm="api"'
    r = http(srv.port, "/page/")
    assert r.status == 401 and r.body == b"denied page\n", r
    assert r.header("WWW-Authenticate") == 'Bearer realm="api"'
    # A proxied 401 that proxy_intercept_errors hands to error_page too.
    r = http(srv.port, "/intercepted/")
    assert r.status == 401 and r.body == b"denied page\n", r
    assert r.header("WWW-Authenticate") == 'Bearer realm="api"'


def test_then_the_request_is_proxied(srv):
    r = http(srv.port, "/proxied/x?y=1", headers={"X-Token": "good"})
    assert r.status == 200 and r.body == b"echo /echo/x?y=1\n", r
    assert http(srv.port, "/proxied/x").status == 401


@pytest.mark.parametrize("size", [7, 300_000])
@pytest.mark.parametrize("close", [False, True])
def test_the_request_body_waits_for_the_verdict(srv, size, close):
    # The body comes right behind the head, while the subrequest runs; it
    # must reach the upstream whole once access is granted.
    body = bytes(i * 7 % 251 for i in range(size))
    headers = {"X-Token": "good", "Content-Type": "application/octet-stream"}
    if close:
        headers["Connection"] = "close"
    r = http(srv.port, "/proxied/up", method="POST", body=body, headers=headers)
    assert r.status == 200, r
    assert r.body == f"echo /echo/up body={size}:{hashlib.sha256(body).hexdigest()[:16]}\n".encode()


def test_satisfy_any_with_a_denied_address(srv):
    assert http(srv.port, "/any/").status == 401
    assert http(srv.port, "/any/", headers={"X-Token": "bad"}).status == 403
    assert http(srv.port, "/any/", headers={"X-Token": "good"}).status == 200


def test_auth_request_set_may_change_the_arguments(srv):
    """auth_request_set $args, as `set $args`: the proxied request carries
    what the auth service answered in place of the client's arguments."""
    r = http(srv.port, "/user-args/page?user=mallory", headers={"X-Token": "good"})
    assert (r.status, r.body) == (200, b"echo /echo/page?user=alice\n")


def test_a_local_location_answers_the_subrequest(srv):
    assert http(srv.port, "/local-auth/").status == 200


def test_over_http2(srv):
    import subprocess

    def code(*extra):
        out = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-o", "/dev/null", "-w", "%{http_code}",
                              *extra, f"http://127.0.0.1:{srv.ports[1]}/private/"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout

    assert code("-H", "X-Token: good") == "200"
    assert code() == "401"
    assert code("-H", "X-Token: bad") == "403"
