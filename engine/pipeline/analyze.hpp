// engine/pipeline/analyze.hpp — one analysis run: the given detectors and the Lua rules over the
// derived store, then ranking.
//
// Orchestration, not a stage: it decides which checks run (configuration, --only/--skip, each
// check's needs) and hands them to analysis/ as tasks. The detector list is a parameter (the CLI
// passes detector_registry()), so analysis/ never links the detectors and never includes Lua.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/runner.hpp"
#include "engine/config/config.hpp"
#include "engine/lua/rules.hpp"
#include "engine/store/store.hpp"

namespace proflint {

struct AnalysisOptions {
  std::set<std::string> only;                       // when non-empty, run just these ids
  std::set<std::string> skip;                       // ids not to run
  std::map<std::string, DetectorConfig> detectors;  // [detectors.<id>] from proflint.toml
  std::vector<Suppression> suppressions;            // [[suppress]]
  std::vector<lua::RuleFile> rule_files;            // Lua rules to run after the detectors
  std::map<std::string, DetectorConfig> rules;      // [rules.<id>] from proflint.toml
  RuleLimits rule_limits;                           // [rules] limits
  // Threads for detectors and rules: 0 = PROFLINT_JOBS when set, else the machine's cores (at
  // most 8). The findings and their order do not depend on it.
  unsigned jobs = 0;
};

// Runs every enabled detector of `detectors` and every Lua rule of `options` on every trace of
// the store, then ranks the findings. Configuration errors (unknown ids, bad options) throw Error.
AnalysisResult run_analysis(Store& store, const AnalysisOptions& options, const std::vector<DetectorInfo>& detectors);

}  // namespace proflint
