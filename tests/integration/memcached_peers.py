"""memcached peers for test_memcached.py, each started by the test that uses
it and stopped when it ends:

  Memcached      Debian's memcached daemon on a leased port (-U 0: no UDP,
                 -l 127.0.0.1), ready once it answers `version`; `set()`
                 stores an item with flags over a plain socket, `stats()`
                 reads its counters. A system memcached is never touched.
  FakeMemcached  a thread of the test process that answers each `get KEY`
                 with the bytes `reply(key)` returns (None: no answer at all,
                 the connection is held open; a list: its pieces in turn, a
                 threading.Event among them is waited for), for replies a
                 real memcached never sends. `commands` lists the lines it got.
"""

import os
import shutil
import socket
import subprocess
import threading

import harness


def _connect(where):
    if isinstance(where, int):
        return socket.create_connection(("127.0.0.1", where), timeout=10)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(where)
    return s


def _request(where, data, until):
    with _connect(where) as s:
        s.sendall(data)
        got = b""
        while not got.endswith(until):
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
        return got


class Memcached:
    def __init__(self, max_item="2m", unix_path=None):
        """On a leased TCP port, or on the unix socket `unix_path`."""
        binary = shutil.which("memcached") or "/usr/bin/memcached"
        self.lease = harness.PortLease()
        self.port = self.lease.port
        self.unix_path = unix_path
        self.where = str(unix_path) if unix_path else self.port
        listen = ["-s", str(unix_path), "-a", "0666"] if unix_path else ["-p", str(self.port), "-l", "127.0.0.1"]
        cmd = [binary, *listen, "-U", "0", "-I", max_item, "-m", "64"]
        if os.geteuid() == 0:
            cmd += ["-u", "root"]  # memcached refuses to run as root without -u
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        harness.wait_until(self._ready, 10, what=f"memcached on port {self.port}")

    def _ready(self):
        if self.proc.poll() is not None:
            raise AssertionError("memcached exited: " + self.proc.stderr.read().decode(errors="replace"))
        try:
            return _request(self.where, b"version\r\n", b"\r\n").startswith(b"VERSION ")
        except OSError:
            return False

    @property
    def address(self):
        return f"unix:{self.unix_path}" if self.unix_path else f"127.0.0.1:{self.port}"

    def set(self, key, value, flags=0):
        if isinstance(value, str):
            value = value.encode()
        got = _request(self.where, b"set %s %d 0 %d\r\n%s\r\n" % (key.encode(), flags, len(value), value), b"\r\n")
        assert got == b"STORED\r\n", got

    def stats(self):
        out = {}
        for line in _request(self.where, b"stats\r\n", b"END\r\n").decode().splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[0] == "STAT":
                out[parts[1]] = parts[2]
        return out

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.lease.release()


class FakeMemcached:
    def __init__(self, reply):
        self.reply = reply
        self.commands = []
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.held = []
        self.stopped = False
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"

    def _accept(self):
        while not self.stopped:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        buf = b""
        try:
            while True:
                while b"\r\n" not in buf:
                    chunk = conn.recv(4096)
                    if not chunk:
                        conn.close()
                        return
                    buf += chunk
                line, buf = buf.split(b"\r\n", 1)
                self.commands.append(line)
                key = line[4:].decode(errors="replace") if line.startswith(b"get ") else ""
                answer = self.reply(key)
                if answer is None:
                    self.held.append(conn)  # never answers; closed at stop()
                    return
                # A list: its byte strings in turn, waiting on each Event in it.
                for part in answer if isinstance(answer, list) else [answer]:
                    if isinstance(part, threading.Event):
                        part.wait(20)
                    else:
                        conn.sendall(part)
        except OSError:
            conn.close()

    def stop(self):
        self.stopped = True
        self.sock.close()
        for c in self.held:
            c.close()
