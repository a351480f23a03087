#!/usr/bin/env bash
# scripts/setup.sh — install what is missing (Debian packages), build proflint, and run it on
# the bundled sample profile. Works on a fresh Debian machine as root or with sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(build-essential cmake ninja-build pkg-config sqlite3 libsqlite3-dev libsqlitecpp-dev
  libtomlplusplus-dev liblua5.4-dev nlohmann-json3-dev librange-v3-dev libgtest-dev libgmock-dev
  libsimdjson-dev libcli11-dev libfmt-dev zlib1g-dev libisal-dev libzstd-dev libbenchmark-dev python3
  clang libclang-rt-dev  # clang + libFuzzer runtime: scripts/fuzz.sh
  python3-dev pybind11-dev python3-pandas python3-pytest)  # the Python package: python/test.sh

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Chromium opens the HTML report in the browser test (tests/html/check_html.py). Installed on its
# own so a machine without it still builds; the test then says it was skipped.
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  echo "setup: installing chromium (for the HTML report browser test)"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null; } ||
    echo "setup: chromium could not be installed: the HTML report browser test will be skipped"
fi
# Firefox (ESR) runs the same browser test over WebDriver BiDi (tests/html/bidi.py).
if ! command -v firefox-esr >/dev/null 2>&1 && ! command -v firefox >/dev/null 2>&1; then
  echo "setup: installing firefox-esr (for the HTML report browser test)"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends firefox-esr >/dev/null; } ||
    echo "setup: firefox-esr could not be installed: the HTML report is checked in Chromium only"
fi

BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"

if [ "${PROFLINT_SETUP_NO_RUN:-0}" != 1 ]; then
  echo
  echo "\$ proflint summary fixtures/sample_train.json.gz"
  "$BUILD_DIR/proflint" summary fixtures/sample_train.json.gz
fi
