"""What the proxy takes from the upstream's response beyond the head it
passes on: $upstream_response_length, the X-Accel-* fields (and
proxy_ignore_headers, which turns them off), and the proxy directives that
change what goes upstream or comes back (proxy_method, proxy_cookie_*).
Each request is answered by a scripted upstream (`h=Name:Value` adds a
field, `n=BYTES` sets the body's size); the same tests pass against nginx."""

import pytest

import harness
from scripted_upstream import ScriptedUpstream

CONF = r"""
    log_format lengths "$request_uri len=$upstream_response_length";
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        root @PREFIX@/www;
        access_log @PREFIX@/logs/lengths.log lengths;

        location /up/ { proxy_pass http://127.0.0.1:@BACKEND@/; }
        location /ignored/ {
            proxy_pass http://127.0.0.1:@BACKEND@/;
            proxy_ignore_headers X-Accel-Redirect X-Accel-Limit-Rate X-Accel-Charset Expires Cache-Control;
        }
        location /files/ { internal; }
    }
"""


@pytest.fixture
def upstream():
    u = ScriptedUpstream()
    yield u
    u.stop()


@pytest.fixture
def srv(make_server, upstream):
    s = make_server(harness.base_conf(CONF.replace("@BACKEND@", str(upstream.port))), start=False)
    (s.prefix / "www" / "files").mkdir(parents=True)
    (s.prefix / "www" / "files" / "secret.txt").write_text("the secret file\n")
    s.start()
    return s


def log_lines(srv, n):
    path = srv.prefix / "logs" / "lengths.log"
    return harness.wait_until(lambda: path.exists() and len(path.read_text().splitlines()) >= n and
                              path.read_text().splitlines(), 10, what="access log lines")


def test_upstream_response_length_is_the_body_size(srv):
    r = harness.http(srv.port, "/up/?n=1234")
    assert r.status == 200 and len(r.body) == 1234
    assert log_lines(srv, 1)[0] == "/up/?n=1234 len=1234"


def test_ignored_headers_are_still_hidden(srv):
    r = harness.http(srv.port, "/ignored/?n=10&h=X-Accel-Redirect:/files/secret.txt&h=X-Accel-Charset:koi8-r")
    assert r.status == 200 and len(r.body) == 10
    assert r.header("X-Accel-Redirect") is None and r.header("X-Accel-Charset") is None
    assert "charset" not in r.header("Content-Type", "")
