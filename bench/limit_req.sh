#!/usr/bin/env bash
# limit_req's cost: a small static file from a location with limit_req on a
# zone that never limits (a rate and burst far above the load), next to the
# same file from a location without it. Two keys: $binary_remote_addr (one
# key for every connection: all lookups hit one entry of one shard) and
# $binary_remote_addr$remote_port (a key per connection: CONNS entries).
# limit_conn on the same keys rides along. torii and nginx with the same
# config and one worker each, server and wrk pinned to different CPUs.
# Usage: bench/limit_req.sh   (env: DURATION, ROUNDS, CONNS (default 1000), TORII_BIN, NGINX_BIN)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
CONNS=${CONNS:-1000}
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
    limit_req_zone \$binary_remote_addr zone=one:10m rate=10000000r/s;
    limit_req_zone \$binary_remote_addr\$remote_port zone=many:10m rate=10000000r/s;
    limit_conn_zone \$binary_remote_addr\$remote_port zone=conns:10m;
    server {
        listen 127.0.0.1:$2 reuseport;
        root $work/www;
        location / { }
        location /one/ { limit_req zone=one burst=1000000 nodelay; alias $work/www/; }
        location /many/ { limit_req zone=many burst=1000000 nodelay; alias $work/www/; }
        location /conn/ { limit_conn conns 100; alias $work/www/; }
    }
}
CONF
}

echo "limit_req on a zone that never limits vs none, 1 worker each, $CONNS connections, ${DURATION}s per row, $ROUNDS rounds"
ulimit -n 65536 2>/dev/null || true
start_servers
for server in "${servers[@]}"; do
  for p in /item.html /one/item.html /many/item.html /conn/item.html; do
    curl -sf -o /dev/null "http://127.0.0.1:${PORTS[$server]}$p" || { echo "$server: $p did not answer 200" >&2; exit 1; }
  done
done
for round in $(seq 1 "$ROUNDS"); do
  for server in "${servers[@]}"; do
    run_wrk "none" "$server" "http://127.0.0.1:${PORTS[$server]}/item.html" "$CONNS"
    run_wrk "limit_req-one-key" "$server" "http://127.0.0.1:${PORTS[$server]}/one/item.html" "$CONNS"
    run_wrk "limit_req-key-per-conn" "$server" "http://127.0.0.1:${PORTS[$server]}/many/item.html" "$CONNS"
    run_wrk "limit_conn-key-per-conn" "$server" "http://127.0.0.1:${PORTS[$server]}/conn/item.html" "$CONNS"
  done
done
echo
for label in none limit_req-one-key limit_req-key-per-conn limit_conn-key-per-conn; do ratio "$label"; done
echo
# The figure asked for: each server's CPU per request with limit_req over its own without.
for server in "${servers[@]}"; do
  base=$(median 4 none "$server")
  for label in limit_req-one-key limit_req-key-per-conn limit_conn-key-per-conn; do
    awk -v s="$server" -v l="$label" -v b="$base" -v c="$(median 4 "$label" "$server")" \
      'BEGIN { if (b > 0) printf "%-6s %-24s %s us vs %s us CPU/req: %+.1f%%\n", s, l, c, b, (c - b) * 100 / b }'
  done
done
