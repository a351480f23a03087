// tests/gate/compare_test.cpp — the gate's decision rules on hand-made sides (no files): budgets,
// noise floor, polarity, comparability, informational metrics, findings, verdict and exit code.
#include "engine/gate/compare.hpp"

#include <gtest/gtest.h>

#include "engine/common/error.hpp"

using namespace proflint;
using namespace proflint::gate;

namespace {

Metric scalar(const std::string& name, double value, Unit unit = Unit::ns, bool per_iteration = true,
              Polarity polarity = Polarity::lower_is_better, const std::string& scope = "") {
  Metric m;
  m.name = name;
  m.scope = scope;
  m.unit = unit;
  m.polarity = polarity;
  m.per_iteration = per_iteration;
  m.value = value;
  return m;
}

Side side(std::vector<double> steps, std::vector<Metric> extra = {},
          const std::string& gpu = "1 x NVIDIA A100 (cc 8.0)") {
  Side s;
  s.paths = {"x.json"};
  Metric it;
  it.name = "iteration_time";
  it.per_iteration = true;
  it.samples = steps;
  it.value = median(steps);
  s.metrics.push_back(it);
  for (auto& m : extra) s.metrics.push_back(m);
  s.fingerprint.gpu_setups = {gpu};
  s.fingerprint.formats = {"kineto"};
  s.fingerprint.iterations_per_trace = static_cast<double>(steps.size());
  return s;
}

std::vector<double> steps(double base, size_t n, double factor = 1.0) {
  std::vector<double> out;
  for (size_t i = 0; i < n; ++i) out.push_back((base + static_cast<double>(i % 7) - 3) * factor);  // +-3 spread
  return out;
}

const MetricResult& metric(const CompareResult& r, const std::string& name) {
  for (const auto& m : r.metrics)
    if (m.name == name) return m;
  throw std::runtime_error("no metric " + name);
}

}  // namespace

TEST(GateCompare, SlowdownBeyondBudgetIsARegressionAndExitsOne) {
  GateConfig config;
  auto r = compare_sides(side(steps(100, 30)), side(steps(100, 30, 1.2)), {}, {}, config, false);
  EXPECT_EQ(r.verdict, Verdict::regression);
  EXPECT_EQ(r.exit_code(), 1);
  const auto& it = metric(r, "iteration_time");
  EXPECT_EQ(it.status, Status::regression);
  ASSERT_TRUE(it.p_value);
  EXPECT_LT(*it.p_value, 1e-6);
  ASSERT_TRUE(it.ratio_ci);
  EXPECT_GT(it.ratio_ci->low, 1.1);
}

TEST(GateCompare, SignificantButWithinBudgetPasses) {
  GateConfig config;
  auto r = compare_sides(side(steps(1000, 50)), side(steps(1000, 50, 1.03)), {}, {}, config, false);
  const auto& it = metric(r, "iteration_time");
  ASSERT_TRUE(it.p_value);
  EXPECT_LT(*it.p_value, 0.05);
  EXPECT_EQ(it.status, Status::unchanged);
  EXPECT_EQ(r.verdict, Verdict::pass);
  config.budgets.emplace_back("iteration_time", parse_gate_budget("2%", "test"));
  auto strict = compare_sides(side(steps(1000, 50)), side(steps(1000, 50, 1.03)), {}, {}, config, false);
  EXPECT_EQ(strict.verdict, Verdict::regression);
}

TEST(GateCompare, SpeedupIsAnImprovement) {
  GateConfig config;
  auto r = compare_sides(side(steps(100, 20)), side(steps(100, 20, 0.7)), {}, {}, config, false);
  EXPECT_EQ(r.verdict, Verdict::improvement);
  EXPECT_EQ(r.exit_code(), 0);
}

TEST(GateCompare, TooFewIterationsIsInconclusiveAndStrictFails) {
  GateConfig config;
  auto r = compare_sides(side({100, 101, 99}), side({150, 151, 149}), {}, {}, config, false);
  EXPECT_EQ(metric(r, "iteration_time").status, Status::inconclusive);
  EXPECT_EQ(r.verdict, Verdict::inconclusive);
  EXPECT_EQ(r.exit_code(), 0);
  auto s = compare_sides(side({100, 101, 99}), side({150, 151, 149}), {}, {}, config, true);
  EXPECT_EQ(s.exit_code(), 1);
}

TEST(GateCompare, DifferentGpusAreNotComparable) {
  GateConfig config;
  auto r = compare_sides(side(steps(100, 20)), side(steps(100, 20, 1.5), {}, "1 x NVIDIA H100 (cc 9.0)"), {}, {},
                         config, false);
  EXPECT_EQ(r.verdict, Verdict::inconclusive);
  ASSERT_EQ(r.incomparable.size(), 1u);
  EXPECT_NE(r.incomparable[0].find("different GPUs"), std::string::npos);
  EXPECT_EQ(r.exit_code(), 0);
}

TEST(GateCompare, BatchAndIterationCountMismatches) {
  GateConfig config;
  Side a = side(steps(100, 20)), b = side(steps(100, 40));
  a.fingerprint.batch = 32;
  b.fingerprint.batch = 64;
  auto r = compare_sides(a, b, {}, {}, config, false);
  ASSERT_EQ(r.incomparable.size(), 2u);
  EXPECT_NE(r.incomparable[0].find("iteration counts differ"), std::string::npos);
  EXPECT_NE(r.incomparable[1].find("different batch sizes: 32 on the baseline, 64"), std::string::npos);
}

TEST(GateCompare, UnrecordedGpuModelMatchesAnyModelButNotAnotherCount) {
  GateConfig config;
  Side named = side(steps(100, 20)), unnamed = side(steps(100, 20), {}, "1 x GPU (model not recorded)");
  named.fingerprint.gpu_counts = {1};
  unnamed.fingerprint.gpu_counts = {1};
  auto same = compare_sides(unnamed, named, {}, {}, config, false);
  EXPECT_TRUE(same.incomparable.empty());
  Side two = side(steps(100, 20), {}, "2 x GPU (model not recorded)");
  two.fingerprint.gpu_counts = {2};
  auto other = compare_sides(two, named, {}, {}, config, false);
  ASSERT_EQ(other.incomparable.size(), 1u);
  EXPECT_NE(other.incomparable[0].find("different numbers of GPUs"), std::string::npos);
}

TEST(GateCompare, AnotherWorkloadIsNotComparable) {
  GateConfig config;
  // Same op types, shifted proportions (AMP-like): overlap 0.6 + 0.3 = 0.9, comparable.
  auto shifted = compare_sides(
      side(steps(100, 20), {scalar("op_type.conv", 70), scalar("op_type.mm", 30)}),
      side(steps(100, 20), {scalar("op_type.conv", 30), scalar("op_type.mm", 20), scalar("op_type.copy", 5)}), {}, {},
      config, false);
  EXPECT_TRUE(shifted.incomparable.empty());
  // Another model: overlap 0.1.
  auto other = compare_sides(side(steps(100, 20), {scalar("op_type.conv", 90), scalar("op_type.mm", 10)}),
                             side(steps(100, 20), {scalar("op_type.embedding", 90), scalar("op_type.mm", 10)}), {}, {},
                             config, false);
  ASSERT_EQ(other.incomparable.size(), 1u);
  EXPECT_NE(other.incomparable[0].find("different workloads: only 10%"), std::string::npos) << other.incomparable[0];
}

TEST(GateCompare, ComponentMetricsNeedTheNoiseFloor) {
  GateConfig config;  // noise floor 5% of the 100 ns step = 5 ns
  auto r = compare_sides(side(steps(100, 20), {scalar("breakdown.cpu", 10), scalar("breakdown.dataloader", 20)}),
                         side(steps(100, 20), {scalar("breakdown.cpu", 14), scalar("breakdown.dataloader", 30)}), {},
                         {}, config, false);
  EXPECT_EQ(metric(r, "breakdown.cpu").status, Status::unchanged);  // +40% but only 4% of the step
  EXPECT_EQ(metric(r, "breakdown.dataloader").status, Status::regression);
  EXPECT_EQ(r.verdict, Verdict::regression);
}

TEST(GateCompare, PolarityOfShares) {
  GateConfig config;
  auto util = [](double v) { return scalar("gpu_utilization", v, Unit::share, false, Polarity::higher_is_better); };
  auto down =
      compare_sides(side(steps(100, 20), {util(0.80)}), side(steps(100, 20), {util(0.70)}), {}, {}, config, false);
  EXPECT_EQ(metric(down, "gpu_utilization").status, Status::regression);  // -10 pp, budget 5 pp
  auto up =
      compare_sides(side(steps(100, 20), {util(0.70)}), side(steps(100, 20), {util(0.80)}), {}, {}, config, false);
  EXPECT_EQ(metric(up, "gpu_utilization").status, Status::improvement);
  auto small =
      compare_sides(side(steps(100, 20), {util(0.70)}), side(steps(100, 20), {util(0.67)}), {}, {}, config, false);
  EXPECT_EQ(metric(small, "gpu_utilization").status, Status::unchanged);
}

TEST(GateCompare, InformationalMetricsNeverFail) {
  GateConfig config;  // kernel.* is informational by default
  auto r = compare_sides(side(steps(100, 20), {scalar("kernel.sgemm", 10)}),
                         side(steps(100, 20), {scalar("kernel.sgemm", 60)}), {}, {}, config, false);
  const auto& k = metric(r, "kernel.sgemm");
  EXPECT_EQ(k.status, Status::regression);
  EXPECT_FALSE(k.gating);
  EXPECT_EQ(r.verdict, Verdict::pass);
}

TEST(GateCompare, AllowAndDenyLists) {
  GateConfig config;
  config.skip_metrics = {"breakdown.*"};
  auto r = compare_sides(side(steps(100, 20), {scalar("breakdown.cpu", 10)}),
                         side(steps(100, 20), {scalar("breakdown.cpu", 60)}), {}, {}, config, false);
  for (const auto& m : r.metrics) EXPECT_NE(m.name, "breakdown.cpu");
  EXPECT_EQ(r.verdict, Verdict::pass);
  config.skip_metrics.clear();
  config.metrics = {"iteration_time"};
  auto only = compare_sides(side(steps(100, 20), {scalar("breakdown.cpu", 10)}),
                            side(steps(100, 20), {scalar("breakdown.cpu", 60)}), {}, {}, config, false);
  ASSERT_EQ(only.metrics.size(), 1u);
}

TEST(GateCompare, NewOpTypeCountsFromZero) {
  GateConfig config;
  auto r =
      compare_sides(side(steps(100, 20)), side(steps(100, 20), {scalar("op_type.copy_", 20)}), {}, {}, config, false);
  const auto& m = metric(r, "op_type.copy_");
  EXPECT_FALSE(m.baseline);
  EXPECT_DOUBLE_EQ(m.delta, 20);
  EXPECT_EQ(m.status, Status::regression);
}

TEST(GateCompare, NewFindingsFailOnlyWhenConfigured) {
  Finding f;
  f.id = "amp-not-used";
  f.title = "AMP";
  f.effective_severity = Severity::high;
  f.scope.device_id = 0;
  GateConfig config;
  auto r = compare_sides(side(steps(100, 20)), side(steps(100, 20)), {}, {f}, config, false);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].change, "new");
  EXPECT_FALSE(r.findings[0].gating);
  EXPECT_EQ(r.verdict, Verdict::pass);
  config.fail_on_new_findings = {"amp-not-used"};
  EXPECT_EQ(compare_sides(side(steps(100, 20)), side(steps(100, 20)), {}, {f}, config, false).verdict,
            Verdict::regression);
  config.fail_on_new_findings.clear();
  config.fail_on_new_severity = "medium";
  EXPECT_EQ(compare_sides(side(steps(100, 20)), side(steps(100, 20)), {}, {f}, config, false).verdict,
            Verdict::regression);
  config.fail_on_new_severity = "high";
  auto gone = compare_sides(side(steps(100, 20)), side(steps(100, 20)), {f}, {}, config, false);
  ASSERT_EQ(gone.findings.size(), 1u);
  EXPECT_EQ(gone.findings[0].change, "gone");
  EXPECT_EQ(gone.verdict, Verdict::pass);
}

TEST(GateBudget, Parsing) {
  EXPECT_EQ(parse_gate_budget("5%", "").kind, GateBudget::Kind::relative);
  EXPECT_DOUBLE_EQ(parse_gate_budget("5%", "").amount, 5);
  EXPECT_DOUBLE_EQ(parse_gate_budget("7.5", "").amount, 7.5);
  EXPECT_EQ(parse_gate_budget("3 pp", "").kind, GateBudget::Kind::share_points);
  EXPECT_DOUBLE_EQ(parse_gate_budget("3 pp", "").amount, 0.03);
  EXPECT_DOUBLE_EQ(parse_gate_budget("2ms", "").amount, 2e6);
  EXPECT_DOUBLE_EQ(parse_gate_budget("500 us", "").amount, 5e5);
  EXPECT_DOUBLE_EQ(parse_gate_budget("1.5 s", "").amount, 1.5e9);
  EXPECT_DOUBLE_EQ(parse_gate_budget("64 MiB", "").amount, 64.0 * 1024 * 1024);
  for (const char* bad : {"", "%", "five", "5 parsecs", "1.2.3%", "-5%"}) {
    try {
      parse_gate_budget(bad, "proflint.toml:3:5");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("proflint.toml:3:5: budget"), std::string::npos) << e.what();
    }
  }
}

TEST(GateBudget, LookupOrderAndUnits) {
  GateConfig config;
  EXPECT_EQ(budget_for(config, "iteration_time").text, "5%");
  EXPECT_EQ(budget_for(config, "gpu_utilization").text, "5 pp");
  config.max_regression = parse_gate_budget("3%", "");
  EXPECT_EQ(budget_for(config, "op_type.mm").text, "3%");
  config.budgets.emplace_back("op_type.*", parse_gate_budget("1 ms", "f:1:1"));
  config.budgets.emplace_back("op_type.mm", parse_gate_budget("10%", "f:2:1"));
  EXPECT_EQ(budget_for(config, "op_type.mm").text, "10%");  // the last match wins
  EXPECT_EQ(budget_for(config, "op_type.conv").text, "1 ms");
  EXPECT_EQ(budget_for(config, "gpu_utilization").text, "3%");  // the wildcard time budget does not apply
  config.budgets.emplace_back("gpu_utilization", parse_gate_budget("2 ms", "f:3:1"));
  EXPECT_THROW(budget_for(config, "gpu_utilization"), Error);  // named, wrong unit: an error
}

TEST(GateCompare, GlobMatching) {
  EXPECT_TRUE(metric_matches("*", "anything"));
  EXPECT_TRUE(metric_matches("op_type.*", "op_type.conv2d"));
  EXPECT_FALSE(metric_matches("op_type.*", "kernel.x"));
  EXPECT_TRUE(metric_matches("*.dataloader", "breakdown.dataloader"));
  EXPECT_TRUE(metric_matches("k*l.*a*", "kernel.sgemm_abc"));
  EXPECT_FALSE(metric_matches("iteration_time", "iteration_time2"));
}
