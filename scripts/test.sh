#!/usr/bin/env bash
# Builds torii twice (optimised with warnings as errors, and with
# AddressSanitizer + UndefinedBehaviorSanitizer), runs every unit and
# integration test in both, then runs each fuzz target for a bounded time.
# Ends with one summary line: "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc)
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
passed=0
failed=0
failures=()

step() {  # step NAME COMMAND...
  local name=$1
  shift
  echo "==> $name"
  if "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    failures+=("$name")
  fi
}

build() {  # build DIR CMAKE-ARGS...
  local dir=$1
  shift
  cmake -S . -B "$dir" -DTORII_WERROR=ON "$@" >/dev/null && cmake --build "$dir" -j "$JOBS"
}

run_ctest() {
  (cd "$1" && ctest --output-on-failure -j "$JOBS" --timeout 600)
}

step "build (release)" build build-release -DCMAKE_BUILD_TYPE=Release
step "tests (release)" run_ctest build-release
step "build (asan+ubsan)" build build-asan -DCMAKE_BUILD_TYPE=Debug -DTORII_SANITIZE=ON -DTORII_PRECOMPILED_HEADERS=ON
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
step "tests (asan+ubsan)" run_ctest build-asan

fuzz_one() {  # fuzz_one TARGET: runs it for FUZZ_SECONDS, its log beside it
  local t=$1 name corpus seeds=()
  name=$(basename "$t")
  corpus="build-fuzz/corpus/$name"
  mkdir -p "$corpus"
  [ -d "fuzz/corpus/$name" ] && seeds=("fuzz/corpus/$name")
  "$t" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 "$corpus" "${seeds[@]}" >"build-fuzz/$name.log" 2>&1
  echo $? >"build-fuzz/$name.status"
}

fuzz() {
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -DTORII_FUZZ=ON -DTORII_TESTS=OFF -DTORII_SANITIZE=ON -DTORII_PRECOMPILED_HEADERS=ON \
    -DCMAKE_BUILD_TYPE=Debug >/dev/null && cmake --build build-fuzz -j "$JOBS" || return 1
  # Each target is one single-threaded process: JOBS of them at a time.
  local t running=0
  rm -f build-fuzz/*.status
  for t in build-fuzz/*_fuzz; do
    if [ "$running" -ge "$JOBS" ]; then
      wait -n
      running=$((running - 1))
    fi
    fuzz_one "$t" &
    running=$((running + 1))
  done
  wait
  local ok=0 name log
  for t in build-fuzz/*_fuzz; do
    name=$(basename "$t")
    log="build-fuzz/$name.log"
    echo "--- $t for ${FUZZ_SECONDS}s"
    # A finding prints its whole report (the stack and the input); a clean
    # run prints its last lines only.
    if [ "$(cat "build-fuzz/$name.status" 2>/dev/null)" = 0 ]; then
      tail -n 3 "$log"
    else
      ok=1
      echo "FINDING in $name:"
      grep -v '^#[0-9]' "$log" | tail -n 80
    fi
  done
  return $ok
}
step "fuzz (bounded)" fuzz

echo
for f in "${failures[@]}"; do echo "FAILED: $f"; done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
