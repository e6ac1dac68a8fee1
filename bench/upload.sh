#!/usr/bin/env bash
# A large upload through the proxy with request buffering on: the client
# sends SIZE_MB (default 1024) with a Content-Length, the proxy takes the
# whole body (into its temp file past client_body_buffer_size) and then
# sends it to an nginx backend that reads and discards it. Per server:
# the wall time of each upload (curl -T), and the proxy's peak resident
# memory (VmHWM) over all of them, which stays flat if the body is never
# held in memory. torii and Debian's nginx, one worker each, pinned.
# Usage: bench/upload.sh   (env: SIZE_MB, ROUNDS (default 3))
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
SIZE_MB=${SIZE_MB:-1024}
work=$(mktemp -d)
cleanup() {
  stop_servers
  stop_backends
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/logs"
head -c "$((SIZE_MB * 1024 * 1024))" /dev/urandom > "$work/body"

start_backend "$work/backend" "client_max_body_size 0; client_body_temp_path $work/backend/body; location / { return 200 \"ok\n\"; }"
backend=$BACKEND_PORT

write_conf() {  # write_conf NAME PORT
cat > "$work/$1.conf" <<CONF
worker_processes 1;
pid $work/logs/$1.pid;
error_log $work/logs/$1-error.log error;
events {}
http {
    access_log off;
    client_max_body_size 0;
    client_body_temp_path $work/$1-body;
    upstream be { server 127.0.0.1:$backend; keepalive 4; }
    server {
        listen 127.0.0.1:$2;
        location / {
            proxy_pass http://be;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_request_buffering on;
        }
    }
}
CONF
}

start_servers
printf '%-6s %-40s %s\n' server "upload seconds (${SIZE_MB} MB, each round)" "peak RSS"
for server in "${servers[@]}"; do
  times=()
  for _ in $(seq 1 "$ROUNDS"); do
    out=$(taskset -c "$CLIENT_CPU" curl -s -o /dev/null -w '%{http_code} %{time_total}' -H 'Expect:' -X POST \
      -T "$work/body" "http://127.0.0.1:${PORTS[$server]}/")
    [ "${out%% *}" = 200 ] || { echo "$server answered ${out%% *}" >&2; exit 1; }
    times+=("${out#* }")
  done
  hwm=$(awk '/^VmHWM/ { print $2 " " $3 }' "/proc/${PIDS[$server]}/status")
  printf '%-6s %-40s %s\n' "$server" "${times[*]}" "$hwm"
done
