"""Logs for machines: $upstream_connect_time / $upstream_header_time /
$upstream_response_time in nginx's formats, access_log if=, the built-in
json format (torii's), and syslog for access_log and error_log (RFC 3164
framing as nginx sends it), read by a Python datagram listener."""

import json
import os
import re
import socket
import threading

import pytest

import harness
from slow_backend import Backend


@pytest.fixture
def slow_backend():
    b = Backend("slow", delay=0.25)  # answers "slow", each request 0.25 s late
    yield b
    b.close()


@pytest.fixture
def refused_port():
    lease = harness.PortLease()
    yield lease.port
    lease.release()


def read_log_lines(path, n, timeout=10):
    def ready():
        if not path.exists():
            return None
        lines = path.read_text().splitlines()
        return lines if len(lines) >= n else None
    return harness.wait_until(ready, timeout, what=f"{n} lines in {path}")


TIME = r"\d+\.\d{3}"


def test_upstream_times_across_a_retry(make_server, slow_backend, refused_port):
    server = make_server(harness.base_conf(f"""
    log_format times '$upstream_addr|$upstream_status|$upstream_connect_time|'
                     '$upstream_header_time|$upstream_response_time|$request_time';
    upstream app {{
        server 127.0.0.1:{refused_port};
        server 127.0.0.1:{slow_backend.port};
    }}
    server {{
        listen 127.0.0.1:@PORT@;
        access_log @PREFIX@/logs/times.log times;
        location / {{ proxy_pass http://app; }}
        location = /local {{ return 200 "here"; }}
    }}""", access_log=False))
    r = harness.http(server.port, "/")
    assert r.status == 200 and r.body == b"slow"
    assert harness.http(server.port, "/local").status == 200
    lines = read_log_lines(server.prefix / "logs" / "times.log", 2)
    addr, status, connect, header, response, request = lines[0].split("|")
    assert addr == f"127.0.0.1:{refused_port}, 127.0.0.1:{slow_backend.port}"
    assert status == "502, 200"
    # The refused try never connected nor got a head: "-"; the second did.
    m = re.fullmatch(rf"-, ({TIME})", connect)
    assert m and float(m.group(1)) < 0.2, connect
    m = re.fullmatch(rf"-, ({TIME})", header)
    assert m and 0.2 <= float(m.group(1)) < 5, header
    m = re.fullmatch(rf"({TIME}), ({TIME})", response)
    assert m and float(m.group(2)) >= float(header.split(", ")[1]), response
    assert re.fullmatch(TIME, request) and float(request) >= 0.2
    # No upstream at all: every upstream variable is "-".
    assert lines[1].split("|")[:5] == ["-"] * 5


def test_access_log_if(make_server):
    server = make_server(harness.base_conf("""
    map $status $loggable {
        ~^[23]  0;
        default 1;
    }
    map $arg_log $forced {
        default "";
        yes     "yes";
    }
    server {
        listen 127.0.0.1:@PORT@;
        access_log @PREFIX@/logs/errors.log combined if=$loggable;
        access_log @PREFIX@/logs/forced.log combined if=$forced;
        location / { return 200 "ok"; }
        location /missing { return 404; }
    }""", access_log=False))
    for path in ("/a", "/missing", "/b?log=yes", "/missing?log=no", "/missing/end?log=yes"):
        harness.http(server.port, path)
    # The last request goes to both files: once it is there, so is everything before it.
    errors = read_log_lines(server.prefix / "logs" / "errors.log", 3)
    forced = read_log_lines(server.prefix / "logs" / "forced.log", 2)
    assert [l.split('"')[1] for l in errors] == ["GET /missing HTTP/1.1", "GET /missing?log=no HTTP/1.1",
                                                "GET /missing/end?log=yes HTTP/1.1"]
    assert [l.split('"')[1] for l in forced] == ["GET /b?log=yes HTTP/1.1", "GET /missing/end?log=yes HTTP/1.1"]


def test_access_log_if_unknown_variable_is_a_config_error(tmp_path):
    (tmp_path / "logs").mkdir()
    conf = harness.base_conf("""server { listen 127.0.0.1:1; access_log logs/x.log combined if=$nope; }""")
    (tmp_path / "t.conf").write_text(conf.replace("@PREFIX@", str(tmp_path)))
    r = harness.cli(["-t", "-c", str(tmp_path / "t.conf")], prefix=tmp_path)
    assert r.returncode != 0
    assert 'unknown "nope" variable' in r.stderr, r.stderr


# ---------------------------------------------------------------------------
# syslog


class DatagramListener:
    """A syslog server: a UDP socket or a unix datagram socket that keeps what it receives."""

    def __init__(self, path=None):
        if path:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self.sock.bind(str(path))
            os.chmod(str(path), 0o666)
            self.address = f"unix:{path}"
        else:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.sock.bind(("127.0.0.1", 0))
            self.address = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self.sock.settimeout(0.2)
        self.messages = []
        self.lock = threading.Lock()
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while self.running:
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            with self.lock:
                self.messages.append(data.decode("latin-1"))

    def wait_for(self, pattern, timeout=10):
        def found():
            with self.lock:
                return next((m for m in self.messages if re.search(pattern, m)), None)
        return harness.wait_until(found, timeout, what=pattern)

    def close(self):
        self.running = False
        self.thread.join()
        self.sock.close()


# <PRI>Mmm dd hh:mm:ss HOST TAG: MSG -- "dd" is space-padded, no newline at the end.
SYSLOG_HEAD = r"^<(\d+)>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d "


@pytest.mark.parametrize("transport", ["udp", "unix"])
def test_access_log_to_syslog(make_server, tmp_path, transport):
    listener = DatagramListener(tmp_path / "log.sock" if transport == "unix" else None)
    try:
        server = make_server(harness.base_conf(f"""
        log_format plain '$request_method $uri $status';
        server {{
            listen 127.0.0.1:@PORT@;
            access_log syslog:server={listener.address},facility=local3,tag=web_1,severity=notice plain;
            access_log syslog:server={listener.address},nohostname,tag=bare plain;
            location / {{ return 200 "ok"; }}
        }}""", access_log=False))
        harness.http(server.port, "/hello")
        host = socket.gethostname()
        m = listener.wait_for(r"web_1: GET /hello 200$")
        # local3 (19) * 8 + notice (5) = 157
        assert re.match(SYSLOG_HEAD + re.escape(host) + r" web_1: GET /hello 200$", m), m
        assert m.startswith("<157>"), m
        m = listener.wait_for(r"bare: GET /hello 200$")
        # Defaults: local7 (23) * 8 + info (6) = 190; nohostname drops the host.
        assert re.match(SYSLOG_HEAD + r"bare: GET /hello 200$", m) and m.startswith("<190>"), m
    finally:
        listener.close()


def test_error_log_to_syslog(make_server, tmp_path):
    listener = DatagramListener()
    try:
        conf = harness.base_conf("""
        server {
            listen 127.0.0.1:@PORT@;
            location / { root @PREFIX@/nothing; }
        }""", access_log=False)
        conf = conf.replace("error_log @PREFIX@/logs/error.log notice;",
                            f"error_log syslog:server={listener.address},tag=errs error;")
        server = make_server(conf)
        assert harness.http(server.port, "/missing.html").status == 404
        m = listener.wait_for(r"missing\.html")
        # local7 * 8 + error (3) = 187; the message is the error log's line.
        assert re.match(SYSLOG_HEAD + re.escape(socket.gethostname()) +
                        r" errs: \d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[error\] \d+#\d+: \*?\d* ?open\(\) \"[^\"]*/nothing/missing\.html\" failed",
                        m), m
        assert m.startswith("<187>"), m
    finally:
        listener.close()


def test_error_log_to_a_file_and_syslog(make_server):
    """The common pair: the file stays and syslog gets the lines too."""
    listener = DatagramListener()
    try:
        conf = harness.base_conf("""
        server {
            listen 127.0.0.1:@PORT@;
            location / { root @PREFIX@/nothing; }
        }""", access_log=False, main=f"error_log syslog:server={listener.address},tag=errs error;")
        server = make_server(conf)
        assert harness.http(server.port, "/both-places.html").status == 404
        listener.wait_for(r"both-places\.html")
        harness.wait_until(lambda: "both-places.html" in server.error_log_text(), 10, what="the file's line")
    finally:
        listener.close()


@pytest.mark.parametrize("arg,message", [
    ("syslog:facility=local3", "no syslog server specified"),
    ("syslog:server=127.0.0.1,facility=nope", 'unknown syslog facility "nope"'),
    ("syslog:server=127.0.0.1,severity=loud", 'unknown syslog severity "loud"'),
    ("syslog:server=127.0.0.1,tag=a-b", 'syslog "tag" only allows alphanumeric characters and underscore'),
    ("syslog:server=127.0.0.1,bogus", 'unknown syslog parameter "bogus"'),
])
def test_bad_syslog_target_is_a_config_error(tmp_path, arg, message):
    (tmp_path / "logs").mkdir()
    conf = harness.base_conf(f"server {{ listen 127.0.0.1:1; access_log {arg}; }}")
    (tmp_path / "t.conf").write_text(conf.replace("@PREFIX@", str(tmp_path)))
    r = harness.cli(["-t", "-c", str(tmp_path / "t.conf")], prefix=tmp_path)
    assert r.returncode != 0
    assert message in r.stderr, r.stderr


# ---------------------------------------------------------------------------
# the built-in json format (torii's own)


def test_builtin_json_format(make_server, nginx_only_skip):
    server = make_server(harness.base_conf("""
    server {
        listen 127.0.0.1:@PORT@;
        access_log @PREFIX@/logs/json.log json;
        location / { return 200 "ok"; }
    }""", access_log=False))
    harness.http(server.port, '/x?a=%22q%22', headers=[("User-Agent", 'ua "quoted"\\ \tx'),
                                                  ("Referer", "http://r/")])
    line = read_log_lines(server.prefix / "logs" / "json.log", 1)[0]
    rec = json.loads(line)
    assert rec["request_uri"] == '/x?a=%22q%22'
    assert rec["http_user_agent"] == 'ua "quoted"\\ \tx'
    assert rec["status"] == 200 and isinstance(rec["status"], int)
    assert rec["body_bytes_sent"] == 2
    assert rec["request_method"] == "GET" and rec["server_protocol"] == "HTTP/1.1"
    assert rec["http_referer"] == "http://r/"
    assert isinstance(rec["request_time"], float)
    assert rec["upstream_addr"] == "" and rec["remote_addr"] == "127.0.0.1"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", rec["time"])
