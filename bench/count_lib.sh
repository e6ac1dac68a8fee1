# Counting per request, shared by h1_count.sh and h2_count.sh: a server run
# bare or under callgrind, h2load driving it, and two runs of N1 and N2
# requests on the same connections turned into (count(N2) - count(N1)) /
# (N2 - N1), so start-up and connection set-up cancel out.
# Sourced after lib.sh; the script sets `work`, CLIENTS, N1, N2 and
# LOAD_ARGS (h2load's protocol options: (--h1) or ()). `server` names the
# server being counted (KEEP_STRACE files carry it).

server_pid=

# run_counted NAME PORT TOOL BIN ARGS... -> server_pid (the process under the tool)
run_counted() {
  local name=$1 port=$2 tool=$3 bin=$4
  shift 4
  if [ "$tool" = instructions ]; then
    taskset -c "$SERVER_CPU" valgrind --tool=callgrind ${CALLGRIND_OPTS:-} --callgrind-out-file="$work/cg.%p" \
      "$bin" "$@" 2> "$work/valgrind.log" &
  else
    taskset -c "$SERVER_CPU" "$bin" "$@" &
  fi
  server_pid=$!
  wait_port "$port" 60 || { echo "$name never opened port $port" >&2; exit 1; }  # callgrind starts slowly
}

stop_counted() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true; fi
  server_pid=
}

load() {  # load URL N [STREAMS] -> checks every request succeeded with a 2xx
  local out
  out=$(taskset -c "$CLIENT_CPU" h2load "${LOAD_ARGS[@]}" -c "$CLIENTS" -m "${3:-1}" -n "$2" "$1" 2>&1)
  if ! echo "$out" | grep -q "succeeded, 0 failed"; then
    echo "h2load did not complete: $(echo "$out" | grep '^requests:')" >&2
    exit 1
  fi
  if [ "$(echo "$out" | awk '/^status codes:/ { print $3 }')" != "$2" ]; then
    echo "h2load saw answers other than 2xx: $(echo "$out" | grep '^status codes:')" >&2
    exit 1
  fi
}

instructions_now() {  # the instructions callgrind counted since the last zeroing
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

count_instructions() {  # URL [STREAMS] -> instructions per request
  load "$1" 1000 "${2:-1}"  # warm-up: caches, pools, an upstream keep-alive pool
  callgrind_control -z "$server_pid" > /dev/null 2>&1
  load "$1" "$N1" "${2:-1}"
  local a b
  a=$(instructions_now)
  callgrind_control -z "$server_pid" > /dev/null 2>&1
  load "$1" "$N2" "${2:-1}"
  b=$(instructions_now)
  awk -v a="$a" -v b="$b" -v n1="$N1" -v n2="$N2" 'BEGIN { printf "%.0f", (b - a) / (n2 - n1) }'
}

syscalls_during() {  # URL N [STREAMS] -> system calls the server made during the run
  strace -c -f -p "$server_pid" -o "$work/strace.out" 2>/dev/null &
  local tracer=$!
  sleep 0.5
  load "$1" "$2" "${3:-1}"
  kill -INT "$tracer"
  wait "$tracer" 2>/dev/null || true
  [ -n "${KEEP_STRACE:-}" ] && cp "$work/strace.out" "$KEEP_STRACE.$server.$2"
  # The "total" line: % time, seconds, usecs/call, calls, [errors,] total.
  awk '$NF == "total" { print $4 }' "$work/strace.out"
}

count_syscalls() {  # URL [STREAMS] -> system calls per request
  load "$1" 1000 "${2:-1}"
  local a b
  a=$(syscalls_during "$1" "$N1" "${2:-1}")
  b=$(syscalls_during "$1" "$N2" "${2:-1}")
  awk -v a="$a" -v b="$b" -v n1="$N1" -v n2="$N2" 'BEGIN { printf "%.2f", (b - a) / (n2 - n1) }'
}
