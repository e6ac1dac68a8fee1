"""*_socket_rcvbuf and *_socket_sndbuf (nginx 1.29's names: torii-only
tests) set SO_RCVBUF/SO_SNDBUF on the upstream connection, read back with
`ss -m` while the upstream holds the request (Linux reports twice the size
set); inherited down http -> location like nginx. proxy_send_lowat and
fastcgi_send_lowat warn as nginx on Linux and are ignored (those tests also
pass against nginx)."""

import subprocess
import threading

import pytest

import harness
from scripted_upstream import HoldingUpstream


def upstream_socket_buffers(up_port):
    """(rb, tb) of the one connection to the upstream's port, from ss -m."""
    out = subprocess.run(["ss", "-tmnH", "state", "established", f"( dport = :{up_port} )"],
                         capture_output=True, text=True, timeout=10).stdout
    fields = out.split("skmem:(", 1)[1].split(")", 1)[0].split(",")
    values = {f.rstrip("0123456789"): int(f[len(f.rstrip("0123456789")):]) for f in fields}
    return values["rb"], values["tb"]


def fetch_and_look(srv, up, path):
    up.release.clear()
    result = {}
    t = threading.Thread(target=lambda: result.update(r=harness.http(srv.port, path)))
    t.start()
    assert up.arrived.acquire(timeout=10)
    try:
        return upstream_socket_buffers(up.port)
    finally:
        up.release.set()
        t.join(10)
        assert result["r"].status == 200


@pytest.fixture
def up():
    u = HoldingUpstream()
    yield u
    u.close()


def test_socket_buffers_set_and_inherited(make_server, up, nginx_only_skip):
    srv = make_server(harness.base_conf(f"""
    proxy_socket_rcvbuf 64k;
    server {{
        listen 127.0.0.1:@PORT@;
        location /inherited {{ proxy_pass http://127.0.0.1:{up.port}; }}
        location /own {{
            proxy_pass http://127.0.0.1:{up.port};
            proxy_socket_rcvbuf 96k;
            proxy_socket_sndbuf 48k;
        }}
    }}"""))
    rb, _ = fetch_and_look(srv, up, "/inherited")  # SO_SNDBUF left to the system
    assert rb == 2 * 65536
    assert fetch_and_look(srv, up, "/own") == (2 * 96 * 1024, 2 * 48 * 1024)


@pytest.mark.parametrize("line, message", [
    ("proxy_socket_rcvbuf lots;", '"proxy_socket_rcvbuf" directive invalid value'),
    ("grpc_socket_sndbuf 1x;", '"grpc_socket_sndbuf" directive invalid value'),
    ("uwsgi_socket_rcvbuf 8g;", '"uwsgi_socket_rcvbuf" directive invalid value'),
    ("scgi_socket_sndbuf 1k; scgi_socket_sndbuf 2k;", '"scgi_socket_sndbuf" directive is duplicate'),
])
def test_bad_socket_buffer_values(tmp_path, line, message, nginx_only_skip):
    p = check(tmp_path, line)
    assert p.returncode == 1, p.stderr
    assert message in p.stdout + p.stderr


def check(tmp_path, line):
    (tmp_path / "logs").mkdir(exist_ok=True)
    conf = tmp_path / "t.conf"
    conf.write_text(harness.base_conf(http=line + " server { listen 127.0.0.1:1; }").replace("@PREFIX@", str(tmp_path)))
    return harness.cli(["-t", "-c", str(conf)], prefix=tmp_path)


@pytest.mark.parametrize("directive", ["proxy_send_lowat", "fastcgi_send_lowat"])
def test_send_lowat_warns_and_is_ignored(tmp_path, directive):
    p = check(tmp_path, f"{directive} 1k;")
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert f'"{directive}" is not supported, ignored' in out, out
    p = check(tmp_path, f"{directive} lots;")
    assert p.returncode == 1
    assert f'"{directive}" directive invalid value' in p.stdout + p.stderr
