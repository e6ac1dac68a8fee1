"""The upstream's reason phrase, as nginx: an HTTP/1.1 client gets the
status line's words as the upstream wrote them (a custom code's own name,
an application's wording), unless the status itself changes on the way
(error_page), when the standard phrase goes with the new status. Every
expectation is nginx's: the file passes with TORII_BIN=/usr/sbin/nginx."""

import pytest

import harness
from scripted_upstream import replying

LINES = {
    "/custom": b"HTTP/1.1 404 Custom Reason Phrase",
    "/unknown": b"HTTP/1.1 499 Client Closed Request",
    "/ok": b"HTTP/1.1 200 Fine By Me",
    "/paged": b"HTTP/1.1 404 Nothing Here",
}


def answer(request):
    target = request.split(b" ", 2)[1].decode()
    line = LINES.get(target, b"HTTP/1.1 200 OK")
    return line + b"\r\nContent-Length: 3\r\nConnection: close\r\n\r\nup\n"


@pytest.fixture
def site(make_server):
    u = replying(answer)
    s = make_server(harness.base_conf(http=f"""
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{ proxy_pass http://127.0.0.1:{u.port}; }}
        location = /paged {{
            proxy_pass http://127.0.0.1:{u.port};
            proxy_intercept_errors on;
            error_page 404 =200 /page;
        }}
        location = /page {{ return 200 "page\\n"; }}
    }}
"""))
    yield s
    u.close()


@pytest.mark.parametrize("path", ["/custom", "/unknown", "/ok"])
def test_the_upstreams_words_are_relayed(site, path):
    r = harness.http(site.port, path)
    code, reason = LINES[path].decode().split(" ", 2)[1:]
    assert (r.status, r.reason, r.body) == (int(code), reason, b"up\n"), r


def test_a_status_changed_on_the_way_has_its_own_phrase(site):
    r = harness.http(site.port, "/paged")
    assert (r.status, r.reason, r.body) == (200, "OK", b"page\n"), r
