#!/usr/bin/env python3
"""Synthetic GPU deep-learning profile generator for proflint tests, fixtures and benchmarks.

Writes a realistic PyTorch training job (ResNet-style CNN or a tiny MLP; DataLoader, H2D copy,
forward on the main thread, autograd backward on a second thread, DDP all-reduce, SGD step) as
  * Kineto / PyTorch-profiler JSON (plain or gzip), one event per line, streamed;
  * the Jan-2021 bare-array Kineto flavour (--format kineto-legacy);
  * an Nsight Systems 2026.2 SQLite export (--format nsys).
Output is a pure function of the arguments (seeded RNG, gzip mtime=0): same args -> same bytes.

Planted problems (--plant a,b,...): fp32_gemm, dataloader_gap, pageable_memcpy, host_sync,
small_kernels, nccl_unbucketed, shape_not_multiple_of_8.  See docs/fixtures.md.

With --job-ranks N it writes a whole DDP job instead: one Kineto trace per rank in the directory -o,
clocks skewed per rank, one rank made late (genprof/job.py).

Examples:
  gen_profile.py --format kineto-gz --events 100000 --seed 1 -o /tmp/t.json.gz
  gen_profile.py --job-ranks 4 --straggler-rank 2 --straggler-cause dataloader -o /tmp/job4
  gen_profile.py --format nsys --events 1000000 --gpus 2 --plant host_sync -o /tmp/t.sqlite
"""

import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from genprof import hw                                   # noqa: E402
from genprof.model import Model                          # noqa: E402
from genprof.sim import (Sim, OP, RT, KER, CPY, SET, SYNC, MEM, FLOW, GANN, NVTX, RT_API,  # noqa: E402
                         COMPUTE_STREAM, NCCL_STREAM)

PLANTS = ("fp32_gemm", "dataloader_gap", "pageable_memcpy", "host_sync", "small_kernels",
          "nccl_unbucketed", "shape_not_multiple_of_8")
ALIASES = {"nccl": "nccl_unbucketed", "shape8": "shape_not_multiple_of_8", "fp32": "fp32_gemm",
           "pageable": "pageable_memcpy", "dataloader": "dataloader_gap", "sync": "host_sync"}


class Cfg:
    pass


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--format", choices=["kineto", "kineto-gz", "kineto-legacy", "nsys"],
                   help="output format (default: from the -o extension)")
    p.add_argument("--events", type=int, default=None, help="approximate total number of events (default 20000)")
    p.add_argument("--steps", type=int, default=None, help="training iterations (default: from --events)")
    p.add_argument("--seed", default="0", help="RNG seed (any string)")
    p.add_argument("--gpus", type=int, default=1, help="world size; >1 adds DDP + NCCL all-reduce")
    p.add_argument("--rank", type=int, default=0, help="rank written by the Kineto formats (nsys writes every rank)")
    p.add_argument("--device-ids", default="global", choices=["global", "per-process"],
                   help="nsys with --gpus >1: 'global' (each process sees every GPU, rank r uses device r) or "
                        "'per-process' (CUDA_VISIBLE_DEVICES per process: every process calls its GPU device 0; "
                        "TARGET_INFO_CUDA_DEVICE records which physical GPU each process's id is)")
    p.add_argument("--visible-gpus", type=int, default=0, help="GPUs listed in deviceProperties/TARGET_INFO_GPU")
    p.add_argument("--plant", default="", help="comma-separated problems to plant: " + ", ".join(PLANTS))
    p.add_argument("--gpu-name", default="NVIDIA A100-SXM4-80GB")
    p.add_argument("--cc", default=None, help="compute capability override, e.g. 8.0")
    p.add_argument("--precision", default="auto", choices=["auto", "fp32", "tf32", "bf16", "fp16"],
                   help="GEMM/conv precision; bf16/fp16 mean autocast (default: bf16 on cc>=8.0, fp16 below; "
                        "fp32 when fp32_gemm is planted)")
    p.add_argument("--model", default="resnet50", choices=["resnet18", "resnet50", "mlp", "logreg"])
    p.add_argument("--blocks", default=None, help="residual blocks per stage, e.g. 2,2,2,2 (default: model's)")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--image", type=int, default=224)
    p.add_argument("--workers", type=int, default=None, help="DataLoader workers (default 4; 0 with dataloader_gap)")
    p.add_argument("--dl-gap", type=float, default=0.35, help="DataLoader share of the step for dataloader_gap")
    p.add_argument("--pinned", dest="pinned", action="store_true", default=None)
    p.add_argument("--pageable", dest="pinned", action="store_false")
    p.add_argument("--no-profiler-step", action="store_true", help="no ProfilerStep#N (Kineto) / 'step N' NVTX (nsys)")
    p.add_argument("--first-step", type=int, default=2, help="number of the first profiled step")
    p.add_argument("--slowdown", type=float, default=0.0, help="scale every duration by (1+PCT/100)")
    p.add_argument("--noise", type=float, default=0.0, help="per-step duration noise, standard deviation in percent")
    p.add_argument("--outlier", action="append", default=[], metavar="WHERE:FACTOR",
                   help="scale every duration of one recorded step by FACTOR (e.g. 2.5); WHERE is start, middle, "
                        "end or a 0-based step index; repeatable")
    p.add_argument("--extra-op-ms", type=float, default=0.0,
                   help="a new op per step (aten::extra_op) whose one kernel runs this many ms")
    p.add_argument("--int-us", action="store_true", help="legacy integer-microsecond timestamps (epoch clock)")
    p.add_argument("--no-record-shapes", action="store_true")
    p.add_argument("--no-memory", action="store_true", help="no [memory] events (profile_memory off)")
    p.add_argument("--no-fwdbwd", action="store_true", help="no fwdbwd flow events")
    p.add_argument("--no-loss-item", action="store_true",
                   help="no per-step loss.item() (then an unsynchronised GPU-bound loop runs with a full launch queue)")
    p.add_argument("--nvtx", default="both", choices=["both", "steps", "emit", "none"],
                   help="nsys NVTX ranges: 'step N' push/pop, emit_nvtx-style op ranges, both, none")
    p.add_argument("--gzip-level", type=int, default=6)
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--scenario", default=None, choices=["startup", "inference_preprocess", "hpc_alloc_churn"],
                   help="write a hand-scripted Kineto trace instead of simulating steps (genprof/scenarios.py): "
                        "a start-up-dominated capture, a with_stack inference trace with preprocessing, a CUDA "
                        "program with allocation churn and no framework op; other options are ignored")
    p.add_argument("--job-ranks", type=int, default=0, metavar="N",
                   help="write a whole DDP job of N ranks (one Kineto trace per rank, clocks skewed, ranks "
                        "synchronised by their all-reduces) into the directory -o (genprof/job.py); only "
                        "--steps, --seed, --gpu-name and the --straggler/--max-offset options apply")
    p.add_argument("--straggler-rank", type=int, default=1, help="--job-ranks: the rank made late")
    p.add_argument("--straggler-cause", default="none", choices=["none", "compute", "dataloader", "optimizer", "outlier"],
                   help="--job-ranks: what makes the straggler late each step (none: a balanced job)")
    p.add_argument("--max-offset-ms", type=float, default=50.0, help="--job-ranks: per-rank clock skew bound (ms)")
    p.add_argument("-o", "--output", required=True)
    return p.parse_args(argv)


def make_cfg(a, argv):
    c = Cfg()
    fmt = a.format
    if fmt is None:
        o = a.output
        fmt = "nsys" if o.endswith((".sqlite", ".db")) else ("kineto-gz" if o.endswith(".gz") else "kineto")
    c.gz = fmt == "kineto-gz" or (fmt == "kineto-legacy" and a.output.endswith(".gz"))
    c.fmt = "kineto" if fmt == "kineto-gz" else fmt
    plants = set()
    for x in a.plant.split(","):
        x = x.strip()
        if not x:
            continue
        x = ALIASES.get(x, x)
        if x not in PLANTS:
            raise SystemExit("gen_profile.py: unknown plant %r (known: %s)" % (x, ", ".join(PLANTS)))
        plants.add(x)
    c.plants = plants
    c.seed = a.seed
    c.gpus = max(1, a.gpus)
    if "nccl_unbucketed" in plants and c.gpus < 2:
        c.gpus = 2
    c.rank = min(max(0, a.rank), c.gpus - 1)
    c.visible_gpus = a.visible_gpus or c.gpus
    c.per_process_ids = a.device_ids == "per-process"
    gpu = hw.lookup(a.gpu_name, a.cc)
    c.gpu = gpu
    prec = a.precision
    if "fp32_gemm" in plants:
        prec = "fp32"
    elif prec == "auto":
        prec = "bf16" if gpu.cc >= (8, 0) else "fp16"
    c.prec = prec
    c.amp = prec in ("bf16", "fp16")
    c.workers = a.workers if a.workers is not None else (0 if "dataloader_gap" in plants else 4)
    c.dl_gap = a.dl_gap if "dataloader_gap" in plants else 0.08
    c.pinned = a.pinned if a.pinned is not None else ("pageable_memcpy" not in plants)
    c.host_sync = "host_sync" in plants
    c.small_kernels = "small_kernels" in plants
    c.nccl_unbucketed = "nccl_unbucketed" in plants
    c.misaligned = "shape_not_multiple_of_8" in plants
    c.profiler_step = not a.no_profiler_step
    c.nvtx_steps = a.nvtx in ("both", "steps") and not a.no_profiler_step
    c.nvtx_emit = a.nvtx in ("both", "emit")
    c.record_shapes = not a.no_record_shapes
    c.profile_memory = not a.no_memory
    c.fwdbwd = not a.no_fwdbwd
    c.loss_item = not a.no_loss_item
    c.scale = 1.0 + a.slowdown / 100.0
    c.noise = a.noise
    c.outlier_spec = a.outlier
    c.outliers = {}          # step number -> factor, filled in main() once the step count is known
    c.extra_op_ns = int(a.extra_op_ms * 1e6)
    c.int_us = a.int_us or c.fmt == "kineto-legacy"
    c.gzip_level = a.gzip_level
    c.first_step = a.first_step
    c.py_overhead_us = 12.0
    c.queue_depth = 1024
    c.dl_sample_ops = 16
    r = random.Random("proflint-gen-clock:%s" % a.seed)
    c.t0_ns = 1_000_000_000_000 + r.randrange(10 ** 12)
    epoch = 1_609_900_000_000_000_000 if c.fmt == "kineto-legacy" else 1_760_000_000_000_000_000
    c.epoch_base_ns = epoch + r.randrange(10 ** 16) - c.t0_ns
    c.trace_id = "%032X" % r.getrandbits(128)
    c.trace_name = "/tmp/proflint_gen/rank%d.%d.pt.trace.json" % (c.rank, r.randrange(10 ** 9))
    args = []
    skip = False
    for x in argv:
        if skip:
            skip = False
            continue
        if x in ("-o", "--output"):
            skip = True
            continue
        if x.startswith("--output=") or x == "--quiet":
            continue
        args.append(x)
    c.argline = " ".join(args)
    c.est_gpu_busy_ns = 0
    return c


def build_model(c, a, blocks):
    return Model(a.model, c.gpu, c.prec, a.batch, a.image, blocks=blocks, misaligned=c.misaligned,
                 record_shapes=c.record_shapes, amp=c.amp)


def count_events(recs, fmt, c):
    n = 0
    if fmt == "nsys":
        for r in recs:
            k = r[0]
            if k == OP:
                n += c.nvtx_emit
            elif k in (RT, KER, CPY, SET, SYNC, NVTX):
                n += 1
        return n
    launch = [x[3] for x in RT_API]
    legacy = fmt == "kineto-legacy"
    for r in recs:
        k = r[0]
        if k == OP or k == MEM:
            n += 1
        elif k == RT:
            n += 1 + launch[r[2]]
        elif k in (KER, CPY, SET):
            n += 2
        elif k in (FLOW, GANN) and not legacy:
            n += 1
    return n


def warmup_steps(m):
    """Unrecorded steps run before the profiled window (like a profiler schedule's wait+warmup), long
    enough for an unsynchronised GPU-bound loop to fill the launch queue and reach steady state."""
    launches = sum(len(L.k) for L in m.layers) or 1
    return max(1, min(8, 1024 * 3 // (2 * launches) + 1))


def dry_run(c, a, blocks):
    """Simulate warmup + two steps without writing; return (events per step, GPU busy ns per step)."""
    m = build_model(c, a, blocks)
    ranks = range(c.gpus) if c.fmt == "nsys" else [c.rank]
    per = 0
    busy = 0
    for r in ranks:
        s = Sim(c, m, c.gpu, r)
        for i in range(warmup_steps(m)):
            s.step(0)
        per += count_events(s.step(1), c.fmt, c)
        busy = s.gpu_busy
    return per, busy


def parse_blocks(s):
    return [int(x) for x in s.split(",")] if s else None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    a = parse(argv)
    if a.job_ranks:
        from genprof import job
        if not 2 <= a.job_ranks <= 64:
            raise SystemExit("gen_profile.py: --job-ranks must be 2..64")
        n, j = job.generate(a.output, a.job_ranks, a.straggler_cause, a.straggler_rank, a.steps or 6, a.seed,
                            a.max_offset_ms, a.gpu_name)
        if not a.quiet:
            t = j.truth()
            sys.stderr.write("gen_profile: job of %d ranks -> %s: %d events, straggler %s (%s), median step %.2f ms\n"
                             % (a.job_ranks, a.output, n, t["straggler_rank"], t["cause"], t["median_step_ns"] / 1e6))
        return 0
    if a.scenario:
        from genprof import scenarios
        n = scenarios.write(a.scenario, a.output)
        if not a.quiet:
            sys.stderr.write("gen_profile: scenario %s -> %s: %d events\n" % (a.scenario, a.output, n))
        return 0
    c = make_cfg(a, argv)
    t_begin = time.time()
    blocks = parse_blocks(a.blocks)
    target = a.events if a.events is not None else (None if a.steps else 20000)
    fixed = 30
    if a.steps and target and blocks is None and a.model in ("resnet18", "resnet50"):
        # fixed step count: scale the depth so the event count lands near the target
        base = [2, 2, 2, 2] if a.model == "resnet18" else [3, 4, 6, 3]
        p1, _ = dry_run(c, a, [1, 1, 1, 1])
        p2, _ = dry_run(c, a, [2, 2, 2, 2])
        want = (target - fixed) / a.steps
        b = max(1, int(round(1 + (want - p1) / max(1, p2 - p1))))
        blocks = [b, b, b, b] if b != 2 or a.model != "resnet18" else base
    per, busy = dry_run(c, a, blocks)
    if not a.steps and blocks is None and a.model in ("resnet18", "resnet50") and per > 1.5 * target:
        blocks = [1, 1, 1, 1]          # small targets: shallowest network of the family
        per, busy = dry_run(c, a, blocks)
    if not a.steps and per > 1.5 * target and not a.quiet:
        sys.stderr.write("gen_profile: one step of this model is ~%d events (> --events %d); "
                         "use --model mlp/logreg for tiny traces\n" % (per, target))
    c.est_gpu_busy_ns = busy
    steps = a.steps or max(1, int(round((target - fixed) / max(1, per))))
    for spec in c.outlier_spec:
        where, _, factor = spec.partition(":")
        index = {"start": 0, "middle": steps // 2, "end": steps - 1}.get(where)
        if index is None:
            try:
                index = int(where)
            except ValueError:
                raise SystemExit("gen_profile.py: --outlier %r: WHERE must be start, middle, end or a step index" % spec)
        try:
            f = float(factor or "2.5")
        except ValueError:
            raise SystemExit("gen_profile.py: --outlier %r: FACTOR must be a number" % spec)
        if not 0 <= index < steps or f <= 0:
            raise SystemExit("gen_profile.py: --outlier %r: step index out of 0..%d or factor <= 0" % (spec, steps - 1))
        c.outliers[c.first_step + index] = f
    model = build_model(c, a, blocks)
    if c.fmt == "nsys":
        from genprof.nsys import NsysWriter
        sims = [Sim(c, model, c.gpu, r) for r in range(c.gpus)]
        w = NsysWriter(a.output, c, c.gpu, sims)
    else:
        from genprof.kineto import KinetoWriter, LegacyWriter
        sims = [Sim(c, model, c.gpu, c.rank)]
        W = LegacyWriter if c.fmt == "kineto-legacy" else KinetoWriter
        w = W(a.output, c, c.gpu, sims[0])
    nwarm = warmup_steps(model)
    for s in sims:
        for i in range(nwarm):
            s.step(c.first_step - nwarm + i)
        s.ext = 1            # the profiler's External ids start with the recorded window
    t_start = min(s.main.t for s in sims) - 150_000
    for i in range(steps):
        n = c.first_step + i
        for s in sims:
            recs = s.step(n)
            if c.fmt == "nsys":
                w.write(recs, s)
            else:
                w.write(recs)
    t_end = max(max(s.main.t, s.sfree, s.nfree) for s in sims) + 80_000
    streams = [COMPUTE_STREAM] + ([NCCL_STREAM] if c.gpus > 1 else [])
    w.finish(t_start, t_end, streams)
    dt = time.time() - t_begin
    if not a.quiet:
        sys.stderr.write("gen_profile: %s %s: %d events, %d steps x %d rank(s), model %s (%d layers, %d params), "
                         "%s %s, plants [%s], %.1f s, %d bytes\n"
                         % (c.fmt + (" gz" if c.gz else ""), a.output, w.count, steps, len(sims), a.model,
                            len(model.layers), len(model.params), c.gpu.name, c.prec, ",".join(sorted(c.plants)),
                            dt, os.path.getsize(a.output)))
    return 0


def source_scenario_main(argv):
    """gen_profile.py source-scenario NAME -o FILE: a with_stack/with_modules Kineto trace for source
    and module attribution (genprof/source_scenarios.py)."""
    from genprof import source_scenarios
    p = argparse.ArgumentParser(prog="gen_profile.py source-scenario", description=source_scenario_main.__doc__)
    p.add_argument("name", choices=sorted(source_scenarios.SCENARIOS))
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--quiet", action="store_true")
    a = p.parse_args(argv)
    n = source_scenarios.write(a.name, a.output)
    if not a.quiet:
        sys.stderr.write("gen_profile: source scenario %s -> %s: %d events\n" % (a.name, a.output, n))
    return 0


def host_activity_main(argv):
    """gen_profile.py host-activity --kind io|cpu|quiet [--steps N] [--seed S] -o OUT.sqlite

    An nsys export of the small MLP PyTorch job (emit_nvtx ranges, --plant dataloader_gap for io and cpu: the GPU idles at
    every step start; none for quiet) with OS runtime calls and CPU samples placed by
    genprof/host.py (read its docstring for what each kind plants)."""
    from genprof import host
    p = argparse.ArgumentParser(prog="gen_profile.py host-activity", description=host_activity_main.__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kind", required=True, choices=["io", "cpu", "quiet"])
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--seed", default="host")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("-q", "--quiet", action="store_true")
    a = p.parse_args(argv)
    if os.path.exists(a.output):
        os.remove(a.output)
    base = ["--format", "nsys", "--model", "mlp", "--steps", str(a.steps), "--nvtx", "both", "--seed", a.seed,
            "--quiet", "-o", a.output]
    if a.kind != "quiet":
        base[0:0] = ["--plant", "dataloader_gap"]
    main(base)
    n = host.add(a.output, a.kind)
    if not a.quiet:
        sys.stderr.write("gen_profile: host activity %s -> %s: %d rows added\n" % (a.kind, a.output, n))
    return 0


def gpu_metrics_main(argv):
    """gen_profile.py gpu-metrics [--period-us N] [--tensor-pct P] EXPORT.sqlite

    Adds GPU metrics sampling (GPU_METRICS + TARGET_INFO_GPU_METRICS) to an nsys export written by
    gen_profile.py --format nsys, in place; each GPU's samples follow its own kernels and copies
    (genprof/gpumetrics.py says how)."""
    from genprof import gpumetrics
    p = argparse.ArgumentParser(prog="gen_profile.py gpu-metrics", description=gpu_metrics_main.__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("export")
    p.add_argument("--period-us", type=int, default=10_000)
    p.add_argument("--tensor-pct", type=int, default=5)
    p.add_argument("-q", "--quiet", action="store_true")
    a = p.parse_args(argv)
    n = gpumetrics.add(a.export, a.period_us, a.tensor_pct)
    if not a.quiet:
        sys.stderr.write("gen_profile: gpu metrics -> %s: %d rows added\n" % (a.export, n))
    return 0


def graphs_main(argv):
    """`gen_profile.py graphs NAME -o FILE`: CUDA graph and torch.compile scenarios (genprof/graph_scenarios.py)."""
    from genprof import graph_scenarios
    p = argparse.ArgumentParser(prog="gen_profile.py graphs", description=graph_scenarios.__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=graph_scenarios.__doc__)
    p.add_argument("name", choices=sorted(graph_scenarios.SCENARIOS))
    p.add_argument("-o", "--output", required=True, help="output file (.json or .json.gz)")
    a = p.parse_args(argv)
    n = graph_scenarios.write(a.name, a.output)
    sys.stderr.write("gen_profile: graphs %s -> %s: %d events\n" % (a.name, a.output, n))
    return 0


def samples_main(argv):
    """gen_profile.py samples DIALECT ... -o FILE: a sampling log of a simulated job (issue 17):
    nvsmi-csv, dmon, pmon, dcgmi or memory-timeline (genprof/samplelogs.py)."""
    from genprof import samplelogs
    return samplelogs.main(argv)


if __name__ == "__main__":
    if sys.argv[1:2] == ["samples"]:
        sys.exit(samples_main(sys.argv[2:]))
    if sys.argv[1:2] == ["source-scenario"]:
        sys.exit(source_scenario_main(sys.argv[2:]))
    if sys.argv[1:2] == ["host-activity"]:
        sys.exit(host_activity_main(sys.argv[2:]))
    if sys.argv[1:2] == ["gpu-metrics"]:
        sys.exit(gpu_metrics_main(sys.argv[2:]))
    if len(sys.argv) > 1 and sys.argv[1] == "graphs":
        sys.exit(graphs_main(sys.argv[2:]))
    sys.exit(main())
