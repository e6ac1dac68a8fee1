"""open_file_cache: a small cached file's bytes are kept in memory and sent
from there where they must pass through memory anyway (TLS, HTTP/2,
sendfile off). What a client sees must not change: the same bytes and
ranges over every protocol, and a changed file served anew once
open_file_cache_valid has run out, its length and bytes agreeing."""

import os
import shutil
import subprocess
import time

import pytest

from harness import base_conf

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None or shutil.which("curl") is None,
                                reason="needs openssl and curl")

SIZE = 5 * 1024


def conf(cert, key):
    return base_conf(http=f"""
    open_file_cache max=100 inactive=60s;
    open_file_cache_valid 1s;
    sendfile on;
    server {{
        listen 127.0.0.1:@PORT0@;
        listen 127.0.0.1:@PORT1@ ssl;
        http2 on;
        ssl_certificate {cert};
        ssl_certificate_key {key};
        root @PREFIX@/www;
        location /nosendfile/ {{ sendfile off; }}
    }}
""")


@pytest.fixture
def server(make_server, tmp_path):
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
                    "-out", str(cert), "-days", "2", "-subj", "/CN=localhost"],
                   check=True, capture_output=True, timeout=60)
    srv = make_server(conf(cert, key), nports=2, start=False)
    www = srv.prefix / "www"
    (www / "nosendfile").mkdir(parents=True)
    srv.start()
    return srv


def put(server, name, data):
    """Writes the file under a temporary name and renames it over the old one."""
    path = server.prefix / "www" / name
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def ways(server):
    plain, tls = server.ports
    return {
        "http1.1": (["--http1.1"], f"http://127.0.0.1:{plain}"),
        "h2c": (["--http2-prior-knowledge"], f"http://127.0.0.1:{plain}"),
        "tls-http1.1": (["-k", "--http1.1"], f"https://127.0.0.1:{tls}"),
        "tls-h2": (["-k", "--http2"], f"https://127.0.0.1:{tls}"),
    }


def fetch(way, path, *args):
    flags, base = way
    r = subprocess.run(["curl", "-s", "-D", "-", *flags, *args, base + path], capture_output=True, timeout=30)
    head, _, body = r.stdout.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return status, headers, body


@pytest.mark.parametrize("path", ["/img.bin", "/nosendfile/img.bin"])
def test_same_bytes_and_ranges_over_every_protocol(server, path):
    data = os.urandom(SIZE)
    put(server, path.lstrip("/"), data)
    for name, way in ways(server).items():
        for _ in range(2):  # the first opens the file, the second is served from the cache
            status, headers, body = fetch(way, path)
            assert (status, body) == (200, data), name
            assert headers["content-length"] == str(SIZE), name
        status, headers, body = fetch(way, path, "-r", "100-1123")
        assert (status, body) == (206, data[100:1124]), name
        assert headers["content-range"] == f"bytes 100-1123/{SIZE}", name
        status, _, body = fetch(way, path, "-r", "0-9,4000-4009")
        assert status == 206 and data[:10] in body and data[4000:4010] in body, name


def test_changed_file_is_served_anew_after_valid(server):
    old, new = os.urandom(SIZE), os.urandom(SIZE + 777)
    put(server, "img.bin", old)
    for way in ways(server).values():
        assert fetch(way, "/img.bin")[2] == old
    put(server, "img.bin", new)
    time.sleep(1.5)  # open_file_cache_valid 1s
    for name, way in ways(server).items():
        status, headers, body = fetch(way, "/img.bin")
        assert (status, body) == (200, new), name
        assert headers["content-length"] == str(len(new)), name
    # Rewritten in place (same inode): once revalidated, length and bytes agree.
    newest = os.urandom(SIZE - 1000)
    (server.prefix / "www" / "img.bin").write_bytes(newest)
    time.sleep(1.5)
    for name, way in ways(server).items():
        status, headers, body = fetch(way, "/img.bin")
        assert (status, body) == (200, newest), name
        assert headers["content-length"] == str(len(newest)), name
