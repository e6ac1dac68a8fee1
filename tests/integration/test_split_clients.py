"""split_clients as nginx's module: MurmurHash2 of the rendered string
against running percentage bounds, "*" for the rest, fractional percents,
a total under 100% leaving some keys with an empty value. The expected part
of each key is computed here with nginx's arithmetic, and the same test
passes against nginx (TORII_BIN=/usr/sbin/nginx): a key lands in the same
part as with nginx."""

import pytest

import harness

CONF = r"""
    split_clients "${arg_k}salt" $variant {
        10%   a;
        20.5% b;
        0.01% c;
        *     d;
    }
    split_clients $arg_k $partial {
        50%  half;
        25%  quarter;
    }
    split_clients $arg_k $full {
        60%  six;
        40%  four;
    }
    server {
        listen 127.0.0.1:@PORT@;
        location / { return 200 "$variant|$partial|$full"; }
    }
"""


def murmur2(data):
    m = 0x5bd1e995
    mask = 0xffffffff
    length = len(data)
    h = length & mask
    i = 0
    while length - i >= 4:
        k = data[i] | data[i + 1] << 8 | data[i + 2] << 16 | data[i + 3] << 24
        k = (k * m) & mask
        k ^= k >> 24
        k = (k * m) & mask
        h = (h * m) & mask
        h ^= k
        i += 4
    rest = length - i
    if rest == 3:
        h ^= data[i + 2] << 16
    if rest >= 2:
        h ^= data[i + 1] << 8
    if rest >= 1:
        h ^= data[i]
        h = (h * m) & mask
    h ^= h >> 13
    h = (h * m) & mask
    h ^= h >> 15
    return h


def bounds(parts):
    """nginx's bounds: hundredths of a percent summed, scaled to 32 bits;
    0 for the line that reaches 100% or "*"."""
    out = []
    total = 0
    last = 0
    for percent, value in parts:
        total = total + percent if percent else 10000
        if total == 10000:
            percent = 0
        if percent:
            last = (last + percent * 0xffffffff // 10000) & 0xffffffff
            out.append((last, value))
        else:
            out.append((0, value))
    return out


def pick(parts, key):
    h = murmur2(key)
    for bound, value in bounds(parts):
        if h < bound or bound == 0:
            return value
    return ""


VARIANT = [(1000, "a"), (2050, "b"), (1, "c"), (0, "d")]
PARTIAL = [(5000, "half"), (2500, "quarter")]
FULL = [(6000, "six"), (4000, "four")]


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    server = harness.Server(harness.base_conf(CONF), tmp_path_factory.mktemp("split"))
    server.start()
    yield server
    server.stop()


def test_same_part_as_nginx_arithmetic(srv):
    seen = {"a": 0, "b": 0, "d": 0, "": 0, "half": 0, "quarter": 0}
    for i in range(300):
        key = f"client-{i}"
        r = harness.http(srv.port, f"/?k={key}")
        assert r.status == 200
        variant, partial, full = r.text().split("|")
        assert variant == pick(VARIANT, (key + "salt").encode()), key
        assert partial == pick(PARTIAL, key.encode()), key
        assert full == pick(FULL, key.encode()), key
        seen[variant] = seen.get(variant, 0) + 1
        seen[partial] += 1
    # Every part is reached: the test would notice a constant answer.
    for value in ("a", "b", "d", "half", "quarter", ""):
        assert seen[value] > 0, seen


def test_known_hashes():
    # Fixed points of nginx's ngx_murmur_hash2, so the Python copy above is
    # itself pinned down.
    assert murmur2(b"") == 0
    assert murmur2(b"a") == 0x92685f5e
    assert murmur2(b"abcd") == 0x26873021
    assert murmur2(b"client-7salt") == 0x7fa7ef19


@pytest.mark.parametrize("body,message", [
    ("60% a; 50% b;", "percent total is greater than 100%"),
    ("0% a;", "invalid percent value"),
    ("1.234% a;", "invalid percent value"),
    ("10 a;", "invalid percent value"),
])
def test_config_errors(tmp_path, body, message):
    conf = harness.base_conf(http=f"""
    split_clients $arg_k $v {{ {body} }}
    server {{ listen 127.0.0.1:1; return 200 $v; }}
""")
    harness.check_test_fails(tmp_path, conf, message)


def test_index_names_with_a_variable(make_server):
    # nginx's own split_clients example: `index index${variant}.html;`
    # serves the variant's index file (an empty variant: index.html).
    srv = make_server(harness.base_conf(http="""
    split_clients "${arg_k}" $variant { 100% .two; }
    map $arg_v $picked { default ""; one .one; }
    server {
        listen 127.0.0.1:@PORT@;
        root @PREFIX@/www;
        location /split/ { index index${variant}.html; }
        location / { index index$picked.html; }
    }
    """), start=False)
    www = srv.prefix / "www"
    (www / "split").mkdir(parents=True)
    (www / "index.html").write_text("plain\n")
    (www / "index.one.html").write_text("one\n")
    (www / "split" / "index.two.html").write_text("two\n")
    srv.start()
    assert harness.http(srv.port, "/").text() == "plain\n"
    assert harness.http(srv.port, "/?v=one").text() == "one\n"
    assert harness.http(srv.port, "/split/?k=x").text() == "two\n"
