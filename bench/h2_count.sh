#!/usr/bin/env bash
# Per-request work over HTTP/2 counted rather than timed: user-space
# instructions (callgrind) and system calls (strace -c) per request, torii
# against nginx (and any other binary given as OLD_BIN), one worker each.
# Two rows:
#   static: a 5 KB file over TLS 1.3 h2, CLIENTS x STREAMS (100 x 10)
#   proxy:  seed 000's TLS 1.3 h2 proxy (h2_proxy.sh's shape) to one nginx
#           backend with an ~800-byte body, CLIENTS x 1
# Each figure is the difference of two runs on the same number of
# connections, (count(N2) - count(N1)) / (N2 - N1): the handshakes and the
# connection set-up cancel out and what is left is the cost of a request.
# On a shared machine these counts do not move between runs the way CPU
# time does.
# Usage: bench/h2_count.sh   (env: ROWS="static proxy", SERVERS="nginx torii",
#        OLD_BIN (adds a server "old", e.g. the binary before a change),
#        N1, N2, CLIENTS, STREAMS, COUNT="instructions syscalls",
#        OPEN_FILE_CACHE=0 drops `open_file_cache` from the servers' config,
#        KEEP_PROFILE=PREFIX keeps each callgrind dump, CALLGRIND_OPTS)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
ROWS=${ROWS:-"static proxy"}
SERVERS=${SERVERS:-"nginx torii"}
COUNT=${COUNT:-"instructions syscalls"}
CLIENTS=${CLIENTS:-100}
STREAMS=${STREAMS:-10}
N1=${N1:-5000}
N2=${N2:-25000}
OPEN_FILE_CACHE=${OPEN_FILE_CACHE:-1}
[ -n "${OLD_BIN:-}" ] && SERVERS="$SERVERS old"
work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; fi
  stop_backends
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/www" "$work/logs"
head -c 5120 /dev/urandom > "$work/www/image.png"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" -days 2 \
  -subj /CN=localhost 2>/dev/null
ulimit -n 65536 2>/dev/null || true

body=$(printf '%0800d' 0 | tr 0 x)
start_backend "$work/backend" "location / { default_type text/html; return 200 '$body'; }"
backend=$BACKEND_PORT

write_conf() {  # write_conf NAME PORT
  local cache=""
  [ "$OPEN_FILE_CACHE" = 1 ] && cache="open_file_cache max=1000 inactive=20s;"
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
    # Under callgrind a run of one client takes minutes: no idle close.
    keepalive_timeout 600s;
    $cache
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    ssl_protocols TLSv1.3;
    upstream app_backend {
        least_conn;
        server 127.0.0.1:$backend max_fails=3 fail_timeout=30s;
        keepalive 32;
    }
    server {
        listen 127.0.0.1:$2 ssl http2 reuseport;
        root $work/www;
        large_client_header_buffers 4 32k;
        http2_body_preread_size 128k;
        add_header Strict-Transport-Security "max-age=31536000; includeSubDomains" always;
        add_header X-Frame-Options DENY;
        add_header X-Content-Type-Options nosniff;
        add_header X-XSS-Protection "1; mode=block";
        location /image.png { }
        location / {
            proxy_pass http://app_backend;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$host;
            proxy_set_header X-Real-IP \$remote_addr;
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto \$scheme;
            proxy_set_header X-Forwarded-Host \$host;
            proxy_set_header X-Forwarded-Port \$server_port;
            proxy_intercept_errors on;
        }
    }
}
CONF
}

binary_of() {
  case $1 in nginx) echo "$NGINX_BIN" ;; old) echo "$OLD_BIN" ;; *) echo "$TORII_BIN" ;; esac
}

# start_counted SERVER PORT TOOL -> server_pid (the process under the tool)
start_counted() {
  local bin
  bin=$(binary_of "$1")
  write_conf "$1" "$2"
  local args=(-p "$work" -c "$work/$1.conf")
  [ "$1" = nginx ] && args+=(-g 'daemon off; master_process off;')
  if [ "$3" = instructions ]; then
    taskset -c "$SERVER_CPU" valgrind --tool=callgrind ${CALLGRIND_OPTS:-} --callgrind-out-file="$work/cg.%p" \
      "$bin" "${args[@]}" 2> "$work/valgrind.log" &
  else
    taskset -c "$SERVER_CPU" "$bin" "${args[@]}" &
  fi
  server_pid=$!
  for _ in $(seq 1 600); do
    if (exec 3<>/dev/tcp/127.0.0.1/"$2") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "$1 never opened port $2" >&2
  exit 1
}

load() {  # load URL N STREAMS -> checks every request succeeded
  local out
  out=$(taskset -c "$CLIENT_CPU" h2load -c "$CLIENTS" -m "$3" -n "$2" "$1" 2>&1)
  if ! echo "$out" | grep -q "succeeded, 0 failed"; then
    echo "h2load did not complete: $(echo "$out" | grep '^requests:')" >&2
    exit 1
  fi
  if [ "$(echo "$out" | awk '/^status codes:/ { print $3 }')" != "$2" ]; then
    echo "h2load saw answers other than 2xx: $(echo "$out" | grep '^status codes:')" >&2
    exit 1
  fi
}

# The total instructions callgrind counted since the last zeroing.
instructions_now() {
  rm -f "$work"/cg."$server_pid".*
  callgrind_control -d "$server_pid" > /dev/null 2>&1
  local f
  for _ in $(seq 1 100); do
    f=$(ls "$work"/cg."$server_pid".* 2>/dev/null | head -1 || true)
    [ -n "$f" ] && grep -q '^totals:' "$f" 2>/dev/null && break
    sleep 0.1
  done
  [ -n "${KEEP_PROFILE:-}" ] && cp "$f" "$KEEP_PROFILE.$server_pid.$(date +%s%N)"
  awk '/^totals:/ { print $2 }' "$f"
}

count_instructions() {  # URL STREAMS -> instructions per request
  load "$1" 1000 "$2"  # warm-up: caches, pools, the upstream keep-alive pool
  callgrind_control -z "$server_pid" > /dev/null 2>&1
  load "$1" "$N1" "$2"
  local a b
  a=$(instructions_now)
  callgrind_control -z "$server_pid" > /dev/null 2>&1
  load "$1" "$N2" "$2"
  b=$(instructions_now)
  awk -v a="$a" -v b="$b" -v n1="$N1" -v n2="$N2" 'BEGIN { printf "%.0f", (b - a) / (n2 - n1) }'
}

syscalls_during() {  # URL N STREAMS -> system calls the server made during the run
  strace -c -f -p "$server_pid" -o "$work/strace.out" 2>/dev/null &
  local tracer=$!
  sleep 0.5
  load "$1" "$2" "$3"
  kill -INT "$tracer"
  wait "$tracer" 2>/dev/null || true
  awk '$NF == "total" { print $(NF-2) }' "$work/strace.out"
}

count_syscalls() {  # URL STREAMS -> system calls per request
  load "$1" 1000 "$2"
  local a b
  a=$(syscalls_during "$1" "$N1" "$2")
  b=$(syscalls_during "$1" "$N2" "$2")
  awk -v a="$a" -v b="$b" -v n1="$N1" -v n2="$N2" 'BEGIN { printf "%.2f", (b - a) / (n2 - n1) }'
}

echo "per request, (count(N2=$N2) - count(N1=$N1)) / (N2 - N1), $CLIENTS clients"
printf '%-8s %-7s %-14s %s\n' row server what per-request
for row in $ROWS; do
  if [ "$row" = static ]; then path=/image.png; streams=$STREAMS; else path=/; streams=1; fi
  for what in $COUNT; do
    for server in $SERVERS; do
      port=$(free_port)
      start_counted "$server" "$port" "$what"
      url="https://127.0.0.1:$port$path"
      if [ "$what" = instructions ]; then v=$(count_instructions "$url" "$streams"); else v=$(count_syscalls "$url" "$streams"); fi
      printf '%-8s %-7s %-14s %s\n' "$row" "$server" "$what" "$v"
      kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=
    done
  done
done
