// tests/detectors/launch_bound_test.cpp — launch-bound fires when the GPU waits for each launch.
#include <gtest/gtest.h>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint::testing;

namespace {
const char* kId = "launch-bound";
}

TEST(LaunchBound, SilentWhenTheQueueStaysFull) {
  for (const char* name : {"sample_amp.json.gz", "sample_train.json.gz", "small_kernels.json.gz"})
    EXPECT_TRUE(findings_of(analyze_with(fixture_path(name).string(), kId), kId).empty()) << name;
}

TEST(LaunchBound, FiresOnTinyBertInference) {
  REALDATA_OR_SKIP(path, "kineto/tracelens_h100_bert_small.json.gz");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["kernels_launched"], 60);
  EXPECT_EQ(f[0].evidence["short_kernels"], 39);
  EXPECT_EQ(f[0].evidence["launch_gaps"], 59);
  EXPECT_EQ(f[0].evidence["launch_gap_idle_ns"], 3571668);
  EXPECT_DOUBLE_EQ(f[0].evidence["median_queue_depth"].get<double>(), 0.0);
  EXPECT_NEAR(static_cast<double>(f[0].estimated_savings_ns), 0.8 * 3571668, 1.0);
  EXPECT_NEAR(f[0].evidence["gpu_utilization"].get<double>(), 0.063, 0.001);
  EXPECT_NE(f[0].recommendation.find("mode=\"reduce-overhead\""), std::string::npos);
}

TEST(LaunchBound, FiresOnEagerB200Decode) {
  REALDATA_OR_SKIP(path, "kineto/tracelens_b200_eager.json.gz");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["kernels_launched"], 768);
  EXPECT_EQ(f[0].evidence["short_kernels"], 497);
}

TEST(LaunchBound, IdleShareOptionSilencesIt) {
  REALDATA_OR_SKIP(path, "kineto/tracelens_h100_bert_small.json.gz");
  EXPECT_TRUE(findings_of(analyze_with(path, kId, {{"min_idle_share", 0.9}}), kId).empty());
}

TEST(LaunchBound, SilentOnGpuBoundOrGpulessProfiles) {
  for (const char* rel : {"kineto/hta_cpu_only_rank34.pt.trace.json.gz", "kineto/tracelens_h100_qwen_0.5b.json.gz",
                          "kineto/hta_ns_resolution.pt.trace.json.gz", "kineto/hta_a100_16rank_rank0.json.gz"}) {
    REALDATA_OR_SKIP(path, rel);
    EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty()) << rel;
  }
}
