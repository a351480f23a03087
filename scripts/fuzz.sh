#!/usr/bin/env bash
# scripts/fuzz.sh — build the libFuzzer targets of tests/fuzz/ (clang, ASan + UBSan) in build-fuzz/
# and run them (docs/fuzzing.md).
#
#   scripts/fuzz.sh [TARGET|all] [SECONDS]   run one target (or each in turn) for SECONDS (default 3600)
#   scripts/fuzz.sh --ci                     CI mode: each target PROFLINT_FUZZ_SECONDS (default 35) s
#   scripts/fuzz.sh --list                   the targets
#
# Inputs that grow coverage are kept in build-fuzz/corpus/TARGET (reused by the next run); seeds
# are derived from fixtures/ by scripts/fuzz_seeds.py into build-fuzz/seeds/TARGET. A crash, leak,
# timeout or sanitizer report stops the target, leaves the input in build-fuzz/artifacts/TARGET/
# and makes the script exit 1. Reproduce one with: build-fuzz/fuzz_TARGET FILE
# Environment: FUZZ_BUILD_DIR (build-fuzz), FUZZ_WORKERS (1: parallel libFuzzer workers per target
# in long runs), PROFLINT_FUZZ_STRICT=1 (any exception other than proflint::Error is a finding).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
ALL_TARGETS=(kineto nsys store config lua_rule pipeline)

# Per target: dictionary, largest input libFuzzer may build (bytes), seconds before an input
# counts as a hang.
#  * pipeline ran with 12 KiB while long kernel names overflowed the stack in the Tensor Core
#    regex (issue 20 defect 3); the matcher that replaced it needs no such limit.
declare -A DICT=([kineto]=kineto [nsys]=nsys [store]=store [config]=toml [lua_rule]=lua [pipeline]=kineto)
declare -A MAX_LEN=([kineto]=65536 [nsys]=131072 [store]=262144 [config]=8192 [lua_rule]=8192 [pipeline]=65536)
declare -A TIMEOUT=([kineto]=10 [nsys]=10 [store]=20 [config]=5 [lua_rule]=10 [pipeline]=30)
# Flags of every run. libFuzzer 14's entropic schedule looks each feature of an input up in its
# list of rare features, which grows to thousands while no feature has been seen more than
# -entropic_feature_frequency_threshold times (255): the importers' ~17,000 features per input
# made that 46% of the kineto target's time. At 16 the list is trimmed to its 100 rarest much
# earlier (docs/fuzzing.md, "Speed"). scripts/fuzz_rate.sh uses the same.
COMMON_FLAGS=(-entropic_feature_frequency_threshold=16)

ci=0
case "${1:-all}" in
  --list) printf '%s\n' "${ALL_TARGETS[@]}"; exit 0 ;;
  --ci) ci=1; targets=("${ALL_TARGETS[@]}"); seconds=${PROFLINT_FUZZ_SECONDS:-35} ;;
  all) targets=("${ALL_TARGETS[@]}"); seconds=${2:-3600} ;;
  *)
    targets=("${1#fuzz_}")
    seconds=${2:-3600}
    [ -n "${DICT[${targets[0]}]:-}" ] || { echo "fuzz.sh: unknown target '$1' (targets: ${ALL_TARGETS[*]})" >&2; exit 2; }
    ;;
esac

command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found: run scripts/setup.sh (installs clang, libclang-rt-dev)" >&2; exit 2; }
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
# -O1 with line tables only: symbolized reports at a fraction of the compile time of full -g.
# A tree that is already configured for fuzzing is used as it is: scripts/test.sh's instrumented
# tree (build-sanitize/, with the tests too) is one.
if ! grep -q '^PROFLINT_FUZZ:BOOL=ON$' "$BUILD/CMakeCache.txt" 2>/dev/null; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" "${launcher[@]}" \
    -DPROFLINT_FUZZ=ON -DPROFLINT_TESTS=OFF -DPROFLINT_BENCH=OFF -DPROFLINT_PYTHON=OFF >/dev/null
fi
cmake --build "$BUILD" -j "${FUZZ_BUILD_JOBS:-$(nproc)}" --target fuzz_targets proflint

# Seeds: rebuilt when missing or older than their generator.
if [ ! -f "$BUILD/seeds/.done" ] || [ scripts/fuzz_seeds.py -nt "$BUILD/seeds/.done" ]; then
  rm -rf "$BUILD/seeds"
  ASAN_OPTIONS=detect_leaks=0 python3 scripts/fuzz_seeds.py "$BUILD/seeds" "$BUILD/proflint"
  touch "$BUILD/seeds/.done"
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
summary=()
for t in "${targets[@]}"; do
  corpus="$BUILD/corpus/$t"
  artifacts="$BUILD/artifacts/$t"
  log="$BUILD/logs/$t.log"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  args=("${COMMON_FLAGS[@]}" -dict="tests/fuzz/${DICT[$t]}.dict" -max_len="${MAX_LEN[$t]}" -timeout="${TIMEOUT[$t]}"
    -rss_limit_mb=4096 -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$artifacts/")
  workers=${FUZZ_WORKERS:-1}
  [ "$ci" = 0 ] && [ "$workers" -gt 1 ] && args+=(-fork="$workers")
  echo "== fuzz_$t: ${seconds}s (log $log)"
  status=0
  dirs=("$corpus" "$BUILD/seeds/$t")
  [ -d "tests/fuzz/regressions/$t" ] && dirs+=("tests/fuzz/regressions/$t")  # inputs that once broke proflint
  "$BUILD/fuzz_$t" "${args[@]}" "${dirs[@]}" >"$log" 2>&1 || status=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{s += $2} END {print s + 0}')
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | awk '{print $2}' | tail -1)
  line="fuzz_$t: $execs executions, ${rate:-?} exec/s, $(find "$corpus" -type f | wc -l) corpus inputs"
  if [ "$status" != 0 ]; then
    line+=", FAILED (exit $status)"
    failed+=("$t")
    grep -E 'ERROR:|SUMMARY:|runtime error|Test unit written|fuzz:' "$log" | head -20 >&2 || true
  fi
  echo "$line"
  summary+=("$line")
done
echo
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: failed: ${failed[*]} (inputs in $BUILD/artifacts/, logs in $BUILD/logs/)" >&2
  exit 1
fi
