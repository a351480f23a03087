#!/usr/bin/env bash
# scripts/test.sh — everything scripts/setup.sh does, then all tests, in two build trees:
#  1. build/ (setup.sh's release tree): the CLI, the C++ tests and the Python package (the extension
#     module is built in the same tree where pybind11 is installed; ctest runs its pytest suite as
#     the test python_package): PROFLINT_PYTHON_TESTS=0 leaves the Python tests out.
#  2. build-sanitize/: clang, AddressSanitizer + UndefinedBehaviorSanitizer and libFuzzer's coverage,
#     the engine at -O1, the tests at -O0: the C++ tests run again under the sanitizers
#     (PROFLINT_SANITIZE=0 skips them), then every libFuzzer target briefly on its corpus
#     (scripts/fuzz.sh --ci in the same tree, ~4 min; PROFLINT_FUZZ=0 skips it). One instrumented
#     tree serves both: it used to be a gcc sanitizer tree and a clang fuzz tree, each compiling the
#     whole engine (docs/testing.md has the figures).
# Tests on ../shared/realdata skip with a message when that folder is absent.
# Free space is printed before each build, and PROFLINT_TEST_PRUNE=1 (.ci/run sets it) removes,
# once their tests have passed, build/'s object files and static libraries (its programs stay) and
# build-sanitize/, so a machine with little disk holds one tree's objects at a time.
set -euo pipefail
cd "$(dirname "$0")/.."

disk_note() {
  echo "test.sh: $(df -Ph . | awk 'NR==2 {print $4}') free where the builds go, $(df -Ph "${TMPDIR:-/tmp}" | awk 'NR==2 {print $4}') in ${TMPDIR:-/tmp} ($1)"
}
prune() {
  if [ "${PROFLINT_TEST_PRUNE:-0}" = 1 ]; then
    rm -rf "$1"
    disk_note "after removing $1"
  fi
}
prune_objects() {  # a tree's object files and static libraries; its programs stay
  if [ "${PROFLINT_TEST_PRUNE:-0}" = 1 ]; then
    find "$1" \( -name '*.o' -o -name '*.a' \) -type f -delete
    disk_note "after removing $1's object files"
  fi
}

disk_note "before the release build"
bash scripts/setup.sh
echo
ctest_args=()
if [ "${PROFLINT_PYTHON_TESTS:-1}" = 0 ]; then
  ctest_args+=(-LE python)
elif ! ctest --test-dir build -N -L python | grep -q 'Total Tests: [1-9]'; then
  echo "test.sh: build/ has no Python package: python3-dev or pybind11-dev missing, or a tree configured with" \
    "PROFLINT_PYTHON=OFF (cmake -B build -DPROFLINT_PYTHON=AUTO); PROFLINT_PYTHON_TESTS=0 runs without it" >&2
  exit 1
fi
echo "== tests (RelWithDebInfo; the Python package's tests are the test python_package) =="
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 900 "${ctest_args[@]}"
prune_objects build

if [ "${PROFLINT_SANITIZE:-1}" != 0 ] || [ "${PROFLINT_FUZZ:-1}" != 0 ]; then
  echo
  echo "== the instrumented tree (clang; ASan + UBSan + libFuzzer coverage): build-sanitize/ =="
  disk_note "before the instrumented build"
  command -v clang++ >/dev/null || { echo "test.sh: clang++ not found (scripts/setup.sh installs clang)" >&2; exit 1; }
  # A tree left by the test command before 27 November 2026 was a gcc sanitizer tree: CMake cannot
  # change a tree's compiler, so it is made anew.
  if [ -f build-sanitize/CMakeCache.txt ] && ! grep -q '^PROFLINT_FUZZ:BOOL=ON$' build-sanitize/CMakeCache.txt; then
    rm -rf build-sanitize
  fi
  # The engine at -O1 with line tables (what the fuzz targets want; a sanitizer report still names
  # every frame's file and line), assertions on; the test code at -O0 (PROFLINT_TEST_FLAGS): it only
  # drives the engine and compiles in half the time.
  cmake -S . -B build-sanitize -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" -DPROFLINT_FUZZ=ON -DPROFLINT_TESTS=ON \
    -DPROFLINT_TEST_FLAGS=-O0 -DPROFLINT_BENCH=OFF -DPROFLINT_PYTHON=OFF >/dev/null
  cmake --build build-sanitize -j "$(nproc)"
  if [ "${PROFLINT_SANITIZE:-1}" != 0 ]; then
    echo
    echo "== tests under ASan + UBSan =="
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir build-sanitize --output-on-failure -j "$(nproc)" --timeout 1800
  fi
  if [ "${PROFLINT_FUZZ:-1}" != 0 ]; then
    echo
    echo "== fuzz targets, ${PROFLINT_FUZZ_SECONDS:-35} s each (scripts/fuzz.sh --ci in build-sanitize/) =="
    FUZZ_BUILD_DIR=build-sanitize bash scripts/fuzz.sh --ci
  fi
  prune build-sanitize
fi
