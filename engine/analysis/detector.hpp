// engine/analysis/detector.hpp — the interface of a built-in detector.
//
// One class per file in detectors/, registered in the explicit list of detectors/registry.cpp.
// A detector reads facts only through Facts (the same SQL Lua rules run), reads its options once
// in its constructor, keeps no state between runs, and reports findings to the sink.
#pragma once

#include <functional>
#include <map>
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

class Detector {
 public:
  virtual ~Detector() = default;
  virtual std::string_view id() const = 0;     // kebab-case, e.g. "amp-not-used"
  virtual std::string_view title() const = 0;  // one line
  virtual std::vector<std::string> needs() const = 0;  // names from known_needs(), all required
  // Runs over every trace in `facts`; a trace missing a need is skipped by the runner.
  virtual void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const = 0;
};

struct DetectorInfo {
  std::string_view id;
  std::vector<OptionSpec> options;  // with defaults
  std::function<std::unique_ptr<Detector>(const OptionValues&)> make;
};

// Every built-in detector, sorted by id (detectors/registry.cpp).
const std::vector<DetectorInfo>& detector_registry();

}  // namespace proflint
