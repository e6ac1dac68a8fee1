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
# Usage: bench/h2_count.sh   (env: ROWS="static proxy", SERVERS="nginx torii"; haproxy and h2o may be added,
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
source "$here/count_lib.sh"
LOAD_ARGS=()
cleanup() {
  stop_counted
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

# The rows' site for HAProxy (proxy row only) and h2o, as bench/matrix/peers.py
# configures them (one thread, TLS 1.3, h2 by ALPN, keep-alive to the
# backend), with the same response headers added as the nginx-syntax
# config above.
write_haproxy_conf() {  # write_haproxy_conf PORT
  cat "$work/cert.pem" "$work/key.pem" > "$work/cert+key.pem"
  cat > "$work/haproxy.cfg" <<CONF
global
    nbthread 1
    maxconn 8192
    ssl-default-bind-options ssl-min-ver TLSv1.3
defaults
    mode http
    timeout connect 5s
    timeout client 600s
    timeout server 600s
    timeout http-keep-alive 600s
    option http-keep-alive
    option forwardfor
    http-reuse always
backend app
    balance leastconn
    server s0 127.0.0.1:$backend maxconn 10000
frontend site
    bind 127.0.0.1:$1 ssl crt $work/cert+key.pem alpn h2,http/1.1
    http-request set-header X-Forwarded-Proto https
    http-request set-header X-Real-IP %[src]
    http-request set-header X-Forwarded-Host %[req.hdr(host)]
    http-request set-header X-Forwarded-Port %[dst_port]
    http-response set-header Strict-Transport-Security "max-age=31536000; includeSubDomains"
    http-response set-header X-Frame-Options DENY
    http-response set-header X-Content-Type-Options nosniff
    http-response set-header X-XSS-Protection "1; mode=block"
    default_backend app
CONF
}

write_h2o_conf() {  # write_h2o_conf PORT
  cat > "$work/h2o.conf" <<CONF
user: $(id -un)
num-threads: 1
pid-file: $work/h2o.pid
error-log: $work/logs/h2o-error.log
proxy.preserve-host: ON
hosts:
  "site":
    listen:
      host: 127.0.0.1
      port: $1
      ssl:
        certificate-file: $work/cert.pem
        key-file: $work/key.pem
        minimum-version: TLSv1.3
        ocsp-update-interval: 0
    header.set: "Strict-Transport-Security: max-age=31536000; includeSubDomains"
    header.set: "X-Frame-Options: DENY"
    header.set: "X-Content-Type-Options: nosniff"
    header.set: "X-XSS-Protection: 1; mode=block"
    paths:
      /image.png:
        file.file: $work/www/image.png
      /:
        proxy.reverse.url: http://127.0.0.1:$backend/
CONF
}

binary_of() {
  case $1 in nginx) echo "$NGINX_BIN" ;; old) echo "$OLD_BIN" ;; haproxy | h2o) command -v "$1" ;; *) echo "$TORII_BIN" ;; esac
}

# start_counted SERVER PORT TOOL -> server_pid (the process under the tool)
start_counted() {
  local bin args
  bin=$(binary_of "$1")
  case $1 in
    haproxy) write_haproxy_conf "$2"; args=(-db -f "$work/haproxy.cfg") ;;
    h2o) write_h2o_conf "$2"; args=(-c "$work/h2o.conf") ;;
    *)
      write_conf "$1" "$2"
      args=(-p "$work" -c "$work/$1.conf")
      [ "$1" = nginx ] && args+=(-g 'daemon off; master_process off;') ;;
  esac
  run_counted "$1" "$2" "$3" "$bin" "${args[@]}"
}

echo "per request, (count(N2=$N2) - count(N1=$N1)) / (N2 - N1), $CLIENTS clients"
printf '%-8s %-7s %-14s %s\n' row server what per-request
for row in $ROWS; do
  if [ "$row" = static ]; then path=/image.png; streams=$STREAMS; else path=/; streams=1; fi
  for what in $COUNT; do
    for server in $SERVERS; do
      # HAProxy is not a file server.
      [ "$server" = haproxy ] && [ "$row" = static ] && continue
      port=$(free_port)
      start_counted "$server" "$port" "$what"
      url="https://127.0.0.1:$port$path"
      if [ "$what" = instructions ]; then v=$(count_instructions "$url" "$streams"); else v=$(count_syscalls "$url" "$streams"); fi
      printf '%-8s %-7s %-14s %s\n' "$row" "$server" "$what" "$v"
      stop_counted
    done
  done
done
