// tests/support/all_checks.hpp — every detector and shipped rule over a store, and what a user
// sees of the result as one comparable text (tests that the way analysis runs changes nothing).
#pragma once

#include <string>

#include "engine/lua/rules.hpp"
#include "engine/pipeline/analyze.hpp"

namespace proflint::testing {

// Every built-in detector and shipped Lua rule, on up to `jobs` threads.
inline AnalysisResult analyze_all(Store& store, unsigned jobs) {
  AnalysisOptions options;
  options.jobs = jobs;
  options.rule_files = lua::shipped_rules();
  return run_analysis(store, options, detector_registry());
}

// Everything a user sees of an analysis: ranked findings with their evidence, the checks that
// stayed below their thresholds, and the notes.
inline std::string rendered(const AnalysisResult& r) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : r.findings)
    out.push_back({{"id", f.id}, {"problem", f.problem}, {"evidence", f.evidence}, {"savings", f.estimated_savings_ns}});
  for (const auto& c : r.below_threshold) out.push_back({{"below", c.id}, {"value", c.value}});
  for (const auto& n : r.notes) out.push_back(n);
  return out.dump(1);
}

}  // namespace proflint::testing
