// tests/unit/derive_names_test.cpp — op-type normalization, markers, TC eligibility, kernel
// Tensor Core verdicts and categories, iteration-name helpers and period detection.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/derive/categories.hpp"
#include "engine/derive/iterations.hpp"
#include "engine/derive/ops.hpp"
#include "engine/derive/tensor_cores.hpp"
#include "engine/model/model.hpp"

namespace proflint {
namespace {

TEST(DeriveOps, NormalizesOpTypes) {
  EXPECT_EQ(normalize_op_type("aten::add_"), "add");
  EXPECT_EQ(normalize_op_type("aten::add"), "add");
  EXPECT_EQ(normalize_op_type("aten::conv2d"), "conv2d");
  EXPECT_EQ(normalize_op_type("aten::cudnn_convolution"), "cudnn_convolution");
  EXPECT_EQ(normalize_op_type("aten::_convolution"), "_convolution");
  EXPECT_EQ(normalize_op_type("aten::__and__"), "__and__");
  EXPECT_EQ(normalize_op_type("aten::add.Tensor"), "add");
  EXPECT_EQ(normalize_op_type("aten::add, op_id = 314359"), "add");
  EXPECT_EQ(normalize_op_type("AddmmBackward0"), "AddmmBackward");
  EXPECT_EQ(normalize_op_type("CudnnConvolutionBackward"), "CudnnConvolutionBackward");
  EXPECT_EQ(normalize_op_type("autograd::engine::evaluate_function: AddmmBackward0"), "evaluate_function");
  EXPECT_EQ(normalize_op_type("torch::autograd::AccumulateGrad"), "AccumulateGrad");
  EXPECT_EQ(normalize_op_type("data generation"), "data generation");
}

TEST(DeriveOps, RecognizesFrameworkOpsInNvtxText) {
  EXPECT_EQ(framework_op_from_nvtx("aten::add, op_id = 314359"), "aten::add");
  EXPECT_EQ(framework_op_from_nvtx("aten::conv2d, seq = 12, op_id = 5, sizes = [[32, 3, 224, 224]]"), "aten::conv2d");
  EXPECT_EQ(framework_op_from_nvtx("AddmmBackward0, seq = 7, op_id = 9"), "AddmmBackward0");
  EXPECT_EQ(framework_op_from_nvtx("aten::matmul"), "aten::matmul");
  EXPECT_FALSE(framework_op_from_nvtx("saxpy"));
  EXPECT_FALSE(framework_op_from_nvtx("MPI_Send"));
  EXPECT_FALSE(framework_op_from_nvtx("myproject::train"));
  EXPECT_FALSE(framework_op_from_nvtx(""));
}

TEST(DeriveOps, ClassifiesMarkers) {
  EXPECT_EQ(classify_marker("ProfilerStep#5"), MarkerKind::profiler_step);
  EXPECT_EQ(profiler_step_number("ProfilerStep#552"), 552);
  EXPECT_FALSE(profiler_step_number("ProfilerStep#"));
  EXPECT_FALSE(profiler_step_number("ProfilerStep#5x"));
  EXPECT_EQ(classify_marker("Optimizer.step#SGD.step"), MarkerKind::optimizer);
  EXPECT_EQ(classify_marker("Optimizer.zero_grad#SGD.zero_grad"), MarkerKind::optimizer);
  EXPECT_EQ(classify_marker("optimizer.step"), MarkerKind::optimizer);
  EXPECT_EQ(classify_marker("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"), MarkerKind::dataloader);
  EXPECT_EQ(classify_marker("enumerate(DataPipe)#ShufflerIterDataPipe"), MarkerKind::dataloader);
  EXPECT_EQ(classify_marker("aten::conv2d"), MarkerKind::none);
  EXPECT_TRUE(is_optimizer_step("Optimizer.step#Adam.step"));
  EXPECT_TRUE(is_optimizer_step("optimizer.step"));
  EXPECT_FALSE(is_optimizer_step("Optimizer.zero_grad#SGD.zero_grad"));
  EXPECT_FALSE(is_optimizer_step("optimizer.stepper"));
  EXPECT_TRUE(is_backward_name("autograd::engine::evaluate_function: AddmmBackward0"));
  EXPECT_TRUE(is_backward_name("CudnnConvolutionBackward"));
  EXPECT_TRUE(is_backward_name("torch::autograd::AccumulateGrad"));
  EXPECT_FALSE(is_backward_name("aten::mm"));
}

TEST(DeriveOps, TensorCoreEligibilityByTypeAndDtype) {
  for (const char* t : {"mm", "bmm", "addmm", "matmul", "linear", "conv2d", "cudnn_convolution", "convolution", "_convolution",
                        "scaled_dot_product_attention", "_flash_attention_forward", "_efficient_attention_backward", "lstm",
                        "gru", "rnn_tanh", "AddmmBackward", "CudnnConvolutionBackward"})
    EXPECT_TRUE(is_tc_eligible_type(t)) << t;
  for (const char* t : {"add", "relu", "batch_norm", "max_pool2d", "softmax", "embedding", "evaluate_function"})
    EXPECT_FALSE(is_tc_eligible_type(t)) << t;
  EXPECT_EQ(dtype_allows_tensor_cores(R"(["float","float"])"), true);
  EXPECT_EQ(dtype_allows_tensor_cores(R"(["c10::Half","c10::Half",""])"), true);
  EXPECT_EQ(dtype_allows_tensor_cores(R"(["", "c10::BFloat16"])"), true);
  EXPECT_EQ(dtype_allows_tensor_cores(R"(["c10::Float8_e4m3fn","c10::Float8_e4m3fn"])"), true);
  EXPECT_EQ(dtype_allows_tensor_cores(R"(["signed char","signed char"])"), true);
  EXPECT_EQ(dtype_allows_tensor_cores(R"(["long int","long int"])"), false);
  EXPECT_EQ(dtype_allows_tensor_cores(R"(["bool"])"), false);
  EXPECT_EQ(dtype_allows_tensor_cores(R"(["double","double"])"), false);
  EXPECT_EQ(dtype_allows_tensor_cores(R"(["","Scalar"])"), std::nullopt);
  EXPECT_EQ(dtype_allows_tensor_cores("[]"), std::nullopt);
  EXPECT_TRUE(is_tc_eligible("mm", R"(["float","float"])"));
  EXPECT_FALSE(is_tc_eligible("mm", R"(["long int","long int"])"));
  EXPECT_TRUE(is_tc_eligible("mm", std::nullopt));  // not recorded: by type only
  EXPECT_FALSE(is_tc_eligible("add", R"(["c10::Half"])"));
}

TEST(DeriveTensorCores, NegativePatternsWinOverTensorCoreLookalikes) {
  for (const char* name : {
           "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
           "ampere_sgemm_128x64_nn", "volta_sgemm_64x64_tn",
           "void implicit_convolve_sgemm<float, float, 128, 6, 7, 3, 3, 5, 1, false, true, true>(int, int, int)",
           "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_sgemm_128x32_8x5_nn_align1::Params)",
           "volta_scudnn_128x64_relu_interior_nn_v1", "SubTensorOpWithScalar1d",
           "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, unsigned char, (vllm::Fp8KVCacheDataType)1>()",
           "void vllm::scaled_fp8_quant_kernel_strided<c10::BFloat16, c10::Float8_e4m3fn>()",
           "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>>()"})
    EXPECT_FALSE(classify_tensor_core(name).uses_tensor_cores) << name;
}

TEST(DeriveTensorCores, PositivePatternsAcrossArchitectures) {
  for (const char* name : {
           "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>",
           "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4",
           "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8>()",
           "volta_h884gemm_64x64_ldg8_nn", "volta_fp16_s884cudnn_fp16_256x128_ldg8_relu_f2f_exp_small_nhwc2nchw_tn_v1",
           "turing_fp16_s1688gemm_fp16_128x128_ldg8_f2f_tn", "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn",
           "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
           "nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT", "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3",
           "fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext",
           "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4>>()",
           "void cutlass::device_kernel<dpsk::grouped_gemm::GemmKernel<128>>()", "sm90_gemm_wgmma_bf16",
           "Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN_LDSB0",
           "igemm_fwd_gtcx2_nhwc_bf16_bx0_ex1_bt128x128x32"})
    EXPECT_TRUE(classify_tensor_core(name).uses_tensor_cores) << name;
  // An AMD Tensile kernel without an MFMA tile runs on vector ALUs.
  EXPECT_FALSE(classify_tensor_core("Cijk_Ailk_Bljk_SB_MT64x64x8_SN_K1").uses_tensor_cores);
}

TEST(DeriveTensorCores, ConfiguredPatternsComeFirst) {
  std::vector<TensorCorePattern> extra = {{"my_fused_mma", true}, {"tensorop_fake", false}};
  EXPECT_TRUE(classify_tensor_core("my_fused_mma_kernel", extra).uses_tensor_cores);
  EXPECT_FALSE(classify_tensor_core("cutlass_tensorop_fake", extra).uses_tensor_cores);
  EXPECT_TRUE(classify_tensor_core("cutlass_tensorop_real", extra).uses_tensor_cores);
  EXPECT_EQ(classify_tensor_core("my_fused_mma_kernel", extra).why, "configured pattern 'my_fused_mma'");
}

TEST(DeriveCategories, KernelCategories) {
  EXPECT_EQ(kernel_category("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)"), "communication");
  EXPECT_EQ(kernel_category("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"), "communication");
  EXPECT_EQ(kernel_category("void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>()"), "communication");
  EXPECT_EQ(kernel_category("void dpsk::ep::internode::dispatch<4>()"), "communication");
  EXPECT_EQ(kernel_category("Memcpy DtoD (Device -> Device)"), "memory");
  EXPECT_EQ(kernel_category("void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64>>()"), "attention");
  EXPECT_EQ(kernel_category("fmhaSm100aKernel_QkvE4m3OBfloat16H64"), "attention");
  EXPECT_EQ(kernel_category("volta_sgemm_128x64_nn"), "gemm");
  EXPECT_EQ(kernel_category("nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT"), "gemm");
  EXPECT_EQ(kernel_category("Cijk_Alik_Bljk_SB_MT64x16x32_MI16x16x1_SN"), "gemm");
  EXPECT_EQ(kernel_category("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>"), "gemm");
  EXPECT_EQ(kernel_category("void implicit_convolve_sgemm<float, float, 128, 6, 7, 3, 3, 5, 1, false, true, true>()"), "conv");
  EXPECT_EQ(kernel_category("sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw"), "conv");
  EXPECT_EQ(kernel_category("void cudnn::cnn::wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>()"), "conv");
  EXPECT_EQ(kernel_category("void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>()"), "conv");
  EXPECT_EQ(kernel_category("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>()"), "reduction");
  EXPECT_EQ(kernel_category("void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, true>()"), "reduction");
  EXPECT_EQ(kernel_category("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, 512, true, 1>()"), "reduction");
  EXPECT_EQ(kernel_category("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>()"), "elementwise");
  EXPECT_EQ(kernel_category("void at::native::unrolled_elementwise_kernel<at::native::AddFunctor<float>>()"), "elementwise");
  EXPECT_EQ(kernel_category("void at::native::(anonymous namespace)::CatArrayBatchedCopy<float, unsigned int, 1, 128, 1>()"), "elementwise");
  EXPECT_EQ(kernel_category("triton_poi_fused_add_cos_sin_0"), "elementwise");
  EXPECT_EQ(kernel_category("triton_red_fused_add_mean_mul_pow_rsqrt_0"), "reduction");
  EXPECT_EQ(kernel_category("void fbgemm_gpu::_block_bucketize_sparse_features_cuda_kernel1<int, int>()"), "other");
  EXPECT_EQ(kernel_category("void convert_to_half_kernel()"), "other");
  EXPECT_EQ(kernel_base_name("std::enable_if<(((8)>(0))), void>::type vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(int)"),
            "vllm::fused_add_rms_norm_kernel");
  EXPECT_EQ(kernel_base_name("void at::native::(anonymous namespace)::CatArrayBatchedCopy<float>(float*)"),
            "at::native::anonymous_namespace::CatArrayBatchedCopy");
}

// A kernel keeps its category as a position in kKernelCategories (GpuLinks, engine/model/model.hpp):
// every category derivation gives must be there, or the kernel would be written with none.
TEST(DeriveCategories, EveryCategoryHasAPlaceInTheModelsTable) {
  const std::vector<std::string> names = {
      "ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", "Memcpy DtoD (Device -> Device)",
      "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64>>()",
      "void implicit_convolve_sgemm<float, float, 128, 6, 7, 3, 3, 5, 1, false, true, true>()", "volta_sgemm_128x64_nn",
      "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>()", "triton_poi_fused_add_cos_sin_0",
      "triton_per_fused_native_layer_norm_0", "triton_tem_fused_mm_0", "void convert_to_half_kernel()", ""};
  std::set<std::string_view> seen;
  for (const auto& name : names) {
    std::string_view category = kernel_category(name);
    uint8_t at = kernel_category_index(category);
    EXPECT_NE(int{at}, 0) << name;
    EXPECT_EQ(kKernelCategories[at], category) << name;
    seen.insert(category);
  }
  EXPECT_EQ(seen.size(), kKernelCategories.size() - 1);  // all eight were given
  EXPECT_EQ(int{kernel_category_index("not a category")}, 0);
  EXPECT_TRUE(GpuLinks{}.category_text().data() == nullptr);  // none: written as NULL
}

TEST(DeriveIterations, KeyNodeAndStepNames) {
  EXPECT_TRUE(key_node_matches("train_step", "train_step"));
  EXPECT_TRUE(key_node_matches("train_step#12", "train_step"));
  EXPECT_FALSE(key_node_matches("train_step_fast", "train_step"));
  EXPECT_FALSE(key_node_matches("x", ""));
  EXPECT_EQ(step_like_number("step 12"), 12);
  EXPECT_EQ(step_like_number("train_iter_3"), 3);
  EXPECT_EQ(step_like_number("Batch#7"), 7);
  EXPECT_FALSE(step_like_number("step"));
  EXPECT_FALSE(step_like_number("layer 3"));
  EXPECT_EQ(digit_template("step 12 of 100"), "step # of #");
}

TEST(DeriveIterations, DetectsThePeriodOfARepeatedSequence) {
  // warm-up (9, 8) then 5 repeats of [1 2 3 2 4], then a tail.
  std::vector<int64_t> seq = {9, 8};
  for (int i = 0; i < 5; ++i) seq.insert(seq.end(), {1, 2, 3, 2, 4});
  seq.push_back(7);
  auto m = detect_period(seq);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->period, 5u);
  EXPECT_EQ(m->start, 2u);
  EXPECT_EQ(m->repeats, 5u);
}

TEST(DeriveIterations, InnerRepeatsThatCoverLittleOfTheSequenceAreNotIterations) {
  // Each step: a layer block [c b r] repeated 4 times, then loss, backward, step tokens.
  std::vector<int64_t> step = {1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 10, 11, 12};
  std::vector<int64_t> seq;
  for (int i = 0; i < 4; ++i) seq.insert(seq.end(), step.begin(), step.end());
  auto m = detect_period(seq);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->period, step.size());
  EXPECT_EQ(m->repeats, 4u);
}

TEST(DeriveIterations, NoPeriodInIrregularOrShortSequences) {
  EXPECT_FALSE(detect_period({1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_FALSE(detect_period({1, 2, 1, 2}));  // only two repeats
  EXPECT_FALSE(detect_period({}));
  // Period 1 (the same op again and again) is below the minimum period.
  EXPECT_FALSE(detect_period(std::vector<int64_t>(50, 4)));
  // A periodic stretch covering under half of the sequence is not enough.
  std::vector<int64_t> seq = {1, 2, 1, 2, 1, 2};
  for (int i = 0; i < 20; ++i) seq.push_back(100 + i);
  EXPECT_FALSE(detect_period(seq));
}

}  // namespace
}  // namespace proflint
