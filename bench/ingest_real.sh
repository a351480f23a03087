#!/usr/bin/env bash
# bench/ingest_real.sh — ingest speed and peak memory on real profiles (not a test: run by hand).
#
#   bench/ingest_real.sh [FILE...]     (default: the largest files of ../shared/realdata)
#
# For each file: events read, import and derive time (PROFLINT_TIMINGS), events/s of the import
# stage, end-to-end seconds and peak RSS of `proflint summary`, and the read-only floor
# (zcat for gzip JSON, cat for plain JSON, a full scan of the main tables for nsys SQLite,
# in Python's sqlite3, so it is a generous floor).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${PROFLINT:-build/proflint}
REAL=../shared/realdata
if [ $# -eq 0 ]; then
  set -- $REAL/kineto/hta_ddp_v100_rank1.json.gz $REAL/kineto/param_resnet.json.gz \
         $REAL/kineto/hta_a100_16rank_rank0.json.gz $REAL/kineto/tb_resnet50_v100_workers0.pt.trace.json.gz \
         $REAL/nsys/nsys2026_h100_2gpu_1s.sqlite $REAL/nsys/nsys2022_saxpy_mpi_all_tables.sqlite
fi
printf "%-44s %9s %9s %9s %11s %9s %9s %9s\n" file events import_s derive_s import_ev/s total_s rss_MiB floor_s
for f in "$@"; do
  [ -f "$f" ] || { echo "skip $f (absent)"; continue; }
  log=$(mktemp)
  /usr/bin/time -f "TIME %e %M" env PROFLINT_TIMINGS=1 "$BIN" summary --format json "$f" -o /tmp/proflint_bench_summary.json 2>"$log"
  events=$(python3 -c "import json;print(sum(t['event_count'] for t in json.load(open('/tmp/proflint_bench_summary.json'))['traces']))")
  import_ms=$(awk '$1=="timing" && $2=="import"{print $3}' "$log")
  derive_ms=$(awk '$1=="timing" && $2=="derive"{print $3}' "$log")
  read -r total rss_kb < <(awk '/^TIME/{print $2, $3}' "$log")
  case "$f" in
    *.gz) floor=$( { /usr/bin/time -f "%e" zcat "$f" >/dev/null; } 2>&1 ) ;;
    *.sqlite) floor=$(python3 - "$f" <<'PY'
import sqlite3, sys, time
t0 = time.perf_counter()
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMCPY",
          "CUPTI_ACTIVITY_KIND_MEMSET", "NVTX_EVENTS", "StringIds"):
    if t in names:
        for _ in db.execute(f"SELECT * FROM {t}"):
            pass
print(f"{time.perf_counter() - t0:.2f}")
PY
) ;;
    *) floor=$( { /usr/bin/time -f "%e" cat "$f" >/dev/null; } 2>&1 ) ;;
  esac
  rate=$(python3 -c "print(int($events/($import_ms/1000)) if $import_ms>0 else 0)")
  printf "%-44s %9s %9.3f %9.3f %11s %9s %9.1f %9s\n" "$(basename "$f")" "$events" "$(echo "$import_ms/1000" | bc -l)" \
    "$(echo "$derive_ms/1000" | bc -l)" "$rate" "$total" "$(echo "$rss_kb/1024" | bc -l)" "$floor"
  rm -f "$log"
done
