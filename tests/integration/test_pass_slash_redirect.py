"""nginx's auto_redirect: `location /app/ { proxy_pass ...; }` (or
fastcgi_pass, uwsgi_pass, scgi_pass, memcached_pass, grpc_pass) answers a
request for exactly /app with a 301 to /app/, the query kept, unless a
location of exactly /app exists. The Location follows absolute_redirect,
server_name_in_redirect and port_in_redirect as the static directory
redirect does. Runs against nginx too (TORII_BIN=/usr/sbin/nginx)."""

import pytest

import harness
from echo_backend import EchoBackend


@pytest.fixture
def srv(make_server):
    backend = EchoBackend("app")
    dead = harness.PortLease()  # nothing listens here: no request must reach it
    up = f"127.0.0.1:{backend.port}"
    nothing = f"127.0.0.1:{dead.port}"
    conf = harness.base_conf(http=f"""
    server {{
        listen 127.0.0.1:@PORT0@;
        server_name srv.example;
        root @PREFIX@/html;
        location /app/ {{ proxy_pass http://{up}; }}
        location /cgi/ {{ fastcgi_pass {nothing}; }}
        location /uw/ {{ uwsgi_pass {nothing}; }}
        location /sc/ {{ scgi_pass {nothing}; }}
        location /mc/ {{ set $memcached_key $uri; memcached_pass {nothing}; }}
        location /gr/ {{ grpc_pass grpc://{nothing}; }}
        location /both/ {{ proxy_pass http://{nothing}; }}
        location = /both {{ return 200 "exact\\n"; }}
        location /plain/ {{ return 200 "plain\\n"; }}
        location /rel/ {{ absolute_redirect off; proxy_pass http://{nothing}; }}
        location /named/ {{ server_name_in_redirect on; proxy_pass http://{nothing}; }}
        location /noport/ {{ port_in_redirect off; proxy_pass http://{nothing}; }}
        location /lim/ {{ client_max_body_size 10; proxy_pass http://{nothing}; }}
        location /outer {{
            return 200 "outer\\n";
            location /outer/in/ {{ proxy_pass http://{nothing}; }}
        }}
    }}""")
    s = make_server(conf)
    yield s
    backend.server.shutdown()
    dead.release()


def get(port, path, method="GET", headers=None, body=None):
    return harness.http(port, path, method=method, headers=headers, body=body)


@pytest.mark.parametrize("prefix", ["app", "cgi", "uw", "sc", "mc", "gr"])
def test_every_pass_redirects_the_bare_path(srv, prefix):
    r = get(srv.port, f"/{prefix}")
    assert r.status == 301, r
    assert r.header("Location") == f"http://localhost:{srv.port}/{prefix}/"


def test_query_is_kept(srv):
    r = get(srv.port, "/app?a=1&b=two")
    assert r.status == 301
    assert r.header("Location") == f"http://localhost:{srv.port}/app/?a=1&b=two"


def test_head_gets_the_redirect_without_body(srv):
    r = get(srv.port, "/app", method="HEAD")
    assert r.status == 301
    assert r.header("Location") == f"http://localhost:{srv.port}/app/"
    assert r.body == b""


def test_the_slashed_path_is_proxied(srv):
    r = get(srv.port, "/app/")
    assert r.status == 200
    assert r.body.startswith(b"backend=app uri=/app/ ")


def test_an_exact_location_of_the_path_wins(srv):
    r = get(srv.port, "/both")
    assert r.status == 200 and r.body == b"exact\n"


def test_no_redirect_without_a_pass(srv):
    r = get(srv.port, "/plain")
    assert r.status == 404


def test_a_longer_path_is_not_redirected(srv):
    assert get(srv.port, "/appx").status == 404


def test_a_nested_location_redirects_too(srv):
    r = get(srv.port, "/outer/in")
    assert r.status == 301
    assert r.header("Location") == f"http://localhost:{srv.port}/outer/in/"
    assert get(srv.port, "/outer/x").body == b"outer\n"


def test_absolute_redirect_off(srv):
    r = get(srv.port, "/rel")
    assert r.status == 301
    assert r.header("Location") == "/rel/"


def test_server_name_in_redirect(srv):
    r = get(srv.port, "/named")
    assert r.status == 301
    assert r.header("Location") == f"http://srv.example:{srv.port}/named/"


def test_port_in_redirect_off(srv):
    r = get(srv.port, "/noport?q")
    assert r.status == 301
    assert r.header("Location") == "http://localhost/noport/?q"


def test_body_size_is_checked_first(srv):
    # nginx checks client_max_body_size of the slashed location before the redirect.
    r = get(srv.port, "/lim", method="POST", body=b"x" * 100)
    assert r.status == 413
