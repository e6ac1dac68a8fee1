"""proxy_set_body (the body sent upstream replaced by a string with
variables, Content-Length its length, the client's body dropped),
uwsgi_string (bytes appended to the uwsgi vars, counted in the packet's
size) and proxy_force_ranges / scgi_force_ranges (one byte range cut from
an upstream's 200 that says nothing of ranges). The same tests pass
against nginx (TORII_BIN=/usr/sbin/nginx)."""

import json

import pytest

import harness
from scripted_upstream import length_complete, replying

BODY = bytes(range(256)) * 40  # 10240 bytes


def echo_http(data):
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    fields = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        fields[k.strip().lower()] = v.strip()
    out = json.dumps({"line": lines[0], "fields": fields, "body": rest.decode("latin-1")}).encode()
    return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(out), out)


def uwsgi_complete(data):
    return len(data) >= 4 and len(data) >= 4 + (data[1] | data[2] << 8)


def uwsgi_tail(data):
    """The packet's last bytes and the size the header announced."""
    size = data[1] | data[2] << 8
    out = json.dumps({"size": size, "total": len(data), "tail": data[4 + size - 12:4 + size].decode("latin-1")}).encode()
    return b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + out


def whole_file(_data):
    return (b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nETag: \"v1\"\r\nConnection: close\r\n\r\n" % len(BODY)) + BODY


@pytest.fixture(scope="module")
def ups():
    made = [replying(echo_http, length_complete, timeout=10), replying(uwsgi_tail, uwsgi_complete, timeout=10),
            replying(whole_file, length_complete, timeout=10)]
    yield made
    for u in made:
        u.close()


@pytest.fixture(scope="module")
def srv(tmp_path_factory, ups):
    echo, uw, files = ups
    conf = f"""
    proxy_set_body "from $request_method $arg_a";
    server {{
        listen 127.0.0.1:@PORT@;
        location /inherited {{ proxy_pass http://127.0.0.1:{echo.port}; }}
        location /own {{
            proxy_pass http://127.0.0.1:{echo.port};
            proxy_set_body "";
        }}
        location /uwsgi {{
            uwsgi_pass 127.0.0.1:{uw.port};
            uwsgi_param X 1;
            uwsgi_string "<extra-bytes>";
        }}
        location /forced {{
            proxy_pass http://127.0.0.1:{files.port};
            proxy_force_ranges on;
        }}
        location /plain {{
            proxy_pass http://127.0.0.1:{files.port};
        }}
    }}"""
    prefix = tmp_path_factory.mktemp("upreq")
    server = harness.Server(harness.base_conf(conf), prefix)
    server.start()
    yield server
    server.stop()


def test_set_body_replaces_the_clients(srv):
    r = harness.http(srv.port, "/inherited?a=42", method="POST", body=b"client's own body",
                     headers={"Content-Type": "text/plain"})
    assert r.status == 200
    got = json.loads(r.body)
    assert got["body"] == "from POST 42"
    assert got["fields"]["content-length"] == str(len("from POST 42"))
    assert "transfer-encoding" not in got["fields"]


def test_set_body_on_a_get(srv):
    got = json.loads(harness.http(srv.port, "/inherited?a=x").body)
    assert got["body"] == "from GET x"
    assert got["fields"]["content-length"] == "10"


def test_uwsgi_string_is_in_the_packet(srv):
    r = harness.http(srv.port, "/uwsgi")
    assert r.status == 200
    got = json.loads(r.body)
    assert got["tail"] == "extra-bytes>"
    assert got["total"] == 4 + got["size"]


def test_force_ranges_cuts_one_range(srv):
    r = harness.http(srv.port, "/forced", headers={"Range": "bytes=100-199"})
    assert r.status == 206
    assert r.body == BODY[100:200]
    assert r.header("Content-Range") == f"bytes 100-199/{len(BODY)}"
    r = harness.http(srv.port, "/forced")
    assert r.status == 200 and r.body == BODY
    assert r.header("Accept-Ranges") == "bytes"


def test_force_ranges_unsatisfiable(srv):
    r = harness.http(srv.port, "/forced", headers={"Range": f"bytes={len(BODY) + 10}-"})
    assert r.status == 416
    assert r.header("Content-Range") == f"bytes */{len(BODY)}"


def test_without_force_ranges_the_whole_response(srv):
    r = harness.http(srv.port, "/plain", headers={"Range": "bytes=100-199"})
    assert r.status == 200 and r.body == BODY
    assert r.header("Accept-Ranges") is None
