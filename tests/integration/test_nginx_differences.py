"""Behaviour where the same requests once got different answers from torii
and from nginx: TRACE is refused with 405 before any handler (proxied
locations and limit_except included), the 405 page and status line read
"Not Allowed", and proxy_redirect's default rewrite (absolute Location on
the client's host, the upstream's address never leaked)."""

import subprocess

import harness
from test_proxy import error_log_has, proxy_conf, upstreams  # noqa: F401 (fixtures)


def one_port_conf(locations):
    return proxy_conf(f"""
    server {{
        listen 127.0.0.1:@PORT0@;
        listen 127.0.0.1:@PORT1@ http2;
        root @PREFIX@/html;
        {locations}
    }}""")


def seen_by(up, what):
    return [r for r in up.requests if what in r]


def make_html(srv):
    html = srv.prefix / "html"
    html.mkdir(exist_ok=True)
    (html / "index.html").write_text("hello\n")


# ---------------------------------------------------------------------------
# TRACE


def test_trace_to_proxied_location_is_405_and_never_reaches_upstream(make_server, upstreams):
    up = upstreams()
    srv = make_server(one_port_conf(f"location / {{ proxy_pass http://127.0.0.1:{up.port}; }}"), nports=2)
    with harness.Conn(srv.ports[0]) as c:
        r = c.request("TRACE", "/traced", host="localhost")
        assert r.status == 405 and r.reason == "Not Allowed", (r.status, r.reason)
        assert b"<title>405 Not Allowed</title>" in r.body
        # nginx settles keep-alive only after refusing TRACE: the connection ends.
        assert r.header("Connection") == "close"
        assert c.closed_within(5)
    out = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-X", "TRACE", "-o", "/dev/null",
                          "-w", "%{http_code} %{http_version}", f"http://127.0.0.1:{srv.ports[1]}/traced2"],
                         capture_output=True, timeout=15).stdout.decode()
    assert out == "405 2", out
    assert not seen_by(up, b"TRACE"), up.requests
    error_log_has(srv, "client sent TRACE method")


def test_trace_under_limit_except_is_405_not_403(make_server):
    srv = make_server(one_port_conf("location / { limit_except GET { deny all; } }"), nports=2, start=False)
    make_html(srv)
    srv.start()
    r = harness.http(srv.port, "/index.html", method="TRACE")
    assert r.status == 405, r.status
    # What limit_except itself refuses still gets its 403.
    r = harness.http(srv.port, "/index.html", method="DELETE")
    assert r.status == 403, r.status
    r = harness.http(srv.port, "/index.html")
    assert r.status == 200 and r.body == b"hello\n"


# ---------------------------------------------------------------------------
# The 405 page


def test_405_page_and_status_line_read_not_allowed(make_server):
    srv = make_server(one_port_conf(""), nports=2, start=False)
    make_html(srv)
    srv.start()
    r = harness.http(srv.port, "/index.html", method="POST", body="x")
    assert r.status == 405 and r.reason == "Not Allowed", (r.status, r.reason)
    assert b"<title>405 Not Allowed</title>" in r.body and b"<h1>405 Not Allowed</h1>" in r.body
    assert b"Method" not in r.body


# ---------------------------------------------------------------------------
# proxy_redirect default


def test_redirect_default_with_uri_is_absolute_on_client_host(make_server, upstreams):
    up = upstreams()
    srv = make_server(one_port_conf(f"location /x/ {{ proxy_pass http://127.0.0.1:{up.port}/u/; }}"), nports=2)
    r = harness.http(srv.port, "/x/goto", host="front.example")
    assert r.status == 302
    assert r.header("Location") == f"http://front.example:{srv.port}/x/went", r.header("Location")
    # A Location the upstream sent relative is not proxy_redirect's to touch.
    r = harness.http(srv.port, "/x/relgoto", host="front.example")
    assert r.header("Location") == "/elsewhere", r.header("Location")


def test_redirect_default_without_uri_hides_upstream_address(make_server, upstreams):
    up = upstreams()
    srv = make_server(one_port_conf(f"location /x {{ proxy_pass http://127.0.0.1:{up.port}; }}"), nports=2)
    r = harness.http(srv.port, "/x/goto", host="front.example")
    assert r.status == 302
    assert r.header("Location") == f"http://front.example:{srv.port}/x/went", r.header("Location")
    # Outside the location too: the upstream's root becomes "/".
    r = harness.http(srv.port, "/x/gotoroot", host="front.example")
    assert r.header("Location") == f"http://front.example:{srv.port}/root", r.header("Location")


def test_redirect_rule_to_a_path_is_absolute_too(make_server, upstreams):
    up = upstreams()
    srv = make_server(one_port_conf(f"""location /x {{ proxy_pass http://127.0.0.1:{up.port};
                          proxy_redirect http://127.0.0.1:{up.port}/x/ /y/; }}"""), nports=2)
    r = harness.http(srv.port, "/x/goto", host="front.example")
    assert r.header("Location") == f"http://front.example:{srv.port}/y/went", r.header("Location")
