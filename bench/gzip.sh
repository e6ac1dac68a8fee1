#!/usr/bin/env bash
# gzip on: a 20 KB and a 200 KB HTML file at gzip_comp_level 5 and 1,
# served as static files and through the proxy (from an nginx backend that
# does not compress), torii and nginx with the same config and one worker
# each, wrk sending Accept-Encoding: gzip. CPU per request is the figure:
# torii keeps a static file's encoded bytes per file version, nginx
# compresses every response again.
# Usage: bench/gzip.sh   (env: DURATION, ROUNDS, CONNS, TORII_BIN, NGINX_BIN)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib.sh"
CONNS=${CONNS:-50}
work=$(mktemp -d)
trap 'stop_servers; stop_backends; rm -rf "$work"' EXIT
RESULTS=$work/results
mkdir -p "$work/www"

# HTML-like text: words drawn from a vocabulary in tags, which compresses
# about as well as real pages (4-5x), unlike random bytes.
python3 - "$work/www" <<'PY'
import random, sys
random.seed(7)
words = ("the of and to in is for on that with as by at from this be are it an or was which "
         "torii gateway server request response header body stream proxy client upstream cache "
         "file static compress level window buffer latency throughput connection").split()
def page(n):
    out = ["<!doctype html><html><head><title>bench</title></head><body>"]
    size = len(out[0])
    while size < n:
        tag = random.choice(["p", "li", "span", "div", "td"])
        s = "<%s class=\"c%d\">%s</%s>\n" % (tag, random.randint(0, 40),
                                         " ".join(random.choice(words) for _ in range(random.randint(5, 20))), tag)
        out.append(s)
        size += len(s)
    return "".join(out)[:n].encode()
for name, n in (("20k.html", 20 * 1024), ("200k.html", 200 * 1024)):
    open(sys.argv[1] + "/" + name, "wb").write(page(n))
PY

start_backend "$work/backend" "default_type text/html; root $work/www;"
backend_port=$BACKEND_PORT

write_conf() {  # write_conf NAME PORT
cat > "$work/$1.conf" <<CONF
worker_processes 1;
pid $work/logs/$1.pid;
error_log $work/logs/error.log error;
events { worker_connections 4096; }
http {
    default_type text/html;
    access_log off;
    sendfile on;
    keepalive_requests 1000000;
    open_file_cache max=1000 inactive=20s;
    gzip on;
    upstream backend { server 127.0.0.1:$backend_port; keepalive 32; }
    server {
        listen 127.0.0.1:$2 reuseport;
        root $work/www;
        location /l5/ { gzip_comp_level 5; alias $work/www/; }
        location /l1/ { gzip_comp_level 1; alias $work/www/; }
        location /p5/ { gzip_comp_level 5; proxy_pass http://backend/; proxy_http_version 1.1; proxy_set_header Connection ""; }
        location /p1/ { gzip_comp_level 1; proxy_pass http://backend/; proxy_http_version 1.1; proxy_set_header Connection ""; }
    }
}
CONF
}

echo "gzip on, 1 worker each, $CONNS connections, ${DURATION}s per row, $ROUNDS rounds"
start_servers
rows=(static-20k-l5:/l5/20k.html static-20k-l1:/l1/20k.html static-200k-l5:/l5/200k.html
      static-200k-l1:/l1/200k.html proxy-20k-l5:/p5/20k.html proxy-200k-l1:/p1/200k.html)
for server in "${servers[@]}"; do  # both answer gzip, and the same bytes once decoded
  got=$(curl -s --compressed "http://127.0.0.1:${PORTS[$server]}/l5/200k.html" | cmp - "$work/www/200k.html" && echo same)
  enc=$(curl -s -o /dev/null -D - -H 'Accept-Encoding: gzip' "http://127.0.0.1:${PORTS[$server]}/p1/20k.html" | tr -d '\r' | awk -F': ' 'tolower($1) == "content-encoding" { print $2 }')
  echo "$server: static decodes to the file: ${got:-NO}; proxied Content-Encoding: ${enc:-none}"
done
for round in $(seq 1 "$ROUNDS"); do
  for row in "${rows[@]}"; do
    for server in "${servers[@]}"; do
      run_wrk "${row%%:*}" "$server" "http://127.0.0.1:${PORTS[$server]}${row#*:}" "$CONNS" -H "Accept-Encoding: gzip"
    done
  done
done
echo
for row in "${rows[@]}"; do ratio "${row%%:*}"; done
