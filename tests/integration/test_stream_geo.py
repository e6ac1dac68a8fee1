"""stream {}: geo (ngx_stream_geo_module): a value by the client's address
or by an address a variable holds, networks (longest prefix wins) or
`ranges`, `default`, `delete`. The same tests run against Debian's nginx
with its stream module loaded."""

import pytest

from stream_harness import check_refused, connect, peers, read_to_end, stream_conf  # noqa: F401  (peers: the fixture)


def answer(port):
    with connect(port) as s:
        return read_to_end(s).decode()


def test_client_address_picks_the_value(make_server):
    server = make_server(stream_conf("""
        geo $where {
            default        elsewhere;
            127.0.0.0/8    loopback;
            127.0.0.1/32   me;
            10.0.0.0/8     lan;
            127.0.0.2      two;
            delete 127.0.0.2;
        }
        server {
            listen 127.0.0.1:@PORT@;
            return "$where\\n";
        }"""))
    assert answer(server.port) == "me\n"


@pytest.mark.parametrize("address,value", [
    ("192.0.2.7", "doc"), ("192.0.2.200", "upper"), ("198.51.100.1", "none"), ("not an address", "none"),
    ("2001:db8::1", "none"),
])
def test_address_from_a_variable_with_ranges(make_server, address, value):
    server = make_server(stream_conf(f"""
        map $server_port $addr {{
            default "{address}";
        }}
        geo $addr $net {{
            ranges;
            default none;
            192.0.2.0-192.0.2.127 doc;
            192.0.2.128-192.0.2.255 upper;
        }}
        server {{
            listen 127.0.0.1:@PORT@;
            return "$net\\n";
        }}"""))
    assert answer(server.port) == value + "\n"


def test_geo_value_picks_an_upstream(make_server, peers):
    local = peers("echo", "local")
    server = make_server(stream_conf(f"""
        upstream local {{ server 127.0.0.1:{local.port}; }}
        geo $pool {{
            default remote;
            127.0.0.0/8 local;
        }}
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass $pool;
        }}"""))
    with connect(server.port) as s:
        s.settimeout(10)
        assert s.recv(10) == b"local\n"


@pytest.mark.parametrize("body,message", [
    ("geo $g { 10.0.0.0/33 x; }", 'invalid network "10.0.0.0/33"'),
    ("geo $g { ranges; 10.0.0.9-10.0.0.1 x; }", 'invalid range "10.0.0.9-10.0.0.1"'),
    ("geo $g { 10.0.0.0/8 x y; }", "invalid number of the geo parameters"),
    ("geo g { default x; }", 'invalid variable name "g"'),
    ("geo remote_addr $g { default x; }", 'invalid variable name "remote_addr"'),
    ("server { listen 127.0.0.1:@PORT@; return x; geo $g { default x; } }", '"geo" directive is not allowed here'),
])
def test_bad_geo_blocks_are_refused(make_server, body, message):
    check_refused(make_server, body, message)
