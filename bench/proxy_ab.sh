#!/usr/bin/env bash
# Two torii binaries side by side on seed 003's proxy shape (proxy.sh's
# config and backends: wrk through the proxy to four nginx backends,
# keepalive pool, one worker each, pinned to SERVER_CPU; backends and wrk
# on CLIENT_CPU), rounds alternating which goes first: is a change a gain?
# CPU per request is the figure to compare.
# Usage: OLD_BIN=/path/torii.old [NEW_BIN=build/torii] bench/proxy_ab.sh
#        (env: DURATION, ROUNDS, CONNS (a list, default "100 1000"), PATH_URL)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${OLD_BIN:?set OLD_BIN to the torii binary to compare against}"
NEW_BIN=${NEW_BIN:-$here/../build/torii}
TORII_BIN=$NEW_BIN
source "$here/lib.sh"
CONNS=${CONNS:-100 1000}
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
declare -A BIN=([old]=$OLD_BIN [new]=$NEW_BIN)
for name in old new; do
  PORTS[$name]=$(free_port)
  write_conf "$name" "${PORTS[$name]}"
  mkdir -p "$work/logs"
  taskset -c "$SERVER_CPU" "${BIN[$name]}" -p "$work" -c "$work/$name.conf" &
  PIDS[$name]=$!
  wait_port "${PORTS[$name]}"
done
echo "old: $OLD_BIN"
echo "new: $NEW_BIN"
echo "wrk through the proxy to 4 backends; 1 worker each, ${DURATION}s per run, $ROUNDS rounds alternating"
for round in $(seq 1 "$ROUNDS"); do
  order=(old new)
  [ $((round % 2)) -eq 0 ] && order=(new old)
  for c in $CONNS; do
    for name in "${order[@]}"; do
      run_wrk "proxy-$c-conns" "$name" "http://127.0.0.1:${PORTS[$name]}${PATH_URL:-/bench}" "$c"
    done
  done
done
echo
for c in $CONNS; do
  label="proxy-$c-conns"
  awk -v l="$label" -v o="$(median 3 "$label" old)" -v n="$(median 3 "$label" new)" \
      -v oc="$(median 4 "$label" old)" -v nc="$(median 4 "$label" new)" 'BEGIN {
    printf "%-18s median req/s old %s new %s (x%.3f); CPU/req old %s us new %s us (x%.3f)\n",
      l, o, n, n / o, oc, nc, nc / oc }'
done
