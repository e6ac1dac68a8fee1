"""The scenario matrix of the four seed reports, each row a site, a path, a
protocol and a load shape. `direct` rows load the backend itself, once,
as the reports' "backend direct" reference."""

from dataclasses import dataclass


@dataclass
class Row:
    key: str            # short id, used in file names
    seed: str
    title: str
    site: str           # sites.SITES name, or "direct:app" / "direct:whoami"
    path: str
    protocol: str       # h1, h2, h3
    connections: int
    connect_per_request: bool = False
    tool: str = "torii-load"   # or "ab" (seed 001's own command)
    keepalive: bool = True     # ab -k


ROWS = [
    Row("000-direct", "000", "backend direct (HTTP/1.1)", "direct:app", "/", "h1", 100),
    Row("000-proxy-h1", "000", "proxy, HTTP/1.1", "proxy_app", "/", "h1", 100),
    Row("000-proxy-tls-h1", "000", "proxy, TLS 1.3 + HTTP/1.1", "proxy_app_tls", "/", "h1", 100),
    Row("000-proxy-tls-h2", "000", "proxy, TLS 1.3 + HTTP/2", "proxy_app_tls", "/", "h2", 100),
    Row("000-proxy-tls-h3", "000", "proxy, TLS 1.3 + HTTP/3", "proxy_app_tls", "/", "h3", 100),
    Row("001-20k-plain", "001", "20 KB over plain HTTP, keep-alive", "static", "/index.html", "h1", 100),
    Row("001-20k-keepalive", "001", "20 KB over HTTPS, keep-alive", "static_tls", "/index.html", "h1", 1000),
    Row("001-20k-handshake", "001", "20 KB over HTTPS, a full TLS handshake per request", "static_tls",
        "/index.html", "h1", 100, connect_per_request=True),
    Row("001-ab-keepalive", "001", "20 KB over HTTPS, ab -c 1000 -k", "static_tls", "/index.html", "h1", 1000,
        tool="ab"),
    Row("001-ab-short", "001", "20 KB over HTTPS, ab -c 1000 (a connection per request)", "static_tls",
        "/index.html", "h1", 1000, tool="ab", keepalive=False),
    Row("002-5k-h2", "002", "5 KB image, HTTP/2, 1000 clients", "static_tls", "/img5k.png", "h2", 1000),
    Row("002-5k-h1", "002", "5 KB image, HTTP/1.1 keep-alive, 1000 clients", "static_tls", "/img5k.png", "h1", 1000),
    Row("002-10k-h2", "002", "10 KB image, HTTP/2, 1000 clients", "static_tls", "/img10k.png", "h2", 1000),
    Row("002-10k-h1", "002", "10 KB image, HTTP/1.1 keep-alive, 1000 clients", "static_tls", "/img10k.png", "h1",
        1000),
    Row("003-direct", "003", "whoami direct (one of four)", "direct:whoami", "/", "h1", 1000),
    Row("003-proxy", "003", "proxy to four backends, 1000 connections", "proxy_whoami", "/", "h1", 1000),
]
