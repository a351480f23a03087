// tests/detectors/batch_size_test.cpp — batch-size: a host-bound GPU with spare memory takes a
// larger batch; a GPU at its memory limit risks OOM.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint::testing;

namespace {

const char* kId = "batch-size";

}  // namespace

TEST(BatchSize, SmallBatchOnA100FixtureDoublesIt) {
  auto r = analyze_with(fixture_path("small_batch_a100.json.gz").string(), kId);
  auto f = findings_of(r, kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].title, "Batch is too small for the GPU");
  EXPECT_EQ(f[0].evidence["batch"], 4);
  EXPECT_EQ(f[0].evidence["batch_op"], "aten::conv2d");
  EXPECT_EQ(f[0].evidence["factor"], 2);  // 0.8 / 0.311 = 2.6 -> largest power of two is 2
  EXPECT_EQ(f[0].evidence["training"], true);
  EXPECT_EQ(f[0].evidence["peak_allocated_bytes"], 94260224);
  EXPECT_EQ(f[0].evidence["waits_on"], "cpu");
  // window - max(window / 2, kernel busy)
  int64_t W = r.summaries[0].devices[0].window_ns, K = r.summaries[0].devices[0].kernel_busy_ns;
  EXPECT_EQ(f[0].estimated_savings_ns, W - std::max<int64_t>(W / 2, K));
  EXPECT_NE(f[0].recommendation.find("×2 (batch 4 → 8)"), std::string::npos) << f[0].recommendation;
  EXPECT_NE(f[0].recommendation.find("learning rate"), std::string::npos);
}

TEST(BatchSize, MemoryAtTheLimitOnT4Fixture) {
  auto f = findings_of(analyze_with(fixture_path("t4_memory_limit.json.gz").string(), kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].title, "GPU memory is at the limit");
  ASSERT_TRUE(f[0].severity.has_value());
  EXPECT_EQ(*f[0].severity, proflint::Severity::low);
  EXPECT_EQ(f[0].evidence["peak_reserved_bytes"], 14868807680LL);
  EXPECT_EQ(f[0].evidence["device_memory_bytes"], 15862857728LL);
  EXPECT_EQ(f[0].evidence["batch"], 1100);
  EXPECT_NE(f[0].problem.find("13.8 GiB of 14.8 GiB (93.7%)"), std::string::npos) << f[0].problem;
  EXPECT_NE(f[0].recommendation.find("expandable_segments:True"), std::string::npos);
  // Already fp16: autocast is not offered again.
  EXPECT_EQ(f[0].recommendation.find("autocast"), std::string::npos) << f[0].recommendation;
}

TEST(BatchSize, LimitShareOptionSilencesIt) {
  auto f =
      findings_of(analyze_with(fixture_path("t4_memory_limit.json.gz").string(), kId, {{"limit_share", 0.95}}), kId);
  EXPECT_TRUE(f.empty());
}

TEST(BatchSize, SilentOnGpuBoundAndInputBoundFixtures) {
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("sample_amp.json.gz").string(), kId), kId).empty());
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("sample_train.json.gz").string(), kId), kId).empty());
}

TEST(BatchSize, SkippedWithoutMemorySamples) {
  auto r = analyze_with(fixture_path("sample_train.nsys.sqlite").string(), kId);
  EXPECT_TRUE(findings_of(r, kId).empty());
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("needs memory"), std::string::npos);
}

TEST(BatchSize, BertSmallBatchOneInference) {
  REALDATA_OR_SKIP(path, "kineto/tracelens_h100_bert_small.json.gz");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["batch"], 1);
  EXPECT_EQ(f[0].evidence["sequence"], 141);
  EXPECT_EQ(f[0].evidence["batch_op"], "aten::embedding");
  EXPECT_EQ(f[0].evidence["factor"], 8);
  EXPECT_EQ(f[0].evidence["training"], false);
  EXPECT_EQ(f[0].estimated_savings_ns, 4871288 - 4871288 / 8);
  EXPECT_NE(f[0].recommendation.find("Inference: batch requests"), std::string::npos);
}

TEST(BatchSize, SilentOnDataloaderBoundResnetWithDeltaOnlyMemory) {
  // Memory events carry only deltas (no totals): the peak cannot be bounded from above.
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_v100_workers0.pt.trace.json.gz");
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}
