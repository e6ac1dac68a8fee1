"""The servers compared: how each is configured for the sites of sites.py
with the same meaning (one worker, TLS 1.3 only, HTTP/2 by ALPN, keep-alive
pools to the backends, no access log), and how it is started."""

import getpass
import os
import shutil
import socket
import subprocess

from . import sites as S

KEEPALIVE = {"app": 32, "whoami": 300}  # upstream keepalive per group, from seeds 000 and 003


class Peer:
    name = ""
    binary = ""

    def __init__(self, work, workers, binary=None, listen="127.0.0.1"):
        self.work = os.path.join(work, self.name)
        os.makedirs(self.work, exist_ok=True)
        self.workers = workers
        self.listen = listen
        if binary:
            self.binary = binary

    def installed(self):
        return bool(self.binary) and (os.access(self.binary, os.X_OK) or shutil.which(self.binary))

    def why_not(self, site, protocol):
        """None when this peer can serve the site over the protocol, else why not."""
        if protocol == "h3" and not site.h3:
            return "no HTTP/3 on this site"
        return None

    def env(self):
        return dict(os.environ)

    def write(self, path, text):
        with open(path, "w") as f:
            f.write(text)
        return path


class NginxSyntax(Peer):
    """torii and nginx read the same configuration; only torii's has HTTP/3."""

    def config(self, root, cert, key, backends):
        # The idle keep-alive connections each group keeps, as the seeds set
        # them: 32 for seed 000's application, 300 for seed 003's whoami
        # group. With fewer than the requests in flight, the rest of the
        # upstream connections are opened and closed per request (at 1000
        # client connections and 64, one request in five paid a connect).
        upstreams = "\n".join(
            f"    upstream {g} {{ least_conn; "
            + " ".join(f"server {a} max_fails=3 fail_timeout=30s;" for a in backends.group(g))
            + f" keepalive {KEEPALIVE[g]}; }}" for g in ("app", "whoami"))
        servers = []
        for site in S.SITES:
            port = site.ports[self.name]
            if site.tls:
                listen = f"listen {self.listen}:{port} ssl http2 reuseport;"
                if site.h3 and self.has_h3:
                    listen += " http3 on;"
                listen += (f" ssl_certificate {cert}; ssl_certificate_key {key};"
                           " ssl_protocols TLSv1.3; ssl_session_cache shared:SSL:10m; ssl_session_timeout 10m;")
            else:
                listen = f"listen {self.listen}:{port} reuseport;"
            if site.proxy_to:
                body = (f"location / {{ proxy_pass http://{site.proxy_to}; proxy_http_version 1.1;"
                        " proxy_set_header Connection \"\"; proxy_set_header Host $host;"
                        " proxy_set_header X-Real-IP $remote_addr;"
                        " proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;"
                        " proxy_set_header X-Forwarded-Proto $scheme; }")
            else:
                body = f"root {root};"
            servers.append(f"    server {{ {listen} server_name localhost; {body} }}")
        return f"""worker_processes {self.workers};
worker_rlimit_nofile 65536;
pid {self.work}/server.pid;
error_log {self.work}/error.log error;
events {{ worker_connections 16384; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    types {{ text/html html; image/png png; }}
{upstreams}
{chr(10).join(servers)}
}}
"""

    def command(self, root, cert, key, backends):
        conf = self.write(os.path.join(self.work, "server.conf"), self.config(root, cert, key, backends))
        return self.start_args(conf)


class Torii(NginxSyntax):
    name = "torii"
    has_h3 = True

    def start_args(self, conf):
        return [self.binary, "-p", self.work + "/", "-c", conf]


class Nginx(NginxSyntax):
    name = "nginx"
    binary = "/usr/sbin/nginx"
    has_h3 = False  # Debian 12's nginx 1.22 has no QUIC

    def why_not(self, site, protocol):
        if protocol == "h3":
            return "nginx 1.22 has no HTTP/3"
        return super().why_not(site, protocol)

    def start_args(self, conf):
        return [self.binary, "-p", self.work + "/", "-c", conf, "-g", "daemon off; master_process off;"]


class HAProxy(Peer):
    name = "haproxy"
    binary = "haproxy"

    def why_not(self, site, protocol):
        if not site.proxy_to:
            return "HAProxy is not a file server"
        if protocol == "h3":
            return "Debian's HAProxy is built without QUIC"
        return super().why_not(site, protocol)

    def command(self, root, cert, key, backends):
        parts = [f"""global
    nbthread {self.workers}
    maxconn 8192
    tune.ssl.default-dh-param 2048
    ssl-default-bind-options ssl-min-ver TLSv1.3
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout http-keep-alive 60s
    option http-keep-alive
    option forwardfor
    http-reuse always
"""]
        for g in ("app", "whoami"):
            servers = "\n".join(f"    server s{i} {a} maxconn 10000" for i, a in enumerate(backends.group(g)))
            parts.append(f"backend {g}\n    balance leastconn\n{servers}\n")
        for site in S.SITES:
            if not site.proxy_to:
                continue
            port = site.ports[self.name]
            tls = f" ssl crt {os.path.dirname(cert)}/cert+key.pem alpn h2,http/1.1" if site.tls else ""
            parts.append(f"frontend {site.name}\n    bind {self.listen}:{port}{tls}\n"
                         f"    http-request set-header X-Forwarded-Proto {'https' if site.tls else 'http'}\n"
                         f"    default_backend {site.proxy_to}\n")
        conf = self.write(os.path.join(self.work, "haproxy.cfg"), "\n".join(parts))
        return [shutil.which(self.binary), "-db", "-f", conf]


class Caddy(Peer):
    name = "caddy"
    binary = "caddy"

    def env(self):
        env = dict(os.environ)
        env.update(GOMAXPROCS=str(self.workers), XDG_DATA_HOME=self.work, XDG_CONFIG_HOME=self.work)
        return env

    def command(self, root, cert, key, backends):
        blocks = ["{\n    admin off\n    auto_https off\n    servers {\n        protocols h1 h2 h3\n    }\n}"]
        for site in S.SITES:
            port = site.ports[self.name]
            scheme = "https" if site.tls else "http"
            tls = f"    tls {cert} {key} {{\n        protocols tls1.3\n    }}\n" if site.tls else ""
            if site.proxy_to:
                body = ("    reverse_proxy " + " ".join(backends.group(site.proxy_to))
                        + " {\n        lb_policy least_conn\n    }\n")
            else:
                body = f"    root * {root}\n    file_server\n"
            blocks.append(f"{scheme}://localhost:{port} {{\n    bind {self.listen}\n{tls}{body}}}")
        conf = self.write(os.path.join(self.work, "Caddyfile"), "\n".join(blocks) + "\n")
        return [shutil.which(self.binary), "run", "--config", conf, "--adapter", "caddyfile"]


class H2O(Peer):
    name = "h2o"
    binary = "h2o"

    def why_not(self, site, protocol):
        if protocol == "h3":
            return "h2o 2.2 has no HTTP/3"
        if site.proxy_to == "whoami":
            return "h2o 2.2 proxies to one backend only"
        return super().why_not(site, protocol)

    def command(self, root, cert, key, backends):
        hosts = []
        for site in S.SITES:
            port = site.ports[self.name]
            ssl = (f"\n      ssl:\n        certificate-file: {cert}\n        key-file: {key}\n"
                   "        minimum-version: TLSv1.3\n        ocsp-update-interval: 0") if site.tls else ""
            if site.proxy_to:
                handler = f"proxy.reverse.url: http://{backends.group(site.proxy_to)[0]}/"
            else:
                handler = f"file.dir: {root}"
            hosts.append(f'  "{site.name}":\n    listen:\n      host: {self.listen}\n      port: {port}{ssl}\n'
                         f"    paths:\n      /:\n        {handler}")
        conf = f"""user: {getpass.getuser()}
num-threads: {self.workers}
pid-file: {self.work}/h2o.pid
error-log: {self.work}/error.log
proxy.preserve-host: ON
hosts:
{chr(10).join(hosts)}
"""
        path = self.write(os.path.join(self.work, "h2o.conf"), conf)
        return [shutil.which(self.binary), "-c", path]


class Floor(Peer):
    """bench/floor's programs: what the kernel and a bare epoll loop cost
    for the same bytes, the floor torii's CPU per request is compared with.
    Plain sites only: the 20 KB file with torii's own response head, and
    a byte forwarder with one kept backend connection per client."""
    name = "floor"
    SOURCES = ("main.cc", "loop.cc", "static_file.cc", "forward.cc")

    def installed(self):
        src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "floor")
        self.binary = os.path.join(self.work, "torii-floor")
        cxx = shutil.which("c++") or shutil.which("g++")
        if not cxx:
            return False
        r = subprocess.run([cxx, "-O2", "-std=c++20", "-o", self.binary]
                           + [os.path.join(src, f) for f in self.SOURCES], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"torii-floor did not build:\n{r.stderr}")
        return r.returncode == 0

    def why_not(self, site, protocol):
        if site.tls or protocol != "h1":
            return "the floor programs speak plain HTTP/1.1 over TCP only"
        return super().why_not(site, protocol)

    def torii_head(self, path):
        """The response head torii sends for `path` on the plain static site."""
        with socket.create_connection((self.listen, S.site("static").ports["torii"]), timeout=10) as c:
            c.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = c.recv(65536)
                if not chunk:
                    raise RuntimeError("torii closed before its response head")
                data += chunk
        return data[:data.index(b"\r\n\r\n") + 4]

    def command(self, root, cert, key, backends):
        head = os.path.join(self.work, "head")
        with open(head, "wb") as f:
            f.write(self.torii_head("/index.html"))
        argv = [self.binary]
        for site in S.SITES:
            if self.why_not(site, "h1"):
                continue
            addr = f"{self.listen}:{site.ports[self.name]}"
            if site.proxy_to:
                argv += ["--forward", addr, ",".join(backends.group(site.proxy_to))]
            else:
                argv += ["--static", addr, os.path.join(root, "index.html"), head]
        return argv


ALL = {p.name: p for p in (Torii, Nginx, HAProxy, Caddy, H2O, Floor)}
