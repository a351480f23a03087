// tests/lua/lua_support.hpp — running Lua rules from tests on a fixture imported once.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/pipeline/analyze.hpp"
#include "engine/pipeline/load.hpp"
#include "tests/support/realdata.hpp"

namespace proflint::testing {

// fixtures/sample_train.json.gz, imported and derived once per test binary (analysis never changes it).
inline Store& sample_store() {
  static std::unique_ptr<Store> store;
  if (!store)
    store = std::make_unique<Store>(load_inputs({fixture_path("sample_train.json.gz").string()}, LoadOptions{}));
  return *store;
}

inline lua::RuleFile rule(const std::string& path, const std::string& text) { return {path, text, false}; }

// Runs only the given rule files (no built-in detector) on `store`.
inline AnalysisResult run_rules(Store& store, std::vector<lua::RuleFile> files, RuleLimits limits = {},
                                std::map<std::string, DetectorConfig> config = {}) {
  AnalysisOptions ao;
  ao.rule_files = std::move(files);
  ao.rule_limits = limits;
  ao.rules = std::move(config);
  // Built-in detectors are skipped by listing each of them.
  for (const auto& info : detector_registry()) ao.skip.insert(std::string(info.id));
  return run_analysis(store, ao, detector_registry());
}

// Findings of `id` as reported, one per rank/GPU (a job finding merged by ranking gives its instances).
inline std::vector<Finding> with_id(const AnalysisResult& r, const std::string& id) {
  std::vector<Finding> out;
  for (const auto& f : r.findings) {
    if (f.id != id) continue;
    if (f.instances.empty()) out.push_back(f);
    for (const auto& in : f.instances) out.push_back(in);
  }
  return out;
}

// A rule whose evaluate body is `body`.
inline std::string rule_text(const std::string& id, const std::string& body, const std::string& extra = "") {
  return "return {\n  id = \"" + id + "\",\n  title = \"t\",\n" + extra + "  evaluate = function(ctx)\n" + body +
         "\n  end,\n}\n";
}

}  // namespace proflint::testing
