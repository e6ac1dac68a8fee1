#!/usr/bin/python3
"""bench/kernel_counts.py --pid PID --url URL [-c CONNS] [-n REQUESTS] [--upstream-ports P,P]

What one server process asks of the kernel per request, in counts that do
not move with the machine's load (unlike CPU time): system calls by kind
(perf's syscall tracepoints on that pid, over a torii-load run of exactly
REQUESTS requests), and TCP segments per request on its client sockets and
on its sockets to the upstream ports (per-socket counters from `ss -ti`,
sampled twice during the run: data segments and pure ACKs, so other
traffic on the machine does not count). Needs root (perf tracepoints) and
build/torii-load. Example, the proxy row of bench/run with its servers
started by hand:

    bench/kernel_counts.py --pid $(pgrep -n torii) --url http://127.0.0.1:8080/ -c 100 -n 30000 \\
        --upstream-ports 9001
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SYSCALLS = ("read", "recvfrom", "recvmsg", "readv", "write", "writev", "sendto", "sendmsg", "sendfile64", "splice",
            "epoll_wait", "epoll_pwait", "epoll_ctl", "accept4", "connect", "socket", "close", "shutdown",
            "setsockopt", "getsockopt", "ioctl", "openat", "newfstatat", "statx", "clock_gettime", "getpid", "brk",
            "mmap", "munmap", "madvise")
FIELDS = ("segs_out", "data_segs_out", "segs_in", "data_segs_in", "bytes_received", "bytes_acked")


def sockets(filt):
    """{local>peer: {counter: value}} of the established sockets `filt` selects."""
    out = subprocess.run(["ss", "-tniH", "state", "established", filt], capture_output=True, text=True).stdout
    socks, cur = {}, None
    for line in out.splitlines():
        if not line[:1].isspace():
            f = line.split()
            cur = f[-2] + ">" + f[-1]
            socks[cur] = {}
        elif cur:
            for k in FIELDS:
                m = re.search(r"\b" + k + r":(\d+)", line)
                if m:
                    socks[cur][k] = int(m.group(1))
    return socks


def delta(before, after):
    """Counter growth summed over the sockets open at both samples."""
    total = dict.fromkeys(FIELDS, 0)
    for key, counters in after.items():
        for k, v in counters.items():
            total[k] += v - before.get(key, {}).get(k, v) if key in before else 0
    return total


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pid", required=True)
    p.add_argument("--url", required=True)
    p.add_argument("-c", "--connections", type=int, default=100)
    p.add_argument("-n", "--requests", type=int, default=30000)
    p.add_argument("--upstream-ports", default="", help="ports of the server's upstreams (comma-separated)")
    p.add_argument("--load-cpu", default="1", help="CPU of torii-load (taskset)")
    p.add_argument("--torii-load", default=os.path.join(os.path.dirname(HERE), "build", "torii-load"))
    a = p.parse_args()
    port = re.match(r"\w+://[^/:]+:(\d+)", a.url).group(1)
    load = ["taskset", "-c", a.load_cpu, a.torii_load, "-c", str(a.connections)]
    subprocess.run(load + ["-d", "2", a.url], capture_output=True, check=True)  # warm: pools, caches
    work = tempfile.mkdtemp(prefix="kernel-counts-")
    perf_out, load_out = os.path.join(work, "perf.txt"), os.path.join(work, "load.json")
    available = [s for s in SYSCALLS if os.path.exists(f"/sys/kernel/tracing/events/syscalls/sys_enter_{s}")]
    perf = subprocess.Popen(["perf", "stat", "-x,", "-o", perf_out, "-p", a.pid, "-e",
                             ",".join("syscalls:sys_enter_" + s for s in available)])
    time.sleep(0.5)  # perf attached
    run = subprocess.Popen(load + ["-n", str(a.requests), "--json", load_out, a.url], stdout=subprocess.DEVNULL)
    client = f"( sport = :{port} )"
    upstream = "( " + " or ".join(f"dport = :{u}" for u in a.upstream_ports.split(",")) + " )" \
        if a.upstream_ports else None
    time.sleep(1.0)
    c1, u1 = sockets(client), upstream and sockets(upstream)
    time.sleep(1.5)
    c2, u2 = sockets(client), upstream and sockets(upstream)
    run.wait()
    perf.send_signal(2)
    perf.wait()
    with open(load_out) as f:
        summary = json.load(f)
    n = summary["http_reqs"]["count"]
    counts = {}
    with open(perf_out) as f:
        for line in f:
            fields = line.strip().split(",")
            if len(fields) > 2 and fields[2].startswith("syscalls:sys_enter_") and fields[0].isdigit():
                counts[fields[2][len("syscalls:sys_enter_"):]] = int(fields[0])
    print(f"{n} requests, {summary['http_reqs']['rate']:.0f} req/s, {summary['http_req_failed']['count']} failed")
    print("system calls per request (connections' setup included):")
    for name, v in sorted(counts.items(), key=lambda kv: -kv[1]):
        if v:
            print(f"  {name:14} {v / n:6.3f}")
    print(f"  {'total':14} {sum(counts.values()) / n:6.3f}")
    # Segments: per request received on the client sockets over the sampled
    # window (each request is one data segment in).
    cd = delta(c1, c2)
    requests = cd["data_segs_in"]
    if not requests:
        sys.exit("no request in the sampled window: a longer run (-n) is needed")
    print(f"TCP segments per request ({requests} requests sampled on sockets open throughout):")
    for label, d in (("client", cd), ("upstream", upstream and delta(u1, u2))):
        if d:
            print(f"  {label:8} out {d['segs_out'] / requests:.3f} (data {d['data_segs_out'] / requests:.3f}, "
                  f"pure ACKs {(d['segs_out'] - d['data_segs_out']) / requests:.3f}), "
                  f"in {d['segs_in'] / requests:.3f} (data {d['data_segs_in'] / requests:.3f})")
    if upstream and not any(delta(u1, u2).values()):
        print("  upstream: no socket open at both samples (connections replaced within 1.5 s)")


if __name__ == "__main__":
    main()
