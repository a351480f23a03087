// tests/detectors/cudnn_benchmark_off_test.cpp — cudnn-benchmark-off needs the first convolutions without a search.
#include <gtest/gtest.h>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint::testing;

namespace {
const char* kId = "cudnn-benchmark-off";
}

TEST(CudnnBenchmarkOff, SilentOnSteadyStateFixturesByDefault) {
  // Generated traces start after warm-up: the setting cannot be verified.
  for (const char* name : {"sample_train.json.gz", "sample_amp.json.gz", "legacy_bare_array.json"})
    EXPECT_TRUE(findings_of(analyze_with(fixture_path(name).string(), kId), kId).empty()) << name;
}

TEST(CudnnBenchmarkOff, UnverifiedModeReportsGenericKernelsWithLowConfidence) {
  auto f =
      findings_of(analyze_with(fixture_path("sample_train.json.gz").string(), kId, {{"report_unverified", true}}), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_DOUBLE_EQ(f[0].confidence, 0.25);
  EXPECT_EQ(f[0].evidence["signal"], "generic kernels only (unverified)");
  EXPECT_NEAR(f[0].evidence["generic_kernel_share_of_conv"].get<double>(), 0.528, 0.005);
  // bf16 xmma kernels are not generic: still silent.
  EXPECT_TRUE(
      findings_of(analyze_with(fixture_path("sample_amp.json.gz").string(), kId, {{"report_unverified", true}}), kId)
          .empty());
}

TEST(CudnnBenchmarkOff, FiresWhenFirstConvolutionsRunWithoutSearch) {
  // param_resnet holds cuDNN's initialisation (16 cudaStreamCreateWithFlags + cudaGetDeviceProperties inside the
  // first aten::cudnn_convolution) and no cudaEventElapsedTime anywhere.
  REALDATA_OR_SKIP(path, "kineto/param_resnet.json.gz");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_DOUBLE_EQ(f[0].confidence, 0.5);
  EXPECT_EQ(f[0].evidence["cudnn_init_calls_in_conv_ops"], 17);
  EXPECT_EQ(f[0].evidence["algorithm_timing_calls_in_conv_ops"], 0);
  EXPECT_EQ(f[0].evidence["conv_kernels"], 4440);
  EXPECT_EQ(f[0].evidence["conv_kernel_time_ns"], 1785342000);
  EXPECT_NEAR(static_cast<double>(f[0].estimated_savings_ns), 0.1 * 1785342000, 0.005 * 1785342000);
  EXPECT_NE(f[0].recommendation.find("torch.backends.cudnn.benchmark = True"), std::string::npos);
}

TEST(CudnnBenchmarkOff, SilentWhenTheAlgorithmSearchIsInTheTrace) {
  // benchmark=True: 357 cudaEventSynchronize/cudaEventElapsedTime inside the first iteration's convolutions.
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_autograd_api_no_steps.pt.trace.json.gz");
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
  EXPECT_TRUE(findings_of(analyze_with(path, kId, {{"report_unverified", true}}), kId).empty());
}

TEST(CudnnBenchmarkOff, SteadyStateResnetIsOnlyReportedWhenAskedFor) {
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_v100_workers4.pt.trace.json.gz");
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
  auto f = findings_of(analyze_with(path, kId, {{"report_unverified", true}}), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_LE(f[0].confidence, 0.5);
}

TEST(CudnnBenchmarkOff, NeverFiresWithoutConvolutions) {
  for (const char* rel : {"kineto/param_linear_fp32.json.gz", "kineto/hta_ddp_v100_rank1.json.gz",
                          "kineto/tracelens_h100_bert_small.json.gz", "nsys/nsys2026_h100_2gpu_1s.sqlite",
                          "kineto/hta_alexnet_a100_inference.json.gz"}) {
    REALDATA_OR_SKIP(path, rel);
    EXPECT_TRUE(findings_of(analyze_with(path, kId, {{"report_unverified", true}}), kId).empty()) << rel;
  }
}
