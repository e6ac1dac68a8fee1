"""Several `types` blocks in one context add up, as in nginx: the common
`include mime.types; types { text/javascript mjs; }` (Nextcloud's and
Jitsi Meet's configs in tests/corpus/) keeps every type the included file
gives. A repeated extension takes the later type, with nginx's warning; a
block's own `types` still replaces the inherited table. Every expectation is
nginx's: the file passes with TORII_BIN=/usr/sbin/nginx (1.22)."""

import pytest

import harness

FILES = ("a.css", "a.mjs", "a.log", "a.html", "a.foo", "a.UP")


def conf(server="", http=""):
    # base_conf's http block already holds one `types` block (harness.MIME_TYPES).
    return harness.base_conf(http=f"""
    {http}
    server {{
        listen 127.0.0.1:@PORT@;
        root @PREFIX@/www;
        {server}
    }}
""")


@pytest.fixture
def site(make_server):
    def make(**kwargs):
        s = make_server(conf(**kwargs), start=False)
        for sub in ("www", "www/own"):
            (s.prefix / sub).mkdir(exist_ok=True)
            for name in FILES:
                (s.prefix / sub / name).write_text("x\n")
        return s.start()
    return make


def content_type(server, path):
    r = harness.http(server.port, path)
    assert r.status == 200, r
    return r.header("Content-Type")


def test_a_second_types_block_adds_to_the_included_one(site):
    s = site(http="types { text/javascript mjs; }")
    assert content_type(s, "/a.css") == "text/css"
    assert content_type(s, "/a.html") == "text/html"
    assert content_type(s, "/a.mjs") == "text/javascript"
    assert content_type(s, "/a.foo") == "application/octet-stream"


def test_a_repeated_extension_takes_the_later_type_with_a_warning(site, tmp_path):
    http = "types { text/plain log; }\n    types { text/x-log LOG; TEXT/X-Up up; }"
    s = site(http=http)
    assert content_type(s, "/a.log") == "text/x-log"
    assert content_type(s, "/a.UP") == "TEXT/X-Up"
    assert content_type(s, "/a.css") == "text/css"
    r = harness.cli(["-t", "-c", str(s.conf_path)], prefix=s.prefix)
    assert r.returncode == 0, r.stderr
    out = r.stdout + r.stderr
    assert 'duplicate extension "log", content type: "text/x-log", previous content type: "text/plain"' in out
    assert out.count("duplicate extension") == 1, out


def test_a_block_of_its_own_replaces_the_inherited_table(site):
    s = site(server="""
        types { text/css css; }
        types { text/x-foo foo; }
        location /own/ { types { text/x-own foo; } }
    """)
    # The server's two blocks: its table is css + foo, nothing from http's.
    assert content_type(s, "/a.css") == "text/css"
    assert content_type(s, "/a.foo") == "text/x-foo"
    assert content_type(s, "/a.html") == "application/octet-stream"
    # The location's block replaces the server's table.
    assert content_type(s, "/own/a.foo") == "text/x-own"
    assert content_type(s, "/own/a.css") == "application/octet-stream"
