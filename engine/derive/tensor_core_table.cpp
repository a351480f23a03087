// engine/derive/tensor_core_table.cpp — the maintained Tensor Core pattern table (data, not logic).
//
// Order matters: the first matching row decides, so every negative row precedes the positive rows.
// Negative rows exist because several vendor names contain a Tensor Core marker but run plain FP32
// FMA code (reference/format_variants.md). Every change here must keep
// tests/golden/tensor_core_kernels.tsv (real kernel names, reviewed by hand) passing.
#include "engine/derive/tensor_cores.hpp"

namespace proflint {

namespace {

constexpr TensorCoreRule kRules[] = {
    // ---- negative: FP32 FMA / SIMT code whose name looks like a Tensor Core kernel ----------
    {"ffma", false, false, "FP32 FFMA (SIMT) main loop, e.g. sm80_xmma_gemm_f32f32_..._ffma"},
    {"simt", false, false, "CUTLASS SIMT kernel (CUDA cores), e.g. cutlass_80_simt_sgemm"},
    {"_f32f32_f32f32_f32", false, false, "xmma kernel with FP32 inputs and FP32 math (no TF32)"},
    {"^(?!.*tf32).*sgemm", false, false, "FP32 SGEMM without TF32 (ampere_sgemm, volta_sgemm, implicit_convolve_sgemm)"},
    {"scudnn", false, false, "cuDNN FP32 convolution kernel (volta_scudnn_*)"},
    {"reshape_and_cache", false, false, "vLLM KV-cache copy kernel (its name mentions flash but it does no math)"},

    // ---- positive: NVIDIA Tensor Cores ---------------------------------------------------------
    {"tensorop", true, false, "CUTLASS tensor-op tile (HMMA/TF32), e.g. cutlass_80_tensorop_s1688gemm"},
    {"wmma", true, false, "WMMA Tensor Core API (NVIDIA) / RDNA WMMA (AMD)"},
    {"hmma|imma", true, false, "HMMA/IMMA Tensor Core instruction in the kernel name"},
    {"wgmma|gmma", true, false, "Hopper warpgroup MMA"},
    {"[hsi](884|1688|16816|8816)|i16832|c1688|16816", true, false,
     "cuBLAS/cuDNN Tensor Core tile (h884, s884, h1688, s1688, h16816, s16816, i8816; PyProf/TB allowlist)"},
    {"dgrad_1x1_stride_2x2|first_layer_wgrad_kernel|conv1x1|conv2d_c1_k1|direct_group", true, false,
     "cuDNN Tensor Core kernel from the PyProf/TensorBoard allowlist"},
    {"xmma", true, false, "cuBLAS/cuDNN xmma kernel (sm80_xmma, sm90_xmma) with non-FP32 math"},
    {"nvjet", true, false, "cuBLASLt nvjet kernel (Hopper/Blackwell)"},
    {"tf32", true, false, "TF32 math runs only on Tensor Cores"},
    {"cutlass::device_kernel<.*gemm", true, false, "CUTLASS 3.x GEMM kernel (SM90+ warpgroup MMA)"},
    {"^(?=.*(gemm|bmm|matmul|fmha))(?=.*(e4m3|e5m2|e2m1))", true, true, "FP8/FP4 GEMM or attention (Tensor Core only formats)"},
    {"(bf16|fp16|f16).*(gemm|conv(?!ert))|(gemm|conv(?!ert)).*(bf16|fp16|f16)", true, false, "half-precision GEMM/convolution kernel"},
    {"fmha|flash_fwd|flash_bwd|flash_attn|attn_fwd|attn_bwd", true, false,
     "fused attention kernel (FlashAttention/FMHA run in FP16/BF16/FP8 on Tensor Cores)"},

    // ---- positive: AMD matrix cores (MFMA) ----------------------------------------------------
    {"Cijk_.*_MI\\d+x\\d+x\\d+", true, false, "rocBLAS/hipBLASLt Tensile kernel with an MFMA tile (MI<M>x<N>x<K>)"},
    {"xdl", true, false, "Composable Kernel XDL (MFMA) kernel"},
    {"_gtcx", true, false, "MIOpen implicit-GEMM kernel with XDLOPS (MFMA)"},
    {"mfma", true, true, "AMD MFMA instruction in the kernel name"},
};

}  // namespace

std::span<const TensorCoreRule> tensor_core_rules() { return kRules; }

}  // namespace proflint
