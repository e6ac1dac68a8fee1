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
trap 'stop_server 2>/dev/null; rm -rf "$work"' EXIT
RESULTS=$work/results
mkdir -p "$work/www"
head -c 20480 /dev/urandom | base64 -w 100 | head -c 20480 > "$work/www/index.html"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

cat > "$work/bench.conf" <<CONF
worker_processes 1;
pid $work/logs/bench.pid;
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
        listen 127.0.0.1:$port reuseport;
        root $work/www;
        location / { }
    }
}
CONF

echo "20 KB static file, 1 worker, $CONNS connections, ${DURATION}s per row"
for server in nginx torii; do
  [ "$server" = nginx ] && ! [ -x "$NGINX_BIN" ] && continue
  start_server "$server" "$work/bench.conf" "$work"
  wait_port "$port"
  run_wrk "keep-alive" "$server" "http://127.0.0.1:$port/index.html" "$CONNS"
  run_wrk "short-connections" "$server" "http://127.0.0.1:$port/index.html" "$CONNS" -H "Connection: close"
  stop_server
done
echo
ratio keep-alive
ratio short-connections
