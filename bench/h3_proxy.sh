#!/usr/bin/env bash
# Seed 000's "TLS 1.3 + HTTP/3 -> proxy" row beside its "TLS 1.3 + HTTP/2 ->
# proxy" row on the same torii (one worker, http2 and http3 on one server
# block), and Caddy's HTTP/3 when caddy is installed. The backend is nginx
# answering `return 200` with a small body, on the load's CPU.
#
# No load tool installable here speaks HTTP/3 at a fixed rate, so both rows
# use the same shape with the clients that exist: CONNS connections, each
# with STREAMS requests in flight, REQS requests in all; HTTP/2 through
# h2load, HTTP/3 through CONNS parallel gtlsclient processes (ngtcp2's
# example client, far heavier than h2load: the load CPU is not comparable,
# the server's is). The figure is server CPU per request, counted from its
# access log, so a request the client did not finish does not count.
# Usage: bench/h3_proxy.sh   (env: ROUNDS, REQS, CONNS, TORII_BIN, NGINX_BIN)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
REQS=${REQS:-8000}
CONNS=${CONNS:-4}
STREAMS=${STREAMS:-64}
command -v gtlsclient >/dev/null || { echo "gtlsclient (ngtcp2-client) is needed" >&2; exit 1; }
work=$(mktemp -d)
trap 'stop_servers; stop_backends; rm -rf "$work"' EXIT
RESULTS=$work/results
mkdir -p "$work/torii/logs" "$work/caddy"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
  -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null

start_backend "$work/backend" 'location / { return 200 "hello from the backend\n"; }'
backend_port=$BACKEND_PORT

port=$(free_port)
cat > "$work/torii.conf" <<CONF
worker_processes 1;
pid $work/torii/logs/torii.pid;
error_log $work/torii/logs/error.log error;
events { worker_connections 4096; }
http {
    log_format bench '\$server_protocol \$status';
    access_log $work/torii/logs/access.log bench;
    keepalive_requests 1000000;
    upstream backend { server 127.0.0.1:$backend_port; keepalive 32; }
    server {
        listen 127.0.0.1:$port ssl;
        http2 on;
        http3 on;
        http3_max_concurrent_streams $STREAMS;
        ssl_protocols TLSv1.3;
        ssl_certificate $work/cert.pem;
        ssl_certificate_key $work/key.pem;
        location / { proxy_pass http://backend; proxy_http_version 1.1; proxy_set_header Connection ""; }
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
    reverse_proxy 127.0.0.1:$backend_port
    log {
        output file $work/caddy/access.log
    }
}
CONF
  GOMAXPROCS=1 taskset -c "$SERVER_CPU" caddy run --config "$work/caddy/Caddyfile" --adapter caddyfile \
    > "$work/caddy/out.log" 2>&1 &
  PIDS[caddy]=$!
  wait_port "$caddy_port"
fi

count_200() {  # count_200 LOG PATTERN
  grep -c "$2" "$1" 2>/dev/null || true
}

# row LABEL SERVER LOG PATTERN COMMAND...: runs the load, prints server CPU per request
row() {
  local label=$1 server=$2 log=$3 pattern=$4
  shift 4
  local pid=${PIDS[$server]} before after t0 t1 n
  : > "$log"
  before=$(cpu_seconds "$pid")
  t0=$(date +%s.%N)
  "$@"
  t1=$(date +%s.%N)
  sleep 0.2
  after=$(cpu_seconds "$pid")
  n=$(count_200 "$log" "$pattern")
  awk -v l="$label" -v s="$server" -v a="$after" -v b="$before" -v n="$n" -v t0="$t0" -v t1="$t1" -v f="$RESULTS" 'BEGIN {
    cpu = n > 0 ? (a - b) * 1e6 / n : 0
    printf "%-10s %-6s %6d requests in %5.2f s  %8.2f us CPU/req  busy %3.0f%%\n", l, s, n, t1 - t0, cpu, (a - b) * 100 / (t1 - t0)
    printf "%s %s %d %.2f\n", l, s, n, cpu >> f }'
}

h3_load() {  # h3_load PORT: CONNS gtlsclient processes, REQS/CONNS requests each
  local per=$((REQS / CONNS)) pids=()
  for _ in $(seq 1 "$CONNS"); do
    taskset -c "$CLIENT_CPU" gtlsclient -q --no-quic-dump --no-http-dump --exit-on-all-streams-close \
      -n "$per" 127.0.0.1 "$1" "https://localhost:$1/" > /dev/null 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}" || true
}

h2_load() {  # h2_load PORT
  taskset -c "$CLIENT_CPU" h2load -n "$REQS" -c "$CONNS" -m "$STREAMS" "https://localhost:$1/" > /dev/null 2>&1 || true
}

for round in $(seq 1 "$ROUNDS"); do
  row h2 torii "$work/torii/logs/access.log" "^HTTP/2.0 200" h2_load "$port"
  row h3 torii "$work/torii/logs/access.log" "^HTTP/3.0 200" h3_load "$port"
  if [ -n "$caddy_port" ]; then
    row h3 caddy "$work/caddy/access.log" '"proto":"HTTP/3.0".*"status":200' h3_load "$caddy_port"
  fi
done

echo
med() { awk -v l="$1" -v s="$2" '$1 == l && $2 == s { print $4 }' "$RESULTS" | sort -g |
  awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
h2=$(med h2 torii); h3=$(med h3 torii)
awk -v a="$h3" -v b="$h2" 'BEGIN { printf "torii: HTTP/3 %s us vs HTTP/2 %s us CPU per proxied request (median), x%.2f\n", a, b, a / b }'
if [ -n "$caddy_port" ]; then
  c=$(med h3 caddy)
  awk -v a="$h3" -v c="$c" 'BEGIN { printf "HTTP/3: torii %s us vs caddy %s us CPU per proxied request (median), x%.2f\n", a, c, a / c }'
fi
