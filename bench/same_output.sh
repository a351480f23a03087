#!/usr/bin/env bash
# bench/same_output.sh — proof that a speed change changed no output (not a test: run by hand).
#
#   bench/same_output.sh OLD_PROFLINT NEW_PROFLINT [FILE...]
#
# Runs `analyze FILE --format json` with both binaries on every file of ../shared/realdata (all
# formats, including the ones proflint refuses) and on each extra FILE, then compares the two
# reports byte for byte with cmp, and the exit codes and first line of stderr too. Prints one
# line per file and a total; exits 1 when anything differs.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
  echo "usage: $0 OLD_PROFLINT NEW_PROFLINT [FILE...]" >&2
  exit 2
fi
OLD=$1 NEW=$2
shift 2
REAL=../shared/realdata
mapfile -t FILES < <(find "$REAL" -type f ! -name README.md | sort)
FILES+=("$@")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
same=0 differ=0
for f in "${FILES[@]}"; do
  "$OLD" analyze "$f" --format json -o "$TMP/old.json" 2>"$TMP/old.err"
  old_rc=$?
  "$NEW" analyze "$f" --format json -o "$TMP/new.json" 2>"$TMP/new.err"
  new_rc=$?
  [ -e "$TMP/old.json" ] || : >"$TMP/old.json"
  [ -e "$TMP/new.json" ] || : >"$TMP/new.json"
  # stderr names the binary only through the input path; compare its first line (the verdict).
  if [ $old_rc -eq $new_rc ] && cmp -s "$TMP/old.json" "$TMP/new.json" &&
     [ "$(head -1 "$TMP/old.err")" = "$(head -1 "$TMP/new.err")" ]; then
    same=$((same + 1))
    printf "same    rc=%d %8d bytes  %s\n" $new_rc "$(stat -c %s "$TMP/new.json")" "$f"
  else
    differ=$((differ + 1))
    printf "DIFFER  rc=%d/%d  %s\n" $old_rc $new_rc "$f"
    cmp "$TMP/old.json" "$TMP/new.json" | head -1
  fi
  rm -f "$TMP/old.json" "$TMP/new.json"
done
echo "$same identical, $differ different (of ${#FILES[@]} inputs)"
[ $differ -eq 0 ]
