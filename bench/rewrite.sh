#!/usr/bin/env bash
# The rewrite module's cost: a location with an `if` (a regex on the
# User-Agent) and three rewrites that all match (two without a flag, the
# last with `break`) before a small static file, next to the same file
# from a location without rewrite directives. torii and nginx with the same
# config and one worker each, server and wrk pinned to different CPUs.
# Usage: bench/rewrite.sh   (env: DURATION, ROUNDS, CONNS, TORII_BIN, NGINX_BIN)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
CONNS=${CONNS:-50}
work=$(mktemp -d)
trap 'stop_servers; rm -rf "$work"' EXIT
RESULTS=$work/results
mkdir -p "$work/www"
head -c 600 /dev/urandom | base64 -w 100 > "$work/www/item.html"

write_conf() {  # write_conf NAME PORT
cat > "$work/$1.conf" <<CONF
worker_processes 1;
pid $work/logs/$1.pid;
error_log $work/logs/error.log error;
events { worker_connections 4096; }
http {
    default_type text/html;
    access_log off;
    keepalive_requests 1000000;
    open_file_cache max=1000 inactive=20s;
    server {
        listen 127.0.0.1:$2 reuseport;
        root $work/www;
        location / { }
        location /app/ {
            if (\$http_user_agent ~* (bot|crawl|spider)) { return 403; }
            rewrite ^/app/old/(.*)$ /app/new/\$1;
            rewrite ^/app/new/(\w+)/(\d+)$ /app/item.html?id=\$2&cat=\$1;
            rewrite ^/app/item\.html$ /item.html break;
        }
    }
}
CONF
}

echo "rewrite program vs none, 1 worker each, $CONNS connections, ${DURATION}s per row, $ROUNDS rounds"
start_servers  # torii and nginx, each on its own port: sets servers and PORTS
for server in "${servers[@]}"; do  # the rewritten URL must serve the file on both
  curl -sf -o /dev/null "http://127.0.0.1:${PORTS[$server]}/app/old/books/42" ||
    { echo "$server: /app/old/books/42 did not answer 200" >&2; exit 1; }
done
for round in $(seq 1 "$ROUNDS"); do
  for server in "${servers[@]}"; do
    run_wrk "static" "$server" "http://127.0.0.1:${PORTS[$server]}/item.html" "$CONNS"
    run_wrk "if+3-rewrites" "$server" "http://127.0.0.1:${PORTS[$server]}/app/old/books/42" "$CONNS"
  done
done
echo
ratio static
ratio if+3-rewrites
