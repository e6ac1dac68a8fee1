# Shared helpers for the benchmarks: start a server pinned to a CPU, read
# its CPU time, run wrk or h2load pinned to another CPU, print one
# comparable row.
# Sourced by the scenario scripts.

TORII_BIN=${TORII_BIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/torii}
if [ ! -x "$TORII_BIN" ]; then
  echo "no torii binary at $TORII_BIN: build it first or set TORII_BIN" >&2
  exit 1
fi
NGINX_BIN=${NGINX_BIN:-/usr/sbin/nginx}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
DURATION=${DURATION:-10}

ROUNDS=${ROUNDS:-3}

# start_server NAME CONF PREFIX -> sets SERVER_PID, and PIDS[NAME]
declare -A PIDS
start_server() {
  local name=$1 conf=$2 prefix=$3
  mkdir -p "$prefix/logs"
  if [ "$name" = nginx ]; then
    taskset -c "$SERVER_CPU" "$NGINX_BIN" -p "$prefix" -c "$conf" -g 'daemon off; master_process off;' &
  else
    taskset -c "$SERVER_CPU" "$TORII_BIN" -p "$prefix" -c "$conf" &
  fi
  SERVER_PID=$!
  PIDS[$name]=$SERVER_PID
}

# Starts nginx (when installed) and torii, each with the config the
# script's write_conf NAME PORT writes into $work, on a free port.
# Sets `servers` (names, nginx first) and PORTS[NAME].
declare -A PORTS
servers=()
start_servers() {
  servers=(torii)
  [ -x "$NGINX_BIN" ] && servers=(nginx torii)
  for server in "${servers[@]}"; do
    PORTS[$server]=$(free_port)
    write_conf "$server" "${PORTS[$server]}"
    start_server "$server" "$work/$server.conf" "$work"
    wait_port "${PORTS[$server]}"
  done
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

stop_servers() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
  PIDS=()
}

wait_port() {  # wait_port PORT [SECONDS (default 5)]
  local tries=$(( ${2:-5} * 20 ))
  for _ in $(seq 1 "$tries"); do
    if (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null; then return 0; fi
    sleep 0.05
  done
  echo "port $1 never opened" >&2
  return 1
}

# One nginx backend pinned to CLIENT_CPU under DIR, its server block made
# of the directives given (a fixed answer, or a root to serve). Sets
# BACKEND_PORT and adds its pid to `backend_pids`; stop_backends stops them.
backend_pids=()
start_backend() {  # start_backend DIR 'SERVER DIRECTIVES'
  local dir=$1 directives=$2
  BACKEND_PORT=$(free_port)
  mkdir -p "$dir/logs"
  cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
pid $dir/logs/nginx.pid;
error_log $dir/logs/error.log crit;
events { worker_connections 8192; }
http {
    access_log off;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$BACKEND_PORT;
        $directives
    }
}
CONF
  taskset -c "$CLIENT_CPU" "$NGINX_BIN" -p "$dir" -c "$dir/nginx.conf" -g 'daemon off; master_process off;' &
  backend_pids+=($!)
  wait_port "$BACKEND_PORT"
}

# Four of them answering a small JSON body, like seed 003's whoami
# containers, under DIR/b1..b4; `backends` holds their ports.
backends=()
start_whoami_backends() {  # start_whoami_backends DIR
  local i
  for i in 1 2 3 4; do
    start_backend "$1/b$i" "location / { default_type application/json; return 200 '{\"hostname\":\"whoami-$i\",\"ip\":\"127.0.0.1\"}\\n'; }"
    backends+=("$BACKEND_PORT")
  done
}

# Seed 003's proxy config (its whoami.conf, addresses changed) in front of
# the `backends` started by start_whoami_backends, as DIR/NAME.conf.
write_whoami_proxy_conf() {  # write_whoami_proxy_conf DIR NAME PORT
  local dir=$1 name=$2 port=$3
  cat > "$dir/$name.conf" <<CONF
worker_processes 1;
worker_rlimit_nofile 65536;
pid $dir/logs/$name.pid;
error_log $dir/logs/$name-error.log crit;
events { worker_connections 16384; }
http {
    keepalive_requests 1000000;
    upstream whoami { server 127.0.0.1:${backends[0]}; server 127.0.0.1:${backends[1]}; server 127.0.0.1:${backends[2]}; server 127.0.0.1:${backends[3]}; keepalive 300; }
    server { listen 127.0.0.1:$port; server_name benchmark.whoami; access_log off; error_log /dev/null crit; location / { proxy_pass http://whoami; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for; proxy_set_header X-Forwarded-Host \$host; proxy_set_header X-Forwarded-Port 80; proxy_set_header X-Forwarded-Proto \$scheme; proxy_set_header X-Forwarded-Server \$server_addr; proxy_set_header X-Real-IP \$remote_addr; } }
}
CONF
}

stop_backends() {
  local pid
  for pid in "${backend_pids[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
  backend_pids=()
}

# CPU seconds (user+system) used so far by PID, all threads.
cpu_seconds() {
  awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"
}

# run_wrk LABEL SERVER URL CONNECTIONS [wrk args...] -> prints a row
run_wrk() {
  local label=$1 server=$2 url=$3 conns=$4
  shift 4
  local pid=${PIDS[$server]}
  local before after out reqs rps p50 p99 cpu
  before=$(cpu_seconds "$pid")
  out=$(taskset -c "$CLIENT_CPU" wrk -t1 -c"$conns" -d"${DURATION}s" --latency "$@" "$url" 2>&1)
  after=$(cpu_seconds "$pid")
  reqs=$(echo "$out" | awk '/requests in/ { print $1 }')
  rps=$(echo "$out" | awk '/Requests\/sec/ { print $2 }')
  p50=$(echo "$out" | awk '$1 == "50%" { print $2 }')
  p99=$(echo "$out" | awk '$1 == "99%" { print $2 }')
  errors=$(echo "$out" | awk '/Socket errors|Non-2xx/ { print }' | tr '\n' ' ')
  cpu=$(awk -v a="$after" -v b="$before" -v n="$reqs" 'BEGIN { if (n > 0) printf "%.2f", (a - b) * 1e6 / n; else print "n/a" }')
  printf '%-28s %-6s %10s req/s  p50 %8s  p99 %8s  %8s us CPU/req  %s\n' "$label" "$server" "$rps" "$p50" "$p99" "$cpu" "$errors"
  echo "$label $server $rps $cpu" >> "$RESULTS"
}

# run_h2load LABEL SERVER URL [h2load args...] -> prints a row; uses $work,
# $CLIENTS and $RESULTS from the calling script. The server's CPU is read
# after h2load's warm-up second (the handshakes and the first requests are
# not in h2load's count) and over the measured seconds only; "busy" is the
# share of one CPU the server used: below ~95% the load tool, not the
# server, set the pace.
run_h2load() {
  local label=$1 server=$2 url=$3
  shift 3
  taskset -c "$CLIENT_CPU" h2load -c "$CLIENTS" -D "$DURATION" --warm-up-time=1 "$@" "$url" > "$work/h2load.out" 2>&1 &
  measure_until_done "${PIDS[$server]}" $!
  local out failed rps
  out=$(cat "$work/h2load.out")
  failed=$(echo "$out" | awk '/^requests:/ { print $10 }')
  rps=$(echo "$out" | awk '/^finished in/ { gsub(",", "", $4); print $4 }')
  report_row "$label" "$server" "${rps:-0}" "${failed:-?}"
}

# run_torii_load LABEL SERVER URL [torii-load args...]: as run_h2load, with
# build/torii-load, whose open loop (--rate) spaces the requests evenly
# over time, where h2load's --rps fires every client's timer together
# (a burst of CLIENTS requests at each tick).
run_torii_load() {
  local label=$1 server=$2 url=$3
  shift 3
  local load_bin=${LOAD_BIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/torii-load}
  # It runs 1.5 s longer: the first 1.5 s (the handshakes) are left out, as run_h2load's warm-up.
  taskset -c "$CLIENT_CPU" "$load_bin" -c "$CLIENTS" -d "$(awk -v d="$DURATION" 'BEGIN { print d + 1.5 }')" \
    --json "$work/load.json" "$@" "$url" > "$work/load.out" 2>&1 &
  measure_until_done "${PIDS[$server]}" $!
  local rps failed
  read -r rps failed < <(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]));
print("%.2f %d" % (s["http_reqs"]["rate"], s["http_req_failed"]["count"]))' "$work/load.json" 2>/dev/null || echo "0 ?")
  report_row "$label" "$server" "$rps" "$failed"
}

# measure_until_done PID LOADER_PID: from 1.5 s after the load tool started
# (its warm-up) until it ends, the server's CPU seconds and the wall clock:
# sets CPU_BEFORE, CPU_AFTER, WALL_T0, WALL_T1.
measure_until_done() {
  sleep 1.5
  CPU_BEFORE=$(cpu_seconds "$1")
  WALL_T0=$(date +%s.%N)
  wait "$2" || true
  CPU_AFTER=$(cpu_seconds "$1")
  WALL_T1=$(date +%s.%N)
}

# report_row LABEL SERVER RPS FAILED: prints the row measure_until_done
# timed and adds it to $RESULTS.
report_row() {
  local label=$1 server=$2 rps=$3 failed=$4 cpu busy
  read -r cpu busy < <(awk -v a="$CPU_AFTER" -v b="$CPU_BEFORE" -v r="${rps:-0}" -v t0="$WALL_T0" -v t1="$WALL_T1" \
    'BEGIN { if (r > 0) printf "%.2f %.0f\n", (a - b) * 1e6 / (r * (t1 - t0)), (a - b) * 100 / (t1 - t0); else print "n/a n/a" }')
  printf '%-22s %-6s %10s req/s  %8s us CPU/req  busy %3s%%  failed %s\n' "$label" "$server" "${rps:-0}" "$cpu" "$busy" "$failed"
  echo "$label $server ${rps:-0} $cpu" >> "$RESULTS"
}

# h2load's --rps is per client: RATE (req/s in all) shared by CLIENTS.
rps_per_client() {
  awk -v r="$RATE" -v c="$CLIENTS" 'BEGIN { v = r / c; if (v < 1) v = 1; printf "%g", v }'
}

# median COLUMN LABEL SERVER: the median over the rounds
median() {
  awk -v l="$2" -v s="$3" -v c="$1" '$1 == l && $2 == s { print $c }' "$RESULTS" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

# ratio LABEL: torii vs nginx, medians over the rounds
ratio() {
  local tr nr tc nc
  tr=$(median 3 "$1" torii); nr=$(median 3 "$1" nginx)
  tc=$(median 4 "$1" torii); nc=$(median 4 "$1" nginx)
  awk -v l="$1" -v tr="$tr" -v nr="$nr" -v tc="$tc" -v nc="$nc" 'BEGIN {
    if (nr > 0 && nc > 0)
      printf "%-20s median req/s torii %s nginx %s (x%.2f); CPU/req torii %s us nginx %s us (x%.2f)\n",
        l, tr, nr, tr / nr, tc, nc, tc / nc }'
}
