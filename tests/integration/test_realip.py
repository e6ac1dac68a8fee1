"""The realip module: set_real_ip_from (addresses, CIDR, unix:),
real_ip_header (X-Real-IP, X-Forwarded-For, proxy_protocol, any header),
real_ip_recursive; $realip_remote_addr/_port; the real client then
reaches the access log, allow/deny and the X-Forwarded-For the proxy
sends upstream."""

import pytest

from harness import base_conf, http, wait_until
from haproxy_front import HaproxyFront, available

SHOW = "$remote_addr|$remote_port|$realip_remote_addr|$proxy_add_x_forwarded_for"

CONF = r"""
    log_format real '$remote_addr real=$realip_remote_addr "$request" $status';
    access_log @PREFIX@/logs/access.log real;

    # Trusts loopback, takes X-Forwarded-For, not recursive.
    server {
        listen 127.0.0.1:@PORT0@;
        set_real_ip_from 127.0.0.1;
        set_real_ip_from 192.0.2.0/24;
        set_real_ip_from unix:;
        real_ip_header X-Forwarded-For;
        location / { return 200 "SHOW"; }
        # `return` runs in the rewrite phase, before access: a file here.
        location /deny/ {
            root @PREFIX@/www;
            deny 203.0.113.7;
            allow all;
        }
        location /proxy/ {
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_pass http://127.0.0.1:@PORT3@/;
        }
    }

    # Default header (X-Real-IP), recursive, trust set in locations only:
    # nginx's second run, before access checks, uses the location's
    # settings; a `return` answers before it, so these serve a file and
    # show the client in a header.
    server {
        listen 127.0.0.1:@PORT1@;
        real_ip_recursive on;
        root @PREFIX@/www;
        add_header X-Client "$remote_addr|$realip_remote_addr";
        location /trusted/ {
            set_real_ip_from 127.0.0.0/8;
            set_real_ip_from 203.0.113.0/24;
        }
        location /untrusted/ {
            set_real_ip_from 10.0.0.0/8;
        }
        location /xff/ {
            set_real_ip_from 127.0.0.0/8;
            set_real_ip_from 203.0.113.0/24;
            real_ip_header X-Forwarded-For;
        }
        location /cf/ {
            set_real_ip_from 127.0.0.1;
            real_ip_header CF-Connecting-IP;
        }
    }

    server {
        listen 127.0.0.1:@PORT2@;
        return 200 "unused";
    }

    # The upstream of /proxy/: shows what it received.
    server {
        listen 127.0.0.1:@PORT3@;
        access_log off;
        location / { return 200 "xff=$http_x_forwarded_for"; }
    }
""".replace("SHOW", SHOW)


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    from harness import Server
    prefix = tmp_path_factory.mktemp("realip")
    for d in ("deny", "trusted", "untrusted", "xff", "cf"):
        (prefix / "www" / d).mkdir(parents=True)
        (prefix / "www" / d / "index.html").write_text("file\n")
    server = Server(base_conf(CONF), prefix, nports=4)
    server.start()
    yield server
    server.stop()


def show(port, path="/", headers=None):
    r = http(port, path, headers=headers)
    assert r.status == 200, r
    return r.text().split("|")


def test_x_forwarded_for_last_entry(srv):
    addr, port, real, xff = show(srv.ports[0], headers={"X-Forwarded-For": "198.51.100.1, 203.0.113.7"})
    assert (addr, port, real) == ("203.0.113.7", "", "127.0.0.1")
    assert xff == "198.51.100.1, 203.0.113.7, 203.0.113.7"


def test_address_with_port(srv):
    addr, port, real, _ = show(srv.ports[0], headers={"X-Forwarded-For": "203.0.113.7:4321"})
    assert (addr, port, real) == ("203.0.113.7", "4321", "127.0.0.1")


def client(port, path, headers):
    r = http(port, path, headers=headers)
    assert r.status == 200, r
    return r.header("X-Client")


def test_recursive_skips_trusted_hops(srv):
    headers = {"X-Forwarded-For": "198.51.100.1, 203.0.113.7, 203.0.113.8"}
    assert client(srv.ports[1], "/xff/", headers) == "198.51.100.1|127.0.0.1"
    assert show(srv.ports[0], "/", headers)[0] == "203.0.113.8"  # off: the last entry, trusted or not


def test_garbage_leaves_the_peer(srv):
    assert show(srv.ports[0], headers={"X-Forwarded-For": "unknown"})[0] == "127.0.0.1"
    assert show(srv.ports[0])[0] == "127.0.0.1"  # no header at all


def test_real_client_meets_allow_deny(srv):
    assert http(srv.ports[0], "/deny/", headers={"X-Forwarded-For": "203.0.113.7"}).status == 403
    assert http(srv.ports[0], "/deny/", headers={"X-Forwarded-For": "203.0.113.8"}).status == 200
    wait_until(lambda: "access forbidden by rule, client: 203.0.113.7" in srv.error_log_text(), 10,
               what="the deny line naming the real client")


def test_proxy_appends_the_real_client(srv):
    r = http(srv.ports[0], "/proxy/", headers={"X-Forwarded-For": "203.0.113.7"})
    assert r.text() == "xff=203.0.113.7, 203.0.113.7"


def test_access_log_shows_the_real_client(srv):
    http(srv.ports[0], "/logged", headers={"X-Forwarded-For": "203.0.113.99"})
    wait_until(lambda: '203.0.113.99 real=127.0.0.1 "GET /logged HTTP/1.1" 200' in srv.access_log.read_text(), 10,
               what="the access log line")


def test_x_real_ip_is_the_default_header(srv):
    headers = {"X-Real-IP": "203.0.113.5", "X-Forwarded-For": "198.51.100.9"}
    assert client(srv.ports[1], "/trusted/", headers) == "203.0.113.5|127.0.0.1"


def test_untrusted_peer_keeps_its_address(srv):
    assert client(srv.ports[1], "/untrusted/", {"X-Real-IP": "203.0.113.5"}) == "127.0.0.1|127.0.0.1"


def test_any_header(srv):
    assert client(srv.ports[1], "/cf/", {"CF-Connecting-IP": "2001:db8::77"}) == "2001:db8::77|127.0.0.1"
    assert client(srv.ports[1], "/trusted/", {"CF-Connecting-IP": "2001:db8::77"}) == "127.0.0.1|127.0.0.1"


PP_CONF = r"""
    log_format real '$remote_addr real=$realip_remote_addr pp=$proxy_protocol_addr "$request"';
    server {
        listen 127.0.0.1:@PORT@ proxy_protocol;
        access_log @PREFIX@/logs/access.log real;
        set_real_ip_from 127.0.0.1;
        real_ip_header proxy_protocol;
        location / { return 200 "$remote_addr|$realip_remote_addr|$proxy_protocol_addr"; }
        location /deny/ {
            deny 127.0.0.2;
        }
    }
"""


@pytest.mark.skipif(not available(), reason="needs haproxy")
@pytest.mark.parametrize("send", ["send-proxy", "send-proxy-v2"])
def test_proxy_protocol_names_the_client(make_server, tmp_path, send):
    import socket
    server = make_server(base_conf(PP_CONF))
    front = HaproxyFront(tmp_path / "haproxy", server.port, send).start()
    try:
        def get(path):
            s = socket.socket()
            s.settimeout(10)
            s.bind(("127.0.0.2", 0))
            s.connect(("127.0.0.1", front.port))
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while chunk := s.recv(65536):
                data += chunk
            s.close()
            return data
        data = get("/")
        assert data.startswith(b"HTTP/1.1 200"), data
        assert data.split(b"\r\n\r\n", 1)[1] == b"127.0.0.2|127.0.0.1|127.0.0.2"
        assert get("/deny/").startswith(b"HTTP/1.1 403")
        wait_until(lambda: '127.0.0.2 real=127.0.0.1 pp=127.0.0.2 "GET / HTTP/1.1"' in server.access_log.read_text(),
                   10, what="the access log line")
    finally:
        front.stop()
