// engine/gate/compare.cpp — see compare.hpp.
#include "engine/gate/compare.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "engine/common/error.hpp"
#include "engine/common/format.hpp"

namespace proflint::gate {

std::string_view status_name(Status s) {
  switch (s) {
    case Status::regression:
      return "regression";
    case Status::improvement:
      return "improvement";
    case Status::unchanged:
      return "unchanged";
    case Status::inconclusive:
      return "inconclusive";
  }
  return "unchanged";
}

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::pass:
      return "pass";
    case Verdict::improvement:
      return "improvement";
    case Verdict::regression:
      return "regression";
    case Verdict::inconclusive:
      return "inconclusive";
  }
  return "pass";
}

int CompareResult::exit_code() const {
  if (verdict == Verdict::regression) return 1;
  if (verdict == Verdict::inconclusive && strict) return 1;
  return 0;
}

bool metric_matches(const std::string& pattern, const std::string& name) {
  // Iterative glob with '*' only: remember the last star and retry from one character further.
  size_t p = 0, n = 0, star = std::string::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p;
      ++n;
    } else if (star != std::string::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

namespace {

bool fits(const GateBudget& b, Unit unit) {
  switch (b.kind) {
    case GateBudget::Kind::relative:
      return true;
    case GateBudget::Kind::time_ns:
      return unit == Unit::ns;
    case GateBudget::Kind::share_points:
      return unit == Unit::share;
    case GateBudget::Kind::bytes:
      return unit == Unit::bytes;
  }
  return false;
}

std::string unit_words(Unit u) {
  switch (u) {
    case Unit::ns:
      return "a time";
    case Unit::share:
      return "a share";
    case Unit::bytes:
      return "a size";
    case Unit::rate:
      return "a rate";
  }
  return "";
}

GateBudget builtin_budget(const std::string& name) {
  if (name == "gpu_utilization" || name == "tensor_core_share") return parse_gate_budget("5 pp", "");
  return parse_gate_budget("5%", "");
}

GateBudget budget_for_unit(const GateConfig& config, const std::string& name, Unit unit) {
  for (auto it = config.budgets.rbegin(); it != config.budgets.rend(); ++it) {
    if (!metric_matches(it->first, name)) continue;
    if (fits(it->second, unit)) return it->second;
    // A wildcard budget simply does not apply to metrics of another kind; a budget written for
    // this one metric but in the wrong unit is a mistake worth stopping for.
    if (it->first.find('*') == std::string::npos)
      throw Error(fmt::format("{}: budget '{}' cannot apply to {} ({}): use a percentage{}", it->second.where,
                              it->second.text, name, unit_words(unit),
                              unit == Unit::share  ? " or percentage points (\"3 pp\")"
                              : unit == Unit::ns   ? " or a time (\"2 ms\")"
                              : unit == Unit::rate ? ""
                                                   : " or a size (\"64 MiB\")"));
  }
  if (config.max_regression && fits(*config.max_regression, unit)) return *config.max_regression;
  return builtin_budget(name);
}

bool exceeds(const GateBudget& b, double delta, double base) {
  if (b.kind == GateBudget::Kind::relative) {
    if (base == 0) return delta != 0;
    return std::abs(delta) > b.amount / 100 * std::abs(base);
  }
  return std::abs(delta) > b.amount;
}

}  // namespace

std::string format_metric_value(double v, Unit u) {
  switch (u) {
    case Unit::ns:
      return format_ns(std::llround(v));
    case Unit::share:
      return format_percent(v);
    case Unit::bytes:
      return format_bytes(std::llround(v));
    case Unit::rate:
      return v >= 1e4 ? fmt::format("{:.1f}k/s", v / 1e3) : fmt::format("{:.1f}/s", v);
  }
  return "";
}

std::string format_change(const MetricResult& r) {
  // One decimal; a change that rounds to zero reads "+0.0", never "-0.0".
  auto signed_one_decimal = [](double x) {
    std::string t = fmt::format("{:+.1f}", x);
    return t == "-0.0" ? std::string("+0.0") : t;
  };
  // kernel_time_per_launch is a ratio to the baseline (1 = unchanged): its change is relative.
  if (r.unit == Unit::share && r.name != "kernel_time_per_launch") return signed_one_decimal(r.delta * 100) + " pp";
  if (r.relative) return signed_one_decimal(*r.relative * 100) + "%";
  if (r.delta == 0) return "0";
  return (r.delta > 0 ? "+" : "-") + format_metric_value(std::abs(r.delta), r.unit);
}

namespace {

std::string p_text(double p) { return p < 0.001 ? fmt::format("{:.1e}", p) : fmt::format("{:.3f}", p); }

struct MetricKey {
  std::string name, scope;
  bool operator<(const MetricKey& o) const { return std::tie(name, scope) < std::tie(o.name, o.scope); }
};

std::map<MetricKey, const Metric*> index(const Side& side) {
  std::map<MetricKey, const Metric*> out;
  for (const auto& m : side.metrics) out[{m.name, m.scope}] = &m;
  return out;
}

bool selected(const GateConfig& c, const std::string& name) {
  bool allowed =
      std::any_of(c.metrics.begin(), c.metrics.end(), [&](const auto& p) { return metric_matches(p, name); });
  bool denied =
      std::any_of(c.skip_metrics.begin(), c.skip_metrics.end(), [&](const auto& p) { return metric_matches(p, name); });
  return allowed && !denied;
}

std::string family(const std::string& name) {
  size_t dot = name.find('.');
  return dot == std::string::npos ? name : name.substr(0, dot + 1);
}

// How one metric was judged before the multiple-comparison correction decides its status.
struct Judgement {
  bool tested = false;  // a rank test on samples gave a p-value
  bool big = false;     // the change of the medians is beyond the budget (and the practical floor)
  std::string what;     // "median 1.0 ms -> 1.2 ms (+20.0%)"
  std::string limit;    // "the 5% budget" / "5% of the 120 ms baseline step"
  std::string test;     // "Mann-Whitney U p = 0.01 (exact, n = 6 vs 6)"
  std::optional<double> run_p;  // iteration time with several runs per side
};

std::vector<double> samples_or_zeros(const Metric* m, size_t n) {
  if (m && !m->samples.empty()) return m->samples;
  return std::vector<double>(n, 0.0);
}

MetricResult base_result(const MetricKey& key, const Metric& proto, const GateConfig& config) {
  MetricResult r;
  r.name = key.name;
  r.scope = key.scope;
  r.unit = proto.unit;
  r.polarity = proto.polarity;
  r.per_iteration = proto.per_iteration;
  r.budget = budget_for_unit(config, r.name, r.unit);
  return r;
}

void set_values(MetricResult& r, double bv, double cv) {
  r.baseline = bv;
  r.candidate = cv;
  r.delta = cv - bv;
  r.relative.reset();
  if (bv != 0) r.relative = r.delta / std::abs(bv);
}

std::string test_words(const MannWhitney& mw, size_t nb, size_t nc) {
  return fmt::format("Mann-Whitney U p = {} ({}, n = {} vs {})", p_text(mw.p_value),
                     mw.exact ? "exact" : "normal approximation", nb, nc);
}

// Iteration time: the step's own samples, its own median, its own budget.
MetricResult step_result(const MetricKey& key, const Metric& b, const Metric& c, const GateConfig& config,
                         Judgement& j) {
  MetricResult r = base_result(key, b, config);
  set_values(r, b.value, c.value);
  r.baseline_n = b.samples.size();
  r.candidate_n = c.samples.size();
  r.baseline_runs = std::max<size_t>(1, b.run_values.size());
  r.candidate_runs = std::max<size_t>(1, c.run_values.size());
  auto n_min = static_cast<size_t>(config.min_iterations);
  double budget_rel = r.budget.kind == GateBudget::Kind::relative ? r.budget.amount / 100
                      : b.value > 0                               ? r.budget.amount / b.value
                                                                  : 0;
  auto mdc = minimal_detectable_change(b.samples, c.samples, config.alpha, 0.8, budget_rel);
  r.noise = mdc.noise;
  if (mdc.possible) r.detectable_change = mdc.relative;
  r.steps_for_budget = mdc.steps_for_budget;
  if (r.baseline_n < n_min || r.candidate_n < n_min) {
    r.status = Status::inconclusive;
    r.reason = fmt::format(
        "too few iterations to test: {} on the baseline, {} on the candidate, at least {} per side needed "
        "(capture more steps, e.g. torch.profiler.schedule(active={}), or lower [gate] min_iterations)",
        r.baseline_n, r.candidate_n, n_min, std::max<int64_t>(n_min, r.steps_for_budget));
    return r;
  }
  auto mw = mann_whitney_u(b.samples, c.samples);
  r.p_value = mw.p_value;
  r.exact_test = mw.exact;
  if (b.value > 0)
    r.ratio_ci = bootstrap_median_ratio(b.samples, c.samples, 1 - config.alpha,
                                        static_cast<int>(config.bootstrap_resamples), config.seed);
  j.tested = true;
  j.big = exceeds(r.budget, r.delta, b.value);
  j.what = fmt::format("median {} -> {} ({})", format_metric_value(b.value, Unit::ns),
                       format_metric_value(c.value, Unit::ns), format_change(r));
  j.limit = "the " + r.budget.text + " budget";
  std::string ci = r.ratio_ci ? fmt::format(", {:.0f}% CI of the ratio [{:.3f}, {:.3f}]", (1 - config.alpha) * 100,
                                            r.ratio_ci->low, r.ratio_ci->high)
                              : "";
  j.test = test_words(mw, r.baseline_n, r.candidate_n) + ci;
  if (b.run_values.size() >= 2 && c.run_values.size() >= 2) {
    // Runs vary more than the steps of one run: the change must also stand out between runs.
    auto logs = [](const std::vector<double>& v) {
      std::vector<double> out;
      for (double x : v) out.push_back(std::log(std::max(x, 1.0)));
      return out;
    };
    r.run_p_value = welch_t_p(logs(b.run_values), logs(c.run_values));
    j.run_p = r.run_p_value;
    j.test += fmt::format("; between runs (median of each run, {} vs {}): Welch t p = {}", b.run_values.size(),
                          c.run_values.size(), p_text(*r.run_p_value));
  }
  return r;
}

// A component of the step (breakdown category, op type, kernel, Tensor-Core-eligible time): its
// per-iteration samples are tested like the step, but its budget is measured against the
// baseline's median step: a component matters by how much it moves the step.
MetricResult component_result(const MetricKey& key, const Metric& proto, const std::vector<double>& bs,
                              const std::vector<double>& cs, double step, const GateConfig& config, Judgement& j) {
  MetricResult r = base_result(key, proto, config);
  set_values(r, median(bs), median(cs));
  r.baseline_n = bs.size();
  r.candidate_n = cs.size();
  r.baseline_step = step;
  auto mw = mann_whitney_u(bs, cs);
  r.p_value = mw.p_value;
  r.exact_test = mw.exact;
  double allowed = r.budget.kind == GateBudget::Kind::relative ? r.budget.amount / 100 * step : r.budget.amount;
  double floor = config.noise_floor * step;
  j.tested = bs.size() >= static_cast<size_t>(config.min_iterations) &&
             cs.size() >= static_cast<size_t>(config.min_iterations);
  j.big = std::abs(r.delta) > std::max(allowed, floor);
  j.what = fmt::format("median {} -> {} per step ({}{})", format_metric_value(*r.baseline, Unit::ns),
                       format_metric_value(*r.candidate, Unit::ns), r.delta >= 0 ? "+" : "-",
                       format_metric_value(std::abs(r.delta), Unit::ns));
  j.limit = fmt::format("{} of the {} baseline step", format_metric_value(std::max(allowed, floor), Unit::ns),
                        format_metric_value(step, Unit::ns));
  if (r.budget.kind == GateBudget::Kind::relative && allowed >= floor)
    j.limit = fmt::format("the {} budget ({} of the {} baseline step)", r.budget.text,
                          format_metric_value(allowed, Unit::ns), format_metric_value(step, Unit::ns));
  j.test = test_words(mw, bs.size(), cs.size());
  return r;
}

// One kernel per launch (sides without iterations): the launch durations of both windows.
MetricResult launch_result(const MetricKey& key, const Metric& b, const Metric& c, const GateConfig& config,
                           Judgement& j) {
  MetricResult r = base_result(key, b, config);
  set_values(r, b.value, c.value);
  r.baseline_n = b.samples.size();
  r.candidate_n = c.samples.size();
  auto mw = mann_whitney_u(b.samples, c.samples);
  r.p_value = mw.p_value;
  r.exact_test = mw.exact;
  j.tested = true;
  j.big = exceeds(r.budget, r.delta, b.value) && std::abs(r.delta) > config.noise_floor * std::abs(b.value);
  j.what = fmt::format("median per launch {} -> {} ({})", format_metric_value(b.value, Unit::ns),
                       format_metric_value(c.value, Unit::ns), format_change(r));
  j.limit = "the " + r.budget.text + " budget";
  j.test = test_words(mw, r.baseline_n, r.candidate_n);
  return r;
}

MetricResult scalar_result(const MetricKey& key, const Metric& proto, std::optional<double> b, std::optional<double> c,
                           const GateConfig& config) {
  MetricResult r = base_result(key, proto, config);
  double bv = b.value_or(0), cv = c.value_or(0);
  set_values(r, bv, cv);
  r.baseline = b;
  r.candidate = c;
  double floor = r.unit == Unit::bytes ? 16.0 * 1024 * 1024 : 0.0;
  double worse = r.polarity == Polarity::lower_is_better ? r.delta : -r.delta;
  bool big = exceeds(r.budget, r.delta, bv) && std::abs(r.delta) > floor;
  std::string what =
      fmt::format("{} -> {} ({})", format_metric_value(bv, r.unit), format_metric_value(cv, r.unit), format_change(r));
  if (big) {
    r.status = worse > 0 ? Status::regression : Status::improvement;
    r.reason = fmt::format("{}, beyond the {} budget (one value per side, no test)", what, r.budget.text);
  } else if (exceeds(r.budget, r.delta, bv)) {
    r.reason = fmt::format("{}, below the noise floor of {}", what, format_metric_value(floor, r.unit));
  } else {
    r.reason = fmt::format("{}, within the {} budget", what, r.budget.text);
  }
  return r;
}

int status_rank(const MetricResult& r) {
  if (r.status == Status::regression) return r.gating ? 0 : 1;
  if (r.status == Status::improvement) return 2;
  if (r.status == Status::inconclusive) return 3;
  return 4;
}

// The scope a finding is matched by: parts that differ between the sides (rank 0 against rank 1,
// GPU 0 against GPU 3) are left out so the same problem on both is not "new".
std::string finding_scope(const Finding& f, bool with_rank, bool with_device) {
  std::string s;
  if (with_rank && f.scope.rank) s = fmt::format("rank {}", *f.scope.rank);
  if (with_device && f.scope.device_id) s += fmt::format("{}GPU {}", s.empty() ? "" : " ", *f.scope.device_id);
  return s;
}

std::set<int64_t> active_devices(const Side& side) {
  std::set<int64_t> out;
  for (const auto& s : side.summaries)
    for (const auto& d : s.devices)
      if (d.kernel_count > 0) out.insert(d.device_id);
  return out;
}

void compare_findings(const Side& base, const Side& cand, const std::vector<Finding>& bf,
                      const std::vector<Finding>& cf, const GateConfig& config, CompareResult& out) {
  bool with_rank = base.fingerprint.ranks == cand.fingerprint.ranks;
  bool with_device = active_devices(base) == active_devices(cand);
  auto keyed = [&](const std::vector<Finding>& list) {
    std::map<std::pair<std::string, std::string>, const Finding*> m;
    for (const auto& f : list) {
      if (f.diagnostic) continue;
      // A finding ranking merged across the ranks/GPUs of a job is compared per rank/GPU, so a
      // problem that left one GPU of two still shows as gone there.
      if (f.instances.empty()) m.emplace(std::make_pair(f.id, finding_scope(f, with_rank, with_device)), &f);
      for (const auto& in : f.instances) m.emplace(std::make_pair(in.id, finding_scope(in, with_rank, with_device)), &in);
    }
    return m;
  };
  auto b = keyed(bf), c = keyed(cf);
  auto threshold = config.fail_on_new_severity ? parse_severity(*config.fail_on_new_severity) : std::nullopt;
  auto change = [&](const std::string& kind, const std::pair<std::string, std::string>& key, const Finding& f) {
    FindingChange ch;
    ch.change = kind;
    ch.id = f.id;
    ch.title = f.title;
    ch.severity = std::string(severity_name(f.effective_severity));
    ch.scope = key.second;
    ch.problem = f.problem;
    ch.source = f.source;
    ch.estimated_savings_ns = f.estimated_savings_ns;
    if (kind == "new")
      ch.gating = std::find(config.fail_on_new_findings.begin(), config.fail_on_new_findings.end(), f.id) !=
                      config.fail_on_new_findings.end() ||
                  (threshold && f.effective_severity >= *threshold);
    return ch;
  };
  for (const auto& [key, f] : c)
    if (!b.count(key)) out.findings.push_back(change("new", key, *f));
  for (const auto& [key, f] : b)
    if (!c.count(key)) out.findings.push_back(change("gone", key, *f));
  std::stable_sort(out.findings.begin(), out.findings.end(), [](const FindingChange& x, const FindingChange& y) {
    return std::tie(y.change, y.gating, y.estimated_savings_ns) < std::tie(x.change, x.gating, x.estimated_savings_ns);
  });
}

void check_comparable(const Side& base, const Side& cand, const GateConfig& config, CompareResult& out) {
  const auto& b = base.fingerprint;
  const auto& c = cand.fingerprint;
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : "; ") + x;
    return s.empty() ? std::string("none") : s;
  };
  auto unnamed = [](const Fingerprint& f) {
    return std::any_of(f.gpu_setups.begin(), f.gpu_setups.end(),
                       [](const auto& g) { return g.find("model not recorded") != std::string::npos; });
  };
  if (unnamed(b) || unnamed(c)) {
    // An unrecorded model matches any model: only the number of GPUs can be checked.
    if (b.gpu_counts != c.gpu_counts)
      out.incomparable.push_back(
          fmt::format("different numbers of GPUs: baseline {}, candidate {}", join(b.gpu_setups), join(c.gpu_setups)));
    else
      out.notes.push_back("the GPU model is not recorded in " +
                          std::string(unnamed(b) && unnamed(c) ? "either profile" : "one of the profiles") +
                          ": only the number of GPUs is compared");
  } else if (b.gpu_setups != c.gpu_setups) {
    out.incomparable.push_back(
        fmt::format("different GPUs: baseline {}, candidate {}", join(b.gpu_setups), join(c.gpu_setups)));
  }
  if (b.formats != c.formats)
    out.incomparable.push_back(
        fmt::format("different profile formats: baseline {}, candidate {} (iterations and "
                    "attribution are derived differently)",
                    join(b.formats), join(c.formats)));
  if (!b.frameworks.empty() && !c.frameworks.empty() && b.frameworks != c.frameworks)
    out.incomparable.push_back(
        fmt::format("different frameworks: baseline {}, candidate {}", join(b.frameworks), join(c.frameworks)));
  if (!b.vendors.empty() && !c.vendors.empty() && b.vendors != c.vendors)
    out.incomparable.push_back(
        fmt::format("different GPU vendors: baseline {}, candidate {}", join(b.vendors), join(c.vendors)));
  if (b.ranks.size() != c.ranks.size() && !b.ranks.empty() && !c.ranks.empty())
    out.incomparable.push_back(fmt::format("different numbers of ranks: {} on the baseline, {} on the candidate",
                                           b.ranks.size(), c.ranks.size()));
  else if (b.ranks != c.ranks && !b.ranks.empty() && !c.ranks.empty())
    out.incomparable.push_back(
        fmt::format("the sides are different ranks (baseline rank{} {}, candidate rank{} {}): the ranks of one "
                    "job can do different work (sharded embeddings, pipeline stages), so a difference is not a "
                    "change of the code; compare the same rank(s) before and after",
                    b.ranks.size() > 1 ? "s" : "", fmt::join(b.ranks, ", "), c.ranks.size() > 1 ? "s" : "",
                    fmt::join(c.ranks, ", ")));
  double bi = b.iterations_per_trace, ci = c.iterations_per_trace;
  if ((bi > 0) != (ci > 0))
    out.incomparable.push_back(
        fmt::format("iterations found on one side only ({:.0f} per trace on the baseline, {:.0f} on "
                    "the candidate): give --key-node so both are cut the same way",
                    bi, ci));
  else if (bi > 0 && std::max(bi, ci) / std::min(bi, ci) > config.max_iteration_count_ratio)
    out.incomparable.push_back(
        fmt::format("iteration counts differ too much: {:.0f} per trace on the baseline, {:.0f} on the "
                    "candidate (more than {}x; [gate] max_iteration_count_ratio)",
                    bi, ci, config.max_iteration_count_ratio));
  // The same job runs mostly the same op types: the GPU-time-weighted overlap of the op-type mix
  // (sum of the smaller share of each type) is near 1 for the same model, even after AMP or a
  // kernel change, and low for another model.
  auto mix = [](const Side& side) {
    std::map<std::string, double> m;
    double total = 0;
    for (const auto& metric : side.metrics)
      if (metric.scope.empty() && metric.name.rfind("op_type.", 0) == 0) {
        // Per step on average (an op type that runs every other step has a median of 0).
        double v = metric.samples.empty() ? metric.value
                                          : std::accumulate(metric.samples.begin(), metric.samples.end(), 0.0) /
                                                static_cast<double>(metric.samples.size());
        m[metric.name] += v;
        total += v;
      }
    if (total > 0)
      for (auto& [name, v] : m) v /= total;
    return m;
  };
  auto bm = mix(base), cm = mix(cand);
  if (!bm.empty() && !cm.empty()) {
    double overlap = 0;
    for (const auto& [name, share] : bm)
      if (auto it = cm.find(name); it != cm.end()) overlap += std::min(share, it->second);
    if (overlap < config.min_workload_overlap)
      out.incomparable.push_back(fmt::format(
          "different workloads: only {:.0f}% of the GPU time is in op types the two sides share in like proportion "
          "(below [gate] min_workload_overlap = {:.0f}%): another model or another part of the program was profiled",
          overlap * 100, config.min_workload_overlap * 100));
  }
  if (b.batch && c.batch && *b.batch != *c.batch)
    out.incomparable.push_back(
        fmt::format("different batch sizes: {} on the baseline, {} on the candidate (leading "
                    "dimension of the forward ops' inputs)",
                    *b.batch, *c.batch));
}

}  // namespace

GateBudget budget_for(const GateConfig& config, const std::string& name) {
  Unit unit = name == "gpu_utilization" || name == "tensor_core_share" ? Unit::share
              : name.rfind("peak_memory", 0) == 0                      ? Unit::bytes
              : name == "throughput"                                   ? Unit::rate
                                                                       : Unit::ns;
  return budget_for_unit(config, name, unit);
}

bool is_gating(const GateConfig& config, const std::string& name) {
  auto any = [&](const std::vector<std::string>& patterns) {
    return std::any_of(patterns.begin(), patterns.end(), [&](const auto& p) { return metric_matches(p, name); });
  };
  return any(config.gating) && !any(config.informational);
}

namespace {

// Sets the status and reason of every tested metric from its adjusted p-value: Holm for the
// gating family, Benjamini-Hochberg for the explaining one; `family` names it in the reason.
void decide(std::vector<MetricResult>& results, std::vector<Judgement>& judged, const std::vector<size_t>& members,
            const std::string& family, const GateConfig& config) {
  std::vector<double> raw;
  for (size_t i : members) raw.push_back(*results[i].p_value);
  const bool gating = family == "gating";
  auto adjusted = gating ? holm_adjust(raw) : bh_adjust(raw);
  for (size_t k = 0; k < members.size(); ++k) {
    MetricResult& r = results[members[k]];
    const Judgement& j = judged[members[k]];
    r.p_adjusted = adjusted[k];
    std::string test =
        j.test + (members.size() > 1 ? fmt::format("; {}-adjusted p = {} over {} {} metrics",
                                                   gating ? "Holm" : "Benjamini-Hochberg", p_text(adjusted[k]),
                                                   members.size(), family)
                                     : "");
    bool significant = adjusted[k] < config.alpha;
    bool runs_agree = !j.run_p || *j.run_p < config.alpha;
    double worse = r.polarity == Polarity::lower_is_better ? r.delta : -r.delta;
    if (significant && j.big && runs_agree) {
      r.status = worse > 0 ? Status::regression : Status::improvement;
      r.reason = fmt::format("{}, beyond {}; {}", j.what, j.limit, test);
    } else if (significant && j.big) {
      r.reason = fmt::format("{}: the steps differ but the runs do not (between-run p = {} at alpha {}), so the "
                             "change is within run-to-run noise; {}",
                             j.what, p_text(*j.run_p), config.alpha, test);
    } else if (significant) {
      r.reason = fmt::format("{}: significant but within {}; {}", j.what, j.limit, test);
    } else {
      r.reason = fmt::format("{}: no significant difference at alpha {}; {}", j.what, config.alpha, test);
    }
  }
}

std::string percent(double x) {
  return x < 0.1 ? fmt::format("{:.1f}%", x * 100) : fmt::format("{:.0f}%", x * 100);
}

// Work-normalised time without iterations: every launch of the kernels both sides ran (the `top`
// largest by baseline GPU time), divided by that kernel's baseline median, pooled per side. A
// uniform slowdown shifts the candidate's pooled values above 1; windows holding different
// amounts of work do not.
std::optional<MetricResult> per_launch_result(const std::map<MetricKey, const Metric*>& bi,
                                              const std::map<MetricKey, const Metric*>& ci, const GateConfig& config,
                                              Judgement& j, std::string& why_not) {
  std::vector<std::pair<double, MetricKey>> common;
  for (const auto& [key, m] : bi)
    if (key.name.rfind("kernel_launch.", 0) == 0 && ci.count(key) && m->value > 0)
      common.emplace_back(m->run_values.empty() ? 0 : m->run_values.front(), key);
  if (common.empty()) {
    why_not = "no iterations on either side and no kernel that both windows ran, so nothing to normalise the work by";
    return std::nullopt;
  }
  std::stable_sort(common.begin(), common.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (common.size() > static_cast<size_t>(std::max<int64_t>(1, config.top)))
    common.resize(static_cast<size_t>(std::max<int64_t>(1, config.top)));
  std::vector<double> bs, cs;
  for (const auto& [total, key] : common) {
    double m = bi.at(key)->value;
    for (double v : bi.at(key)->samples) bs.push_back(v / m);
    for (double v : ci.at(key)->samples) cs.push_back(v / m);
  }
  MetricResult r;
  r.name = "kernel_time_per_launch";
  r.unit = Unit::share;  // values are ratios to the baseline medians (1 = unchanged)
  r.budget = budget_for_unit(config, "kernel_time_per_launch", Unit::ns);
  if (r.budget.kind != GateBudget::Kind::relative) r.budget = parse_gate_budget("5%", "");
  double mb = median(bs), mc = median(cs);
  r.baseline = mb;
  r.candidate = mc;
  r.delta = mc - mb;
  if (mb != 0) r.relative = r.delta / mb;
  r.baseline_n = bs.size();
  r.candidate_n = cs.size();
  auto mw = mann_whitney_u(bs, cs);
  r.p_value = mw.p_value;
  r.exact_test = mw.exact;
  j.tested = true;
  j.big = exceeds(r.budget, r.delta, mb);
  j.what = fmt::format("median launch of {} kernel(s) both windows ran, relative to the baseline's: {:.3f} -> {:.3f} "
                       "({})",
                       common.size(), mb, mc, format_change(r));
  j.limit = "the " + r.budget.text + " budget";
  j.test = test_words(mw, bs.size(), cs.size());
  return r;
}

std::string capture_advice() {
  return "capture with iteration markers: torch.profiler's schedule (ProfilerStep#N), NVTX ranges around each step "
         "for Nsight Systems, or name the op that runs once per step with --key-node";
}

}  // namespace

CompareResult compare_sides(const Side& base, const Side& cand, const std::vector<Finding>& base_findings,
                            const std::vector<Finding>& cand_findings, const GateConfig& config, bool strict) {
  CompareResult out;
  out.alpha = config.alpha;
  out.strict = strict;
  out.baseline_paths = base.paths;
  out.candidate_paths = cand.paths;
  out.baseline_fingerprint = base.fingerprint;
  out.candidate_fingerprint = cand.fingerprint;
  for (const auto& n : base.notes) out.notes.push_back("baseline: " + n);
  for (const auto& n : cand.notes) out.notes.push_back("candidate: " + n);
  check_comparable(base, cand, config, out);

  auto bi = index(base), ci = index(cand);
  const Metric* b_step = bi.count({"iteration_time", ""}) ? bi.at({"iteration_time", ""}) : nullptr;
  const Metric* c_step = ci.count({"iteration_time", ""}) ? ci.at({"iteration_time", ""}) : nullptr;
  const bool iterations = b_step && c_step;

  // Op types and kernels: only the `top` largest of either side.
  std::map<std::string, std::vector<std::pair<double, MetricKey>>> ranked;
  std::set<MetricKey> keys;
  for (const auto* m : {&bi, &ci})
    for (const auto& [key, metric] : *m) keys.insert(key);
  auto size_of = [](const Metric* m) {
    if (m->name.rfind("kernel_launch.", 0) == 0) return m->run_values.empty() ? 0.0 : m->run_values.front();
    if (m->per_iteration && !m->samples.empty())
      return std::accumulate(m->samples.begin(), m->samples.end(), 0.0) / static_cast<double>(m->samples.size());
    return m->value;
  };
  for (const auto& key : keys) {
    std::string fam = family(key.name);
    if (fam != "op_type." && fam != "kernel." && fam != "kernel_launch.") continue;
    double size = 0;
    if (auto it = bi.find(key); it != bi.end()) size = std::max(size, size_of(it->second));
    if (auto it = ci.find(key); it != ci.end()) size = std::max(size, size_of(it->second));
    ranked[fam].emplace_back(size, key);
  }
  std::set<MetricKey> dropped;
  for (auto& [fam, list] : ranked) {
    std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t i = static_cast<size_t>(config.top); i < list.size(); ++i) dropped.insert(list[i].second);
  }

  std::vector<std::string> one_sided;
  std::vector<Judgement> judged;
  bool window_totals = false;
  for (const auto& key : keys) {
    if (dropped.count(key) || !selected(config, key.name)) continue;
    if (key.name == "wall_time") {
      window_totals = true;  // the length of the capture window: says nothing about the job
      continue;
    }
    auto b = bi.find(key);
    auto c = ci.find(key);
    const Metric* bm = b != bi.end() ? b->second : nullptr;
    const Metric* cm = c != ci.end() ? c->second : nullptr;
    const Metric* proto = bm ? bm : cm;
    Judgement j;
    MetricResult r;
    std::string fam = family(key.name);
    if (key.name == "iteration_time") {
      if (!bm || !cm) {
        one_sided.push_back("iteration_time");
        continue;
      }
      r = step_result(key, *bm, *cm, config, j);
    } else if (proto->per_iteration) {
      bool mismatch = (bm && !bm->per_iteration) || (cm && !cm->per_iteration);
      if (!iterations || mismatch || !key.scope.empty()) {
        one_sided.push_back(key.name + " (measured per iteration on one side only)");
        continue;
      }
      auto bs = samples_or_zeros(bm, b_step->samples.size());
      auto cs = samples_or_zeros(cm, c_step->samples.size());
      if (bs.size() != b_step->samples.size() || cs.size() != c_step->samples.size()) {
        one_sided.push_back(key.name + " (not measured in every iteration)");
        continue;
      }
      r = component_result(key, *proto, bs, cs, b_step->value, config, j);
    } else if (fam == "kernel_launch.") {
      if (!bm || !cm || iterations) continue;  // only both windows' kernels; with iterations, kernel.* says it
      r = launch_result(key, *bm, *cm, config, j);
    } else {
      bool zero_when_absent = key.scope.empty() && (fam == "op_type." || fam == "kernel.");
      if ((!bm || !cm) && !zero_when_absent) {
        one_sided.push_back(key.name + (key.scope.empty() ? "" : " [" + key.scope + "]") +
                            (!bm ? " (candidate only)" : " (baseline only)"));
        continue;
      }
      if (bm && cm && bm->unit != cm->unit) {
        one_sided.push_back(key.name + " (measured in different units)");
        continue;
      }
      r = scalar_result(key, *proto, bm ? std::optional<double>(bm->value) : std::nullopt,
                        cm ? std::optional<double>(cm->value) : std::nullopt, config);
      if (fam == "breakdown.") window_totals = true;
    }
    r.gating = is_gating(config, key.name);
    // Shares of a window without iterations depend on what the window caught: never gating.
    if (fam == "breakdown." && !proto->per_iteration) r.gating = false;
    out.metrics.push_back(std::move(r));
    judged.push_back(std::move(j));
  }
  if (!iterations && window_totals)
    out.notes.push_back("window totals (wall time, breakdown shares of the window) are shown, never gating: "
                        "two windows need not hold the same work");

  // No iterations on either side: kernels per launch stand in for the step.
  std::string no_normalisation;
  if (!b_step && !c_step && out.incomparable.empty()) {
    Judgement j;
    if (auto r = per_launch_result(bi, ci, config, j, no_normalisation)) {
      r->gating = is_gating(config, "kernel_time_per_launch");
      out.metrics.push_back(std::move(*r));
      judged.push_back(std::move(j));
      out.caveats.push_back(
          "no iterations on either side: the gate compared the time per launch of the kernels both windows ran "
          "(work-normalised), not the windows' totals; " +
          capture_advice() + " for a step-time verdict");
    }
  }

  // Two families: what can fail the gate, Holm-Bonferroni (its family-wise error rate is the
  // chance of a false failure, kept <= alpha); what only explains, Benjamini-Hochberg (the
  // expected share of wrong explanations <= alpha, without hiding every part of a real change).
  std::vector<size_t> gating_family, explaining_family;
  for (size_t i = 0; i < out.metrics.size(); ++i) {
    if (!judged[i].tested || !out.metrics[i].p_value) continue;
    (out.metrics[i].gating ? gating_family : explaining_family).push_back(i);
  }
  decide(out.metrics, judged, gating_family, "gating", config);
  decide(out.metrics, judged, explaining_family, "explaining", config);
  out.gating_tests = gating_family.size();
  out.explaining_tests = explaining_family.size();
  for (size_t i = 0; i < out.metrics.size(); ++i) {
    auto& r = out.metrics[i];
    if (r.p_value && !judged[i].tested && r.status == Status::unchanged)
      r.reason = judged[i].what + ": too few iterations to test; " + judged[i].test;
  }

  // Throughput where the batch is known and the same: samples per second per step, judged with
  // the step (the same test: it is the same hypothesis, not another one).
  const Fingerprint& bf = base.fingerprint;
  const Fingerprint& cf = cand.fingerprint;
  for (const auto& r : std::vector<MetricResult>(out.metrics)) {
    if (r.name != "iteration_time" || !r.scope.empty() || !bf.batch || !cf.batch || *bf.batch != *cf.batch) continue;
    if (!r.baseline || !r.candidate || *r.baseline <= 0 || *r.candidate <= 0) continue;
    MetricResult t = r;
    t.name = "throughput";
    t.unit = Unit::rate;
    t.polarity = Polarity::higher_is_better;
    t.ratio_ci.reset();
    t.detectable_change.reset();
    t.noise.reset();
    t.steps_for_budget = 0;
    set_values(t, static_cast<double>(*bf.batch) * 1e9 / *r.baseline, static_cast<double>(*cf.batch) * 1e9 / *r.candidate);
    t.reason = fmt::format("batch {} per step: {} -> {} ({}); judged with iteration_time", *bf.batch,
                           format_metric_value(*t.baseline, Unit::rate), format_metric_value(*t.candidate, Unit::rate),
                           format_change(t));
    // Shown with the step's status; the step already gates this hypothesis, and counting it twice
    // would double the chance of a false failure.
    t.gating = false;
    out.metrics.push_back(std::move(t));
    break;
  }

  // A step that got significantly faster is no regression, however time moved between its parts
  // (AMP adds casts while the step drops 85%).
  const MetricResult* step = nullptr;
  for (const auto& r : out.metrics)
    if (r.name == "iteration_time" && r.scope.empty()) step = &r;
  if (step && step->p_adjusted && *step->p_adjusted < config.alpha && step->delta < 0) {
    for (auto& r : out.metrics) {
      bool component = r.per_iteration && r.name != "iteration_time" && r.name != "throughput";
      if (component && r.status == Status::regression && r.gating) {
        r.gating = false;
        r.reason += "; not gating: the step itself got significantly faster";
      }
    }
  }
  if (!one_sided.empty()) {
    std::string list;
    for (const auto& s : one_sided) list += (list.empty() ? "" : ", ") + s;
    out.notes.push_back("measured on one side only, not compared: " + list);
  }
  std::stable_sort(out.metrics.begin(), out.metrics.end(), [](const MetricResult& x, const MetricResult& y) {
    int rx = status_rank(x), ry = status_rank(y);
    if (rx != ry) return rx < ry;
    bool xi = x.name == "iteration_time", yi = y.name == "iteration_time";
    if (xi != yi) return xi;
    if (x.gating != y.gating) return x.gating;
    double mx = x.relative ? std::abs(*x.relative) : (x.delta != 0 ? INFINITY : 0);
    double my = y.relative ? std::abs(*y.relative) : (y.delta != 0 ? INFINITY : 0);
    if (mx != my) return mx > my;
    return std::tie(x.name, x.scope) < std::tie(y.name, y.scope);
  });
  compare_findings(base, cand, base_findings, cand_findings, config, out);

  // What the sample can see.
  const MetricResult* primary = nullptr;
  for (const auto& r : out.metrics)
    if ((r.name == "iteration_time" || r.name == "kernel_time_per_launch") && r.scope.empty()) primary = &r;
  if (primary && primary->name == "iteration_time" && primary->noise) {
    std::string budget = primary->budget.text;
    if (!primary->detectable_change)
      out.caveats.push_back(fmt::format(
          "with {} vs {} steps no change can be told from noise at alpha {} (the exact test cannot reach it); "
          "capture at least {} steps per side",
          primary->baseline_n, primary->candidate_n, config.alpha, std::max<int64_t>(5, primary->steps_for_budget)));
    else
      out.caveats.push_back(fmt::format(
          "with {} vs {} steps at {} step-to-step noise, changes under ~{} cannot be told from noise (alpha {}, "
          "power 80%){}",
          primary->baseline_n, primary->candidate_n, percent(*primary->noise), percent(*primary->detectable_change),
          config.alpha,
          primary->steps_for_budget > static_cast<int64_t>(std::min(primary->baseline_n, primary->candidate_n))
              ? fmt::format("; capture about {} steps per side to detect a change of the {} budget",
                            primary->steps_for_budget, budget)
              : ""));
  }
  if (base.runs <= 1 || cand.runs <= 1)
    out.caveats.push_back(
        "one run per side: run-to-run variance is unmeasured (separate runs of one configuration often differ more "
        "than the steps of one run); compare several runs per side (--baseline A B C --candidate D E F) or against a "
        "history of past runs (--baseline DIR_OF_PAST_RUNS CANDIDATE)");

  // The verdict.
  int regressions = 0;
  for (const auto& r : out.metrics)
    if (r.status == Status::regression && r.gating) ++regressions;
  int gating_findings = 0;
  for (const auto& f : out.findings) gating_findings += f.gating ? 1 : 0;
  auto primary_words = [&]() {
    if (!primary) return std::string("iteration time not measured");
    std::string what = primary->name == "iteration_time" ? "iteration time" : "kernel time per launch";
    if (primary->status == Status::inconclusive) return what + " inconclusive (" + primary->reason + ")";
    if (primary->name != "iteration_time")
      return fmt::format("{} {}{}", what, format_change(*primary),
                         primary->p_value ? ", p = " + p_text(*primary->p_value) : "");
    return fmt::format("{} {} ({} -> {}{})", what, format_change(*primary),
                       format_metric_value(*primary->baseline, Unit::ns),
                       format_metric_value(*primary->candidate, Unit::ns),
                       primary->p_value ? ", p = " + p_text(*primary->p_value) : "");
  };
  if (!out.incomparable.empty()) {
    out.verdict = Verdict::inconclusive;
    out.headline =
        "not comparable: " + out.incomparable.front() +
        (out.incomparable.size() > 1 ? fmt::format(" (and {} more reason(s))", out.incomparable.size() - 1) : "");
  } else if (regressions + gating_findings > 0) {
    out.verdict = Verdict::regression;
    std::string first;
    for (const auto& r : out.metrics)
      if (r.status == Status::regression && r.gating) {
        first = r.name == "iteration_time" || r.name == "kernel_time_per_launch"
                    ? primary_words()
                    : fmt::format("{}{} {}", r.name, r.scope.empty() ? "" : " [" + r.scope + "]", format_change(r));
        break;
      }
    if (first.empty())
      for (const auto& f : out.findings)
        if (f.gating) {
          first = "new finding " + f.id;
          break;
        }
    out.headline =
        fmt::format("{} metric(s) regressed{}: {}", regressions,
                    gating_findings ? fmt::format(", {} new gating finding(s)", gating_findings) : "", first);
  } else if (!primary) {
    out.verdict = Verdict::inconclusive;
    out.headline = "inconclusive: " +
                   (no_normalisation.empty() ? std::string("iteration time was not measured on both sides")
                                             : no_normalisation) +
                   "; " + capture_advice();
  } else if (primary->status == Status::improvement) {
    out.verdict = Verdict::improvement;
    out.headline = primary_words();
  } else if (primary->status == Status::inconclusive) {
    out.verdict = Verdict::inconclusive;
    out.headline = "inconclusive: " + primary_words();
  } else {
    out.verdict = Verdict::pass;
    out.headline = "no regression beyond the budgets; " + primary_words();
  }
  return out;
}

CompareResult compare_history(const std::vector<Side>& past, const Side& cand,
                              const std::vector<std::vector<Finding>>& past_findings,
                              const std::vector<Finding>& cand_findings, const GateConfig& config, bool strict) {
  CompareResult out;
  out.mode = "history";
  out.alpha = config.alpha;
  out.strict = strict;
  out.correction = "none";
  for (const auto& p : past) out.baseline_paths.insert(out.baseline_paths.end(), p.paths.begin(), p.paths.end());
  out.candidate_paths = cand.paths;
  if (!past.empty()) out.baseline_fingerprint = past.front().fingerprint;
  out.candidate_fingerprint = cand.fingerprint;
  for (const auto& n : cand.notes) out.notes.push_back("candidate: " + n);
  std::set<std::string> reasons;
  for (const auto& p : past) {
    CompareResult check;
    check_comparable(p, cand, config, check);
    for (const auto& why : check.incomparable)
      if (reasons.insert(why).second) out.incomparable.push_back(p.paths.front() + ": " + why);
  }
  auto ci = index(cand);
  std::vector<std::map<MetricKey, const Metric*>> pi;
  for (const auto& p : past) pi.push_back(index(p));
  const size_t min_runs = static_cast<size_t>(config.history_min_runs);
  // The past runs' median step: components are measured against it.
  std::vector<double> steps;
  for (const auto& m : pi)
    if (auto it = m.find({"iteration_time", ""}); it != m.end()) steps.push_back(it->second->value);
  const double step = median(steps);
  // Op types and kernels: the `top` largest in the candidate or the past median.
  std::map<std::string, std::vector<std::pair<double, MetricKey>>> ranked;
  std::map<MetricKey, std::vector<double>> history;
  for (const auto& [key, m] : ci) {
    std::string fam = family(key.name);
    if (key.name == "wall_time" || fam == "kernel_launch." || !selected(config, key.name)) continue;
    bool zero_when_absent = key.scope.empty() && (fam == "op_type." || fam == "kernel.");
    std::vector<double> values;
    for (const auto& p : pi) {
      auto it = p.find(key);
      if (it != p.end() && it->second->per_iteration == m->per_iteration)
        values.push_back(it->second->value);
      else if (zero_when_absent)
        values.push_back(0);
    }
    history[key] = values;
    if (fam == "op_type." || fam == "kernel.") ranked[fam].emplace_back(std::max(m->value, median(values)), key);
  }
  for (auto& [fam, list] : ranked) {
    std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t i = static_cast<size_t>(config.top); i < list.size(); ++i) history.erase(list[i].second);
  }
  std::vector<std::string> short_history;
  for (const auto& [key, values] : history) {
    const Metric* m = ci.at(key);
    if (values.size() < min_runs) {
      short_history.push_back(key.name + (key.scope.empty() ? "" : " [" + key.scope + "]"));
      continue;
    }
    MetricResult r = base_result(key, *m, config);
    double center = median(values), spread = 1.4826 * mad(values);
    set_values(r, center, m->value);
    r.history_median = center;
    r.history_spread = spread;
    r.history_runs = values.size();
    r.baseline_n = values.size();
    r.candidate_n = m->per_iteration ? m->samples.size() : 1;
    bool component = m->per_iteration && key.name != "iteration_time";
    double allowed = r.budget.kind != GateBudget::Kind::relative ? r.budget.amount
                     : component                                 ? r.budget.amount / 100 * step
                                                                 : r.budget.amount / 100 * std::abs(center);
    double floor = r.unit == Unit::bytes ? 16.0 * 1024 * 1024
                   : component           ? config.noise_floor * step
                                         : 0.0;
    double limit = std::max({config.history_threshold * spread, allowed, floor});
    double worse = r.polarity == Polarity::lower_is_better ? r.delta : -r.delta;
    std::string what = fmt::format("{} against the median {} of {} past runs (spread {}: 1.4826 x MAD)",
                                   format_metric_value(m->value, r.unit), format_metric_value(center, r.unit),
                                   values.size(), format_metric_value(spread, r.unit));
    if (std::abs(r.delta) > limit) {
      r.status = worse > 0 ? Status::regression : Status::improvement;
      r.reason = fmt::format("{}: {} is beyond {} ({} spreads, the {} budget and the floor)", what,
                             format_change(r), format_metric_value(limit, r.unit), config.history_threshold,
                             r.budget.text);
    } else {
      r.reason = fmt::format("{}: {} is within {} ({} spreads, the {} budget and the floor)", what, format_change(r),
                             format_metric_value(limit, r.unit), config.history_threshold, r.budget.text);
    }
    r.gating = is_gating(config, key.name) && !(family(key.name) == "breakdown." && !m->per_iteration);
    out.metrics.push_back(std::move(r));
  }
  if (!short_history.empty()) {
    std::string list;
    for (const auto& s : short_history) list += (list.empty() ? "" : ", ") + s;
    out.notes.push_back(fmt::format("fewer than {} past runs measured, not judged: {}", min_runs, list));
  }
  std::stable_sort(out.metrics.begin(), out.metrics.end(), [](const MetricResult& x, const MetricResult& y) {
    int rx = status_rank(x), ry = status_rank(y);
    if (rx != ry) return rx < ry;
    bool xi = x.name == "iteration_time", yi = y.name == "iteration_time";
    if (xi != yi) return xi;
    if (x.gating != y.gating) return x.gating;
    return std::tie(x.name, x.scope) < std::tie(y.name, y.scope);
  });
  // Findings: new when no past run had them.
  if (!past.empty()) {
    std::vector<Finding> all;
    for (const auto& list : past_findings) all.insert(all.end(), list.begin(), list.end());
    compare_findings(past.front(), cand, all, cand_findings, config, out);
  }
  const MetricResult* primary = nullptr;
  for (const auto& r : out.metrics)
    if (r.name == "iteration_time" && r.scope.empty()) primary = &r;
  int regressions = 0;
  for (const auto& r : out.metrics)
    if (r.status == Status::regression && r.gating) ++regressions;
  int gating_findings = 0;
  for (const auto& f : out.findings) gating_findings += f.gating ? 1 : 0;
  if (!out.incomparable.empty()) {
    out.verdict = Verdict::inconclusive;
    out.headline = "not comparable with the history: " + out.incomparable.front();
  } else if (past.size() < min_runs) {
    out.verdict = Verdict::inconclusive;
    out.headline = fmt::format(
        "inconclusive: the history holds {} run(s), at least {} needed to measure run-to-run spread ([gate] "
        "history_min_runs)",
        past.size(), min_runs);
  } else if (regressions + gating_findings > 0) {
    out.verdict = Verdict::regression;
    std::string first;
    for (const auto& r : out.metrics)
      if (r.status == Status::regression && r.gating) {
        first = fmt::format("{}{} {} against the history", r.name, r.scope.empty() ? "" : " [" + r.scope + "]",
                            format_change(r));
        break;
      }
    if (first.empty())
      for (const auto& f : out.findings)
        if (f.gating) {
          first = "new finding " + f.id + " (in no past run)";
          break;
        }
    out.headline =
        fmt::format("{} metric(s) regressed{}: {}", regressions,
                    gating_findings ? fmt::format(", {} new gating finding(s)", gating_findings) : "", first);
  } else if (!primary) {
    out.verdict = Verdict::inconclusive;
    out.headline = "inconclusive: iteration time not measured in the candidate and the history; " + capture_advice();
  } else if (primary->status == Status::improvement) {
    out.verdict = Verdict::improvement;
    out.headline = fmt::format("iteration time {} against the median of {} past runs", format_change(*primary),
                               primary->history_runs);
  } else {
    out.verdict = Verdict::pass;
    out.headline = fmt::format("no regression against {} past runs; iteration time {} ({} -> {})",
                               primary->history_runs, format_change(*primary),
                               format_metric_value(*primary->baseline, Unit::ns),
                               format_metric_value(*primary->candidate, Unit::ns));
  }
  return out;
}

}  // namespace proflint::gate
