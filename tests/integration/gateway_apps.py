"""Application servers the gateway tests start themselves: Debian's
php-fpm (FastCGI) and uwsgi with its python3 plugin, each in its own
directory with its own config, as the current user, never a system
service. Also the process measurements the streaming tests need."""

import os
import shutil
import signal
import socket
import subprocess
from pathlib import Path

import harness

PHP_FPM = shutil.which("php-fpm8.2") or "/usr/sbin/php-fpm8.2"
UWSGI = shutil.which("uwsgi") or "/usr/bin/uwsgi"
DEBIAN_NGINX = Path("/etc/nginx")


def copy_debian_params(dest):
    """Debian's fastcgi_params, fastcgi.conf, uwsgi_params, scgi_params and
    snippets/fastcgi-php.conf, unchanged, where a config's relative include
    finds them (the server's prefix, its config's directory)."""
    dest = Path(dest)
    (dest / "snippets").mkdir(parents=True, exist_ok=True)
    for name in ("fastcgi_params", "fastcgi.conf", "uwsgi_params", "scgi_params", "snippets/fastcgi-php.conf"):
        shutil.copyfile(DEBIAN_NGINX / name, dest / name)


def _connectable(address):
    try:
        if address.startswith("unix:"):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(1)
            s.connect(address[5:])
        else:
            host, port = address.rsplit(":", 1)
            s = socket.create_connection((host, int(port)), timeout=1)
        s.close()
        return True
    except OSError:
        return False


class PhpFpm:
    """php-fpm in the foreground on a unix socket (tcp=False) or a loopback
    port; `address` is what fastcgi_pass takes."""

    def __init__(self, root, tcp=False, children=2, ini=None):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.lease = harness.PortLease() if tcp else None
        self.port = self.lease.port if tcp else None
        self.address = f"127.0.0.1:{self.port}" if tcp else f"unix:{self.root}/php.sock"
        listen = f"127.0.0.1:{self.port}" if tcp else f"{self.root}/php.sock"
        values = {"enable_post_data_reading": "0", **(ini or {})}
        admin = "\n".join(f"php_admin_value[{k}] = {v}" for k, v in values.items())
        user = "user = root\n" if os.geteuid() == 0 else ""
        (self.root / "fpm.conf").write_text(f"""[global]
pid = {self.root}/fpm.pid
error_log = {self.root}/fpm.log
daemonize = no
[app]
{user}listen = {listen}
listen.mode = 0666
pm = static
pm.max_children = {children}
catch_workers_output = no
{admin}
""")
        cmd = [PHP_FPM, "-n", "-F", "-y", str(self.root / "fpm.conf"), "-p", str(self.root)]
        if os.geteuid() == 0:
            cmd.insert(1, "-R")
        self.out = open(self.root / "fpm.out", "wb")
        self.proc = subprocess.Popen(cmd, stdout=self.out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            harness.wait_until(lambda: self.proc.poll() is not None or _connectable(self.address), 15,
                               what="php-fpm to listen")
            assert self.proc.poll() is None, (self.root / "fpm.out").read_text()
        except BaseException:
            self.stop()
            raise

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.out.close()
        if self.lease:
            self.lease.release()
            self.lease = None


class Uwsgi:
    """uwsgi with the python3 plugin running `app` (a WSGI file) on a
    loopback port, or with unix=True on a socket file; `address` is what
    uwsgi_pass takes (scgi_pass with socket="--scgi-socket": uwsgi speaks
    SCGI there)."""

    def __init__(self, root, app_source, socket="--socket", unix=False):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "app.py").write_text(app_source)
        self.lease = None if unix else harness.PortLease()
        self.address = f"unix:{self.root / 'uwsgi.sock'}" if unix else f"127.0.0.1:{self.lease.port}"
        listen = self.address[5:] if unix else self.address
        cmd = [UWSGI, "--plugin", "python3", socket, listen, "--wsgi-file", str(self.root / "app.py"),
               "--processes", "2", "--master", "--die-on-term", "--need-app", "--buffer-size", "32768",
               "--disable-logging"]
        self.out = open(self.root / "uwsgi.out", "wb")
        self.proc = subprocess.Popen(cmd, stdout=self.out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     cwd=self.root)
        try:
            harness.wait_until(lambda: self.proc.poll() is not None or _connectable(self.address), 15,
                               what="uwsgi to listen")
            assert self.proc.poll() is None, (self.root / "uwsgi.out").read_text()
        except BaseException:
            self.stop()
            raise

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.out.close()
        if self.lease:
            self.lease.release()
            self.lease = None


def _status_kb(pid, field):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _tree(pid):
    """pid and its descendants (nginx's workers are the master's children)."""
    pids = [pid]
    for p in pids:
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                pids += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                pass
    return pids


def server_rss_kb(server):
    """Resident memory now, summed over the server's processes."""
    return sum(_status_kb(p, "VmRSS") for p in _tree(server.proc.pid))


def server_peak_rss_kb(server):
    """The peak resident memory (VmHWM) of the server's biggest process."""
    return max(_status_kb(p, "VmHWM") for p in _tree(server.proc.pid))


def established_to(port):
    """Local ports of the established TCP connections to 127.0.0.1:port."""
    out = subprocess.run(["ss", "-Htn", "state", "established", f"( dport = :{port} )"],
                         capture_output=True, text=True, check=True).stdout
    ports = set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 4:
            ports.add(fields[2].rsplit(":", 1)[1])
    return ports
