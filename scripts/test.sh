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
step "build (asan+ubsan)" build build-asan -DCMAKE_BUILD_TYPE=Debug -DTORII_SANITIZE=ON
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
step "tests (asan+ubsan)" run_ctest build-asan

fuzz() {
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -DTORII_FUZZ=ON -DTORII_TESTS=OFF -DTORII_SANITIZE=ON \
    -DCMAKE_BUILD_TYPE=Debug >/dev/null && cmake --build build-fuzz -j "$JOBS" || return 1
  local ok=0
  for t in build-fuzz/*_fuzz; do
    echo "--- $t for ${FUZZ_SECONDS}s"
    local name corpus seeds=()
    name=$(basename "$t")
    corpus="build-fuzz/corpus/$name"
    mkdir -p "$corpus"
    [ -d "fuzz/corpus/$name" ] && seeds=("fuzz/corpus/$name")
    # A finding prints its whole report (the stack and the input); a clean
    # run prints its last lines only.
    local log="build-fuzz/$name.log"
    if "$t" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 "$corpus" "${seeds[@]}" >"$log" 2>&1; then
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
