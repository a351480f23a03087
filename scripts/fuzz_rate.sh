#!/usr/bin/env bash
# scripts/fuzz_rate.sh TARGET [N1 N2] — executions per CPU-second of one fuzz target (docs/fuzzing.md).
#
# libFuzzer's exec/s is per wall second, which on a shared machine measures the neighbours. This
# runs the target twice from the same copy of its corpus (build-fuzz/corpus/TARGET), N1 and N2
# runs (default 300 and 900), and divides the extra runs by the extra CPU time (user + sys):
# the cost of a mutated input, without start-up and the replay of the corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
t=${1:?target}
n1=${2:-300}
n2=${3:-900}
# The same dictionaries and input sizes as scripts/fuzz.sh.
declare -A DICT=([kineto]=kineto [nsys]=nsys [store]=store [config]=toml [lua_rule]=lua [pipeline]=kineto)
declare -A MAX_LEN=([kineto]=65536 [nsys]=131072 [store]=262144 [config]=8192 [lua_rule]=8192 [pipeline]=65536)
COMMON_FLAGS=(-entropic_feature_frequency_threshold=16)
# FUZZ_FLAGS: more libFuzzer flags, e.g. the default "-entropic_feature_frequency_threshold=255" to
# compare with.
read -r -a extra <<<"${FUZZ_FLAGS:-}"
[ -x "$BUILD/fuzz_$t" ] || { echo "fuzz_rate.sh: $BUILD/fuzz_$t not built (run scripts/fuzz.sh --ci first)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cpu() {
  rm -rf "$work/corpus"
  cp -r "$BUILD/corpus/$t" "$work/corpus"
  ASAN_OPTIONS=detect_leaks=1 /usr/bin/time -f "%U %S" -o "$work/time" "$BUILD/fuzz_$t" -seed=7 -runs="$1" "${COMMON_FLAGS[@]}" "${extra[@]}" \
    -dict="tests/fuzz/${DICT[$t]}.dict" -max_len="${MAX_LEN[$t]}" -rss_limit_mb=4096 "$work/corpus" >/dev/null 2>&1
  awk '{print $1 + $2}' "$work/time"
}
a=$(cpu "$n1")
b=$(cpu "$n2")
python3 -c "print(f'fuzz_$t: {round(($n2 - $n1) / ($b - $a))} executions per CPU-second ($n1 runs {$a} s, $n2 runs {$b} s of CPU)')"
