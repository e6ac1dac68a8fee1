"""`expires` in each of nginx's forms: a time, `modified TIME`, `epoch`,
`max`, `off`, `@TIME` (daily), and a value with variables (h5bp's
`map $sent_http_content_type $expires { ... } expires $expires;`),
rendered per response. The same tests pass against nginx."""

import email.utils
import os
import time

import pytest

import harness

CONF = r"""
    map $sent_http_content_type $expires {
        default         off;
        ~*text/css      1y;
        ~*text/html     epoch;
        ~*image/png     max;
        ~*text/plain    -1h;
    }
    map $arg_e $from_arg {
        default  $arg_e;
    }
    server {
        listen 127.0.0.1:@PORT@;
        server_name localhost;
        root @PREFIX@/www;

        location /typed/ { expires $expires; }
        location /arg/ { expires $from_arg; }
        location /modified/ { expires modified 10d; }
        location /modvar/ { expires modified $from_arg; }
        location /daily/ { expires @15h30m; }
        location /zero/ { expires 0; }
        location /epoch/ { expires epoch; }
        location /max/ { expires max; }
        location /off/ { expires off; add_header Cache-Control private; }
    }
"""

MTIME = 1_600_000_000  # Sep 13 2020, long before now


@pytest.fixture
def srv(make_server):
    s = make_server(harness.base_conf(CONF), start=False)
    www = s.prefix / "www"
    for d in ("typed", "arg", "modified", "modvar", "daily", "zero", "epoch", "max", "off"):
        (www / d).mkdir(parents=True)
        for name in ("a.css", "a.html", "a.png", "a.txt", "a.bin"):
            (www / d / name).write_text("x\n")
            os.utime(www / d / name, (MTIME, MTIME))
    s.start()
    return s


def get(srv, path):
    r = harness.http(srv.port, path)
    assert r.status == 200, r
    return r


def seconds_after_date(r):
    """Expires minus Date, in seconds."""
    return int((email.utils.parsedate_to_datetime(r.header("Expires")) -
                email.utils.parsedate_to_datetime(r.header("Date"))).total_seconds())


def test_expires_from_a_map_on_the_content_type(srv):
    r = get(srv, "/typed/a.css")
    assert r.header("Cache-Control") == "max-age=31536000"
    assert abs(seconds_after_date(r) - 31536000) <= 1
    r = get(srv, "/typed/a.html")
    assert r.header("Expires") == "Thu, 01 Jan 1970 00:00:01 GMT" and r.header("Cache-Control") == "no-cache"
    r = get(srv, "/typed/a.png")
    assert r.header("Expires") == "Thu, 31 Dec 2037 23:55:55 GMT"
    assert r.header("Cache-Control") == "max-age=315360000"
    r = get(srv, "/typed/a.txt")
    assert r.header("Cache-Control") == "no-cache" and abs(seconds_after_date(r) + 3600) <= 1
    r = get(srv, "/typed/a.bin")  # default: off
    assert r.header("Expires") is None and r.header("Cache-Control") is None


def test_variable_values_are_parsed_per_request(srv):
    r = get(srv, "/arg/a.bin?e=2h")
    assert r.header("Cache-Control") == "max-age=7200" and abs(seconds_after_date(r) - 7200) <= 1
    r = get(srv, "/arg/a.bin?e=-30m")
    assert r.header("Cache-Control") == "no-cache" and abs(seconds_after_date(r) + 1800) <= 1
    r = get(srv, "/arg/a.bin?e=max")
    assert r.header("Cache-Control") == "max-age=315360000"
    # Not a value nginx knows: the response is left alone, no error.
    r = get(srv, "/arg/a.bin?e=soon")
    assert r.header("Expires") is None and r.header("Cache-Control") is None
    r = get(srv, "/arg/a.bin")
    assert r.header("Expires") is None


def test_modified_counts_from_the_files_mtime(srv):
    r = get(srv, "/modified/a.bin")
    assert r.header("Expires") == email.utils.formatdate(MTIME + 10 * 86400, usegmt=True)
    assert r.header("Cache-Control") == "no-cache"  # that moment has passed
    r = get(srv, "/modvar/a.bin?e=100000d")
    assert r.header("Expires") == email.utils.formatdate(MTIME + 100000 * 86400, usegmt=True)
    assert r.header("Cache-Control") == f"max-age={MTIME + 100000 * 86400 - int(time.time())}" or \
        abs(int(r.header("Cache-Control").split("=")[1]) - (MTIME + 100000 * 86400 - int(time.time()))) <= 2
    # After "modified", epoch/max/off are not values.
    r = get(srv, "/modvar/a.bin?e=epoch")
    assert r.header("Expires") is None


def test_daily_time_is_the_next_1530(srv):
    r = get(srv, "/daily/a.bin")
    expires = email.utils.parsedate_to_datetime(r.header("Expires"))
    now = email.utils.parsedate_to_datetime(r.header("Date"))
    # The servers run with this process's time zone.
    local = time.localtime(expires.timestamp())
    assert (local.tm_hour, local.tm_min, local.tm_sec) == (15, 30, 0)
    ahead = (expires - now).total_seconds()
    assert 0 < ahead <= 86400 + 3600
    assert abs(int(r.header("Cache-Control").split("=")[1]) - ahead) <= 1


def test_zero_epoch_max_off(srv):
    r = get(srv, "/zero/a.bin")
    assert r.header("Cache-Control") == "max-age=0" and r.header("Expires") == r.header("Date")
    r = get(srv, "/epoch/a.bin")
    assert r.header("Cache-Control") == "no-cache"
    r = get(srv, "/max/a.bin")
    assert r.header("Expires") == "Thu, 31 Dec 2037 23:55:55 GMT"
    r = get(srv, "/off/a.bin")
    assert r.header("Expires") is None and r.header("Cache-Control") == "private"


@pytest.mark.parametrize("value,message", [
    ("modified @10h", 'daily time cannot be used with "modified" parameter'),
    ("@25h", "daily time value must be less than 24 hours"),
])
def test_refused_values(tmp_path, value, message):
    conf = tmp_path / "nginx.conf"
    conf.write_text(harness.base_conf(f"server {{ listen 127.0.0.1:1; expires {value}; }}")
                    .replace("@PREFIX@", str(tmp_path)))
    (tmp_path / "logs").mkdir()
    r = harness.cli(["-t", "-c", str(conf)], prefix=tmp_path)
    assert r.returncode != 0 and message in r.stdout + r.stderr
