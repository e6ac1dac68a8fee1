"""Measurements: a server's CPU time and memory (its whole process tree,
read from /proc), one load run with torii-load or ab, and the memory an
idle keep-alive connection costs."""

import json
import os
import re
import shlex
import socket
import ssl
import subprocess
import threading
import time

HZ = os.sysconf("SC_CLK_TCK")


def process_tree(pid):
    """pid and its descendants (h2o and nginx with a master have children)."""
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        for task in _tasks(p):
            try:
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
            except OSError:
                pass
    return pids


def _tasks(pid):
    try:
        return os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []


def cpu_seconds(pid):
    """User + system CPU seconds of the tree, with reaped children's."""
    total = 0.0
    for p in process_tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15]) / HZ  # utime stime cutime cstime
        except OSError:
            pass
    return total


def rss_kib(pid):
    total = 0
    for p in process_tree(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                m = re.search(r"^VmRSS:\s+(\d+)", f.read(), re.M)
            total += int(m.group(1)) if m else 0
        except OSError:
            pass
    return total


class LoadTool:
    """Runs the load tool, pinned to a CPU, optionally on another host
    through a command prefix (e.g. `ssh loadhost`)."""

    def __init__(self, torii_load, cpu, prefix, work):
        self.torii_load = torii_load
        self.prefix = shlex.split(prefix) if prefix else []
        self.pin = [] if self.prefix or cpu is None else ["taskset", "-c", str(cpu)]
        self.work = work

    def _run(self, argv, timeout):
        return subprocess.run(self.prefix + self.pin + argv, capture_output=True, text=True, timeout=timeout)

    def torii_load_run(self, url, protocol, connections, duration, rate=None, connect_per_request=False,
                       on_warm=None):
        """One run; `on_warm` is called when torii-load says its connections
        are open and its clock has started, so the caller can measure the
        server over the same window (handshakes excluded, as in the tool)."""
        out = os.path.join(self.work, "load.json")
        argv = [self.torii_load, "-c", str(connections), "-d", f"{duration}s", f"--{protocol}", "--json", out,
                "--timeout", "5s"]
        if rate:
            argv += ["--rate", str(rate)]
        if connect_per_request:
            argv += ["--connect-per-request", "--no-tls-resume"]
        subprocess.run(self.prefix + ["rm", "-f", out])
        proc = subprocess.Popen(self.prefix + self.pin + argv + [url], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        watchdog = threading.Timer(duration + 60, proc.kill)
        watchdog.start()
        stderr = []
        drain = threading.Thread(target=lambda: stderr.append(proc.stderr.read()), daemon=True)
        drain.start()
        for line in proc.stdout:
            if line.startswith("connections open") and on_warm:
                on_warm()
        proc.wait()
        watchdog.cancel()
        drain.join()
        stderr = "".join(stderr)
        text = subprocess.run(self.prefix + ["cat", out], capture_output=True, text=True).stdout
        if not text:
            raise RuntimeError(f"torii-load wrote no summary: {stderr.strip()[-300:]}")
        s = json.loads(text)
        d = s["http_req_duration"]
        return {
            "requests": s["http_reqs"]["count"], "seconds": s["duration_s"], "rps": s["http_reqs"]["rate"],
            "failed": s["http_req_failed"]["count"], "p50_ms": d["med"], "p99_ms": d["p99"],
            "cdf": s.get("latency_cdf_ms", []), "errors": {k: v for k, v in s["errors"].items() if v},
            "tool_cpu_us": s["cpu_us_per_request"],
        }

    def ab_run(self, url, connections, requests, keepalive):
        argv = ["ab", "-q", "-c", str(connections), "-n", str(requests), "-s", "30"]
        if keepalive:
            argv.append("-k")
        t0 = time.monotonic()
        r = self._run(argv + [url], timeout=600)
        seconds = time.monotonic() - t0
        out = r.stdout

        def grab(pattern, default=0.0):
            m = re.search(pattern, out, re.M)
            return float(m.group(1)) if m else default

        done = grab(r"^Complete requests:\s+(\d+)")
        failed = grab(r"^Failed requests:\s+(\d+)") + grab(r"^Non-2xx responses:\s+(\d+)")
        errors = {} if r.returncode == 0 else {"ab": (r.stderr.strip().splitlines() or ["exit " + str(r.returncode)])[-1]}
        return {
            "requests": int(done), "seconds": grab(r"^Time taken for tests:\s+([\d.]+)", seconds),
            "rps": grab(r"^Requests per second:\s+([\d.]+)"), "failed": int(failed) + int(requests - done),
            "p50_ms": grab(r"^\s+50%\s+(\d+)"), "p99_ms": grab(r"^\s+99%\s+(\d+)"), "cdf": [], "errors": errors,
        }


def idle_connection_kib(pid, host, port, tls, count, held, alpn="http/1.1"):
    """RSS growth per idle keep-alive connection: `count` connections each
    make one request, then stay open (appended to `held`, which the caller
    closes) while the server's memory is read. Keeping them open lets the
    next measure on the same server start from memory that is in use.
    `alpn` "h2" (with tls): one HTTP/2 request per connection."""
    before = settled_rss_kib(pid)
    ctx = None
    if tls:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.set_alpn_protocols([alpn])
    for _ in range(count):
        s = socket.create_connection((host, port), timeout=10)
        if ctx:
            s = ctx.wrap_socket(s, server_hostname="localhost")
        held.append(s)
        if alpn == "h2":
            if s.selected_alpn_protocol() != "h2":
                raise RuntimeError("no HTTP/2 by ALPN")
            _h2_request(s, "/img5k.png")
        else:
            s.sendall(b"GET /img5k.png HTTP/1.1\r\nHost: localhost\r\n\r\n")
            _read_response(s)
    return max(0.0, (settled_rss_kib(pid) - before) / count)


def settled_rss_kib(pid, timeout=10.0):
    """RSS once two readings 0.5 s apart agree within 64 KiB (a server that
    sheds idle state after a moment has done so)."""
    last = rss_kib(pid)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = rss_kib(pid)
        if abs(now - last) <= 64:
            return now
        last = now
    return last


def rss_after_close(pid, start_kib, held, timeout=10.0):
    """Closes `held` and returns the server's RSS growth over `start_kib`
    (in %) once it is back within 10% of it, or after `timeout` seconds."""
    for s in held:
        s.close()
    held.clear()
    deadline = time.monotonic() + timeout
    while True:
        now = rss_kib(pid)
        if now <= start_kib * 1.10 or time.monotonic() >= deadline:
            return (now - start_kib) * 100.0 / start_kib
        time.sleep(0.2)


def _h2_frame(ftype, flags, stream, payload=b""):
    return len(payload).to_bytes(3, "big") + bytes([ftype, flags]) + stream.to_bytes(4, "big") + payload


def _h2_request(s, path):
    """One GET on stream 1 (HPACK literals), read to its END_STREAM; the
    server's SETTINGS are acknowledged."""
    def literal(name, value):
        return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value
    block = b"".join(literal(n, v) for n, v in ((b":method", b"GET"), (b":scheme", b"https"),
                                                (b":path", path.encode()), (b":authority", b"localhost")))
    s.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + _h2_frame(4, 0, 0) + _h2_frame(1, 0x5, 1, block))
    buf = b""
    while True:
        while len(buf) >= 9 and len(buf) >= 9 + int.from_bytes(buf[:3], "big"):
            length, ftype, flags = int.from_bytes(buf[:3], "big"), buf[3], buf[4]
            stream = int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF
            buf = buf[9 + length:]
            if ftype == 4 and not flags & 1:
                s.sendall(_h2_frame(4, 1, 0))
            if ftype == 7:
                raise RuntimeError("GOAWAY before the response")
            if stream == 1 and flags & 1 and ftype in (0, 1):
                return
        chunk = s.recv(65536)
        if not chunk:
            raise RuntimeError("connection closed before a response")
        buf += chunk


def _read_response(s):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            raise RuntimeError("connection closed before a response")
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    m = re.search(rb"content-length:\s*(\d+)", head, re.I)
    need = int(m.group(1)) if m else 0
    while len(body) < need:
        chunk = s.recv(65536)
        if not chunk:
            break
        body += chunk
