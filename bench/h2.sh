#!/usr/bin/env bash
# Seed 002: a 5 KB image, h2load with many clients, HTTP/2 vs HTTP/1.1
# keep-alive on the same file, torii and nginx with one worker each,
# server and client pinned to different CPUs. Over TLS 1.3 (ALPN h2 vs
# http/1.1) and over cleartext (h2c prior knowledge vs HTTP/1.1).
# nginx 1.22 has no `http2 on`: both servers use `listen ... http2`, with a
# second address for HTTP/1.1 (nginx 1.22 cannot serve h2c and HTTP/1.1 on
# one cleartext port).
# With RATE (requests per second in all), the HTTP/2 rows also run at that
# fixed offered load (h2load --rps, RATE/CLIENTS per client): both servers
# get the same requests, so CPU per request compares what each spends on a
# request rather than how many it can take. Each such row runs twice: with
# h2load's --rps, which sends every client's request at the same tick (a
# burst of CLIENTS requests RATE/CLIENTS times a second), and with
# torii-load's --rate ("-even"), which spaces the requests evenly.
# Usage: bench/h2.sh   (env: DURATION, CLIENTS, STREAMS, ROUNDS, MODES="tls h2c", RATE, TORII_BIN, NGINX_BIN)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
CLIENTS=${CLIENTS:-1000}
STREAMS=${STREAMS:-1}
MODES=${MODES:-"tls h2c"}
RATE=${RATE:-0}
work=$(mktemp -d)
trap 'stop_servers; rm -rf "$work"' EXIT
RESULTS=$work/results
mkdir -p "$work/www" "$work/logs"
head -c 5120 /dev/urandom > "$work/www/image.png"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" -days 2 \
  -subj /CN=localhost 2>/dev/null
ulimit -n 65536 2>/dev/null || true

write_conf() {  # write_conf NAME TLS_H2 TLS_H1 PLAIN_H2 PLAIN_H1
cat > "$work/$1.conf" <<CONF
worker_processes 1;
pid $work/logs/$1.pid;
error_log $work/logs/$1-error.log error;
events { worker_connections 8192; }
http {
    default_type image/png;
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    open_file_cache max=1000 inactive=20s;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.3;
    server {
        listen 127.0.0.1:$2 ssl http2 reuseport;
        listen 127.0.0.1:$3 ssl reuseport;
        listen 127.0.0.1:$4 http2 reuseport;
        listen 127.0.0.1:$5 reuseport;
        root $work/www;
        location / { }
    }
}
CONF
}

echo "5 KB image, 1 worker each, $CLIENTS clients x $STREAMS streams, ${DURATION}s per row, $ROUNDS rounds"
declare -A P
servers=(torii)
[ -x "$NGINX_BIN" ] && servers=(nginx torii)
for server in "${servers[@]}"; do
  for k in tls_h2 tls_h1 h2c h1; do P[$server.$k]=$(free_port); done
  write_conf "$server" "${P[$server.tls_h2]}" "${P[$server.tls_h1]}" "${P[$server.h2c]}" "${P[$server.h1]}"
  start_server "$server" "$work/$server.conf" "$work"
  wait_port "${P[$server.h1]}"
done
for round in $(seq 1 "$ROUNDS"); do
  for server in "${servers[@]}"; do
    for mode in $MODES; do
      if [ "$mode" = tls ]; then
        run_h2load "tls-h2" "$server" "https://127.0.0.1:${P[$server.tls_h2]}/image.png" -m "$STREAMS"
        if [ "$RATE" -gt 0 ]; then
          run_h2load "tls-h2@$RATE" "$server" "https://127.0.0.1:${P[$server.tls_h2]}/image.png" \
          -m "$STREAMS" "--rps=$(rps_per_client)"
          run_torii_load "tls-h2@$RATE-even" "$server" "https://127.0.0.1:${P[$server.tls_h2]}/image.png" \
          -m "$STREAMS" --h2 --rate "$RATE"
        fi
        run_h2load "tls-http1.1" "$server" "https://127.0.0.1:${P[$server.tls_h1]}/image.png" --h1
      else
        run_h2load "h2c" "$server" "http://127.0.0.1:${P[$server.h2c]}/image.png" -m "$STREAMS"
        if [ "$RATE" -gt 0 ]; then
          run_h2load "h2c@$RATE" "$server" "http://127.0.0.1:${P[$server.h2c]}/image.png" \
          -m "$STREAMS" "--rps=$(rps_per_client)"
          run_torii_load "h2c@$RATE-even" "$server" "http://127.0.0.1:${P[$server.h2c]}/image.png" \
          -m "$STREAMS" --h2 --rate "$RATE"
        fi
        run_h2load "http1.1" "$server" "http://127.0.0.1:${P[$server.h1]}/image.png" --h1
      fi
    done
  done
done
echo
for label in tls-h2 tls-http1.1 h2c http1.1; do ratio "$label"; done
if [ "$RATE" -gt 0 ]; then
  for label in "tls-h2@$RATE" "tls-h2@$RATE-even" "h2c@$RATE" "h2c@$RATE-even"; do ratio "$label"; done
fi
