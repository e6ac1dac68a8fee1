"""post_action: once the client's response has ended, the request goes on
at a URI or named location whose response is thrown away (download
accounting). The client's response and connection are not touched; the
post action sees the client's variables ($status, $body_bytes_sent,
$request_uri). Passes with TORII_BIN=/usr/sbin/nginx."""

import subprocess

import pytest

import harness

BODY = b"0123456789" * 1000


def conf(post_action):
    return harness.base_conf(error_level="info", http=f"""
    log_format acct "$request_uri|$http_x_status|$http_x_bytes|$http_x_orig";
    server {{
        listen 127.0.0.1:@PORT@;
        listen 127.0.0.1:@PORT2@ http2;
        server_name localhost;
        root @PREFIX@/www;
        location /files/ {{ post_action {post_action}; }}
        location /plain/ {{ }}
        location @count {{
            proxy_set_header X-Status $status;
            proxy_set_header X-Bytes $body_bytes_sent;
            proxy_set_header X-Orig $request_uri;
            proxy_pass http://127.0.0.1:@PORT1@;
        }}
        location /count-uri {{
            proxy_set_header X-Status $status;
            proxy_set_header X-Bytes $body_bytes_sent;
            proxy_set_header X-Orig $request_uri;
            proxy_pass http://127.0.0.1:@PORT1@;
        }}
    }}
    server {{
        listen 127.0.0.1:@PORT1@;
        location / {{
            access_log @PREFIX@/logs/acct.log acct;
            return 200 "SECRET from the accounting\\n";
        }}
    }}
""")


@pytest.fixture(params=["@count", "/count-uri"])
def srv(request, make_server):
    s = make_server(conf(request.param), nports=3, start=False)
    (s.prefix / "www" / "files").mkdir(parents=True)
    (s.prefix / "www" / "plain").mkdir(parents=True)
    (s.prefix / "www" / "files" / "a.bin").write_bytes(BODY)
    (s.prefix / "www" / "plain" / "a.bin").write_bytes(BODY)
    s.start()
    s.sent_to = request.param  # what the accounting upstream sees as its URI
    return s


def upstream_uri(s, client_uri):
    """A named location proxies the client's URI; a URI target is an
    internal redirect without arguments."""
    return client_uri if s.sent_to.startswith("@") else s.sent_to


def acct_lines(s):
    p = s.prefix / "logs" / "acct.log"
    return p.read_text().splitlines() if p.exists() else []


def test_post_action_runs_after_the_response_with_its_variables(srv):
    with harness.Conn(srv.port) as c:
        r = c.request("GET", "/files/a.bin?x=1")
        assert r.status == 200 and r.body == BODY
        # The connection goes on untouched: nothing of the post action's answer on it.
        r2 = c.request("GET", "/plain/a.bin")
        assert r2.status == 200 and r2.body == BODY
        assert b"SECRET" not in c.buf
    lines = harness.wait_until(lambda: acct_lines(srv), 10, what="the accounting request")
    assert lines == [f"{upstream_uri(srv, '/files/a.bin?x=1')}|200|{len(BODY)}|/files/a.bin?x=1"], lines


def test_post_action_over_http2(srv):
    out = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-o", "-", "-w", "|%{http_code}",
                          f"http://127.0.0.1:{srv.ports[2]}/files/a.bin"], capture_output=True, timeout=20).stdout
    assert out == BODY + b"|200"
    lines = harness.wait_until(lambda: acct_lines(srv), 10, what="the accounting request")
    assert lines == [f"{upstream_uri(srv, '/files/a.bin')}|200|{len(BODY)}|/files/a.bin"], lines


def test_post_action_after_an_error_response(srv):
    r = harness.http(srv.port, "/files/missing.bin")
    assert r.status == 404
    lines = harness.wait_until(lambda: acct_lines(srv), 10, what="the accounting request")
    assert len(lines) == 1 and lines[0].startswith(f"{upstream_uri(srv, '/files/missing.bin')}|404|"), lines


def test_no_post_action_elsewhere(srv):
    r = harness.http(srv.port, "/plain/a.bin")
    assert r.status == 200 and r.body == BODY
    # A request that has one, made after, is the only one counted.
    r = harness.http(srv.port, "/files/a.bin")
    assert r.status == 200
    lines = harness.wait_until(lambda: acct_lines(srv), 10, what="the accounting request")
    assert len(lines) == 1 and lines[0].endswith("|/files/a.bin"), lines
