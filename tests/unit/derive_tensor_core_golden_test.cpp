// tests/unit/derive_tensor_core_golden_test.cpp — every real kernel name, classified as reviewed.
//
// tests/golden/tensor_core_kernels.tsv lists each distinct kernel name found in ../shared/realdata
// (scripts/list_kernel_names.py) with the Tensor Core verdict and category a human approved. The
// test never rewrites it unless PROFLINT_UPDATE_GOLDENS=1; then the reviewer reads the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/derive/categories.hpp"
#include "engine/derive/tensor_cores.hpp"
#include "tests/support/realdata.hpp"

namespace proflint {
namespace {

struct GoldenRow {
  std::string name;
  std::string is_tc;
  std::string category;
};

std::filesystem::path golden_path() { return testing::source_dir() / "tests" / "golden" / "tensor_core_kernels.tsv"; }

constexpr const char* kHeader =
    "# Every distinct kernel name in ../shared/realdata (scripts/list_kernel_names.py) with proflint's Tensor Core\n"
    "# verdict and category, reviewed by hand. Rewrite with PROFLINT_UPDATE_GOLDENS=1 and review the diff.\n"
    "name\tis_tc\tcategory\n";

std::vector<GoldenRow> read_golden() {
  std::ifstream in(golden_path());
  std::vector<GoldenRow> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line == "name\tis_tc\tcategory") continue;
    std::istringstream fields(line);
    GoldenRow row;
    std::getline(fields, row.name, '\t');
    std::getline(fields, row.is_tc, '\t');
    std::getline(fields, row.category, '\t');
    rows.push_back(row);
  }
  return rows;
}

TEST(DeriveTensorCoreGolden, EveryRealKernelNameMatchesTheReviewedVerdict) {
  auto rows = read_golden();
  ASSERT_GT(rows.size(), 600u) << "golden file missing or truncated: " << golden_path();
  const char* update = std::getenv("PROFLINT_UPDATE_GOLDENS");
  if (update && std::string(update) == "1") {
    std::ofstream out(golden_path());
    out << kHeader;
    for (const auto& row : rows)
      out << row.name << '\t' << (classify_tensor_core(row.name).uses_tensor_cores ? 1 : 0) << '\t' << kernel_category(row.name) << '\n';
    GTEST_SKIP() << "rewrote " << golden_path() << ": review the diff";
  }
  int mismatches = 0;
  for (const auto& row : rows) {
    auto verdict = classify_tensor_core(row.name);
    std::string is_tc = verdict.uses_tensor_cores ? "1" : "0";
    EXPECT_EQ(is_tc, row.is_tc) << row.name << " (rule: " << verdict.why << ")";
    EXPECT_EQ(std::string(kernel_category(row.name)), row.category) << row.name;
    if (is_tc != row.is_tc || kernel_category(row.name) != row.category) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0);
}

// Current library kernel names that ../shared/realdata does not contain (issue 21, point 6), each
// with the verdict a reviewer expects from the name alone and where the name comes from. Template
// argument lists are shortened ("...") where the source gives them only in part; the matched words
// are as the library emits them. A name that cannot tell (Triton templates, cuDNN runtime-fusion
// matmuls) expects false here: the op fallback decides those (derive_tensor_core_matcher_test.cpp).
struct CurrentName {
  const char* name;
  bool is_tc;
  const char* category;
  const char* source;
};

constexpr CurrentName kCurrentNames[] = {
    // ---- FlashAttention 3 (Hopper, warp-specialised) ----
    {"void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, "
     "cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<80>, cute::C<256> >, 256, "
     "cutlass::bfloat16_t, float, cutlass::arch::Sm90>, flash::CollectiveEpilogueFwd<...>, "
     "flash::VarlenDynamicPersistentTileScheduler<...> > > >(...)",
     true, "attention", "Dao-AILab/flash-attention hopper/flash_fwd_launch_template.h (AttnKernel), as shown by nsys"},
    {"void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnBwdSm90<flash::CollectiveMainloopBwdSm90<...>, "
     "flash::CollectiveEpilogueBwd<...>, flash::SingleTileScheduler<...> > > >(...)",
     true, "attention", "Dao-AILab/flash-attention hopper/flash_bwd_launch_template.h"},
    {"void flash::compute_attn_ws<Flash_fwd_kernel_traits<128, 128, 128, 12, 2, false, 1, cutlass::bfloat16_t>, true, "
     "flash::DynamicPersistentTileScheduler<256, 128>, flash::SeqLenTraits<false> >(...)",
     true, "attention", "FlashAttention 3 beta hopper/flash_fwd_kernel.h (__global__ compute_attn_ws), issue 21"},
    {"void cutlass::device_kernel<flash::FlashAttnBwdPreprocess<cute::tuple<cute::C<128>, cute::C<128> >, cutlass::bfloat16_t, "
     "float, cutlass::arch::Sm90, true, false> >(...)",
     false, "attention", "Dao-AILab/flash-attention hopper/flash_bwd_launch_template.h (dO·O row sums, no MMA)"},
    {"void cutlass::device_kernel<flash::FlashAttnBwdPostprocessConvertdQ<cute::tuple<cute::C<128>, cute::C<128> >, "
     "cutlass::bfloat16_t, float, cutlass::arch::Sm90, 256, ...> >(...)",
     false, "attention", "Dao-AILab/flash-attention hopper/flash_bwd_launch_template.h (dQ accumulator conversion)"},
    {"void flash::prepare_varlen_num_blocks_kernel<1, true>(int, int, int, int const*, int const*, int const*, int*)", false,
     "attention", "Dao-AILab/flash-attention hopper/flash_prepare_scheduler.cu"},
    // ---- FlashAttention 2 ----
    {"void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::half_t, "
     "Flash_kernel_traits<128, 128, 64, 4, cutlass::half_t> >, false, false, false, false, true, true, false>(Flash_fwd_params)",
     true, "attention", "Dao-AILab/flash-attention csrc/flash_attn/src/flash_fwd_launch_template.h"},
    {"void flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, "
     "cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> >, false, false, false, false, false, "
     "true, false>(Flash_bwd_params)",
     true, "attention", "Dao-AILab/flash-attention csrc/flash_attn/src/flash_bwd_launch_template.h"},
    {"void flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::half_t, "
     "Flash_kernel_traits<128, 64, 128, 8, cutlass::half_t> > >(Flash_bwd_params)",
     false, "attention", "Dao-AILab/flash-attention flash_bwd_kernel.h (compute_dot_do_o: row sums, no MMA)"},
    {"void flash_bwd_convert_dq_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::half_t, "
     "Flash_kernel_traits<128, 64, 128, 8, cutlass::half_t> > >(Flash_bwd_params, int)",
     false, "attention", "Dao-AILab/flash-attention flash_bwd_launch_template.h (fp32 dQ accumulator -> dQ)"},
    {"void flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, "
     "Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >, 4, 1, true>(Flash_fwd_params)",
     false, "attention", "Dao-AILab/flash-attention flash_fwd_launch_template.h (split-KV log-sum-exp combine)"},
    // ---- cuDNN SDPA (PyTorch SDPBackend.CUDNN_ATTENTION, cudnn-frontend) ----
    {"cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x256_4x1x1_cga1x1x1_kernel0_0", true,
     "attention", "nsys kernel summaries published with cuDNN SDPA benchmarks (H100)"},
    {"cudnn_generated_fort_native_sdpa_sm80_flash_fprop_wmma_f16_knob_3_64x64x256_4x1x1_kernel0_0", true, "attention",
     "nsys kernel summaries published with cuDNN SDPA benchmarks (A100)"},
    {"cudnn_generated_fort_native_sdpa_sm100_flash_fprop_f16_knob_7_128x128x128_4x1x1_cga1x1x1_kernel0_0", true,
     "attention", "torch profiler output of the cudnn-frontend SDPA benchmark (B200)"},
    // ---- PyTorch / xformers memory-efficient attention (CUTLASS FMHA) ----
    {"fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, cutlass::arch::Sm80, true, 64, "
     "64, 64, true, true>::Params)",
     true, "attention",
     "pytorch aten/src/ATen/native/transformers/cuda/mem_eff_attention/kernels/cutlassF.h; FP32 on Sm80 uses "
     "OpMultiplyAddFastF32 (TF32 Tensor Cores), gemm_kernel_utils.h DefaultGemmType"},
    {"fmha_cutlassB_f16_aligned_64x64_k32_sm70(PyTorchMemEffAttention::AttentionBackwardKernel<cutlass::arch::Sm70, "
     "cutlass::half_t, true, false, false, 64, 64, 32>::Params)",
     true, "attention", "pytorch mem_eff_attention/kernels/cutlassB.h (Volta half: 8x8x4 TensorOp)"},
    {"fmha_cutlassF_f32_aligned_32x128_gmem_sm50(PyTorchMemEffAttention::AttentionKernel<float, cutlass::arch::Sm50, true, 32, "
     "128, 65536, true, true>::Params)",
     false, "attention", "pytorch mem_eff_attention/kernels/cutlassF.h (FP32 before Sm80: OpClassSimt)"},
    // ---- CUTLASS 3 (SM90 / SM100) ----
    {"cutlass3x_sm90_tensorop_s64x128x16gemm_f16_f16_f32_f16_f16_128x128x64_2x1x1_0_ttt_align8_warpspecialized_pingpong_epi_tma",
     true, "gemm", "NVIDIA/cutlass library naming (tools/library generated kernels)"},
    {"cutlass3x_sm90_tensorop_s64x128x32gemm_e4m3_e4m3_f32_bf16_bf16_64x128x128_2x1x1_0_tnt_align16_warpspecialized_epi_nosmem",
     true, "gemm", "NVIDIA/cutlass library naming, FP8 (e4m3) variant"},
    {"void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, "
     "cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedCooperative<4, "
     "cute::tuple<cute::C<2>, cute::C<1>, cute::C<1> >, cutlass::gemm::KernelTmaWarpSpecializedCooperative>, ...> > >(...)",
     true, "gemm", "NVIDIA/cutlass include/cutlass/gemm/collective/sm90_mma_tma_gmma_ss_warpspecialized.hpp"},
    {"void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, "
     "cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm70TwoStage, ..., "
     "cute::TiledMMA<cute::MMA_Atom<cute::UniversalFMA<float, float, float, float> >, ...> > > >(...)",
     false, "gemm", "NVIDIA/cutlass include/cute/arch/mma.hpp UniversalFMA (CUTLASS 3 SIMT path)"},
    {"sm100_xmma_gemm_bf16f16_bf16f16_bf16f32_tn_n_tilesize256x128x64_stage4_warpsize2x2x1", true, "gemm",
     "cuBLAS Blackwell kernel name listed in a public GEMM benchmark fixture"},
    {"void deep_gemm::fp8_gemm_kernel<128, 128, 128, 1, 1, 1, 132, 128, 1, 8, 4, 1>(...)", true, "gemm",
     "deepseek-ai/DeepGEMM (FP8 GEMM, Hopper wgmma)"},
    // ---- Triton (Inductor): the name cannot tell the precision ----
    {"triton_tem_fused_mm_0", false, "gemm", "pytorch test/inductor/test_profiler.py (decided by the op fallback)"},
    {"triton_tem_fused_flex_attention_0", false, "attention", "pytorch Inductor flex_attention template"},
    // ---- must never count ----
    {"void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, "
     "c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int, ...)",
     false, "elementwise", "pytorch aten/src/ATen/native/cuda/CUDALoops.cuh"},
    {"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<float, "
     "at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>::operator()(at::TensorIterator&)::{lambda(float, "
     "float)#1}>, unsigned int, c10::BFloat16, 4, 4> >(...)",
     false, "reduction", "pytorch aten/src/ATen/native/cuda/Reduce.cuh"},
    {"void cublasLt::splitKreduce_kernel<32, 16, int, __nv_bfloat16, __nv_bfloat16, float, __nv_bfloat16, true, false, "
     "false>(cublasLt::cublasSplitKParams<float>, __nv_bfloat16 const*, ...)",
     false, "gemm", "cuBLASLt split-K reduction (the float variant is in ../shared/realdata)"},
    {"void gemv2T_kernel_val<int, int, __nv_bfloat16, __nv_bfloat16, float, float, 128, 16, 4, 4, false, false, "
     "cublasGemvParams<cublasGemvTensorStridedBatched<__nv_bfloat16 const>, ...> >(...)",
     false, "gemm", "cuBLAS GEMV (the float variant is in ../shared/realdata)"},
    {"ampere_sgemm_64x32_sliced1x4_nn", false, "gemm", "cuBLAS FP32 SGEMM family (ampere_sgemm_* in ../shared/realdata)"},
};

TEST(DeriveTensorCoreGolden, CurrentLibraryNamesMatchTheReviewedVerdict) {
  for (const auto& row : kCurrentNames) {
    auto verdict = classify_tensor_core(row.name);
    EXPECT_EQ(verdict.uses_tensor_cores, row.is_tc) << row.name << " (rule: " << verdict.why << "; source: " << row.source << ")";
    EXPECT_EQ(std::string(kernel_category(row.name)), row.category) << row.name;
  }
}

}  // namespace
}  // namespace proflint
