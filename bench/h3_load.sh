#!/usr/bin/env bash
# Seed 000's HTTP/3 row at a fixed offered load: torii over TLS 1.3 +
# HTTP/3 beside the same torii over TLS 1.3 + HTTP/2 (one server block,
# one worker), and Caddy over HTTP/3 when `caddy` is installed, all driven
# by torii-load in open loop (--rate) with the same shape: CONNS
# connections with STREAMS requests in flight each at most. Two targets: a
# 20 KB static file, and a small response proxied from an nginx backend.
# At each RATE: the server's CPU per request (user + system from
# /proc/PID/stat over the run, divided by the 200 responses), its busy
# share, p50 and p99 latency measured from when each request was due, the
# rate achieved and the failures. Rounds alternate; medians are printed.
# Server on SERVER_CPU; torii-load and the nginx backend on CLIENT_CPU.
# Usage: bench/h3_load.sh   (env: RATES, DURATION, ROUNDS, CONNS, STREAMS,
# SERVER_CPU, CLIENT_CPU, TORII_BIN, NGINX_BIN, LOAD_BIN)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
LOAD_BIN=${LOAD_BIN:-$here/../build/torii-load}
RATES=${RATES:-2000 5000}
DURATION=${DURATION:-5}
CONNS=${CONNS:-16}
STREAMS=${STREAMS:-8}
[ -x "$LOAD_BIN" ] || { echo "no torii-load at $LOAD_BIN: build it first or set LOAD_BIN" >&2; exit 1; }
work=$(mktemp -d)
trap 'stop_servers; stop_backends; rm -rf "$work"' EXIT
RESULTS=$work/results
: > "$RESULTS"
mkdir -p "$work/torii/logs" "$work/caddy" "$work/html"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
  -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
head -c 20480 /dev/urandom > "$work/html/20k.bin"

start_backend "$work/backend" 'location / { return 200 "hello from the backend\n"; }'
backend_port=$BACKEND_PORT

port=$(free_port)
cat > "$work/torii.conf" <<CONF
worker_processes 1;
pid $work/torii/logs/torii.pid;
error_log $work/torii/logs/error.log error;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 1000000;
    upstream backend { server 127.0.0.1:$backend_port; keepalive 32; }
    server {
        listen 127.0.0.1:$port ssl;
        http2 on;
        http3 on;
        ssl_protocols TLSv1.3;
        ssl_certificate $work/cert.pem;
        ssl_certificate_key $work/key.pem;
        root $work/html;
        location /proxy { proxy_pass http://backend; proxy_http_version 1.1; proxy_set_header Connection ""; }
    }
}
CONF
start_server torii "$work/torii.conf" "$work/torii"
wait_port "$port"

caddy_port=""
if command -v caddy >/dev/null; then
  caddy_port=$(free_port)
  cat > "$work/caddy/Caddyfile" <<CONF
{
    admin off
    auto_https off
    servers {
        protocols h1 h2 h3
    }
}
https://localhost:$caddy_port {
    bind 127.0.0.1
    tls $work/cert.pem $work/key.pem
    handle /proxy* {
        reverse_proxy 127.0.0.1:$backend_port
    }
    handle {
        root * $work/html
        file_server
    }
}
CONF
  GOMAXPROCS=1 taskset -c "$SERVER_CPU" caddy run --config "$work/caddy/Caddyfile" --adapter caddyfile \
    > "$work/caddy/out.log" 2>&1 &
  PIDS[caddy]=$!
  wait_port "$caddy_port"
else
  echo "caddy is not installed: its HTTP/3 rows are skipped"
fi

# Seconds PID's threads spent runnable but waiting for a CPU (schedstat):
# on a shared machine, a server that "waited" much was starved, and its
# latency says more about the machine than about the server.
runq_wait_seconds() {
  cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $2 } END { printf "%.6f\n", s / 1e9 }'
}

# row RATE TARGET SERVER PROTO PORT: one open-loop run; prints and records
# "RATE TARGET SERVER PROTO achieved cpu_us_per_200 busy% p50_ms p99_ms failed waited%"
row() {
  local rate=$1 target=$2 server=$3 proto=$4 p=$5
  local pid=${PIDS[$server]} path before after t0 t1 wait_before wait_after
  path=/20k.bin
  [ "$target" = proxy ] && path=/proxy
  wait_before=$(runq_wait_seconds "$pid")
  before=$(cpu_seconds "$pid")
  t0=$(date +%s.%N)
  taskset -c "$CLIENT_CPU" "$LOAD_BIN" --"$proto" --rate "$rate" -d "$DURATION" -c "$CONNS" -m "$STREAMS" \
    --json "$work/run.json" "https://localhost:$p$path" > "$work/run.out" 2>&1 || true
  t1=$(date +%s.%N)
  after=$(cpu_seconds "$pid")
  wait_after=$(runq_wait_seconds "$pid")
  python3 - "$work/run.json" "$rate" "$target" "$server" "$proto" "$before" "$after" "$t0" "$t1" "$RESULTS" \
    "$wait_before" "$wait_after" <<'PY'
import json, sys
f, rate, target, server, proto, b, a, t0, t1, results, wb, wa = sys.argv[1:]
try:
    s = json.load(open(f))
except (OSError, ValueError):
    print(f"{rate:>5} {target:<6} {server:<6} {proto}: no result")
    sys.exit(0)
ok = s["status"].get("200", 0)
cpu = (float(a) - float(b)) * 1e6 / ok if ok else 0
busy = (float(a) - float(b)) * 100 / (float(t1) - float(t0))
waited = (float(wa) - float(wb)) * 100 / (float(t1) - float(t0))
d = s["http_req_duration"]
failed = s["http_req_failed"]["count"]
achieved = s["http_reqs"]["rate"]
print(f"{rate:>5} {target:<6} {server:<6} {proto}: {achieved:7.0f} req/s  {cpu:7.1f} us CPU/req  busy {busy:3.0f}%"
      f"  waited {waited:3.0f}%  tool {s['cpu_s'] * 100 / s['duration_s']:3.0f}%  p50 {d['med']:7.2f} ms  p99 {d['p99']:7.2f} ms  failed {failed}"
      f"  not sent {s['not_sent_at_end']}")
with open(results, "a") as out:
    out.write(f"{rate} {target} {server} {proto} {achieved:.0f} {cpu:.1f} {busy:.0f} {d['med']:.2f} {d['p99']:.2f} {failed}"
              f" {waited:.0f}\n")
PY
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "torii (and caddy) on CPU $SERVER_CPU, torii-load and the backend on CPU $CLIENT_CPU;" \
  "$CONNS connections x $STREAMS streams, ${DURATION}s per row, $ROUNDS rounds"
for round in $(seq 1 "$ROUNDS"); do
  for rate in $RATES; do
    for target in static proxy; do
      row "$rate" "$target" torii h2 "$port"
      row "$rate" "$target" torii h3 "$port"
      [ -n "$caddy_port" ] && row "$rate" "$target" caddy h3 "$caddy_port"
    done
  done
done

# med RATE TARGET SERVER PROTO COLUMN: the median of a column over the rounds
med() {
  awk -v r="$1" -v t="$2" -v s="$3" -v p="$4" -v c="$5" '$1 == r && $2 == t && $3 == s && $4 == p { print $c }' \
    "$RESULTS" | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

echo
echo "medians over $ROUNDS rounds (load average before: $load_before):"
printf '%-6s %-7s %-6s %-5s %8s %10s %6s %7s %9s %9s %7s\n' rate target server proto "req/s" "us CPU/req" busy waited \
  "p50 ms" "p99 ms" failed
for rate in $RATES; do
  for target in static proxy; do
    for sp in "torii h2" "torii h3" "caddy h3"; do
      set -- $sp
      [ "$1" = caddy ] && [ -z "$caddy_port" ] && continue
      printf '%-6s %-7s %-6s %-5s %8s %10s %5s%% %6s%% %9s %9s %7s\n' "$rate" "$target" "$1" "$2" \
        "$(med "$rate" "$target" "$1" "$2" 5)" "$(med "$rate" "$target" "$1" "$2" 6)" \
        "$(med "$rate" "$target" "$1" "$2" 7)" "$(med "$rate" "$target" "$1" "$2" 11)" "$(med "$rate" "$target" "$1" "$2" 8)" \
        "$(med "$rate" "$target" "$1" "$2" 9)" "$(med "$rate" "$target" "$1" "$2" 10)"
    done
  done
done
