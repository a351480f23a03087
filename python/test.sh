#!/usr/bin/env bash
# python/test.sh — builds the Python package (extension + modules) in build-python/ and runs its
# tests with Debian's Python (python3-torch, python3-pandas, python3-pytest). Extra arguments go
# to pytest (e.g. -k compare). The same tests run as `ctest -L python` in a build configured with
# -DPROFLINT_PYTHON=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PROFLINT_PYTHON:-/usr/bin/python3}
BUILD=${PROFLINT_PYTHON_BUILD_DIR:-build-python}
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPROFLINT_PYTHON=ON -DPROFLINT_BENCH=OFF \
    -DPROFLINT_TESTS=OFF -DPython3_EXECUTABLE="$PY" >/dev/null
fi
cmake --build "$BUILD" -j "$(nproc)" --target proflint proflint_python
PYTHONPATH="$PWD/$BUILD/python" PROFLINT_BINARY="${PROFLINT_BINARY:-$PWD/$BUILD/proflint}" \
  "$PY" -m pytest -q -p no:cacheprovider python/tests "$@"
