"""geo {}: networks with the longest prefix winning, `ranges`, default,
delete, include, an address taken from a variable (`geo $arg_ip $var`),
and `proxy`/`proxy_recursive` taking the client from X-Forwarded-For."""

import pytest

from harness import base_conf, http

CONF = r"""
    geo $arg_ip $net {
        default unknown;
        127.0.0.0/8 loopback;
        10.0.0.0/8 ten;
        10.1.0.0/16 ten-one;
        10.1.1.0/24 ten-one-one;
        10.1.1.128/25 ten-one-one-high;
        2001:db8::/32 doc6;
        2001:db8:1::/48 doc6-one;
        192.0.2.0/24 doc;
        delete 192.0.2.0/24;
        include @PREFIX@/geo.inc;
    }
    geo $arg_ip $ranged {
        ranges;
        default none;
        10.0.0.0-10.0.0.255 a;
        10.0.1.0-10.0.1.255 b;
        10.0.2.0-10.0.2.9 c;
    }
    geo $client {
        default other;
        127.0.0.1 me;
    }
    geo $nodefault {
        10.0.0.0/8 ten;
    }
    geo $proxied {
        proxy 127.0.0.1;
        proxy 198.51.100.0/24;
        default other;
        127.0.0.1 loopback;
        203.0.113.0/24 doc3;
        198.51.100.0/24 doc2;
    }
    geo $proxied_recursive {
        proxy 127.0.0.1;
        proxy 198.51.100.0/24;
        proxy_recursive;
        default other;
        203.0.113.0/24 doc3;
        198.51.100.0/24 doc2;
    }
    server {
        listen 127.0.0.1:@PORT@;
        location / { return 200 "$net|$ranged|$client|[$nodefault]"; }
        location /proxied { return 200 "$proxied|$proxied_recursive"; }
    }
"""


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    from harness import Server
    prefix = tmp_path_factory.mktemp("geo")
    (prefix / "geo.inc").write_text("198.51.100.0/24 included;\n")
    server = Server(base_conf(CONF), prefix)
    server.start()
    yield server
    server.stop()


def values(srv, ip=None, path="/", headers=None):
    r = http(srv.port, path + (f"?ip={ip}" if ip is not None else ""), headers=headers)
    assert r.status == 200, r
    return r.text().split("|")


@pytest.mark.parametrize("ip,expected", [
    ("127.0.0.1", "loopback"),
    ("10.200.0.1", "ten"),
    ("10.1.200.1", "ten-one"),
    ("10.1.1.1", "ten-one-one"),
    ("10.1.1.200", "ten-one-one-high"),
    ("11.0.0.1", "unknown"),
    ("192.0.2.1", "unknown"),       # deleted
    ("198.51.100.3", "included"),   # from the included file
    ("2001:db8:2::1", "doc6"),
    ("2001:db8:1::1", "doc6-one"),
    ("2001:db9::1", "unknown"),
    ("::ffff:10.1.1.1", "ten-one-one"),  # IPv4-mapped is looked up as IPv4
    ("not-an-address", "unknown"),
    ("", "unknown"),
])
def test_networks_longest_prefix(srv, ip, expected):
    assert values(srv, ip)[0] == expected


@pytest.mark.parametrize("ip,expected", [
    ("10.0.0.0", "a"), ("10.0.0.255", "a"), ("10.0.1.0", "b"), ("10.0.2.9", "c"), ("10.0.2.10", "none"),
    ("9.255.255.255", "none"), ("2001:db8::1", "none"),
])
def test_ranges(srv, ip, expected):
    assert values(srv, ip)[1] == expected


def test_client_address_and_empty_default(srv):
    v = values(srv)
    assert v[2] == "me"
    assert v[3] == "[]"  # no default: the empty string


def test_proxy_takes_x_forwarded_for(srv):
    assert values(srv, path="/proxied") == ["loopback", "other"]  # no header: the peer
    xff = {"X-Forwarded-For": "203.0.113.5, 198.51.100.7"}
    # Not recursive: the last entry; recursive: past the trusted 198.51.100.7.
    assert values(srv, path="/proxied", headers=xff) == ["doc2", "doc3"]
