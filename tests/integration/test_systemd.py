"""systemd: torii speaks the notify protocol to $NOTIFY_SOCKET (READY=1
once the listeners are open, RELOADING=1 with MONOTONIC_USEC then READY=1
around a reload, STOPPING=1 at exit), and dist/torii.service passes
systemd-analyze verify."""

import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

import harness

pytestmark = pytest.mark.skipif(harness.IS_NGINX, reason="nginx's Debian build does not send sd_notify messages")


class NotifySocket:
    def __init__(self, path):
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.2)
        self.messages = []
        self.lock = threading.Lock()
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while self.running:
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                continue
            except OSError:
                return
            with self.lock:
                self.messages.append(data.decode())

    def states(self):
        """The messages' first lines (READY=1, RELOADING=1, ...), in order."""
        with self.lock:
            return [m.split("\n")[0] for m in self.messages]

    def wait_count(self, n, timeout=10):
        harness.wait_until(lambda: len(self.states()) >= n, timeout, what=f"{n} notify messages")
        with self.lock:
            return list(self.messages)

    def close(self):
        self.running = False
        self.thread.join()
        self.sock.close()


def test_ready_reloading_ready_stopping(tmp_path, monkeypatch):
    notify = NotifySocket(tmp_path / "notify.sock")
    monkeypatch.setenv("NOTIFY_SOCKET", notify.path)
    server = harness.Server(harness.base_conf("""
    server { listen 127.0.0.1:@PORT@; location / { return 200 "up"; } }"""), tmp_path / "srv")
    try:
        server.start()
        msgs = notify.wait_count(1)
        assert msgs[0].startswith("READY=1\n") and f"MAINPID={server.proc.pid}" in msgs[0], msgs
        # READY=1 means the address answers.
        assert harness.http(server.port, "/").body == b"up"
        before = time.clock_gettime(time.CLOCK_MONOTONIC)
        server.reload()
        msgs = notify.wait_count(3)
        assert msgs[1].startswith("RELOADING=1\n"), msgs
        usec = int(re.search(r"MONOTONIC_USEC=(\d+)", msgs[1]).group(1))
        assert abs(usec / 1e6 - before) < 5, (usec, before)
        assert msgs[2].startswith("READY=1\n"), msgs
        server.signal(signal.SIGQUIT)
        assert server.wait_exit(10) == 0
        msgs = notify.wait_count(4)
        assert notify.states() == ["READY=1", "RELOADING=1", "READY=1", "STOPPING=1"]
    finally:
        server.stop()
        notify.close()


def test_no_notify_socket_is_fine(make_server, monkeypatch):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    server = make_server(harness.base_conf("""
    server { listen 127.0.0.1:@PORT@; location / { return 200 "up"; } }"""))
    assert harness.http(server.port, "/").body == b"up"


def test_unit_file_verifies(tmp_path):
    analyze = shutil.which("systemd-analyze")
    if not analyze:
        pytest.skip("systemd-analyze is not installed")
    unit = (Path(harness.SOURCE_DIR) / "dist" / "torii.service").read_text()
    # verify wants the binaries to exist: point it at the one under test.
    unit = unit.replace("/usr/sbin/torii", os.path.abspath(harness.BIN))
    path = tmp_path / "torii.service"
    path.write_text(unit)
    r = subprocess.run([analyze, "verify", str(path)], capture_output=True, text=True, timeout=60)
    # Lines about other units on this machine are not ours to judge.
    ours = [l for l in (r.stdout + r.stderr).splitlines() if "torii.service" in l]
    assert r.returncode == 0 and not ours, r.stdout + r.stderr
