#!/usr/bin/env bash
# Seed 003's scenario: wrk with many connections through the proxy to four
# backends (seed 003's whoami.conf with addresses changed), and "backend
# direct vs through the proxy". torii and nginx as the proxy, one worker
# each, pinned to SERVER_CPU; the backends (four nginx instances returning
# a small body, one worker each) and wrk share CLIENT_CPU.
# Usage: bench/proxy.sh   (env: DURATION, ROUNDS, CONNS, TORII_BIN, NGINX_BIN)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
CONNS=${CONNS:-1000}
work=$(mktemp -d)
cleanup() {
  stop_servers
  stop_backends
  rm -rf "$work"
}
trap cleanup EXIT
RESULTS=$work/results
mkdir -p "$work/logs"

start_whoami_backends "$work"

write_conf() { write_whoami_proxy_conf "$work" "$1" "$2"; }

ulimit -n 65536 2>/dev/null || true
echo "seed 003: wrk -c$CONNS through the proxy to 4 backends; 1 proxy worker each, ${DURATION}s per row, $ROUNDS rounds"
start_servers  # torii and nginx, each on its own port: sets servers and PORTS

# The backend alone, for reference (its CPU is not the proxy's: no CPU column).
direct=$(taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNS" -d"${DURATION}s" --latency "http://127.0.0.1:${backends[0]}/bench" 2>&1)
printf '%-28s %-6s %10s req/s  p50 %8s  p99 %8s\n' "backend-direct" "-" \
  "$(echo "$direct" | awk '/Requests\/sec/ { print $2 }')" \
  "$(echo "$direct" | awk '$1 == "50%" { print $2 }')" "$(echo "$direct" | awk '$1 == "99%" { print $2 }')"

for round in $(seq 1 "$ROUNDS"); do
  for server in "${servers[@]}"; do
    url="http://127.0.0.1:${PORTS[$server]}/bench"
    run_wrk "proxy-$CONNS-conns" "$server" "$url" "$CONNS" -H "Host: benchmark.whoami"
    run_wrk "proxy-50-conns" "$server" "$url" 50 -H "Host: benchmark.whoami"
  done
done
echo
ratio "proxy-$CONNS-conns"
ratio proxy-50-conns
