"""proxy_bind and its twins fastcgi_bind, uwsgi_bind, grpc_bind: the
upstream connection's source address. Linux answers on all of 127/8, so
binding to 127.0.0.2 works without setup. A peer-reporting HTTP backend
shows the address for proxy_pass (constant, with variables, an empty value
meaning no bind, `off` in a location undoing an inherited one); for the
other protocols `ss` shows the source of the connection a silent upstream
holds. `transparent` without CAP_NET_ADMIN/CAP_NET_RAW (the binary started
through setpriv with both out of its bounding set) is nginx's alert and a
500. The same tests pass against nginx."""

import subprocess

import pytest

import harness
import stream_backends
from echo_backend import AppBackend
from test_upstream_socket_keepalive import PASS, held_request


@pytest.fixture
def backend():
    b = AppBackend(lambda request: (200, {}, f"peer={request.client_address[0]}".encode()))  # where it came from
    yield b
    b.stop()


def proxy_conf(port):
    return harness.base_conf(f"""
    proxy_bind 127.0.0.2;
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{ proxy_pass http://127.0.0.1:{port}; }}
        location /var {{
            proxy_bind $arg_src;
            proxy_pass http://127.0.0.1:{port};
        }}
        location /off {{
            proxy_bind off;
            proxy_pass http://127.0.0.1:{port};
        }}
    }}
""")


def test_proxy_bind_sets_the_source_address(make_server, backend):
    srv = make_server(proxy_conf(backend.port))
    assert harness.http(srv.port, "/").text() == "peer=127.0.0.2"
    assert harness.http(srv.port, "/var?src=127.0.0.3").text() == "peer=127.0.0.3"
    # An empty value binds nothing: the kernel picks 127.0.0.1.
    assert harness.http(srv.port, "/var").text() == "peer=127.0.0.1"
    assert harness.http(srv.port, "/off").text() == "peer=127.0.0.1"


def test_proxy_bind_to_a_foreign_address_is_500(make_server, backend):
    # 192.0.2.1 is no address of this host: bind() fails, nginx answers 500.
    conf = harness.base_conf(f"""
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{ proxy_bind 192.0.2.1; proxy_pass http://127.0.0.1:{backend.port}; }}
    }}
""")
    srv = make_server(conf)
    assert harness.http(srv.port, "/").status == 500
    harness.wait_until(lambda: "bind(192.0.2.1) failed (99: Cannot assign requested address) while connecting"
                       " to upstream" in srv.error_log_text(), 5, what="the bind() error line")


class WithoutNetAdmin(harness.Server):
    """The binary without the capabilities IP_TRANSPARENT needs."""

    def command(self):
        return ["setpriv", "--bounding-set", "-net_admin,-net_raw", *super().command()]


def test_proxy_bind_transparent_without_capability(tmp_path, backend):
    conf = harness.base_conf(f"""
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{ proxy_bind 127.0.0.2 transparent; proxy_pass http://127.0.0.1:{backend.port}; }}
    }}
""")
    srv = WithoutNetAdmin(conf, tmp_path / "srv").start()
    try:
        assert harness.http(srv.port, "/").status == 500
        harness.wait_until(lambda: "setsockopt(IP_TRANSPARENT) failed (1: Operation not permitted) while"
                           " connecting to upstream" in srv.error_log_text(), 5, what="the alert line")
    finally:
        srv.stop()


def sources_towards(port):
    out = subprocess.run(["ss", "-tnH", "state", "established", "dst", f"127.0.0.1:{port}"],
                         capture_output=True, text=True, check=True).stdout
    return [line.split()[-2].rsplit(":", 1)[0] for line in out.splitlines() if line.strip()]


@pytest.fixture
def silent():
    u = stream_backends.silent()
    yield u
    u.close()


@pytest.mark.parametrize("module", sorted(PASS))
def test_bind_twins(make_server, silent, module):
    srv = make_server(harness.base_conf(f"""
    server {{
        listen 127.0.0.1:@PORT@;
        {module}_bind 127.0.0.4;
        location / {{
            {PASS[module]}127.0.0.1:{silent.port};
            {module}_read_timeout 30s;
        }}
    }}
"""))
    client = held_request(srv)
    try:
        assert harness.wait_until(lambda: sources_towards(silent.port), 10, what="the connection") == ["127.0.0.4"]
    finally:
        client.close()


@pytest.mark.parametrize("line,message", [
    ("proxy_bind 127.0.0.2 shiny;", 'invalid parameter "shiny"'),
    ("fastcgi_bind nowhere;", 'invalid address "nowhere"'),
    ("proxy_bind 127.0.0.2; proxy_bind 127.0.0.3;", '"proxy_bind" directive is duplicate'),
])
def test_bind_bad_values(tmp_path, line, message):
    (tmp_path / "logs").mkdir()
    (tmp_path / "t.conf").write_text(f"events {{}} http {{ server {{ {line} }} }}")
    r = harness.cli(["-t", "-c", str(tmp_path / "t.conf")], prefix=tmp_path)
    assert r.returncode != 0
    assert message in r.stdout + r.stderr
