"""The results file: tables like the seeds' with ratios against nginx and
against the best other peer, and PNG plots (matplotlib, from Debian)."""

import os
import statistics


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarise(runs):
    """Medians over the rounds of one (row, server, mode)."""
    if not runs:
        return None
    return {
        "rps": median([r["rps"] for r in runs]),
        "cpu_us": median([r["cpu_us"] for r in runs]),
        "busy": median([r["busy"] for r in runs]),
        "p50_ms": median([r["p50_ms"] for r in runs]),
        "p99_ms": median([r["p99_ms"] for r in runs]),
        "failed": sum(r["failed"] for r in runs),
        "requests": sum(r["requests"] for r in runs),
        "errors": {k: v for r in runs for k, v in r["errors"].items()},
        "cdf": runs[len(runs) // 2]["cdf"],
    }


def _fmt(v, spec="{:.0f}"):
    return "n/a" if v is None else spec.format(v)


def _ratio(a, b):
    return None if a is None or not b else a / b


def best_other(summaries, key, higher_is_better):
    """The best non-torii server on `key`: (name, value)."""
    others = [(n, s[key]) for n, s in summaries.items() if n not in ("torii", "backend", "floor") and s and s[key]]
    if not others:
        return None, None
    return (max if higher_is_better else min)(others, key=lambda x: x[1])


def row_table(row, result):
    sat, fixed, rate = result["saturation"], result["fixed"], result.get("rate")
    nginx_sat = sat.get("nginx")
    lines = []
    head = ("| server | req/s | x nginx | CPU/req | x nginx | busy | p50 | p99 | failed |"
            + (f" req/s held at {rate:.0f}/s | CPU/req | p50 | p99 | failed |" if rate else ""))
    lines.append(head)
    lines.append("|" + "---|" * (head.count("|") - 1))
    for name, s in sat.items():
        if not s:
            continue
        cells = [name, _fmt(s["rps"]), _fmt(_ratio(s["rps"], nginx_sat and nginx_sat["rps"]), "x{:.2f}"),
                 _fmt(s["cpu_us"], "{:.1f} µs"), _fmt(_ratio(s["cpu_us"], nginx_sat and nginx_sat["cpu_us"]), "x{:.2f}"),
                 _fmt(s["busy"] * 100 if s["busy"] is not None else None, "{:.0f}%"),
                 _fmt(s["p50_ms"], "{:.2f} ms"), _fmt(s["p99_ms"], "{:.2f} ms"), f"{s['failed']}/{s['requests']}"]
        f = fixed.get(name)
        if rate:
            cells += ([_fmt(f["rps"]), _fmt(f["cpu_us"], "{:.1f} µs"), _fmt(f["p50_ms"], "{:.2f} ms"),
                       _fmt(f["p99_ms"], "{:.2f} ms"), f"{f['failed']}/{f['requests']}"] if f else ["n/a"] * 5)
        lines.append("| " + " | ".join(cells) + " |")
    errors = {n: s["errors"] for n, s in sat.items() if s and s["errors"]}
    errors.update({n + " (fixed rate)": s["errors"] for n, s in fixed.items() if s and s["errors"]})
    for n, e in errors.items():
        lines.append(f"\n{n}: errors {e}")
    return "\n".join(lines)


def _command(row, meta):
    """The load command of a row, as the report shows it."""
    if row.tool == "ab":
        return f"ab -c {row.connections} -n {meta['ab_requests']}" + (" -k" if row.keepalive else "")
    extra = " --connect-per-request --no-tls-resume" if row.connect_per_request else ""
    return f"torii-load --{row.protocol} -c {row.connections}{extra}"


def write(out_dir, stem, meta, rows, results, skipped, idle, plots=True):
    os.makedirs(out_dir, exist_ok=True)
    md = [f"# torii and its peers, {meta['date']} on {meta['host']}", "",
          f"Command: `{meta['command']}`", "",
          f"Machine: {meta['cpu']} x {meta['cpus']}, Linux {meta['kernel']}. Servers on CPU {meta['server_cpus']} "
          f"with {meta['workers']} worker(s) each; the load tool (torii-load, or ab where named) and the backends "
          f"(one nginx, one worker) on CPU {meta['client_cpus']}. {meta['duration']} s per run, {meta['rounds']} "
          "round(s) alternating the servers' order; medians shown.", "",
          "Versions: " + "; ".join(f"{k} {v}" for k, v in meta["versions"].items()), "",
          "Each row is run to saturation (closed loop: every connection sends its next request when the last "
          "answer arrives), then at a fixed rate of half the lower of torii's and nginx's saturated rates (open loop, "
          "latency counted from when each request was due), where the servers compare by CPU per request and "
          "latency at the same offered load. `busy` is the server's CPU time over the wall time: well below "
          "100% at saturation means the load tool, sharing the machine, set the pace, and then CPU per request, "
          "not req/s, is the figure that compares the servers.", ""]
    summary = ["| row | torii req/s | x nginx | x best peer | torii CPU/req | x nginx | x cheapest peer | x floor |",
               "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        res = results.get(row.key)
        if not res:
            continue
        sat = res["saturation"]
        t, n, fl = sat.get("torii"), sat.get("nginx"), sat.get("floor")
        if t:
            bn, bv = best_other(sat, "rps", True)
            cn, cv = best_other(sat, "cpu_us", False)
            summary.append(f"| {row.key} {row.title} | {_fmt(t['rps'])} | "
                           f"{_fmt(_ratio(t['rps'], n and n['rps']), 'x{:.2f}')} | "
                           f"{_fmt(_ratio(t['rps'], bv), 'x{:.2f}')} ({bn or '-'}) | {_fmt(t['cpu_us'], '{:.1f} µs')} | "
                           f"{_fmt(_ratio(t['cpu_us'], n and n['cpu_us']), 'x{:.2f}')} | "
                           f"{_fmt(_ratio(t['cpu_us'], cv), 'x{:.2f}')} ({cn or '-'}) | "
                           f"{_fmt(_ratio(t['cpu_us'], fl and fl['cpu_us']), 'x{:.2f}')} |")
    md += ["## Summary", "", "Ratios are torii over the other server: above 1 is better for req/s, below 1 is "
           "better for CPU per request. `x floor` is torii's CPU per request over bench/floor's (a bare epoll "
           "loop sending the same bytes, or a byte forwarder with no HTTP parsing): what torii costs above the "
           "kernel's part.", ""] + summary + [""]
    seed = None
    for row in rows:
        res = results.get(row.key)
        if not res:
            continue
        if row.seed != seed:
            seed = row.seed
            md += [f"## Seed {seed}", ""]
        tool = _command(row, meta)
        md += [f"### {row.key}: {row.title}", "", f"`{tool}` on `{row.path}`", "", row_table(row, res), ""]
    if idle:
        md += ["## Memory per idle keep-alive connection", "",
               "RSS growth of the server's processes with N connections open after one request each, over N; "
               "then all of them closed: the RSS left over the start (polled up to 10 s, stops once within 10%).",
               "", "| server | plain HTTP/1.1 | TLS 1.3 HTTP/1.1 | TLS 1.3 HTTP/2 | RSS after close |",
               "|---|---|---|---|---|"]
        for name, v in idle.items():
            md.append(f"| {name} | {_fmt(v.get('plain'), '{:.1f} KiB')} | {_fmt(v.get('tls'), '{:.1f} KiB')} | "
                      f"{_fmt(v.get('tls_h2'), '{:.1f} KiB')} | {_fmt(v.get('after_close_pct'), '{:+.0f}%')} |")
        md.append("")
    if skipped:
        md += ["## Not run", ""] + [f"- {row} / {peer}: {why}" for row, peer, why in skipped] + [""]
    if plots:
        made = _plots(out_dir, stem, rows, results)
        if made:
            md += ["## Plots", ""] + [f"![{m}]({m})" for m in made] + [""]
    path = os.path.join(out_dir, stem + ".md")
    with open(path, "w") as f:
        f.write("\n".join(md))
    return path


COLOURS = {"torii": "tab:blue", "nginx": "tab:green", "haproxy": "tab:purple", "caddy": "tab:orange",
           "h2o": "tab:red", "backend": "tab:grey", "floor": "black"}


def _plots(out_dir, stem, rows, results):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (Debian: python3-matplotlib): no plots")
        return []
    made = []
    keyed = [(r, results[r.key]) for r in rows if r.key in results and "nginx" in results[r.key]["saturation"]]
    for metric, label, fname in (("rps", "req/s relative to nginx (higher is better)", "rps"),
                                 ("cpu_us", "CPU per request relative to nginx (lower is better)", "cpu")):
        if not keyed:
            break
        names = sorted({n for _, res in keyed for n, s in res["saturation"].items() if s},
                       key=lambda n: (n != "torii", n))
        fig, ax = plt.subplots(figsize=(max(8, len(keyed) * 0.9), 4.5))
        width = 0.8 / max(1, len(names))
        for i, name in enumerate(names):
            xs, ys = [], []
            for j, (row, res) in enumerate(keyed):
                s, n = res["saturation"].get(name), res["saturation"]["nginx"]
                if s and n and s[metric] and n[metric]:
                    xs.append(j + i * width)
                    ys.append(s[metric] / n[metric])
            ax.bar(xs, ys, width, label=name, color=COLOURS.get(name))
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.set_xticks([j + width * (len(names) - 1) / 2 for j in range(len(keyed))])
        ax.set_xticklabels([r.key for r, _ in keyed], rotation=45, ha="right", fontsize=8)
        ax.set_ylabel(label)
        ax.legend(fontsize=8)
        fig.tight_layout()
        name = f"{stem}-{fname}.png"
        fig.savefig(os.path.join(out_dir, name), dpi=100)
        plt.close(fig)
        made.append(name)
    with_cdf = [(r, res) for r, res in ((r, results.get(r.key)) for r in rows)
                if res and any(s and s["cdf"] for s in res["fixed"].values())]
    if with_cdf:
        cols = 3
        nrows = (len(with_cdf) + cols - 1) // cols
        fig, axes = plt.subplots(nrows, cols, figsize=(12, 3.2 * nrows), squeeze=False)
        for k, (row, res) in enumerate(with_cdf):
            ax = axes[k // cols][k % cols]
            for name, s in res["fixed"].items():
                if s and s["cdf"]:
                    ax.plot([v for _, v in s["cdf"]], [p for p, _ in s["cdf"]], label=name, color=COLOURS.get(name))
            ax.set_xscale("log")
            ax.set_title(f"{row.key} at {res['rate']:.0f}/s", fontsize=9)
            ax.set_xlabel("latency, ms", fontsize=8)
            ax.set_ylabel("percentile", fontsize=8)
            ax.legend(fontsize=7)
        for k in range(len(with_cdf), nrows * cols):
            axes[k // cols][k % cols].axis("off")
        fig.tight_layout()
        name = f"{stem}-latency.png"
        fig.savefig(os.path.join(out_dir, name), dpi=100)
        plt.close(fig)
        made.append(name)
    return made
