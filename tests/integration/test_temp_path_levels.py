"""`*_temp_path DIR LEVEL1 [LEVEL2 [LEVEL3]]` spreads temporary files over
hashed folders as nginx does (ngx_create_hashed_filename): the file
DIR/3/12/0000000123 for levels 1 2, the folders made when first needed.
Seen for proxy_store's proxy_temp_path, a WebDAV PUT's client_body_temp_path
and a proxied request body's (a file without a name, whose folders show). Runs against nginx too (TORII_BIN=/usr/sbin/nginx)."""

import os
import re

import pytest

import harness
from echo_backend import AppBackend, EchoBackend


def tree(root):
    """Every path under `root`, relative, with '/' after folders."""
    out = []
    for folder, dirs, files in os.walk(root):
        rel = os.path.relpath(folder, root)
        for d in dirs:
            out.append(os.path.normpath(os.path.join(rel, d)) + "/")
        for f in files:
            out.append(os.path.normpath(os.path.join(rel, f)))
    return sorted(out)


@pytest.fixture
def srv(make_server):
    backend = EchoBackend("store")
    sink = AppBackend(lambda request: (200, {}, f"got {len(request.body)}\n".encode()))  # the body's length
    conf = harness.base_conf(http=f"""
    server {{
        listen 127.0.0.1:@PORT@;
        root @PREFIX@/www;
        location /store/ {{
            proxy_pass http://127.0.0.1:{backend.port};
            proxy_store on;
            proxy_temp_path @PREFIX@/ptemp 1 2;
        }}
        location /dav/ {{
            dav_methods PUT;
            client_body_buffer_size 1k;
            client_body_temp_path @PREFIX@/btemp 2 1;
        }}
        location /up/ {{
            proxy_pass http://127.0.0.1:{sink.port};
            client_body_buffer_size 1k;
            client_body_temp_path @PREFIX@/utemp 1 2;
        }}
    }}""")
    s = make_server(conf, start=False)
    (s.prefix / "www" / "dav").mkdir(parents=True)
    (s.prefix / "ptemp").mkdir()
    s.start()
    yield s
    backend.server.shutdown()
    sink.stop()


def test_proxy_store_temp_file_goes_into_level_folders(srv):
    r = harness.http(srv.port, "/store/page.txt")
    assert r.status == 200
    stored = srv.prefix / "www" / "store" / "page.txt"
    harness.wait_until(stored.exists, 10, what="the stored file")
    assert stored.read_bytes() == r.body
    # The temporary file was renamed away; its folders stay, one digit then two.
    entries = tree(srv.prefix / "ptemp")
    assert entries, "no level folders"
    assert all(re.fullmatch(r"\d/|\d/\d\d/", e) for e in entries), entries


def test_dav_put_body_file_goes_into_level_folders(srv):
    body = bytes(range(256)) * 80  # 20480 bytes, more than client_body_buffer_size
    with harness.Conn(srv.port) as c:
        c.send(harness.build_request("PUT", "/dav/file.bin", {"Content-Length": str(len(body)),
                                                              "Connection": "close"}))
        c.send(body[:8000])
        base = srv.prefix / "btemp"

        def temp_file():
            files = [e for e in tree(base) if not e.endswith("/")] if base.exists() else []
            return files[0] if len(files) == 1 else None
        name = harness.wait_until(temp_file, 10, what="the body's temporary file")
        m = re.fullmatch(r"(\d\d)/(\d)/(\d{10})", name)
        assert m, name
        number = m.group(3)
        assert m.group(1) == number[8:10] and m.group(2) == number[7:8], name
        c.send(body[8000:])
        r = c.read_response("PUT")
    assert r.status == 201, r
    assert (srv.prefix / "www" / "dav" / "file.bin").read_bytes() == body
    assert not [e for e in tree(srv.prefix / "btemp") if not e.endswith("/")]


def test_proxied_body_file_goes_into_level_folders(srv):
    r = harness.http(srv.port, "/up/x", method="POST", body=b"b" * 50000)
    assert r.status == 200 and r.body == b"got 50000\n"
    # The file had no name (nginx unlinks its own at once); its folders stay.
    entries = tree(srv.prefix / "utemp")
    assert entries, "no level folders"
    assert all(re.fullmatch(r"\d/|\d/\d\d/", e) for e in entries), entries


def test_levels_are_checked_as_nginx_checks_them(make_server):
    s = make_server(harness.base_conf(http="""
    client_body_temp_path @PREFIX@/t 3 4 3;
    proxy_temp_path @PREFIX@/p 1 9 1;
    server { listen 127.0.0.1:@PORT@; }"""), start=False)
    s.leases = [harness.PortLease()]
    s.ports = [s.leases[0].port]
    s.write_conf()
    p = harness.cli(["-t", "-c", str(s.conf_path)], prefix=s.prefix)
    assert p.returncode != 0
    assert '"proxy_temp_path" directive invalid value' in p.stderr + p.stdout
