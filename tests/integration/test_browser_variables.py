"""The browser module (nginx's ngx_http_browser_module): $modern_browser,
$ancient_browser and $msie from the User-Agent, with modern_browser
(versions X.X.X.X compared as nginx compares them, Opera checked first),
`modern_browser unlisted`, ancient_browser (substrings, netscape4), the
*_value directives, nginx's inheritance, and its load errors. The same
tests pass against Debian's nginx, which has the module built in."""

import pytest

import harness
from harness import base_conf, cli, http

SHOW = 'return 200 "[$modern_browser|$ancient_browser|$msie]";'

CONF = f"""
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{ {SHOW} }}
        location /m {{
            modern_browser gecko 1.9;
            modern_browser msie 6.0;
            modern_browser safari 412;
            modern_browser konqueror 3.1;
            ancient_browser Links Lynx netscape4;
            modern_browser_value "yes";
            ancient_browser_value "old";
            {SHOW}
        }}
        location /u {{
            modern_browser unlisted;
            ancient_browser Links Lynx netscape4;
            {SHOW}
        }}
        location /mu {{
            modern_browser gecko 1.9;
            modern_browser unlisted;
            ancient_browser Lynx;
            {SHOW}
        }}
        location /o {{
            modern_browser opera 9.0;
            modern_browser msie 7.0;
            {SHOW}
        }}
        location /twice {{
            modern_browser gecko 2.0;
            modern_browser gecko 1.0;
            {SHOW}
        }}
    }}
    server {{
        listen 127.0.0.1:@PORT1@;
        modern_browser gecko 2.0;
        ancient_browser Lynx;
        ancient_browser_value old;
        location / {{ {SHOW} }}
        location /own-ancient {{
            ancient_browser Links;
            {SHOW}
        }}
        location /own-modern {{
            modern_browser unlisted;
            {SHOW}
        }}
        location /own-value {{
            modern_browser_value new;
            {SHOW}
        }}
    }}
"""

FIREFOX_115 = "Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0"
FIREFOX_1 = "Mozilla/5.0 (Windows; U; Windows NT 5.1; ru-RU; rv:1.7.8) Gecko/20050511 Firefox/1.0.4"
GECKO_1_10 = "Mozilla/5.0 (X11; U; Linux i686; en-US; rv:1.10) Gecko/20100101"
GECKO_1_9_0_1_5 = "Mozilla/5.0 (X11; U; Linux i686; en-US; rv:1.9.0.1.5) Gecko/20100101"
GECKO_1_8_99 = "Mozilla/5.0 (X11; U; Linux i686; en-US; rv:1.8.99) Gecko/20100101"
CHROME = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
          "Chrome/120.0.0.0 Safari/537.36")
SAFARI_OLD = "Mozilla/5.0 (Macintosh; U; PPC Mac OS X; ru-ru) AppleWebKit/125.2 (KHTML, like Gecko) Safari/125.7"
MSIE_55 = "Mozilla/4.0 (compatible; MSIE 5.5; Windows 98)"
MSIE_7 = "Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 6.0)"
OPERA_AS_MSIE = "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; en) Opera 8.50"
OPERA_9 = "Opera/9.80 (X11; Linux x86_64; U; en) Presto/2.12.388 Version/12.16"
KONQUEROR = "Mozilla/5.0 (compatible; Konqueror/3.5; Linux) KHTML/3.5.10 (like Gecko)"
NETSCAPE4 = "Mozilla/4.72 [en] (X11; U; Linux 2.2.14 i686)"
LYNX = "Lynx/2.8.9rel.1 libwww-FM/2.14 SSL-MM/1.4.1 GNUTLS/3.6.13"
CURL = "curl/7.88.1"
SHORT = "Mozilla/5.0 ("  # shorter than where the gecko search starts


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    server = harness.Server(base_conf(CONF), tmp_path_factory.mktemp("browser"), nports=2)
    server.start()
    yield server
    server.stop()


def show(srv, path, ua, port=0):
    headers = {} if ua is None else {"User-Agent": ua}
    r = http(srv.ports[port], path, headers=headers)
    assert r.status == 200, r
    return r.text()


@pytest.mark.parametrize("ua,expected", [
    (None, "[|1|]"),  # without any directive every browser is ancient
    (FIREFOX_115, "[|1|]"),
    (MSIE_7, "[|1|1]"),
    (OPERA_AS_MSIE, "[|1|]"),  # $msie is never Opera
    ("MSIE 6", "[|1|]"),  # "MSIE " needs three more characters
    ("xMSIE 6.0", "[|1|1]"),
])
def test_without_directives(srv, ua, expected):
    assert show(srv, "/", ua) == expected


@pytest.mark.parametrize("ua,expected", [
    (None, "[|old|]"),
    (FIREFOX_115, "[yes||]"),
    (FIREFOX_1, "[|old|]"),
    (GECKO_1_10, "[yes||]"),  # 1.10 is past 1.9
    (GECKO_1_9_0_1_5, "[yes||]"),
    (GECKO_1_8_99, "[|old|]"),
    (CHROME, "[yes||]"),  # Safari/537.36
    (SAFARI_OLD, "[|old|]"),
    (MSIE_55, "[|old|1]"),
    (MSIE_7, "[yes||1]"),
    (OPERA_AS_MSIE, "[|old|]"),  # Opera not listed: found first, never modern
    (OPERA_9, "[|old|]"),
    (KONQUEROR, "[yes||]"),
    (LYNX, "[|old|]"),  # not listed, and `unlisted` is off
    (CURL, "[|old|]"),
    (SHORT, "[|old|]"),
    ("", "[|old|]"),
])
def test_modern_list(srv, ua, expected):
    assert show(srv, "/m", ua) == expected


@pytest.mark.parametrize("ua,expected", [
    (None, "[1||]"),
    (CURL, "[1||]"),
    (FIREFOX_1, "[1||]"),  # no modern list: only the ancient strings count
    (OPERA_9, "[1||]"),
    (LYNX, "[|1|]"),
    ("Links (2.29; Linux x86_64; GNU C; text)", "[|1|]"),
    ("links (2.29)", "[1||]"),  # case matters
    (NETSCAPE4, "[|1|]"),
    ("Mozilla/4.0 (compatible; MSIE 8.0)", "[|1|1]"),  # netscape4: Mozilla/1 to Mozilla/4
    ("Mozilla/5.0 (X11)", "[1||]"),
    ("Mozilla/4.72", "[1||]"),  # netscape4 needs more than 13 characters
])
def test_unlisted(srv, ua, expected):
    assert show(srv, "/u", ua) == expected


@pytest.mark.parametrize("ua,expected", [
    (FIREFOX_115, "[1||]"),
    (FIREFOX_1, "[|1|]"),  # a listed browser is judged by its version alone
    (CURL, "[1||]"),
    (LYNX, "[|1|]"),
    (None, "[1||]"),
])
def test_modern_list_and_unlisted(srv, ua, expected):
    assert show(srv, "/mu", ua) == expected


@pytest.mark.parametrize("ua,expected", [
    (OPERA_AS_MSIE, "[|1|]"),  # Opera 8.50 against opera 9.0, not MSIE 6.0 against msie 7.0
    ("Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; en) Opera 9.10", "[1||]"),
    (OPERA_9, "[1||]"),
    (MSIE_7, "[1||1]"),
])
def test_opera_first(srv, ua, expected):
    assert show(srv, "/o", ua) == expected


def test_lines_of_one_browser_in_written_order(srv):
    # gecko 2.0 is written first and decides: rv:1.9 is ancient.
    assert show(srv, "/twice", "Mozilla/5.0 (X11; U; Linux i686; rv:1.9) Gecko/20100101") == "[|1|]"


@pytest.mark.parametrize("path,ua,expected", [
    ("/", FIREFOX_115, "[1||]"),
    ("/", FIREFOX_1, "[|old|]"),
    ("/", LYNX, "[|old|]"),
    # A location's ancient_browser replaces the server's strings only.
    ("/own-ancient", LYNX, "[|old|]"),  # still unlisted: ancient
    ("/own-ancient", FIREFOX_115, "[1||]"),
    # Its modern_browser replaces the server's list (and unlisted) only.
    ("/own-modern", FIREFOX_1, "[1||]"),
    ("/own-modern", LYNX, "[|old|]"),
    ("/own-value", FIREFOX_115, "[new||]"),
    ("/own-value", FIREFOX_1, "[|old|]"),
])
def test_inheritance(srv, path, ua, expected):
    assert show(srv, path, ua, port=1) == expected


def config_test(make_server, location):
    s = make_server(base_conf(f"server {{ listen 127.0.0.1:@PORT@; location / {{ {location} }} }}"),
                    start=False)
    s.leases = [harness.PortLease()]
    s.ports = [s.leases[0].port]
    s.write_conf()
    out = cli(["-t", "-c", str(s.conf_path)], prefix=s.prefix)
    return out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("location,message", [
    ("modern_browser chrome 100;", 'unknown browser name "chrome"'),
    ("modern_browser gecko 1.x;", 'invalid browser version "1.x"'),
    ("modern_browser gecko;", None),  # nginx refuses it without a message of its own
    ("modern_browser gecko 1 2;", 'invalid number of arguments in "modern_browser" directive'),
    ("ancient_browser;", 'invalid number of arguments in "ancient_browser" directive'),
    ("modern_browser_value a b;", 'invalid number of arguments in "modern_browser_value" directive'),
])
def test_load_errors(make_server, location, message):
    ok, out = config_test(make_server, location)
    assert not ok, out
    if message:
        assert message in out


def test_names_are_caseless(make_server):
    ok, out = config_test(make_server, "modern_browser MSIE 6.0; modern_browser Gecko 1; " + SHOW)
    assert ok, out
