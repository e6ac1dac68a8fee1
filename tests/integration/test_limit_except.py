"""limit_except METHOD... { ... }: a method the block does not list runs
under the block's own settings, the location's with the block's lines
applied, as nginx's: proxy_pass (a writer for the methods that change
things), auth_basic (WebDAV's "anyone reads, users write"), allow/deny
(replacing the location's rules) and access_log. Every test also runs
against Debian's nginx."""

import base64

import pytest

import harness
from harness import http

CONF = r"""
    server {
        listen 127.0.0.1:@PORT0@;
        location /write {
            proxy_pass http://127.0.0.1:@PORT1@/readonly;
            limit_except GET {
                proxy_pass http://127.0.0.1:@PORT2@;
            }
        }
        location /dav/ {
            proxy_pass http://127.0.0.1:@PORT1@;
            limit_except GET PROPFIND OPTIONS {
                auth_basic "writers";
                auth_basic_user_file @PREFIX@/users;
                access_log @PREFIX@/logs/writes.log;
            }
        }
        location /inverted/ {
            deny 127.0.0.1;
            proxy_pass http://127.0.0.1:@PORT1@;
            limit_except GET {
                allow 127.0.0.1;   # the block's rules replace the location's
            }
        }
    }
    server {
        listen 127.0.0.1:@PORT1@;
        location / { return 200 "reader saw $request_method $uri\n"; }
    }
    server {
        listen 127.0.0.1:@PORT2@;
        location / { return 200 "writer saw $request_method $uri\n"; }
    }
"""


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("limit_except")
    (prefix / "users").write_text("ann:{PLAIN}secret\n")
    server = harness.Server(harness.base_conf(CONF), prefix, nports=3)
    server.start()
    yield server
    server.stop()


def auth(user, password):
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def test_proxy_pass_inside_limit_except(srv):
    assert http(srv.port, "/write").body == b"reader saw GET /readonly\n"
    assert http(srv.port, "/write", method="HEAD").status == 200
    assert http(srv.port, "/write", method="POST", body=b"x").body == b"writer saw POST /write\n"
    assert http(srv.port, "/write", method="DELETE").body == b"writer saw DELETE /write\n"


def test_auth_basic_for_the_methods_not_listed(srv):
    assert http(srv.port, "/dav/a.txt").body == b"reader saw GET /dav/a.txt\n"
    assert http(srv.port, "/dav/a.txt", method="PROPFIND").status == 200
    refused = http(srv.port, "/dav/a.txt", method="PUT", body=b"new")
    assert refused.status == 401
    assert refused.header("WWW-Authenticate") == 'Basic realm="writers"'
    assert http(srv.port, "/dav/a.txt", method="PUT", body=b"new", headers=auth("ann", "wrong")).status == 401
    # The location's proxy_pass carries on into the block.
    ok = http(srv.port, "/dav/a.txt", method="PUT", body=b"new", headers=auth("ann", "secret"))
    assert ok.status == 200 and ok.body == b"reader saw PUT /dav/a.txt\n"


def test_access_log_inside_limit_except(srv):
    http(srv.port, "/dav/logged", method="DELETE", headers=auth("ann", "secret"))
    http(srv.port, "/dav/not-logged")
    log = srv.prefix / "logs" / "writes.log"
    harness.wait_until(lambda: log.exists() and "/dav/logged" in log.read_text(), 10, what="the block's log")
    assert "/dav/not-logged" not in log.read_text()


def test_the_blocks_rules_replace_the_locations(srv):
    assert http(srv.port, "/inverted/x").status == 403
    assert http(srv.port, "/inverted/x", method="POST", body=b"y").body == b"reader saw POST /inverted/x\n"
