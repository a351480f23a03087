// engine/gate/compare.cpp — see compare.hpp.
#include "engine/gate/compare.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "engine/common/error.hpp"
#include "engine/report/format.hpp"

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
                              unit == Unit::share ? " or percentage points (\"3 pp\")"
                              : unit == Unit::ns  ? " or a time (\"2 ms\")"
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
  }
  return "";
}

std::string format_change(const MetricResult& r) {
  // One decimal; a change that rounds to zero reads "+0.0", never "-0.0".
  auto signed_one_decimal = [](double x) {
    std::string t = fmt::format("{:+.1f}", x);
    return t == "-0.0" ? std::string("+0.0") : t;
  };
  if (r.unit == Unit::share) return signed_one_decimal(r.delta * 100) + " pp";
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

MetricResult iteration_result(const Metric& b, const Metric& c, const GateConfig& config) {
  MetricResult r;
  r.name = b.name;
  r.unit = Unit::ns;
  r.per_iteration = true;
  r.baseline = b.value;
  r.candidate = c.value;
  r.delta = c.value - b.value;
  if (b.value != 0) r.relative = r.delta / b.value;
  r.baseline_n = b.samples.size();
  r.candidate_n = c.samples.size();
  r.budget = budget_for_unit(config, r.name, Unit::ns);
  auto n_min = static_cast<size_t>(config.min_iterations);
  if (r.baseline_n < n_min || r.candidate_n < n_min) {
    r.status = Status::inconclusive;
    r.reason = fmt::format(
        "too few iterations to test: {} on the baseline, {} on the candidate, at least {} per side "
        "needed (profile more steps, e.g. torch.profiler.schedule(active=...), or lower "
        "[gate] min_iterations)",
        r.baseline_n, r.candidate_n, n_min);
    return r;
  }
  auto mw = mann_whitney_u(b.samples, c.samples);
  r.p_value = mw.p_value;
  r.exact_test = mw.exact;
  if (b.value > 0)
    r.ratio_ci = bootstrap_median_ratio(b.samples, c.samples, 1 - config.alpha,
                                        static_cast<int>(config.bootstrap_resamples), config.seed);
  bool significant = mw.p_value < config.alpha;
  bool big = exceeds(r.budget, r.delta, b.value);
  std::string ci = r.ratio_ci ? fmt::format(", {:.0f}% CI of the ratio [{:.3f}, {:.3f}]", (1 - config.alpha) * 100,
                                            r.ratio_ci->low, r.ratio_ci->high)
                              : "";
  std::string test = fmt::format("Mann-Whitney U p = {} ({}, n = {} vs {}){}", p_text(mw.p_value),
                                 mw.exact ? "exact" : "normal approximation", r.baseline_n, r.candidate_n, ci);
  if (significant && big) {
    r.status = r.delta > 0 ? Status::regression : Status::improvement;
    r.reason = fmt::format("median {} -> {} ({}), beyond the {} budget; {}", format_metric_value(b.value, Unit::ns),
                           format_metric_value(c.value, Unit::ns), format_change(r), r.budget.text, test);
  } else if (significant) {
    r.reason = fmt::format("a significant but small change ({}), within the {} budget; {}", format_change(r),
                           r.budget.text, test);
  } else {
    r.reason = fmt::format("no significant difference at alpha {} ({}); {}", config.alpha, format_change(r), test);
  }
  return r;
}

MetricResult scalar_result(const MetricKey& key, const Metric& proto, std::optional<double> b, std::optional<double> c,
                           const GateConfig& config, double time_floor) {
  MetricResult r;
  r.name = key.name;
  r.scope = key.scope;
  r.unit = proto.unit;
  r.polarity = proto.polarity;
  r.per_iteration = proto.per_iteration;
  r.baseline = b;
  r.candidate = c;
  r.budget = budget_for_unit(config, r.name, r.unit);
  double bv = b.value_or(0), cv = c.value_or(0);
  r.delta = cv - bv;
  if (bv != 0) r.relative = r.delta / std::abs(bv);
  double floor = r.unit == Unit::ns ? time_floor : r.unit == Unit::bytes ? 16.0 * 1024 * 1024 : 0.0;
  double worse = r.polarity == Polarity::lower_is_better ? r.delta : -r.delta;
  bool big = exceeds(r.budget, r.delta, bv) && std::abs(r.delta) > floor;
  std::string what =
      fmt::format("{} -> {} ({})", format_metric_value(bv, r.unit), format_metric_value(cv, r.unit), format_change(r));
  if (big) {
    r.status = worse > 0 ? Status::regression : Status::improvement;
    r.reason = fmt::format("{}, beyond the {} budget", what, r.budget.text);
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
      m.emplace(std::make_pair(f.id, finding_scope(f, with_rank, with_device)), &f);
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
        m[metric.name] += metric.value;
        total += metric.value;
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
                                                                       : Unit::ns;
  return budget_for_unit(config, name, unit);
}

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
  // Noise floor for times: a share of the baseline's step (or capture, without iterations).
  double time_floor = 0;
  if (auto it = bi.find({"iteration_time", ""}); it != bi.end())
    time_floor = config.noise_floor * it->second->value;
  else if (auto w = bi.find({"wall_time", ""}); w != bi.end())
    time_floor = config.noise_floor * w->second->value;

  // Op types and kernels: only the `top` largest of either side.
  std::map<std::string, std::vector<std::pair<double, MetricKey>>> ranked;
  std::set<MetricKey> keys;
  for (const auto* m : {&bi, &ci})
    for (const auto& [key, metric] : *m) keys.insert(key);
  for (const auto& key : keys) {
    std::string fam = family(key.name);
    if (fam != "op_type." && fam != "kernel.") continue;
    double size = 0;
    if (auto it = bi.find(key); it != bi.end()) size = std::max(size, it->second->value);
    if (auto it = ci.find(key); it != ci.end()) size = std::max(size, it->second->value);
    ranked[fam].emplace_back(size, key);
  }
  std::set<MetricKey> dropped;
  for (auto& [fam, list] : ranked) {
    std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t i = static_cast<size_t>(config.top); i < list.size(); ++i) dropped.insert(list[i].second);
  }

  std::vector<std::string> one_sided;
  for (const auto& key : keys) {
    if (dropped.count(key) || !selected(config, key.name)) continue;
    auto b = bi.find(key);
    auto c = ci.find(key);
    const Metric* proto = b != bi.end() ? b->second : c->second;
    MetricResult r;
    if (key.name == "iteration_time") {
      if (b == bi.end() || c == ci.end()) {
        one_sided.push_back("iteration_time");
        continue;
      }
      r = iteration_result(*b->second, *c->second, config);
    } else {
      bool both = b != bi.end() && c != ci.end();
      std::string fam = family(key.name);
      bool zero_when_absent = key.scope.empty() && (fam == "op_type." || fam == "kernel.");
      if (!both && !zero_when_absent) {
        one_sided.push_back(key.name + (key.scope.empty() ? "" : " [" + key.scope + "]") +
                            (b == bi.end() ? " (candidate only)" : " (baseline only)"));
        continue;
      }
      if (both && (b->second->unit != c->second->unit || b->second->per_iteration != c->second->per_iteration)) {
        one_sided.push_back(key.name + " (measured per iteration on one side only)");
        continue;
      }
      std::optional<double> bv = b != bi.end() ? std::optional<double>(b->second->value) : std::nullopt;
      std::optional<double> cv = c != ci.end() ? std::optional<double>(c->second->value) : std::nullopt;
      r = scalar_result(key, *proto, bv, cv, config, time_floor);
      // A breakdown without iterations is a share of each capture: report it, never gate on it.
      if (fam == "breakdown." && !proto->per_iteration) r.gating = false;
    }
    if (std::any_of(config.informational.begin(), config.informational.end(),
                    [&](const auto& p) { return metric_matches(p, key.name); }))
      r.gating = false;
    out.metrics.push_back(std::move(r));
  }
  // Parts of a step that got significantly faster overall: a part that grew is a shift of time
  // (AMP adds casts while the step drops 85%), not slower training. Shown, not gating.
  const MetricResult* step = nullptr;
  for (const auto& r : out.metrics)
    if (r.name == "iteration_time" && r.scope.empty()) step = &r;
  if (step && step->status == Status::improvement) {
    for (auto& r : out.metrics) {
      bool component = r.per_iteration && r.unit == Unit::ns && r.name != "iteration_time";
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
    double mx = x.relative ? std::abs(*x.relative) : (x.delta != 0 ? INFINITY : 0);
    double my = y.relative ? std::abs(*y.relative) : (y.delta != 0 ? INFINITY : 0);
    if (mx != my) return mx > my;
    return std::tie(x.name, x.scope) < std::tie(y.name, y.scope);
  });
  compare_findings(base, cand, base_findings, cand_findings, config, out);

  // The verdict.
  const MetricResult* iteration = nullptr;
  int regressions = 0;
  for (const auto& r : out.metrics) {
    if (r.name == "iteration_time" && r.scope.empty()) iteration = &r;
    if (r.status == Status::regression && r.gating) ++regressions;
  }
  int gating_findings = 0;
  for (const auto& f : out.findings) gating_findings += f.gating ? 1 : 0;
  auto iteration_words = [&]() {
    if (!iteration) return std::string("iteration time not measured");
    if (iteration->status == Status::inconclusive) return "iteration time inconclusive (" + iteration->reason + ")";
    return fmt::format("iteration time {} ({} -> {}{})", format_change(*iteration),
                       format_metric_value(*iteration->baseline, Unit::ns),
                       format_metric_value(*iteration->candidate, Unit::ns),
                       iteration->p_value ? ", p = " + p_text(*iteration->p_value) : "");
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
        first = r.name == "iteration_time"
                    ? iteration_words()
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
  } else if (iteration && iteration->status == Status::improvement) {
    out.verdict = Verdict::improvement;
    out.headline = iteration_words();
  } else if (iteration && iteration->status == Status::inconclusive) {
    out.verdict = Verdict::inconclusive;
    out.headline = iteration_words();
  } else {
    out.verdict = Verdict::pass;
    out.headline =
        iteration ? "no regression beyond the budgets; " + iteration_words() : "no regression beyond the budgets";
  }
  return out;
}

}  // namespace proflint::gate
