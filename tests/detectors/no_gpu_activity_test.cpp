// tests/detectors/no_gpu_activity_test.cpp — a clear diagnostic when there is no GPU work at all.
#include <gtest/gtest.h>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint::testing;

TEST(NoGpuActivity, ExplainsCpuOnlyRank) {
  REALDATA_OR_SKIP(path, "kineto/hta_cpu_only_rank34.pt.trace.json.gz");
  auto f = findings_of(analyze_with(path, "no-gpu-activity"), "no-gpu-activity");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(f[0].diagnostic);
  EXPECT_EQ(f[0].evidence["cpu_ops"], 4);
  EXPECT_EQ(f[0].evidence["api_calls"], 0);
  EXPECT_NE(f[0].problem.find("no GPU kernels"), std::string::npos);
}

TEST(NoGpuActivity, NamesCounterModeCapture) {
  REALDATA_OR_SKIP(path, "kineto/hta_cupti_range_profiler_no_kernels.json.gz");
  auto f = findings_of(analyze_with(path, "no-gpu-activity"), "no-gpu-activity");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].recommendation.find("range-profiler"), std::string::npos) << f[0].recommendation;
}

TEST(NoGpuActivity, SilentWhenKernelsExist) {
  auto r = analyze_with(fixture_path("sample_train.json.gz").string(), "no-gpu-activity");
  EXPECT_TRUE(findings_of(r, "no-gpu-activity").empty());
}
