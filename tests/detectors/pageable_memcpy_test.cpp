// tests/detectors/pageable_memcpy_test.cpp — pageable-memcpy fires on pageable copies only.
#include <gtest/gtest.h>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint::testing;

TEST(PageableMemcpy, FiresOnSampleWithPageableBatchCopies) {
  auto r = analyze_with(fixture_path("sample_train.json.gz").string(), "pageable-memcpy");
  auto f = findings_of(r, "pageable-memcpy");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["copies"], 18);
  EXPECT_EQ(f[0].scope.device_id.value_or(-1), 0);
  EXPECT_NEAR(static_cast<double>(f[0].estimated_savings_ns), f[0].evidence["copy_time_ns"].get<double>() / 2, 1.0);
}

TEST(PageableMemcpy, SilentWhenCopiesArePinned) {
  auto r = analyze_with(fixture_path("sample_amp.json.gz").string(), "pageable-memcpy");
  EXPECT_TRUE(findings_of(r, "pageable-memcpy").empty());
}

TEST(PageableMemcpy, FiresOnResnetWorkers0) {
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_v100_workers0.pt.trace.json.gz");
  auto f = findings_of(analyze_with(path, "pageable-memcpy"), "pageable-memcpy");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["copies"], 12);
}

TEST(PageableMemcpy, SilentOnPinnedH100Capture) {
  // nsys2026_h100_2gpu_1s moves 25 GB host-to-device, all pinned.
  REALDATA_OR_SKIP(path, "nsys/nsys2026_h100_2gpu_1s.sqlite");
  EXPECT_TRUE(findings_of(analyze_with(path, "pageable-memcpy"), "pageable-memcpy").empty());
}

TEST(PageableMemcpy, ThresholdOptionSilencesIt) {
  auto r = analyze_with(fixture_path("sample_train.json.gz").string(), "pageable-memcpy", {{"min_share", 0.5}});
  EXPECT_TRUE(findings_of(r, "pageable-memcpy").empty());
}
