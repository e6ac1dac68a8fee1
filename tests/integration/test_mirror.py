"""mirror / mirror_request_body (ngx_http_mirror_module): each request of a
location with `mirror` also goes, in the background, to the mirror's
(internal) location, whose response is ignored. The shadow backend sees
the client's method, URI, fields and body; a dead or stalled shadow does
not change the client's answer nor hold it back; the list is inherited,
replaced by a block's own lines and cleared by `off`; a mirror's own
location mirrors nothing. The same expectations hold against nginx
(TORII_BIN=/usr/sbin/nginx)."""

import threading
import time

import pytest

import harness
from echo_backend import AppBackend
from harness import http

CONF = r"""
    client_body_buffer_size 16k;
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        mirror /mirror;

        location / {
            proxy_pass http://127.0.0.1:@MAIN@;
        }
        location /two/ {
            mirror /mirror;
            mirror /mirror2;
            proxy_pass http://127.0.0.1:@MAIN@;
        }
        location /off/ {
            mirror off;
            proxy_pass http://127.0.0.1:@MAIN@;
        }
        location /nobody/ {
            mirror /mirror-nobody;
            mirror_request_body off;
            proxy_pass http://127.0.0.1:@MAIN@;
        }
        location /dead/ {
            mirror /mirror-dead;
            proxy_pass http://127.0.0.1:@MAIN@;
        }
        location /stalled/ {
            mirror /mirror-stalled;
            proxy_pass http://127.0.0.1:@MAIN@;
        }
        location = /mirror {
            internal;
            proxy_pass http://127.0.0.1:@SHADOW@$request_uri;
        }
        location = /mirror2 {
            internal;
            proxy_pass http://127.0.0.1:@SHADOW@/second$request_uri;
        }
        location = /mirror-nobody {
            internal;
            proxy_pass http://127.0.0.1:@SHADOW@/nobody-shadow$request_uri;
            proxy_pass_request_body off;
            proxy_set_header Content-Length "";
        }
        location = /mirror-dead {
            internal;
            proxy_pass http://127.0.0.1:@DEAD@$request_uri;
        }
        location = /mirror-stalled {
            internal;
            proxy_pass http://127.0.0.1:@SHADOW@/hold$request_uri;
        }
    }
"""


class Recorder(AppBackend):
    """Answers every request with its name (200 from "main", 503 from the
    others) and remembers what it got; /hold/ waits until `release`."""

    def __init__(self, name):
        self.name = name
        self.seen = []
        self.release = threading.Event()
        super().__init__(self._answer)

    def _answer(self, request):
        self.seen.append({"method": request.command, "path": request.path, "headers": dict(request.headers),
                          "body": request.body})
        if request.path.startswith("/hold/"):
            self.release.wait(20)
        answer = f"{self.name} {request.command} {request.path} {len(request.body)}\n".encode()
        return 200 if self.name == "main" else 503, {"X-Answered-By": self.name}, answer


@pytest.fixture
def backends():
    main, shadow = Recorder("main"), Recorder("shadow")
    dead = harness.PortLease()  # nothing listens there
    yield main, shadow, dead.port
    shadow.release.set()
    for s in (main, shadow):
        s.stop()
    dead.release()


@pytest.fixture
def srv(make_server, backends):
    main, shadow, dead = backends
    conf = CONF.replace("@MAIN@", str(main.port)).replace("@SHADOW@", str(shadow.port)).replace("@DEAD@", str(dead))
    return make_server(harness.base_conf(conf))


def seen(handler, prefix):
    return [r for r in list(handler.seen) if r["path"].startswith(prefix)]


def wait_seen(handler, prefix, count=1):
    return harness.wait_until(lambda: len(seen(handler, prefix)) >= count and seen(handler, prefix), 10,
                              what=f"{handler.name} to see {prefix}")


def test_the_shadow_gets_the_same_request_and_body(srv, backends):
    main, shadow, _ = backends
    r = http(srv.port, "/api/items?x=1&y=2", method="POST", body=b"hello mirror",
             headers={"X-Test": "abc", "Content-Type": "text/plain"})
    assert r.status == 200, r
    assert r.header("X-Answered-By") == "main"  # the mirror's 503 is ignored
    assert r.body == b"main POST /api/items?x=1&y=2 12\n"
    got = wait_seen(shadow, "/api/items")[0]
    assert got["method"] == "POST"
    assert got["path"] == "/api/items?x=1&y=2"
    assert got["headers"].get("X-Test") == "abc"
    assert got["headers"].get("Content-Type") == "text/plain"
    assert got["body"] == b"hello mirror"
    assert seen(main, "/api/items")[0]["body"] == b"hello mirror"


@pytest.mark.parametrize("chunked", [False, True])
def test_a_large_body_reaches_both_whole(srv, backends, chunked):
    # Past client_body_buffer_size the body waits in a temporary file.
    main, shadow, _ = backends
    body = bytes((i * 7) % 251 for i in range(300_000))
    path = f"/upload/{'chunked' if chunked else 'length'}"
    if chunked:
        pieces = b"".join(b"%x\r\n" % len(body[i:i + 40000]) + body[i:i + 40000] + b"\r\n"
                          for i in range(0, len(body), 40000)) + b"0\r\n\r\n"
        raw = (f"PUT {path} HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n"
               "Connection: close\r\n\r\n").encode() + pieces
        resp, _ = harness.http_raw(srv.port, raw, wait_close=0)
        assert resp is not None and resp.status == 200, resp
    else:
        r = http(srv.port, path, method="PUT", body=body)
        assert r.status == 200, r
    assert wait_seen(shadow, path)[0]["body"] == body
    assert seen(main, path)[0]["body"] == body


def test_several_mirrors_replace_the_inherited_one(srv, backends):
    main, shadow, _ = backends
    r = http(srv.port, "/two/a")
    assert r.status == 200, r
    wait_seen(shadow, "/two/a")
    wait_seen(shadow, "/second/two/a")
    # `mirror /mirror` is written once here: the inherited line is replaced, not added to.
    r = http(srv.port, "/marker-two")
    wait_seen(shadow, "/marker-two")
    assert len(seen(shadow, "/two/a")) == 1


def test_mirror_off_and_no_mirror_of_a_mirror(srv, backends):
    main, shadow, _ = backends
    r = http(srv.port, "/off/quiet")
    assert r.status == 200, r
    assert seen(main, "/off/quiet")
    # A later mirrored request shows the shadow is reached; the earlier one
    # never came, and the mirror's own location (which inherits `mirror`)
    # mirrored nothing: one request each.
    r = http(srv.port, "/marker")
    assert r.status == 200, r
    wait_seen(shadow, "/marker")
    assert not seen(shadow, "/off/")
    assert len(seen(shadow, "/marker")) == 1


def test_mirror_request_body_off(srv, backends):
    main, shadow, _ = backends
    r = http(srv.port, "/nobody/x", method="POST", body=b"only for main")
    assert r.status == 200, r
    assert seen(main, "/nobody/x")[0]["body"] == b"only for main"
    got = wait_seen(shadow, "/nobody-shadow/nobody/x")[0]
    assert got["method"] == "POST"
    assert got["body"] == b""


def test_a_dead_shadow_changes_nothing(srv, backends):
    main, shadow, _ = backends
    r = http(srv.port, "/dead/x", method="POST", body=b"abc")
    assert r.status == 200, r
    assert r.body == b"main POST /dead/x 3\n"
    assert seen(main, "/dead/x")[0]["body"] == b"abc"


def test_a_stalled_shadow_does_not_hold_the_client(srv, backends):
    main, shadow, _ = backends
    started = time.monotonic()
    r = http(srv.port, "/stalled/x", method="POST", body=b"abc", timeout=8)
    elapsed = time.monotonic() - started
    assert r.status == 200, r
    assert r.body == b"main POST /stalled/x 3\n"
    # The mirror is still waiting on the shadow (released at the end).
    wait_seen(shadow, "/hold/stalled/x")
    assert not shadow.release.is_set()
    assert elapsed < 3, elapsed


@pytest.mark.parametrize("lines, message", [
    ("mirror off; mirror /m;", '"mirror" directive is duplicate'),
    ("mirror /m; mirror off;", '"mirror" directive is duplicate'),
    ("mirror_request_body maybe;", 'invalid value "maybe" in "mirror_request_body" directive, it must be "on" or "off"'),
])
def test_bad_lines_are_refused(tmp_path, lines, message):
    prefix = tmp_path / "p"
    (prefix / "logs").mkdir(parents=True)
    conf_path = prefix / "t.conf"
    conf = "server { listen 127.0.0.1:1; location / { " + lines + " } }"
    conf_path.write_text(harness.base_conf(http=conf).replace("@PREFIX@", str(prefix)))
    r = harness.cli(["-t", "-c", str(conf_path)], prefix=prefix)
    assert r.returncode != 0
    assert message in (r.stdout + r.stderr)
