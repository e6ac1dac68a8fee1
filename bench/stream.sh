#!/usr/bin/env bash
# The stream {} TCP proxy: torii, nginx (its stream module) and HAProxy in
# tcp mode side by side, one worker each pinned to SERVER_CPU, in front of
# one nginx HTTP backend (on CLIENT_CPU with the load tool). Two rows:
#   short: ab without keep-alive, so every request is a new TCP connection
#          through the proxy (connect, a 100-byte answer, close): sessions/s
#          and the proxy's CPU per session;
#   long:  wrk with 4 keep-alive connections fetching a 1 MB file: MB/s and
#          the proxy's CPU per MB moved.
# Usage: bench/stream.sh   (env: DURATION, ROUNDS, SHORT_N, SHORT_C)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
SHORT_N=${SHORT_N:-20000}
SHORT_C=${SHORT_C:-32}
STREAM_MODULE=${STREAM_MODULE:-/usr/lib/nginx/modules/ngx_stream_module.so}
work=$(mktemp -d)
backend_pid=""
haproxy_pid=""
cleanup() {
  set +e  # a server that already exited must not stop the others' cleanup
  stop_servers
  for pid in $backend_pid $haproxy_pid; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
RESULTS=$work/results
mkdir -p "$work/logs" "$work/b/logs" "$work/b/html"
head -c 100 /dev/zero | tr '\0' 'a' > "$work/b/html/small"
head -c $((1024 * 1024)) /dev/urandom > "$work/b/html/big"

backend=$(free_port)
cat > "$work/b/nginx.conf" <<CONF
worker_processes 1;
pid $work/b/logs/nginx.pid;
error_log $work/b/logs/error.log crit;
events { worker_connections 8192; }
http {
    access_log off;
    sendfile on;
    keepalive_requests 1000000;
    server { listen 127.0.0.1:$backend; root $work/b/html; }
}
CONF
taskset -c "$CLIENT_CPU" "$NGINX_BIN" -p "$work/b" -c "$work/b/nginx.conf" -g 'daemon off; master_process off;' &
backend_pid=$!
wait_port "$backend"

write_conf() {  # write_conf NAME PORT
  local load=""
  [ "$1" = nginx ] && load="load_module $STREAM_MODULE;"
  cat > "$work/$1.conf" <<CONF
$load
worker_processes 1;
worker_rlimit_nofile 16384;
pid $work/logs/$1.pid;
error_log $work/logs/$1-error.log crit;
events { worker_connections 8192; }
stream {
    upstream app { server 127.0.0.1:$backend; }
    server { listen 127.0.0.1:$2; proxy_pass app; }
}
CONF
}
start_servers
if command -v haproxy >/dev/null; then
  PORTS[haproxy]=$(free_port)
  cat > "$work/haproxy.cfg" <<CONF
global
    nbthread 1
    maxconn 8000
defaults
    mode tcp
    timeout connect 5s
    timeout client 60s
    timeout server 60s
frontend f
    bind 127.0.0.1:${PORTS[haproxy]}
    default_backend b
backend b
    server app 127.0.0.1:$backend
CONF
  taskset -c "$SERVER_CPU" haproxy -f "$work/haproxy.cfg" -db &
  haproxy_pid=$!
  PIDS[haproxy]=$haproxy_pid
  servers+=(haproxy)
  wait_port "${PORTS[haproxy]}"
fi

short_row() {  # short_row SERVER
  local pid=${PIDS[$1]} before after out rps failed cpu
  before=$(cpu_seconds "$pid")
  out=$(taskset -c "$CLIENT_CPU" ab -q -n "$SHORT_N" -c "$SHORT_C" "http://127.0.0.1:${PORTS[$1]}/small" 2>&1)
  after=$(cpu_seconds "$pid")
  rps=$(echo "$out" | awk '/Requests per second/ { print $4 }')
  failed=$(echo "$out" | awk '/Failed requests/ { print $3 }')
  cpu=$(awk -v a="$after" -v b="$before" -v n="$SHORT_N" 'BEGIN { printf "%.1f", (a - b) * 1e6 / n }')
  printf '%-6s %-8s %10s sessions/s  %8s us CPU/session  failed %s\n' short "$1" "$rps" "$cpu" "$failed"
  echo "short $1 $rps $cpu" >> "$RESULTS"
}

long_row() {  # long_row SERVER
  local pid=${PIDS[$1]} before after out bytes mbs cpu
  before=$(cpu_seconds "$pid")
  out=$(taskset -c "$CLIENT_CPU" wrk -t1 -c4 -d"${DURATION}s" "http://127.0.0.1:${PORTS[$1]}/big" 2>&1)
  after=$(cpu_seconds "$pid")
  bytes=$(echo "$out" | awk '/requests in/ { v = $5; u = substr(v, length(v) - 1); n = substr(v, 1, length(v) - 2);
    m = (u == "GB") ? 1024 : (u == "MB") ? 1 : (u == "KB") ? 1 / 1024 : 0; print n * m }')
  mbs=$(awk -v b="$bytes" -v d="$DURATION" 'BEGIN { printf "%.0f", b / d }')
  cpu=$(awk -v a="$after" -v b="$before" -v m="$bytes" 'BEGIN { if (m > 0) printf "%.0f", (a - b) * 1e6 / m; else print "n/a" }')
  printf '%-6s %-8s %10s MB/s        %8s us CPU/MB\n' long "$1" "$mbs" "$cpu"
  echo "long $1 $mbs $cpu" >> "$RESULTS"
}

for round in $(seq 1 "$ROUNDS"); do
  echo "# round $round"
  for s in "${servers[@]}"; do short_row "$s"; done
  for s in "${servers[@]}"; do long_row "$s"; done
done
echo "# medians over $ROUNDS rounds"
for row in short long; do
  for s in "${servers[@]}"; do
    printf '%-6s %-8s %10s %s  CPU %s\n' "$row" "$s" "$(median 3 "$row" "$s")" \
      "$([ "$row" = short ] && echo sessions/s || echo MB/s)" "$(median 4 "$row" "$s")"
  done
done
