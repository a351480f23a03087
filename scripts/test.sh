#!/usr/bin/env bash
# scripts/test.sh — everything scripts/setup.sh does, then all tests: the normal build, and
# once more under AddressSanitizer + UndefinedBehaviorSanitizer (PROFLINT_SANITIZE=0 skips it),
# then a short run of every libFuzzer target on its corpus (scripts/fuzz.sh --ci, ~4 min plus the
# clang build of the library and targets): PROFLINT_FUZZ=0 skips it. The Python package is built
# and tested after the normal build (python/test.sh): PROFLINT_PYTHON_TESTS=0 skips it.
# Tests on ../shared/realdata skip with a message when that folder is absent.
# The four build trees take ~4 GB together; free space is printed before each build, and
# PROFLINT_TEST_PRUNE=1 (.ci/run sets it) removes, once their tests have passed, build/'s object
# files and static libraries (its programs stay), build-python/ and build-sanitize/, so a machine
# with little disk holds one tree's objects at a time.
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
echo "== tests (RelWithDebInfo) =="
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 900
prune_objects build

if [ "${PROFLINT_PYTHON_TESTS:-1}" != 0 ]; then
  echo
  echo "== Python package (python/test.sh: build-python/, pytest with /usr/bin/python3) =="
  disk_note "before the Python build"
  bash python/test.sh
  prune "${PROFLINT_PYTHON_BUILD_DIR:-build-python}"
fi

if [ "${PROFLINT_SANITIZE:-1}" != 0 ]; then
  echo
  echo "== tests under ASan + UBSan =="
  disk_note "before the sanitizer build"
  # Line tables only (-g1): a sanitizer report still names every frame's file and line, the code is
  # the same, and the tree is a fifth smaller (the largest of the four).
  cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-g1" "-DCMAKE_C_FLAGS_DEBUG=-g1" \
    -DPROFLINT_SANITIZE=ON -DPROFLINT_BENCH=OFF >/dev/null
  cmake --build build-sanitize -j "$(nproc)"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-sanitize --output-on-failure -j "$(nproc)" --timeout 1800
  prune build-sanitize
fi

if [ "${PROFLINT_FUZZ:-1}" != 0 ]; then
  echo
  echo "== fuzz targets, ${PROFLINT_FUZZ_SECONDS:-35} s each (scripts/fuzz.sh --ci) =="
  disk_note "before the fuzz build"
  bash scripts/fuzz.sh --ci
fi
