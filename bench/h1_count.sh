#!/usr/bin/env bash
# Per-request work on the static HTTP/1.1 row (bench/run's 001-20k-plain: a
# 20 KB file, plain HTTP/1.1 keep-alive, CLIENTS connections) counted rather
# than timed: user-space instructions (callgrind) and system calls (strace -c)
# per request, torii against nginx, the floor program (bench/floor) and any
# binary given as OLD_BIN, one worker each, bench/run's config for the row
# (sendfile, tcp_nopush, no access log; OPEN_FILE_CACHE=1 adds
# `open_file_cache max=1000 inactive=60s`, and the floor then keeps the file
# open; ACCESS_LOG=1 logs every request in the combined format to a file).
# Each figure is (count(N2) - count(N1)) / (N2 - N1) on the same number of
# connections, so start-up and connection set-up cancel out.
# Usage: bench/h1_count.sh  (env: SERVERS="nginx torii floor" (h2o too, when installed), OLD_BIN,
#        N1, N2, CLIENTS, COUNT="instructions syscalls", KEEP_PROFILE=PREFIX keeps each
#        callgrind dump, CALLGRIND_OPTS (e.g. "--compress-strings=no" for a dump read on its own))
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
SERVERS=${SERVERS:-"nginx torii floor"}
COUNT=${COUNT:-"instructions syscalls"}
CLIENTS=${CLIENTS:-100}
N1=${N1:-5000}
N2=${N2:-25000}
OPEN_FILE_CACHE=${OPEN_FILE_CACHE:-0}
ACCESS_LOG=${ACCESS_LOG:-0}
[ -n "${OLD_BIN:-}" ] && SERVERS="$SERVERS old"
work=$(mktemp -d)
source "$here/count_lib.sh"
LOAD_ARGS=(--h1)
cleanup() {
  stop_counted
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/www" "$work/logs"
head -c 20480 /dev/urandom > "$work/www/index.html"
c++ -O2 -std=c++20 -o "$work/torii-floor" "$here"/floor/*.cc

write_conf() {  # write_conf NAME PORT
  local cache="" log="access_log off;"
  [ "$OPEN_FILE_CACHE" = 1 ] && cache="open_file_cache max=1000 inactive=60s;"
  [ "$ACCESS_LOG" = 1 ] && log="access_log $work/logs/$1-access.log combined;"
cat > "$work/$1.conf" <<CONF
worker_processes 1;
worker_rlimit_nofile 65536;
pid $work/logs/$1.pid;
error_log $work/logs/$1-error.log error;
events { worker_connections 16384; }
http {
    $log
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    # Under callgrind a run takes minutes: no idle close.
    keepalive_timeout 600s;
    $cache
    types { text/html html; image/png png; }
    server { listen 127.0.0.1:$2 reuseport; server_name localhost; root $work/www; }
}
CONF
}

binary_of() {
  case $1 in
    nginx) echo "$NGINX_BIN" ;; old) echo "$OLD_BIN" ;; floor) echo "$work/torii-floor" ;; h2o) command -v h2o ;;
    *) echo "$TORII_BIN" ;;
  esac
}

# h2o (when installed) with bench/run's config for the site: one thread,
# its defaults (its own open-file cache, no access log unless asked).
write_h2o_conf() {  # write_h2o_conf PORT
  local log=""
  [ "$ACCESS_LOG" = 1 ] && log="access-log: $work/logs/h2o-access.log"
cat > "$work/h2o.conf" <<CONF
user: $(id -un)
num-threads: 1
pid-file: $work/logs/h2o.pid
error-log: $work/logs/h2o-error.log
$log
hosts:
  "localhost":
    listen:
      host: 127.0.0.1
      port: $1
    paths:
      /:
        file.dir: $work/www
CONF
}

# The floor answers with the head torii sends for the file, byte for byte.
floor_head() {
  [ -s "$work/head" ] && return 0
  local port; port=$(free_port)
  write_conf headsrc "$port"
  "$TORII_BIN" -p "$work" -c "$work/headsrc.conf" &
  local pid=$!
  wait_port "$port"
  python3 - "$port" "$work/head" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /index.html HTTP/1.1\r\nHost: localhost\r\n\r\n")
data = b""
while b"\r\n\r\n" not in data:
    data += s.recv(65536)
open(sys.argv[2], "wb").write(data[:data.index(b"\r\n\r\n") + 4])
PY
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

start_counted() {  # start_counted SERVER PORT TOOL -> server_pid
  local bin args
  bin=$(binary_of "$1")
  if [ "$1" = floor ]; then
    floor_head
    args=(--static "127.0.0.1:$2" "$work/www/index.html" "$work/head")
    [ "$OPEN_FILE_CACHE" = 1 ] || args+=(--open-each)
  elif [ "$1" = h2o ]; then
    write_h2o_conf "$2"
    args=(-m worker -c "$work/h2o.conf")
  else
    write_conf "$1" "$2"
    args=(-p "$work" -c "$work/$1.conf")
    [ "$1" = nginx ] && args+=(-g 'daemon off; master_process off;')
  fi
  run_counted "$1" "$2" "$3" "$bin" "${args[@]}"
}

echo "001-20k-plain per request, (count(N2=$N2) - count(N1=$N1)) / (N2 - N1), $CLIENTS connections," \
  "open_file_cache=$OPEN_FILE_CACHE access_log=$ACCESS_LOG"
printf '%-7s %-14s %s\n' server what per-request
for what in $COUNT; do
  for server in $SERVERS; do
    port=$(free_port)
    start_counted "$server" "$port" "$what"
    url="http://127.0.0.1:$port/index.html"
    if [ "$what" = instructions ]; then v=$(count_instructions "$url"); else v=$(count_syscalls "$url"); fi
    printf '%-7s %-14s %s\n' "$server" "$what" "$v"
    stop_counted
  done
done
