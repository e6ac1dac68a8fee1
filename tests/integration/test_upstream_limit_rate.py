"""proxy_limit_rate and uwsgi_limit_rate (fastcgi_limit_rate, scgi_limit_rate
alike): the pace at which the upstream's response is read while it is
buffered, as nginx's event pipe: a second's worth at once, then the rate.
A 1 MB body at 200k/s takes about 4 s; 0 (the default) and a response that
is not buffered are read at once. The upstream writes its answer as soon as
the request's first bytes come (an HTTP/1.1 status line, which uwsgi's
reader takes as well). The same tests pass against nginx."""

import time

import pytest

import harness
from scripted_upstream import replying

BODY = 1024 * 1024
PASS = {"proxy": "proxy_pass http://", "uwsgi": "uwsgi_pass "}


def whole_body(_request):
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
            b"Content-Length: %d\r\nConnection: close\r\n\r\n" % BODY + b"x" * BODY)


@pytest.fixture
def upstream():
    u = replying(whole_body, complete=bool, drain=True)
    yield u
    u.close()


@pytest.mark.parametrize("module", sorted(PASS))
@pytest.mark.parametrize("settings,paced", [
    ("limit_rate 200k;", True),
    ("limit_rate 0;", False),
    ("", False),
    ("limit_rate 200k; @buffering off;", False),
])
def test_limit_rate(make_server, upstream, module, settings, paced):
    lines = " ".join(f"{module}_{s.strip().lstrip('@')};" for s in settings.split(";") if s.strip())
    srv = make_server(harness.base_conf(f"""
    server {{
        listen 127.0.0.1:@PORT@;
        location / {{
            {PASS[module]}127.0.0.1:{upstream.port};
            {lines}
        }}
    }}
"""))
    start = time.monotonic()
    r = harness.http(srv.port, "/", timeout=30)
    took = time.monotonic() - start
    assert r.status == 200 and len(r.body) == BODY
    if paced:
        # 200k at once, then 200k a second: about 4 s for 1 MB.
        assert 3.4 < took < 20, took
    else:
        assert took < 3, took


@pytest.mark.parametrize("line", ["proxy_limit_rate fast;", "fastcgi_limit_rate 1q;", "proxy_limit_rate 1k 2k;"])
def test_limit_rate_bad_values(tmp_path, line):
    (tmp_path / "logs").mkdir()
    (tmp_path / "t.conf").write_text(f"events {{}} http {{ {line} }}")
    r = harness.cli(["-t", "-c", str(tmp_path / "t.conf")], prefix=tmp_path)
    assert r.returncode != 0
    out = r.stdout + r.stderr
    name = line.split()[0]
    assert f'"{name}" directive' in out and ("invalid value" in out or "invalid number of arguments" in out), out
