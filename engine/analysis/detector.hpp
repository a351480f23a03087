// engine/analysis/detector.hpp — the interface of a built-in detector.
//
// One class per file in detectors/, registered in the explicit list of detectors/registry.cpp.
// A detector reads facts only through Facts (the same SQL Lua rules run), reads its options once
// in its constructor, keeps no state between runs, and reports findings to the sink.
#pragma once

#include <functional>
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/analysis/facts.hpp"
#include "engine/analysis/finding.hpp"

namespace proflint {

// An option with its default; values come from [detectors.<id>] in proflint.toml.
struct OptionSpec {
  std::string name;
  nlohmann::json default_value;  // number, bool, string or array
  std::string doc;
};

// Option values after merging config over defaults, looked up by name.
class OptionValues {
 public:
  OptionValues() = default;
  OptionValues(const std::vector<OptionSpec>& specs, const nlohmann::json& overrides);
  double number(const std::string& name) const;
  int64_t integer(const std::string& name) const;
  bool boolean(const std::string& name) const;
  std::string text(const std::string& name) const;
  const nlohmann::json& raw(const std::string& name) const;
  const nlohmann::json& all() const { return values_; }

 private:
  nlohmann::json values_ = nlohmann::json::object();
};

// What a finding is about (Finding::scope), built in one expression:
//   FindingScope::of_trace(t).on_device(d).of_rank(s->rank).over_iterations_seen(first, last)
// A Scope with builder methods; make_finding takes it as the Scope it is.
struct FindingScope : Scope {
  FindingScope() = default;
  explicit FindingScope(const Scope& s) : Scope(s) {}
  static FindingScope of_trace(int64_t trace) {
    FindingScope s;
    s.trace_id = trace;
    return s;
  }
  FindingScope on_device(std::optional<int64_t> device) const {
    FindingScope s = *this;
    s.device_id = device;
    return s;
  }
  FindingScope of_rank(std::optional<int64_t> r) const {
    FindingScope s = *this;
    s.rank = r;
    return s;
  }
  // Iterations first..last, as given.
  FindingScope over_iterations(int64_t first, int64_t last) const {
    FindingScope s = *this;
    s.iter_first = first;
    s.iter_last = last;
    return s;
  }
  // Iterations first..last when the detector saw any (0 <= first <= last), else unchanged: a
  // detector that collected min/max ordinals from -1 or INT64_MAX/-1 sentinels passes them as they
  // are; the first n iterations are over_iterations_seen(0, n - 1).
  FindingScope over_iterations_seen(int64_t first, int64_t last) const {
    return first >= 0 && first <= last ? over_iterations(first, last) : *this;
  }
};

class Detector {
 public:
  virtual ~Detector() = default;
  virtual std::string_view id() const = 0;     // kebab-case, e.g. "amp-not-used"
  virtual std::string_view title() const = 0;  // one line
  virtual std::vector<std::string> needs() const = 0;  // names from known_needs(), all required
  // Runs over every trace in `facts`; a trace missing a need is skipped by the runner.
  virtual void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const = 0;

 protected:
  // A finding of this detector: its id, its title (or `title` where one detector reports several
  // kinds of finding) and `scope`; the detector fills in the text, estimate and evidence.
  Finding make_finding(Scope scope) const { return make_finding(std::string(title()), std::move(scope)); }
  Finding make_finding(std::string title, Scope scope) const {
    Finding f;
    f.id = std::string(id());
    f.title = std::move(title);
    f.scope = std::move(scope);
    return f;
  }
  // A finding about the profile itself (no iterations, dropped events ...), not about the workload.
  Finding make_diagnostic(Scope scope) const {
    Finding f = make_finding(std::move(scope));
    f.diagnostic = true;
    return f;
  }
};

// The savings_method of a diagnostic that estimates no saving.
inline constexpr std::string_view kNoSavingsDiagnostic = "none: a profile diagnostic";

// What a detector records when it evaluated and stayed under one of its thresholds.
inline BelowThreshold checked_below(const Detector& d, int64_t trace_id, std::optional<int64_t> device_id,
                                    std::string measured, double value, double threshold, std::string unit) {
  BelowThreshold b;
  b.id = std::string(d.id());
  b.measured = std::move(measured);
  b.value = value;
  b.threshold = threshold;
  b.unit = std::move(unit);
  b.scope.trace_id = trace_id;
  b.scope.device_id = device_id;
  return b;
}

// Splits `total` over `weights` in proportion, as integers that add up to `total` exactly: the
// per-evidence claims of an estimate (Finding::claims) then sum to the estimate itself.
inline std::vector<int64_t> split_in_proportion(int64_t total, const std::vector<int64_t>& weights) {
  long double sum = 0;
  for (int64_t w : weights) sum += static_cast<long double>(std::max<int64_t>(w, 0));
  std::vector<int64_t> out;
  out.reserve(weights.size());
  long double cum = 0;
  int64_t given = 0;
  for (int64_t w : weights) {
    cum += static_cast<long double>(std::max<int64_t>(w, 0));
    int64_t upto = sum > 0 ? static_cast<int64_t>(std::llround(cum / sum * static_cast<long double>(total))) : 0;
    out.push_back(upto - given);
    given = upto;
  }
  return out;
}

// Claims `f.estimated_savings_ns` for the evidence rows `ids` of one kind ("memcpy" gives keys
// "memcpy:<id>"), split in proportion to `weights` (Finding::claims).
inline void claim_in_proportion(Finding& f, std::string_view kind, const std::vector<int64_t>& ids,
                                const std::vector<int64_t>& weights) {
  const std::vector<int64_t> parts = split_in_proportion(f.estimated_savings_ns, weights);
  for (size_t i = 0; i < ids.size(); ++i) f.claims[std::string(kind) + ":" + std::to_string(ids[i])] = parts[i];
}

struct DetectorInfo {
  std::string_view id;
  std::vector<OptionSpec> options;  // with defaults
  std::function<std::unique_ptr<Detector>(const OptionValues&)> make;
};

// Every built-in detector, sorted by id (detectors/registry.cpp).
const std::vector<DetectorInfo>& detector_registry();

}  // namespace proflint
