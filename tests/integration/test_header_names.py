"""Request header names nginx calls invalid: anything beyond letters,
digits and '-', and '_' unless underscores_in_headers is on. With
ignore_invalid_headers on (the default) such a field is dropped; off, it
is kept and passed upstream (MinIO's docs turn it off for S3 metadata
names like x-amz-meta-my_key). The same over HTTP/1.1 (curl) and HTTP/2
(curl --http2-prior-knowledge). Runs against nginx too."""

import subprocess

import pytest

from bad_upstream import BadUpstream
from harness import base_conf


@pytest.fixture
def echo():
    u = BadUpstream("echo")
    yield u
    u.stop()


def conf(echo_port, http2):
    # nginx 1.22's plain `listen ... http2` takes HTTP/2 only.
    h2 = " http2" if http2 else ""

    def server(port, extra):
        return f"""
    server {{
        listen 127.0.0.1:@PORT{port}@{h2};
        {extra}
        location / {{ proxy_pass http://127.0.0.1:{echo_port}/echo; }}
    }}"""
    return base_conf(server(0, "") + server(1, "ignore_invalid_headers off;") +
                     server(2, "underscores_in_headers on;"))


def sent_names(port, http2):
    cmd = ["curl", "-s", "--noproxy", "*", "-H", "X-Plain-1: a", "-H", "X_Under: b", "-H", "Weird.Name: c"]
    cmd += ["--http2-prior-knowledge"] if http2 else []
    r = subprocess.run(cmd + [f"http://127.0.0.1:{port}/"], capture_output=True, timeout=10)
    head = r.stdout.decode("latin-1").split("\r\n\r\n", 1)[0]
    return sorted(line.split(":", 1)[0].lower() for line in head.split("\r\n")[1:]
                  if line.split(":", 1)[0].lower() in ("x-plain-1", "x_under", "weird.name"))


@pytest.mark.parametrize("http2", [False, True], ids=["http1", "http2"])
def test_invalid_names_dropped_or_kept(make_server, echo, http2):
    srv = make_server(conf(echo.port, http2), nports=3)
    assert sent_names(srv.ports[0], http2) == ["x-plain-1"]
    assert sent_names(srv.ports[1], http2) == ["weird.name", "x-plain-1", "x_under"]
    assert sent_names(srv.ports[2], http2) == ["x-plain-1", "x_under"]
