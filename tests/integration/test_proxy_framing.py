"""Message framing through the proxy, with real clients: responses with an
empty body (Content-Length: 0), request bodies without a length against
client_max_body_size, the request head that goes upstream (Connection-named
fields, Content-Length: 0 for an empty body) and the upstream named in
error lines."""

import socket
import subprocess
import time

import pytest

import harness
from test_proxy import error_log_has, nginx_backend, proxy_conf, upstreams  # noqa: F401 (fixtures)


def h2_get(port, path, *args, timeout=10):
    """curl over h2c with prior knowledge: (status, body, seconds taken)."""
    started = time.monotonic()
    out = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "--max-time", str(timeout), "-o", "-",
                          "-w", "\n%{http_code} %{http_version}", *args, f"http://127.0.0.1:{port}{path}"],
                         capture_output=True, timeout=timeout + 5).stdout
    body, _, tail = out.rpartition(b"\n")
    code, version = tail.decode().split()
    assert version == "2", version
    return int(code), body, time.monotonic() - started


def two_port_conf(locations, http=""):
    """One server on an HTTP/1.1 port (@PORT0@) and an h2c port (@PORT1@),
    as nginx 1.22 can do it (`listen ... http2`)."""
    return proxy_conf(f"""
    {http}
    server {{
        listen 127.0.0.1:@PORT0@;
        listen 127.0.0.1:@PORT1@ http2;
        {locations}
    }}""")


# ---------------------------------------------------------------------------
# Defect: a proxied response with Content-Length: 0 never ended.


@pytest.mark.parametrize("status", [200, 201, 302, 404])
def test_empty_body_response_ends_over_http1_and_pipelines(make_server, upstreams, status):
    up = upstreams()
    srv = make_server(two_port_conf(f"""
        location / {{ proxy_pass http://127.0.0.1:{up.port}; proxy_http_version 1.1;
                      proxy_set_header Connection ""; proxy_read_timeout 30s; }}"""), nports=2)
    with harness.Conn(srv.ports[0], timeout=5) as c:
        # Two requests in one write: the second is answered only if the first ended.
        c.send(harness.build_request("GET", f"/empty/{status}") + harness.build_request("GET", "/name"))
        first = c.read_response()
        assert first.status == status and first.header("Content-Length") == "0" and first.body == b""
        second = c.read_response()
        assert second.status == 200 and second.body == b"bad"


def test_empty_body_response_ends_over_http2(make_server, upstreams):
    up = upstreams()
    srv = make_server(two_port_conf(f"""
        location / {{ proxy_pass http://127.0.0.1:{up.port}; proxy_read_timeout 30s; }}"""), nports=2)
    for status in (200, 201, 302, 404):
        code, body, took = h2_get(srv.ports[1], f"/empty/{status}", timeout=5)
        assert (code, body) == (status, b"") and took < 4, (status, took)
    # nghttp reports the stream's end (END_STREAM) as it sees it.
    out = subprocess.run(["nghttp", "-v", "-t", "5", f"http://127.0.0.1:{srv.ports[1]}/empty/200"],
                         capture_output=True, timeout=15)
    text = out.stdout.decode(errors="replace")
    assert out.returncode == 0 and "END_STREAM" in text and ":status: 200" in text, text[-2000:]


def test_empty_body_from_nginx_backend(make_server, nginx_backend):
    port = nginx_backend('location = /empty { return 200 ""; } location = /made { return 201 ""; }')
    srv = make_server(two_port_conf(f"""
        location / {{ proxy_pass http://127.0.0.1:{port}; proxy_read_timeout 30s; }}"""), nports=2)
    with harness.Conn(srv.ports[0], timeout=5) as c:
        c.send(harness.build_request("GET", "/empty") + harness.build_request("GET", "/made"))
        assert c.read_response().status == 200
        assert c.read_response().status == 201
    code, body, _ = h2_get(srv.ports[1], "/empty", timeout=5)
    assert (code, body) == (200, b"")
