// engine/gate/compare.hpp — the regression gate: two sides in, a verdict per metric and overall.
//
// Decision rules (docs/compare.md, DESIGN.md section 10):
// - every per-iteration metric (iteration time, breakdown categories, op types, kernels) is judged
//   on its per-iteration samples: two-sided Mann-Whitney U, adjusted over the metrics tested
//   together (Holm for what gates, Benjamini-Hochberg for what explains), plus the change of the
//   medians beyond a budget; components are measured against the baseline's median STEP, so a
//   component moves the verdict only if it moves the step.
// - what gates: [gate] gating (iteration time, throughput, peak memory by default) and new
//   findings from fail_on_new_findings; everything else explains the verdict.
// - no iterations: kernels compared per launch (kernel_time_per_launch), never window totals;
//   nothing to normalise by: inconclusive with what to capture.
// - comparability first: different GPUs, formats, frameworks, batch sizes or iteration counts make
//   the result inconclusive (a failure with --strict), never a false pass or fail.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/finding.hpp"
#include "engine/config/config.hpp"
#include "engine/gate/metrics.hpp"
#include "engine/gate/stats.hpp"

namespace proflint::gate {

enum class Status { regression, improvement, unchanged, inconclusive };
std::string_view status_name(Status s);  // 'regression', 'improvement', 'unchanged', 'inconclusive'

struct MetricResult {
  std::string name, scope;
  Unit unit = Unit::ns;
  Polarity polarity = Polarity::lower_is_better;
  bool per_iteration = false;
  std::optional<double> baseline, candidate;  // absent: the metric exists on one side only
  double delta = 0;                           // candidate - baseline
  std::optional<double> relative;             // delta / |baseline|
  Status status = Status::unchanged;
  bool gating = true;  // false: informational, never fails the gate
  GateBudget budget;
  std::string reason;  // why this status, in one sentence
  // Metrics judged on samples:
  std::optional<double> p_value;     // raw two-sided Mann-Whitney p
  std::optional<double> p_adjusted;  // adjusted over its family: Holm (gating), Benjamini-Hochberg (explaining)
  std::optional<double> baseline_step;  // components: the baseline median step their budget is measured against
  // iteration_time only:
  std::optional<double> detectable_change;  // relative change the samples can tell from noise (power 0.8)
  std::optional<double> noise;              // robust relative spread of the steps (1.4826 MAD / median)
  int64_t steps_for_budget = 0;             // steps per side needed to detect a change of the budget's size
  std::optional<double> run_p_value;        // several runs per side: Welch t-test on the log run medians
  size_t baseline_runs = 0, candidate_runs = 0;
  // history mode (one candidate against many past runs):
  std::optional<double> history_median, history_spread;  // median and 1.4826 x MAD of the past runs
  size_t history_runs = 0;
  std::optional<Interval> ratio_ci;  // of median(candidate) / median(baseline)
  bool exact_test = false;
  size_t baseline_n = 0, candidate_n = 0;
};

struct FindingChange {
  std::string change;  // 'new' or 'gone'
  std::string id, title, severity, scope, problem, source;
  int64_t estimated_savings_ns = 0;
  bool gating = false;  // a new finding that fails the gate ([gate] fail_on_new_findings)
};

enum class Verdict { pass, improvement, regression, inconclusive };
std::string_view verdict_name(Verdict v);  // 'pass', 'improvement', 'regression', 'inconclusive'

struct CompareResult {
  Verdict verdict = Verdict::pass;
  std::string headline;                   // one sentence: the verdict and its main reason
  std::vector<std::string> incomparable;  // why the sides cannot be compared (empty: comparable)
  std::vector<MetricResult> metrics;      // most significant first
  std::vector<FindingChange> findings;    // new first, then gone
  std::vector<std::string> notes;         // warm-up, combined ranks, metrics compared on one side only
  std::vector<std::string> caveats;       // what the verdict cannot see: detectable change, run-to-run noise
  std::string mode = "pair";              // 'pair' (baseline against candidate) or 'history' (past runs)
  std::string correction = "holm+bh";     // gating family: Holm; explaining family: Benjamini-Hochberg
  size_t gating_tests = 0, explaining_tests = 0;  // metrics tested in each family
  std::vector<std::string> baseline_paths, candidate_paths;
  Fingerprint baseline_fingerprint, candidate_fingerprint;
  double alpha = 0.05;
  bool strict = false;

  // 0 pass / improvement / inconclusive (without --strict), 1 regression (or inconclusive with --strict).
  int exit_code() const;
};

// `base_findings` / `cand_findings`: the ranked findings of each side (analysis already run).
CompareResult compare_sides(const Side& base, const Side& cand, const std::vector<Finding>& base_findings,
                            const std::vector<Finding>& cand_findings, const GateConfig& config, bool strict);

// History mode: `past` are separate earlier runs of the same job (one Side each), `cand` the run
// under test. Each metric is judged against the median and the 1.4826 x MAD spread of its past
// values: a regression lies beyond [gate] history_threshold spreads AND beyond the budget.
CompareResult compare_history(const std::vector<Side>& past, const Side& cand,
                              const std::vector<std::vector<Finding>>& past_findings,
                              const std::vector<Finding>& cand_findings, const GateConfig& config, bool strict);

// True when `name` may fail the gate under `config` ([gate] gating minus informational).
bool is_gating(const GateConfig& config, const std::string& name);

// A metric value for people: "1.23 ms", "45.6%", "2.0 GiB".
std::string format_metric_value(double value, Unit unit);
// The change of a result: "+3.3%", "-14.7 pp" for shares, "+2.00 ms" when the baseline is 0.
std::string format_change(const MetricResult& r);

// True when `name` matches the pattern ('*' matches any run of characters).
bool metric_matches(const std::string& pattern, const std::string& name);

// The budget for a metric: the last matching [gate.budgets] entry, else [gate] max_regression,
// else the built-in default (5%, or 5 pp for utilization and Tensor Core share).
GateBudget budget_for(const GateConfig& config, const std::string& name);

}  // namespace proflint::gate
