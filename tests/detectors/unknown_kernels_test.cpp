// tests/detectors/unknown_kernels_test.cpp — unrecognised kernel time is flagged as a diagnostic.
#include <gtest/gtest.h>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint::testing;

TEST(UnknownKernels, FiresOnMtiaFirmwareEvents) {
  REALDATA_OR_SKIP(path, "kineto/hta_mtia_inference.json.gz");
  auto f = findings_of(analyze_with(path, "unknown-kernels"), "unknown-kernels");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(f[0].diagnostic);
  EXPECT_DOUBLE_EQ(f[0].evidence["share"].get<double>(), 1.0);
  EXPECT_EQ(f[0].evidence["distinct_names"], 6);
  EXPECT_EQ(f[0].evidence["top_kernels"][0]["kernel"], "event_wait") << f[0].evidence.dump();
}

TEST(UnknownKernels, SilentOnCudnnCublasTraining) {
  auto r = analyze_with(fixture_path("sample_train.json.gz").string(), "unknown-kernels");
  EXPECT_TRUE(findings_of(r, "unknown-kernels").empty());
}

TEST(UnknownKernels, ShareOptionControlsIt) {
  REALDATA_OR_SKIP(path, "kineto/hta_sampled_rank-1.json.gz");
  EXPECT_EQ(findings_of(analyze_with(path, "unknown-kernels"), "unknown-kernels").size(), 1u);
  EXPECT_TRUE(findings_of(analyze_with(path, "unknown-kernels", {{"min_share", 0.5}}), "unknown-kernels").empty());
}
