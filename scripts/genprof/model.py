"""Model description: a ResNet-style CNN (or a tiny MLP) as a flat list of layers in forward order,
with per-layer op templates (names + recorded shapes), kernels and GPU durations precomputed for
the chosen GPU and precision. Backward is the reversed list.
"""

import json

from . import kernels as K

DT_BYTES = {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2}


class OpT:
    """A CPU op as recorded: name and (static) recorded-shape args in each output flavour."""
    __slots__ = ("name", "jname", "args", "legacy", "sizes")

    def __init__(self, name, dims=None, types=None):
        self.name = name
        self.jname = json.dumps(name)
        if dims is not None:
            d = json.dumps(dims)
            self.args = '"Input Dims": %s, "Input type": %s' % (d, json.dumps(types))
            self.legacy = ('"Input dims": %s, "Input type": [], "Input names": [], "Output dims": [], '
                           '"Output type": [], "Output names": []' % d)
            self.sizes = ", sizes = %s" % d
        else:
            self.args = ""
            self.legacy = ('"Input dims": [], "Input type": [], "Input names": [], "Output dims": [], '
                           '"Output type": [], "Output names": []')
            self.sizes = ""


_OPT_CACHE = {}


def opt(name, dims=None, types=None, record_shapes=True):
    if not record_shapes:
        dims = types = None
    key = (name, json.dumps(dims), json.dumps(types))
    o = _OPT_CACHE.get(key)
    if o is None:
        o = OpT(name, dims, types)
        _OPT_CACHE[key] = o
    return o


class Layer:
    __slots__ = ("kind", "idx", "o", "k", "d", "out_bytes", "params", "first", "block_start",
                 "acc_bytes", "numel", "seq")

    def __init__(self, kind, idx):
        self.kind = kind
        self.idx = idx
        self.o = {}        # op templates
        self.k = {}        # kernels
        self.d = {}        # GPU durations (ns) keyed like k
        self.out_bytes = 0
        self.params = []   # [(name, numel)] fp32 parameters owned by this layer
        self.first = False
        self.block_start = False   # first layer of a residual block: backward accumulates the skip grad here
        self.acc_bytes = 0
        self.numel = 0
        self.seq = 0


class Cost:
    """Roofline-ish GPU time model."""

    def __init__(self, gpu, prec):
        self.gpu = gpu
        self.prec = prec
        if prec == "fp32" or (prec == "tf32" and gpu.cc < (8, 0)):
            self.mm_rate = gpu.fp32 * 0.80
        elif prec == "tf32":
            self.mm_rate = gpu.tf32 * 0.45
        else:
            self.mm_rate = gpu.tc16 * 0.30
        self.bw = gpu.bw * 0.75

    def mm(self, flops, nbytes, eff=1.0):
        return int(max(flops / (self.mm_rate * eff), nbytes / self.bw) * 1e9) + 3500

    def mem(self, nbytes):
        return int(nbytes / self.bw * 1e9) + 1800

    def fp32_mm(self, flops, nbytes):
        return int(max(flops / (self.gpu.fp32 * 0.7), nbytes / self.bw) * 1e9) + 3000


class Model:
    def __init__(self, name, gpu, prec, batch, image, blocks=None, hidden=1024, classes=1000,
                 misaligned=False, record_shapes=True, amp=False):
        self.name = name
        self.gpu = gpu
        self.prec = prec          # compute precision of conv/GEMM
        self.amp = amp            # autocast active (fp32 master weights, casts recorded)
        self.batch = batch
        self.layers = []
        self.rs = record_shapes
        self.cost = Cost(gpu, prec)
        self.arch = gpu.arch
        self.act_prec = prec if prec in ("bf16", "fp16") else "fp32"
        self.dt = DT_BYTES[self.act_prec]
        self.T = K.TORCH_TYPE[self.act_prec]
        self.misaligned = misaligned
        self._variant = 0
        if name in ("mlp", "logreg"):
            self.input_shape = (batch, 1, 28, 28)
            self._mlp(hidden if hidden != 1024 else 256, classes if classes != 1000 else 10, name == "logreg")
        else:
            self.input_shape = (batch, 3, image, image)
            if name == "resnet50":
                self._resnet(blocks or [3, 4, 6, 3], bottleneck=True, hidden=hidden, classes=classes)
            else:
                self._resnet(blocks or [2, 2, 2, 2], bottleneck=False, hidden=hidden, classes=classes)
        self.layers[0].first = True
        self.params = []
        for L in self.layers:
            for pn, numel in L.params:
                self.params.append((L, pn, numel))
        self.param_bytes = sum(n for _, _, n in self.params) * 4
        self.input_bytes = self.input_shape[0] * self.input_shape[1] * self.input_shape[2] * self.input_shape[3] * 4

    # ------------------------------------------------------------ builders
    def _add(self, kind):
        L = Layer(kind, len(self.layers))
        self.layers.append(L)
        return L

    def _var(self):
        self._variant += 1
        return self._variant

    def conv(self, shape, cout, k, stride, pad):
        N, C, H, W = shape
        Ho, Wo = (H + 2 * pad - k) // stride + 1, (W + 2 * pad - k) // stride + 1
        L = self._add("conv")
        T, rs, c, dt = self.T, self.rs, self.cost, self.dt
        wdims = [cout, C, k, k]
        L.o["conv2d"] = opt("aten::conv2d", [[N, C, H, W], wdims, [], [], [], [], []],
                            [T, T, "", "ScalarList", "ScalarList", "ScalarList", "Int"], rs)
        L.o["convolution"] = opt("aten::convolution", [[N, C, H, W], wdims, [], [], [], [], [], [], []],
                                 [T, T, "", "ScalarList", "ScalarList", "ScalarList", "Bool", "ScalarList", "Int"], rs)
        L.o["_convolution"] = opt("aten::_convolution", [[N, C, H, W], wdims, [], [], [], [], [], [], [], [], [], [], []],
                                  [T, T, "", "ScalarList", "ScalarList", "ScalarList", "Bool", "ScalarList", "Int",
                                   "Bool", "Bool", "Bool", "Bool"], rs)
        L.o["cudnn"] = opt("aten::cudnn_convolution", [[N, C, H, W], wdims, [], [], [], [], [], [], []],
                           [T, T, "ScalarList", "ScalarList", "ScalarList", "Int", "Bool", "Bool", "Bool"], rs)
        L.o["empty"] = opt("aten::empty", [[], [], [], [], [], []], ["ScalarList", "Scalar", "", "Device", "", "Scalar"], rs)
        L.o["bwd_conv"] = opt("aten::convolution_backward",
                              [[N, cout, Ho, Wo], [N, C, H, W], wdims, [], [], [], [], [], [], [], []],
                              [T, T, T, "", "ScalarList", "ScalarList", "ScalarList", "Bool", "ScalarList", "Int", "ScalarList"], rs)
        M = N * Ho * Wo
        flops = 2 * M * cout * C * k * k
        in_b, out_b, w_b = N * C * H * W * dt, M * cout * dt, cout * C * k * k * dt
        v = self._var()
        L.k["fwd"] = K.conv("fwd", self.arch, self.prec, M, cout, v)
        L.k["dgrad"] = K.conv("dgrad", self.arch, self.prec, N * H * W, C, v + 1)
        L.k["wgrad"] = K.conv("wgrad", self.arch, self.prec, cout, C * k * k, v + 2)
        eff = 0.8 if k == 1 else 1.0
        L.d["fwd"] = c.mm(flops, in_b + out_b + w_b, eff)
        L.d["dgrad"] = c.mm(flops, in_b + out_b + w_b, eff * 0.9)
        L.d["wgrad"] = c.mm(flops, in_b + out_b + w_b, eff * 0.75)
        if self.amp:
            self._amp_cast(L, wdims, cout * C * k * k)
            L.k["xform"] = K.layout_transform(self.act_prec, M * cout)
            L.d["xform"] = c.mem(2 * out_b)
        L.out_bytes = out_b
        L.numel = M * cout
        L.params.append(("weight", cout * C * k * k))
        return (N, cout, Ho, Wo)

    def _amp_cast(self, L, dims, numel, to=None):
        rs = self.rs
        to = to or (self.act_prec if self.act_prec != "fp32" else "fp16")
        L.o["cast_to"] = opt("aten::to", [dims, [], [], [], []], ["float", "ScalarType", "Bool", "Bool", ""], rs)
        L.o["cast_tocopy"] = opt("aten::_to_copy", [dims, [], [], [], [], [], []],
                                 ["float", "ScalarType", "", "", "", "Bool", ""], rs)
        L.o["cast_empty"] = opt("aten::empty_strided", [[], [], [], [], [], []],
                                ["ScalarList", "ScalarList", "ScalarType", "", "Device", ""], rs)
        tgt = K.TORCH_TYPE[to]
        L.o["cast_copy"] = opt("aten::copy_", [dims, dims, []], [tgt, "float", "Bool"], rs)
        L.k["cast"] = K.ew("cast_down", to, numel)
        L.d["cast"] = self.cost.mem(numel * 6)
        L.acc_bytes = numel * 2
        L.k["cast_back"] = K.ew("cast_up", to, numel)
        L.d["cast_back"] = self.cost.mem(numel * 6)

    def bn(self, shape):
        N, C, H, W = shape
        L = self._add("bn")
        T, rs, c, dt = self.T, self.rs, self.cost, self.dt
        x = [N, C, H, W]
        L.o["nbt_add"] = opt("aten::add_", [[], [], []], ["long int", "Scalar", "Scalar"], rs)
        L.o["batch_norm"] = opt("aten::batch_norm", [x, [C], [C], [C], [C], [], [], [], []],
                                [T, "float", "float", "float", "float", "Scalar", "Scalar", "Scalar", "Scalar"], rs)
        L.o["impl"] = opt("aten::_batch_norm_impl_index", [x, [C], [C], [C], [C], [], [], [], []],
                          [T, "float", "float", "float", "float", "Scalar", "Scalar", "Scalar", "Scalar"], rs)
        L.o["cudnn"] = opt("aten::cudnn_batch_norm", [x, [C], [C], [C], [C], [], [], []],
                           [T, "float", "float", "float", "float", "Scalar", "Scalar", "Scalar"], rs)
        L.o["empty_like"] = opt("aten::empty_like", [x, [], [], [], [], []], [T, "", "", "", "", "Scalar"], rs)
        L.o["empty"] = opt("aten::empty", [[], [], [], [], [], []], ["ScalarList", "Scalar", "", "Device", "", ""], rs)
        L.o["bwd"] = opt("aten::cudnn_batch_norm_backward", [x, x, [C], [C], [C], [C], [C], [], []],
                         [T, T, "float", "float", "float", "float", "float", "Scalar", T], rs)
        L.k["fwd"] = K.bn("fwd", self.act_prec, N, C, H, W)
        L.k["bwd"] = K.bn("bwd", self.act_prec, N, C, H, W)
        L.k["nbt"] = K.ew("add_long", "fp32", 1)
        b = N * C * H * W * dt
        L.d["fwd"] = c.mem(3 * b)
        L.d["bwd"] = c.mem(5 * b)
        L.d["nbt"] = 1600
        L.out_bytes = b
        L.numel = N * C * H * W
        L.params += [("weight", C), ("bias", C)]
        return shape

    def relu(self, shape, inplace=True):
        N, C, H, W = shape
        L = self._add("relu")
        T, rs = self.T, self.rs
        x = [N, C, H, W]
        L.o["relu"] = opt("aten::relu_" if inplace else "aten::relu", [x], [T], rs)
        L.o["clamp"] = opt("aten::clamp_min_" if inplace else "aten::clamp_min", [x, []], [T, "Scalar"], rs)
        L.o["bwd"] = opt("aten::threshold_backward", [x, x, []], [T, T, "Scalar"], rs)
        n = N * C * H * W
        L.k["fwd"] = K.ew("relu", self.act_prec, n)
        L.k["bwd"] = K.ew("threshold_bwd", self.act_prec, n)
        L.d["fwd"] = self.cost.mem(2 * n * self.dt)
        L.d["bwd"] = self.cost.mem(3 * n * self.dt)
        L.out_bytes = 0 if inplace else n * self.dt
        L.numel = n
        return shape

    def maxpool(self, shape):
        N, C, H, W = shape
        Ho, Wo = (H + 2 - 3) // 2 + 1, (W + 2 - 3) // 2 + 1
        L = self._add("maxpool")
        T, rs = self.T, self.rs
        L.o["mp"] = opt("aten::max_pool2d", [[N, C, H, W], [], [], [], [], []],
                        [T, "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar"], rs)
        L.o["mpi"] = opt("aten::max_pool2d_with_indices", [[N, C, H, W], [], [], [], [], []],
                         [T, "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar"], rs)
        L.o["bwd"] = opt("aten::max_pool2d_with_indices_backward", [[N, C, Ho, Wo], [N, C, H, W], [], [], [], [], [], [N, C, Ho, Wo]],
                         [T, T, "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar", "long int"], rs)
        L.o["zero"] = opt("aten::zero_", [[N, C, H, W]], [T], rs)
        L.o["fill"] = opt("aten::fill_", [[N, C, H, W], []], [T, "Scalar"], rs)
        L.k["fwd"] = K.pool("max_fwd", self.act_prec, N * C * Ho * Wo)
        L.k["bwd"] = K.pool("max_bwd", self.act_prec, N * C * Ho * Wo)
        L.k["fill"] = K.ew("fill", self.act_prec, N * C * H * W)
        L.d["fwd"] = self.cost.mem((N * C * H * W + 3 * N * C * Ho * Wo) * self.dt)
        L.d["bwd"] = self.cost.mem((N * C * H * W + 3 * N * C * Ho * Wo) * self.dt) * 2
        L.d["fill"] = self.cost.mem(N * C * H * W * self.dt)
        L.out_bytes = N * C * Ho * Wo * (self.dt + 8)
        L.numel = N * C * Ho * Wo
        return (N, C, Ho, Wo)

    def add(self, shape):
        N, C, H, W = shape
        L = self._add("add")
        x = [N, C, H, W]
        L.o["add"] = opt("aten::add_", [x, x, []], [self.T, self.T, "Scalar"], self.rs)
        L.o["acc"] = opt("aten::add", [x, x, []], [self.T, self.T, "Scalar"], self.rs)
        n = N * C * H * W
        L.k["fwd"] = K.ew("add", self.act_prec, n)
        L.d["fwd"] = self.cost.mem(3 * n * self.dt)
        L.numel = n
        L.acc_bytes = n * self.dt
        return shape

    def avgpool(self, shape):
        N, C, H, W = shape
        L = self._add("avgpool")
        T, rs = self.T, self.rs
        L.o["ap"] = opt("aten::adaptive_avg_pool2d", [[N, C, H, W], []], [T, "ScalarList"], rs)
        L.o["api"] = opt("aten::_adaptive_avg_pool2d", [[N, C, H, W], []], [T, "ScalarList"], rs)
        L.o["bwd"] = opt("aten::_adaptive_avg_pool2d_backward", [[N, C, 1, 1], [N, C, H, W]], [T, T], rs)
        L.k["fwd"] = K.pool("avg_fwd", self.act_prec, N * C)
        L.k["bwd"] = K.pool("avg_bwd", self.act_prec, N * C * H * W)
        L.d["fwd"] = self.cost.mem(N * C * H * W * self.dt)
        L.d["bwd"] = self.cost.mem(N * C * H * W * self.dt)
        L.out_bytes = N * C * self.dt
        L.numel = N * C
        return (N, C, 1, 1)

    def flatten(self, shape):
        N = shape[0]
        F = shape[1] * shape[2] * shape[3]
        L = self._add("flatten")
        L.o["flatten"] = opt("aten::flatten", [list(shape), [], []], [self.T if shape[1] != 1 else "float", "Scalar", "Scalar"], self.rs)
        L.o["view"] = opt("aten::view", [list(shape), []], [self.T if shape[1] != 1 else "float", "ScalarList"], self.rs)
        return (N, F, 1, 1)

    def linear(self, shape, out_f, relu_after=False):
        N, F = shape[0], shape[1]
        L = self._add("linear")
        prec = self.prec
        mis = self.misaligned and (F % 8 or out_f % 8)
        if mis:
            prec = "fp16"      # the planted case: the head runs under fp16 autocast with an odd dimension
        T = K.TORCH_TYPE["fp16" if mis else self.act_prec]
        rs, c = self.rs, self.cost
        L.o["linear"] = opt("aten::linear", [[N, F], [out_f, F], [out_f]], [T, T, T], rs)
        L.o["t"] = opt("aten::t", [[out_f, F]], [T], rs)
        L.o["transpose"] = opt("aten::transpose", [[out_f, F], [], []], [T, "Scalar", "Scalar"], rs)
        L.o["as_strided"] = opt("aten::as_strided", [[out_f, F], [], [], []], [T, "ScalarList", "ScalarList", ""], rs)
        L.o["addmm"] = opt("aten::addmm", [[out_f], [N, F], [F, out_f], [], []], [T, T, T, "Scalar", "Scalar"], rs)
        L.o["mm_dgrad"] = opt("aten::mm", [[N, out_f], [out_f, F]], [T, T], rs)
        L.o["mm_wgrad"] = opt("aten::mm", [[out_f, N], [N, F]], [T, T], rs)
        L.o["tb"] = opt("aten::t", [[F, out_f]], [T], rs)
        L.o["sum"] = opt("aten::sum", [[N, out_f], [], [], []], [T, "ScalarList", "Bool", ""], rs)
        L.o["view"] = opt("aten::view", [[1, out_f], []], [T, "ScalarList"], rs)
        dt = 2 if prec in ("fp16", "bf16") else 4
        flops = 2 * N * F * out_f
        nb = (N * F + F * out_f + N * out_f) * dt
        eff = 0.18 if mis else 0.6
        v = self._var()
        L.k["fwd"] = K.gemm("fwd", self.arch, prec, N, out_f, F, v, bool(mis))
        L.k["dgrad"] = K.gemm("dgrad", self.arch, prec, N, F, out_f, v + 1, bool(mis))
        L.k["wgrad"] = K.gemm("wgrad", self.arch, prec, out_f, F, N, v + 2, bool(mis))
        cm = Cost(self.gpu, prec)
        L.d["fwd"] = cm.mm(flops, nb, eff)
        L.d["dgrad"] = cm.mm(flops, nb, eff)
        L.d["wgrad"] = cm.mm(flops, nb, eff * 0.9)
        L.k["sum"] = K.reduce_sum(prec, out_f, N * out_f)
        L.d["sum"] = c.mem(N * out_f * dt) + 1500
        if self.amp or mis:
            self._amp_cast(L, [out_f, F], out_f * F, "fp16" if mis else None)
        L.out_bytes = N * out_f * dt
        L.numel = N * out_f
        L.params += [("weight", out_f * F), ("bias", out_f)]
        shape = (N, out_f, 1, 1)
        if relu_after:
            self.relu(shape, inplace=False)
        return shape

    def loss(self, shape):
        N, C = shape[0], shape[1]
        L = self._add("loss")
        rs = self.rs
        L.o["ce"] = opt("aten::cross_entropy_loss", [[N, C], [N], [], [], [], []],
                        ["float", "long int", "", "Scalar", "Scalar", "Scalar"], rs)
        L.o["lsm"] = opt("aten::log_softmax", [[N, C], [], []], ["float", "Scalar", ""], rs)
        L.o["_lsm"] = opt("aten::_log_softmax", [[N, C], [], []], ["float", "Scalar", "Bool"], rs)
        L.o["nll_nd"] = opt("aten::nll_loss_nd", [[N, C], [N], [], [], []], ["float", "long int", "", "Scalar", "Scalar"], rs)
        L.o["nll"] = opt("aten::nll_loss", [[N, C], [N], [], [], []], ["float", "long int", "", "Scalar", "Scalar"], rs)
        L.o["nll_fwd"] = opt("aten::nll_loss_forward", [[N, C], [N], [], [], []], ["float", "long int", "", "Scalar", "Scalar"], rs)
        L.o["nll_bwd"] = opt("aten::nll_loss_backward", [[], [N, C], [N], [], [], [], []],
                             ["float", "float", "long int", "", "Scalar", "Scalar", "float"], rs)
        L.o["lsm_bwd"] = opt("aten::_log_softmax_backward_data", [[N, C], [N, C], [], []], ["float", "float", "Scalar", "Scalar"], rs)
        L.o["zero"] = opt("aten::zero_", [[N, C]], ["float"], rs)
        L.o["fill"] = opt("aten::fill_", [[N, C], []], ["float", "Scalar"], rs)
        L.k["lsm_fwd"] = K.loss("lsm_fwd", N, C)
        L.k["nll_fwd"] = K.loss("nll_fwd", N, C)
        L.k["lsm_bwd"] = K.loss("lsm_bwd", N, C)
        L.k["nll_bwd"] = K.loss("nll_bwd", N, C)
        L.k["fill"] = K.ew("fill", "fp32", N * C)
        L.k["seed"] = K.ew("fill", "fp32", 1)
        for key in ("lsm_fwd", "lsm_bwd"):
            L.d[key] = self.cost.mem(3 * N * C * 4) + 1500
        L.d["nll_fwd"] = 3800
        L.d["nll_bwd"] = 2600
        L.d["fill"] = self.cost.mem(N * C * 4)
        L.d["seed"] = 1400
        L.out_bytes = N * C * 4
        L.numel = N * C
        return shape

    # ------------------------------------------------------------ architectures
    def _resnet(self, blocks, bottleneck, hidden, classes):
        s = self.input_shape
        s = self.conv(s, 64, 7, 2, 3)
        s = self.bn(s)
        s = self.relu(s)
        s = self.maxpool(s)
        width = 64
        cin = 64
        for stage, nb in enumerate(blocks):
            w = width * (2 ** stage)
            cout = w * 4 if bottleneck else w
            for b in range(nb):
                stride = 2 if (b == 0 and stage > 0) else 1
                start = len(self.layers)
                x = s
                if bottleneck:
                    s = self.conv(x, w, 1, 1, 0)
                    s = self.bn(s)
                    s = self.relu(s)
                    s = self.conv(s, w, 3, stride, 1)
                    s = self.bn(s)
                    s = self.relu(s)
                    s = self.conv(s, cout, 1, 1, 0)
                    s = self.bn(s)
                else:
                    s = self.conv(x, w, 3, stride, 1)
                    s = self.bn(s)
                    s = self.relu(s)
                    s = self.conv(s, cout, 3, 1, 1)
                    s = self.bn(s)
                if stride != 1 or cin != cout:
                    d = self.conv(x, cout, 1, stride, 0)
                    self.bn(d)
                self.layers[start].block_start = True
                s = self.add(s)
                s = self.relu(s)
                cin = cout
        s = self.avgpool(s)
        s = self.flatten(s)
        h = hidden - 1 if self.misaligned and hidden % 8 == 0 else hidden
        s = self.linear(s, h, relu_after=True)
        s = self.linear(s, classes)
        self.loss(s)

    def _mlp(self, hidden, classes, single=False):
        s = self.flatten(self.input_shape)
        if not single:
            s = self.linear(s, hidden, relu_after=True)
        s = self.linear(s, classes)
        self.loss(s)
