"""$request_body and $request_body_file (ngx_http_core_module): the body a
location that proxies read whole into memory, for access logs, add_header
and proxy_set_body; nothing when the body went to a file (or, passed on
unbuffered, did not fit client_body_buffer_size); the file's name under
client_body_in_file_only. Every test
also runs against Debian's nginx."""

import os
import re

import pytest

import harness
from echo_backend import AppBackend
from harness import http


@pytest.fixture
def backend():
    b = AppBackend(lambda req: (200, [("Content-Type", "text/plain")],
                                b"backend got [" + req.body + b"]"))
    yield b
    b.stop()


CONF = r"""
    log_format bodies '$request_uri body=$request_body file=$request_body_file';
    server {
        listen 127.0.0.1:@PORT@;
        access_log @PREFIX@/logs/bodies.log bodies;
        client_body_buffer_size 16k;
        location /p/ {
            proxy_pass http://127.0.0.1:@BACKEND@;
            add_header X-Body $request_body;
        }
        location /set/ {
            proxy_pass http://127.0.0.1:@BACKEND@;
            proxy_set_body "$request_body&added=1";
        }
        location /stream/ {
            proxy_pass http://127.0.0.1:@BACKEND@;
            proxy_request_buffering off;
            add_header X-Body $request_body;
        }
        location /file/ {
            proxy_pass http://127.0.0.1:@BACKEND@;
            client_body_in_file_only on;
            client_body_temp_path @PREFIX@/bodies;
        }
        location /ret/ { return 200 "[$request_body]"; }
    }
"""


@pytest.fixture
def srv(make_server, backend):
    return make_server(harness.base_conf(CONF.replace("@BACKEND@", str(backend.port))), name="srv")


def log_lines(srv):
    return (srv.prefix / "logs" / "bodies.log").read_text().splitlines()


def wait_log(srv, count):
    harness.wait_until(lambda: len(log_lines(srv)) >= count, 10, what="access log lines")
    return log_lines(srv)


def test_a_buffered_body_is_the_variable(srv):
    r = http(srv.port, "/p/a", method="POST", body=b"name=ann&x=1")
    assert r.status == 200 and r.body == b"backend got [name=ann&x=1]"
    assert r.header("X-Body") == "name=ann&x=1"
    assert wait_log(srv, 1)[-1] == "/p/a body=name=ann&x=1 file=-"


def test_log_escapes_the_body(srv):
    http(srv.port, "/p/q", method="POST", body=b'{"k": "v"}\n')
    assert wait_log(srv, 1)[-1] == r'/p/q body={\x22k\x22: \x22v\x22}\x0A file=-'


def test_a_body_past_the_memory_buffer_is_not_found(srv):
    big = b"x" * (64 * 1024)
    r = http(srv.port, "/p/big", method="POST", body=big)
    assert r.status == 200 and r.body == b"backend got [" + big + b"]"
    assert r.header("X-Body") is None
    # (nginx names the temporary file of any body; torii's has no name
    # unless client_body_in_file_only asks for one.)
    assert wait_log(srv, 1)[-1].startswith("/p/big body=- file=")


def test_an_unbuffered_body_is_found_while_it_fits_the_buffer(srv):
    r = http(srv.port, "/stream/s", method="POST", body=b"streamed")
    assert r.body == b"backend got [streamed]"
    assert r.header("X-Body") == "streamed"
    big = b"y" * (64 * 1024)
    r = http(srv.port, "/stream/big", method="POST", body=big)
    assert r.body == b"backend got [" + big + b"]"
    assert r.header("X-Body") is None


def test_proxy_set_body_reads_it(srv):
    r = http(srv.port, "/set/s", method="POST", body=b"a=1")
    assert r.body == b"backend got [a=1&added=1]"
    r = http(srv.port, "/set/s")  # no body: the variable is empty
    assert r.body == b"backend got [&added=1]"


def test_a_location_that_reads_no_body_has_none(srv):
    r = http(srv.port, "/ret/x", method="POST", body=b"unread")
    assert r.status == 200 and r.body == b"[]"


def test_the_file_of_client_body_in_file_only(srv):
    r = http(srv.port, "/file/f", method="POST", body=b"kept in a file")
    assert r.body == b"backend got [kept in a file]"
    line = wait_log(srv, 1)[-1]
    m = re.fullmatch(r"/file/f body=- file=(\S+)", line)
    assert m, line
    path = m.group(1)
    assert path.startswith(str(srv.prefix / "bodies") + "/")
    with open(path, "rb") as f:  # `on` keeps the file
        assert f.read() == b"kept in a file"
    os.unlink(path)
