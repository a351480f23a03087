#!/bin/sh
# Regenerates the sampling-log fixtures under fixtures/samples/ (docs/fixtures.md, docs/samples.md).
# The generator prints each job's truth (stalls, per-GPU mean activity, peak memory) on stderr.
set -e
cd "$(dirname "$0")/../.."
g="python3 scripts/gen_profile.py samples"
d=fixtures/samples
mkdir -p $d
# 2 A100s, 1 s samples, two 4 s stalls of both GPUs inside a 50 s active window, 10 GiB of 80 used.
$g nvsmi-csv --seed stalls -o $d/nvsmi_2gpu_stalls.csv
# The same job without stalls, sampled every 100 ms with no index column, nounits, and bursts that
# straddle a millisecond boundary (GPUs by position).
$g nvsmi-csv --seed busy --stall-every 0 --interval 0.1 --columns timestamp,utilization.gpu,memory.used,memory.total,power.draw \
  --nounits --split-bursts -o $d/nvsmi_2gpu_busy_noindex_nounits.csv
# One GPU, fields in another order, [N/A] / [Not Supported] cells, gzip.
$g nvsmi-csv --seed na --gpus 1 --columns index,power.draw,fan.speed,timestamp,utilization.gpu,memory.used,pstate,clocks.sm \
  --na fan.speed -o $d/nvsmi_1gpu_na_cells.csv.gz
$g dmon --seed dmon --timestamps -o $d/dmon_2gpu_dt.txt
$g dmon --seed dmon-nt --gpus 1 --duration 20 -o $d/dmon_1gpu_no_time.txt
$g pmon --seed pmon --timestamps -o $d/pmon_2gpu_dt.txt
$g dcgmi --seed dcgmi -o $d/dcgmi_2gpu.txt
$g memory-timeline --seed memtl -o $d/memory_timeline.raw.json.gz
# A small bf16 MLP trace on the epoch clock (integer-microsecond timestamps, as older Kineto
# traces are), and a log of the same job printed in local time UTC+02:00, starting 5 s before the
# trace's first event: analysed beside the trace it is shifted by -7200 s.
python3 scripts/gen_profile.py --format kineto-gz --model mlp --batch 64 --steps 3 --seed 17 \
  --gpu-name "NVIDIA A100-SXM4-80GB" --cc 8.0 --precision bf16 --int-us --quiet -o $d/epoch_mlp_trace.json.gz
$g nvsmi-csv --seed around --gpus 1 --duration 20 --interval 0.5 --lead-in 1 --tail 1 --stall-every 0 \
  --around $d/epoch_mlp_trace.json.gz --before 5 --utc-offset 2 -o $d/nvsmi_epoch_mlp_utc+2.csv
# Clocks: every 3rd running sample power-capped (reason 0x4, 1200 of 1410 MHz, 400 of 400 W).
$g nvsmi-csv --seed clocks --gpus 1 --stall-every 0 --throttle-every 3 \
  --columns timestamp,index,utilization.gpu,clocks.sm,clocks.max.sm,power.draw,power.limit,clocks_throttle_reasons.active \
  -o $d/nvsmi_1gpu_power_capped.csv
# DCGM profiling fields: SMs busy, Tensor Cores at 2% of SM active, DRAM at 80% of the activity.
$g dcgmi --seed hw --stall-every 0 --tensor-share 0.02 --dram-share 0.95 -o $d/dcgmi_2gpu_no_tensor_dram_bound.txt
# The same GPU never capped, at a lower load (power stays under 97% of the limit).
$g nvsmi-csv --seed clocks-ok --gpus 1 --stall-every 0 --activity 70 \
  --columns timestamp,index,utilization.gpu,clocks.sm,clocks.max.sm,power.draw,power.limit,clocks_throttle_reasons.active \
  -o $d/nvsmi_1gpu_full_clocks.csv
# A Clara-style operator log (roi-generator of the bone pipeline) and its spec: reading the input
# (two lines of the repeated keyword Readinginput, summed) takes most of the operator's time.
$g operator-log --seed oplog --spec-out $d/roi_generator_spec.yaml -o $d/roi_generator_operator.log
# The same operator with a fast input read: the GPU stages dominate.
$g operator-log --seed oplog-fast --read-ms 150 -o $d/roi_generator_fast_read.log
