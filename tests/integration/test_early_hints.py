"""early_hints (nginx 1.29): an upstream's 103 Early Hints goes on to the
client, ahead of the final response, when one of the location's
conditions is non-empty and not "0"; without the directive the 103 is
dropped. HTTP/1.1 over raw sockets, HTTP/2 with nghttp. All skip on nginx
1.22, which lacks the directive and takes an upstream's 103 for the final
response."""

import shutil

import pytest

import harness
import nghttp_client
from scripted_upstream import replying

HINTS = b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\nX-Accel-Expires: 5\r\n\r\n"
FINAL = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\nConnection: close\r\n\r\nfinal\n"


@pytest.fixture
def upstream():
    """Answers each request with a 103 (Link, and a hidden X-Accel field),
    then a 200, each written on its own."""
    u = replying(lambda _request: [HINTS, FINAL])
    yield u
    u.close()


@pytest.fixture
def newer_than_122():
    harness.skip_if_nginx_older((1, 29), "early_hints came in nginx 1.29")


def site(make_server, upstream, directive):
    conf = harness.base_conf(http=f"""
    map $server_protocol $hint {{ HTTP/2.0 1; default 0; }}
    server {{
        listen 127.0.0.1:@PORT@;
        listen 127.0.0.1:@PORT1@ http2;
        location / {{
            {directive}
            proxy_pass http://127.0.0.1:{upstream.port};
        }}
    }}
""")
    return make_server(conf, nports=2)


def h1_raw(port, version="HTTP/1.1"):
    return harness.raw_until_close(port, f"GET /page {version}\r\nHost: localhost\r\nConnection: close\r\n\r\n")


def test_dropped_without_the_directive(make_server, upstream, newer_than_122):
    # nginx 1.22 knows no 1xx from an upstream: it answers with the 103 as
    # the final response and the 200 as its body.
    s = site(make_server, upstream, "")
    raw = h1_raw(s.port)
    assert raw.startswith(b"HTTP/1.1 200 OK"), raw
    assert raw.endswith(b"final\n")


def test_passed_over_http1_with_a_true_condition(make_server, upstream, newer_than_122):
    s = site(make_server, upstream, "early_hints 1;")
    raw = h1_raw(s.port)
    hints, _, rest = raw.partition(b"\r\n\r\n")
    assert hints.startswith(b"HTTP/1.1 103 Early Hints\r\n"), raw
    assert b"\r\nLink: </style.css>; rel=preload" in hints
    assert b"X-Accel-Expires" not in hints  # hidden, as in the final head
    assert rest.startswith(b"HTTP/1.1 200 OK") and rest.endswith(b"final\n"), raw


def test_not_to_http10_clients(make_server, upstream, newer_than_122):
    s = site(make_server, upstream, "early_hints 1;")
    raw = h1_raw(s.port, "HTTP/1.0")
    assert raw.startswith(b"HTTP/1.1 200 OK"), raw


def test_false_conditions_drop_it(make_server, upstream, newer_than_122):
    s = site(make_server, upstream, 'early_hints 0 "";')
    raw = h1_raw(s.port)
    assert raw.startswith(b"HTTP/1.1 200 OK"), raw


@pytest.mark.skipif(shutil.which("nghttp") is None, reason="nghttp not installed")
def test_http2_only_condition(make_server, upstream, newer_than_122):
    # A map, as nginx's docs suggest `early_hints $http2`: over HTTP/2 only.
    s = site(make_server, upstream, "early_hints $hint;")
    assert h1_raw(s.port).startswith(b"HTTP/1.1 200 OK")
    blocks = nghttp_client.header_blocks(nghttp_client.verbose(f"http://127.0.0.1:{s.ports[1]}/page"))
    assert len(blocks) == 2, blocks
    assert blocks[0] == [":status: 103", "link: </style.css>; rel=preload"], blocks
    assert blocks[1][0] == ":status: 200", blocks
