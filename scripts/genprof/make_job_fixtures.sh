#!/bin/sh
# Regenerates the multi-rank job fixtures under fixtures/jobs/ (docs/fixtures.md describes them).
set -e
cd "$(dirname "$0")/../.."
for n in 4 8; do
  s=$(( n == 4 ? 2 : 5 ))
  python3 scripts/gen_profile.py --job-ranks $n --straggler-cause none --seed job$n-balanced --quiet -o fixtures/jobs/ddp${n}_balanced
  for c in compute dataloader optimizer; do
    python3 scripts/gen_profile.py --job-ranks $n --straggler-rank $s --straggler-cause $c --seed job$n-$c --quiet \
      -o fixtures/jobs/ddp${n}_${c}_r$s
  done
done
