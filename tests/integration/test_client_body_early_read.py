"""client_body_early_read COND... (nginx 1.31, http and server): when a
condition is non-empty and not "0", the request body is read whole right
after the head, before a location is chosen, under the server's body
settings: the server's client_max_body_size refuses a body the location
would take, and the upstream is asked only once the body is in, even with
proxy_request_buffering off. Otherwise the body is read as the location
says. A BadUpstream's /echo shows what reached it. Over HTTP/1.1, HTTP/2
(curl) and HTTP/3 (h3raw). Skipped against nginx 1.22, which lacks the
directive."""

import shutil
import socket
import subprocess
import time

import pytest

import h3raw
import harness
from bad_upstream import BadUpstream
from test_http3 import cert, h3_conf  # noqa: F401 (cert is a fixture)

BODY = b"0123456789" * 100  # 1000 bytes: past the server's 100, under the location's 1m


@pytest.fixture
def newer_than_122():
    harness.skip_if_nginx_older((1, 31), "client_body_early_read came in nginx 1.31")


@pytest.fixture
def upstream():
    u = BadUpstream("early")
    yield u
    u.stop()


def site(make_server, upstream, location_extra=""):
    return make_server(harness.base_conf(http=f"""
    map $http_x_early $early {{ yes 1; default 0; }}
    server {{
        listen 127.0.0.1:@PORT@;
        client_body_early_read $early;
        client_max_body_size 100;
        location / {{
            client_max_body_size 1m;
            {location_extra}
            proxy_pass http://127.0.0.1:{upstream.port};
        }}
    }}""", error_level="info"))


def chunked(body, piece=300):
    out = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + piece]), body[i:i + piece]) for i in range(0, len(body), piece))
    return out + b"0\r\n\r\n"


def post(port, headers, body):
    data = harness.build_request("POST", "/echo", headers=headers, body=body)
    return harness.http_raw(port, data, wait_close=None)[0]


def test_server_limit_refuses_a_length_the_location_takes(make_server, upstream, newer_than_122):
    s = site(make_server, upstream)
    r = post(s.port, {"X-Early": "yes"}, BODY)
    assert r.status == 413
    assert upstream.requests == []
    harness.wait_until(lambda: "client intended to send too large body: 1000 bytes" in s.error_log_text(), 5,
                       what="the error line")
    r = post(s.port, {"X-Early": "no"}, BODY)  # the condition is "0": the location's limit
    assert r.status == 200 and r.body.endswith(b"\r\n\r\n" + BODY)


def test_server_limit_judges_a_chunked_body_as_it_comes(make_server, upstream, newer_than_122):
    s = site(make_server, upstream)
    r = post(s.port, {"X-Early": "yes", "Transfer-Encoding": "chunked"}, chunked(BODY))
    assert r.status == 413
    assert upstream.requests == []
    r = post(s.port, {"Transfer-Encoding": "chunked"}, chunked(BODY))
    assert r.status == 200 and BODY in r.body


def test_body_within_the_limit_reaches_the_upstream(make_server, upstream, newer_than_122):
    s = site(make_server, upstream)
    small = b"early body"
    r = post(s.port, {"X-Early": "yes"}, small)
    assert r.status == 200 and r.body.endswith(b"\r\n\r\n" + small)
    # A chunked body, read whole, goes upstream with its length.
    r = post(s.port, {"X-Early": "yes", "Transfer-Encoding": "chunked"}, chunked(small, 4))
    assert r.status == 200
    head, _, sent = r.body.partition(b"\r\n\r\n")
    assert sent == small, r.body
    assert b"\r\nContent-Length: 10" in head and b"chunked" not in head.lower(), head


def post_in_two_halves(port, headers, body, between):
    """Sends the head and half the body, waits a second, calls between(),
    then sends the rest: the response, read until the server closes."""
    data = harness.build_request("POST", "/echo", headers=headers, body=body)
    cut = len(data) - len(body) // 2
    with socket.create_connection(("127.0.0.1", port), timeout=10) as c:
        c.sendall(data[:cut])
        time.sleep(1.0)
        between()
        c.sendall(data[cut:])
        out = b""
        while True:
            chunk = c.recv(65536)
            if not chunk:
                return out
            out += chunk


@pytest.mark.parametrize("early", ["yes", "no"])
def test_upstream_asked_only_once_the_body_is_in(make_server, upstream, newer_than_122, early):
    # proxy_request_buffering off: without the early read the request goes
    # upstream as soon as its head is in, the body following.
    s = site(make_server, upstream, "proxy_request_buffering off; proxy_http_version 1.1;")
    small = b"abcdefghij" * 5
    seen = []
    out = post_in_two_halves(s.port, {"X-Early": early, "Connection": "close"}, small,
                             lambda: seen.append(upstream.connections))
    assert out.startswith(b"HTTP/1.1 200"), out
    assert out.endswith(small)
    assert seen == [0 if early == "yes" else 1]


def test_not_allowed_in_a_location(make_server, newer_than_122):
    s = make_server(harness.base_conf(http="server { location / { client_body_early_read 1; } }"), start=False)
    s.ports = [0]
    s.write_conf()
    out = harness.cli(["-t", "-c", str(s.conf_path)], prefix=s.prefix)
    assert out.returncode != 0
    assert '"client_body_early_read" directive is not allowed here' in out.stdout + out.stderr


def by_header(upstream):
    """A server's lines: the body read early when X-Early is non-empty and
    not "0", under the server's limit of 100 bytes; the location's is 1m."""
    return f"""
        client_body_early_read $http_x_early;
        client_max_body_size 100;
        location / {{
            client_max_body_size 1m;
            proxy_pass http://127.0.0.1:{upstream.port};
        }}"""


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl not installed")
def test_over_http2(make_server, upstream, newer_than_122):
    s = make_server(harness.base_conf(http=f"server {{ listen 127.0.0.1:@PORT@ http2; {by_header(upstream)} }}"))

    def curl(body, early):
        out = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-o", "-", "-w", "\n%{http_code}",
                              "-H", f"X-Early: {early}", "--data-binary", "@-", f"http://127.0.0.1:{s.port}/echo"],
                             input=body, capture_output=True, timeout=20).stdout
        got, _, code = out.rpartition(b"\n")
        return int(code), got

    assert curl(BODY, "1")[0] == 413
    code, got = curl(BODY, "0")
    assert code == 200 and got.endswith(b"\r\n\r\n" + BODY)
    code, got = curl(b"early body", "1")
    assert code == 200 and got.endswith(b"\r\n\r\nearly body"), got
    assert b"\r\nContent-Length: 10\r\n" in got


@pytest.mark.skipif(not h3raw.AVAILABLE, reason="h3raw not built")
def test_over_http3(make_server, upstream, cert, newer_than_122):
    if harness.IS_NGINX:
        pytest.skip("Debian's nginx has no HTTP/3")
    s = make_server(h3_conf(cert, extra_server=by_header(upstream)))

    def post(body, early):
        sent = h3raw.request("/echo", method="POST", extra=[("content-length", str(len(body))), ("x-early", early)])
        lines = h3raw.run(s.port, [f"uni {h3raw.hx(h3raw.control_stream())}",
                                   f"bidi {h3raw.hx(sent + h3raw.frame(h3raw.DATA, body))} fin", "until 5000 fin 0"])
        # "fin 0 LENGTH HEX": the body's length and its first 256 bytes.
        _, _, length, *start = next(line for line in lines if line.startswith("fin 0 ")).split()
        return h3raw.status(lines, 0), int(length), bytes.fromhex(start[0] if start else "")

    assert post(BODY, "1")[0] == 413
    status, length, got = post(BODY, "0")
    assert status == 200 and b"\r\nContent-Length: 1000\r\n" in got, got
    assert length == got.index(b"\r\n\r\n") + 4 + len(BODY)
    status, length, got = post(b"early body", "1")
    assert status == 200 and got.endswith(b"\r\n\r\nearly body") and length == len(got), got
