"""bench/run, the one-command report: a short run of one row against torii
and nginx writes the results file with both servers' rows, their ratio and
the fixed-rate run at the rate it chose; bad arguments are refused."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import harness

RUN = Path(harness.SOURCE_DIR) / "bench" / "run"
LOAD = os.environ.get("TORII_LOAD_BIN") or str(Path(harness.SOURCE_DIR) / "build" / "torii-load")
pytestmark = [
    pytest.mark.skipif(harness.IS_NGINX, reason="bench/run compares torii with its peers: it needs torii"),
    pytest.mark.skipif(not os.access(LOAD, os.X_OK), reason=f"torii-load not built ({LOAD!r})"),
    pytest.mark.skipif(not os.access("/usr/sbin/nginx", os.X_OK), reason="nginx is not installed"),
]


def bench(tmp_path, *args):
    client_cpu = "1" if (os.cpu_count() or 1) > 1 else "0"
    return subprocess.run(["/usr/bin/python3", str(RUN), "--torii", harness.BIN, "--torii-load", LOAD,
                           "--out", str(tmp_path / "out"), "--server-cpus", "0", "--client-cpus", client_cpu,
                           *args], capture_output=True, text=True, timeout=300)


def test_one_row_against_nginx_writes_the_report(tmp_path):
    r = bench(tmp_path, "--quick", "--duration", "2", "--rows", "^000-proxy-h1$", "--peers", "nginx", "--no-plots",
              "--idle", "100")
    assert r.returncode == 0, r.stdout + r.stderr
    reports = list((tmp_path / "out").glob("*.md"))
    assert len(reports) == 1, r.stdout
    text = reports[0].read_text()
    assert "### 000-proxy-h1: proxy, HTTP/1.1" in text
    section = text.split("### 000-proxy-h1: proxy, HTTP/1.1", 1)[1].split("\n#", 1)[0]
    table = [line for line in section.splitlines() if line.startswith("| torii |") or line.startswith("| nginx |")]
    assert len(table) == 2, text
    nginx_row = next(line for line in table if line.startswith("| nginx |"))
    assert "| x1.00 |" in nginx_row  # nginx against itself
    raw = json.loads(next((tmp_path / "out").glob("*.json")).read_text())
    runs = raw["runs"]
    for server in ("torii", "nginx"):
        saturated = [x for x in runs if x["server"] == server and x["rate"] is None]
        fixed = [x for x in runs if x["server"] == server and x["rate"]]
        assert len(saturated) == 1 and len(fixed) == 1, runs
        assert saturated[0]["requests"] > 100 and saturated[0]["failed"] == 0
        assert saturated[0]["cpu_us"] > 0
        # The fixed rate is half the slower one's saturated rate, held (the
        # open-loop pacer on a shared 2-CPU machine may lag by a few per cent).
        assert fixed[0]["failed"] == 0
        assert abs(fixed[0]["rps"] - fixed[0]["rate"]) <= 0.10 * fixed[0]["rate"] + 5, fixed[0]
    slower = min(x["rps"] for x in runs if x["rate"] is None)
    assert fixed[0]["rate"] == max(1, round(slower / 2))
    # Idle connection memory was measured for both: plain, TLS HTTP/1.1,
    # TLS HTTP/2, and the RSS left after they closed.
    assert set(raw["idle_kib"]) == {"torii", "nginx"}
    for server in ("torii", "nginx"):
        assert {"plain", "tls", "tls_h2", "after_close_pct"} <= set(raw["idle_kib"][server]), raw["idle_kib"]
    assert "| TLS 1.3 HTTP/2 | RSS after close |" in text


def test_unknown_peer_is_refused(tmp_path):
    r = bench(tmp_path, "--quick", "--peers", "apache", "--rows", "^000-proxy-h1$")
    assert r.returncode != 0
    assert "unknown peer 'apache'" in r.stderr


def test_floor_programs_run_beside_torii_with_the_ratio(tmp_path):
    """bench/floor's programs, built for the run: the static floor answers
    the plain 20 KB row, the forwarder the plain proxy row, without a failed
    request; each row's summary gives torii/floor, and the TLS rows say why
    the floor is not there."""
    r = bench(tmp_path, "--quick", "--duration", "2", "--rows", "^(000-proxy-h1|001-20k-plain|001-20k-keepalive)$",
              "--peers", "floor", "--no-plots", "--idle", "0")
    assert r.returncode == 0, r.stdout + r.stderr
    text = next((tmp_path / "out").glob("*.md")).read_text()
    assert "| x floor |" in text
    for key in ("000-proxy-h1", "001-20k-plain"):
        summary = next(line for line in text.splitlines() if line.startswith(f"| {key} "))
        x_floor = summary.rstrip().rstrip("|").rsplit("|", 1)[-1].strip()
        assert x_floor.startswith("x") and float(x_floor[1:]) > 0, summary
    raw = json.loads(next((tmp_path / "out").glob("*.json")).read_text())
    floor = [x for x in raw["runs"] if x["server"] == "floor" and x["rate"] is None]
    assert {x["row"] for x in floor} == {"000-proxy-h1", "001-20k-plain"}, raw["runs"]
    for x in floor:
        assert x["requests"] > 100 and x["failed"] == 0, x
    assert ["001-20k-keepalive", "floor", "the floor programs speak plain HTTP/1.1 over TCP only"] in raw["skipped"]
