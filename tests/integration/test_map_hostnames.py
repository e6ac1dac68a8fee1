"""map with `hostnames` in http: nginx's wildcard keys (*.example.com,
.example.com, www.example.*), the longest one winning, exact keys before
them and regexes after; keys compared without case or a trailing dot.
The table is shared with stream's map (config/map_table.h)."""

import pytest

from harness import base_conf, http

CASES = [
    ("a.example.com", "exact"),
    ("A.EXAMPLE.COM", "exact"),
    ("b.example.com", "short"),
    ("x.y.wild.example.com", "head"),
    ("dot.example.com", "dot"),
    ("www.dot.example.com", "dot"),
    ("www.tail.org", "tail"),
    ("re7.example.net", "regex"),
    ("example.net", "none"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    import harness
    srv = harness.Server(base_conf("""
        map $host $route {
            hostnames;
            default none;
            a.example.com exact;
            *.example.com short;
            *.wild.example.com head;
            .dot.example.com dot;
            www.tail.* tail;
            "~^re[0-9]+[.]" regex;
        }
        server {
            listen 127.0.0.1:@PORT@;
            location / { return 200 "$route\\n"; }
        }"""), tmp_path_factory.mktemp("maphosts"))
    srv.start()
    yield srv
    srv.stop()


@pytest.mark.parametrize("host, route", CASES)
def test_hostnames_map(server, host, route):
    r = http(server.port, host=host)
    assert r.status == 200
    assert r.body == f"{route}\n".encode(), host
