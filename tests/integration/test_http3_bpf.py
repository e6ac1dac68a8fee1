"""`quic_bpf on`: with two workers, a reuseport eBPF program makes the
kernel deliver a client's short-header datagrams to the worker that owns
its connection, so a client that moves (gtlsclient --change-local-addr)
needs no hand-over between workers. The metrics page counts hand-overs
(torii_quic_datagrams_handed_total): none with quic_bpf on, some with it off.

torii only: Debian's nginx 1.22 has no HTTP/3 (no http_v3 module).
"""

import subprocess

import pytest

import harness
from harness import wait_until
from test_http3 import cert, gtls, h3_conf, statuses, write_site  # noqa: F401 (cert is a fixture)
from test_metrics import value

pytestmark = [
    pytest.mark.skipif(harness.IS_NGINX, reason="Debian's nginx has no HTTP/3"),
]

MOVES = 12  # clients that change address; with the hash alone, ~half land on the other worker


def bpf_conf(cert, bpf, listen="listen 127.0.0.1:@PORT0@ ssl;\n        http3 on;"):
    return h3_conf(cert, listen=listen, extra_server="location = /metrics { metrics; }").replace(
        "# written by the integration tests", f"worker_processes 2;\nquic_bpf {bpf};")


def scrape(port):
    r = subprocess.run(["curl", "-sk", "--resolve", f"a.test:{port}:127.0.0.1", f"https://a.test:{port}/metrics"],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 0, r.stderr
    return r.stdout


def handed(port):
    return value(scrape(port), "torii_quic_datagrams_handed_total")


def migrate(port, tmp_path, n=MOVES):
    args = ["--change-local-addr=100ms", "--delay-stream=400ms"]
    for i in range(n):
        dl = tmp_path / f"dl{port}-{i}"
        dl.mkdir()
        out = gtls(port, "/index.html", args=args, download=dl)
        assert (dl / "index.html").exists(), f"client {i}: {out[-2000:]}"
        assert (dl / "index.html").read_text() == "hello h3\n"


@pytest.mark.parametrize("bpf", ["on", "off"])
def test_moved_clients_reach_their_worker(make_server, tmp_path, cert, bpf):
    srv = make_server(bpf_conf(cert, bpf), start=False)
    write_site(srv.prefix)
    srv.start()
    migrate(srv.port, tmp_path)
    n = handed(srv.port)
    if bpf == "on":
        assert n == 0, srv.error_log_text()[-3000:]
        assert "quic_bpf" not in srv.error_log_text()  # no fallback warning: the program is in
    else:
        assert n > 0
    # The counters are on the page in both cases.
    assert value(scrape(srv.port), "torii_quic_handshakes_total", outcome="completed") >= MOVES


def test_reload_puts_new_sockets_in_the_map(make_server, tmp_path, cert):
    # A reload that adds an address opens new sockets in both workers:
    # they must take their slots in a map, or moved clients of the new
    # address would be handed over again.
    srv = make_server(bpf_conf(cert, "on"), nports=2, start=False, wait_ports=[0])
    write_site(srv.prefix)
    srv.start()
    two = bpf_conf(cert, "on", listen="listen 127.0.0.1:@PORT0@ ssl;\n        listen 127.0.0.1:@PORT1@ ssl;\n"
                                      "        http3 on;")
    srv.reload(two)
    port1 = srv.ports[1]
    wait_until(lambda: statuses(gtls(port1, "/index.html")) == ["200"], 10, what="the new address")
    migrate(port1, tmp_path)
    assert handed(srv.port) == 0


def test_quic_bpf_is_a_main_context_flag(tmp_path, cert):
    prefix = tmp_path / "p"
    (prefix / "logs").mkdir(parents=True)
    conf = prefix / "t.conf"
    conf.write_text(h3_conf(cert, extra_server="quic_bpf on;").replace("@PREFIX@", str(prefix))
                    .replace("@PORT0@", "1"))
    r = harness.cli(["-t", "-c", str(conf)], prefix=prefix)
    assert r.returncode != 0
    assert '"quic_bpf" directive is not allowed here' in (r.stdout + r.stderr)


def test_reload_to_quic_bpf_off_detaches_the_program(make_server, tmp_path, cert):
    srv = make_server(bpf_conf(cert, "on"), start=False)
    write_site(srv.prefix)
    srv.start()
    srv.reload(bpf_conf(cert, "off"))
    wait_until(lambda: "reconfiguration done" in srv.error_log_text(), 10, what="reload")
    # The kernel's hash again: moved clients land on either worker, and
    # those on the other one are handed over.
    migrate(srv.port, tmp_path)
    assert handed(srv.port) > 0
