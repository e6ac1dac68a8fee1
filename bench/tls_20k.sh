#!/usr/bin/env bash
# Seed 001's scenario: a 20 KB file over HTTPS, with keep-alive and with
# short connections (a full TLS handshake per request), torii and nginx
# with the same config (the seed's ssl_* lines) and one worker each, server
# and client pinned to different CPUs. wrk measures throughput at CONNS and
# 1000 connections; ab repeats the seed's own commands (ab -c 1000 -n ...
# with and without -k) and counts failed requests and failed handshakes.
# Usage: bench/tls_20k.sh   (env: DURATION, CONNS, ROUNDS, AB_N, AB_N_SHORT,
#                            PROTOCOLS, TORII_BIN, NGINX_BIN)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
CONNS=${CONNS:-100}
AB_N=${AB_N:-50000}            # keep-alive requests, as the seed
AB_N_SHORT=${AB_N_SHORT:-10000}  # handshakes
PROTOCOLS=${PROTOCOLS:-"TLSv1 TLSv1.1 TLSv1.2"}  # the seed's line; OpenSSL 3 makes it TLS 1.2
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
work=$(mktemp -d)
trap 'stop_servers; rm -rf "$work"' EXIT
RESULTS=$work/results
mkdir -p "$work/www" "$work/cert"
head -c 20480 /dev/urandom | base64 -w 100 | head -c 20480 > "$work/www/index.html"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/cert/perf.key" -out "$work/cert/perf.crt" \
  -days 2 -subj /CN=perf.test 2>/dev/null

write_conf() {  # write_conf NAME PORT
cat > "$work/$1.conf" <<CONF
worker_processes 1;
pid $work/logs/$1.pid;
error_log $work/logs/$1-error.log info;
events { worker_connections 8192; }
http {
    default_type text/html;
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    open_file_cache max=1000 inactive=20s;
    server {
        listen 127.0.0.1:$2 ssl reuseport backlog=4096;
        ssl_certificate $work/cert/perf.crt;
        ssl_certificate_key $work/cert/perf.key;
        ssl_session_timeout 5m;
        ssl_ciphers ECDHE-RSA-AES128-GCM-SHA256:ECDHE:ECDH:AES:HIGH:!NULL:!aNULL:!MD5:!ADH:!RC4;
        ssl_protocols $PROTOCOLS;
        ssl_prefer_server_ciphers on;
        root $work/www;
        location / { index index.html; }
    }
}
CONF
}

# run_ab LABEL SERVER URL CONC N [ab args] -> prints a row
run_ab() {
  local label=$1 server=$2 url=$3 conc=$4 n=$5
  shift 5
  local pid=${PIDS[$server]}
  local before after out rps failed complete handshake cpu
  before=$(cpu_seconds "$pid")
  out=$(taskset -c "$CLIENT_CPU" ab -q -r -s 30 -c "$conc" -n "$n" "$@" "$url" 2>&1 || true)
  after=$(cpu_seconds "$pid")
  rps=$(echo "$out" | awk '/Requests per second/ { print $4 }')
  complete=$(echo "$out" | awk '/Complete requests/ { print $3 }')
  failed=$(echo "$out" | awk '/Failed requests/ { print $3 }')
  handshake=$(echo "$out" | grep -c "SSL handshake failed" || true)
  cpu=$(awk -v a="$after" -v b="$before" -v n="${complete:-0}" 'BEGIN { if (n > 0) printf "%.2f", (a - b) * 1e6 / n; else print "n/a" }')
  printf '%-28s %-6s %10s req/s  complete %6s  failed %5s  handshake failures %5s  %8s us CPU/req\n' \
    "$label" "$server" "${rps:-0}" "${complete:-0}" "${failed:-?}" "$handshake" "$cpu"
  echo "$label $server ${rps:-0} $cpu" >> "$RESULTS"
}

echo "20 KB file over HTTPS ($PROTOCOLS), 1 worker each, ${DURATION}s per wrk row, $ROUNDS rounds"
start_servers  # torii and nginx, each on its own port: sets servers and PORTS
for round in $(seq 1 "$ROUNDS"); do
  for server in "${servers[@]}"; do
    url="https://127.0.0.1:${PORTS[$server]}/index.html"
    run_wrk "keep-alive-c$CONNS" "$server" "$url" "$CONNS"
    run_wrk "keep-alive-c1000" "$server" "$url" 1000
    run_wrk "handshake-c$CONNS" "$server" "$url" "$CONNS" -H "Connection: close"
  done
done
echo
echo "ab, as in the seed (ab -c 1000 -n N [-k])"
for server in "${servers[@]}"; do
  url="https://127.0.0.1:${PORTS[$server]}/index.html"
  run_ab "ab-keep-alive-c1000" "$server" "$url" 1000 "$AB_N" -k
  run_ab "ab-handshake-c1000" "$server" "$url" 1000 "$AB_N_SHORT"
done
echo
for server in "${servers[@]}"; do
  n=$(grep -c "while SSL handshaking" "$work/logs/$server-error.log" 2>/dev/null || true)
  echo "$server: handshake failures in its error log: $n"
done
echo
ratio "keep-alive-c$CONNS"
ratio "keep-alive-c1000"
ratio "handshake-c$CONNS"
ratio "ab-keep-alive-c1000"
ratio "ab-handshake-c1000"
