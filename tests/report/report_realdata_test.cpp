// tests/report/report_realdata_test.cpp — report values on real profiles, each cross-checked
// against an independent computation (plain SQL over the fact store, not the report code).
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "tests/report/report_support.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint;
using namespace proflint::testing;

namespace {

// The five duration shares partition each GPU's window, so their average adds to 100.
void expect_shares_add_up(const dlprof::Report& s) {
  double sum = 0;
  for (const char* row : {"Tensor Core Kernel Duration %", "Non-Tensor Core Kernel Duration %", "Memory Duration %",
                          "CPU Duration %", "Other Duration %"})
    sum += num_cell(summary_value(s, "Summary", row));
  EXPECT_NEAR(sum, 100.0, 1e-6);
  EXPECT_NEAR(num_cell(summary_value(s, "Summary", "GPU Utilization %")),
              num_cell(summary_value(s, "Summary", "Tensor Core Kernel Duration %")) +
                  num_cell(summary_value(s, "Summary", "Non-Tensor Core Kernel Duration %")),
              1e-6);
}

// Kernel time per op type: each kernel counted once for every type found on its op chain.
std::map<std::string, int64_t> sql_gpu_time_by_op_type(Store& store) {
  std::map<std::string, int64_t> out;
  SQLite::Statement q(store.db(),
                      "WITH RECURSIVE chain(kernel_id, op_id) AS ("
                      "  SELECT id, op_id FROM kernel WHERE op_id IS NOT NULL"
                      "  UNION ALL SELECT c.kernel_id, o.parent_id FROM chain c JOIN op o ON o.id = c.op_id WHERE "
                      "o.parent_id IS NOT NULL) "
                      "SELECT t.op_type, SUM(k.dur_ns) FROM (SELECT DISTINCT c.kernel_id, o.op_type FROM chain c JOIN "
                      "op o ON o.id = c.op_id) t "
                      "JOIN kernel k ON k.id = t.kernel_id GROUP BY t.op_type");
  while (q.executeStep()) out[q.getColumn(0).getString()] = q.getColumn(1).getInt64();
  return out;
}

void expect_common_cross_checks(Built& b) {
  auto& store = b.store;
  auto summary = report_of(b, "summary");
  expect_shares_add_up(summary);

  // Kernel and iteration reports: every kernel once.
  auto kernel = report_of(b, "kernel").tables[0];
  EXPECT_EQ(column_sum(kernel, "Total GPU Time (ns)"), sql_int(store, "SELECT SUM(dur_ns) FROM kernel"));
  EXPECT_EQ(column_sum(kernel, "No. Calls"), sql_int(store, "SELECT COUNT(*) FROM kernel"));
  auto iteration = report_of(b, "iteration").tables[0];
  EXPECT_EQ(static_cast<int64_t>(iteration.rows.size()), sql_int(store, "SELECT COUNT(*) FROM kernel"));
  EXPECT_EQ(column_sum(iteration, "GPU Time (ns)"), sql_int(store, "SELECT SUM(dur_ns) FROM kernel"));

  // Detail: every op execution in exactly one row; inclusive GPU time as derive/ computed it.
  auto detail = report_of(b, "detail").tables[0];
  EXPECT_EQ(column_sum(detail, "No. Calls"), sql_int(store, "SELECT COUNT(*) FROM op"));
  EXPECT_EQ(column_sum(detail, "Total GPU Time (ns)"), sql_int(store, "SELECT SUM(gpu_time_ns) FROM op"));
  EXPECT_EQ(column_sum(detail, "Total CPU Time (ns)"), sql_int(store, "SELECT SUM(dur_ns) FROM op"));

  // Op types: GPU time equals the kernels found under ops of that type.
  auto op_type = report_of(b, "op_type").tables[0];
  auto expected = sql_gpu_time_by_op_type(store);
  size_t name = column_index(op_type, "Op Name"), gpu = column_index(op_type, "Total GPU Time (ns)");
  for (const auto& row : op_type.rows)
    EXPECT_EQ(int_cell(row[gpu]), expected[text_cell(row[name])]) << text_cell(row[name]);

  // Tensor report: the eligible ops' inclusive GPU time.
  auto tensor = report_of(b, "tensor").tables[0];
  EXPECT_EQ(column_sum(tensor, "Total GPU Time (ns)"),
            sql_int(store, "SELECT SUM(gpu_time_ns) FROM op WHERE tc_eligible = 1"));
  EXPECT_EQ(column_sum(tensor, "TC GPU Time (ns)"),
            sql_int(store, "SELECT SUM(tc_time_ns) FROM op WHERE tc_eligible = 1"));

  // Summary: all-ops GPU time is every attributed kernel once; all-kernels adds copies and memsets.
  EXPECT_EQ(int_cell(summary_value(summary, "All Ops", "All Op", "GPU Time (ns)")),
            sql_int(store, "SELECT SUM(dur_ns) FROM kernel WHERE op_id IS NOT NULL"));
  EXPECT_EQ(
      int_cell(summary_value(summary, "All Kernels", "All Kernels", "GPU Time (ns)")),
      sql_int(store,
              "SELECT (SELECT COALESCE(SUM(dur_ns),0) FROM kernel) + (SELECT COALESCE(SUM(dur_ns),0) FROM memcpy) + "
              "(SELECT COALESCE(SUM(dur_ns),0) FROM memset)"));
  int64_t parts = 0;
  for (const char* row : {"Ops Using TC", "Op eligible for TC but not using", "All other ops"})
    parts += int_cell(summary_value(summary, "All Ops", row, "GPU Time (ns)"));
  EXPECT_EQ(parts, int_cell(summary_value(summary, "All Ops", "All Op", "GPU Time (ns)")));
  EXPECT_EQ(int_cell(summary_value(summary, "Summary", "Wall Clock Time (ns)")),
            sql_int(store,
                    "SELECT MAX(t) FROM (SELECT SUM(time_ns) AS t FROM breakdown WHERE iteration = -1 GROUP BY "
                    "trace_id, device_id)"));
}

}  // namespace

TEST(ReportRealdata, ResNet50KinetoCrossChecks) {
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_v100_workers0.pt.trace.json.gz");
  Built b = load_for_reports(path);
  expect_common_cross_checks(b);
  auto summary = report_of(b, "summary");
  // Iterations: one per host-side ProfilerStep#N annotation (6 in this profile).
  int64_t steps =
      sql_int(b.store, "SELECT COUNT(*) FROM range WHERE kind = 'user_annotation' AND name LIKE 'ProfilerStep#%'");
  EXPECT_EQ(steps, 6);
  EXPECT_EQ(int_cell(summary_value(summary, "Iterations", "Total Iterations")), steps);
  EXPECT_EQ(int_cell(summary_value(summary, "Iterations", "Aggregated Iterations")), steps);
  EXPECT_EQ(text_cell(summary_value(summary, "Iterations", "Iteration Source")), "profiler_step");
  // Four V100s are listed, one is used: utilization is GPU 0's alone (issue 21: averaging the three
  // idle GPUs in read 13.9% for a GPU busy 55.5% of the time); the other three are listed as unused.
  EXPECT_EQ(int_cell(summary_value(summary, "System Config", "GPU Count")), 4);
  EXPECT_EQ(int_cell(summary_value(summary, "System Config", "GPUs Used")), 1);
  EXPECT_EQ(text_cell(summary_value(summary, "System Config", "Unused Visible GPUs")),
            "GPU 1 (Tesla V100-DGXS-32GB); GPU 2 (Tesla V100-DGXS-32GB); GPU 3 (Tesla V100-DGXS-32GB)");
  double busy =
      static_cast<double>(sql_int(b.store,
                                  "SELECT SUM(time_ns) FROM breakdown WHERE iteration = -1 AND device_id = 0 AND "
                                  "category IN ('kernel_tc', 'kernel_other', 'communication')"));
  double window = static_cast<double>(
      sql_int(b.store, "SELECT SUM(time_ns) FROM breakdown WHERE iteration = -1 AND device_id = 0"));
  EXPECT_NEAR(num_cell(summary_value(summary, "Summary", "GPU Utilization %")), 100.0 * busy / window, 1e-9);
  // FP32 model: no Tensor Core kernels, so 0% TC utilization and no op using them.
  EXPECT_EQ(num_cell(summary_value(summary, "Summary", "Tensor Core Kernel Utilization %")), 0.0);
  EXPECT_EQ(int_cell(summary_value(summary, "All Ops", "Ops Using TC", "# Ops")), 0);
  EXPECT_GT(int_cell(summary_value(summary, "All Ops", "Op eligible for TC but not using", "GPU Time (ns)")), 0);
  // A node keeps one name across iterations: aten::conv2d rows are called once per step.
  auto detail = report_of(b, "detail").tables[0];
  size_t name = column_index(detail, "Op Name"), calls = column_index(detail, "No. Calls");
  bool found = false;
  for (const auto& row : detail.rows) {
    if (text_cell(row[name]) != "/aten::conv2d") continue;
    found = true;
    EXPECT_EQ(int_cell(row[calls]), 6);
  }
  EXPECT_TRUE(found) << "no /aten::conv2d row";
}

TEST(ReportRealdata, ResNet50IterationRangeRestrictsEveryReport) {
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_v100_workers0.pt.trace.json.gz");
  DeriveOptions o;
  o.iter_start = 1;
  o.iter_stop = 3;
  Built b = load_for_reports(path, o);
  auto kernel = report_of(b, "kernel").tables[0];
  EXPECT_EQ(column_sum(kernel, "Total GPU Time (ns)"),
            sql_int(b.store, "SELECT SUM(dur_ns) FROM kernel WHERE iteration BETWEEN 1 AND 3"));
  EXPECT_EQ(report_of(b, "iteration").tables[0].rows.size(),
            static_cast<size_t>(sql_int(b.store, "SELECT COUNT(*) FROM kernel WHERE iteration BETWEEN 1 AND 3")));
  auto detail = report_of(b, "detail").tables[0];
  EXPECT_EQ(column_sum(detail, "No. Calls"),
            sql_int(b.store, "SELECT COUNT(*) FROM op WHERE iteration BETWEEN 1 AND 3"));
  auto summary = report_of(b, "summary");
  expect_shares_add_up(summary);
  EXPECT_EQ(int_cell(summary_value(summary, "Iterations", "Total Iterations")), 6);
  EXPECT_EQ(int_cell(summary_value(summary, "Iterations", "Aggregated Iterations")), 3);
  EXPECT_EQ(int_cell(summary_value(summary, "Iterations", "Start Iteration")), 1);
  EXPECT_EQ(int_cell(summary_value(summary, "Iterations", "Stop Iteration")), 3);
  EXPECT_EQ(int_cell(summary_value(summary, "Iterations", "Average Iteration Time (ns)")),
            std::llround(static_cast<double>(
                             sql_int(b.store, "SELECT SUM(dur_ns) FROM iteration WHERE iteration BETWEEN 1 AND 3")) /
                         3.0));
  EXPECT_EQ(sql_int(b.store, "SELECT iter_start * 10 + iter_stop FROM trace"), 13)
      << "the range is recorded with the derived facts";
}

TEST(ReportRealdata, CupyNsysCrossChecks) {
  REALDATA_OR_SKIP(path, "nsys/nsys2020_cupy.sqlite");
  Built b = load_for_reports(path);
  expect_common_cross_checks(b);
  auto summary = report_of(b, "summary");
  EXPECT_EQ(int_cell(summary_value(summary, "System Config", "GPU Count")), 2);
  EXPECT_EQ(int_cell(summary_value(summary, "All Kernels", "All Kernels", "# Kernels")),
            sql_int(b.store,
                    "SELECT (SELECT COUNT(DISTINCT name) FROM kernel) + (SELECT COUNT(DISTINCT kind) FROM memcpy) + "
                    "(SELECT MIN(1, COUNT(*)) FROM memset)"));
  EXPECT_TRUE(b.model.domains.empty());
}

TEST(ReportRealdata, SaxpyMpiNsysCrossChecksAndMpiDomain) {
  REALDATA_OR_SKIP(path, "nsys/nsys2022_saxpy_mpi_all_tables.sqlite");
  Built b = load_for_reports(path);
  expect_common_cross_checks(b);
  ASSERT_EQ(b.model.domains, (std::vector<std::string>{"MPI"}));
  auto summary = report_of(b, "summary");
  EXPECT_EQ(int_cell(summary_value(summary, "Iterations", "Total Iterations")),
            sql_int(b.store, "SELECT COUNT(*) FROM iteration"));
  // The MPI domain holds the ops made from MPI-domain NVTX ranges (none of them launch kernels).
  auto mpi = report_of(b, "detail", "MPI").tables[0];
  EXPECT_EQ(column_sum(mpi, "No. Calls"),
            sql_int(b.store, "SELECT COUNT(*) FROM op o JOIN range r ON r.id = o.range_id WHERE r.domain = 'MPI'"));
  EXPECT_GT(mpi.rows.size(), 0u);
  EXPECT_EQ(report_of(b, "kernel", "MPI").tables[0].rows.size(), 0u);
  auto all = report_of(b, "detail").tables[0];
  EXPECT_GT(all.rows.size(), mpi.rows.size());
  expect_shares_add_up(report_of(b, "summary", "MPI"));
}

// Two NVTX domains (cudf's Python layer and libcudf): one set of reports per domain, each holding
// the ops of its ranges and the kernels they launched.
TEST(ReportRealdata, CudfNsysReportsPerNvtxDomain) {
  REALDATA_OR_SKIP(path, "nsys/nsys2020_cudf.sqlite");
  Built b = load_for_reports(path);
  expect_common_cross_checks(b);
  ASSERT_EQ(b.model.domains, (std::vector<std::string>{"cudf_python", "libcudf"}));
  for (const auto& d : b.model.domains) {
    std::string in_domain = "FROM op o JOIN range r ON r.id = o.range_id WHERE r.domain = '" + d + "'";
    auto detail = report_of(b, "detail", d).tables[0];
    EXPECT_EQ(column_sum(detail, "No. Calls"), sql_int(b.store, "SELECT COUNT(*) " + in_domain)) << d;
    auto kernel = report_of(b, "kernel", d).tables[0];
    EXPECT_EQ(column_sum(kernel, "Total GPU Time (ns)"),
              sql_int(b.store, "SELECT COALESCE(SUM(k.dur_ns), 0) FROM kernel k WHERE k.op_id IN (SELECT o.id " +
                                   in_domain + ")"))
        << d;
    expect_shares_add_up(report_of(b, "summary", d));
  }
}
