"""Timeline simulation of one rank of a PyTorch training job.

The simulator walks the model step by step on two CPU threads (the Python main thread and the
autograd engine thread) and one or two CUDA streams (compute, NCCL). Every CPU op, runtime call,
GPU activity and memory event becomes a small tuple ("record"); the writers turn records into
Kineto JSON events or nsys SQLite rows. All times are integer nanoseconds. Everything random
comes from random.Random seeded with strings (stable across Python runs), so output is a pure
function of the arguments.
"""

import random
from collections import deque

from . import kernels as K
from .model import opt, OpT

# record type codes
OP, RT, KER, CPY, SET, SYNC, MEM, FLOW, GANN, NVTX = range(10)
CPU_OP, USER_ANN = 0, 1

# runtime API table: (name, cbid, nsys name with CUPTI version suffix, launches GPU work)
RT_API = [
    ("cudaLaunchKernel", 211, "cudaLaunchKernel_v7000", True),
    ("cudaMemcpyAsync", 41, "cudaMemcpyAsync_v3020", True),
    ("cudaMemsetAsync", 51, "cudaMemsetAsync_v3020", True),
    ("cudaStreamSynchronize", 131, "cudaStreamSynchronize_v3020", False),
    ("cudaDeviceSynchronize", 165, "cudaDeviceSynchronize_v3020", False),
    ("cudaEventRecord", 135, "cudaEventRecord_v3020", False),
    ("cudaStreamWaitEvent", 147, "cudaStreamWaitEvent_v3020", False),
]
R_LAUNCH, R_MEMCPY, R_MEMSET, R_SSYNC, R_DSYNC, R_EVREC, R_WAITEV = range(7)

# memcpy kinds: (Kineto name, CUPTI copyKind, srcKind, dstKind)
CPY_KINDS = [
    ("Memcpy HtoD (Pageable -> Device)", 1, 0, 2),
    ("Memcpy HtoD (Pinned -> Device)", 1, 1, 2),
    ("Memcpy DtoH (Device -> Pageable)", 2, 2, 0),
    ("Memcpy DtoH (Device -> Pinned)", 2, 2, 1),
    ("Memcpy DtoD (Device -> Device)", 8, 2, 2),
]
C_H2D_PAGEABLE, C_H2D_PINNED, C_D2H_PAGEABLE, C_D2H_PINNED, C_D2D = range(5)
SYNC_STREAM, SYNC_CONTEXT, SYNC_WAIT_EVENT = 3, 4, 2
INVALID = 4294967295

COMPUTE_STREAM = 7
NCCL_STREAM = 23


class Thread:
    __slots__ = ("tid", "t", "stack", "bwd")

    def __init__(self, tid, t, bwd=False):
        self.tid = tid
        self.t = t
        self.stack = []
        self.bwd = bwd


def _fixed(name):
    return opt(name)


class Sim:
    def __init__(self, cfg, model, gpu, rank):
        self.cfg = cfg
        self.m = model
        self.gpu = gpu
        self.rank = rank
        self.dev = rank
        self.rng = random.Random("proflint-gen:%s:%d" % (cfg.seed, rank))
        self.nrng = random.Random("proflint-gen-noise:%s:%d" % (cfg.seed, rank))
        r = random.Random("proflint-gen-ids:%s" % cfg.seed)
        base_pid = 1000 + r.randrange(60000)
        self.pid = base_pid + 97 * rank
        self.main = Thread(self.pid, cfg.t0_ns + rank * 3117 + self.rng.randrange(20000))
        self.bwdth = Thread(self.pid + 131 + rank, self.main.t, bwd=True)
        self.ext = 1
        self.corr = 1900 + r.randrange(500)          # same start on every rank: ids collide across processes
        self.seq = 3000 + r.randrange(2000)
        self.flow = 1
        self.sfree = self.main.t
        self.q = deque()                    # end times of work queued on the compute stream
        self.qdepth = cfg.queue_depth       # launches block when this many are pending
        self.nfree = self.main.t
        self.scale = 1.0
        self.out = []
        self.gregions = []
        self.alloc_total = 0
        self.reserved = 0
        self.addr_next = 0
        self.addr_base = 0x7F0000000000 + r.randrange(1 << 20) * 4096 + rank * (1 << 36)
        self.grads = []
        self.saved = {}
        self.gpu_busy = 0
        self.prev_gpu_busy = cfg.est_gpu_busy_ns
        self.world = cfg.gpus
        self.ddp = cfg.gpus > 1
        self.busbw = gpu.nvlink if cfg.gpus <= 8 else min(gpu.nvlink, 25e9)
        self._step_opts = {}
        rs = cfg.record_shapes
        B = model.batch
        self.o_dl_single = opt("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__")
        self.o_dl_multi = opt("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__")
        sample = list(model.input_shape[1:])
        self.o_div = opt("aten::div", [sample, []], ["float", "Scalar"], rs)
        self.o_sub_ = opt("aten::sub_", [sample, [sample[0], 1, 1], []], ["float", "float", "Scalar"], rs)
        self.o_div_ = opt("aten::div_", [sample, [sample[0], 1, 1]], ["float", "float"], rs)
        self.o_stack = opt("aten::stack", [[], []], ["TensorList", "Scalar"], rs)
        self.o_cat = opt("aten::cat", [[], []], ["TensorList", "Scalar"], rs)
        inp = list(model.input_shape)
        self.h2d_ops = []
        for dims, typ, nbytes in ((inp, "float", model.input_bytes), ([B], "long int", B * 8)):
            self.h2d_ops.append((
                opt("aten::to", [dims, [], [], [], [], []], [typ, "Device", "ScalarType", "Bool", "Bool", ""], rs),
                opt("aten::_to_copy", [dims, [], [], [], [], [], []], [typ, "ScalarType", "", "Device", "", "Bool", ""], rs),
                opt("aten::empty_strided", [[], [], [], [], [], []], ["ScalarList", "ScalarList", "ScalarType", "", "Device", ""], rs),
                opt("aten::copy_", [dims, dims, []], [typ, typ, "Bool"], rs),
                nbytes))
        self.o_zero_grad = opt("Optimizer.zero_grad#SGD.zero_grad")
        self.o_opt_step = opt("Optimizer.step#SGD.step")
        self.o_ddp_fwd = opt("DistributedDataParallel.forward")
        self.o_ones_like = opt("aten::ones_like", [[], [], [], [], [], []], ["float", "", "", "", "", ""], rs)
        self.o_empty_like = opt("aten::empty_like", [[], [], [], [], [], []], ["float", "", "", "", "", ""], rs)
        self.o_fill = opt("aten::fill_", [[], []], ["float", "Scalar"], rs)
        self.o_ev = {}
        for name in ("ConvolutionBackward0", "CudnnBatchNormBackward0", "ReluBackward0", "AddBackward0",
                     "MaxPool2DWithIndicesBackward0", "AdaptiveAvgPool2DBackward0", "ViewBackward0",
                     "AddmmBackward0", "TBackward0", "NllLossBackward0", "LogSoftmaxBackward0", "ToCopyBackward0"):
            self.o_ev[name] = (opt("autograd::engine::evaluate_function: " + name), opt(name))
        self.o_acc_ev = opt("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad")
        self.o_acc = opt("torch::autograd::AccumulateGrad")
        self.o_detach = opt("aten::detach", [[]], ["float"], rs)
        self.o_reshape = opt("aten::reshape", [[], []], [model.T, "ScalarList"], rs)
        self.o_view = opt("aten::view", [[], []], [model.T, "ScalarList"], rs)
        self.o_t = opt("aten::t", [[]], [model.T], rs)
        self.o_nccl_ar = opt("nccl:all_reduce")
        self.o_item = opt("aten::item", [[]], ["float"], rs)
        self.o_lsd = opt("aten::_local_scalar_dense", [[]], ["float"], rs)
        np_ = len(model.params)
        self.o_foreach_add = opt("aten::_foreach_add_", [[], [], []], ["TensorList", "TensorList", "Scalar"], rs)
        self.o_foreach_mul = opt("aten::_foreach_mul_", [[], []], ["TensorList", "Scalar"], rs)
        self.o_unscale = opt("aten::_amp_foreach_non_finite_check_and_unscale_", [[], [1], []], ["TensorList", "float", "float"], rs)
        self.o_update_scale = opt("aten::_amp_update_scale_", [[], [1], [1], [], [], []], ["float", "int", "float", "Scalar", "Scalar", "Int"], rs)
        self.k_mta_add = K.multi_tensor("add", 320)
        self.k_mta_mul = K.multi_tensor("mul", 320)
        self.k_unscale = K.multi_tensor("unscale", 320)
        self.k_fill1 = K.ew("fill", "fp32", 1)
        self.o_extra = opt("aten::extra_op", [[]], ["float"], rs)
        self.k_extra = K.spec("void proflint_gen::extra_op_kernel<float>(float*, long)", (1024, 1, 1), (256, 1, 1), 32)
        self.k_nccl = K.nccl_allreduce(gpu.arch)
        self.param_ops = []
        for (L, pn, numel) in model.params:
            d = [numel]
            self.param_ops.append((
                opt("aten::add_", [d, d, []], ["float", "float", "Scalar"], rs),
                opt("aten::mul_", [d, []], ["float", "Scalar"], rs),
                K.ew("add", "fp32", numel), K.ew("mul", "fp32", numel), numel))
        self.comm_opts = {}

    # ---------------------------------------------------------------- primitives
    def c(self, us):
        """CPU duration in ns with jitter and the step scale."""
        return int(us * 1000.0 * self.scale * (0.8 + 0.4 * self.rng.random()))

    def g(self, ns):
        return int(ns * self.scale * (0.96 + 0.08 * self.rng.random()))

    def begin(self, th, o, cat=CPU_OP, seq=-1, pre=1.5):
        th.t += self.c(pre)
        ext = self.ext
        self.ext += 1
        th.stack.append((o, cat, th.t, ext, seq))
        return ext

    def end(self, th, post=0.8):
        o, cat, start, ext, seq = th.stack.pop()
        th.t += self.c(post)
        self.out.append((OP, th.tid, cat, o, start, th.t, ext, seq, th.bwd))
        return start

    def leaf(self, th, o, dur=1.5, pre=0.8):
        th.t += self.c(pre)
        s = th.t
        th.t += self.c(dur)
        ext = self.ext
        self.ext += 1
        self.out.append((OP, th.tid, CPU_OP, o, s, th.t, ext, -1, th.bwd))

    def _cur_ext(self, th):
        """External id of the innermost enclosing cpu_op (user annotations do not correlate)."""
        for fr in reversed(th.stack):
            if fr[1] == CPU_OP:
                return fr[3]
        return 0

    def _gpu(self, start, end):
        self.gpu_busy += end - start
        for reg in self.gregions:
            if reg[0] is None or start < reg[0]:
                reg[0] = start
            if end > reg[1]:
                reg[1] = end

    def launch(self, th, ks, dur_ns, stream=COMPUTE_STREAM, pre=1.0):
        th.t += self.c(pre)
        corr = self.corr
        self.corr += 1
        ext = self._cur_ext(th)
        rs = th.t
        rd = self.c(4.5)
        ready = rs + min(rd, self.c(3.2))
        if stream == COMPUTE_STREAM:
            rd = self._queue_wait(rs, rd)
            s = max(ready, self.sfree)
            e = s + self.g(dur_ns)
            self.sfree = e
            self.q.append(e)
        else:
            s = max(ready, self.nfree)
            e = s + self.g(dur_ns)
            self.nfree = e
        th.t = rs + rd
        out = self.out
        out.append((RT, th.tid, R_LAUNCH, rs, th.t, corr, ext))
        out.append((KER, self.dev, stream, s, e, corr, ext, ks))
        self._gpu(s, e)
        return e

    def _queue_wait(self, rs, rd):
        """A full launch queue makes the launching API call block until the oldest entry retires."""
        q = self.q
        while q and q[0] <= rs:
            q.popleft()
        if len(q) >= self.qdepth:
            free_at = q[len(q) - self.qdepth]
            rd = max(rd, free_at - rs + self.c(1.5))
        return rd

    def memset(self, th, nbytes):
        th.t += self.c(0.8)
        corr = self.corr
        self.corr += 1
        ext = self._cur_ext(th)
        rs = th.t
        rd = self._queue_wait(rs, self.c(4.0))
        s = max(rs + min(rd, self.c(3.0)), self.sfree)
        e = s + self.g(int(nbytes / (self.gpu.bw * 0.6) * 1e9) + 1100)
        self.sfree = e
        self.q.append(e)
        th.t = rs + rd
        self.out.append((RT, th.tid, R_MEMSET, rs, th.t, corr, ext))
        self.out.append((SET, self.dev, COMPUTE_STREAM, s, e, corr, ext, nbytes))
        self._gpu(s, e)

    def memcpy(self, th, kind, nbytes, blocking):
        th.t += self.c(1.0)
        corr = self.corr
        self.corr += 1
        ext = self._cur_ext(th)
        rs = th.t
        if kind in (C_H2D_PAGEABLE, C_D2H_PAGEABLE):
            bw = self.gpu.pcie * 0.36
        elif kind == C_D2D:
            bw = self.gpu.bw * 0.4
        else:
            bw = self.gpu.pcie * 0.92
        s = max(rs + self.c(5.0), self.sfree)
        e = s + self.g(int(nbytes / bw * 1e9) + 1500)
        self.sfree = e
        self.q.append(e)
        th.t = (e + self.c(4.0)) if blocking else rs + self._queue_wait(rs, self.c(6.5))
        self.out.append((RT, th.tid, R_MEMCPY, rs, th.t, corr, ext))
        self.out.append((CPY, self.dev, COMPUTE_STREAM, s, e, corr, ext, kind, nbytes))
        self._gpu(s, e)

    def stream_sync(self, th):
        th.t += self.c(1.0)
        corr = self.corr
        self.corr += 1
        rs = th.t
        th.t = max(rs + self.c(2.5), self.sfree + self.c(2.0))
        self.out.append((RT, th.tid, R_SSYNC, rs, th.t, corr, self._cur_ext(th)))
        self.out.append((SYNC, self.dev, COMPUTE_STREAM, rs, th.t, corr, SYNC_STREAM))

    def device_sync(self, th):
        th.t += self.c(2.0)
        corr = self.corr
        self.corr += 1
        rs = th.t
        th.t = max(rs + self.c(3.0), max(self.sfree, self.nfree) + self.c(3.0))
        self.out.append((RT, th.tid, R_DSYNC, rs, th.t, corr, self._cur_ext(th)))
        self.out.append((SYNC, self.dev, INVALID, rs, th.t, corr, SYNC_CONTEXT))

    def alloc(self, th, nbytes):
        if not self.cfg.profile_memory or nbytes <= 0:
            return 0
        nbytes = (nbytes + 511) // 512 * 512
        self.alloc_total += nbytes
        if self.alloc_total > self.reserved:
            self.reserved = (int(self.alloc_total * 1.08) + (2 << 20) - 1) // (2 << 20) * (2 << 20)
        addr = self.addr_base + self.addr_next
        self.addr_next = (self.addr_next + nbytes) % (1 << 34)
        self.out.append((MEM, th.tid, th.t, nbytes, self.alloc_total, self.reserved, addr, self.dev))
        return addr

    def free(self, th, nbytes, addr):
        if not self.cfg.profile_memory or nbytes <= 0:
            return
        nbytes = (nbytes + 511) // 512 * 512
        self.alloc_total -= nbytes
        self.out.append((MEM, th.tid, th.t, -nbytes, self.alloc_total, self.reserved, addr, self.dev))

    # ---------------------------------------------------------------- step
    def step(self, n):
        cfg = self.cfg
        self.out = []
        self.scale = cfg.scale
        if cfg.noise:
            self.scale *= max(0.5, 1.0 + self.nrng.gauss(0.0, cfg.noise / 100.0))
        self.scale *= getattr(cfg, "outliers", {}).get(n, 1.0)
        self.gpu_busy = 0
        m = self.main
        m.t += self.c(18)
        t0 = m.t
        step_region = [None, 0]
        self.gregions = [step_region]
        step_ext = None
        if cfg.profiler_step and cfg.fmt != "nsys":
            o = self._step_opts.get(n)
            if o is None:
                o = self._step_opts[n] = OpT("ProfilerStep#%d" % n)
            step_ext = self.begin(m, o, USER_ANN, pre=0.5)
        self.dataloader(m)
        inputs = self.h2d(m)
        self.zero_grad(m)
        if self.ddp:
            self.begin(m, self.o_ddp_fwd, USER_ANN, pre=6)
        self.forward(m)
        if self.ddp:
            self.end(m, post=3)
        self.backward(m)
        for nbytes, addr in inputs:
            self.free(m, nbytes, addr)
        if cfg.host_sync:
            # e.g. torch.cuda.synchronize() between backward and the optimizer (timing code)
            self.device_sync(m)
        if self.m.amp and self.m.prec == "fp16":
            self.grad_scaler_unscale(m)
        self.optimizer(m)
        if getattr(cfg, "extra_op_ns", 0):
            self.begin(m, self.o_extra, pre=5)
            self.launch(m, self.k_extra, cfg.extra_op_ns)
            self.end(m, post=2)
        if self.m.amp and self.m.prec == "fp16":
            self.grad_scaler_update(m)
        if cfg.loss_item:
            self.loss_item(m)
        m.t += self.c(6)
        if step_ext is not None:
            self.end(m, post=2)
        if cfg.nvtx_steps and cfg.fmt == "nsys":
            self.out.append((NVTX, m.tid, t0, m.t, "step %d" % n))
        if step_ext is not None and step_region[0] is not None:
            self.out.append((GANN, self.dev, COMPUTE_STREAM, step_region[0], step_region[1],
                             self._step_opts[n], step_ext))
        self.gregions = []
        self.prev_gpu_busy = self.gpu_busy
        return self.out

    # ---------------------------------------------------------------- phases
    def dataloader(self, th):
        cfg = self.cfg
        if cfg.workers > 0:
            self.begin(th, self.o_dl_multi, USER_ANN, pre=4)
            th.t += self.c(140)
            self.end(th, post=4)
            return
        frac = cfg.dl_gap
        backlog = max(0, self.sfree - th.t, self.nfree - th.t)
        copy_est = int(self.m.input_bytes / (self.gpu.pcie * (0.36 if not cfg.pinned else 0.92)) * 1e9)
        gap = int(frac / (1.0 - frac) * (self.prev_gpu_busy + copy_est))
        target = int((backlog + gap) * (0.97 + 0.06 * self.rng.random()))
        self.begin(th, self.o_dl_single, USER_ANN, pre=4)
        t_end = th.t + target
        nsamp = min(self.m.batch, cfg.dl_sample_ops)
        slot = max(0, target // (nsamp + 2))
        for i in range(nsamp):
            th.t += int(slot * 0.85)
            self.leaf(th, self.o_div, dur=9)
            self.leaf(th, self.o_sub_, dur=6)
            self.leaf(th, self.o_div_, dur=6)
        th.t = max(th.t, t_end - self.c(400))
        self.begin(th, self.o_stack, pre=5)
        self.leaf(th, self.o_cat, dur=300)
        self.end(th, post=2)
        th.t = max(th.t, t_end)
        self.end(th, post=3)

    def h2d(self, th):
        cfg = self.cfg
        allocs = []
        for o_to, o_tc, o_es, o_cp, nbytes in self.h2d_ops:
            self.begin(th, o_to, pre=8)
            self.begin(th, o_tc)
            self.leaf(th, o_es, dur=3)
            allocs.append((nbytes, self.alloc(th, nbytes)))
            self.begin(th, o_cp, pre=1)
            if cfg.pinned:
                self.memcpy(th, C_H2D_PINNED, nbytes, blocking=False)
            else:
                self.memcpy(th, C_H2D_PAGEABLE, nbytes, blocking=True)
                self.stream_sync(th)
            self.end(th)
            self.end(th)
            self.end(th)
        return allocs

    def zero_grad(self, th):
        self.begin(th, self.o_zero_grad, USER_ANN, pre=6)
        th.t += self.c(12)
        for nbytes, addr in self.grads:
            th.t += self.c(0.6)
            self.free(th, nbytes, addr)
        self.grads = []
        self.end(th, post=2)

    # ---------------------------------------------------------------- forward
    def _top(self, th, o, L):
        seq = self.seq
        self.seq += 2 if L.kind == "loss" else 1
        L.seq = seq
        ext = self.begin(th, o, seq=seq, pre=self.cfg.py_overhead_us)
        fid = self.flow
        self.flow += 1
        self.saved[L.idx] = [fid, []]
        self.flow_(th, th.stack[-1][2], fid, True)
        return ext

    def flow_(self, th, ts, fid, start):
        if self.cfg.fwdbwd:
            self.out.append((FLOW, th.tid, ts, fid, start))

    def _cast(self, th, L):
        self.begin(th, L.o["cast_to"], pre=2)
        self.begin(th, L.o["cast_tocopy"])
        self.leaf(th, L.o["cast_empty"], dur=2.5)
        self.saved[L.idx][1].append((L.acc_bytes, self.alloc(th, L.acc_bytes)))
        self.begin(th, L.o["cast_copy"])
        self.launch(th, L.k["cast"], L.d["cast"])
        self.end(th)
        self.end(th)
        self.end(th)

    def forward(self, th):
        layers = self.m.layers
        for L in layers:
            kind = L.kind
            if kind == "conv":
                self._top(th, L.o["conv2d"], L)
                if self.m.amp:
                    self._cast(th, L)
                self.begin(th, L.o["convolution"])
                self.begin(th, L.o["_convolution"])
                self.begin(th, L.o["cudnn"], pre=4)
                self.leaf(th, L.o["empty"], dur=2.5)
                self.saved[L.idx][1].append((L.out_bytes, self.alloc(th, L.out_bytes)))
                th.t += self.c(9)
                if self.m.amp and L.first:
                    self.launch(th, L.k["xform"], L.d["xform"])
                self.launch(th, L.k["fwd"], L.d["fwd"])
                self.end(th)
                self.end(th)
                self.end(th)
                self.end(th, post=2)
            elif kind == "bn":
                self.begin(th, L.o["nbt_add"], pre=4)
                self.launch(th, L.k["nbt"], L.d["nbt"])
                self.end(th)
                self._top(th, L.o["batch_norm"], L)
                self.begin(th, L.o["impl"])
                self.begin(th, L.o["cudnn"], pre=2)
                self.leaf(th, L.o["empty_like"], dur=2.5)
                self.saved[L.idx][1].append((L.out_bytes, self.alloc(th, L.out_bytes)))
                self.leaf(th, L.o["empty"], dur=1.5)
                self.leaf(th, L.o["empty"], dur=1.5)
                self.launch(th, L.k["fwd"], L.d["fwd"])
                self.end(th)
                self.end(th)
                self.end(th, post=2)
            elif kind == "relu":
                self._top(th, L.o["relu"], L)
                self.begin(th, L.o["clamp"])
                if L.out_bytes:
                    self.saved[L.idx][1].append((L.out_bytes, self.alloc(th, L.out_bytes)))
                self.launch(th, L.k["fwd"], L.d["fwd"])
                self.end(th)
                self.end(th)
            elif kind == "maxpool":
                self._top(th, L.o["mp"], L)
                self.begin(th, L.o["mpi"])
                self.saved[L.idx][1].append((L.out_bytes, self.alloc(th, L.out_bytes)))
                self.launch(th, L.k["fwd"], L.d["fwd"])
                self.end(th)
                self.end(th)
            elif kind == "add":
                self._top(th, L.o["add"], L)
                self.launch(th, L.k["fwd"], L.d["fwd"])
                self.end(th)
            elif kind == "avgpool":
                self._top(th, L.o["ap"], L)
                self.begin(th, L.o["api"])
                self.saved[L.idx][1].append((L.out_bytes, self.alloc(th, L.out_bytes)))
                self.launch(th, L.k["fwd"], L.d["fwd"])
                self.end(th)
                self.end(th)
            elif kind == "flatten":
                self._top(th, L.o["flatten"], L)
                self.leaf(th, L.o["view"], dur=2)
                self.end(th)
            elif kind == "linear":
                self._top(th, L.o["linear"], L)
                if "cast" in L.k:
                    self._cast(th, L)
                self.begin(th, L.o["t"])
                self.begin(th, L.o["transpose"])
                self.leaf(th, L.o["as_strided"], dur=1.2)
                self.end(th)
                self.end(th)
                self.begin(th, L.o["addmm"], pre=2)
                self.saved[L.idx][1].append((L.out_bytes, self.alloc(th, L.out_bytes)))
                th.t += self.c(6)
                self.launch(th, L.k["fwd"], L.d["fwd"])
                self.end(th)
                self.end(th, post=2)
            elif kind == "loss":
                self._top(th, L.o["ce"], L)
                self.begin(th, L.o["lsm"])
                self.begin(th, L.o["_lsm"])
                self.saved[L.idx][1].append((L.out_bytes, self.alloc(th, L.out_bytes)))
                self.launch(th, L.k["lsm_fwd"], L.d["lsm_fwd"])
                self.end(th)
                self.end(th)
                self.begin(th, L.o["nll_nd"])
                self.begin(th, L.o["nll"])
                self.begin(th, L.o["nll_fwd"])
                self.launch(th, L.k["nll_fwd"], L.d["nll_fwd"])
                self.end(th)
                self.end(th)
                self.end(th)
                self.end(th)

    # ---------------------------------------------------------------- backward
    def _ev(self, b, name, L, seq_off=0, link=True):
        ev, node = self.o_ev[name]
        seq = L.seq + seq_off if L is not None else -1
        self.begin(b, ev, seq=seq, pre=3)
        if link and L is not None and self.saved.get(L.idx):
            self.flow_(b, b.stack[-1][2], self.saved[L.idx][0], False)
        self.begin(b, node, seq=seq, pre=1)

    def _ev_end(self, b):
        self.end(b)
        self.end(b, post=1.5)

    def _release(self, b, L):
        s = self.saved.pop(L.idx, None)
        if s:
            for nbytes, addr in s[1]:
                self.free(b, nbytes, addr)

    def _acc_grad(self, b, L, pi):
        """AccumulateGrad for one parameter (+ DDP all-reduce hook)."""
        for i in range(pi):
            self.begin(b, self.o_acc_ev, pre=2)
            self.begin(b, self.o_acc, pre=0.8)
            self.leaf(b, self.o_detach, dur=1.2)
            self.end(b)
            self.end(b)
            self._ddp_hook(b, L.params[i][1] * 4)

    def _grad_alloc(self, b, numel):
        a = self.alloc(b, numel * 4)
        self.grads.append((numel * 4, a))

    def backward(self, m):
        cfg = self.cfg
        b = self.bwdth
        model = self.m
        # loss.backward(): the grad seed is created on the calling thread, the engine thread does the rest
        self.begin(m, self.o_ones_like, pre=10)
        self.leaf(m, self.o_empty_like, dur=2)
        self.begin(m, self.o_fill)
        self.launch(m, model.layers[-1].k["seed"], model.layers[-1].d["seed"])
        self.end(m)
        self.end(m)
        b.t = max(b.t, m.t + self.c(22))
        self.bucket = 0
        self.bucket_cap = 1 << 20
        for L in reversed(model.layers):
            kind = L.kind
            if kind == "loss":
                self._ev(b, "NllLossBackward0", L, seq_off=1, link=False)
                self.begin(b, L.o["nll_bwd"])
                self.begin(b, L.o["zero"])
                self.begin(b, L.o["fill"])
                self.launch(b, L.k["fill"], L.d["fill"])
                self.end(b)
                self.end(b)
                self.launch(b, L.k["nll_bwd"], L.d["nll_bwd"])
                self.end(b)
                self._ev_end(b)
                self._ev(b, "LogSoftmaxBackward0", L)
                self.begin(b, L.o["lsm_bwd"])
                self.launch(b, L.k["lsm_bwd"], L.d["lsm_bwd"])
                self.end(b)
                self._ev_end(b)
                self._release(b, L)
            elif kind == "linear":
                self._ev(b, "AddmmBackward0", L)
                self.leaf(b, self.o_t, dur=1.5)
                if not L.first:
                    self.begin(b, L.o["mm_dgrad"], pre=2)
                    self.launch(b, L.k["dgrad"], L.d["dgrad"])
                    self.end(b)
                self.leaf(b, self.o_t, dur=1.5)
                self.begin(b, L.o["mm_wgrad"], pre=2)
                self.launch(b, L.k["wgrad"], L.d["wgrad"])
                self.end(b)
                self.begin(b, L.o["sum"], pre=2)
                self.launch(b, L.k["sum"], L.d["sum"])
                self.end(b)
                self.leaf(b, L.o["view"], dur=1.2)
                self._ev_end(b)
                self._ev(b, "TBackward0", None)
                self.leaf(b, self.o_t, dur=1.5)
                self._ev_end(b)
                self._release(b, L)
                self._param_grads(b, L)
            elif kind == "relu":
                self._ev(b, "ReluBackward0", L)
                self.begin(b, L.o["bwd"])
                self.launch(b, L.k["bwd"], L.d["bwd"])
                self.end(b)
                self._ev_end(b)
                self._release(b, L)
            elif kind == "flatten":
                self._ev(b, "ViewBackward0", L)
                self.begin(b, self.o_reshape)
                self.leaf(b, self.o_view, dur=1.2)
                self.end(b)
                self._ev_end(b)
                self._release(b, L)
            elif kind == "avgpool":
                self._ev(b, "AdaptiveAvgPool2DBackward0", L)
                self.begin(b, L.o["bwd"])
                self.launch(b, L.k["bwd"], L.d["bwd"])
                self.end(b)
                self._ev_end(b)
                self._release(b, L)
            elif kind == "add":
                self._ev(b, "AddBackward0", L)
                self._ev_end(b)
                self._release(b, L)
            elif kind == "bn":
                self._ev(b, "CudnnBatchNormBackward0", L)
                self.begin(b, L.o["bwd"], pre=2)
                self.launch(b, L.k["bwd"], L.d["bwd"])
                self.end(b)
                self._ev_end(b)
                self._release(b, L)
                self._param_grads(b, L)
            elif kind == "conv":
                self._ev(b, "ConvolutionBackward0", L)
                self.begin(b, L.o["bwd_conv"], pre=3)
                b.t += self.c(10)
                if not L.first:
                    if model.amp:
                        self.launch(b, L.k["xform"], L.d["xform"])
                    self.launch(b, L.k["dgrad"], L.d["dgrad"])
                if L.idx % 3 == 0:
                    self.memset(b, L.params[0][1] * 4)
                self.launch(b, L.k["wgrad"], L.d["wgrad"])
                self.end(b)
                if L.block_start:
                    self.begin(b, model.layers[self._add_of(L)].o["acc"], pre=2)
                    A = model.layers[self._add_of(L)]
                    self.launch(b, A.k["fwd"], A.d["fwd"])
                    self.end(b)
                self._ev_end(b)
                self._release(b, L)
                self._param_grads(b, L)
            elif kind == "maxpool":
                self._ev(b, "MaxPool2DWithIndicesBackward0", L)
                self.begin(b, L.o["bwd"])
                self.begin(b, L.o["zero"])
                self.begin(b, L.o["fill"])
                self.launch(b, L.k["fill"], L.d["fill"])
                self.end(b)
                self.end(b)
                self.launch(b, L.k["bwd"], L.d["bwd"])
                self.end(b)
                self._ev_end(b)
                self._release(b, L)
        if self.ddp:
            if self.bucket:
                self._allreduce(b, self.bucket)
                self.bucket = 0
            # DDP finalize: make the compute stream wait for the NCCL stream
            b.t += self.c(3)
            corr = self.corr
            self.corr += 1
            rs = b.t
            b.t += self.c(3)
            self.out.append((RT, b.tid, R_WAITEV, rs, b.t, corr, 0))
            self.sfree = max(self.sfree, self.nfree)
        m.t = max(m.t, b.t) + self.c(15)
        self.saved = {}

    def _add_of(self, L):
        """Index of the residual add that closes the block starting at L."""
        layers = self.m.layers
        i = L.idx + 1
        while layers[i].kind != "add":
            i += 1
        return i

    def _param_grads(self, b, L):
        if not L.params:
            return
        model = self.m
        if "cast_back" in L.k:
            self._ev(b, "ToCopyBackward0", None)
            self.begin(b, L.o["cast_tocopy"])
            self.leaf(b, L.o["cast_empty"], dur=2)
            self.begin(b, L.o["cast_copy"])
            self.launch(b, L.k["cast_back"], L.d["cast_back"])
            self.end(b)
            self.end(b)
            self._ev_end(b)
        for _, numel in L.params:
            self._grad_alloc(b, numel)
        self._acc_grad(b, L, len(L.params))

    def _ddp_hook(self, b, nbytes):
        if not self.ddp:
            return
        if self.cfg.nccl_unbucketed:
            self._allreduce(b, nbytes)
            return
        self.bucket += nbytes
        if self.bucket >= self.bucket_cap:
            self._allreduce(b, self.bucket)
            self.bucket = 0
            self.bucket_cap = 25 << 20

    def _comm_opt(self, nelems):
        o = self.comm_opts.get(nelems)
        if o is None:
            o = OpT("record_param_comms")
            g = self.world
            o.args = ('"Collective name": "allreduce", "dtype": "Float", "In msg nelems": %d, "Out msg nelems": %d, '
                      '"Group size": %d, "Global rank start": 0, "Global rank stride": 1, "Process Group Name": "0", '
                      '"Process Group Description": "default_pg", "Process Group Ranks": "%s"'
                      % (nelems, nelems, g, "[" + ", ".join(str(i) for i in range(g)) + "]"))
            o.sizes = ", sizes = [[%d]]" % nelems
            self.comm_opts[nelems] = o
        return o

    def _allreduce(self, b, nbytes):
        self.begin(b, self._comm_opt(nbytes // 4), pre=4)
        self.begin(b, self.o_nccl_ar, USER_ANN, pre=2)
        # record an event on the compute stream, make the NCCL stream wait on it
        corr = self.corr
        self.corr += 2
        rs = b.t + self.c(1)
        b.t = rs + self.c(2.5)
        self.out.append((RT, b.tid, R_EVREC, rs, b.t, corr, self._cur_ext(b)))
        rs = b.t + self.c(1)
        b.t = rs + self.c(2.5)
        self.out.append((RT, b.tid, R_WAITEV, rs, b.t, corr + 1, self._cur_ext(b)))
        self.nfree = max(self.nfree, self.sfree)
        g = self.world
        t = 2.0 * (g - 1) / g * nbytes / self.busbw * 1e9 + 9000 + self.rng.random() * 25000
        self.launch(b, self.k_nccl, int(t), stream=NCCL_STREAM, pre=2)
        self.end(b)
        self.end(b)

    # ---------------------------------------------------------------- optimizer / AMP scaler
    def optimizer(self, m):
        reg = [None, 0]
        self.gregions.append(reg)
        ext = self.begin(m, self.o_opt_step, USER_ANN, pre=10)
        m.t += self.c(25)
        if not self.cfg.small_kernels:
            pb = self.m.param_bytes
            nk = max(1, (len(self.m.params) + 47) // 48)
            for o, ks, traffic in ((self.o_foreach_add, self.k_mta_add, 3),
                                   (self.o_foreach_mul, self.k_mta_mul, 2),
                                   (self.o_foreach_add, self.k_mta_add, 3),
                                   (self.o_foreach_add, self.k_mta_add, 3)):
                self.begin(m, o, pre=6)
                m.t += self.c(8)
                for _ in range(nk):
                    self.launch(m, ks, self.gpu_mem(traffic * pb / nk), pre=3)
                self.end(m)
        else:
            for o_add, o_mul, k_add, k_mul, numel in self.param_ops:
                nb = numel * 4
                for o, ks, tr in ((o_add, k_add, 3), (o_mul, k_mul, 2), (o_add, k_add, 3), (o_add, k_add, 3)):
                    self.begin(m, o, pre=4)
                    self.launch(m, ks, self.gpu_mem(tr * nb))
                    self.end(m)
        self.end(m, post=3)
        self.gregions.remove(reg)
        if reg[0] is not None:
            self.out.append((GANN, self.dev, COMPUTE_STREAM, reg[0], reg[1], self.o_opt_step, ext))

    def gpu_mem(self, nbytes):
        return int(nbytes / (self.gpu.bw * 0.7) * 1e9) + 1600

    def grad_scaler_unscale(self, m):
        self.begin(m, self.o_unscale, pre=20)
        self.launch(m, self.k_unscale, self.gpu_mem(2 * self.m.param_bytes))
        self.end(m)
        # found_inf.item(): a device-to-host copy + stream sync on every step
        self.begin(m, self.o_item, pre=8)
        self.begin(m, self.o_lsd)
        self.memcpy(m, C_D2H_PAGEABLE, 4, blocking=True)
        self.stream_sync(m)
        self.end(m)
        self.end(m)

    def loss_item(self, m):
        """running_loss += loss.item(): a 4-byte DtoH copy and a stream sync at the end of the step."""
        self.begin(m, self.o_item, pre=15)
        self.begin(m, self.o_lsd)
        self.memcpy(m, C_D2H_PAGEABLE, 4, blocking=True)
        self.stream_sync(m)
        self.end(m)
        self.end(m)

    def grad_scaler_update(self, m):
        self.begin(m, self.o_update_scale, pre=10)
        self.launch(m, self.k_fill1, 2200)
        self.end(m)
