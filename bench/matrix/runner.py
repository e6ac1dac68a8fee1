"""Runs the scenario matrix: starts the backends and every installed peer
once, loads each row to saturation and then at a fixed rate, in rounds
that alternate the servers' order, and writes the results file."""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from . import measure, peers, report, scenarios
from . import sites as S

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(HERE)


def parse_args(argv):
    p = argparse.ArgumentParser(prog="bench/run", description=(
        "The seeds' scenario matrix for torii and every installed peer, side by side; writes "
        "bench/results/DATE-HOST.md with plots."))
    p.add_argument("--quick", action="store_true", help="3 s per run, one round, fewer requests (a smoke run)")
    p.add_argument("--peers", default="nginx,haproxy,caddy,h2o,floor",
                   help="peers beside torii, those installed are run (default: nginx,haproxy,caddy,h2o,floor; "
                   "floor is bench/floor's programs, built with c++ for the run)")
    p.add_argument("--out", default=os.path.join(HERE, "results"), help="directory of the results file")
    p.add_argument("--rows", default="", help="only rows whose key matches this regular expression")
    p.add_argument("--duration", type=float, help="seconds per run (default 10, --quick 3)")
    p.add_argument("--rounds", type=int, help="rounds (default 3, --quick 1)")
    p.add_argument("--workers", type=int, default=1, help="workers/threads of every server (default 1)")
    p.add_argument("--server-cpus", default="0", help="CPUs the servers are pinned to (taskset list)")
    p.add_argument("--client-cpus", default="1", help="CPUs of the load tool and the backends")
    p.add_argument("--load-prefix", default="",
                   help="command prefix that runs the load tool elsewhere, e.g. 'ssh loadhost'")
    p.add_argument("--listen", default="127.0.0.1", help="address the load tool reaches the servers at")
    p.add_argument("--torii", default=os.path.join(REPO, "build", "torii"))
    p.add_argument("--torii-load", default=os.path.join(REPO, "build", "torii-load"))
    p.add_argument("--ab-requests", type=int, help="requests per ab run (default 50000 as the seed, --quick 5000)")
    p.add_argument("--idle", type=int, default=1000, metavar="N",
                   help="connections held open to measure memory per idle connection (default 1000; 0: skip)")
    p.add_argument("--no-plots", action="store_true")
    a = p.parse_args(argv)
    a.duration = a.duration or (3 if a.quick else 10)
    a.rounds = a.rounds or (1 if a.quick else 3)
    a.ab_requests = a.ab_requests or (5000 if a.quick else 50000)
    return a


def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def wait_port(host, port, proc, seconds=15):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            socket.create_connection((host, port), timeout=0.5).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def version_of(argv):
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except OSError:
        return "?"
    text = (r.stdout + r.stderr).strip().splitlines()
    return text[0][:80] if text else "?"


VERSION_COMMANDS = {"nginx": ["/usr/sbin/nginx", "-v"], "haproxy": ["haproxy", "-v"], "caddy": ["caddy", "version"],
                    "h2o": ["h2o", "--version"]}


class Matrix:
    def __init__(self, args):
        self.a = args
        self.work = tempfile.mkdtemp(prefix="torii-bench-")
        self.procs = {}
        self.skipped = []
        self.results = {}
        self.raw = []

    # -- servers -------------------------------------------------------

    def start(self):
        a = self.a
        self.root, self.cert, self.key = S.make_files(self.work)
        ports = iter(free_ports(5 + len(S.SITES) * len(peers.ALL)))
        self.backends = S.Backends(app=[f"{a.listen}:{next(ports)}"],
                                   whoami=[f"{a.listen}:{next(ports)}" for _ in range(4)])
        prefix = os.path.join(self.work, "backend")
        os.makedirs(prefix, exist_ok=True)
        conf = os.path.join(prefix, "nginx.conf")
        with open(conf, "w") as f:
            f.write(S.backend_config(self.backends, prefix))
        self.backend = self._spawn("backend", ["taskset", "-c", a.client_cpus, "/usr/sbin/nginx", "-p", prefix + "/",
                                               "-c", conf, "-g", "daemon off; master_process off;"], dict(os.environ))
        for addr in self.backends.app + self.backends.whoami:
            if not wait_port(a.listen, int(addr.rsplit(":", 1)[1]), self.backend):
                sys.exit(f"the backend nginx did not start ({prefix}/error.log)")
        wanted = ["torii"] + [n for n in a.peers.split(",") if n and n != "torii"]
        self.peers = {}
        for name in wanted:
            if name not in peers.ALL:
                sys.exit(f"unknown peer {name!r}: one of {', '.join(peers.ALL)}")
            peer = peers.ALL[name](self.work, a.workers, a.torii if name == "torii" else None, a.listen)
            if not peer.installed():
                self.skipped.append(("all", name, "not installed"))
                continue
            for site in S.SITES:
                site.ports[name] = next(ports)
            argv = peer.command(self.root, self.cert, self.key, self.backends)
            proc = self._spawn(name, ["taskset", "-c", a.server_cpus] + argv, peer.env())
            served = [s for s in S.SITES if peer.why_not(s, "h2" if s.tls else "h1") is None]
            if not all(wait_port(a.listen, s.ports[name], proc) for s in served):
                self.skipped.append(("all", name, f"did not start: see {peer.work}"))
                self._stop(name)
                continue
            self.peers[name] = peer

    def _spawn(self, name, argv, env):
        log = open(os.path.join(self.work, f"{name}.out"), "w")
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.procs[name] = proc
        return proc

    def _stop(self, name):
        proc = self.procs.pop(name, None)
        if proc and proc.poll() is None:
            try:
                os.killpg(proc.pid, 15)
                proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                os.killpg(proc.pid, 9)

    def stop(self):
        for name in list(self.procs):
            self._stop(name)
        shutil.rmtree(self.work, ignore_errors=True)

    # -- rows ----------------------------------------------------------

    def targets(self, row):
        """[(server name, pid, url)] for a row, recording who cannot run it."""
        if row.site.startswith("direct:"):
            group = self.backends.group(row.site.split(":")[1])
            return [("backend", self.backend.pid, f"http://{group[0]}{row.path}")]
        site = S.site(row.site)
        scheme = "https" if site.tls else "http"
        out = []
        for name, peer in self.peers.items():
            why = peer.why_not(site, row.protocol)
            if why:
                self.skipped.append((row.key, name, why))
                continue
            proc = self.procs[name]
            if proc.poll() is not None:
                self.skipped.append((row.key, name, "the server had exited"))
                continue
            host = "localhost" if self.a.listen == "127.0.0.1" else self.a.listen
            out.append((name, proc.pid, f"{scheme}://{host}:{site.ports[name]}{row.path}"))
        return out

    def run_once(self, row, name, pid, url, rate=None):
        """One run. Server CPU per request is read over torii-load's own
        window (from when its connections are open, against the mean rate
        it held), and over the whole of an ab run (whose count is exact)."""
        mark = {}

        def warm():
            mark["cpu"], mark["t"] = measure.cpu_seconds(pid), time.monotonic()

        warm()
        if row.tool == "ab":
            r = self.load.ab_run(url, row.connections, self.a.ab_requests, row.keepalive)
            requests = lambda seconds: r["requests"]  # noqa: E731
        else:
            r = self.load.torii_load_run(url, row.protocol, row.connections, self.a.duration, rate,
                                         row.connect_per_request, on_warm=warm)
            requests = lambda seconds: r["rps"] * seconds  # noqa: E731
        after, t1 = measure.cpu_seconds(pid), time.monotonic()
        seconds = t1 - mark["t"]
        n = requests(seconds)
        r["cpu_us"] = (after - mark["cpu"]) * 1e6 / n if n else None
        r["busy"] = (after - mark["cpu"]) / seconds
        self.raw.append({"row": row.key, "server": name, "rate": rate, **{k: v for k, v in r.items() if k != "cdf"}})
        print(f"  {row.key:20} {name:8} {'rate ' + str(rate) if rate else 'saturation':>12}: "
              f"{r['rps']:9.0f} req/s  {r['cpu_us'] or 0:7.1f} µs CPU/req  busy {r['busy'] * 100:3.0f}%  "
              f"p50 {r['p50_ms']:.2f} ms  p99 {r['p99_ms']:.2f} ms  failed {r['failed']}"
              + (f"  {r['errors']}" if r["errors"] else ""), flush=True)
        return r

    def run_rounds(self, row, targets, rate=None):
        runs = {name: [] for name, _, _ in targets}
        for rnd in range(self.a.rounds):
            order = targets if rnd % 2 == 0 else list(reversed(targets))
            for name, pid, url in order:
                try:
                    runs[name].append(self.run_once(row, name, pid, url, rate))
                except (RuntimeError, subprocess.TimeoutExpired, ValueError) as e:
                    print(f"  {row.key} {name}: {e}")
        return {name: report.summarise(r) for name, r in runs.items()}

    def measure_idle(self):
        """Before any load, while each server's memory is still its own:
        RSS per idle keep-alive connection (plain, TLS HTTP/1.1, TLS
        HTTP/2), then the RSS left a few seconds after they all closed."""
        a = self.a
        self.idle = {}
        count = a.idle
        kinds = (("plain", S.site("static"), "h1"), ("tls", S.site("static_tls"), "h1"),
                 ("tls_h2", S.site("static_tls"), "h2"))
        for name, peer in (self.peers.items() if count > 0 else ()):
            entry, held = {}, []
            pid = self.procs[name].pid
            start = measure.settled_rss_kib(pid)
            try:
                for kind, site, proto in kinds:
                    if peer.why_not(site, proto) is None and self.procs[name].poll() is None:
                        entry[kind] = measure.idle_connection_kib(pid, a.listen, site.ports[name], site.tls, count,
                                                                  held, alpn="h2" if proto == "h2" else "http/1.1")
            except (OSError, RuntimeError) as e:
                print(f"  idle connections, {name}: {e}")
            finally:
                if entry and self.procs[name].poll() is None:
                    entry["after_close_pct"] = measure.rss_after_close(pid, start, held)
                for s in held:
                    s.close()
            if entry:
                self.idle[name] = entry
                print(f"  idle connection: {name} " + ", ".join(
                    f"{k} {v:.1f} KiB" if k != "after_close_pct" else f"RSS after close {v:+.0f}%"
                    for k, v in entry.items()))

    def run(self):
        a = self.a
        self.load = measure.LoadTool(a.torii_load, None if a.load_prefix else a.client_cpus, a.load_prefix, self.work)
        rows = [r for r in scenarios.ROWS if re.search(a.rows, r.key)]
        self.measure_idle()
        for row in rows:
            targets = self.targets(row)
            if not targets:
                continue
            print(f"{row.key}: {row.title}", flush=True)
            res = {"saturation": self.run_rounds(row, targets), "fixed": {}}
            # The fixed rate is half what torii and nginx (the reference)
            # both reached, so both run well below saturation; a slower peer
            # that cannot hold it shows that in "req/s held".
            reference = ("torii", "nginx", "backend")
            rates = [s["rps"] for n, s in res["saturation"].items() if n in reference and s and s["rps"]]
            if row.tool == "torii-load" and rates:
                res["rate"] = max(1, round(min(rates) / 2))
                res["fixed"] = self.run_rounds(row, targets, res["rate"])
            self.results[row.key] = res
        return rows

    def write(self, rows, argv):
        a = self.a
        host = platform.node()
        stem = datetime.date.today().isoformat() + "-" + host
        cpu = "?"
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.+)$", f.read(), re.M)
            cpu = m.group(1).strip() if m else cpu
        versions = {"torii": version_of([a.torii, "-v"])}
        versions.update({n: version_of(VERSION_COMMANDS[n]) for n in self.peers if n in VERSION_COMMANDS})
        meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"), "host": host, "cpu": cpu,
                "cpus": os.cpu_count(), "kernel": platform.release(), "command": "bench/run " + " ".join(argv),
                "server_cpus": a.server_cpus, "client_cpus": a.client_cpus, "workers": a.workers,
                "duration": a.duration, "rounds": a.rounds, "ab_requests": a.ab_requests, "versions": versions}
        path = report.write(a.out, stem, meta, rows, self.results, self.skipped, self.idle, plots=not a.no_plots)
        with open(os.path.join(a.out, stem + ".json"), "w") as f:
            json.dump({"meta": meta, "runs": self.raw, "idle_kib": self.idle, "skipped": self.skipped}, f, indent=1)
        return path


def main(argv):
    args = parse_args(argv)
    for tool in (args.torii, args.torii_load):
        if not os.access(tool, os.X_OK):
            sys.exit(f"no {tool}: build first (see README) or pass --torii/--torii-load")
    if not shutil.which("taskset"):
        sys.exit("taskset (util-linux) is needed to pin the servers and the load tool")
    # A TERM (or Ctrl-C) still stops every server this run started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("bench/run: stopped"))
    matrix = Matrix(args)
    try:
        matrix.start()
        rows = matrix.run()
        path = matrix.write(rows, argv)
    finally:
        matrix.stop()
    print(f"results: {path}")
