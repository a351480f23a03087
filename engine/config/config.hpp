// engine/config/config.hpp — proflint.toml: the effective configuration of a run.
//
// Found as ./proflint.toml or given with --config. Unknown keys and bad values are errors that
// name FILE:LINE:COLUMN, so a typo never silently changes nothing.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/config/tensor_core_pattern.hpp"

namespace proflint {

// [detectors.<id>]: `enabled = false` turns a detector off; every other key is an option.
struct DetectorConfig {
  std::optional<bool> enabled;
  nlohmann::json options = nlohmann::json::object();
  std::map<std::string, std::string> where;  // key ('' = the table) -> "FILE:LINE:COLUMN"
};

// [[suppress]]: hide findings of `id`, optionally only those whose problem or evidence mentions
// `pattern` (a substring, e.g. an op or kernel name); `reason` is shown in the report's notes.
struct Suppression {
  std::string id, pattern, reason, where;
};

// Sandbox limits for each Lua rule run ([rules] in proflint.toml).
struct RuleLimits {
  int64_t instruction_limit = 200'000'000;  // Lua VM instructions per rule and trace
  int64_t memory_limit_mb = 256;            // Lua heap per rule and trace
  int64_t query_time_limit_ms = 20'000;     // wall time of one ctx:query / ctx:rows step
  int64_t time_limit_ms = 60'000;           // wall time of one rule on one trace (load, evaluate, close)
  int64_t max_findings = 1'000;             // findings kept per rule and trace (a rule-error says how many more)
};

// [rules]: folders of Lua rules (relative to the config file), limits, and [rules.<id>] tables
// (`enabled` and options, like [detectors.<id>]).
struct RulesConfig {
  std::vector<std::string> paths;  // resolved against the config file's folder
  RuleLimits limits;
  std::map<std::string, DetectorConfig> rules;  // [rules.<id>]
  std::string where;                            // "FILE:LINE:COLUMN" of [rules], when present
};

// A regression budget: how much worse a metric may get before `proflint compare` calls it a
// regression. Written "5%" (relative to the baseline), "3 pp" (percentage points of a share),
// "2 ms" / "500 us" / "1.5 s" (time), "64 MiB" (bytes), or a bare number (percent).
struct GateBudget {
  enum class Kind { relative, time_ns, share_points, bytes };
  Kind kind = Kind::relative;
  double amount = 5;        // percent for relative; ns, fraction (0.03 = 3 pp) or bytes otherwise
  std::string text = "5%";  // as written
  std::string where;        // FILE:LINE:COLUMN, empty for built-in defaults
};

// Parses a budget string (see GateBudget); throws Error naming `where` when malformed.
GateBudget parse_gate_budget(const std::string& text, const std::string& where);

// [gate]: how `proflint compare` decides (docs/compare.md).
struct GateConfig {
  double alpha = 0.05;                       // significance level of the iteration-time test
  int64_t min_iterations = 5;                // fewer per side: iteration time is inconclusive
  int64_t bootstrap_resamples = 2000;        // for the confidence interval of the median ratio
  uint64_t seed = 1;                         // bootstrap RNG seed (results are deterministic)
  std::string warmup = "auto";               // 'auto' or a number of leading iterations to drop per trace
  double warmup_tolerance = 0.2;             // auto: drop leading iterations above (1 + this) x median
  double noise_floor = 0.05;                 // per-iteration time changes below this share of the baseline step
                                             // are not called regressions (alone they cannot move the step past 5%)
  double max_iteration_count_ratio = 1.5;    // larger ratio of iteration counts: not comparable
  int64_t top = 10;                          // op types and kernels compared (by GPU time)
  double min_workload_overlap = 0.5;  // lower GPU-time overlap of the op-type mix: not comparable
  std::optional<GateBudget> max_regression;  // default budget for every metric without its own
  std::vector<std::pair<std::string, GateBudget>> budgets;  // [gate.budgets] metric pattern -> budget
  std::vector<std::string> fail_on_new_findings;            // ids that fail the gate when new
  std::optional<std::string> fail_on_new_severity;          // or: any new finding at/above this severity
  std::vector<std::string> metrics = {"*"};                 // allow list (patterns with '*')
  std::vector<std::string> skip_metrics;                    // deny list
  // What may fail the gate (patterns); every other metric only explains the verdict. Opt a
  // component in per metric, e.g. "breakdown.dataloader" or "op_type.*".
  std::vector<std::string> gating = {"iteration_time", "throughput", "peak_memory", "peak_memory_growth",
                                     "kernel_time_per_launch"};
  std::vector<std::string> informational;  // never fail the gate, even when listed in `gating`
  double history_threshold = 3;            // history mode: candidate beyond median + this x MAD-sigma of past runs
  int64_t history_min_runs = 3;            // history mode: fewer past runs is inconclusive
  std::string where;                                        // FILE:LINE:COLUMN of [gate]
};

struct Config {
  std::string source = "(built-in defaults)";           // the file it came from
  std::vector<TensorCorePattern> tensor_core_patterns;  // [tensor_cores] uses / not
  std::optional<std::string> key_node;                  // [iterations] key_node
  std::map<std::string, DetectorConfig> detectors;      // [detectors.<id>]
  std::vector<Suppression> suppressions;                // [[suppress]]
  RulesConfig rules;                                    // [rules], [rules.<id>]
  GateConfig gate;                                      // [gate], [gate.budgets]
  // [source] skip / keep: top-level Python packages source attribution treats as library code
  // in addition to / instead of the built-in list (engine/derive/source.hpp).
  std::vector<std::string> source_skip, source_keep;
};

// Parses TOML text; `source` names the file in error messages.
Config parse_config(const std::string& text, const std::string& source);
// --config PATH when given (must exist), else ./proflint.toml when present, else defaults.
Config load_config(const std::optional<std::string>& explicit_path);
// The effective configuration as TOML, with every known key (defaults included).
std::string dump_config(const Config& config);

}  // namespace proflint
