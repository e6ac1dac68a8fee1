"""`listen unix:PATH`: a server on a unix domain socket (what a proxy on the
same machine, HAProxy or another nginx, often talks to), with curl
--unix-socket as the client. The socket file is made for all users to
connect (0666), nginx's address variables read "unix:", allow/deny and
set_real_ip_from take "unix:", and the file goes when the server stops or
a reload drops the listen. Runs against nginx too, except where noted."""

import os
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time

import pytest

import harness
from harness import base_conf, http, wait_until


@pytest.fixture
def sockdir():
    # A short directory: a socket path is at most 107 bytes, and pytest's
    # own temporary paths can be longer.
    d = tempfile.mkdtemp(prefix="tu", dir="/tmp")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def curl_unix(path, url="http://localhost/", args=()):
    r = subprocess.run(["curl", "-s", "--noproxy", "*", "-D", "-", "--unix-socket", path, *args, url],
                       capture_output=True, timeout=10)
    head, _, body = r.stdout.decode("latin-1").partition("\r\n\r\n")
    status = int(head.split(" ")[1]) if head.startswith("HTTP/") else 0
    return status, body


def conf(sock, extra_listen="listen 127.0.0.1:@PORT@;", location="", workers=1):
    return base_conf(f"""
    log_format addrs '$remote_addr|$remote_port|$server_addr|$server_port|$binary_remote_addr';
    server {{
        listen unix:{sock};
        {extra_listen}
        server_name localhost;
        access_log @PREFIX@/logs/addrs.log addrs;
        location / {{
            return 200 "ra=$remote_addr sa=$server_addr sp=$server_port rp=$remote_port\\n";
        }}
        {location}
    }}
""", main=f"worker_processes {workers};")


def test_requests_over_the_socket_and_the_address_variables(make_server, sockdir):
    sock = os.path.join(sockdir, "web.sock")
    srv = make_server(conf(sock))
    assert stat.S_ISSOCK(os.stat(sock).st_mode)
    assert stat.S_IMODE(os.stat(sock).st_mode) == 0o666
    status, body = curl_unix(sock)
    assert status == 200
    assert body == f"ra=unix: sa=unix:{sock} sp= rp=\n"
    log = srv.prefix / "logs" / "addrs.log"
    wait_until(lambda: log.exists() and log.read_text().strip(), 10, what="an access log line")
    assert log.read_text().splitlines()[0] == f"unix:||unix:{sock}||unix:"
    # The TCP listen beside it is untouched.
    r = http(srv.port, "/")
    assert r.status == 200 and r.body.startswith(b"ra=127.0.0.1 sa=127.0.0.1 sp=%d" % srv.port)


def test_file_removed_when_the_server_stops(make_server, sockdir):
    sock = os.path.join(sockdir, "web.sock")
    srv = make_server(conf(sock))
    assert curl_unix(sock)[0] == 200
    srv.signal(signal.SIGQUIT)
    assert srv.wait_exit(20) is not None
    assert not os.path.exists(sock)


def test_graceful_stop_removes_the_file_at_once(make_server, sockdir):
    # A download in flight finishes; the path is gone from the start of
    # the stop, so a new client is refused instead of waiting.
    sock = os.path.join(sockdir, "web.sock")
    srv = make_server(conf(sock, location="location /big { root @PREFIX@/www; limit_rate 400k; }"), start=False)
    (srv.prefix / "www" / "big").mkdir(parents=True)
    (srv.prefix / "www" / "big" / "f.bin").write_bytes(b"x" * (1200 * 1024))
    srv.start()
    out = srv.prefix / "got.bin"
    dl = subprocess.Popen(["curl", "-s", "--noproxy", "*", "--unix-socket", sock, "-o", str(out),
                           "http://localhost/big/f.bin"])
    try:
        wait_until(lambda: out.exists() and out.stat().st_size > 0, 10, what="the download under way")
        srv.signal(signal.SIGQUIT)
        wait_until(lambda: not os.path.exists(sock), 3, what="the socket file removed")
        assert dl.wait(30) == 0
    finally:
        if dl.poll() is None:
            dl.kill()
    assert out.stat().st_size == 1200 * 1024
    assert srv.wait_exit(20) is not None


def test_allow_unix_and_deny_all(make_server, sockdir):
    sock = os.path.join(sockdir, "web.sock")
    srv = make_server(conf(sock, location="""
        location /inner/ { allow unix:; deny all; root @PREFIX@/www; }
"""), start=False)
    (srv.prefix / "www" / "inner").mkdir(parents=True)
    (srv.prefix / "www" / "inner" / "x.txt").write_text("inner\n")
    srv.start()
    assert curl_unix(sock, "http://localhost/inner/x.txt") == (200, "inner\n")
    assert http(srv.port, "/inner/x.txt").status == 403


def test_real_ip_from_a_proxy_on_the_socket(make_server, sockdir):
    sock = os.path.join(sockdir, "web.sock")
    # At server level: realip then runs before the rewrite phase's return.
    srv = make_server(conf(sock, location="""
        set_real_ip_from unix:;
        real_ip_header X-Forwarded-For;
        location /real/ { return 200 "$remote_addr $realip_remote_addr\\n"; }
"""))
    assert curl_unix(sock, "http://localhost/real/", ["-H", "X-Forwarded-For: 192.0.2.7"]) == \
        (200, "192.0.2.7 unix:\n")
    # Over TCP the peer is not trusted: the header is not taken.
    r = http(srv.port, "/real/", headers={"X-Forwarded-For": "192.0.2.7"})
    assert r.body == b"127.0.0.1 127.0.0.1\n"


def test_proxy_pass_to_a_unix_listen_of_the_same_server(make_server, sockdir):
    sock = os.path.join(sockdir, "app.sock")
    srv = make_server(base_conf(f"""
    server {{
        listen unix:{sock};
        location / {{ return 200 "app saw $remote_addr $http_x_via\\n"; }}
    }}
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{
            proxy_pass http://unix:{sock}:;
            proxy_set_header X-Via front;
        }}
        location /var/ {{
            set $target "unix:{sock}:/rewritten";
            proxy_pass http://$target;   # a socket named by a variable
            proxy_set_header X-Via "var $host";
        }}
    }}
"""))
    r = http(srv.port, "/x")
    assert r.status == 200 and r.body == b"app saw unix: front\n"
    r = http(srv.port, "/var/y")
    assert r.status == 200 and r.body == b"app saw unix: var localhost\n"


def test_many_requests_with_two_workers(make_server, sockdir):
    # Every worker accepts on the one socket: each connection is served once.
    sock = os.path.join(sockdir, "web.sock")
    make_server(conf(sock, workers=2))
    urls = ["-o", "/dev/null", "http://localhost/"] * 200
    r = subprocess.run(["curl", "-s", "--noproxy", "*", "--unix-socket", sock,
                        "-w", "%{http_code}\n", "-Z", "--parallel-max", "20", *urls],
                       capture_output=True, text=True, timeout=60)
    assert r.stdout.split() == ["200"] * 200, r.stdout[-500:]


def test_reload_adds_and_drops_a_socket(make_server, sockdir):
    sock = os.path.join(sockdir, "web.sock")
    extra = os.path.join(sockdir, "extra.sock")
    srv = make_server(conf(sock))
    srv.reload(conf(sock, extra_listen=f"listen 127.0.0.1:@PORT@; listen unix:{extra};"))
    wait_until(lambda: os.path.exists(extra) and curl_unix(extra)[0] == 200, 10, what="the added socket")
    assert curl_unix(sock)[0] == 200
    srv.reload(conf(sock))
    wait_until(lambda: not os.path.exists(extra), 10, what="the dropped socket's file removed")
    assert curl_unix(sock)[0] == 200
    assert srv.alive()


def test_a_path_another_server_listens_on_fails_the_start(make_server, sockdir):
    sock = os.path.join(sockdir, "taken.sock")
    holder = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    holder.bind(sock)
    holder.listen(1)
    try:
        srv = make_server(conf(sock, extra_listen=""), start=False)
        srv.write_conf()
        r = subprocess.run(srv.command(), capture_output=True, text=True, timeout=60, cwd=srv.prefix)
        if r.returncode == 0:  # nginx (daemon) or a server that started: it must not have
            pytest.fail("started on a path another process listens on")
        text = r.stderr + srv.error_log_text()
        assert f"bind() to unix:{sock} failed (98: Address already in use)" in text, text
        assert os.path.exists(sock), "the other server's socket file stays"
    finally:
        holder.close()


def test_a_stale_socket_file_is_replaced(make_server, sockdir, nginx_only_skip):
    # A process that was killed leaves its socket file; nobody accepts on
    # it, so torii removes it and binds (nginx refuses to start here).
    sock = os.path.join(sockdir, "web.sock")
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(sock)
    dead.close()
    assert os.path.exists(sock)
    srv = make_server(conf(sock))
    assert curl_unix(sock)[0] == 200
    assert "removed the stale socket file" in srv.error_log_text()


@pytest.mark.parametrize("listen, message", [
    ("unix:", 'no path in the unix domain socket in "unix:" of the "listen" directive'),
    ("unix:/" + "x" * 120, "too long path in the unix domain socket"),
])
def test_bad_paths_are_refused(tmp_path, listen, message):
    (tmp_path / "logs").mkdir()
    c = tmp_path / "t.conf"
    c.write_text("events {}\nhttp {\n server { listen %s; }\n}\n" % listen)
    r = harness.cli(["-t", "-c", str(c)], prefix=tmp_path)
    assert r.returncode != 0
    assert message in r.stderr, r.stderr


def test_stream_server_on_a_socket(make_server, sockdir):
    # stream's listen takes unix: too: a session per connection, proxied
    # to a TCP server; its variables read as http's do.
    from stream_harness import ready_server
    sock = os.path.join(sockdir, "tcp.sock")
    srv = ready_server(make_server, f"""
        log_format s '$remote_addr|$remote_port|$server_addr|$server_port';
        server {{
            listen unix:{sock};
            return "$remote_addr|$server_addr|$server_port|\\n";
            access_log @PREFIX@/logs/s.log s;
        }}""", nports=1)
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.settimeout(10)
    c.connect(sock)
    got = b""
    while not got.endswith(b"\n"):
        chunk = c.recv(1024)
        if not chunk:
            break
        got += chunk
    c.close()
    assert got == f"unix:|unix:{sock}||\n".encode()
    log = srv.prefix / "logs" / "s.log"
    wait_until(lambda: log.exists() and log.read_text().strip(), 10, what="a stream log line")
    assert log.read_text().splitlines()[0] == f"unix:||unix:{sock}|"
