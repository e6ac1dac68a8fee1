"""The seed reports' nginx configs, with paths and addresses changed and
nothing else, load and serve. Parts that need later features (TLS, the
proxy) are covered by those features' tests."""

import pytest

import harness
from harness import http

# Seed 003's main nginx.conf (its whoami proxy server lives in the proxy
# tests). Only paths changed: pid, logs, mime.types, and one include folder.
SEED_003_MAIN = """
user nginx;
worker_processes auto;
worker_rlimit_nofile 200000;
pid @PREFIX@/logs/nginx.pid;
events {
    worker_connections 10000;
    use epoll;
    multi_accept on;
}
http {
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_timeout 300;
    keepalive_requests 10000;
    types_hash_max_size 2048;
    open_file_cache max=200000 inactive=300s;
    open_file_cache_valid 300s;
    open_file_cache_min_uses 2;
    open_file_cache_errors on;
    server_tokens off;
    dav_methods off;
    include @PREFIX@/mime.types;
    default_type application/octet-stream;
    access_log @PREFIX@/logs/access.log combined;
    error_log @PREFIX@/logs/error.log warn;
    gzip off;
    gzip_vary off;
    include @PREFIX@/conf.d/*.conf;
    include @PREFIX@/sites-enabled/*.conf;
}
"""

SITE = """
server {
    listen 127.0.0.1:@PORT@;
    server_name benchmark.whoami;
    root @PREFIX@/www;
    location /health {
        access_log off;
        return 200 "healthy\\n";
        add_header Content-Type text/plain;
    }
    location /static/ {
        root @PREFIX@/www;
        expires 1y;
        add_header Cache-Control "public, immutable";
    }
}
"""


def test_seed_003_main_config_serves(make_server):
    if harness.IS_NGINX:
        pytest.skip("nginx would switch to the user \"nginx\", which this machine lacks")
    srv = make_server(SEED_003_MAIN, start=False)
    prefix = srv.prefix
    (prefix / "conf.d").mkdir(parents=True, exist_ok=True)
    (prefix / "sites-enabled").mkdir(parents=True, exist_ok=True)
    (prefix / "www" / "static").mkdir(parents=True, exist_ok=True)
    (prefix / "logs").mkdir(parents=True, exist_ok=True)
    (prefix / "mime.types").write_text("types { text/html html; text/css css; }\n")
    (prefix / "www" / "static" / "a.css").write_text("body{}\n")
    # The site's port is known only when the server starts: write it then.
    write_main = srv.write_conf

    def write_conf(template=None):
        write_main(template)
        (prefix / "sites-enabled" / "site.conf").write_text(srv.render(SITE))

    srv.write_conf = write_conf
    srv.start()

    r = http(srv.port, "/health", host="benchmark.whoami")
    assert r.status == 200
    assert r.body == b"healthy\n"
    assert r.header_all("Content-Type")[-1] == "text/plain"

    r = http(srv.port, "/static/a.css", host="benchmark.whoami")
    assert r.status == 200
    assert r.body == b"body{}\n"
    assert r.header("Content-Type") == "text/css"
    assert "max-age=31536000" in r.header_all("Cache-Control")
    assert "public, immutable" in r.header_all("Cache-Control")
    # server_tokens off: no version in Server.
    assert "/" not in r.header("Server")

    # The access log got the combined line for the static request only.
    harness.wait_until(lambda: "GET /static/a.css HTTP/1.1" in srv.access_log.read_text()
                       if srv.access_log.exists() else False, 10, what="access log line")
    assert "/health" not in srv.access_log.read_text()
