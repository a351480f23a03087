// tests/detectors/amp_not_used_test.cpp — amp-not-used fires on FP32 GEMM/conv on Tensor Core GPUs only.
#include <gtest/gtest.h>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint::testing;

namespace {

const char* kId = "amp-not-used";

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

}  // namespace

TEST(AmpNotUsed, FiresOnFp32SampleOnA100) {
  auto f = findings_of(analyze_with(fixture_path("sample_train.json.gz").string(), kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].scope.device_id.value_or(-1), 0);
  EXPECT_EQ(f[0].scope.iter_first.value_or(-1), 0);
  EXPECT_EQ(f[0].scope.iter_last.value_or(-1), 5);
  EXPECT_EQ(f[0].evidence["eligible_non_tc_kernel_ns"], 606806847);
  EXPECT_EQ(f[0].evidence["eligible_non_tc_kernels"], 390);
  EXPECT_NEAR(f[0].evidence["share_of_kernel_time"].get<double>(), 0.8758, 1e-3);
  // One stream: busy time equals kernel time, so the estimate is eligible time x (1 - 1/2).
  EXPECT_NEAR(static_cast<double>(f[0].estimated_savings_ns), 606806847 / 2.0, 1.0);
  EXPECT_DOUBLE_EQ(f[0].confidence, 0.8);
  // Ops are named at the outermost eligible op (issue 21): the backward node, then aten::conv2d,
  // whose recorded inputs are float (autograd nodes record none).
  EXPECT_EQ(f[0].evidence["top_ops"][0]["op"], "ConvolutionBackward0");
  EXPECT_EQ(f[0].evidence["top_ops"][1]["op"], "aten::conv2d");
  EXPECT_EQ(f[0].evidence["top_ops"][1]["dtypes"][0], "float");
  // Ampere: bf16 autocast and the TF32 switches.
  EXPECT_TRUE(contains(f[0].recommendation, "torch.autocast(\"cuda\", dtype=torch.bfloat16)"));
  EXPECT_TRUE(contains(f[0].recommendation, "torch.backends.cuda.matmul.allow_tf32 = True"));
  EXPECT_TRUE(contains(f[0].recommendation, "torch.backends.cudnn.allow_tf32 = True"));
  EXPECT_TRUE(contains(f[0].recommendation, "mixed_float16"));
}

TEST(AmpNotUsed, FiresOnNsysExportOfTheSameJob) {
  auto f = findings_of(analyze_with(fixture_path("sample_train.nsys.sqlite").string(), kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_GT(f[0].evidence["share_of_kernel_time"].get<double>(), 0.8);
}

TEST(AmpNotUsed, SilentWithBf16Autocast) {
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("sample_amp.json.gz").string(), kId), kId).empty());
}

TEST(AmpNotUsed, SilentOnTinyLegacyTrace) {
  // One logistic-regression step: 11 µs of FP32 GEMM is below min_savings_ns.
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("legacy_bare_array.json").string(), kId), kId).empty());
}

TEST(AmpNotUsed, ExpectedSpeedupOptionScalesTheEstimate) {
  auto f =
      findings_of(analyze_with(fixture_path("sample_train.json.gz").string(), kId, {{"expected_speedup", 4.0}}), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NEAR(static_cast<double>(f[0].estimated_savings_ns), 606806847 * 0.75, 1.0);
}

TEST(AmpNotUsed, FiresOnV100ResnetWithFp16AndGradScaler) {
  for (const char* rel :
       {"kineto/tb_resnet50_v100_workers0.pt.trace.json.gz", "kineto/tb_resnet50_v100_workers4.pt.trace.json.gz"}) {
    REALDATA_OR_SKIP(path, rel);
    auto f = findings_of(analyze_with(path, kId), kId);
    ASSERT_EQ(f.size(), 1u) << rel;
    EXPECT_EQ(f[0].evidence["tensor_cores_from"], "compute capability 7.0");
    EXPECT_NEAR(f[0].evidence["share_of_kernel_time"].get<double>(), 0.667, 2e-3) << rel;
    EXPECT_TRUE(contains(f[0].recommendation, "dtype=torch.float16")) << rel;
    EXPECT_TRUE(contains(f[0].recommendation, "GradScaler")) << rel;
    EXPECT_FALSE(contains(f[0].recommendation, "allow_tf32")) << rel;
    EXPECT_DOUBLE_EQ(f[0].confidence, 0.8);
  }
}

TEST(AmpNotUsed, ResnetWorkers0Numbers) {
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_v100_workers0.pt.trace.json.gz");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["eligible_non_tc_kernel_ns"], 394772000);
  EXPECT_EQ(f[0].estimated_savings_ns, 197386000);
  // The backward convolutions, input and weight gradients together, at their autograd node.
  EXPECT_EQ(f[0].evidence["top_ops"][0]["op"], "CudnnConvolutionBackward");
}

TEST(AmpNotUsed, FiresOnSgemmShareOfParamLinear) {
  REALDATA_OR_SKIP(path, "kineto/param_linear_fp32.json.gz");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["eligible_non_tc_kernel_ns"], 285559000);
  EXPECT_EQ(f[0].evidence["tensor_cores_from"], "compute capability 7.5");
  EXPECT_DOUBLE_EQ(f[0].confidence, 0.7);  // no dtypes recorded
  EXPECT_TRUE(contains(f[0].problem, "volta_sgemm_64x64_tn"));
}

TEST(AmpNotUsed, InfersAmpereFromXmmaFfmaKernelsWithoutComputeCapability) {
  // No TARGET_INFO_GPU: the sm80_xmma_gemm_f32f32_..._ffma kernels prove an sm80+ part, and are not Tensor Core.
  REALDATA_OR_SKIP(path, "nsys/nsys2026_h100_2gpu_1s.sqlite");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 2u);
  for (const auto& x : f) {
    EXPECT_DOUBLE_EQ(x.confidence, 0.6);
    EXPECT_TRUE(contains(x.evidence["tensor_cores_from"].get<std::string>(), "sm80+ inferred")) << x.evidence.dump();
    EXPECT_EQ(x.evidence["eligible_non_tc_kernels"], 148);
    EXPECT_NEAR(x.evidence["eligible_non_tc_kernel_ns"].get<double>(), 10.08e6, 0.03e6);
    EXPECT_TRUE(contains(x.problem, "`xmma` with `ffma`"));
    EXPECT_TRUE(contains(x.recommendation, "torch.bfloat16"));
  }
}

TEST(AmpNotUsed, SilentWithoutTensorCoreEligibleWork) {
  for (const char* rel : {"kineto/hta_cpu_only_rank34.pt.trace.json.gz", "kineto/hta_mtia_inference.json.gz",
                          "nsys/nsys2026_small.sqlite", "kineto/hta_a100_16rank_rank0.json.gz",
                          "kineto/tracelens_h100_qwen_0.5b.json.gz"}) {
    REALDATA_OR_SKIP(path, rel);
    EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty()) << rel;
  }
}
