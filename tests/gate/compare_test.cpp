// tests/gate/compare_test.cpp — the gate's decision rules on hand-made sides (no files): budgets,
// components measured against the step, what gates and what explains, Holm correction, sides
// without iterations, detectable change, run-to-run noise, history mode, comparability, findings,
// verdict and exit code; and the A/A property test of the whole gate.
#include "engine/gate/compare.hpp"

#include <gtest/gtest.h>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

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

// A per-iteration component: `n` samples around `value` (+-spread, deterministic).
Metric component(const std::string& name, double value, size_t n = 20, double spread = 1) {
  Metric m = scalar(name, value);
  for (size_t i = 0; i < n; ++i) m.samples.push_back(value + spread * (static_cast<double>(i % 5) - 2) / 2);
  m.value = median(m.samples);
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

TEST(GateCompare, ComponentBudgetIsMeasuredAgainstTheBaselineStep) {
  GateConfig config;  // 5% of the 100 ns step = 5 ns
  config.gating.push_back("breakdown.*");
  auto r = compare_sides(side(steps(100, 20), {component("breakdown.cpu", 10), component("breakdown.dataloader", 20)}),
                         side(steps(100, 20), {component("breakdown.cpu", 14), component("breakdown.dataloader", 30)}),
                         {}, {}, config, false);
  const auto& cpu = metric(r, "breakdown.cpu");
  EXPECT_EQ(cpu.status, Status::unchanged);  // +40% of itself, but only 4% of the step
  ASSERT_TRUE(cpu.p_adjusted);
  EXPECT_LT(*cpu.p_adjusted, 0.05);  // significant, yet within the budget
  EXPECT_EQ(metric(r, "breakdown.dataloader").status, Status::regression);
  EXPECT_EQ(r.verdict, Verdict::regression);
  // By default components explain and never gate.
  auto d = compare_sides(side(steps(100, 20), {component("breakdown.dataloader", 20)}),
                         side(steps(100, 20), {component("breakdown.dataloader", 30)}), {}, {}, GateConfig{}, false);
  EXPECT_EQ(metric(d, "breakdown.dataloader").status, Status::regression);
  EXPECT_FALSE(metric(d, "breakdown.dataloader").gating);
  EXPECT_EQ(d.verdict, Verdict::pass);
}

TEST(GateCompare, OneOutlierStepInAComponentIsNoRegression) {
  // The case: idle ~3.9 ms per step, one step at the end of the window idles 100 ms; the
  // mean per step jumps +356%, the step's median does not move. Even opted in, no regression.
  GateConfig config;
  config.gating = {"*"};
  std::vector<double> base_steps, cand_steps, base_idle, cand_idle;
  for (int i = 0; i < 8; ++i) {
    base_steps.push_back(120e6 + (i % 3) * 1e6);
    cand_steps.push_back(120e6 + ((i + 1) % 3) * 1e6);
    base_idle.push_back(3.9e6 + (i % 4) * 0.1e6);
    cand_idle.push_back(3.9e6 + ((i + 2) % 4) * 0.1e6);
  }
  cand_idle.back() = 100e6;
  cand_steps.back() = 216e6;
  Metric bi = scalar("breakdown.idle", 0), ci = scalar("breakdown.idle", 0);
  bi.samples = base_idle;
  ci.samples = cand_idle;
  bi.value = median(base_idle);
  ci.value = median(cand_idle);
  auto r = compare_sides(side(base_steps, {bi}), side(cand_steps, {ci}), {}, {}, config, false);
  EXPECT_EQ(metric(r, "breakdown.idle").status, Status::unchanged) << metric(r, "breakdown.idle").reason;
  EXPECT_EQ(metric(r, "iteration_time").status, Status::unchanged);
  EXPECT_EQ(r.verdict, Verdict::pass);
}

TEST(GateCompare, AStepThatGotSignificantlyFasterIsNeverARegression) {
  GateConfig config;
  config.gating = {"*"};
  // AMP: the step drops 30%, casts add 10 ns per step.
  auto r = compare_sides(side(steps(100, 20), {component("op_type.cast", 1)}),
                         side(steps(100, 20, 0.7), {component("op_type.cast", 11)}), {}, {}, config, false);
  EXPECT_EQ(metric(r, "op_type.cast").status, Status::regression);
  EXPECT_FALSE(metric(r, "op_type.cast").gating);
  EXPECT_EQ(r.verdict, Verdict::improvement);
}

TEST(GateCompare, HolmAdjustsOverTheGatingFamilyOnly) {
  GateConfig config;
  config.gating = {"iteration_time", "breakdown.*"};
  auto r = compare_sides(side(steps(100, 20), {component("breakdown.cpu", 10), component("op_type.mm", 30)}),
                         side(steps(100, 20, 1.2), {component("breakdown.cpu", 30), component("op_type.mm", 30)}), {},
                         {}, config, false);
  EXPECT_EQ(r.gating_tests, 2u);     // iteration_time, breakdown.cpu
  EXPECT_EQ(r.explaining_tests, 1u);  // op_type.mm
  const auto& it = metric(r, "iteration_time");
  const auto& cpu = metric(r, "breakdown.cpu");
  // Holm over two: the smaller raw p is doubled, the larger is max(itself, the first adjusted).
  double lo = std::min(*it.p_value, *cpu.p_value), hi = std::max(*it.p_value, *cpu.p_value);
  double adj_lo = std::min(1.0, 2 * lo), adj_hi = std::max(adj_lo, hi);
  EXPECT_DOUBLE_EQ(std::min(*it.p_adjusted, *cpu.p_adjusted), adj_lo);
  EXPECT_DOUBLE_EQ(std::max(*it.p_adjusted, *cpu.p_adjusted), adj_hi);
  EXPECT_DOUBLE_EQ(*metric(r, "op_type.mm").p_adjusted, *metric(r, "op_type.mm").p_value);
}

TEST(GateCompare, ZeroComponentIsNotAReason) {
  // "breakdown.memset 0.0% -> 0.0% (+0.0 pp), beyond the 5% budget" must not happen.
  GateConfig config;
  config.gating = {"*"};
  auto r = compare_sides(side(steps(100, 20), {component("breakdown.memset", 0, 20, 0)}),
                         side(steps(100, 20), {component("breakdown.memset", 0, 20, 0)}), {}, {}, config, false);
  EXPECT_EQ(metric(r, "breakdown.memset").status, Status::unchanged);
  EXPECT_EQ(r.verdict, Verdict::pass);
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
  GateConfig config;  // kernels explain by default
  auto r = compare_sides(side(steps(100, 20), {component("kernel.sgemm", 10)}),
                         side(steps(100, 20), {component("kernel.sgemm", 60)}), {}, {}, config, false);
  const auto& k = metric(r, "kernel.sgemm");
  EXPECT_EQ(k.status, Status::regression);
  EXPECT_FALSE(k.gating);
  EXPECT_EQ(r.verdict, Verdict::pass);
  config.gating = {"*"};
  config.informational = {"kernel.*"};  // the deny list wins over an opt-in
  auto again = compare_sides(side(steps(100, 20), {component("kernel.sgemm", 10)}),
                             side(steps(100, 20), {component("kernel.sgemm", 60)}), {}, {}, config, false);
  EXPECT_FALSE(metric(again, "kernel.sgemm").gating);
  EXPECT_EQ(again.verdict, Verdict::pass);
}

TEST(GateCompare, AllowAndDenyLists) {
  GateConfig config;
  config.skip_metrics = {"breakdown.*"};
  auto r = compare_sides(side(steps(100, 20), {component("breakdown.cpu", 10)}),
                         side(steps(100, 20), {component("breakdown.cpu", 60)}), {}, {}, config, false);
  for (const auto& m : r.metrics) EXPECT_NE(m.name, "breakdown.cpu");
  EXPECT_EQ(r.verdict, Verdict::pass);
  config.skip_metrics.clear();
  config.metrics = {"iteration_time"};
  auto only = compare_sides(side(steps(100, 20), {component("breakdown.cpu", 10)}),
                            side(steps(100, 20), {component("breakdown.cpu", 60)}), {}, {}, config, false);
  ASSERT_EQ(only.metrics.size(), 1u);
}

TEST(GateCompare, NewOpTypeCountsFromZero) {
  GateConfig config;
  auto r = compare_sides(side(steps(100, 20)), side(steps(100, 20), {component("op_type.copy_", 20, 20, 0)}), {}, {},
                         config, false);
  const auto& m = metric(r, "op_type.copy_");
  ASSERT_TRUE(m.baseline);
  EXPECT_DOUBLE_EQ(*m.baseline, 0);  // zero in every baseline step
  EXPECT_DOUBLE_EQ(m.delta, 20);
  EXPECT_EQ(m.status, Status::regression);
  EXPECT_FALSE(m.gating);
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

namespace {

// A side without iterations: per-launch durations of each kernel.
Side window(const std::map<std::string, std::vector<double>>& launches) {
  Side s;
  s.paths = {"w.json"};
  s.runs = 1;
  for (const auto& [name, v] : launches) {
    Metric m = scalar("kernel_launch." + name, median(v), Unit::ns, false);
    m.samples = v;
    double total = 0;
    for (double x : v) total += x;
    m.run_values = {total};
    s.metrics.push_back(m);
  }
  Metric wall = scalar("wall_time", 300e6, Unit::ns, false);
  s.metrics.push_back(wall);
  s.fingerprint.gpu_setups = {"2 x NVIDIA A100 (cc 8.0)"};
  s.fingerprint.formats = {"nsys"};
  return s;
}

std::vector<double> launches(size_t n, double base, double factor = 1.0) {
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) v.push_back((base + static_cast<double>(i % 11) - 5) * factor);
  return v;
}

}  // namespace

TEST(GateCompare, WithoutIterationsWindowTotalsNeverGate) {
  GateConfig config;
  // The same job, windows holding 300 and 450 launches: per launch nothing changed.
  auto a = window({{"gemm", launches(300, 1000)}, {"nccl", launches(150, 5000)}});
  auto b = window({{"gemm", launches(450, 1000)}, {"nccl", launches(225, 5000)}});
  for (auto [x, y] : {std::pair{&a, &b}, std::pair{&b, &a}}) {
    auto r = compare_sides(*x, *y, {}, {}, config, false);
    EXPECT_EQ(r.verdict, Verdict::pass) << r.headline;
    EXPECT_EQ(metric(r, "kernel_time_per_launch").status, Status::unchanged);
    for (const auto& m : r.metrics) EXPECT_NE(m.name, "wall_time");
    ASSERT_FALSE(r.caveats.empty());
    EXPECT_NE(r.caveats.front().find("per launch"), std::string::npos);
  }
  // Every kernel 10% slower per launch: a regression, in a window of another length.
  auto slow = window({{"gemm", launches(200, 1000, 1.1)}, {"nccl", launches(100, 5000, 1.1)}});
  auto r = compare_sides(a, slow, {}, {}, config, false);
  EXPECT_EQ(r.verdict, Verdict::regression) << r.headline;
  EXPECT_EQ(metric(r, "kernel_time_per_launch").status, Status::regression);
}

TEST(GateCompare, WithoutIterationsOrCommonKernelsIsInconclusive) {
  GateConfig config;
  auto a = window({{"gemm", launches(30, 1000)}});
  auto b = window({{"conv", launches(30, 1000)}});
  auto r = compare_sides(a, b, {}, {}, config, false);
  EXPECT_EQ(r.verdict, Verdict::inconclusive);
  EXPECT_EQ(r.headline.rfind("inconclusive: ", 0), 0u) << r.headline;
  EXPECT_NE(r.headline.find("--key-node"), std::string::npos) << r.headline;
  EXPECT_NE(r.headline.find("ProfilerStep"), std::string::npos) << r.headline;
  EXPECT_EQ(compare_sides(a, b, {}, {}, config, true).exit_code(), 1);
}

TEST(GateCompare, SaysWhatTheSampleCanDetect) {
  GateConfig config;
  // The samples of GateStats.MinimalDetectableChangeByHand: ~4.2% detectable with 5 vs 6 steps.
  auto r = compare_sides(side({97, 100, 103, 99, 101}), side({98, 100, 102, 97, 103, 100}), {}, {}, config, false);
  const auto& it = metric(r, "iteration_time");
  ASSERT_TRUE(it.detectable_change);
  EXPECT_NEAR(*it.detectable_change, 0.041790783521061886, 1e-8);
  bool said = false;
  for (const auto& c : r.caveats) said |= c.find("with 5 vs 6 steps at 2.4% step-to-step noise, changes under ~4.2%") == 0;
  EXPECT_TRUE(said) << ::testing::PrintToString(r.caveats);
  // 3 vs 3 can never be significant: said so, and the verdict is inconclusive with the reason.
  auto few = compare_sides(side({100, 101, 99}), side({150, 151, 149}), {}, {}, config, false);
  EXPECT_EQ(few.headline.rfind("inconclusive: iteration time inconclusive (too few iterations", 0), 0u)
      << few.headline;
}

TEST(GateCompare, RunToRunNoise) {
  GateConfig config;
  // One run per side: said, whatever the verdict.
  auto one = compare_sides(side(steps(100, 20)), side(steps(100, 20)), {}, {}, config, false);
  bool said = false;
  for (const auto& c : one.caveats) said |= c.find("run-to-run variance is unmeasured") != std::string::npos;
  EXPECT_TRUE(said);
  // Three runs per side: the pooled steps differ by 10%, the run medians (100, 120, 80 against
  // 110, 130, 90) do not: Welch t = 10 / sqrt(2 x 400 / 3) = 0.61, p = 0.57 -> no regression.
  Side b = side(steps(100, 30)), c = side(steps(100, 30, 1.1));
  b.runs = c.runs = 3;
  b.metrics[0].run_values = {100, 120, 80};
  c.metrics[0].run_values = {110, 130, 90};
  auto r = compare_sides(b, c, {}, {}, config, false);
  const auto& it = metric(r, "iteration_time");
  ASSERT_TRUE(it.run_p_value);
  EXPECT_GT(*it.run_p_value, 0.5);
  EXPECT_LT(*it.p_value, 1e-6);
  EXPECT_EQ(it.status, Status::unchanged) << it.reason;
  EXPECT_NE(it.reason.find("within run-to-run noise"), std::string::npos);
  for (const auto& cv : r.caveats) EXPECT_EQ(cv.find("one run per side"), std::string::npos);
  // Consistent runs: the regression stands.
  b.metrics[0].run_values = {100, 101, 99};
  c.metrics[0].run_values = {110, 111, 109};
  EXPECT_EQ(compare_sides(b, c, {}, {}, config, false).verdict, Verdict::regression);
}

TEST(GateHistory, CandidateAgainstTheSpreadOfPastRuns) {
  GateConfig config;
  std::vector<Side> past;
  std::vector<std::vector<Finding>> past_findings;
  for (double m : {100.0, 102.0, 98.0, 101.0, 99.0}) {
    past.push_back(side(steps(m, 20)));
    past_findings.emplace_back();
  }
  // Past medians 100 +- 1 (MAD 1 -> spread 1.4826): 3 spreads = 4.4, the 5% budget = 5.
  auto same = compare_history(past, side(steps(101, 20)), past_findings, {}, config, false);
  EXPECT_EQ(same.verdict, Verdict::pass) << same.headline;
  EXPECT_EQ(same.mode, "history");
  const auto& it = metric(same, "iteration_time");
  ASSERT_TRUE(it.history_median);
  EXPECT_DOUBLE_EQ(*it.history_median, 100);
  EXPECT_NEAR(*it.history_spread, 1.4826, 1e-12);
  EXPECT_EQ(it.history_runs, 5u);
  auto slow = compare_history(past, side(steps(106, 20)), past_findings, {}, config, false);
  EXPECT_EQ(slow.verdict, Verdict::regression) << slow.headline;
  EXPECT_EQ(slow.exit_code(), 1);
  auto fast = compare_history(past, side(steps(90, 20)), past_findings, {}, config, false);
  EXPECT_EQ(fast.verdict, Verdict::improvement);
  // A noisy history widens the band: past medians 80..120 (MAD 10): +15% is inside 3 spreads.
  std::vector<Side> noisy;
  for (double m : {80.0, 90.0, 100.0, 110.0, 120.0}) noisy.push_back(side(steps(m, 20)));
  EXPECT_EQ(compare_history(noisy, side(steps(115, 20)), past_findings, {}, config, false).verdict, Verdict::pass);
  // Too short a history: inconclusive, and said why.
  std::vector<Side> two(past.begin(), past.begin() + 2);
  auto short_history = compare_history(two, side(steps(130, 20)), {{}, {}}, {}, config, false);
  EXPECT_EQ(short_history.verdict, Verdict::inconclusive);
  EXPECT_NE(short_history.headline.find("at least 3 needed"), std::string::npos) << short_history.headline;
}

namespace {

// Deterministic normal draws on every platform: Box-Muller on the raw 64-bit engine output.
struct Normal {
  std::mt19937_64 rng;
  explicit Normal(uint64_t seed) : rng(seed) {}
  double uniform() { return (static_cast<double>(rng() >> 11) + 0.5) / 9007199254740992.0; }
  double operator()() { return std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform()); }
};

// One side of an A/A pair: n steps of a job whose parts are drawn independently from fixed
// distributions; one step in twenty is an outlier (x2.5, the slow step).
Side random_side(Normal& draw, size_t n) {
  struct Part {
    const char* name;
    double mean, sd;
  };
  static const Part parts[] = {{"breakdown.kernel", 60, 6},  {"breakdown.idle", 5, 2}, {"breakdown.cpu", 20, 4},
                               {"breakdown.dataloader", 8, 3}, {"op_type.mm", 40, 4},  {"kernel.sgemm", 30, 3},
                               {"breakdown.memset", 0.2, 0.2}};
  std::vector<double> step(n, 0.0);
  std::vector<Metric> comps;
  std::vector<double> outlier(n, 1.0);
  for (size_t i = 0; i < n; ++i)
    if (draw.uniform() < 0.05) outlier[i] = 2.5;
  for (const auto& p : parts) {
    Metric m = scalar(p.name, 0);
    for (size_t i = 0; i < n; ++i) m.samples.push_back(std::max(0.0, p.mean + p.sd * draw()) * outlier[i]);
    m.value = median(m.samples);
    if (std::string(p.name).rfind("breakdown.", 0) == 0)
      for (size_t i = 0; i < n; ++i) step[i] += m.samples[i];
    comps.push_back(m);
  }
  return side(step, comps);
}

}  // namespace

// The whole gate under A/A: 1000 pairs drawn from one distribution (5 to 12 steps a side, one step
// in twenty an outlier), every metric opted in to gate, budgets and the floor at 0 so only the
// statistics decide. Holm keeps the chance of any false regression at or below alpha; without
// the correction (any metric's raw p < alpha in the worse direction) the rate is several times
// higher, which shows the test can fail.
TEST(GateProperty, AaFalseRegressionRateOfTheWholeGateIsAtMostAlpha) {
  GateConfig strictest;
  strictest.gating = {"*"};
  strictest.noise_floor = 0;
  strictest.max_regression = parse_gate_budget("0%", "test");
  GateConfig defaults;
  Normal draw(20261125);
  const int pairs = 1000;
  int regressions = 0, default_regressions = 0, uncorrected = 0;
  for (int k = 0; k < pairs; ++k) {
    // Sizes 5..12, the two sides within [gate] max_iteration_count_ratio of each other.
    size_t nb = 5 + draw.rng() % 8;
    size_t nc = std::max<size_t>(5, nb + draw.rng() % 3 - 1);
    Side b = random_side(draw, nb), c = random_side(draw, nc);
    auto r = compare_sides(b, c, {}, {}, strictest, false);
    regressions += r.verdict == Verdict::regression;
    bool any = false;
    for (const auto& m : r.metrics) any |= m.p_value && *m.p_value < strictest.alpha && m.delta > 0;
    uncorrected += any;
    default_regressions += compare_sides(b, c, {}, {}, defaults, false).verdict == Verdict::regression;
  }
  RecordProperty("aa_pairs", pairs);
  EXPECT_LE(regressions, static_cast<int>(strictest.alpha * pairs)) << regressions << " of " << pairs;
  EXPECT_LE(default_regressions, static_cast<int>(strictest.alpha * pairs)) << default_regressions;
  EXPECT_GT(uncorrected, 2 * static_cast<int>(strictest.alpha * pairs)) << uncorrected;
  std::printf("A/A property: %d pairs, %d regressions with every metric gating at 0%% budget, %d with the defaults, "
              "%d pairs with an uncorrected raw p < alpha\n",
              pairs, regressions, default_regressions, uncorrected);
}
