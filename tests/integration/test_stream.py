"""stream {}: TCP proxying (nginx's ngx_stream_* modules). Python TCP peers
(stream_backends.py) stand for the upstreams; the same tests run against
Debian's nginx with its stream module loaded."""

import os
import re
import signal
import socket
import threading
import time

import pytest

import harness
from harness import base_conf, wait_until
import stream_backends as sb
from stream_harness import (check_refused, check_t, connect, error_log_has, log_line, peers,  # noqa: F401
                            read_exactly, read_to_end, stream_conf)

LOG_FORMAT = ("log_format basic '$remote_addr:$remote_port $protocol $status $bytes_sent $bytes_received "
              "$session_time \"$upstream_addr\" \"$upstream_bytes_sent\" \"$upstream_bytes_received\" "
              "\"$upstream_connect_time\" $connection $server_port [$time_local]';")


def test_bytes_pass_both_ways_exactly(make_server, peers):
    backend = peers("echo")
    server = make_server(stream_conf(f"""
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass 127.0.0.1:{backend.port};
        }}"""))
    payload = os.urandom(3 * 1024 * 1024 + 17)
    with connect(server.port, timeout=30) as s:
        # Written from a thread while the echo is read: the proxy's buffers
        # are bounded, so neither side may wait for the other to finish.
        writer = threading.Thread(target=s.sendall, args=(payload,))
        writer.start()
        echoed = read_exactly(s, len(payload))
        writer.join()
    assert echoed == payload


def test_half_close_is_passed_on(make_server, peers):
    backend = peers("echo", trailer=b"bye after your FIN\n")
    server = make_server(stream_conf(f"""
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass 127.0.0.1:{backend.port};
            proxy_half_close on;
        }}"""))
    with connect(server.port) as s:
        s.sendall(b"hello\n")
        assert read_exactly(s, 6) == b"hello\n"
        s.sendall(b"last words\n")
        s.shutdown(socket.SHUT_WR)
        # The backend sees the FIN, then still answers: that direction flows.
        assert read_to_end(s) == b"last words\nbye after your FIN\n"


def test_dead_upstream_fails_over_to_live_one(make_server, peers):
    dead = peers("DeadPort")
    live = peers("echo", "live")
    server = make_server(stream_conf(f"""
        {LOG_FORMAT}
        upstream pair {{
            server 127.0.0.1:{dead.port} max_fails=0;  # never set aside: every other session tries it
            server 127.0.0.1:{live.port};
        }}
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass pair;
            access_log @PREFIX@/logs/access.log basic;
        }}"""))
    ports = []
    for _ in range(4):
        with connect(server.port) as s:
            assert read_exactly(s, 5) == b"live\n"
            ports.append(s.getsockname()[1])
    lines = [log_line(server, p) for p in ports]
    error_log_has(server, rf"connect\(\) failed \(111: Connection refused\) while connecting to upstream, "
                          rf"client: 127\.0\.0\.1, server: 127\.0\.0\.1:{server.port}, upstream: \"127\.0\.0\.1:{dead.port}\"")
    tried_both = [l for l in lines if f'"127.0.0.1:{dead.port}, 127.0.0.1:{live.port}"' in l]
    assert tried_both, lines
    assert all(" 200 " in l for l in lines), lines


def test_connect_timeout_is_502(make_server, peers):
    hole = peers("BlackHole")
    server = make_server(stream_conf(f"""
        {LOG_FORMAT}
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass 127.0.0.1:{hole.port};
            proxy_connect_timeout 1s;
            access_log @PREFIX@/logs/access.log basic;
        }}"""))
    with connect(server.port) as s:
        started = time.monotonic()
        assert read_to_end(s) == b""
        assert time.monotonic() - started >= 0.9
        line = log_line(server, s)
    error_log_has(server, r"upstream timed out \(110: Connection timed out\) while connecting to upstream")
    assert " 502 " in line, line


def test_idle_timeout_closes_both_sides(make_server, peers):
    quiet = peers("silent")
    server = make_server(stream_conf(f"""
        {LOG_FORMAT}
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass 127.0.0.1:{quiet.port};
            proxy_timeout 1s;
            access_log @PREFIX@/logs/access.log basic;
        }}"""))
    with connect(server.port) as s:
        s.sendall(b"anyone there?")
        started = time.monotonic()
        assert read_to_end(s) == b""
        assert time.monotonic() - started >= 0.9
        line = log_line(server, s)
    assert " 200 0 13 " in line, line


def test_access_log_line(make_server, peers):
    backend = peers("echo", "b1")
    server = make_server(stream_conf(f"""
        {LOG_FORMAT}
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass 127.0.0.1:{backend.port};
            access_log @PREFIX@/logs/access.log basic;
        }}"""))
    with connect(server.port) as s:
        assert read_exactly(s, 3) == b"b1\n"
        s.sendall(b"0123456789")
        assert read_exactly(s, 10) == b"0123456789"
        s.shutdown(socket.SHUT_WR)
        assert read_to_end(s) == b""
        line = log_line(server, s)
    m = re.fullmatch(r'127\.0\.0\.1:\d+ TCP 200 13 10 (\d+\.\d{3}) "127\.0\.0\.1:(\d+)" "10" "13" "(\d+\.\d{3})" '
                     r'(\d+) (\d+) \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\]', line)
    assert m, line
    assert int(m.group(2)) == backend.port
    assert int(m.group(5)) == server.port


def test_access_log_needs_a_format(make_server):
    check_refused(make_server, """
        server {
            listen 127.0.0.1:@PORT@;
            return "x";
            access_log @PREFIX@/logs/access.log;
        }""", "log format is not specified")


def test_deny_closes_with_403_and_allow_passes(make_server, peers):
    backend = peers("echo", "ok")
    server = make_server(stream_conf(f"""
        {LOG_FORMAT}
        server {{
            listen 127.0.0.1:@PORT0@;
            deny 127.0.0.1;
            allow all;
            proxy_pass 127.0.0.1:{backend.port};
            access_log @PREFIX@/logs/access.log basic;
        }}
        server {{
            listen 127.0.0.1:@PORT1@;
            allow 127.0.0.0/8;
            deny all;
            proxy_pass 127.0.0.1:{backend.port};
            access_log @PREFIX@/logs/access.log basic;
        }}"""), nports=2)
    with connect(server.ports[0]) as s:
        assert read_to_end(s) == b""
        line = log_line(server, s)
    assert " 403 " in line, line
    error_log_has(server, rf"access forbidden by rule while initializing session, client: 127\.0\.0\.1, "
                          rf"server: 127\.0\.0\.1:{server.ports[0]}")
    with connect(server.ports[1]) as s:
        assert read_exactly(s, 3) == b"ok\n"


def test_return_sends_text_and_closes(make_server):
    server = make_server(stream_conf("""
        server {
            listen 127.0.0.1:@PORT@;
            set $greeting "hello";
            return "$greeting $remote_addr\n";
        }"""))
    with connect(server.port) as s:
        assert read_to_end(s) == b"hello 127.0.0.1\n"


def test_hash_balancer_keeps_a_key_on_one_server(make_server, peers):
    a = peers("echo", "a")
    b = peers("echo", "b")
    server = make_server(stream_conf(f"""
        upstream two {{
            hash $remote_addr;
            server 127.0.0.1:{a.port};
            server 127.0.0.1:{b.port};
        }}
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass two;
        }}"""))
    seen = set()
    for _ in range(6):
        with connect(server.port) as s:
            seen.add(read_exactly(s, 2))
    assert len(seen) == 1, seen


def test_round_robin_weights(make_server, peers):
    a = peers("echo", "a")
    b = peers("echo", "b")
    server = make_server(stream_conf(f"""
        upstream two {{
            server 127.0.0.1:{a.port} weight=3;
            server 127.0.0.1:{b.port};
        }}
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass two;
        }}"""), extra_g=None)
    got = []
    for _ in range(8):
        with connect(server.port) as s:
            got.append(read_exactly(s, 2))
    assert got.count(b"a\n") == 6 and got.count(b"b\n") == 2, got


def test_reload_keeps_open_session(make_server, peers):
    old = peers("echo", "old")
    new = peers("echo", "new")
    conf = """
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass 127.0.0.1:{port};
        }}"""
    server = make_server(stream_conf(conf.format(port=old.port)))
    with connect(server.port) as s:
        assert read_exactly(s, 4) == b"old\n"
        server.reload(stream_conf(conf.format(port=new.port)))

        def new_config_serves():
            with connect(server.port) as t:
                return read_exactly(t, 4) == b"new\n"
        wait_until(new_config_serves, 10, interval=0.1, what="the reloaded config")
        # The session opened before the reload still carries bytes.
        s.sendall(b"still here\n")
        assert read_exactly(s, 11) == b"still here\n"


@pytest.mark.parametrize("body, message", [
    ("server { listen 127.0.0.1:@PORT@; root /tmp; proxy_pass 127.0.0.1:1; }",
     '"root" directive is not allowed here'),
    ("server { listen 127.0.0.1:@PORT@; proxy_pass 127.0.0.1; }",
     'no port in upstream "127.0.0.1"'),
    ("upstream u { server 127.0.0.1:1; } upstream u { server 127.0.0.1:2; }",
     'duplicate upstream "u"'),
    ("server { listen 127.0.0.1:@PORT@; location / { } }",
     '"location" directive is not allowed here'),
    ("server { listen 127.0.0.1:@PORT@; proxy_pass 127.0.0.1:1; proxy_timeout soon; }",
     '"proxy_timeout" directive invalid value'),
    ("server { listen 127.0.0.1:@PORT@; return \"$nonesuch\"; }",
     'unknown "nonesuch" variable'),
    ("server { listen 127.0.0.1:@PORT@ proxy_protocol; set_real_ip_from 10.0.0.0/99; return x; }",
     'host not found in set_real_ip_from "10.0.0.0/99"'),
])
def test_bad_configs_are_refused(make_server, body, message):
    check_refused(make_server, body, message)


def test_good_config_passes_t(make_server):
    p = check_t(make_server, stream_conf("""
        log_format basic '$remote_addr $status';
        proxy_connect_timeout 2s;
        tcp_nodelay on;
        upstream backends {
            least_conn;
            server 127.0.0.1:9001 weight=2 max_fails=3 fail_timeout=30s;
            server 127.0.0.1:9002 backup;
            server 127.0.0.1:9003 down;
        }
        server {
            listen 127.0.0.1:@PORT@ reuseport backlog=128 so_keepalive=on;
            proxy_pass backends;
            proxy_timeout 5m;
            proxy_next_upstream on;
            proxy_next_upstream_tries 2;
            proxy_next_upstream_timeout 10s;
            proxy_buffer_size 32k;
            proxy_protocol on;
            proxy_socket_keepalive on;
            preread_buffer_size 16k;
            preread_timeout 10s;
            resolver 127.0.0.1 valid=30s;
            resolver_timeout 5s;
            error_log @PREFIX@/logs/error.log;
            access_log @PREFIX@/logs/stream.log basic buffer=4k flush=1s;
        }"""))
    assert p.returncode == 0, p.stdout + p.stderr


def test_proxy_protocol_header_reaches_upstream(make_server):
    got = []

    def handler(conn):
        data = b""
        while b"\r\n" not in data:
            chunk = conn.recv(1024)
            if not chunk:
                break
            data += chunk
        got.append(data.split(b"\r\n")[0])
        conn.sendall(b"seen\n")

    backend = sb.TcpServer(handler)
    try:
        server = make_server(stream_conf(f"""
            server {{
                listen 127.0.0.1:@PORT@;
                proxy_pass 127.0.0.1:{backend.port};
                proxy_protocol on;
            }}"""))
        with connect(server.port) as s:
            assert read_exactly(s, 5) == b"seen\n"
            client_port = s.getsockname()[1]
        assert f"PROXY TCP4 127.0.0.1 127.0.0.1 {client_port} {server.port}".encode() in got, got
    finally:
        backend.close()


def test_listen_proxy_protocol_reads_the_header(make_server, peers):
    backend = peers("echo")
    server = make_server(stream_conf(f"""
        log_format pp '$proxy_protocol_addr:$proxy_protocol_port $remote_addr:$remote_port';
        server {{
            listen 127.0.0.1:@PORT0@ proxy_protocol;
            return "$proxy_protocol_addr $proxy_protocol_port $proxy_protocol_server_addr $proxy_protocol_server_port\\n";
        }}
        server {{
            listen 127.0.0.1:@PORT1@ proxy_protocol;
            proxy_pass 127.0.0.1:{backend.port};
            access_log @PREFIX@/logs/access.log pp;
        }}"""), nports=2)
    with connect(server.ports[0]) as s:
        s.sendall(b"PROXY TCP4 192.0.2.1 192.0.2.2 1234 80\r\n")
        assert read_to_end(s) == b"192.0.2.1 1234 192.0.2.2 80\n"
    with connect(server.ports[1]) as s:
        # The bytes after the header are the client's: they reach the upstream.
        s.sendall(b"PROXY TCP4 198.51.100.7 192.0.2.2 4321 443\r\nafter the header")
        assert read_exactly(s, 16) == b"after the header"
        port = s.getsockname()[1]
    wait_until(lambda: server.access_log.exists() and
               f"198.51.100.7:4321 127.0.0.1:{port}" in server.access_log.read_text(), 10, what="the log line")


def test_set_real_ip_from_takes_the_proxy_protocol_client(make_server):
    """set_real_ip_from (ngx_stream_realip_module): a trusted peer's PROXY
    header names the client, for $remote_addr and allow/deny; an untrusted
    peer's does not."""
    server = make_server(stream_conf("""
        server {
            listen 127.0.0.1:@PORT0@ proxy_protocol;
            set_real_ip_from 127.0.0.0/8;
            deny 192.0.2.66;
            return "$remote_addr:$remote_port $realip_remote_addr\\n";
        }
        server {
            listen 127.0.0.1:@PORT1@ proxy_protocol;
            set_real_ip_from 10.0.0.0/8;
            return "$remote_addr $realip_remote_addr\\n";
        }"""), nports=2)
    with connect(server.ports[0]) as s:
        s.sendall(b"PROXY TCP4 192.0.2.1 192.0.2.2 1234 80\r\n")
        assert read_to_end(s) == b"192.0.2.1:1234 127.0.0.1\n"
    with connect(server.ports[0]) as s:  # the client's address is what allow/deny judge
        s.sendall(b"PROXY TCP4 192.0.2.66 192.0.2.2 1234 80\r\n")
        assert read_to_end(s) == b""
    with connect(server.ports[1]) as s:
        s.sendall(b"PROXY TCP4 192.0.2.1 192.0.2.2 1234 80\r\n")
        assert read_to_end(s) == b"127.0.0.1 127.0.0.1\n"


def test_proxy_pass_with_variable(make_server, peers):
    a = peers("echo", "a")
    server = make_server(stream_conf(f"""
        upstream named {{ server 127.0.0.1:{a.port}; }}
        server {{
            listen 127.0.0.1:@PORT0@;
            set $target named;
            proxy_pass $target;
        }}
        server {{
            listen 127.0.0.1:@PORT1@;
            set $target 127.0.0.1:{a.port};
            proxy_pass $target;
        }}"""), nports=2)
    for port in server.ports:
        with connect(port) as s:
            assert read_exactly(s, 2) == b"a\n"


def test_slow_upstream_holds_back_the_client(make_server):
    """An upstream that reads nothing: the proxy must stop reading the
    client once its buffer and the sockets' are full, not take in all the
    client sends."""
    stop = threading.Event()

    def never_reads(conn):
        stop.wait(30)

    backend = sb.TcpServer(never_reads)
    try:
        server = make_server(stream_conf(f"""
            server {{
                listen 127.0.0.1:@PORT@;
                proxy_pass 127.0.0.1:{backend.port};
            }}"""))
        with connect(server.port) as s:
            s.setblocking(False)
            chunk = b"x" * 65536
            sent = 0
            idle_since = time.monotonic()
            # Send until nothing more is taken for a second (or 256 MB).
            while sent < 256 * 1024 * 1024 and time.monotonic() - idle_since < 1.0:
                try:
                    sent += s.send(chunk)
                    idle_since = time.monotonic()
                except BlockingIOError:
                    time.sleep(0.01)
        # Kernel socket buffers on loopback (a few MB each way) plus one
        # proxy_buffer_size: far below what an unbounded proxy would take.
        assert sent < 64 * 1024 * 1024, sent
    finally:
        stop.set()
        backend.close()


def test_graceful_stop_waits_for_open_session(make_server, peers):
    backend = peers("echo", "up")
    server = make_server(stream_conf(f"""
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass 127.0.0.1:{backend.port};
        }}"""))
    with connect(server.port) as s:
        assert read_exactly(s, 3) == b"up\n"
        server.signal(signal.SIGQUIT)
        # The listening socket closes; the session goes on.
        wait_until(lambda: not harness.connectable(server.port), 10, interval=0.05, what="the listener to close")
        s.sendall(b"ping\n")
        assert read_exactly(s, 5) == b"ping\n"
        assert server.alive()
    assert server.wait_exit(10) is not None


def test_proxy_pass_variable_host_goes_to_the_resolver(make_server, peers):
    from dns_responder import DnsResponder
    dns = DnsResponder()
    try:
        backend = peers("echo", "resolved")
        dns.set("app.test", ["127.0.0.1"], ttl=60)
        server = make_server(stream_conf(f"""
            server {{
                listen 127.0.0.1:@PORT0@;
                resolver 127.0.0.1:{dns.port} ipv6=off;
                resolver_timeout 2s;
                set $target app.test:{backend.port};
                proxy_pass $target;
            }}
            log_format st '$remote_addr:$remote_port $status';
            server {{
                listen 127.0.0.1:@PORT1@;
                resolver 127.0.0.1:{dns.port} ipv6=off;
                resolver_timeout 2s;
                set $target nowhere.test:{backend.port};
                proxy_pass $target;
                access_log @PREFIX@/logs/access.log st;
            }}
            server {{
                listen 127.0.0.1:@PORT2@;
                set $target app.test:{backend.port};
                proxy_pass $target;
                access_log @PREFIX@/logs/access.log st;
            }}"""), nports=3)
        with connect(server.ports[0]) as s:
            assert read_exactly(s, 9) == b"resolved\n"
        # A name that does not resolve, or no resolver to ask: nginx's stream
        # status is 500 for both (an internal error, not the upstream's).
        with connect(server.ports[1]) as s:
            assert read_to_end(s) == b""
            assert log_line(server, s).endswith(" 500")
        error_log_has(server, r"nowhere\.test could not be resolved \(3: Host not found\)")
        with connect(server.ports[2]) as s:
            assert read_to_end(s) == b""
            assert log_line(server, s).endswith(" 500")
        error_log_has(server, r"no resolver defined to resolve app\.test")
    finally:
        dns.stop()


def test_include_inside_stream(make_server, peers, tmp_path):
    backend = peers("echo", "inc")
    part = tmp_path / "stream-upstreams.conf"
    part.write_text(f"upstream included {{ server 127.0.0.1:{backend.port}; }}\n")
    server = make_server(stream_conf(f"""
        include {part};
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass included;
        }}"""))
    with connect(server.port) as s:
        assert read_exactly(s, 4) == b"inc\n"


def test_address_both_http_and_stream_is_refused(make_server, nginx_only_skip):
    """torii opens every address with SO_REUSEPORT, so an address both
    blocks name would silently share its connections: refused at load
    (nginx fails to bind it at start instead)."""
    check_refused(make_server, None, "is an http and a stream listen address",
                  conf=base_conf("server { listen 127.0.0.1:@PORT@; }",
                                 main="stream { server { listen 127.0.0.1:@PORT@; return x; } }"))


def test_upstream_first_byte_and_session_time(make_server, peers):
    """$upstream_first_byte_time: from the try's start to the upstream's
    first byte (here its greeting); $upstream_session_time: to the end of
    the upstream connection (held here for 0.4 s)."""
    backend = peers("echo", "b1")
    server = make_server(stream_conf(f"""
        log_format times '$remote_addr:$remote_port [$upstream_first_byte_time] [$upstream_session_time] '
                         '[$upstream_connect_time]';
        server {{
            listen 127.0.0.1:@PORT@;
            proxy_pass 127.0.0.1:{backend.port};
            access_log @PREFIX@/logs/access.log times;
        }}"""))
    with connect(server.port) as s:
        assert read_exactly(s, 3) == b"b1\n"
        time.sleep(0.4)
        s.shutdown(socket.SHUT_WR)
        assert read_to_end(s) == b""
        line = log_line(server, s)
    m = re.fullmatch(r"127\.0\.0\.1:\d+ \[(\d+\.\d{3})\] \[(\d+\.\d{3})\] \[(\d+\.\d{3})\]", line)
    assert m, line
    first_byte, session, connect_time = (float(g) for g in m.groups())
    assert connect_time <= first_byte < 0.4 <= session < 10, line


def test_set_overrides_a_map_variable_from_there_on(make_server):
    """`set $mapped ...` in a server: the map's value before the set ran, the
    set's value after it and in what reads it; a server where no set ran
    reads the map (and an unset variable is empty)."""
    server = make_server(stream_conf("""
        map 0 $mapped {
            default "original";
        }
        server {
            listen 127.0.0.1:@PORT0@;
            set $before $mapped;
            set $mapped "new";
            return "$mapped:$before";
        }
        server {
            listen 127.0.0.1:@PORT1@;
            return "$mapped:[$before]";
        }"""), nports=2)
    with connect(server.ports[0]) as s:
        assert read_to_end(s) == b"new:original"
    with connect(server.ports[1]) as s:
        assert read_to_end(s) == b"original:[]"


def test_map_value_reads_the_regex_groups(make_server):
    """A stream map's regex line may give its groups as the value: $1, or a
    (?<name>) group by its name."""
    server = make_server(stream_conf("""
        map $server_port $x {
            default                      default;
            ~^(@PORT0@)$                 num-$1;
            ~^(?<named>@PORT1@)$         name-$named;
        }
        server {
            listen 127.0.0.1:@PORT0@;
            listen 127.0.0.1:@PORT1@;
            listen 127.0.0.1:@PORT2@;
            return $x;
        }"""), nports=3)
    for port, expected in zip(server.ports, (f"num-{server.ports[0]}", f"name-{server.ports[1]}", "default")):
        with connect(port) as s:
            assert read_to_end(s).decode() == expected


def test_every_access_log_file_is_made_at_start(make_server):
    """A stream-level access_log that every server overrides (access_log off
    or its own) still names a file: it exists once the server has started,
    as nginx opens every log it reads."""
    server = make_server(stream_conf("""
        log_format plain '$remote_addr';
        access_log @PREFIX@/logs/stream-level.log plain;
        server {
            listen 127.0.0.1:@PORT@;
            access_log off;
            return "x";
        }"""))
    with connect(server.port) as s:
        assert read_to_end(s) == b"x"
    log = server.prefix / "logs" / "stream-level.log"
    assert log.exists() and log.read_text() == ""


def test_access_log_path_with_variables(make_server):
    """Variables in an access_log path name a file per session, rendered
    when the session ends (absolute, or relative to the prefix)."""
    server = make_server(stream_conf("""
        log_format plain '$remote_addr $bytes_sent';
        server {
            listen 127.0.0.1:@PORT0@;
            access_log @PREFIX@/logs/varlog_$bytes_sent.log plain;
            return "hello";
        }
        server {
            listen 127.0.0.1:@PORT1@;
            access_log logs/port_$server_port.log plain;
            return "abc";
        }"""), nports=2)
    for port in server.ports:
        with connect(port) as s:
            read_to_end(s)
    first = server.prefix / "logs" / "varlog_5.log"
    second = server.prefix / "logs" / f"port_{server.ports[1]}.log"
    wait_until(lambda: first.exists() and second.exists(), 10, what="the per-session log files")
    # (the harness's readiness probe may have logged a session there too)
    assert set(first.read_text().splitlines()) == {"127.0.0.1 5"}
    assert set(second.read_text().splitlines()) == {"127.0.0.1 3"}
    assert not (server.prefix / "logs" / "varlog_$bytes_sent.log").exists()


def test_buffered_access_log_path_cannot_have_variables(make_server):
    check_refused(make_server, """
        log_format plain '$remote_addr';
        server {
            listen 127.0.0.1:@PORT@;
            access_log @PREFIX@/logs/$server_port.log plain buffer=4k;
            return "x";
        }""", "buffered logs cannot have variables in name")
