"""The sites every server under test serves, and the files and backends
behind them. Each peer writes one configuration holding all the sites, each
site on its own port, so a peer is started once for the whole run."""

import os
import subprocess
from dataclasses import dataclass, field

# The files of the seeds: 001's 20 KB index.html, 002's 5 KB and 10 KB
# images (random bytes: no server may compress them).
FILES = {"index.html": 20 * 1024, "img5k.png": 5 * 1024, "img10k.png": 10 * 1024}

# Seed 000's application answer, in place of its Tomcat page.
APP_BODY = "x" * 800


@dataclass
class Site:
    """One listening site: static files or a proxy, plain or TLS 1.3."""
    name: str
    tls: bool
    proxy_to: str = ""   # "" serves files; else the backend group's name
    h3: bool = False     # also HTTP/3 on the same port (UDP)
    ports: dict = field(default_factory=dict)  # peer name -> port


SITES = [
    Site("static", tls=False),
    Site("static_tls", tls=True),
    Site("proxy_app", tls=False, proxy_to="app"),
    Site("proxy_app_tls", tls=True, proxy_to="app", h3=True),
    Site("proxy_whoami", tls=False, proxy_to="whoami"),
]


def site(name):
    return next(s for s in SITES if s.name == name)


@dataclass
class Backends:
    """Seed 000's application (one server) and seed 003's four whoami
    servers, all in one nginx with one worker, pinned beside the load tool."""
    app: list
    whoami: list
    process: subprocess.Popen = None

    def group(self, name):
        return self.app if name == "app" else self.whoami


def make_files(work):
    root = os.path.join(work, "html")
    os.makedirs(root, exist_ok=True)
    for name, size in FILES.items():
        with open(os.path.join(root, name), "wb") as f:
            f.write(os.urandom(size))
    cert, key = os.path.join(work, "cert.pem"), os.path.join(work, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
                    "-keyout", key, "-out", cert], check=True, capture_output=True)
    # HAProxy wants the certificate and key in one file.
    with open(os.path.join(work, "cert+key.pem"), "w") as out:
        out.write(open(cert).read() + open(key).read())
    return root, cert, key


def backend_config(backends, nginx_prefix):
    servers = [f"""    server {{
        listen {addr};
        location / {{ default_type text/html; return 200 '{APP_BODY}'; }}
    }}""" for addr in backends.app]
    servers += [f"""    server {{
        listen {addr};
        location / {{ default_type application/json; return 200 '{{"hostname":"whoami-{i}","ip":"127.0.0.1"}}\\n'; }}
    }}""" for i, addr in enumerate(backends.whoami, 1)]
    return f"""worker_processes 1;
pid {nginx_prefix}/nginx.pid;
error_log {nginx_prefix}/error.log crit;
events {{ worker_connections 16384; }}
http {{
    access_log off;
    keepalive_requests 1000000;
{chr(10).join(servers)}
}}
"""
