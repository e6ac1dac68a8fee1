"""autoindex: listings in nginx's HTML (escaped names, 50-column names cut
with "..>", dates, exact and rounded sizes, directories first, hidden
files left out), JSON, JSONP and XML; the redirect that adds the
trailing slash. Each listing is compared byte for byte with Debian's
nginx serving the same directory, when nginx is installed."""

import json
import os
import shutil
import subprocess

import pytest

import harness
from harness import base_conf, http

CONF = r"""
    server {
        listen 127.0.0.1:@PORT@;
        root @ROOT@;
        location /list/ { autoindex on; }
        location /rounded/ { alias @ROOT@/list/; autoindex on; autoindex_exact_size off; }
        location /local/ { alias @ROOT@/list/; autoindex on; autoindex_localtime on; }
        location /json/ { alias @ROOT@/list/; autoindex on; autoindex_format json; }
        location /jsonp/ { alias @ROOT@/list/; autoindex on; autoindex_format jsonp; }
        location /xml/ { alias @ROOT@/list/; autoindex on; autoindex_format xml; }
        location /off/ { alias @ROOT@/list/; }
        location /indexed/ { autoindex on; }
    }
"""

MTIME = 1700000000  # 2023-11-14 22:13:20 UTC

LONG = "a-very-long-file-name-that-goes-past-fifty-columns-for-sure.txt"
FIFTY = ("fifty-columns-" * 4)[:50]  # fits the column exactly: no cut, no padding
NAMES = {
    "small.txt": 5,
    "empty": 0,
    "ten-k.bin": 10000,
    "twelve-k.bin": 12 * 1024 + 600,
    "two-m.bin": 2 * 1024 * 1024 - 1000,
    "big.bin": 1536 * 1024 * 1024,  # sparse: 1.5G rounds to 2G
    LONG: 1,
    "<b>&\"quoted\".txt": 3,
    "space and %.txt": 4,
    FIFTY: 6,
    ".hidden": 7,
}


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = tmp_path_factory.mktemp("autoindex") / "www"
    listing = root / "list"
    listing.mkdir(parents=True)
    for name, size in NAMES.items():
        with open(listing / name, "wb") as f:
            f.truncate(size)
    for d in ("zeta-dir", "alpha-dir", "a-directory-name-that-goes-well-past-fifty-columns-too"):
        (listing / d).mkdir()
    os.symlink("missing-target", listing / "dangling-link")
    for entry in os.listdir(listing):
        os.utime(listing / entry, (MTIME, MTIME), follow_symlinks=False)
    (root / "indexed").mkdir()
    (root / "indexed" / "index.html").write_text("the index\n")
    return root


def start(make_server, root, name, binary=None):
    conf = base_conf(CONF.replace("@ROOT@", str(root)))
    if binary is None:
        return make_server(conf, name=name)
    server = NginxServer(conf, root.parent / name)
    server.start()
    return server


class NginxServer(harness.Server):
    """Debian's nginx on the same config, to compare against."""

    def command(self):
        g = "daemon off; master_process on;" + (" user root;" if os.geteuid() == 0 else "")
        return ["/usr/sbin/nginx", "-p", str(self.prefix) + "/", "-c", str(self.conf_path), "-e", "stderr", "-g", g]


@pytest.fixture(scope="module")
def reference(root):
    """nginx serving the same tree, or None."""
    if harness.IS_NGINX or not shutil.which("nginx") and not os.path.exists("/usr/sbin/nginx"):
        yield None
        return
    server = start(None, root, "reference-nginx", binary="nginx")
    yield server
    server.stop()


@pytest.fixture
def srv(make_server, root):
    return start(make_server, root, "under-test")


PATHS = ["/list/", "/rounded/", "/local/", "/json/", "/jsonp/?callback=cb.x_1", "/jsonp/", "/xml/"]


@pytest.mark.parametrize("path", PATHS)
def test_same_bytes_as_nginx(srv, reference, path):
    if reference is None:
        pytest.skip("no nginx to compare with (or nginx is the binary under test)")
    ours = http(srv.port, path)
    theirs = http(reference.port, path)
    assert ours.status == theirs.status == 200
    assert ours.header("Content-Type") == theirs.header("Content-Type")
    assert ours.body == theirs.body


def test_html_listing(srv):
    r = http(srv.port, "/list/")
    assert r.status == 200 and r.header("Content-Type") == "text/html"
    lines = r.body.decode("latin-1").split("\r\n")
    assert lines[:4] == ["<html>", "<head><title>Index of /list/</title></head>", "<body>",
                         '<h1>Index of /list/</h1><hr><pre><a href="../">../</a>']
    entries = lines[4:-3]
    assert lines[-3:] == ["</pre><hr></body>", "</html>", ""]
    # Directories first, then files, each by name; .hidden is not there.
    hrefs = [e.split('"')[1] for e in entries]
    assert hrefs == ["a-directory-name-that-goes-well-past-fifty-columns-too/", "alpha-dir/", "zeta-dir/",
                     "%3Cb%3E%26%22quoted%22.txt", LONG, "big.bin", "dangling-link", "empty",
                     FIFTY, "small.txt", "space%20and%20%25.txt",
                     "ten-k.bin", "twelve-k.bin", "two-m.bin"]
    assert entries[1] == '<a href="alpha-dir/">alpha-dir/</a>' + " " * 40 + " 14-Nov-2023 22:13" + " " * 19 + "-"
    long_dir = "a-directory-name-that-goes-well-past-fifty-columns-too"
    assert entries[0] == (f'<a href="{long_dir}/">{long_dir[:47]}..&gt;</a> 14-Nov-2023 22:13' + " " * 19 + "-")
    assert '>&lt;b&gt;&amp;&quot;quoted&quot;.txt</a>' in entries[3]
    assert entries[4] == f'<a href="{LONG}">{LONG[:47]}..&gt;</a> 14-Nov-2023 22:13' + "1".rjust(20)
    assert entries[8] == f'<a href="{FIFTY}">{FIFTY}</a> 14-Nov-2023 22:13' + "6".rjust(20)
    assert entries[9] == '<a href="small.txt">small.txt</a>' + " " * 41 + " 14-Nov-2023 22:13" + "5".rjust(20)


def test_rounded_sizes(srv):
    body = http(srv.port, "/rounded/").body.decode("latin-1")
    sizes = {line.split('"')[1]: line[-7:] for line in body.split("\r\n") if line.startswith("<a href=") and "../" not in line}
    assert sizes["small.txt"] == "      5"
    assert sizes["ten-k.bin"] == "    10K"
    assert sizes["twelve-k.bin"] == "    13K"
    assert sizes["two-m.bin"] == "     2M"
    assert sizes["big.bin"] == "     2G"
    assert sizes["alpha-dir/"] == "      -"


def test_json_and_xml(srv):
    entries = json.loads(http(srv.port, "/json/").body)
    assert entries[0] == {"name": "a-directory-name-that-goes-well-past-fifty-columns-too", "type": "directory",
                          "mtime": "Tue, 14 Nov 2023 22:13:20 GMT"}
    small = next(e for e in entries if e["name"] == "small.txt")
    assert small == {"name": "small.txt", "type": "file", "mtime": "Tue, 14 Nov 2023 22:13:20 GMT", "size": 5}
    assert next(e for e in entries if e["name"] == "dangling-link")["type"] == "other"
    r = http(srv.port, "/jsonp/?callback=show")
    assert r.header("Content-Type") == "application/javascript"
    assert r.body.startswith(b"/* callback */\r\nshow([") and r.body.endswith(b"]);")
    assert http(srv.port, "/jsonp/?callback=bad(").status == 400
    x = http(srv.port, "/xml/")
    assert x.header("Content-Type") == "text/xml; charset=utf-8"
    assert b'<file mtime="2023-11-14T22:13:20Z" size="5">small.txt</file>\r\n' in x.body
    assert b'<file mtime="2023-11-14T22:13:20Z" size="3">&lt;b&gt;&amp;&quot;quoted&quot;.txt</file>' in x.body


def test_off_index_and_redirect(srv):
    assert http(srv.port, "/off/").status == 403
    assert http(srv.port, "/indexed/").body == b"the index\n"
    r = http(srv.port, "/list/alpha-dir")
    assert r.status == 301
    assert r.header("Location").endswith("/list/alpha-dir/")
    assert http(srv.port, "/list/alpha-dir/").status == 200
