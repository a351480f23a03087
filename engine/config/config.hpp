// engine/config/config.hpp — proflint.toml: the effective configuration of a run.
//
// Found as ./proflint.toml or given with --config. Unknown keys and bad values are errors that
// name FILE:LINE:COLUMN, so a typo never silently changes nothing.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/derive/derive.hpp"

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
};

// [rules]: folders of Lua rules (relative to the config file), limits, and [rules.<id>] tables
// (`enabled` and options, like [detectors.<id>]).
struct RulesConfig {
  std::vector<std::string> paths;                 // resolved against the config file's folder
  RuleLimits limits;
  std::map<std::string, DetectorConfig> rules;    // [rules.<id>]
  std::string where;                              // "FILE:LINE:COLUMN" of [rules], when present
};

struct Config {
  std::string source = "(built-in defaults)";     // the file it came from
  std::vector<TensorCorePattern> tensor_core_patterns;  // [tensor_cores] uses / not
  std::optional<std::string> key_node;             // [iterations] key_node
  std::map<std::string, DetectorConfig> detectors;  // [detectors.<id>]
  std::vector<Suppression> suppressions;           // [[suppress]]
  RulesConfig rules;                               // [rules], [rules.<id>]
};

// Parses TOML text; `source` names the file in error messages.
Config parse_config(const std::string& text, const std::string& source);
// --config PATH when given (must exist), else ./proflint.toml when present, else defaults.
Config load_config(const std::optional<std::string>& explicit_path);
// The effective configuration as TOML, with every known key (defaults included).
std::string dump_config(const Config& config);

}  // namespace proflint
