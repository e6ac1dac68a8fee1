"""map on a value that is empty (a header the request does not have):
nginx tries no regex on it, so `~^$` or `~.*` never match and the default
applies; an exact "" key still does. The bad-bot map (`~*^$ 1` for an empty
User-Agent) and the Forwarded-header map of generated configs rely on it.
Runs against nginx too."""

from harness import base_conf, http

CONF = base_conf(r"""
    map $http_x_test $any {
        ~^.*$   "regex";
        default "default";
    }
    map $http_x_exact $exact {
        ""      "empty key";
        ~^$     "regex";
        default "default";
    }
    map $http_user_agent $bad_bot {
        default 0;
        ~*(AhrefsBot|MJ12bot) 1;
        ~*^$ 1;
    }
    server {
        listen 127.0.0.1:@PORT@;
        location / {
            if ($bad_bot) { return 403; }
            return 200 "any=$any exact=$exact\n";
        }
    }
""")


def test_no_regex_is_tried_on_an_empty_value(make_server):
    srv = make_server(CONF)
    r = http(srv.port, "/", headers={"User-Agent": "curl"})
    assert (r.status, r.body) == (200, b"any=default exact=empty key\n")
    r = http(srv.port, "/", headers={"User-Agent": "curl", "X-Test": "x", "X-Exact": "y"})
    assert (r.status, r.body) == (200, b"any=regex exact=default\n")
    # No User-Agent at all: the empty-value regex does not block it.
    assert http(srv.port, "/").status == 200
    assert http(srv.port, "/", headers={"User-Agent": "MJ12bot/v1"}).status == 403
