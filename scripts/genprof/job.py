"""Multi-rank DDP jobs: one Kineto trace per rank, ranks synchronised by their all-reduces
(gen_profile.py --job-ranks N).

Every rank trains the same 8-layer MLP (bf16 GEMMs on an A100) with DDP: DataLoader, pinned H2D
copy, forward on the main thread, backward on the autograd thread with two gradient buckets
(two `record_param_comms` + `nccl:all_reduce` + `ncclDevKernel_AllReduce_*` per step, with the
args recent PyTorch writes: Collective name, In/Out msg nelems, Group size, dtype, Process Group
Name/Description/Ranks, Rank and Seq), foreach SGD, loss.item(). Ranks are simulated together:
an all-reduce kernel starts on each rank when that rank's NCCL stream reaches it (its arrival)
and ends on every rank at the last arrival plus the transfer time, so the early ranks wait
inside the kernel. With --straggler-cause one rank is made late every step by:

  compute     its forward and backward GEMMs run 30 % longer (same kernels, more time)
  dataloader  its DataLoader __next__ takes 6 ms more (the GPU idles before the step's work)
  optimizer   its optimizer runs 48 extra per-parameter kernels (aten::add_/mul_, ~120 us each)
              after the foreach update: the rank reaches the next step's first all-reduce late
  outlier     only one step (the middle one) is late, by a 30 ms pause before its DataLoader
              wait ends (a checkpoint or a GC pause); an A/A case: no persistent straggler
  none        a balanced job (only per-kernel jitter of +-2 %)

Each rank writes its timestamps on its own clock: job time + a skew drawn in +-50 ms (seeded), as
traces of different hosts do. truth.json next to the traces records the skews, the offsets an
aligner must recover (clock_offset_ns: add to the rank's timestamps to get rank 0's clock), the
straggler, the cause and the lateness per step. Output is a pure function of the arguments.
"""

import gzip
import json
import os
import random

from . import hw
from . import kernels as K

GEMM = ("sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_"
        "tensor16x8x16_kernel")
CAUSES = ("none", "compute", "dataloader", "optimizer", "outlier")
LAYERS = 8
HIDDEN = 2048
BATCH = 4096
BUCKET_AFTER = (4, 0)            # DDP bucket boundaries: all-reduce after backward of layer 4 and of layer 0
COMPUTE_STREAM, NCCL_STREAM = 7, 23


class Rank:
    """One rank's simulated threads and streams, and the Kineto events it wrote (job clock)."""

    def __init__(self, job, r):
        self.job = job
        self.r = r
        self.rng = random.Random("proflint-job:%s:%d" % (job.seed, r))
        self.pid = 2100 + 113 * r
        self.main_tid = self.pid
        self.bwd_tid = self.pid + 17
        self.m = job.t0 + self.rng.randrange(30_000)     # main thread clock
        self.b = self.m                                   # autograd thread clock
        self.sfree = self.m                               # compute stream free at
        self.nfree = self.m                               # NCCL stream free at
        self.ext = 1
        self.corr = 5000
        self.stack = []
        self.events = []
        self.late = r == job.straggler
        self.seq = 0                                      # this rank's collective sequence number (c10d's Seq)

    # ------------------------------------------------------------ primitives
    def cpu(self, us):
        return int(us * 1000 * (0.85 + 0.3 * self.rng.random()))

    def gpu(self, ns):
        return int(ns * (0.98 + 0.04 * self.rng.random()))

    def x(self, cat, name, tid, s, e, args):
        self.events.append([s, cat, name, self.pid if cat in ("cpu_op", "user_annotation", "cuda_runtime")
                            else self.job.dev(self.r), tid, e - s, args])

    def begin(self, tid, name, cat="cpu_op", pre=2.0, args=None):
        t = self.adv(tid, pre)
        ext = self.ext
        self.ext += 1
        self.stack.append((tid, name, cat, t, ext, args))
        return ext

    def end(self, post=1.0):
        tid, name, cat, s, ext, args = self.stack.pop()
        e = self.adv(tid, post)
        a = {"External id": ext}
        if args:
            a.update(args)
        self.x(cat, name, tid, s, e, a)
        return s, e

    def adv(self, tid, us):
        if tid == self.main_tid:
            self.m += self.cpu(us)
            return self.m
        self.b += self.cpu(us)
        return self.b

    def now(self, tid):
        return self.m if tid == self.main_tid else self.b

    def set_now(self, tid, t):
        if tid == self.main_tid:
            self.m = t
        else:
            self.b = t

    def cur_ext(self, tid):
        for fr in reversed(self.stack):
            if fr[0] == tid and fr[2] == "cpu_op":
                return fr[4]
        return 0

    def runtime(self, tid, name, cbid, dur_us, pre=1.0):
        s = self.adv(tid, pre)
        e = s + self.cpu(dur_us)
        self.set_now(tid, e)
        corr = self.corr
        self.corr += 1
        a = {"External id": self.cur_ext(tid), "cbid": cbid, "correlation": corr}
        self.x("cuda_runtime", name, tid, s, e, a)
        return s, e, corr

    def launch(self, tid, kname, dur_ns, stream=COMPUTE_STREAM, extra_args=None):
        s, e, corr = self.runtime(tid, "cudaLaunchKernel", 211, 5.0)
        ready = s + self.cpu(4.0)
        if stream == COMPUTE_STREAM:
            ks = max(ready, self.sfree)
            ke = ks + self.gpu(dur_ns)
            self.sfree = ke
        else:
            ks, ke = ready, ready   # filled by the collective resolution
        a = {"External id": self.cur_ext(tid), "queued": 0, "device": self.job.dev(self.r), "context": 1,
             "stream": stream, "correlation": corr, "grid": [216, 1, 1], "block": [256, 1, 1]}
        if extra_args:
            a.update(extra_args)
        ev = [ks, "kernel", kname, self.job.dev(self.r), stream, ke - ks, a]
        self.events.append(ev)
        return ev

    # ------------------------------------------------------------ the step
    def step(self, n):
        """A generator: yields ('allreduce', kernel event, seq) at each collective and expects the
        job clock end time of that collective back."""
        job = self.job
        M, B = self.main_tid, self.bwd_tid
        self.m += self.cpu(20)
        self.begin(M, "ProfilerStep#%d" % n, "user_annotation", pre=0.5)
        self.begin(M, "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", "user_annotation")
        self.m += self.cpu(280)
        if self.late and job.cause == "dataloader":
            self.m += job.late_ns
        if self.late and job.cause == "outlier" and n == job.outlier_step:
            self.m += job.outlier_ns
        self.end()
        # input batch to the GPU: pinned, non-blocking
        self.begin(M, "aten::to", args={"Input Dims": [[BATCH, HIDDEN], [], [], [], [], []]})
        self.begin(M, "aten::_to_copy")
        self.begin(M, "aten::copy_")
        s, e, corr = self.runtime(M, "cudaMemcpyAsync", 41, 9.0)
        cs = max(s + self.cpu(5.0), self.sfree)
        ce = cs + self.gpu(BATCH * HIDDEN * 2 * 1_000_000_000 // 22_000_000_000)
        self.sfree = ce
        self.events.append([cs, "gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", job.dev(self.r), COMPUTE_STREAM,
                            ce - cs, {"External id": self.cur_ext(M), "device": job.dev(self.r), "context": 1,
                                      "stream": COMPUTE_STREAM, "correlation": corr,
                                      "bytes": BATCH * HIDDEN * 2}])
        self.end()
        self.end()
        self.end()
        self.begin(M, "Optimizer.zero_grad#SGD.zero_grad", "user_annotation", pre=6)
        self.m += self.cpu(30)
        self.end()
        slow = 1.3 if self.late and job.cause == "compute" else 1.0
        self.begin(M, "DistributedDataParallel.forward", "user_annotation", pre=8)
        for i in range(LAYERS):
            self.begin(M, "aten::linear", pre=6)
            self.begin(M, "aten::addmm", pre=3,
                       args={"Input Dims": [[HIDDEN], [BATCH, HIDDEN], [HIDDEN, HIDDEN], [], []],
                             "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]})
            self.launch(M, GEMM, int(900_000 * slow))
            self.end()
            self.end()
            self.begin(M, "aten::relu", pre=3)
            self.begin(M, "aten::clamp_min")
            self.launch(M, job.k_relu.name, 40_000)
            self.end()
            self.end()
        self.end(post=3)
        self.begin(M, "aten::cross_entropy_loss", pre=5)
        self.launch(M, job.k_relu.name, 30_000)
        self.end()
        # loss.backward(): seed on the main thread, the engine thread runs the graph
        self.begin(M, "aten::ones_like", pre=10)
        self.launch(M, job.k_fill.name, 3_000)
        self.end()
        self.b = max(self.b, self.m + self.cpu(20))
        for i in reversed(range(LAYERS)):
            self.begin(B, "autograd::engine::evaluate_function: AddmmBackward0", pre=3)
            self.begin(B, "AddmmBackward0")
            for _ in range(2 if i else 1):          # dgrad (not for the first layer), wgrad
                self.begin(B, "aten::mm", pre=2)
                self.launch(B, GEMM, int(900_000 * slow))
                self.end()
            self.end()
            self.end()
            for _ in range(2):                      # weight and bias
                self.begin(B, "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", pre=2)
                self.begin(B, "torch::autograd::AccumulateGrad")
                self.end()
                self.end()
            if i in BUCKET_AFTER:
                yield from self.allreduce(B)
        # DDP finalize: the compute stream waits for the NCCL stream
        self.runtime(B, "cudaStreamWaitEvent", 147, 3.0)
        self.sfree = max(self.sfree, self.nfree)
        self.m = max(self.m, self.b) + self.cpu(15)
        self.begin(M, "Optimizer.step#SGD.step", "user_annotation", pre=10)
        self.m += self.cpu(25)
        for name, k in (("aten::_foreach_add_", job.k_mt_add), ("aten::_foreach_mul_", job.k_mt_mul),
                        ("aten::_foreach_add_", job.k_mt_add)):
            self.begin(M, name, pre=6)
            self.launch(M, k.name, 110_000)
            self.end()
        if self.late and job.cause == "optimizer":
            # a second, per-parameter update the other ranks do not run (e.g. a rank-local
            # regulariser): 16 parameters x 3 ops, one elementwise kernel each
            for p in range(2 * LAYERS):
                for name, k in (("aten::mul_", job.k_mul), ("aten::add_", job.k_add), ("aten::add_", job.k_add)):
                    self.begin(M, name, pre=4, args={"Input Dims": [[HIDDEN, HIDDEN] if p % 2 == 0 else [HIDDEN], []]})
                    self.launch(M, k.name, job.late_ns // (6 * LAYERS))
                    self.end()
        self.end(post=3)
        # running_loss += loss.item(): waits for the GPU
        self.begin(M, "aten::item", pre=12)
        self.begin(M, "aten::_local_scalar_dense")
        s, e, corr = self.runtime(M, "cudaMemcpyAsync", 41, 6.0)
        cs = max(s + self.cpu(5), self.sfree)
        ce = cs + self.gpu(2_000)
        self.sfree = ce
        self.events.append([cs, "gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", job.dev(self.r), COMPUTE_STREAM,
                            ce - cs, {"External id": self.cur_ext(M), "device": job.dev(self.r), "context": 1,
                                      "stream": COMPUTE_STREAM, "correlation": corr, "bytes": 4}])
        self.m = max(self.m, ce + self.cpu(4))
        self.events[-2][5] = self.m - self.events[-2][0]   # the blocking copy call returns after the copy
        self.runtime(M, "cudaStreamSynchronize", 131, 2.0)
        self.end()
        self.end()
        self.end(post=1)

    def allreduce(self, B):
        job = self.job
        seq = self.seq
        self.seq += 1
        nelems = job.bucket_nelems
        args = {"Collective name": "allreduce", "dtype": "BFloat16", "In msg nelems": nelems,
                "Out msg nelems": nelems, "Group size": job.ranks, "Global rank start": 0, "Global rank stride": 1,
                "Process Group Name": "0", "Process Group Description": "default_pg",
                "Process Group Ranks": "[" + ", ".join(str(i) for i in range(job.ranks)) + "]",
                "Rank": self.r, "Seq": seq}
        self.begin(B, "record_param_comms", pre=4, args=args)
        self.begin(B, "nccl:all_reduce", "user_annotation", pre=2)
        self.runtime(B, "cudaEventRecord", 135, 2.5)
        self.runtime(B, "cudaStreamWaitEvent", 147, 2.5)
        kargs = {k: args[k] for k in ("Collective name", "In msg nelems", "Out msg nelems", "Group size", "dtype",
                                      "Process Group Name", "Process Group Description", "Process Group Ranks")}
        ev = self.launch(B, job.k_nccl.name, 0, stream=NCCL_STREAM, extra_args=kargs)
        ev[0] = max(ev[0], self.sfree, self.nfree)   # the NCCL stream waits for the gradients
        end = yield ("allreduce", ev, seq)
        ev[5] = end - ev[0]
        self.nfree = end
        self.end()
        self.end()


class Job:
    def __init__(self, ranks, cause, straggler, steps, seed, max_offset_ms, gpu_name):
        if cause not in CAUSES:
            raise SystemExit("gen_profile.py: --straggler-cause must be one of " + ", ".join(CAUSES))
        self.ranks = ranks
        self.cause = cause
        self.straggler = straggler if cause != "none" else None
        if self.straggler is not None and not 0 <= self.straggler < ranks:
            raise SystemExit("gen_profile.py: --straggler-rank must be in 0..%d" % (ranks - 1))
        self.steps = steps
        self.seed = seed
        self.gpu = hw.lookup(gpu_name, None)
        self.t0 = 4_000_000_000_000 + random.Random("proflint-job-t0:%s" % seed).randrange(10 ** 9)
        r = random.Random("proflint-job-skew:%s:%d" % (seed, ranks))
        lim = int(max_offset_ms * 1e6)
        self.skew = [r.randint(-lim, lim) for _ in range(ranks)]
        self.late_ns = 6_000_000
        # "outlier": one pause on one rank in one step (a checkpoint, a GC pause), as long as a
        # step; every other step is balanced. The middle step of the capture.
        self.outlier_ns = 30_000_000
        self.outlier_step = 10 + steps // 2
        self.bucket_nelems = 4 * HIDDEN * HIDDEN + 4 * HIDDEN
        self.busbw = 150e9
        self.k_relu = K.ew("relu", "bf16", BATCH * HIDDEN)
        self.k_fill = K.ew("fill", "fp32", 1)
        self.k_add = K.ew("add", "fp32", HIDDEN * HIDDEN)
        self.k_mul = K.ew("mul", "fp32", HIDDEN * HIDDEN)
        self.k_mt_add = K.multi_tensor("add", 320)
        self.k_mt_mul = K.multi_tensor("mul", 320)
        self.k_nccl = K.nccl_allreduce(self.gpu.arch, "bf16")
        self.transfer_ns = int(2.0 * (ranks - 1) / ranks * self.bucket_nelems * 2 / self.busbw * 1e9) + 12_000

    def dev(self, r):
        return r % 8           # device ordinal as each rank's process sees it (8 GPUs per host)

    def run(self, first_step=10):
        ranks = [Rank(self, r) for r in range(self.ranks)]
        collectives = []
        for i in range(self.steps):
            n = first_step + i
            gens = [rk.step(n) for rk in ranks]
            pend = [next(g) for g in gens]
            while True:
                arrivals = [p[1][0] for p in pend]
                last = max(arrivals)
                collectives.append((n, pend[0][2], arrivals))
                nxt = []
                for rk, g in zip(ranks, gens):
                    end = last + self.transfer_ns + rk.rng.randrange(3_000)
                    try:
                        nxt.append(g.send(end))
                    except StopIteration:
                        nxt.append(None)
                if all(x is None for x in nxt):
                    break
                assert all(x is not None for x in nxt), "ranks disagree on the collective sequence"
                pend = nxt
        self.rank_objs = ranks
        self.collectives = collectives
        return ranks

    def truth(self):
        steps = []
        for rk in self.rank_objs:
            st = sorted((e[0], e[0] + e[5]) for e in rk.events if e[2].startswith("ProfilerStep#"))
            steps.append([b - a for a, b in st])
        step_med = sorted(x for s in steps for x in s)[len(steps) * len(steps[0]) // 2]
        last_counts = [0] * self.ranks
        waits = [0] * self.ranks
        for _, _, arr in self.collectives:
            last_counts[arr.index(max(arr))] += 1
            for r, a in enumerate(arr):
                waits[r] += max(arr) - a
        out = {
            "ranks": self.ranks, "straggler_rank": self.straggler, "cause": self.cause,
            "late_ns_per_step": (0 if self.cause == "outlier" else self.late_ns) if self.straggler is not None else 0,
            "steps": self.steps, "median_step_ns": step_med,
            "collectives": len(self.collectives), "arrived_last": last_counts,
            "wait_ns_total": waits,
            "transfer_ns": self.transfer_ns,
            "skew_ns": self.skew,
            "clock_offset_ns": [self.skew[0] - s for s in self.skew],
            "clock_offset_note": "add clock_offset_ns[r] to rank r's timestamps to get rank 0's clock",
        }
        if self.cause == "outlier":
            out["outlier_step"] = "ProfilerStep#%d" % self.outlier_step
            out["outlier_ns"] = self.outlier_ns
        return out


def _ts(ns):
    return "%d.%03d" % divmod(ns, 1000)


def write_rank(job, rk, path, gzip_level=6):
    g = job.ranks
    hdr = {"schemaVersion": 1,
           "deviceProperties": [job.gpu.props(i) for i in range(min(8, g))],
           "distributedInfo": {"backend": "nccl", "rank": rk.r, "world_size": g, "pg_count": 1,
                               "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "backend_config": "cuda:nccl",
                                              "pg_size": g, "ranks": list(range(g))}],
                               "nccl_version": "2.21.5"},
           "record_shapes": 1, "cupti_version": 22, "cuda_runtime_version": 12040, "cuda_driver_version": 12080,
           "trace_id": "%032X" % random.Random("proflint-job-id:%s:%d" % (job.seed, rk.r)).getrandbits(128),
           "displayTimeUnit": "ms"}
    skew = job.skew[rk.r]
    lines = []
    evs = sorted(rk.events, key=lambda e: (e[0], -e[5], e[2]))
    for s, cat, name, pid, tid, dur, args in evs:
        lines.append('{"ph": "X", "cat": "%s", "name": %s, "pid": %d, "tid": %d, "ts": %s, "dur": %s, "args": %s}'
                     % (cat, json.dumps(name), pid, tid, _ts(s + skew), _ts(dur), json.dumps(args)))
        if cat == "cuda_runtime" and name == "cudaLaunchKernel":
            lines.append('{"ph": "s", "id": %d, "pid": %d, "tid": %d, "ts": %s, "cat": "ac2g", "name": "ac2g"}'
                         % (args["correlation"], pid, tid, _ts(s + skew)))
        elif cat == "kernel":
            lines.append('{"ph": "f", "id": %d, "pid": %d, "tid": %d, "ts": %s, "cat": "ac2g", "name": "ac2g", '
                         '"bp": "e"}' % (args["correlation"], pid, tid, _ts(s + skew)))
    t_start = min(e[0] for e in rk.events) - 100_000 + skew
    t_end = max(e[0] + e[5] for e in rk.events) + 50_000 + skew
    dev = job.dev(rk.r)
    meta = [("process_name", rk.pid, 0, {"name": "python3"}), ("process_labels", rk.pid, 0, {"labels": "CPU"}),
            ("process_name", dev, 0, {"name": "python3"}), ("process_labels", dev, 0, {"labels": "GPU %d" % dev}),
            ("thread_name", dev, COMPUTE_STREAM, {"name": "stream %d " % COMPUTE_STREAM}),
            ("thread_name", dev, NCCL_STREAM, {"name": "stream %d " % NCCL_STREAM}),
            ("thread_name", rk.pid, rk.main_tid, {"name": "thread %d (python3)" % rk.main_tid}),
            ("thread_name", rk.pid, rk.bwd_tid, {"name": "thread %d (python3)" % rk.bwd_tid})]
    for name, pid, tid, args in meta:
        lines.append('{"name": "%s", "ph": "M", "ts": %s, "pid": %d, "tid": %d, "args": %s}'
                     % (name, _ts(t_start), pid, tid, json.dumps(args)))
    lines.append('{"ph": "X", "cat": "Trace", "ts": %s, "dur": %s, "pid": "Spans", "tid": "PyTorch Profiler", '
                 '"name": "PyTorch Profiler (0)", "args": {"Op count": 0}}' % (_ts(t_start), _ts(t_end - t_start)))
    body = json.dumps(hdr, indent=2)
    text = body[:-2] + ',\n  "traceEvents": [\n' + ",\n".join(lines) + '\n  ],\n  "traceName": %s\n}\n' % json.dumps(
        "/tmp/proflint_gen/job/rank%d.pt.trace.json" % rk.r)
    with open(path, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=gzip_level) as f:
            f.write(text.encode())
    return len(lines)


def generate(out_dir, ranks, cause, straggler, steps, seed, max_offset_ms, gpu_name):
    job = Job(ranks, cause, straggler, steps, seed, max_offset_ms, gpu_name)
    job.run()
    os.makedirs(out_dir, exist_ok=True)
    n = 0
    for rk in job.rank_objs:
        n += write_rank(job, rk, os.path.join(out_dir, "rank%d.json.gz" % rk.r))
    with open(os.path.join(out_dir, "truth.json"), "w") as f:
        json.dump(job.truth(), f, indent=1)
        f.write("\n")
    return n, job
