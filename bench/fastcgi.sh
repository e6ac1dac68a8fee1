#!/usr/bin/env bash
# PHP-FPM behind torii and behind nginx: a trivial PHP page, keep-alive
# FastCGI connections (upstream keepalive + fastcgi_keep_conn on), the
# same offered load for both (torii-load in open loop at RATE requests per
# second over CONNS client connections), and the server's CPU time per
# request. One server worker each, pinned to SERVER_CPU; php-fpm and the
# load tool share CLIENT_CPU. Each server has its own php-fpm pool of
# CHILDREN children, at least as many as it may open connections: a kept
# FastCGI connection holds its child, so servers sharing a pool would
# starve each other. Rounds alternate between the servers.
# Usage: bench/fastcgi.sh   (env: RATE, CONNS, CHILDREN, DURATION, ROUNDS,
# SERVER_CPU, CLIENT_CPU, TORII_BIN, NGINX_BIN, LOAD_BIN, PHP_FPM)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
LOAD_BIN=${LOAD_BIN:-$here/../build/torii-load}
PHP_FPM=${PHP_FPM:-/usr/sbin/php-fpm8.2}
RATE=${RATE:-2000}
CONNS=${CONNS:-8}
CHILDREN=${CHILDREN:-8}
work=$(mktemp -d)
fpm_pid=
cleanup() {
  stop_servers
  if [ -n "$fpm_pid" ]; then kill -QUIT "$fpm_pid" 2>/dev/null; wait "$fpm_pid" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT
RESULTS=$work/results
: > "$RESULTS"
mkdir -p "$work/www" "$work/logs" "$work/fpm"
echo '<?php echo "hello from php\n";' > "$work/www/hello.php"
cp /etc/nginx/fastcgi.conf /etc/nginx/fastcgi_params "$work/"

user=""
root_flag=()
if [ "$(id -u)" = 0 ]; then user="user = root"; root_flag=(-R); fi
cat > "$work/fpm/fpm.conf" <<CONF
[global]
pid = $work/fpm/fpm.pid
error_log = $work/fpm/fpm.log
daemonize = no
CONF
for pool in torii nginx; do
  cat >> "$work/fpm/fpm.conf" <<CONF
[$pool]
$user
listen = $work/fpm/$pool.sock
listen.mode = 0666
listen.backlog = 4096
pm = static
pm.max_children = $CHILDREN
pm.max_requests = 0
CONF
done
taskset -c "$CLIENT_CPU" "$PHP_FPM" "${root_flag[@]}" -n -F -y "$work/fpm/fpm.conf" -p "$work/fpm" \
  -d opcache.enable=0 > "$work/fpm/out" 2>&1 &
fpm_pid=$!
for _ in $(seq 1 100); do [ -S "$work/fpm/torii.sock" ] && [ -S "$work/fpm/nginx.sock" ] && break; sleep 0.05; done

write_conf() {  # write_conf NAME PORT
cat > "$work/$1.conf" <<CONF
worker_processes 1;
pid $work/logs/$1.pid;
error_log $work/logs/$1-error.log error;
events { worker_connections 4096; }
http {
    access_log off;
    keepalive_requests 1000000;
    upstream php { server unix:$work/fpm/$1.sock; keepalive $CHILDREN; }
    server {
        listen 127.0.0.1:$2;
        root $work/www;
        location ~ \.php\$ {
            include fastcgi.conf;
            fastcgi_keep_conn on;
            fastcgi_pass php;
        }
    }
}
CONF
}

# measure LABEL SERVER: one open-loop run; prints a row, appends to RESULTS.
measure() {
  local label=$1 server=$2 pid=${PIDS[$2]} before after reqs rps cpu p50 p99 errors
  before=$(cpu_seconds "$pid")
  taskset -c "$CLIENT_CPU" "$LOAD_BIN" -t1 -c"$CONNS" --rate "$RATE" -d"$DURATION" --json "$work/tl.json" \
    "http://127.0.0.1:${PORTS[$server]}/hello.php" > "$work/tl.out" 2>&1 || true
  after=$(cpu_seconds "$pid")
  read -r reqs rps p50 p99 errors < <(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
d = j["http_req_duration"]
print(j["http_reqs"]["count"], round(j["http_reqs"]["rate"]), "%.2fms" % d["med"], "%.2fms" % d["p99"],
      j["http_req_failed"]["count"])' "$work/tl.json")
  cpu=$(awk -v a="$after" -v b="$before" -v n="$reqs" 'BEGIN { if (n > 0) printf "%.2f", (a - b) * 1e6 / n; else print "n/a" }')
  printf '%-16s %-6s %8s req/s  p50 %8s  p99 %8s  %8s us CPU/req  failed %s\n' "$label" "$server" "$rps" "$p50" "$p99" "$cpu" "$errors"
  echo "$label $server $rps $cpu" >> "$RESULTS"
}

echo "PHP-FPM ($CHILDREN children) behind the server: $RATE req/s offered over $CONNS connections, ${DURATION}s per row, $ROUNDS rounds"
start_servers
for server in "${servers[@]}"; do  # warm up: the pools fill, php-fpm's children start
  taskset -c "$CLIENT_CPU" "$LOAD_BIN" -t1 -c"$CONNS" -n 2000 "http://127.0.0.1:${PORTS[$server]}/hello.php" > /dev/null 2>&1 || true
done
for round in $(seq 1 "$ROUNDS"); do
  for server in "${servers[@]}"; do
    measure "php-hello-$RATE" "$server"
  done
done
echo
ratio "php-hello-$RATE"
