// tests/detectors/no_fusion_test.cpp — no-fusion fires on long runs of tiny elementwise kernels.
#include <gtest/gtest.h>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint::testing;

namespace {
const char* kId = "no-fusion";
}

TEST(NoFusion, FiresOnPerParameterOptimizer) {
  auto f = findings_of(analyze_with(fixture_path("small_kernels.json.gz").string(), kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["runs"], 9);
  EXPECT_EQ(f[0].evidence["run_kernels"], 651);
  EXPECT_EQ(f[0].evidence["optimizer_kernels"], 648);
  EXPECT_EQ(f[0].evidence["longest_run"], 181);
  EXPECT_EQ(f[0].evidence["top_ops"][0]["op"], "aten::add_");
  EXPECT_EQ(f[0].evidence["top_ops"][0]["pass"], "optimizer");
  EXPECT_EQ(f[0].evidence["top_ops"][0]["kernels"], 486);
  // Back to back on the GPU: the span is the kernel time; x (1 - 1/4).
  EXPECT_EQ(f[0].evidence["run_span_ns"], 1361624);
  EXPECT_NEAR(static_cast<double>(f[0].estimated_savings_ns), 0.75 * 1361624, 1.0);
  EXPECT_DOUBLE_EQ(f[0].confidence, 0.7);
  EXPECT_NE(f[0].recommendation.find("fused=True"), std::string::npos);
}

TEST(NoFusion, SilentOnForeachOptimizer) {
  for (const char* name : {"sample_amp.json.gz", "sample_train.json.gz"})
    EXPECT_TRUE(findings_of(analyze_with(fixture_path(name).string(), kId), kId).empty()) << name;
}

TEST(NoFusion, MinRunOptionSilencesIt) {
  EXPECT_TRUE(
      findings_of(analyze_with(fixture_path("small_kernels.json.gz").string(), kId, {{"min_run", 200}}), kId).empty());
}

TEST(NoFusion, FiresOnOldSgdAndZeroGradOfResnetV100) {
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_v100_workers4.pt.trace.json.gz");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["run_kernels"], 3147);
  EXPECT_EQ(f[0].evidence["optimizer_kernels"], 3141);
  EXPECT_EQ(f[0].evidence["run_span_ns"], 36194000);
  EXPECT_NE(f[0].recommendation.find("zero_grad(set_to_none=True)"), std::string::npos);
}

TEST(NoFusion, SilentOnRealProfilesWithoutTinyKernelRuns) {
  // mi210_gpu_only: a bf16 CNN whose batch norm (reductions) and elementwise kernels together take
  // 65% of the kernel time, but the pointwise ones alone 2.13 of 5.34 ms (39.8%): no finding.
  for (const char* rel : {"kineto/param_resnet.json.gz", "kineto/hta_ns_resolution.pt.trace.json.gz",
                          "kineto/tracelens_mi210_gpu_only.json.gz",
                          "nsys/nsys2026_h100_2gpu_1s.sqlite"}) {
    REALDATA_OR_SKIP(path, rel);
    EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty()) << rel;
  }
}

// Qwen1.5-0.5B eager inference (bf16, batch 16 x 559 tokens): no run of tiny kernels, but the
// elementwise kernels are large and unfused. By hand (sqlite3 over the store of the trace):
// elementwise kernels (none has "fused" in its name): 1,118 kernels, 27,722,196 ns of the
// 45,432,698 ns kernel time (61.0%); GEMM + attention 16,648,906 ns. Largest: the non-vectorised
// bf16 `elementwise_kernel<128, 4, …MulFunctor…>`, 207 launches, 5,581,642 ns.
TEST(NoFusion, FiresOnLargeUnfusedElementwiseWorkOfEagerLlmInference) {
  REALDATA_OR_SKIP(path, "kineto/tracelens_h100_qwen_0.5b.json.gz");
  auto r = analyze_with(path, kId);
  auto f = findings_of(r, kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["unfused_kernels"], 1118);
  EXPECT_EQ(f[0].evidence["unfused_kernel_time_ns"], 27722196);
  EXPECT_EQ(f[0].evidence["matmul_kernel_time_ns"], 16648906);
  EXPECT_EQ(f[0].evidence["kernel_time_ns"], 45432698);
  EXPECT_EQ(f[0].evidence["top_kernels"][0]["count"], 207);
  EXPECT_EQ(f[0].evidence["top_kernels"][0]["time_ns"], 5581642);
  EXPECT_EQ(f[0].estimated_savings_ns, 27722196 / 2);  // x (1 - 1/2)
  EXPECT_NE(f[0].recommendation.find("torch.compile"), std::string::npos);
  EXPECT_FALSE(f[0].evidence.contains("runs"));  // not the tiny-run finding
  // With a share above what the trace reaches it stays under its threshold, and says so.
  auto quiet = analyze_with(path, kId, {{"min_elementwise_share", 0.7}});
  EXPECT_TRUE(findings_of(quiet, kId).empty());
  bool listed = false;
  for (const auto& b : quiet.below_threshold)
    if (b.id == kId && b.measured.find("unfused elementwise") != std::string::npos) {
      listed = true;
      EXPECT_NEAR(b.value, 27722196.0 / 45432698.0, 1e-9);
    }
  EXPECT_TRUE(listed);
}
