"""early_hints (nginx 1.29): an upstream's 103 Early Hints goes on to the
client, ahead of the final response, when one of the location's
conditions is non-empty and not "0"; without the directive the 103 is
dropped. HTTP/1.1 over raw sockets, HTTP/2 with nghttp. All skip on nginx
1.22, which lacks the directive and takes an upstream's 103 for the final
response."""

import re
import shutil
import socket
import subprocess
import threading

import pytest

import harness


class HintingUpstream:
    """Answers each request with a 103 (Link, and a hidden X-Accel field),
    then a 200."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, c):
        with c:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = c.recv(4096)
                if not chunk:
                    return
                data += chunk
            c.sendall(b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n"
                      b"X-Accel-Expires: 5\r\n\r\n")
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n"
                      b"Connection: close\r\n\r\nfinal\n")

    def stop(self):
        self.sock.close()


@pytest.fixture
def upstream():
    u = HintingUpstream()
    yield u
    u.stop()


@pytest.fixture
def newer_than_122():
    if harness.IS_NGINX:
        out = subprocess.run([harness.BIN, "-v"], capture_output=True, text=True).stderr
        m = re.search(r"nginx/(\d+)\.(\d+)", out)
        if m and (int(m.group(1)), int(m.group(2))) < (1, 29):
            pytest.skip("early_hints came in nginx 1.29")


def header_blocks(nghttp_out):
    """The header blocks nghttp -v received, in order: nghttp prints each
    field ("recv (stream_id=N) name: value") before its HEADERS frame line."""
    blocks, fields = [], []
    for line in nghttp_out.splitlines():
        m = re.search(r"recv \(stream_id=\d+\) (.*)$", line)
        if m:
            fields.append(m.group(1))
        elif "recv HEADERS frame" in line:
            blocks.append(fields)
            fields = []
    return blocks


def site(make_server, upstream, directive):
    conf = harness.base_conf(http=f"""
    map $server_protocol $hint {{ HTTP/2.0 1; default 0; }}
    server {{
        listen 127.0.0.1:@PORT@;
        listen 127.0.0.1:@PORT1@ http2;
        location / {{
            {directive}
            proxy_pass http://127.0.0.1:{upstream.port};
        }}
    }}
""")
    return make_server(conf, nports=2)


def h1_raw(port, version="HTTP/1.1"):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(f"GET /page {version}\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return data
            data += chunk


def h2_frames(port):
    return subprocess.run(["nghttp", "-v", f"http://127.0.0.1:{port}/page"], capture_output=True, text=True,
                          timeout=20).stdout


def test_dropped_without_the_directive(make_server, upstream, newer_than_122):
    # nginx 1.22 knows no 1xx from an upstream: it answers with the 103 as
    # the final response and the 200 as its body.
    s = site(make_server, upstream, "")
    raw = h1_raw(s.port)
    assert raw.startswith(b"HTTP/1.1 200 OK"), raw
    assert raw.endswith(b"final\n")


def test_passed_over_http1_with_a_true_condition(make_server, upstream, newer_than_122):
    s = site(make_server, upstream, "early_hints 1;")
    raw = h1_raw(s.port)
    hints, _, rest = raw.partition(b"\r\n\r\n")
    assert hints.startswith(b"HTTP/1.1 103 Early Hints\r\n"), raw
    assert b"\r\nLink: </style.css>; rel=preload" in hints
    assert b"X-Accel-Expires" not in hints  # hidden, as in the final head
    assert rest.startswith(b"HTTP/1.1 200 OK") and rest.endswith(b"final\n"), raw


def test_not_to_http10_clients(make_server, upstream, newer_than_122):
    s = site(make_server, upstream, "early_hints 1;")
    raw = h1_raw(s.port, "HTTP/1.0")
    assert raw.startswith(b"HTTP/1.1 200 OK"), raw


def test_false_conditions_drop_it(make_server, upstream, newer_than_122):
    s = site(make_server, upstream, 'early_hints 0 "";')
    raw = h1_raw(s.port)
    assert raw.startswith(b"HTTP/1.1 200 OK"), raw


@pytest.mark.skipif(shutil.which("nghttp") is None, reason="nghttp not installed")
def test_http2_only_condition(make_server, upstream, newer_than_122):
    # A map, as nginx's docs suggest `early_hints $http2`: over HTTP/2 only.
    s = site(make_server, upstream, "early_hints $hint;")
    assert h1_raw(s.port).startswith(b"HTTP/1.1 200 OK")
    blocks = header_blocks(h2_frames(s.ports[1]))
    assert len(blocks) == 2, blocks
    assert blocks[0] == [":status: 103", "link: </style.css>; rel=preload"], blocks
    assert blocks[1][0] == ":status: 200", blocks
