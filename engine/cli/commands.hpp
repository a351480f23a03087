// engine/cli/commands.hpp — the subcommands behind the thin main(); each returns the exit code.
//
// Exit codes (DESIGN.md §9): 0 success, 1 findings at/above --fail-on or gate failed, 2 bad
// usage or unreadable input. Errors are printed by run_command as one line naming the file.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/config/config.hpp"
#include "engine/pipeline/analyze.hpp"
#include "engine/pipeline/load.hpp"

namespace proflint {

struct CommonOptions {
  std::vector<std::string> inputs;
  std::string format = "text";   // text | json (| markdown | sarif for analyze)
  std::string output = "-";      // -o FILE, '-' = stdout
  std::optional<std::string> key_node;
  std::optional<int64_t> iter_start, iter_stop;
  std::optional<std::string> config_path;  // --config FILE (else ./proflint.toml when present)
  bool progress = false;
  std::vector<std::string> rule_dirs;      // --rules DIR (repeatable): folders of Lua rules
  std::optional<std::string> job_by;       // --job-by auto|given|none (docs/multi-rank.md); unset: auto
  std::optional<double> sample_offset_s;   // --sample-offset SECONDS (docs/samples.md)
  // Clara-style operator logs (docs/samples.md): a spec file, or its keys one by one.
  std::optional<std::string> operator_spec_path, operator_total, operator_name;
  std::vector<std::string> operator_modules;
  // --fail-on-rule-error / --no-fail-on-rule-error (every command that runs Lua rules); unset:
  // on when the environment has CI=true.
  std::optional<bool> fail_on_rule_error;
};

// `proflint --version`: the version, then the input libraries this build and CPU use (simdjson
// kernel picked at run time, gzip inflater), for bug reports and the benchmark.
std::string version_text();

int cmd_summary(const CommonOptions& options);
int cmd_ingest(const CommonOptions& options, const std::string& db_path);
int cmd_query(const CommonOptions& options, const std::string& sql);
int cmd_config_dump(const CommonOptions& options);

struct AnalyzeOptions {
  std::string fail_on = "never";         // high | medium | low | never
  std::vector<std::string> only, skip;   // detector/rule ids
  std::optional<std::string> db_path;    // --db: also save the derived store
};
int cmd_rules_list(const CommonOptions& options);
int cmd_rules_explain(const CommonOptions& options, const std::string& id);
int cmd_rules_check(const CommonOptions& options, const std::vector<std::string>& files);  // engine/cli/cmd_rules.cpp
int cmd_analyze(const CommonOptions& options, const AnalyzeOptions& analyze);

// The load options the common flags and proflint.toml ask for (flags win over the file).
LoadOptions load_options(const CommonOptions& options);
// Imports and derives `inputs` with those options; says on stderr where --key-node marked no
// iteration (with candidates), and resolves a detail report's Op ID given as --key-node.
// `split`: the store is only read, never saved (LoadOptions::split_store).
Store load_store(const std::vector<std::string>& inputs, const CommonOptions& options, bool split = false);
// Detectors, rules, suppressions and limits from proflint.toml plus --rules: what analyze, report
// and compare all run.
AnalysisOptions analysis_options(const Config& config, const CommonOptions& options);
// The exit code --fail-on-rule-error asks for once a command's outputs are written: 2 (said on
// stderr) when `findings` hold a rule-error and the flag, or CI=true without
// --no-fail-on-rule-error, is set; else 0. analyze, report, compare and export end with it.
int rule_error_exit_code(const std::vector<const std::vector<Finding>*>& findings, const CommonOptions& options);

// `proflint report`: DLProf-style report files (engine/cli/cmd_report.cpp, docs/reports.md).
struct ReportOptions {
  std::vector<std::string> reports;          // report names or 'all'
  std::vector<std::string> formats{"csv"};   // csv, json
  std::vector<std::string> domains;          // NVTX domains; empty = default domain + every named one
  std::string output_path = ".";
  std::string base_name = "proflint";
  bool force = false;
};
int cmd_report(const CommonOptions& options, const ReportOptions& report);

// `proflint compare`: the regression gate (engine/cli/cmd_compare.cpp, docs/compare.md).
struct CompareOptions {
  std::vector<std::string> positional;           // BASELINE CANDIDATE
  std::vector<std::string> baseline, candidate;  // --baseline A B --candidate C D (files or folders)
  bool strict = false;                           // inconclusive fails too
};
int cmd_compare(const CommonOptions& options, const CompareOptions& compare);

// `proflint export`: a trace for a timeline viewer (engine/cli/cmd_export.cpp, docs/export.md).
struct ExportOptions {
  std::string format;      // perfetto | chrome (the same JSON) | paraver
  std::string output;      // -o: the file ('-' stdout); for paraver the base name of .prv/.pcf/.row
  bool no_findings = false;  // skip the analysis (no findings track)
};
int cmd_export(const CommonOptions& options, const ExportOptions& e);

// Runs `body`, turning proflint::Error and library exceptions into "proflint: error: ..." on
// stderr and exit code 2. A library's message (SQLite's "integer overflow") that escaped every
// stage is prefixed with the command's `inputs`, so the line still names the files.
int run_command(const std::function<int()>& body, const std::vector<std::string>& inputs = {});

// True when the environment variable CI is "true" or "1" (set by GitHub Actions, GitLab CI, …).
bool running_in_ci();

// True when colour may be used on this stream (a terminal, NO_COLOR unset).
bool use_color_on_stdout();
bool stderr_is_terminal();

}  // namespace proflint
