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
# A/A: a second seed of the balanced 4-rank job, and a job whose only problem is one 30 ms pause on
# rank 3 in one step (rank 3 is also the rank most often last in this seed's balanced steps, so the
# detector has to look at every step to stay silent).
python3 scripts/gen_profile.py --job-ranks 4 --straggler-cause none --seed job4-balanced-2 --quiet -o fixtures/jobs/ddp4_balanced_seed2
python3 scripts/gen_profile.py --job-ranks 4 --straggler-rank 3 --straggler-cause outlier --seed job4-outlier --quiet \
  -o fixtures/jobs/ddp4_outlier_r3
# One Nsight Systems export per rank (`srun nsys profile …`): a 2-rank export split per process,
# ranks named by SLURM_PROCID/SLURM_NTASKS in each process's recorded environment (beside a planted
# secret no output may show), rank 1's clock 1.5 s behind (another host).
tmp=$(mktemp -d)
python3 scripts/gen_profile.py --format nsys --gpus 2 --steps 6 --model mlp --seed nsys-per-rank --quiet -o "$tmp/job.sqlite"
mkdir -p fixtures/jobs/nsys_per_rank
python3 scripts/genprof/nsys_split.py "$tmp/job.sqlite" fixtures/jobs/nsys_per_rank/rank --shift-ms 1500 --launcher slurm >/dev/null
rm -rf "$tmp"
# The same with CUDA_VISIBLE_DEVICES per rank (the usual srun --gpus-per-task / torchrun setup) on a
# node of 4 GPUs: every rank calls its GPU device 0, each export lists the node's 4 GPUs and its
# TARGET_INFO_CUDA_DEVICE row says which GPU the rank's device 0 is (rank r: GPU r). GPUs 2 and 3
# are used by no rank. GPU metrics of all 4 GPUs are sampled every 0.5 ms (each export has them all).
tmp=$(mktemp -d)
python3 scripts/gen_profile.py --format nsys --gpus 2 --visible-gpus 4 --device-ids per-process --steps 6 --model mlp \
  --seed nsys-per-rank-cvd --quiet -o "$tmp/job.sqlite"
python3 scripts/gen_profile.py gpu-metrics -q --period-us 500 "$tmp/job.sqlite"
mkdir -p fixtures/jobs/nsys_per_rank_cvd
python3 scripts/genprof/nsys_split.py "$tmp/job.sqlite" fixtures/jobs/nsys_per_rank_cvd/rank --shift-ms 800 --launcher torch >/dev/null
rm -rf "$tmp"
