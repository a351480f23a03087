// tests/report/report_summary_test.cpp — the summary's multi-GPU rules on project fixtures.
#include <gtest/gtest.h>

#include "tests/report/report_support.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint;
using namespace proflint::testing;

// Each rank's trace lists both GPUs of the node; the idle duplicates are the other rank's GPU,
// so the job has 2 visible GPUs and utilization is the average of the two busy ones.
TEST(ReportSummary, DdpRanksCountEachGpuOfTheNodeOnce) {
  Store store = load_inputs(
      {fixture_path("ddp2_rank0.json.gz").string(), fixture_path("ddp2_rank1_slow30.json.gz").string()}, LoadOptions{});
  Built b{std::move(store), {}};
  b.model = dlprof::load_model(b.store);
  auto s = report_of(b, "summary");
  EXPECT_EQ(int_cell(summary_value(s, "System Config", "GPU Count")), 2);
  double expected = 0;
  for (int64_t trace : {1, 2}) {
    std::string where = "FROM breakdown WHERE iteration = -1 AND trace_id = " + std::to_string(trace) +
                        " AND device_id = " + std::to_string(trace - 1);
    double busy = static_cast<double>(sql_int(
        b.store, "SELECT SUM(time_ns) " + where + " AND category IN ('kernel_tc', 'kernel_other', 'communication')"));
    double window = static_cast<double>(sql_int(b.store, "SELECT SUM(time_ns) " + where));
    ASSERT_GT(window, 0) << "rank " << trace - 1 << " should run on GPU " << trace - 1;
    expected += 100.0 * busy / window / 2.0;
  }
  EXPECT_NEAR(num_cell(summary_value(s, "Summary", "GPU Utilization %")), expected, 1e-9);
}

// One trace listing a GPU it did not use (the other rank's): utilization and the shares are GPU 0's
// alone, the idle GPU is named apart (issue 21: averaging it in halved the utilization).
TEST(ReportSummary, SingleTraceAveragesOnlyTheGpusThatRanWork) {
  Built b = load_for_reports(fixture_path("ddp2_rank0.json.gz").string());
  auto s = report_of(b, "summary");
  EXPECT_EQ(int_cell(summary_value(s, "System Config", "GPU Count")), 2);
  EXPECT_EQ(int_cell(summary_value(s, "System Config", "GPUs Used")), 1);
  EXPECT_EQ(text_cell(summary_value(s, "System Config", "Unused Visible GPUs")).rfind("GPU 1", 0), 0u);
  std::string where = "FROM breakdown WHERE iteration = -1 AND device_id = 0";
  double busy = static_cast<double>(
      sql_int(b.store, "SELECT SUM(time_ns) " + where + " AND category IN ('kernel_tc', 'kernel_other', 'communication')"));
  double window = static_cast<double>(sql_int(b.store, "SELECT SUM(time_ns) " + where));
  ASSERT_GT(window, 0);
  EXPECT_NEAR(num_cell(summary_value(s, "Summary", "GPU Utilization %")), 100.0 * busy / window, 1e-9);
  EXPECT_NEAR(num_cell(summary_value(s, "Summary", "Other Duration %")) +
                  num_cell(summary_value(s, "Summary", "GPU Utilization %")) +
                  num_cell(summary_value(s, "Summary", "Memory Duration %")) +
                  num_cell(summary_value(s, "Summary", "CPU Duration %")),
              100.0, 1e-6);
}
