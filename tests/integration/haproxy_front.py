"""Debian's HAProxy in TCP mode in front of the server under test, sending
the PROXY protocol header (send-proxy or send-proxy-v2) on every
connection. Started by the test on a leased loopback port with its own
config, in the foreground, and stopped by the test."""

import shutil
import subprocess
from pathlib import Path

from harness import PortLease, connectable, wait_until

HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"


def available():
    return Path(HAPROXY).exists()


class HaproxyFront:
    def __init__(self, workdir, backend_port, send="send-proxy"):
        self.dir = Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.backend_port = backend_port
        self.send = send
        self.lease = None
        self.proc = None
        if self.lease:
            self.lease.release()

    @property
    def port(self):
        return self.lease.port

    def start(self):
        self.lease = PortLease()
        conf = self.dir / "haproxy.cfg"
        conf.write_text(f"""global
    maxconn 256
defaults
    mode tcp
    timeout connect 5s
    timeout client 30s
    timeout server 30s
frontend front
    bind 127.0.0.1:{self.lease.port}
    default_backend back
backend back
    server s1 127.0.0.1:{self.backend_port} {self.send}
""")
        self.out = open(self.dir / "haproxy.out", "ab")
        self.proc = subprocess.Popen([HAPROXY, "-f", str(conf), "-db"], stdout=self.out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        wait_until(lambda: self.proc.poll() is not None or connectable(self.lease.port), 15,
                   what="haproxy listening")
        assert self.proc.poll() is None, (self.dir / "haproxy.out").read_text()
        return self

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None
        if self.lease:
            self.lease.release()
