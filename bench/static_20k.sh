#!/usr/bin/env bash
# A 20 KB file over keep-alive and over short connections (one TCP
# connection per request), torii and nginx with the same config and one
# worker each, server and wrk pinned to different CPUs, in one run.
# Usage: bench/static_20k.sh   (env: DURATION, CONNS, TORII_BIN, NGINX_BIN)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
CONNS=${CONNS:-100}
work=$(mktemp -d)
trap 'stop_servers; rm -rf "$work"' EXIT
RESULTS=$work/results
mkdir -p "$work/www"
head -c 20480 /dev/urandom | base64 -w 100 | head -c 20480 > "$work/www/index.html"

write_conf() {  # write_conf NAME PORT
cat > "$work/$1.conf" <<CONF
worker_processes 1;
pid $work/logs/$1.pid;
error_log $work/logs/error.log error;
events { worker_connections 4096; }
http {
    default_type text/html;
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    open_file_cache max=1000 inactive=20s;
    server {
        listen 127.0.0.1:$2 reuseport;
        root $work/www;
        location / { }
    }
}
CONF
}

echo "20 KB static file, 1 worker each, $CONNS connections, ${DURATION}s per row, $ROUNDS rounds"
start_servers  # torii and nginx, each on its own port: sets servers and PORTS
for round in $(seq 1 "$ROUNDS"); do
  for server in "${servers[@]}"; do
    url="http://127.0.0.1:${PORTS[$server]}/index.html"
    run_wrk "keep-alive" "$server" "$url" "$CONNS"
    run_wrk "short-connections" "$server" "$url" "$CONNS" -H "Connection: close"
  done
done
echo
ratio keep-alive
ratio short-connections
