// tests/unit/summary_extremes_test.cpp — a saved store is an input like any profile, and one that was
// edited (or corrupted) can hold derived figures the pipeline never writes: breakdown rows of
// -2^63 ns, ops with 2^63 - 1 ns of GPU time. The summary's sums over them stop at the int64 limits
// instead of overflowing (found by mutating saved stores under UBSan), and every detector and
// shipped rule still runs to the end on them.
#include <gtest/gtest.h>

#include <limits>

#include "engine/analysis/summary.hpp"
#include "engine/lua/rules.hpp"
#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint;

TEST(SummaryExtremes, SumsOverEditedDerivedFiguresSaturate) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  LoadOptions load;
  load.jobs = 1;
  Store store = load_inputs({proflint::testing::fixture_path("sample_train.json.gz").string()}, load);
  auto& db = store.db();
  db.exec("UPDATE breakdown SET time_ns = -9223372036854775808 WHERE device_id = 0 AND iteration = -1");
  db.exec("UPDATE _op SET gpu_time_ns = 9223372036854775807, tc_time_ns = 9223372036854775807 WHERE tc_eligible = 1");
  ASSERT_GT(db.execAndGet("SELECT count(*) FROM _op WHERE tc_eligible = 1").getInt(), 1);  // the sums need two
  auto summaries = summarize(store, 1);
  ASSERT_EQ(summaries.size(), 1u);
  const TraceSummary& s = summaries[0];
  EXPECT_EQ(s.tc_eligible_gpu_ns, kMax);
  EXPECT_EQ(s.tc_eligible_tc_ns, kMax);
  ASSERT_FALSE(s.devices.empty());
  EXPECT_EQ(s.devices[0].window_ns, kMin);
  EXPECT_EQ(s.devices[0].gpu_busy_ns, kMin);

  AnalysisOptions analysis;
  analysis.jobs = 1;
  analysis.rule_files = lua::shipped_rules();
  AnalysisResult result = run_analysis(store, analysis, detector_registry());
  EXPECT_FALSE(result.findings.empty());
}
