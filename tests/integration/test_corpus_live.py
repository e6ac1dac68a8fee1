"""Four entries of tests/corpus/ started, not only checked with -t: each
entry's own text with its listen addresses moved to a leased loopback port
and its upstream to one the test starts (php-fpm, uwsgi, a small HTTP
backend), then requests a user of that project sends. Laravel's site with
php-fpm, Gitea's sub-path proxy (the URI passed still encoded), Synapse's
TLS proxy (the matrix paths passed untouched, Host with the port), the
uwsgi tutorial's Django site (static and media by alias, the rest to
uwsgi). The same tests pass against nginx (TORII_BIN=/usr/sbin/nginx)."""

import json
import os
import socket
import ssl
import subprocess
from pathlib import Path

import pytest

import harness
from echo_backend import EchoBackend
from gateway_apps import PhpFpm, Uwsgi, copy_debian_params

CORPUS = Path(harness.SOURCE_DIR) / "tests" / "corpus"


def adapt(text, *pairs):
    """The entry with each (old, new) replaced; every `old` must be there,
    so that an entry edited out from under the test fails it loudly."""
    for old, new in pairs:
        assert old in text, f"the corpus entry no longer has {old!r}"
        text = text.replace(old, new)
    return text


def entry(name):
    return (CORPUS / name).read_text()


def logged_uris(server):
    text = server.access_log.read_text() if server.access_log.exists() else ""
    return [line.split('"')[1].split(" ")[1] for line in text.splitlines() if '"' in line]


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("live-tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=matrix.example.com", "-keyout", str(d / "key.pem"), "-out", str(d / "cert.pem")],
                   check=True, capture_output=True)
    return d


# ---------------------------------------------------------------------------
# Laravel (laravel.conf) with php-fpm

FRONT_CONTROLLER = r"""<?php
header("Content-Type: application/json");
$keys = ["REQUEST_URI", "QUERY_STRING", "SCRIPT_FILENAME", "SCRIPT_NAME", "DOCUMENT_URI"];
$out = [];
foreach ($keys as $k) { $out[$k] = $_SERVER[$k] ?? null; }
echo json_encode($out);
"""


@pytest.fixture
def laravel(tmp_path, make_server):
    fpm = PhpFpm(tmp_path / "fpm")
    conf = adapt(entry("laravel.conf"),
                 ("listen 80;\n    listen [::]:80;", "listen 127.0.0.1:@PORT@;"),
                 ("fastcgi_pass unix:/var/run/php/php8.3-fpm.sock;", f"fastcgi_pass {fpm.address};"))
    server = make_server(harness.base_conf(http=conf), start=False)
    copy_debian_params(server.prefix)
    public = server.prefix / "public"
    (public / "css").mkdir(parents=True)
    (public / "index.php").write_text(FRONT_CONTROLLER)
    (public / "css" / "app.css").write_text("body { color: red }\n")
    (public / "robots.txt").write_text("User-agent: *\n")
    (public / ".env").write_text("APP_KEY=secret\n")
    try:
        yield server.start()
    finally:
        fpm.stop()


def test_laravel_routes_go_to_the_front_controller(laravel):
    r = harness.http(laravel.port, "/users/7?tab=posts", host="example.com")
    assert r.status == 200, r
    php = json.loads(r.body)
    assert php["REQUEST_URI"] == "/users/7?tab=posts"
    assert php["QUERY_STRING"] == "tab=posts"
    assert php["SCRIPT_FILENAME"] == os.path.realpath(laravel.prefix / "public") + "/index.php"
    assert php["SCRIPT_NAME"] == "/index.php"
    assert r.header("X-Frame-Options") == "SAMEORIGIN"
    assert r.header("X-Content-Type-Options") == "nosniff"
    assert r.header("X-Powered-By") is None


def test_laravel_static_files_dotfiles_and_quiet_locations(laravel):
    r = harness.http(laravel.port, "/css/app.css", host="example.com")
    assert (r.status, r.body) == (200, b"body { color: red }\n")
    assert r.header("Content-Type") == "text/css"
    robots = harness.http(laravel.port, "/robots.txt", host="example.com")
    assert robots.status == 200
    assert robots.header("Content-Type") == "text/plain; charset=utf-8"
    assert harness.http(laravel.port, "/.env", host="example.com").status == 403
    # The missing favicon: 404 (error_page 404 /index.php: the front
    # controller answers it, the status stays 404) and no "open() failed".
    fav = harness.http(laravel.port, "/favicon.ico", host="example.com")
    assert fav.status == 404, fav
    assert json.loads(fav.body)["REQUEST_URI"] == "/favicon.ico"
    # The line is written once the response has gone: wait for the last request's.
    harness.wait_until(lambda: "/favicon.ico" in logged_uris(laravel), 5, what="the favicon's access log line")
    uris = logged_uris(laravel)
    # robots.txt's location logs nothing; the favicon's 404 ended in the
    # PHP location (the error page's), whose access_log is on.
    assert "/robots.txt" not in uris and "/favicon.ico" in uris
    assert "favicon.ico" not in laravel.error_log_text()


# ---------------------------------------------------------------------------
# Gitea under a sub-path (gitea.conf)

@pytest.fixture
def gitea(make_server):
    backend = EchoBackend("gitea")
    conf = adapt(entry("gitea.conf"),
                 ("listen 80;", "listen 127.0.0.1:@PORT@;"),
                 ("http://127.0.0.1:3000$uri", f"http://127.0.0.1:{backend.port}$uri"))
    try:
        yield make_server(harness.base_conf(http=conf))
    finally:
        backend.stop()


def test_gitea_subpath_passes_the_uri_still_encoded(gitea):
    r = harness.http(gitea.port, "/gitea/owner/repo/src/branch/a%2Fb/README.md", host="git.example.com")
    assert r.status == 200, r
    assert r.text().startswith("backend=gitea uri=/owner/repo/src/branch/a%2Fb/README.md host=git.example.com ")
    assert " x-forwarded-proto=http" in r.text()
    assert " x-real-ip=127.0.0.1" in r.text()
    assert " x-forwarded-for=127.0.0.1" in r.text()


def test_gitea_subpath_keeps_the_query_in_the_passed_uri(gitea):
    r = harness.http(gitea.port, "/gitea/explore/repos?q=a%20b&page=2", host="git.example.com")
    assert r.status == 200, r
    assert r.text().startswith("backend=gitea uri=/explore/repos?q=a%20b&page=2 ")
    assert harness.http(gitea.port, "/gitea/", host="git.example.com").text().startswith("backend=gitea uri=/ ")
    # Outside the sub-path nothing is proxied.
    assert harness.http(gitea.port, "/owner/repo", host="git.example.com").status == 404


# ---------------------------------------------------------------------------
# Synapse behind TLS (synapse.conf)

def tls_request(port, path, host="matrix.example.com", method="GET", headers=None, body=None):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    c = harness.Conn(port)
    c.sock = ctx.wrap_socket(c.sock, server_hostname=host)
    with c:
        hdrs = list((headers or {}).items()) + [("Connection", "close")]
        return c.request(method, path, hdrs, body, host)


@pytest.fixture
def synapse(make_server, tls_files):
    backend = EchoBackend("synapse")
    conf = adapt(entry("synapse.conf"),
                 ("listen 443 ssl;\n    listen [::]:443 ssl;", "listen 127.0.0.1:@PORT0@ ssl;"),
                 ("listen 8448 ssl default_server;\n    listen [::]:8448 ssl default_server;",
                  "listen 127.0.0.1:@PORT1@ ssl default_server;"),
                 ("@CERT@", str(tls_files / "cert.pem")), ("@KEY@", str(tls_files / "key.pem")),
                 ("http://localhost:8008", f"http://127.0.0.1:{backend.port}"))
    try:
        yield make_server(harness.base_conf(http=conf), nports=2)
    finally:
        backend.stop()


def test_synapse_matrix_paths_reach_synapse_untouched(synapse):
    path = "/_matrix/client/v3/rooms/%21abc%3Aexample.com/send/m.room.message/t%2F1?access_token=x"
    for port in synapse.ports:
        r = tls_request(port, path)
        assert r.status == 200, r
        host = f"matrix.example.com:{port}"
        assert r.text().startswith(f"backend=synapse uri={path} host={host} "), r.text()
        assert " x-forwarded-proto=https" in r.text()
        assert " x-forwarded-for=127.0.0.1" in r.text()
    r = tls_request(synapse.port, "/_synapse/client/pick_idp?idp=oidc")
    assert r.text().startswith("backend=synapse uri=/_synapse/client/pick_idp?idp=oidc ")


def test_synapse_other_paths_are_not_proxied_and_keep_the_default_body_limit(synapse):
    assert tls_request(synapse.port, "/_synapse/admin/v1/users").status == 404
    big = {"Content-Length": str(2 * 1024 * 1024), "Content-Type": "application/octet-stream"}
    c_ctx = ssl.create_default_context()
    c_ctx.check_hostname = False
    c_ctx.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", synapse.port), timeout=10) as raw:
        with c_ctx.wrap_socket(raw, server_hostname="matrix.example.com") as s:
            head = "".join(f"{k}: {v}\r\n" for k, v in big.items())
            s.sendall(f"POST /upload HTTP/1.1\r\nHost: matrix.example.com\r\n{head}\r\n".encode())
            answer = s.recv(4096)
    assert answer.startswith(b"HTTP/1.1 413 "), answer[:100]


# ---------------------------------------------------------------------------
# Django with uwsgi (django-uwsgi/sites-enabled/mysite_nginx.conf)

DJANGO_APP = r'''
import json


def application(environ, start_response):
    keys = ["PATH_INFO", "QUERY_STRING", "REQUEST_URI", "HTTP_HOST", "SERVER_NAME", "REQUEST_METHOD"]
    start_response("200 OK", [("Content-Type", "application/json")])
    return [json.dumps({k: environ.get(k) for k in keys}).encode()]
'''


@pytest.fixture
def django(tmp_path, make_server):
    app = Uwsgi(tmp_path / "uwsgi", DJANGO_APP)
    conf = adapt(entry("django-uwsgi/sites-enabled/mysite_nginx.conf"),
                 ("listen      8000;", "listen      127.0.0.1:@PORT@;"),
                 ("server 127.0.0.1:8001;", f"server {app.address};"))
    server = make_server(harness.base_conf(http=conf), start=False)
    copy_debian_params(server.prefix)
    for d in ("static/css", "media/uploads"):
        (server.prefix / "mysite" / d).mkdir(parents=True)
    (server.prefix / "mysite" / "static" / "css" / "site.css").write_text("h1 { }\n")
    (server.prefix / "mysite" / "media" / "uploads" / "a.txt").write_text("uploaded\n")
    try:
        yield server.start()
    finally:
        app.stop()


def test_django_static_and_media_by_alias_the_rest_to_uwsgi(django):
    r = harness.http(django.port, "/static/css/site.css", host="example.com")
    assert (r.status, r.body) == (200, b"h1 { }\n")
    r = harness.http(django.port, "/media/uploads/a.txt", host="example.com")
    assert (r.status, r.body) == (200, b"uploaded\n")
    assert r.header("Content-Type") == "text/plain; charset=utf-8"
    assert harness.http(django.port, "/static/css/none.css", host="example.com").status == 404
    r = harness.http(django.port, "/polls/3/vote/?choice=2", host="example.com")
    assert r.status == 200, r
    env = json.loads(r.body)
    assert env == {"PATH_INFO": "/polls/3/vote/", "QUERY_STRING": "choice=2", "REQUEST_URI": "/polls/3/vote/?choice=2",
                   "HTTP_HOST": "example.com", "SERVER_NAME": "example.com", "REQUEST_METHOD": "GET"}
