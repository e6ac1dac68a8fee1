"""valid_referers and $invalid_referer as nginx's referer module: none,
blocked, server_names, exact and wildcard hosts, a host with a URI part,
regexes (caseless, against the referer after its scheme), the port left
out of the comparison, and the usual `if ($invalid_referer) { return 403; }`.
Also runs against nginx (TORII_BIN=/usr/sbin/nginx)."""

import pytest

import harness

CONF = r"""
    server {
        listen 127.0.0.1:@PORT@;
        server_name site.test *.site.test ~^re\d+\.test$;
        location / {
            valid_referers none blocked server_names example.com *.example.org www.example.*
                           .bare.test uri.test/allowed/ ~\.regex\.test/ok;
            return 200 "[$invalid_referer]";
        }
        location /strict/ {
            valid_referers example.com;
            if ($invalid_referer) { return 403; }
            return 200 "fine";
        }
        location /inherit/ {
            return 200 "[$invalid_referer]";
        }
        location /none/ {
            return 200 "[$invalid_referer]";
            location /none/inner/ {
                valid_referers none;
                valid_referers example.com;
                return 200 "[$invalid_referer]";
            }
        }
    }
    server {
        listen 127.0.0.1:@PORT@;
        server_name plain.test;
        return 200 "[$invalid_referer]";
    }
"""


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    server = harness.Server(harness.base_conf(CONF), tmp_path_factory.mktemp("referer"))
    server.start()
    yield server
    server.stop()


def invalid(srv, referer, path="/", host="localhost"):
    headers = {} if referer is None else {"Referer": referer}
    r = harness.http(srv.port, path, headers=headers, host=host)
    assert r.status == 200, r
    return r.text() == "[1]"


@pytest.mark.parametrize("referer,expected", [
    (None, False),                               # none
    ("", False),                                 # blocked: no scheme
    ("example.com/page", False),                 # blocked
    ("ftp://evil.test/", False),                 # blocked: not http(s)
    ("http://a.b", False),                       # blocked: shorter than http://i.ru
    ("http://example.com/any", False),
    ("https://EXAMPLE.com:8443/x", False),       # port ignored, caseless host
    ("http://example.com", False),
    ("http://evil.test/", True),
    ("http://sub.example.com/", True),           # exact only
    ("http://a.example.org/", False),
    ("http://example.org/", True),               # *.x does not match x
    ("http://www.example.net/", False),          # www.example.*
    ("http://bare.test/", False),                # .bare.test
    ("http://x.y.bare.test/", False),
    ("http://uri.test/allowed/page", False),
    ("http://uri.test/other/page", True),        # the host matched: no fallback
    ("http://uri.test:81/allowed/x", False),
    ("http://foo.regex.test/ok", False),
    ("http://FOO.REGEX.TEST/OK", False),         # caseless regex
    ("http://foo.regex.test/no", True),
    ("http://site.test/", False),                # server_names
    ("http://www.site.test/", False),
    ("http://re12.test/", False),                # regex server name
])
def test_valid_referers(srv, referer, expected):
    assert invalid(srv, referer) == expected


def test_if_invalid_referer_refuses(srv):
    assert harness.http(srv.port, "/strict/", headers={"Referer": "http://example.com/"}).status == 200
    assert harness.http(srv.port, "/strict/", headers={"Referer": "http://evil.test/"}).status == 403
    assert harness.http(srv.port, "/strict/").status == 403  # no "none"


def test_inherited_and_added_lines(srv):
    # A location without valid_referers inherits nothing here (set in a sibling).
    assert invalid(srv, "http://evil.test/", "/inherit/") is False
    assert invalid(srv, "http://evil.test/", "/none/") is False
    # Two lines in one block add up.
    assert invalid(srv, None, "/none/inner/") is False
    assert invalid(srv, "http://example.com/", "/none/inner/") is False
    assert invalid(srv, "http://evil.test/", "/none/inner/") is True


def test_without_valid_referers_nothing_is_invalid(srv):
    assert invalid(srv, "http://evil.test/", host="plain.test") is False


def test_none_without_a_host_is_an_error(tmp_path):
    conf = harness.base_conf(http="""
    server { listen 127.0.0.1:1; location / { valid_referers none blocked ~x; } }
""")
    (tmp_path / "logs").mkdir()
    path = tmp_path / "bad.conf"
    path.write_text(conf.replace("@PREFIX@", str(tmp_path)))
    r = harness.cli(["-t", "-c", str(path)], prefix=tmp_path)
    assert r.returncode != 0
    assert "without any valid referer" in r.stdout + r.stderr
