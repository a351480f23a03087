// engine/gate/compare.hpp — the regression gate: two sides in, a verdict per metric and overall.
//
// Decision rules (docs/compare.md):
// - iteration_time: two-sided Mann-Whitney U at `alpha` plus the median ratio with a bootstrap
//   confidence interval; a regression needs both p < alpha and a slowdown beyond the budget.
//   Fewer than `min_iterations` on a side: inconclusive, with the reason.
// - every other metric: a budget (relative or absolute) plus a noise floor for times.
// - findings (detectors + Lua rules) new in the candidate or gone, by id and scope.
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
  // iteration_time only:
  std::optional<double> p_value;
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
