// engine/derive/tensor_core_table.cpp — the maintained Tensor Core pattern table (data, not logic).
//
// Order matters: the first matching row decides, so every negative row precedes the positive rows.
// Negative rows exist because several vendor names contain a Tensor Core marker but run plain FP32
// FMA code (reference/format_variants.md), and because libraries name their helper kernels
// (softmax statistics, dQ conversion, split-K reduction) after the attention or GEMM they serve.
// Pattern syntax: tensor_cores.hpp (spaces = and, '|' = or, '!' = none of, '#' = digits,
// 'a~b' = a not followed by b). Every change here must keep tests/golden/tensor_core_kernels.tsv
// (real kernel names, reviewed by hand) passing, and the current library names with their sources
// in tests/unit/derive_tensor_core_golden_test.cpp (kCurrentNames).
#include "engine/derive/tensor_cores.hpp"

namespace proflint {

namespace {

constexpr TensorCoreRule kRules[] = {
    // ---- negative: FP32 FMA / SIMT code whose name looks like a Tensor Core kernel ----------
    {"ffma|UniversalFMA", false, false,
     "FP32 FFMA (SIMT) main loop, e.g. sm80_xmma_gemm_f32f32_..._ffma or CUTLASS 3 cute::UniversalFMA"},
    {"simt", false, false, "CUTLASS SIMT kernel (CUDA cores), e.g. cutlass_80_simt_sgemm"},
    {"_f32f32_f32f32_f32", false, false, "xmma kernel with FP32 inputs and FP32 math (no TF32)"},
    {"sgemm !tf32", false, false, "FP32 SGEMM without TF32 (ampere_sgemm, volta_sgemm, implicit_convolve_sgemm)"},
    {"scudnn", false, false, "cuDNN FP32 convolution kernel (volta_scudnn_*)"},
    {"reshape_and_cache", false, false, "vLLM KV-cache copy kernel (its name mentions flash but it does no math)"},
    {"gemv|gemmSN_|gemmk1_kernel|dot_kernel", false, false,
     "cuBLAS matrix-vector / small-N / dot kernel (CUDA cores, memory-bound)"},
    {"reduce", false, false, "reduction kernel, e.g. cuBLAS splitKreduce_kernel after a split-K GEMM"},
    {"elementwise", false, false, "elementwise kernel (its template arguments may name a GEMM or a half type)"},
    {"OffsetsKernel", false, false, "cuDNN helper computing convolution offsets (cask_cudnn::computeOffsetsKernel)"},
    // Attention helpers: row statistics, accumulator conversion and split combination do no MMA.
    {"dot_do_o|convert_dq|convert_dkv|clear_dkvaccum|splitkv_combine|mla_combine|FwdCombine|BwdPreprocess|"
     "BwdPostprocess|prepare_varlen|OGradDotO|ConvertQGrad",
     false, false,
     "attention helper kernel (softmax dO·O, dQ conversion, split-KV combine) without matrix multiply"},
    {"fmha_cutlass _f32_ _sm50|_sm70|_sm75", false, false,
     "PyTorch/xformers memory-efficient attention in FP32 before Ampere (SIMT fallback)"},

    // ---- positive: NVIDIA Tensor Cores ---------------------------------------------------------
    {"tensorop", true, false, "CUTLASS tensor-op tile (HMMA/TF32), e.g. cutlass_80_tensorop_s1688gemm, cutlass3x_sm90_tensorop"},
    {"wmma", true, false, "WMMA Tensor Core API (NVIDIA) / RDNA WMMA (AMD)"},
    {"hmma|imma", true, false, "HMMA/IMMA Tensor Core instruction in the kernel name"},
    {"wgmma|gmma|tcgen05", true, false, "Hopper warpgroup MMA (wgmma/hgmma) or Blackwell tcgen05 MMA"},
    {"h884|s884|i884|h1688|s1688|i1688|h8816|s8816|i8816|i16832|c1688|16816", true, false,
     "cuBLAS/cuDNN Tensor Core tile (h884, s884, h1688, s1688, h16816, s16816, i8816; PyProf/TB allowlist)"},
    {"dgrad_1x1_stride_2x2|first_layer_wgrad_kernel|conv1x1|conv2d_c1_k1|direct_group", true, false,
     "cuDNN Tensor Core kernel from the PyProf/TensorBoard allowlist"},
    {"xmma", true, false, "cuBLAS/cuDNN xmma kernel (sm80_xmma, sm90_xmma, sm100_xmma) with non-FP32 math"},
    {"nvjet", true, false, "cuBLASLt nvjet kernel (Hopper/Blackwell)"},
    {"tf32", true, false, "TF32 math runs only on Tensor Cores"},
    {"cutlass::device_kernel< gemm", true, false, "CUTLASS 3.x GEMM kernel (SM90+ warpgroup MMA)"},
    {"gemm|bmm|matmul|fmha e4m3|e5m2|e2m1|fp8|fp4 !fbgemm", true, true,
     "FP8/FP4 GEMM or attention (Tensor Core only formats; fbgemm_gpu quantization kernels excluded)"},
    {"bf16|fp16|f16 gemm|conv~ert", true, false, "half-precision GEMM/convolution kernel"},
    {"fmha|flash_fwd|flash_bwd|flash_attn|attn_fwd|attn_bwd|FlashAttnFwd|FlashAttnBwd|compute_attn_ws|native_sdpa|"
     "flash_fprop|flash_bprop|FmhaFwd|FmhaBwd",
     true, false,
     "fused attention kernel (FlashAttention 2/3, cuDNN SDPA, FMHA: FP16/BF16/FP8 on Tensor Cores)"},

    // ---- positive: AMD matrix cores (MFMA) ----------------------------------------------------
    {"Cijk_ _MI#x#x#", true, false, "rocBLAS/hipBLASLt Tensile kernel with an MFMA tile (MI<M>x<N>x<K>)"},
    {"xdl", true, false, "Composable Kernel XDL (MFMA) kernel"},
    {"_gtcx", true, false, "MIOpen implicit-GEMM kernel with XDLOPS (MFMA)"},
    {"mfma", true, true, "AMD MFMA instruction in the kernel name"},
};

}  // namespace

std::span<const TensorCoreRule> tensor_core_rules() { return kRules; }

}  // namespace proflint
