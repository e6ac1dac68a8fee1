"""How HTTP/3 responses leave the server: a 1 MB download is about 750
packets, and they go out in batches, not a system call each. With
`quic_gso on` one sendmsg carries a batch (UDP_SEGMENT); with GSO off
(nginx's default) one sendmmsg carries up to 64 packets. Counted with
strace attached to the server; the bytes are checked too."""

import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

import harness
from harness import wait_until
from test_http3 import cert, gtls, h3_conf, write_site  # noqa: F401 (cert is a fixture)

pytestmark = [
    pytest.mark.skipif(shutil.which("gtlsclient") is None, reason="needs gtlsclient (ngtcp2-client)"),
    pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace"),
    pytest.mark.skipif(harness.IS_NGINX, reason="Debian's nginx has no HTTP/3"),
]


def traced(pid):
    """True once every thread of pid has a tracer."""
    tasks = list(Path(f"/proc/{pid}/task").iterdir())
    return all(re.search(r"^TracerPid:\s+[1-9]", (t / "status").read_text(), re.M) for t in tasks)


def send_calls(srv, tmp_path, download):
    """Downloads /big.bin while strace counts the server's send calls."""
    summary = tmp_path / "strace.txt"
    tracer = subprocess.Popen(["strace", "-f", "-c", "-e", "trace=sendmsg,sendmmsg,sendto", "-o", str(summary),
                               "-p", str(srv.proc.pid)], stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: traced(srv.proc.pid), 10, what="strace attached")
        out = gtls(srv.port, "/big.bin", download=download, timeout=60)
    finally:
        tracer.send_signal(signal.SIGINT)
        tracer.wait(timeout=10)
    calls = {}
    for line in summary.read_text().splitlines():
        fields = line.split()
        if fields and fields[-1] in ("sendmsg", "sendmmsg", "sendto"):
            calls[fields[-1]] = int(fields[3])
    return calls, out


@pytest.mark.parametrize("gso", ["off", "on"])
def test_a_download_leaves_in_batches(make_server, tmp_path, cert, gso):  # noqa: F811
    srv = make_server(h3_conf(cert, extra_server=f"quic_gso {gso};"), start=False)
    big = write_site(srv.prefix)
    srv.start()
    dl = tmp_path / "dl"
    dl.mkdir()
    calls, out = send_calls(srv, tmp_path, dl)
    assert (dl / "big.bin").read_bytes() == big, out[-2000:]
    packets = len(big) // 1400
    total = sum(calls.values())
    # The handshake, acknowledgements and the tail of each flight are
    # single packets, and acknowledgements clock the body out a few packets
    # at a time on loopback (~3.5 per call measured): well under one call
    # per two packets, where a call per packet would be ~800.
    assert total < packets / 2, calls
    if gso == "off":
        assert calls.get("sendmmsg", 0) > 0, calls
