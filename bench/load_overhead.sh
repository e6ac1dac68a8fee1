#!/usr/bin/env bash
# torii-load's own cost, side by side with wrk (HTTP/1.1) and h2load (h2c)
# on one target: nginx answering `return 200` with one worker, pinned to
# SERVER_CPU, every load tool pinned to CLIENT_CPU, rounds alternating.
# For each tool: requests per second, and the tool's own CPU time (user +
# system of the whole process, from bash's `time`) per request; the server's
# busy share shows whether the server or the tool set the pace.
# Usage: bench/load_overhead.sh   (env: DURATION, CONNS, ROUNDS, SERVER_CPU,
# CLIENT_CPU, NGINX_BIN, LOAD_BIN)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
LOAD_BIN=${LOAD_BIN:-$here/../build/torii-load}
CONNS=${CONNS:-50}
DURATION=${DURATION:-5}
work=$(mktemp -d)
trap 'stop_servers; rm -rf "$work"' EXIT
RESULTS=$work/results
: > "$RESULTS"

h1_port=$(free_port)
h2_port=$(free_port)
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/logs/nginx.pid;
error_log $work/logs/nginx-error.log error;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$h1_port;
        listen 127.0.0.1:$h2_port http2;
        location / { return 200 "hello\n"; }
    }
}
CONF
start_server nginx "$work/nginx.conf" "$work"
wait_port "$h1_port"
wait_port "$h2_port"
server_pid=${PIDS[nginx]}

# measure LABEL PROTO COMMAND...: runs the tool pinned, prints and records
# "LABEL PROTO req/s tool_us_per_req server_busy%".
measure() {
  local label=$1 proto=$2
  shift 2
  local before after t0 t1 out
  before=$(cpu_seconds "$server_pid")
  t0=$(date +%s.%N)
  # bash's `time` reports the user and system CPU of the tool's process.
  out=$( { TIMEFORMAT='TOOLCPU %U %S'; time taskset -c "$CLIENT_CPU" "$@"; } 2>&1 )
  t1=$(date +%s.%N)
  after=$(cpu_seconds "$server_pid")
  local requests rps
  case $label in
    wrk) requests=$(echo "$out" | awk '/requests in/ { print $1 }')
         rps=$(echo "$out" | awk '/Requests\/sec/ { print $2 }') ;;
    h2load) requests=$(echo "$out" | awk '/^requests:/ { print $8 }')
            rps=$(echo "$out" | awk '/^finished in/ { gsub(",", "", $4); print $4 }') ;;
    torii-load) requests=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["http_reqs"]["count"])' "$work/tl.json")
                rps=$(python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["http_reqs"]["rate"]))' "$work/tl.json") ;;
  esac
  echo "$out" | awk -v l="$label" -v p="$proto" -v n="$requests" -v r="$rps" \
    -v sa="$after" -v sb="$before" -v t0="$t0" -v t1="$t1" -v res="$RESULTS" '
    /^TOOLCPU/ { cpu = $2 + $3 }
    END {
      us = n > 0 ? cpu * 1e6 / n : 0
      busy = (sa - sb) * 100 / (t1 - t0)
      printf "%-4s %-10s %9s req/s  %6.2f us tool CPU/req  server busy %3.0f%%\n", p, l, r, us, busy
      printf "%s %s %s %.3f %.0f\n", p, l, r, us, busy >> res
    }'
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "nginx return 200, 1 worker on CPU $SERVER_CPU; tools on CPU $CLIENT_CPU; $CONNS connections, ${DURATION}s, $ROUNDS rounds"
for round in $(seq 1 "$ROUNDS"); do
  measure wrk h1 wrk -t1 -c"$CONNS" -d"${DURATION}s" "http://127.0.0.1:$h1_port/"
  measure torii-load h1 "$LOAD_BIN" -t1 -c"$CONNS" -d"$DURATION" --json "$work/tl.json" "http://127.0.0.1:$h1_port/"
  measure h2load h2 h2load -c"$CONNS" -m1 -D"$DURATION" "http://127.0.0.1:$h2_port/"
  measure torii-load h2 "$LOAD_BIN" -t1 -c"$CONNS" -m1 --h2 -d"$DURATION" --json "$work/tl.json" "http://127.0.0.1:$h2_port/"
done

# median PROTO LABEL COLUMN: the median of a column over the rounds
median() {
  awk -v p="$1" -v l="$2" -v c="$3" '$1 == p && $2 == l { print $c }' "$RESULTS" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

echo "medians over $ROUNDS rounds (load average before: $load_before):"
for row in "h1 wrk" "h1 torii-load" "h2 h2load" "h2 torii-load"; do
  set -- $row
  printf '%-4s %-10s %9s req/s  %6s us tool CPU/req  server busy %3s%%\n' "$1" "$2" \
    "$(median "$1" "$2" 3)" "$(median "$1" "$2" 4)" "$(median "$1" "$2" 5)"
done
