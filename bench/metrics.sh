#!/usr/bin/env bash
# What counting requests for `metrics;` costs: two torii instances with one
# worker each, the same config but for a metrics location in one, wrk
# asking both for a small file (the cheapest request, so the counting
# weighs most). CPU per request of the server is the figure; target: the
# metrics instance within 2% of the other.
# Usage: bench/metrics.sh   (env: DURATION, ROUNDS, CONNS, TORII_BIN)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
CONNS=${CONNS:-50}
work=$(mktemp -d)
trap 'stop_servers; rm -rf "$work"' EXIT
RESULTS=$work/results
mkdir -p "$work/www"
head -c 1024 /dev/urandom | base64 > "$work/www/1k.txt"

write_conf() {  # write_conf NAME PORT
  local metrics=""
  [ "$1" = metrics-on ] && metrics="location = /metrics { metrics; }"
  cat > "$work/$1.conf" <<CONF
worker_processes 1;
pid $work/logs/$1.pid;
error_log $work/logs/error-$1.log error;
events { worker_connections 4096; }
http {
    default_type text/plain;
    access_log off;
    keepalive_requests 1000000;
    open_file_cache max=1000 inactive=20s;
    server {
        listen 127.0.0.1:$2 reuseport;
        root $work/www;
        $metrics
    }
}
CONF
}

servers=(metrics-off metrics-on)
for server in "${servers[@]}"; do
  PORTS[$server]=$(free_port)
  write_conf "$server" "${PORTS[$server]}"
  start_server "$server" "$work/$server.conf" "$work/"
  wait_port "${PORTS[$server]}"
done
echo "1 worker each, $CONNS connections, ${DURATION}s per row, $ROUNDS rounds"
for round in $(seq 1 "$ROUNDS"); do
  for server in "${servers[@]}"; do
    run_wrk static-1k "$server" "http://127.0.0.1:${PORTS[$server]}/1k.txt" "$CONNS"
  done
done
count=$(curl -s "http://127.0.0.1:${PORTS[metrics-on]}/metrics" | awk '/^torii_http_requests_total/ { n += $NF } END { print n + 0 }')
echo "metrics-on counted $count requests"
off=$(median 4 static-1k metrics-off)
on=$(median 4 static-1k metrics-on)
awk -v off="$off" -v on="$on" 'BEGIN { printf "median CPU per request: off %.2f us, on %.2f us: %+.1f%%\n", off, on, (on - off) * 100 / off }'
