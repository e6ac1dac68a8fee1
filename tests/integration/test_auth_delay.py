"""auth_delay (ngx_http_core_module): a 401 from auth_basic is answered only
after the delay, so a wrong password takes as long whatever it is; a right
one and a 403 from deny rules are not held back. The same expectations
hold against nginx (TORII_BIN=/usr/sbin/nginx)."""

import base64
import hashlib
import time

import harness
from harness import http

CONF = r"""
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        root @PREFIX@/www;
        auth_delay 1s;

        location /private/ {
            auth_basic "area";
            auth_basic_user_file @PREFIX@/htpasswd;
        }
        location /denied/ {
            deny all;
        }
        location /nodelay/ {
            auth_delay 0;
            auth_basic "area";
            auth_basic_user_file @PREFIX@/htpasswd;
        }
    }
"""


def credentials(user, password):
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def timed(port, path, headers=None):
    started = time.monotonic()
    r = http(port, path, headers=headers)
    return r, time.monotonic() - started


def test_unauthorized_answers_wait(make_server):
    s = make_server(harness.base_conf(CONF, error_level="info"), start=False)
    for d in ("private", "denied", "nodelay"):
        (s.prefix / "www" / d).mkdir(parents=True, exist_ok=True)
        (s.prefix / "www" / d / "index.html").write_text("secret\n")
    digest = base64.b64encode(hashlib.sha1(b"right").digest()).decode()
    (s.prefix / "htpasswd").write_text(f"alice:{{SHA}}{digest}\n")
    s.start()

    r, elapsed = timed(s.port, "/private/", credentials("alice", "wrong"))
    assert r.status == 401, r
    assert r.header("WWW-Authenticate") == 'Basic realm="area"'
    assert elapsed >= 0.9, elapsed

    r, elapsed = timed(s.port, "/private/")  # no credentials at all: 401 too
    assert r.status == 401, r
    assert elapsed >= 0.9, elapsed

    r, elapsed = timed(s.port, "/private/", credentials("alice", "right"))
    assert r.status == 200, r
    assert elapsed < 0.9, elapsed

    r, elapsed = timed(s.port, "/denied/")
    assert r.status == 403, r
    assert elapsed < 0.9, elapsed

    r, elapsed = timed(s.port, "/nodelay/", credentials("alice", "wrong"))
    assert r.status == 401, r
    assert elapsed < 0.9, elapsed
    harness.wait_until(lambda: "delaying unauthorized request" in s.error_log_text(), 5,
                       what="the info line")


def test_bad_value_is_refused(tmp_path):
    prefix = tmp_path / "p"
    (prefix / "logs").mkdir(parents=True)
    conf_path = prefix / "t.conf"
    conf_path.write_text(harness.base_conf(http="auth_delay soon;").replace("@PREFIX@", str(prefix)))
    r = harness.cli(["-t", "-c", str(conf_path)], prefix=prefix)
    assert r.returncode != 0
    assert '"auth_delay" directive invalid value' in (r.stdout + r.stderr)
