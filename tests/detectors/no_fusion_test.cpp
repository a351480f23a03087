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
  for (const char* rel : {"kineto/tracelens_h100_qwen_0.5b.json.gz", "kineto/param_resnet.json.gz",
                          "kineto/hta_ns_resolution.pt.trace.json.gz", "nsys/nsys2026_h100_2gpu_1s.sqlite"}) {
    REALDATA_OR_SKIP(path, rel);
    EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty()) << rel;
  }
}
