// engine/analysis/finding.hpp — what detectors and Lua rules report.
//
// A finding says what was measured (problem, with numbers), what to change (recommendation),
// the evidence, and how much wall time fixing it could save. Rendering lives in report/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace proflint {

enum class Severity { info = 0, low = 1, medium = 2, high = 3 };

std::string_view severity_name(Severity s);
std::optional<Severity> parse_severity(std::string_view name);

struct Scope {
  std::optional<int64_t> trace_id, device_id, rank;
  std::optional<int64_t> iter_first, iter_last;  // iteration ordinals the finding covers
};

struct Finding {
  std::string id;                       // detector/rule id, kebab-case
  std::string title;
  std::optional<Severity> severity;     // set only when the detector fixes it; else derived from the share
  std::string problem;                  // what was measured, with numbers
  std::string recommendation;           // what to change, concretely
  nlohmann::ordered_json evidence = nlohmann::ordered_json::object();  // metrics, names, row ids
  int64_t estimated_savings_ns = 0;     // Amdahl-bounded estimate of wall time recovered
  std::string savings_method;           // how the estimate was made, in one sentence
  double confidence = 0.5;              // 0..1
  bool diagnostic = false;              // about the profile itself (no iterations, dropped events ...)
  Scope scope;
  std::string source = "builtin";       // 'builtin' or the Lua rule file

  // Filled by ranking:
  double savings_share = 0;             // estimated_savings_ns / wall time of its scope
  Severity effective_severity = Severity::info;
};

// Where detectors put findings.
class FindingSink {
 public:
  virtual ~FindingSink() = default;
  virtual void report(Finding finding) = 0;
};

class VectorSink final : public FindingSink {
 public:
  void report(Finding finding) override { findings.push_back(std::move(finding)); }
  std::vector<Finding> findings;
};

}  // namespace proflint
