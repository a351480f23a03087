// engine/lua/rules.hpp — user-written Lua rules: finding, loading, validating and running them.
//
// A rule file returns one table { id, title, severity, needs, options, doc, evaluate }. Each load
// and each evaluation runs in a fresh sandboxed lua_State (sandbox.hpp) with an instruction budget,
// a memory cap and a query time limit; nothing survives between runs. Errors never escape as
// exceptions from run_rule: they become a `rule-error` diagnostic finding whose problem text is
// `file.lua:LINE: message`. The API a rule sees is documented in docs/lua-api.md.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/facts.hpp"
#include "engine/analysis/finding.hpp"
#include "engine/config/config.hpp"

namespace proflint::lua {

// One rule file: the path shown in messages and findings' `source`, and its text.
struct RuleFile {
  std::string path;
  std::string text;
  bool shipped = false;  // one of rules/*.lua, embedded in the binary
};

// What a rule file declares, read from the table it returns.
struct RuleInfo {
  std::string path;
  std::string id, title, doc;
  std::optional<Severity> severity;  // fixed severity of its findings; else derived from the share
  std::vector<std::string> needs;
  std::vector<OptionSpec> options;
  std::vector<std::string> problems;  // "file.lua:LINE: message"; empty when the rule is valid
  bool ok() const { return problems.empty(); }
};

// The rules shipped with the tool: rules/*.lua embedded at configure time (so the binary works
// from any folder), or the *.lua files of $PROFLINT_RULES_DIR when that is set (for development).
std::vector<RuleFile> shipped_rules();
// The *.lua files directly inside `dir`, sorted by name; throws Error (exit 2) when `dir` is not a folder.
std::vector<RuleFile> rule_files_in(const std::string& dir);
// Reads one file; throws Error when unreadable.
RuleFile read_rule_file(const std::string& path);
// Shipped rules, then [rules] paths of the configuration, then --rules folders, in that order.
std::vector<RuleFile> collect_rule_files(const Config& config, const std::vector<std::string>& cli_dirs);

// Loads the file in a sandbox and validates the returned table (never throws).
RuleInfo load_rule(const RuleFile& file, const RuleLimits& limits);

// Runs `evaluate(ctx)` of a valid rule on one trace; findings (or one rule-error) go to `sink`.
// The caller holds a ReadOnlyGuard on the store.
void run_rule(const RuleInfo& info, const RuleFile& file, const nlohmann::json& options, const Facts& facts,
              int64_t trace_id, const RuleLimits& limits, FindingSink& sink);

// The rule-error diagnostic for `message` ("file.lua:LINE: message").
Finding rule_error(const std::string& path, const std::string& message, std::optional<int64_t> trace_id = std::nullopt);

}  // namespace proflint::lua
