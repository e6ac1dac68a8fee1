"""stream {}: split_clients (ngx_stream_split_clients_module). The part a
string lands in is worked out here with nginx's MurmurHash2 and bounds, so
the test says which client gets which value; the same tests run against
Debian's nginx with its stream module loaded."""

import pytest

from stream_harness import check_refused, connect, peers, read_to_end, stream_conf  # noqa: F401  (peers: the fixture)


def murmur2(data):
    h = len(data) & 0xffffffff
    m = 0x5bd1e995
    i = 0
    while len(data) - i >= 4:
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * m) & 0xffffffff
        k ^= k >> 24
        k = (k * m) & 0xffffffff
        h = (h * m) & 0xffffffff
        h ^= k
        i += 4
    rest = len(data) - i
    if rest == 3:
        h ^= data[i + 2] << 16
    if rest >= 2:
        h ^= data[i + 1] << 8
    if rest >= 1:
        h ^= data[i]
        h = (h * m) & 0xffffffff
    h ^= h >> 13
    h = (h * m) & 0xffffffff
    h ^= h >> 15
    return h


def expected(key, parts):
    """parts: [(hundredths or None for "*", value)] as nginx bounds them."""
    last = 0
    total = 0
    h = murmur2(key)
    for percent, value in parts:
        total = total + percent if percent else 10000
        if total == 10000 or not percent:
            return value
        last += percent * 0xffffffff // 10000
        if h < last:
            return value
    return ""


def test_clients_are_split_by_the_hash_of_a_string(make_server):
    server = make_server(stream_conf("""
        split_clients "${remote_port}x" $variant {
            25%   quarter;
            50.5% half;
            *     rest;
        }
        server {
            listen 127.0.0.1:@PORT@;
            return "$variant\\n";
        }"""))
    seen = set()
    for _ in range(30):
        with connect(server.port) as s:
            port = s.getsockname()[1]
            got = read_to_end(s).decode().strip()
        want = expected(f"{port}x".encode(), [(2500, "quarter"), (5050, "half"), (None, "rest")])
        assert got == want, (port, got, want)
        seen.add(got)
    assert len(seen) >= 2, seen


def test_split_value_picks_an_upstream(make_server, peers):
    a = peers("echo", "a")
    b = peers("echo", "b")
    server = make_server(stream_conf(f"""
        upstream a {{ server 127.0.0.1:{a.port}; }}
        upstream b {{ server 127.0.0.1:{b.port}; }}
        split_clients "$remote_port" $backend {{
            50% a;
            *   b;
        }}
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass $backend;
        }}"""))
    for _ in range(10):
        with connect(server.port) as s:
            port = s.getsockname()[1]
            s.settimeout(10)
            greeting = s.recv(10).decode().strip()
        assert greeting == expected(str(port).encode(), [(5000, "a"), (None, "b")])


def test_a_later_block_of_the_same_name_wins(make_server):
    server = make_server(stream_conf("""
        split_clients "$remote_addr" $v { * first; }
        split_clients "$remote_addr" $v { * second; }
        server {
            listen 127.0.0.1:@PORT@;
            return "$v\\n";
        }"""))
    with connect(server.port) as s:
        assert read_to_end(s) == b"second\n"


@pytest.mark.parametrize("body,message", [
    ('split_clients "$remote_addr" $v { 60% a; 50% b; }', "percent total is greater than 100%"),
    ('split_clients "$remote_addr" $v { 10 a; }', 'invalid percent value "10"'),
    ('split_clients "$remote_addr" $remote_port { * b; }', 'the duplicate "remote_port" variable'),
    ('server { listen 127.0.0.1:@PORT@; return x; split_clients "$remote_addr" $v { * b; } }',
     '"split_clients" directive is not allowed here'),
])
def test_bad_split_clients_are_refused(make_server, body, message):
    check_refused(make_server, body, message)
