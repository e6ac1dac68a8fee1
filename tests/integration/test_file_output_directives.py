"""output_buffers, read_ahead and send_lowat (nginx's http core, on
Linux): their arguments are checked with nginx's words; read_ahead asks
the kernel for sequential read-ahead on files past 128 KB, as nginx does
(posix_fadvise, seen with strace); send_lowat is "not supported, ignored"
with nginx's warning; output_buffers other than nginx's default is
accepted with a warning, as torii reads files in pieces of its own."""

import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

import harness
from harness import IS_NGINX, base_conf, cli, http, wait_until


def config_test(make_server, http_level):
    s = make_server(base_conf(http_level + "\n    server { listen 127.0.0.1:@PORT@; }"), start=False)
    s.leases = [harness.PortLease()]
    s.ports = [s.leases[0].port]
    s.write_conf()
    out = cli(["-t", "-c", str(s.conf_path)], prefix=s.prefix)
    return out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize("line,message", [
    ("output_buffers 0 32k;", '"output_buffers" directive invalid value'),
    ("output_buffers 2 abc;", '"output_buffers" directive invalid value'),
    ("output_buffers 2 0;", '"output_buffers" directive invalid value'),
    ("output_buffers 2;", 'invalid number of arguments in "output_buffers" directive'),
    ("output_buffers 2 32k; output_buffers 2 32k;", '"output_buffers" directive is duplicate'),
    ("read_ahead lots;", '"read_ahead" directive invalid value'),
    ("read_ahead 1k 2k;", 'invalid number of arguments in "read_ahead" directive'),
    ("send_lowat lots;", '"send_lowat" directive invalid value'),
])
def test_bad_values(make_server, line, message):
    ok, out = config_test(make_server, line)
    assert not ok, out
    assert message in out


@pytest.mark.parametrize("line", ["send_lowat 0;", "send_lowat 16k;"])
def test_send_lowat_is_ignored_with_nginx_warning(make_server, line):
    ok, out = config_test(make_server, line)
    assert ok, out
    assert '"send_lowat" is not supported, ignored' in out


def test_output_buffers_load(make_server):
    ok, out = config_test(make_server, "output_buffers 2 32k;")
    assert ok, out
    assert "warn" not in out and "has no effect" not in out  # nginx's default: nothing to say
    ok, out = config_test(make_server, "output_buffers 4 64k; read_ahead 512k;")
    assert ok, out
    if not IS_NGINX:
        assert '"output_buffers" has no effect' in out


def worker_pids(pid):
    """The server's process and its children (nginx's workers)."""
    pids = [pid]
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    return pids


def traced(pids):
    for pid in pids:
        for t in Path(f"/proc/{pid}/task").iterdir():
            if not re.search(r"^TracerPid:\s+[1-9]", (t / "status").read_text(), re.M):
                return False
    return True


def fadvise_calls(srv, tmp_path, paths):
    """The posix_fadvise calls the server makes while serving `paths`."""
    out = tmp_path / "strace.txt"
    pids = worker_pids(srv.proc.pid)
    cmd = ["strace", "-f", "-e", "trace=fadvise64", "-o", str(out)]
    for p in pids:
        cmd += ["-p", str(p)]
    tracer = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: traced(pids), 10, what="strace attached")
        for path in paths:
            r = http(srv.port, path)
            assert r.status == 200, r
    finally:
        tracer.send_signal(signal.SIGINT)
        tracer.wait(timeout=10)
    return [line for line in out.read_text().splitlines() if "fadvise64(" in line]


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_read_ahead_asks_for_sequential_reads(make_server, tmp_path):
    srv = make_server(base_conf("""
    server {
        listen 127.0.0.1:@PORT@;
        root @PREFIX@/www;
        location /ahead/ { read_ahead 512k; }
    }"""), start=False)
    www = srv.prefix / "www"
    for d in ("ahead", "plain"):
        (www / d).mkdir(parents=True)
        (www / d / "big.bin").write_bytes(b"x" * (200 * 1024))
        (www / d / "small.bin").write_bytes(b"x" * (100 * 1024))
    srv.start()
    calls = fadvise_calls(srv, tmp_path, ["/ahead/big.bin"])
    assert len(calls) == 1 and "POSIX_FADV_SEQUENTIAL" in calls[0], calls
    # Not for a file of 128 KB or less, nor where read_ahead is 0.
    assert fadvise_calls(srv, tmp_path, ["/ahead/small.bin", "/plain/big.bin", "/plain/small.bin"]) == []
