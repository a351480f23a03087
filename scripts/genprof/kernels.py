"""Kernel-name catalog: realistic CUDA kernel names per architecture family and precision.

Names are written in the style each tool prints them: Kineto uses the CUPTI demangled name
(`<4, ...>(int, ...)`), nsys keeps its own demangler's form (`<(int)4, ...>(int, T2, T3)`), a short
name and a mangled name. The strings are written for this generator; they imitate the shape of
cuBLAS / cuDNN / CUTLASS / ATen / NCCL kernel names, they are not copied from a trace.
"""

import hashlib
import re

CTYPE = {"fp32": "float", "tf32": "float", "bf16": "c10::BFloat16", "fp16": "c10::Half"}
NVTYPE = {"fp32": "float", "tf32": "float", "bf16": "__nv_bfloat16", "fp16": "__half"}
TORCH_TYPE = {"fp32": "float", "tf32": "float", "bf16": "c10::BFloat16", "fp16": "c10::Half"}


class KSpec:
    """One kernel as launched: name + launch geometry. Writers cache their own encodings on it."""
    __slots__ = ("name", "grid", "block", "regs", "smem_static", "smem_dyn", "cache")

    def __init__(self, name, grid, block, regs, smem_static=0, smem_dyn=0):
        self.name = name
        self.grid = grid
        self.block = block
        self.regs = regs
        self.smem_static = smem_static
        self.smem_dyn = smem_dyn
        self.cache = {}


_SPECS = {}


def spec(name, grid, block, regs, smem_static=0, smem_dyn=0):
    key = (name, grid, block)
    ks = _SPECS.get(key)
    if ks is None:
        ks = KSpec(name, grid, block, regs, smem_static, smem_dyn)
        _SPECS[key] = ks
    return ks


# ---------------------------------------------------------------- name forms used by nsys

def short_name(name):
    s = name[5:] if name.startswith("void ") else name
    s = s.replace("(anonymous namespace)", "{anon}")
    depth = 0
    cut = len(s)
    for i, ch in enumerate(s):
        if ch == "<" and depth == 0 and not s.startswith("operator", max(0, i - 8)):
            cut = i
            break
        if ch == "(" and depth == 0:
            cut = i
            break
    base = s[:cut]
    if "::" in base:
        base = base.rsplit("::", 1)[1]
    return base


def nsys_demangled(name):
    """nsys' demangler prints integer template args with casts and unnamed params as T<n>."""
    if not name.startswith("void "):
        return name
    s = re.sub(r"([<]|, )(\d+)(?=[,>])", r"\1(int)\2", name)
    s = re.sub(r", (\d+)ul>", r", (unsigned long)\1>", s)
    s = s.replace("char*", "char *").replace(" >", ">").replace("{lambda", "[lambda").replace(")#", ") (instance ")
    s = re.sub(r"\(instance (\d+)\}", r"(instance \1)]", s)
    # collapse the parameter list of templated kernels to T-placeholders like nsys does
    if ">(" in s:
        head, _, _ = s.rpartition(">(")
        nparams = name.rsplit(">(", 1)[1].count(",") + 1
        s = head + ">(" + ", ".join("T%d" % (i + 1) for i in range(min(nparams, 3))) + ")"
    return s


def mangled(name):
    if not name.startswith("void "):
        base = name.split("(", 1)[0]
        return base if "(" not in name else "_Z%d%sP24ncclDevKernelArgsStorageILm4096EE" % (len(base), base)
    qual = name[5:].replace("(anonymous namespace)", "_GLOBAL__N_1").split("<", 1)[0].split("(", 1)[0]
    parts = [p for p in qual.split("::") if p]
    h = hashlib.sha1(name.encode()).hexdigest()[:8]
    enc = "".join("%d%s" % (len(p), p) for p in parts)
    return "_ZN%sIL%sEEEvT_" % (enc, h) if len(parts) > 1 else "_Z%d%sIL%sEEvT_" % (len(parts[0]), parts[0], h)


# ---------------------------------------------------------------- geometry helpers

def _ew_geom(numel, vec=4, threads=128):
    g = max(1, min((numel + threads * vec - 1) // (threads * vec), 2 ** 31 - 1))
    return (g, 1, 1), (threads, 1, 1)


def _tile_geom(m, n, tm, tn, threads, batch=1):
    return (max(1, (n + tn - 1) // tn), max(1, (m + tm - 1) // tm), batch), (threads, 1, 1)


# ---------------------------------------------------------------- elementwise / reductions

def ew(kind, prec, numel):
    T = CTYPE[prec]
    if kind == "relu":
        lam = {"float": "8", "c10::BFloat16": "10", "c10::Half": "9"}[T]
        f = ("at::native::(anonymous namespace)::clamp_min_scalar_kernel_impl(at::TensorIteratorBase&, c10::Scalar)"
             "::{lambda()#1}::operator()() const::{lambda()#%s}::operator()() const::{lambda(%s)#1}" % (lam, T))
        n = "void at::native::vectorized_elementwise_kernel<4, %s, std::array<char*, 2ul> >(int, %s, std::array<char*, 2ul>)" % (f, f)
    elif kind == "add":
        f = "at::native::CUDAFunctor_add<%s>" % T
        n = "void at::native::vectorized_elementwise_kernel<4, %s, std::array<char*, 3ul> >(int, %s, std::array<char*, 3ul>)" % (f, f)
    elif kind == "add_long":
        f = "at::native::CUDAFunctorOnSelf_add<long>"
        n = "void at::native::vectorized_elementwise_kernel<4, %s, std::array<char*, 2ul> >(int, %s, std::array<char*, 2ul>)" % (f, f)
    elif kind == "fill":
        f = "at::native::FillFunctor<%s>" % T
        n = "void at::native::vectorized_elementwise_kernel<4, %s, std::array<char*, 1ul> >(int, %s, std::array<char*, 1ul>)" % (f, f)
    elif kind == "threshold_bwd":
        f = ("at::native::(anonymous namespace)::threshold_kernel_impl<%s>(at::TensorIteratorBase&, %s, %s)"
             "::{lambda(%s, %s)#1}" % (T, T, T, T, T))
        n = "void at::native::vectorized_elementwise_kernel<4, %s, std::array<char*, 3ul> >(int, %s, std::array<char*, 3ul>)" % (f, f)
    elif kind == "mul":
        f = "at::native::AUnaryFunctor<%s, %s, %s, at::native::binary_internal::MulFunctor<%s> >" % (T, T, T, T)
        n = "void at::native::vectorized_elementwise_kernel<4, %s, std::array<char*, 2ul> >(int, %s, std::array<char*, 2ul>)" % (f, f)
    elif kind == "cast_down":   # fp32 -> bf16/fp16 (autocast)
        fn = "bfloat16_copy_kernel_cuda" if prec == "bf16" else "float16_copy_kernel_cuda"
        f = "at::native::%s(at::TensorIteratorBase&)::{lambda(float)#1}" % fn
        n = "void at::native::vectorized_elementwise_kernel<4, %s, std::array<char*, 2ul> >(int, %s, std::array<char*, 2ul>)" % (f, f)
    elif kind == "cast_up":     # bf16/fp16 -> fp32 (ToCopyBackward)
        f = ("at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const"
             "::{lambda()#7}::operator()() const::{lambda(float)#1}")
        n = ("void at::native::unrolled_elementwise_kernel<%s, std::array<char*, 2ul>, 4, TrivialOffsetCalculator<1, unsigned int>, "
             "TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >"
             "(int, %s, std::array<char*, 2ul>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, "
             "at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)" % (f, f))
    else:
        raise KeyError(kind)
    grid, block = _ew_geom(numel)
    return spec(n, grid, block, 16 if kind in ("fill", "add_long") else 24 + (4 if T != "float" else 0))


def reduce_sum(prec, numel_out, numel_in):
    T = "float"
    op = ("at::native::ReduceOp<%s, at::native::func_wrapper_t<%s, at::native::sum_functor<%s, %s, %s>::operator()"
          "(at::TensorIterator&)::{lambda(%s, %s)#1}>, unsigned int, %s, 4>" % (T, T, T, T, T, T, T, T))
    n = "void at::native::reduce_kernel<512, 1, %s>(%s)" % (op, op)
    return spec(n, (max(1, numel_out // 32), 1, 1), (32, 16, 1), 32, 0, 0)


def multi_tensor(kind, n_tensors_chunk):
    if kind == "add":
        md, fn, opn = "TensorListMetadata<2>", "BinaryOpListAlphaFunctor<float, 2, 2, 0>", "std::plus<float>"
    elif kind == "mul":
        md, fn, opn = "TensorListMetadata<1>", "BinaryOpScalarFunctor<float, 1, 1, 0>", "std::multiplies<float>"
    else:  # amp unscale
        md, fn = "TensorListMetadata<1>", "UnaryOpFunctor<float, 1, 1, 0>"
        opn = ("at::native::_amp_foreach_non_finite_check_and_unscale_cuda_(c10::ArrayRef<at::Tensor>, at::Tensor&, "
               "at::Tensor const&)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}")
    ns = "at::native::(anonymous namespace)::"
    n = "void %smulti_tensor_apply_kernel<%s%s, %s%s, %s, float>(%s%s, %s%s, %s, float)" % (
        ns, ns, md, ns, fn, opn, ns, md, ns, fn, opn)
    return spec(n, (n_tensors_chunk, 1, 1), (512, 1, 1), 32)


# ---------------------------------------------------------------- normalization / pooling / loss

def bn(direction, prec, N, C, H, W):
    t = NVTYPE[prec]
    if prec in ("fp32", "tf32"):
        if direction == "fwd":
            n = ("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>(cudnnTensorStruct, float const*, "
                 "cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, float)")
        else:
            n = ("void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>(float, float, float, float, "
                 "cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, "
                 "float*, float*, float const*, float const*, float)")
        grid, block = (C, max(1, min(N * H * W // 16384, 16)), 1), (512, 1, 1)
    else:
        k = "bn_fw_tr_1C11_singleread_spec" if direction == "fwd" else "bn_bw_1C11_singleread_spec"
        if direction == "fwd":
            args = ("cudnnTensorStruct, %s const*, cudnnTensorStruct, %s*, float const*, float const*, float, float, "
                    "float*, float*, float*, float*, float, float" % (t, t))
        else:
            args = ("float, float, float, float, cudnnTensorStruct, %s const*, cudnnTensorStruct, %s const*, "
                    "cudnnTensorStruct, %s*, float const*, float*, float*, float const*, float const*, float" % (t, t, t))
        n = "void cudnn::%s<%s, 512, true, 1, 2, 0>(%s)" % (k, t, args)
        grid, block = (max(1, (N * H * W) // 512), 1, 1), (512, 1, 1)
    return spec(n, grid, block, 40 if direction == "fwd" else 56, 8192 if direction == "bwd" else 4096)


def pool(kind, prec, numel):
    T = CTYPE[prec]
    ns = "at::native::(anonymous namespace)::"
    if kind == "max_fwd":
        n = ("void %smax_pool_forward_nchw<%s>(int, %s const*, long, long, long, int, int, int, int, int, int, int, int, int, int, %s*, long*)"
             % (ns, T, T, T))
    elif kind == "max_bwd":
        n = ("void %smax_pool_backward_nchw<%s>(%s const*, long const*, int, long, long, long, int, int, int, int, int, int, int, int, int, int, %s*)"
             % (ns, T, T, T))
    elif kind == "avg_fwd":
        n = "void %sadaptive_average_pool<%s>(%s const*, %s*, int, int, int, int, long, long, long)" % (ns, T, T, T)
    else:
        n = "void %sadaptive_average_gradinput<%s>(%s*, %s const*, int, int, int, int)" % (ns, T, T, T)
    grid, block = _ew_geom(numel, vec=1, threads=256)
    return spec(n, grid, block, 32)


def loss(kind, N, classes):
    ns = "at::native::(anonymous namespace)::"
    if kind == "lsm_fwd":
        n = ("void %scunn_SoftMaxForward<4, float, float, float, %sLogSoftMaxForwardEpilogue>(float*, float const*, int)" % (ns, ns))
        return spec(n, (N, 1, 1), (512, 1, 1), 38, 0, 64)
    if kind == "lsm_bwd":
        n = ("void %scunn_SoftMaxBackward<4, float, float, float, %sLogSoftMaxBackwardEpilogue>(float*, float const*, float const*, long)" % (ns, ns))
        return spec(n, (N, 1, 1), (512, 1, 1), 30, 0, 64)
    if kind == "nll_fwd":
        n = ("void %snll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, float*, float const*, long const*, float const*, bool, long, long, long, long)" % ns)
        return spec(n, (1, 1, 1), (32, 1, 1), 30, 256)
    n = ("void %snll_loss_backward_reduce_cuda_kernel_2d<float, long>(float*, float const*, long const*, float const*, float const*, bool, int, int, long, long)" % ns)
    return spec(n, (1, 1, 1), (32, 1, 1), 24)


# ---------------------------------------------------------------- GEMM / convolution

def _gemm_name(arch, prec, tr, variant, misaligned):
    if misaligned and prec in ("fp16", "bf16"):
        if arch in ("volta", "turing"):
            return "volta_fp16_sgemm_fp16_64x32_sliced1x4_%s" % tr
        t = "f16" if prec == "fp16" else "bf16"
        relu = "" if prec == "fp16" else "_relu"
        k = "cutlass_80_tensorop_%s_s16816gemm%s_%s_64x64_32x6_%s_align1" % (t, relu, t, tr)
        return "void cutlass::Kernel2<%s>(%s::Params)" % (k, k)
    if prec == "fp32" or (prec == "tf32" and arch in ("volta", "turing")):
        if arch in ("volta", "turing"):
            return ["volta_sgemm_128x64_%s", "volta_sgemm_64x32_sliced1x4_%s", "volta_sgemm_128x32_%s"][variant % 3] % tr
        if arch in ("ampere", "ada"):
            return ["ampere_sgemm_128x64_%s", "ampere_sgemm_64x32_sliced1x4_%s", "ampere_sgemm_128x32_%s"][variant % 3] % tr
        # Hopper/Blackwell cuBLAS still runs FP32 SIMT GEMMs on sm80 FFMA xmma kernels
        return ("sm80_xmma_gemm_f32f32_f32f32_f32_%s_n_tilesize%s_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas"
                % (tr, ["128x128x8", "64x64x8", "128x64x8"][variant % 3]))
    if prec == "tf32":
        if arch == "hopper" or arch == "blackwell":
            return "sm90_xmma_gemm_tf32f32_tf32f32_f32_%s_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas" % tr
        if variant % 2:
            k = "cutlass_80_tensorop_s1688gemm_128x128_32x3_%s_align4" % tr
            return "void cutlass::Kernel<%s>(%s::Params)" % (k, k)
        return "sm80_xmma_gemm_tf32f32_tf32f32_f32_%s_n_tilesize128x128x16_stage4_warpsize2x2x1_tensor16x8x8_execute_kernel__5x_cublas" % tr
    # fp16 / bf16 Tensor Cores
    if arch == "volta":
        return "volta_fp16_s884gemm_fp16_128x128_ldg8_f2f_%s" % tr
    if arch == "turing":
        return "turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_%s" % tr
    t = "bf16bf16_bf16f32_f32" if prec == "bf16" else "f16f16_f16f32_f32"
    if arch in ("ampere", "ada"):
        if prec == "bf16" and variant % 2:
            k = "cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_%s_align8" % tr
            return "void cutlass::Kernel2<%s>(%s::Params)" % (k, k)
        if prec == "fp16" and variant % 2:
            return "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_64x3_%s" % tr
        return "sm80_xmma_gemm_%s_%s_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_execute_kernel__5x_cublas" % (t, tr)
    if arch == "hopper":
        if variant % 2:
            return "nvjet_tst_128x128_64x4_1x2_h_bz_%s" % tr.upper().replace("N", "N").ljust(3, "T")
        return "sm90_xmma_gemm_%s_%s_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas" % (t, tr)
    return "nvjet_sm100_tst_256x128_64x4_2x1_2cta_v_bz_%s" % tr.upper().ljust(3, "N")


def gemm(role, arch, prec, M, N, K, variant=0, misaligned=False):
    tr = {"fwd": "tn", "dgrad": "nn", "wgrad": "nt"}[role]
    name = _gemm_name(arch, prec, tr, variant, misaligned)
    if "sgemm" in name and "128x64" in name:
        grid, block = _tile_geom(M, N, 128, 64, 128)
    elif "sgemm" in name:
        grid, block = _tile_geom(M, N, 64, 32, 128)
    else:
        grid, block = _tile_geom(M, N, 128, 128, 256 if "xmma" in name or "nvjet" in name else 128)
    tc = not ("sgemm" in name or "ffma" in name)
    return spec(name, grid, block, 168 if tc else 126, 0 if tc else 16384, 73728 if tc else 0)


def _conv_fp32(arch, role, variant):
    if arch in ("ampere", "ada", "hopper", "blackwell") and variant % 2 == 0:
        return {
            "fwd": "sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_tilesize128x128x8_stage3_warpsize2x2x1_g1_ffma_aligna4_alignc4_execute_kernel__5x_cudnn",
            "dgrad": "sm80_xmma_dgrad_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_tilesize64x64x8_stage3_warpsize1x2x1_g1_ffma_execute_kernel__5x_cudnn",
            "wgrad": "sm80_xmma_wgrad_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw_tilesize128x128x8_stage3_warpsize2x2x1_g1_ffma_execute_kernel__5x_cudnn",
        }[role]
    return {
        "fwd": ("void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>(int, int, int, float const*, "
                "int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)"),
        "dgrad": ("void cudnn::detail::dgrad_engine<float, 128, 6, 7, 3, 3, 5, false>(int, int, int, float const*, int, float const*, "
                  "int, float*, kernel_grad_params, unsigned long long, int, unsigned long long, int, float, int, int, int)"),
        "wgrad": ("void cudnn::cnn::wgrad_alg0_engine<float, 128, 6, 7, 3, 3, 5, false, 512>(int, int, int, float const*, int, "
                  "float*, float const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)"),
    }[role]


def _conv_name(arch, prec, role, variant):
    if prec == "fp32" or (prec == "tf32" and arch in ("volta", "turing")):
        if arch in ("volta", "turing") and variant % 3 == 1:
            return {"fwd": "volta_scudnn_128x64_relu_interior_nn_v1",
                    "dgrad": "volta_scudnn_128x64_stridedB_splitK_small_nn_v1",
                    "wgrad": "volta_scudnn_128x128_stridedB_splitK_medium_nn_v1"}[role]
        return _conv_fp32(arch, role, variant)
    if prec == "tf32":
        return ("sm80_xmma_%s_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_execute_kernel__5x_cudnn"
                % {"fwd": "fprop", "dgrad": "dgrad", "wgrad": "wgrad"}[role])
    if arch in ("volta", "turing"):
        pre = "volta_fp16_s884cudnn_fp16" if arch == "volta" else "turing_fp16_s1688cudnn_fp16"
        return {"fwd": pre + "_256x128_ldg8_relu_f2f_exp_small_nhwc_tn_v1",
                "dgrad": pre + "_128x128_ldg8_dgrad_f2f_exp_small_nhwc_tn_v1",
                "wgrad": pre + "_128x128_ldg8_wgrad_idx_exp_interior_nhwc_nt_v1"}[role]
    t = "bf16bf16_bf16f32_f32" if prec == "bf16" else "f16f16_f16f32_f32"
    r = {"fwd": "fprop", "dgrad": "dgrad", "wgrad": "wgrad"}[role]
    if arch in ("ampere", "ada"):
        tile = ["128x128x32_stage4", "64x128x32_stage4", "64x64x32_stage5"][variant % 3]
        return "sm80_xmma_%s_implicit_gemm_%s_nhwckrsc_nhwc_tilesize%s_warpsize2x2x1_g1_tensor16x8x16_execute_kernel__5x_cudnn" % (r, t, tile)
    if arch == "hopper":
        return "sm90_xmma_%s_implicit_gemm_%s_nhwckrsc_nhwc_tilesize128x128x64_warpgroupsize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn" % (r, t)
    return "sm100_xmma_%s_implicit_gemm_%s_nhwckrsc_nhwc_tilesize256x128x64_cgasize2x1x1_g1_execute_segment_k_off_kernel__5x_cudnn" % (r, t)


def conv(role, arch, prec, M, N, variant=0):
    name = _conv_name(arch, prec, role, variant)
    if name.startswith("void"):
        grid, block = _tile_geom(M, N, 128, 64, 256)
        return spec(name, grid, block, 64, 6400, 0)
    grid, block = _tile_geom(M, N, 128, 128, 128 if "ffma" in name or "scudnn" in name else 256)
    return spec(name, grid, block, 128 if "ffma" in name else 168, 0, 49152 if "ffma" in name else 81920)


def layout_transform(prec, numel, to_nhwc=True):
    t = NVTYPE[prec]
    n = ("void %s<%s, %s, float, true, false, (cudnnKernelDataType_t)%d>(cudnnTensor4dStruct, %s const*, cudnnTensor4dStruct, %s*)"
         % ("nchwToNhwcKernel" if to_nhwc else "nhwcToNchwKernel", t, t, 2 if prec == "bf16" else 0, t, t))
    grid, block = _ew_geom(numel, vec=8, threads=256)
    return spec(n, grid, block, 26)


def nccl_allreduce(arch, dtype="f32"):
    if arch in ("volta", "turing"):
        t = {"f32": "float", "bf16": "bf16", "f16": "half"}[dtype]
        return spec("ncclKernel_AllReduce_RING_LL_Sum_%s(ncclWorkElem)" % t, (2, 1, 1), (256, 1, 1), 96, 41744)
    return spec("ncclDevKernel_AllReduce_Sum_%s_RING_LL(ncclDevKernelArgsStorage<4096ul>)" % dtype,
                (2, 1, 1), (512, 1, 1), 96, 45056)
