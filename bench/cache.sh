#!/usr/bin/env bash
# A cached 20 KB response over keep-alive: torii and nginx as a caching
# proxy (proxy_cache, one worker each, pinned to SERVER_CPU) in front of
# one nginx backend; after the first request every response is a HIT, so
# the backend is idle and the row measures the cache's hit path. The same
# file served as a static file is the reference row.
# Usage: bench/cache.sh   (env: DURATION, ROUNDS, CONNS, TORII_BIN, NGINX_BIN)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
CONNS=${CONNS:-100}
work=$(mktemp -d)
cleanup() {
  stop_servers
  stop_backends
  rm -rf "$work"
}
trap cleanup EXIT
RESULTS=$work/results
mkdir -p "$work/www"
head -c 20480 /dev/urandom | base64 -w 100 | head -c 20480 > "$work/www/index.html"

start_backend "$work/backend" "default_type text/html; root $work/www;"
backend=$BACKEND_PORT

write_conf() {  # write_conf NAME PORT
mkdir -p "$work/cache-$1"
cat > "$work/$1.conf" <<CONF
worker_processes 1;
pid $work/logs/$1.pid;
error_log $work/logs/$1-error.log error;
events { worker_connections 4096; }
http {
    default_type text/html;
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    open_file_cache max=1000 inactive=20s;
    proxy_cache_path $work/cache-$1 levels=1:2 keys_zone=bench:10m max_size=100m inactive=1h;
    server {
        listen 127.0.0.1:$2 reuseport;
        root $work/www;
        location /static/ { alias $work/www/; }
        location / {
            proxy_pass http://127.0.0.1:$backend;
            proxy_cache bench;
            proxy_cache_valid 200 1h;
        }
    }
}
CONF
}

echo "cached 20 KB response (proxy_cache HIT) vs the same static file, 1 worker each, $CONNS connections, ${DURATION}s per row, $ROUNDS rounds"
start_servers  # torii and nginx, each on its own port: sets servers and PORTS
for server in "${servers[@]}"; do  # fill the cache
  curl -s -o /dev/null "http://127.0.0.1:${PORTS[$server]}/index.html"
  status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${PORTS[$server]}/index.html")
  [ "$status" = 200 ] || { echo "$server: cached request answered $status" >&2; exit 1; }
done
for round in $(seq 1 "$ROUNDS"); do
  for server in "${servers[@]}"; do
    run_wrk "cache-hit-keep-alive" "$server" "http://127.0.0.1:${PORTS[$server]}/index.html" "$CONNS"
    run_wrk "static-keep-alive" "$server" "http://127.0.0.1:${PORTS[$server]}/static/index.html" "$CONNS"
  done
done
echo
ratio cache-hit-keep-alive
ratio static-keep-alive
awk -v c="$(median 3 cache-hit-keep-alive torii)" -v s="$(median 3 static-keep-alive torii)" \
  'BEGIN { if (s > 0) printf "torii cache hit / torii static file: x%.2f req/s\n", c / s }'
