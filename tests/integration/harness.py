"""Helpers for the integration tests: start the real binary on a config the
test writes, find free ports, and talk raw HTTP/1.1 over sockets.

The binary comes from the environment (TORII_BIN). When it is nginx, the
same tests run against nginx, which is how a test is checked before torii
can pass it: every config written here must also be valid for nginx 1.22.
"""

import fcntl
import os
import re
import signal
import socket
import subprocess
import time
from pathlib import Path


def _default_binary():
    source = os.environ.get("TORII_SOURCE_DIR")
    if source:
        for build in ("build", "build-release", "build-debug"):
            candidate = Path(source) / build / "torii"
            if candidate.exists():
                return str(candidate)
    return ""


BIN = os.environ.get("TORII_BIN") or _default_binary()
IS_NGINX = os.path.basename(BIN).startswith("nginx")
SOURCE_DIR = os.environ.get("TORII_SOURCE_DIR", str(Path(__file__).resolve().parents[2]))

# Bounded waits. Generous, because the machine may be busy with other tests
# (a shared CI machine has been seen to stall new processes for a minute and
# more); a healthy run never waits for them to expire, and a process that
# exits ends the wait at once.
START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0


def wait_until(predicate, timeout, interval=0.02, what="condition"):
    """Polls `predicate` until it returns a truthy value; returns that value.
    Raises AssertionError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


# ---------------------------------------------------------------------------
# Ports

_LOCK_DIR = Path("/tmp/torii-it-ports")


class PortLease:
    """A port the OS handed out, held under a lock file so that two test
    processes running in parallel never use the same one (servers that use
    SO_REUSEPORT could otherwise bind the same port and share connections)."""

    def __init__(self):
        _LOCK_DIR.mkdir(exist_ok=True)
        for _ in range(50):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            finally:
                s.close()
            fd = os.open(_LOCK_DIR / f"{port}.lock", os.O_CREAT | os.O_RDWR, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self.port = port
            self._fd = fd
            return
        raise RuntimeError("could not lease a free port")

    def release(self):
        if self._fd is not None:
            os.close(self._fd)  # closing drops the lock
            self._fd = None


# ---------------------------------------------------------------------------
# Configs

MIME_TYPES = """
    types {
        text/html                html htm;
        text/css                 css;
        text/plain               txt;
        image/png                png;
        application/json         json;
        application/javascript   js;
    }
    default_type application/octet-stream;
"""


def base_conf(http="", main="", events="", error_level="notice", access_log=True):
    """A whole config: pid and logs inside the server's prefix, an events
    block, MIME types, and `http` placed inside the http block.
    Placeholders (see Server.render): @PREFIX@, @PORT@, @PORT0@, @PORT1@..."""
    access = "access_log @PREFIX@/logs/access.log;" if access_log else "access_log off;"
    return f"""# written by the integration tests
pid @PREFIX@/logs/server.pid;
error_log @PREFIX@/logs/error.log {error_level};
{main}
events {{
    worker_connections 1024;
    {events}
}}
http {{
    {access}
{MIME_TYPES}
{http}
}}
"""


# ---------------------------------------------------------------------------
# Processes


def cli(args, prefix=None, timeout=60, extra_g=None):
    """Runs the binary once (e.g. -t, -v, -s stop) and returns the
    CompletedProcess with text stdout/stderr."""
    cmd = [BIN]
    if prefix is not None:
        cmd += ["-p", str(prefix) + "/"]
    cmd += list(args)
    g = extra_g or ""
    if IS_NGINX:
        # Startup messages go to stderr, not to the distribution's log file.
        cmd += ["-e", "stderr"]
    if g:
        cmd += ["-g", g]
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        raise RuntimeError(f"{cmd} ran past {timeout} s\n{machine_state()}") from e


def check_test_fails(tmp_path, conf, message):
    """`-t` on `conf` (a base_conf text) fails and says `message`."""
    (tmp_path / "logs").mkdir(exist_ok=True)
    path = tmp_path / "bad.conf"
    path.write_text(conf.replace("@PREFIX@", str(tmp_path)))
    r = cli(["-t", "-c", str(path)], prefix=tmp_path)
    assert r.returncode != 0
    assert message in r.stdout + r.stderr


def _listening_inodes(port):
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    local, state, inode = fields[1], fields[3], fields[9]
                    if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                        inodes.add(inode)
        except OSError:
            pass
    return inodes


def _socket_inodes(pid):
    found = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                found.add(target[8:-1])
    except OSError:
        return None
    return found


def listens_on(pid, port):
    """True when process `pid` itself holds a listening socket on `port`
    (not merely: something answers on that port)."""
    ours = _socket_inodes(pid)
    if ours is None:
        return connectable(port)
    return bool(ours & _listening_inodes(port)) and connectable(port)


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError as e:
        return f"({e.strerror})"


def machine_state(pid=None):
    """What a failed start is told with: where the process waits and how
    loaded the machine is (a stall of the whole machine looks, from inside
    one test, like a server that hangs)."""
    lines = []
    if pid is not None:
        lines.append(f"pid {pid} stat: {_read(f'/proc/{pid}/stat')[:200]}")
        lines.append(f"pid {pid} wchan: {_read(f'/proc/{pid}/wchan')}")
    lines.append(f"loadavg: {_read('/proc/loadavg')}")
    for kind in ("cpu", "io", "memory"):
        lines.append(f"pressure {kind}: " + _read(f"/proc/pressure/{kind}").replace("\n", " | "))
    return "\n".join(lines) + "\n"


def connectable(port, host="127.0.0.1"):
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


class Server:
    """One instance of the binary on a config written into `prefix`.

    `conf` is a template: @PREFIX@ becomes the prefix directory, @PORT@ (same
    as @PORT0@), @PORT1@, ... become leased free ports. If the start fails
    because a port was taken meanwhile, new ports are leased and it retries.
    """

    def __init__(self, conf, prefix, nports=1, extra_g=None, wait_ports=None):
        self.template = conf
        self.prefix = Path(prefix)
        self.prefix.mkdir(parents=True, exist_ok=True)
        (self.prefix / "logs").mkdir(exist_ok=True)
        self.conf_path = self.prefix / "server.conf"
        self.nports = nports
        self.extra_g = extra_g
        # Ports that must be listening before the server counts as ready
        # (indexes into self.ports); default: all.
        self.wait_ports = wait_ports
        self.leases = []
        self.ports = []
        self.proc = None
        self._out = None

    # -- config ------------------------------------------------------------
    @property
    def port(self):
        return self.ports[0]

    @property
    def error_log(self):
        return self.prefix / "logs" / "error.log"

    @property
    def access_log(self):
        return self.prefix / "logs" / "access.log"

    @property
    def pid_file(self):
        return self.prefix / "logs" / "server.pid"

    def render(self, template):
        text = template.replace("@PREFIX@", str(self.prefix))
        for i in reversed(range(len(self.ports))):
            text = text.replace(f"@PORT{i}@", str(self.ports[i]))
        if self.ports:
            text = text.replace("@PORT@", str(self.ports[0]))
        return text

    def write_conf(self, template=None):
        if template is not None:
            self.template = template
        self.conf_path.write_text(self.render(self.template))

    def command(self):
        cmd = [BIN, "-p", str(self.prefix) + "/", "-c", str(self.conf_path)]
        g = self.extra_g or ""
        if IS_NGINX:
            nginx_g = "daemon off; master_process on;"
            if os.geteuid() == 0:
                # Workers would run as "nobody", who cannot read pytest's
                # private temporary directories.
                nginx_g += " user root;"
            g = nginx_g + " " + g
            cmd += ["-e", "stderr"]
        if g.strip():
            cmd += ["-g", g.strip()]
        return cmd

    # -- lifecycle ---------------------------------------------------------
    def start(self):
        last_error = ""
        for _attempt in range(3):
            self._release_ports()
            self.leases = [PortLease() for _ in range(self.nports)]
            self.ports = [lease.port for lease in self.leases]
            self.write_conf()
            self._out = open(self.prefix / "stdout-stderr.txt", "ab")
            self.proc = subprocess.Popen(self.command(), stdout=self._out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, cwd=self.prefix,
                                         start_new_session=True)
            if self._wait_ready():
                return self
            last_error = self.diagnostics()
            self.stop()
            if "in use" not in last_error:
                break
        raise RuntimeError(f"server did not start: {self.command()}\n{last_error}")

    def _wait_ready(self):
        wanted = self.ports if self.wait_ports is None else [self.ports[i] for i in self.wait_ports]
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            if all(listens_on(self.proc.pid, p) for p in wanted):
                return True
            time.sleep(0.02)
        return False

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait_exit(self, timeout):
        """Waits for the process to exit; returns its exit code or None."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self):
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    self.proc.send_signal(signal.SIGTERM)
                except ProcessLookupError:
                    pass
                if self.wait_exit(STOP_TIMEOUT) is None:
                    self.proc.kill()
                    self.proc.wait(timeout=STOP_TIMEOUT)
            # nginx's workers (or anything else this process started) live
            # in the session we created for it; make sure none outlives it.
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self._out is not None:
            self._out.close()
            self._out = None
        self._release_ports()

    def _release_ports(self):
        for lease in self.leases:
            lease.release()
        self.leases = []

    def reload(self, template=None):
        """Writes a new config (if given) and sends SIGHUP."""
        if template is not None:
            self.write_conf(template)
        self.signal(signal.SIGHUP)

    # -- inspection --------------------------------------------------------
    def output(self):
        path = self.prefix / "stdout-stderr.txt"
        return path.read_text(errors="replace") if path.exists() else ""

    def error_log_text(self):
        return self.error_log.read_text(errors="replace") if self.error_log.exists() else ""

    def diagnostics(self):
        return ("--- stdout/stderr ---\n" + self.output()[-4000:] +
                "\n--- error.log ---\n" + self.error_log_text()[-4000:] +
                "\n--- machine ---\n" + machine_state(self.proc.pid if self.proc else None))


# ---------------------------------------------------------------------------
# Raw HTTP/1.1


class Response:
    def __init__(self, version, status, reason, headers, body, raw_head):
        self.version = version
        self.status = status
        self.reason = reason
        self.headers = headers  # list of (name, value) in order
        self.body = body
        self.raw_head = raw_head

    def header(self, name, default=None):
        name = name.lower()
        for k, v in self.headers:
            if k.lower() == name:
                return v
        return default

    def header_all(self, name):
        name = name.lower()
        return [v for k, v in self.headers if k.lower() == name]

    def text(self):
        return self.body.decode("latin-1")

    def __repr__(self):
        return f"<Response {self.status} {self.headers!r} body={self.body[:200]!r}>"


class ConnectionClosed(Exception):
    pass


class Conn:
    """A client connection with a read buffer, so that pipelined responses
    and interim (1xx) responses can be read one at a time."""

    def __init__(self, port, host="127.0.0.1", timeout=10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.timeout = timeout

    def close(self):
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data):
        if isinstance(data, str):
            data = data.encode("latin-1")
        self.sock.sendall(data)

    def _fill(self):
        try:
            chunk = self.sock.recv(65536)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            raise ConnectionClosed(f"connection closed; unread bytes: {self.buf[:200]!r}")
        self.buf += chunk

    def _read_until(self, marker):
        while marker not in self.buf:
            self._fill()
        idx = self.buf.index(marker) + len(marker)
        data, self.buf = self.buf[:idx], self.buf[idx:]
        return data

    def _read_exact(self, n):
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def _read_to_eof(self):
        while True:
            try:
                self._fill()
            except ConnectionClosed:
                break
        data, self.buf = self.buf, b""
        return data

    def read_response(self, method="GET"):
        """Reads one response (interim 1xx responses are returned too)."""
        head = self._read_until(b"\r\n\r\n")
        lines = head[:-4].split(b"\r\n")
        m = re.match(rb"^(HTTP/\d\.\d) (\d{3})(?: (.*))?$", lines[0])
        if not m:
            raise AssertionError(f"bad status line: {lines[0]!r}")
        version, status, reason = m.group(1).decode(), int(m.group(2)), (m.group(3) or b"").decode("latin-1")
        headers = []
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            headers.append((name.decode("latin-1"), value.strip().decode("latin-1")))
        resp = Response(version, status, reason, headers, b"", head)
        if 100 <= status < 200 or method == "HEAD" or status in (204, 304):
            return resp
        te = resp.header("Transfer-Encoding")
        cl = resp.header("Content-Length")
        if te and "chunked" in te.lower():
            body = b""
            while True:
                size_line = self._read_until(b"\r\n")
                size = int(size_line.split(b";")[0].strip(), 16)
                if size == 0:
                    # trailers, then the empty line
                    while self._read_until(b"\r\n") != b"\r\n":
                        pass
                    break
                body += self._read_exact(size)
                self._read_exact(2)
            resp.body = body
        elif cl is not None:
            resp.body = self._read_exact(int(cl))
        else:
            resp.body = self._read_to_eof()
        return resp

    def request(self, method="GET", path="/", headers=None, body=None, host="localhost",
                version="HTTP/1.1"):
        self.send(build_request(method, path, headers, body, host, version))
        return self.read_response(method)

    def closed_within(self, timeout):
        """True if the peer closes (EOF or reset) within `timeout` seconds;
        any bytes it sends first (e.g. an error response) are kept in buf."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                return False
            except (ConnectionResetError, BrokenPipeError):
                return True
            finally:
                self.sock.settimeout(self.timeout)
            if not chunk:
                return True
            self.buf += chunk


def build_request(method="GET", path="/", headers=None, body=None, host="localhost",
                  version="HTTP/1.1"):
    """Builds request bytes. `headers` is a dict or a list of pairs; Host is
    added unless host is None; Content-Length is added for a body unless
    the caller set Content-Length or Transfer-Encoding."""
    if isinstance(headers, dict):
        headers = list(headers.items())
    headers = list(headers or [])
    names = {k.lower() for k, _ in headers}
    lines = [f"{method} {path} {version}"]
    if host is not None and "host" not in names:
        lines.append(f"Host: {host}")
    if isinstance(body, str):
        body = body.encode()
    if body is not None and "content-length" not in names and "transfer-encoding" not in names:
        headers.append(("Content-Length", str(len(body))))
    for k, v in headers:
        lines.append(f"{k}: {v}")
    data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
    return data + (body or b"")


def http(port, path="/", headers=None, method="GET", body=None, host="localhost", timeout=10.0):
    """One request on a fresh connection that is closed afterwards."""
    if isinstance(headers, dict):
        headers = list(headers.items())
    headers = list(headers or [])
    if not any(k.lower() == "connection" for k, _ in headers):
        headers.append(("Connection", "close"))
    with Conn(port, timeout=timeout) as c:
        return c.request(method, path, headers, body, host)


def http_raw(port, data, timeout=10.0, method="GET", wait_close=5.0):
    """Sends raw bytes; returns (response or None, closed_after) where
    closed_after tells whether the server closed the connection within
    `wait_close` seconds after the response (None: not checked)."""
    with Conn(port, timeout=timeout) as c:
        c.send(data)
        try:
            resp = c.read_response(method)
        except (ConnectionClosed, socket.timeout):
            return None, True
        if not wait_close:
            return resp, None
        return resp, c.closed_within(wait_close)


def raw_until_close(port, data, timeout=10.0):
    """Sends raw bytes and returns all the server sends until it closes
    (interim responses, trailers and all, as they came)."""
    with Conn(port, timeout=timeout) as c:
        c.send(data)
        return c._read_to_eof()


def skip_if_nginx_older(version, reason):
    """Skips the test when the binary under test is an nginx older than
    `version` (a (major, minor) pair), one that lacks what the test needs."""
    if not IS_NGINX:
        return
    import pytest
    out = subprocess.run([BIN, "-v"], capture_output=True, text=True).stderr
    m = re.search(r"nginx/(\d+)\.(\d+)", out)
    if m and (int(m.group(1)), int(m.group(2))) < version:
        pytest.skip(reason)


def wait_body(port, path, body, timeout=15.0, streak=5):
    """After a reload: waits until `streak` requests in a row, each on a new
    connection, answer `body` (old workers may still take a few)."""
    if isinstance(body, str):
        body = body.encode()
    run = [0]

    def settled():
        run[0] = run[0] + 1 if http(port, path).body == body else 0
        return run[0] >= streak
    wait_until(settled, timeout, what=f"{body!r} from {path}")


def server_product(resp):
    """The Server header, e.g. 'torii/0.1.0' or 'nginx'."""
    return resp.header("Server", "")
