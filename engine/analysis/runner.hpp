// engine/analysis/runner.hpp — running every enabled detector over the derived store.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "engine/analysis/finding.hpp"
#include "engine/analysis/summary.hpp"
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

struct AnalysisResult {
  std::vector<TraceSummary> summaries;
  std::vector<Finding> findings;   // ranked: problems first, then diagnostics
  // Checks that ran and stayed under a threshold (a detector's own, or a finding held back by
  // ranking's min_savings_ns / min_wall_share), sorted by id, trace and device.
  std::vector<BelowThreshold> below_threshold;
  std::vector<std::string> notes;  // e.g. "gpu-imbalance skipped on trace 1: needs multi_device"
};

AnalysisResult run_analysis(Store& store, const AnalysisOptions& options);

}  // namespace proflint
