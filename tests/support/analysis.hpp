// tests/support/analysis.hpp — running detectors on a profile from tests.
#pragma once

#include <string>
#include <vector>

#include "engine/pipeline/analyze.hpp"
#include "engine/pipeline/load.hpp"

namespace proflint::testing {

// Imports and derives `path`, then runs only detector `id` (with config-style option overrides).
inline AnalysisResult analyze_with(const std::string& path, const std::string& id,
                                   nlohmann::json options = nlohmann::json::object()) {
  Store store = load_inputs({path}, LoadOptions{});
  AnalysisOptions ao;
  ao.only = {id};
  if (!options.empty()) ao.detectors[id].options = options;
  return run_analysis(store, ao, detector_registry());
}

// The findings of detector `id` as it reported them, one per rank/GPU: a finding that ranking
// merged across the ranks/GPUs of a job is replaced by its instances (each after overlaps).
inline std::vector<Finding> findings_of(const AnalysisResult& r, const std::string& id) {
  std::vector<Finding> out;
  for (const auto& f : r.findings) {
    if (f.id != id) continue;
    if (f.instances.empty()) out.push_back(f);
    for (const auto& in : f.instances) out.push_back(in);
  }
  return out;
}

}  // namespace proflint::testing
