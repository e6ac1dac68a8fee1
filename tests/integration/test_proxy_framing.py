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
from test_proxy import error_log_has, nginx_backend, proxy_conf, refused_port, upstreams  # noqa: F401 (fixtures)


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


# ---------------------------------------------------------------------------
# The request head that goes upstream.


def test_fields_named_in_connection_are_not_forwarded(make_server, upstreams):
    up = upstreams()
    srv = make_server(proxy_conf(f"""
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{ proxy_pass http://127.0.0.1:{up.port}; }}
    }}"""))
    resp = harness.http(srv.port, "/echo", headers=[("Connection", "keep-alive, X-Hop-Only"),
                                                     ("Connection", "x-other-hop"),
                                                     ("X-Hop-Only", "secret"), ("X-Other-Hop", "secret2"),
                                                     ("X-End-To-End", "kept")])
    sent = resp.body.decode("latin-1").lower()
    assert resp.status == 200 and "\r\nx-end-to-end: kept\r\n" in sent
    if not harness.IS_NGINX:  # nginx forwards them (it gets RFC 9110 7.6.1 wrong)
        assert "x-hop-only" not in sent and "x-other-hop" not in sent, sent


def test_empty_request_body_goes_with_content_length_zero(make_server, upstreams):
    up = upstreams()
    srv = make_server(two_port_conf(f"""
        location / {{ proxy_pass http://127.0.0.1:{up.port}; }}
        location /s/ {{ proxy_pass http://127.0.0.1:{up.port}/; proxy_http_version 1.1;
                       proxy_request_buffering off; }}"""), nports=2)

    def upstream_head(method, path="/echo", headers=(), body=None):
        resp = harness.http(srv.ports[0], path, method=method, headers=list(headers), body=body)
        assert resp.status == 200, resp
        return resp.body.decode("latin-1").split("\r\n\r\n")[0].lower().split("\r\n")

    for method in ("POST", "PUT"):
        assert "content-length: 0" in upstream_head(method, body=b"")
        assert "content-length: 0" in upstream_head(method, "/s/echo", body=b"")
        # An empty chunked body has a length too once it is read whole.
        assert "content-length: 0" in upstream_head(method, headers=[("Transfer-Encoding", "chunked")],
                                                    body=b"0\r\n\r\n")
    assert not any(l.startswith("content-length") for l in upstream_head("GET"))
    # HTTP/2: a POST whose HEADERS end the stream has an empty body.
    code, body, _ = h2_get(srv.ports[1], "/echo", "-X", "POST", "-d", "")
    assert code == 200 and b"\r\ncontent-length: 0\r\n" in body.lower(), body
    if not harness.IS_NGINX:
        # Without any framing field, POST still carries content (RFC 9110 8.6).
        assert "content-length: 0" in upstream_head("POST")


def test_upstream_error_lines_name_server_and_host_with_ports(make_server, refused_port, tmp_path):
    sock = tmp_path / "nobody.sock"
    srv = make_server(proxy_conf(f"""
    upstream app {{ server 127.0.0.1:{refused_port}; }}
    server {{
        listen 127.0.0.1:@PORT@;
        location /grp/ {{ proxy_pass http://app; }}
        location /unix/ {{ proxy_pass http://unix:{sock}; }}
    }}"""))
    assert harness.http(srv.port, "/grp/x", host=f"example.test:{srv.port}").status == 502
    error_log_has(srv, f'upstream: "http://127.0.0.1:{refused_port}/grp/x", host: "example.test:{srv.port}"')
    assert harness.http(srv.port, "/unix/y").status == 502
    error_log_has(srv, f'upstream: "http://unix:{sock}:/unix/y"')


# ---------------------------------------------------------------------------
# client_max_body_size for bodies whose length is not given.


def chunked_upload(port, path, total, chunk=64 * 1024):
    """Sends `total` bytes as a chunked body from a thread (the server may
    answer and stop reading at any point) and returns the response."""
    import threading
    c = harness.Conn(port, timeout=20)
    c.send(f"POST {path} HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n")

    def send_body():
        try:
            piece = b"%x\r\n" % chunk + b"b" * chunk + b"\r\n"
            for _ in range(total // chunk):
                c.sock.sendall(piece)
            c.sock.sendall(b"0\r\n\r\n")
        except OSError:
            pass  # the server answered and closed
    sender = threading.Thread(target=send_body, daemon=True)
    sender.start()
    try:
        return c.read_response()
    finally:
        c.close()
        sender.join(timeout=20)


def test_chunked_body_over_client_max_body_size_is_413(make_server, upstreams):
    up = upstreams()
    srv = make_server(two_port_conf(f"""
        client_max_body_size 1m;
        location / {{ proxy_pass http://127.0.0.1:{up.port}; proxy_http_version 1.1; }}
        location /s/ {{ proxy_pass http://127.0.0.1:{up.port}/; proxy_http_version 1.1;
                       proxy_request_buffering off; }}"""), nports=2)
    # Within the limit it goes through.
    resp = chunked_upload(srv.ports[0], "/echo", 512 * 1024)
    assert resp.status == 200 and resp.body.endswith(b"b" * 1000)
    up.requests.clear()
    # Buffered (the default): 413 before the upstream is contacted at all.
    for total in (4 * 1024 * 1024, 16 * 1024 * 1024):
        resp = chunked_upload(srv.ports[0], "/echo", total)
        assert resp.status == 413, resp
    error_log_has(srv, "client intended to send too large chunked body")
    assert up.requests == []
    # Streamed: the limit cuts the body off all the same.
    resp = chunked_upload(srv.ports[0], "/s/echo", 4 * 1024 * 1024)
    assert resp.status == 413, resp
    # HTTP/2 without content-length (curl uploads stdin of unknown size).
    for path in ("/echo", "/s/echo"):
        out = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "--max-time", "20", "-o", "/dev/null",
                              "-w", "%{http_code}", "-T", "-", f"http://127.0.0.1:{srv.ports[1]}{path}"],
                             input=b"h" * (4 * 1024 * 1024), capture_output=True, timeout=30)
        # nginx resets the stream along with its 413, so curl reads no status there.
        if not harness.IS_NGINX:
            assert out.stdout == b"413", (path, out.stdout, out.stderr)
        harness.wait_until(lambda: f'"PUT {path} HTTP/2.0" 413 ' in srv.access_log.read_text(), 5,
                           what=f"413 for {path} in the access log")
    assert all(b"hhhh" not in r for r in up.requests)
