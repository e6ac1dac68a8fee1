#!/usr/bin/env bash
# Seed 000's "TLS 1.3 + HTTP/2 -> reverse proxy" row: h2load with 100
# clients (the seed's 100 virtual users) through the proxy to one backend,
# over HTTP/2 and over HTTP/1.1, both on TLS 1.3. The proxy config is the
# seed's tls13+http2 server with paths and ports changed; torii and nginx as
# the proxy, one worker each, pinned to SERVER_CPU. The backend (nginx, one
# worker, an ~800-byte body in place of the seed's Tomcat page) and h2load
# share CLIENT_CPU.
# nginx 1.22 has no `http2 on`: both servers use `listen ... http2`, with a
# second address in the same server for HTTP/1.1.
# With RATE (requests per second in all), the HTTP/2 row also runs at that
# fixed offered load (h2load --rps, RATE/CLIENTS per client), where CPU per
# request compares the servers on the same requests.
# Usage: bench/h2_proxy.sh   (env: DURATION, CLIENTS, ROUNDS, RATE, TORII_BIN, NGINX_BIN)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
CLIENTS=${CLIENTS:-100}
RATE=${RATE:-0}
work=$(mktemp -d)
cleanup() {
  stop_servers
  stop_backends
  rm -rf "$work"
}
trap cleanup EXIT
RESULTS=$work/results
mkdir -p "$work/logs"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$work/key.pem" -out "$work/cert.pem" -days 2 \
  -subj /CN=localhost 2>/dev/null
ulimit -n 65536 2>/dev/null || true

body=$(printf '%0800d' 0 | tr 0 x)
start_backend "$work/backend" "location / { default_type text/html; return 200 '$body'; }"
backend=$BACKEND_PORT

write_conf() {  # write_conf NAME H2_PORT H1_PORT
cat > "$work/$1.conf" <<CONF
worker_processes 1;
pid $work/logs/$1.pid;
error_log $work/logs/$1-error.log error;
events { worker_connections 8192; }
http {
    access_log off;
    # h2load -D does not reconnect after the GOAWAY that ends a connection's
    # keepalive_requests (1000 by default): without this, both servers would
    # go idle after 1000 requests per client and the rows would measure that.
    keepalive_requests 1000000;

    upstream app_backend {
        least_conn;
        server 127.0.0.1:$backend max_fails=3 fail_timeout=30s;
        keepalive 32;
    }

    server {
        listen 127.0.0.1:$2 ssl http2 reuseport;
        listen 127.0.0.1:$3 ssl reuseport;

        server_name demo_http2;
        server_tokens off;

        ssl_certificate $work/cert.pem;
        ssl_certificate_key $work/key.pem;
        ssl_session_cache shared:SSL:10m;
        ssl_session_timeout 10m;

        ssl_protocols  TLSv1.3;
        ssl_ciphers  HIGH:!aNULL:!MD5;
        ssl_prefer_server_ciphers   on;

        large_client_header_buffers 4 32k;
        http2_body_preread_size 128k;

        add_header Strict-Transport-Security "max-age=31536000; includeSubDomains" always;
        add_header X-Frame-Options DENY;
        add_header X-Content-Type-Options nosniff;
        add_header X-XSS-Protection "1; mode=block";

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

            proxy_connect_timeout 5s;
            proxy_send_timeout 10s;
            proxy_read_timeout 30s;

            proxy_intercept_errors on;
            error_page 500 502 503 504 /50x.html;
        }

        location /health {
            access_log off;
            return 200 "healthy\n";
            add_header Content-Type text/plain;
        }

        location /static/ {
            root $work;
            expires 1y;
            add_header Cache-Control "public, immutable";
        }
    }
}
CONF
}

# A wrong status (a 502 from a dead backend, say) would be measured as a
# fast server, so each path is checked once before any load.
check_200() {  # check_200 SERVER URL CURL_FLAG VERSION
  local got
  got=$(curl -sk -o /dev/null -w '%{http_code} %{http_version}' "$3" "$2" || true)
  if [ "$got" != "200 $4" ]; then
    echo "$1: $2 with $3 answered '$got', expected '200 $4'" >&2
    exit 1
  fi
}

echo "seed 000: h2load -c$CLIENTS -m1 over TLS 1.3 through the proxy to 1 backend; 1 proxy worker each, ${DURATION}s per row, $ROUNDS rounds"
declare -A P
servers=(torii)
[ -x "$NGINX_BIN" ] && servers=(nginx torii)
for server in "${servers[@]}"; do
  P[$server.h2]=$(free_port)
  P[$server.h1]=$(free_port)
  write_conf "$server" "${P[$server.h2]}" "${P[$server.h1]}"
  start_server "$server" "$work/$server.conf" "$work"
  wait_port "${P[$server.h1]}"
  check_200 "$server" "https://127.0.0.1:${P[$server.h2]}/" --http2 2
  check_200 "$server" "https://127.0.0.1:${P[$server.h1]}/" --http1.1 1.1
done

# The backend alone, for reference (its CPU is not the proxy's: no CPU column).
taskset -c "$CLIENT_CPU" h2load --h1 -c "$CLIENTS" -D "$DURATION" --warm-up-time=1 \
  "http://127.0.0.1:$backend/" > "$work/h2load.out" 2>&1 || true
printf '%-22s %-6s %10s req/s  failed %s\n' "backend-direct-http1.1" "-" \
  "$(awk '/^finished in/ { gsub(",", "", $4); print $4 }' "$work/h2load.out")" \
  "$(awk '/^requests:/ { print $10 }' "$work/h2load.out")"

for round in $(seq 1 "$ROUNDS"); do
  for server in "${servers[@]}"; do
    run_h2load "tls13-h2-proxy" "$server" "https://127.0.0.1:${P[$server.h2]}/" -m 1
    if [ "$RATE" -gt 0 ]; then
      run_h2load "tls13-h2-proxy@$RATE" "$server" "https://127.0.0.1:${P[$server.h2]}/" -m 1 \
      "--rps=$(rps_per_client)"
    fi
    run_h2load "tls13-http1.1-proxy" "$server" "https://127.0.0.1:${P[$server.h1]}/" --h1
  done
done
echo
ratio tls13-h2-proxy
ratio tls13-http1.1-proxy
if [ "$RATE" -gt 0 ]; then ratio "tls13-h2-proxy@$RATE"; fi
