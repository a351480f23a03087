// engine/cli/main.cpp — argument parsing only; every command lives in the engine library.
#include <CLI/CLI.hpp>

#include <iostream>

#include "engine/cli/commands.hpp"

int main(int argc, char** argv) {
  using namespace proflint;
  CLI::App app{"proflint: an expert system for GPU deep-learning profiles"};
  app.require_subcommand(1);
  app.set_version_flag("--version", [] { return version_text(); });

  CommonOptions common;
  std::string db_path, sql, query_input;
  auto add_derive_flags = [&](CLI::App* cmd) {
    // DLProf's spellings (--key_node, --iter_start, --iter_stop) are accepted too.
    cmd->add_option("--key-node,--key_node", common.key_node,
                    "op or annotation name (or a detail report's Op ID) that marks one iteration");
    cmd->add_option("--iter-start,--iter_start", common.iter_start, "first iteration (0-based) to aggregate");
    cmd->add_option("--iter-stop,--iter_stop", common.iter_stop, "last iteration (inclusive) to aggregate");
    cmd->add_flag("--progress", common.progress,
                  "show import progress on stderr (a bar on a terminal, a line every 10% otherwise)");
    cmd->add_option("--config", common.config_path, "configuration file (default ./proflint.toml)");
    cmd->add_option("--job-by", common.job_by,
                    "how profiles form jobs: auto (distributedInfo, nsys processes; default), given (all inputs are "
                    "the ranks of one job) or none (each profile alone)")
        ->check(CLI::IsMember({"auto", "given", "none"}));
    cmd->add_option("--sample-offset", common.sample_offset_s,
                    "seconds added to the times of sampling logs (nvidia-smi, dmon, dcgmi) given beside a trace, to "
                    "put them on the trace's clock (default: found from the clocks)");
    cmd->add_option("--operator-spec", common.operator_spec_path,
                    "profiler spec of a Clara-style operator log (TOML/YAML with totalTimeStr and opModules); inputs no "
                    "other reader claims are read as that operator's log");
    cmd->add_option("--operator-total", common.operator_total, "operator log: the key of the operator's total time");
    cmd->add_option("--operator-modules", common.operator_modules, "operator log: module keywords (comma-separated)")
        ->delimiter(',');
    cmd->add_option("--operator-name", common.operator_name, "operator log: the operator's name (default: file stem)");
  };

  // Every command that runs Lua rules takes the pair (one is parsed per run, so they share).
  bool fail_rules = false, no_fail_rules = false;
  auto add_rule_error_flags = [&](CLI::App* cmd) {
    cmd->add_flag("--fail-on-rule-error", fail_rules,
                  "exit 2 when a Lua rule fails (rule-error); the default when the environment has CI=true");
    cmd->add_flag("--no-fail-on-rule-error", no_fail_rules, "a failing Lua rule does not change the exit code");
  };

  AnalyzeOptions analyze_opts;
  auto* analyze = app.add_subcommand("analyze", "find performance problems, ranked by estimated time saved");
  analyze->add_option("PROFILE", common.inputs, "profile files or a saved store")->required();
  analyze->add_option("--format", common.format, "text, json, markdown, sarif or html")
      ->check(CLI::IsMember({"text", "json", "markdown", "sarif", "html"}));
  analyze->add_option("-o,--output", common.output, "output file (default stdout)");
  analyze->add_option("--fail-on", analyze_opts.fail_on, "exit 1 when a finding has at least this severity")
      ->check(CLI::IsMember({"high", "medium", "low", "never"}));
  add_rule_error_flags(analyze);
  analyze->add_option("--only", analyze_opts.only, "run only these detector/rule ids")->delimiter(',');
  analyze->add_option("--skip", analyze_opts.skip, "do not run these detector/rule ids")->delimiter(',');
  analyze->add_option("--db", analyze_opts.db_path, "also save the derived fact store to this file");
  analyze->add_option("--rules", common.rule_dirs, "also run the Lua rules in this folder (repeatable)");
  add_derive_flags(analyze);

  auto* summary = app.add_subcommand("summary", "headline metrics: wall time, GPU utilization, breakdown, iterations");
  summary->add_option("PROFILE", common.inputs, "profile files or a saved store")->required();
  summary->add_option("--format", common.format, "text or json")->check(CLI::IsMember({"text", "json"}));
  summary->add_option("-o,--output", common.output, "output file (default stdout)");
  add_derive_flags(summary);

  auto* ingest = app.add_subcommand("ingest", "import profiles into a saved fact store");
  ingest->add_option("PROFILE", common.inputs, "profile files")->required();
  ingest->add_option("--db", db_path, "store file to write")->required();
  add_derive_flags(ingest);

  auto* query = app.add_subcommand("query", "run one read-only SQL query over the fact store, CSV out");
  query->add_option("STORE_OR_PROFILE", query_input, "a saved store or profile")->required();
  query->add_option("SQL", sql, "the SELECT statement")->required();
  query->add_option("-o,--output", common.output, "output file (default stdout)");
  query->add_option("--format", common.format, "csv (default) or json (typed values, NULL as null)")
      ->check(CLI::IsMember({"csv", "json"}));
  add_derive_flags(query);

  ReportOptions report_opts;
  auto* report = app.add_subcommand("report", "DLProf-style reports (summary, detail, iteration, ...) as CSV/JSON files");
  report->add_option("PROFILE", common.inputs, "profile files or a saved store")->required();
  report->add_option("--reports", report_opts.reports, "summary,detail,iteration,kernel,tensor,op_type,group_node,expert_systems,collectives,graphs or all")
      ->delimiter(',')->required();
  report->add_option("--formats", report_opts.formats, "csv, json or both (default csv)")->delimiter(',');
  report->add_option("--output-path", report_opts.output_path, "folder for the report files (created if missing; default .)");
  report->add_option("--base-name", report_opts.base_name, "file-name prefix (default proflint)");
  report->add_option("--domains", report_opts.domains, "NVTX domains to report (default: the default domain and every named one)")
      ->delimiter(',');
  report->add_flag("--force", report_opts.force, "overwrite existing report files");
  add_derive_flags(report);
  report->add_option("--rules", common.rule_dirs, "also run the Lua rules in this folder for expert_systems (repeatable)");
  add_rule_error_flags(report);

  CompareOptions compare_opts;
  auto* compare = app.add_subcommand("compare", "regression gate: is the candidate slower or worse than the baseline?");
  compare->add_option("PROFILES", compare_opts.positional, "BASELINE CANDIDATE (profiles, saved stores or folders)");
  compare->add_option("--baseline", compare_opts.baseline, "baseline files or folders (repeated runs or ranks)");
  compare->add_option("--candidate", compare_opts.candidate, "candidate files or folders (repeated runs or ranks)");
  compare->add_option("--format", common.format, "text, json, markdown, junit or html")
      ->check(CLI::IsMember({"text", "json", "markdown", "junit", "html"}));
  compare->add_option("-o,--output", common.output, "output file (default stdout)");
  compare->add_flag("--strict", compare_opts.strict, "exit 1 when the result is inconclusive, too");
  compare->add_option("--rules", common.rule_dirs, "also run the Lua rules in this folder (repeatable)");
  add_rule_error_flags(compare);
  add_derive_flags(compare);

  ExportOptions export_opts;
  auto* exp = app.add_subcommand("export", "write the profile as a trace for Perfetto UI / chrome://tracing or Paraver");
  exp->add_option("PROFILE", common.inputs, "profile files (several ranks are merged, one process per rank) or a saved store")
      ->required();
  exp->add_option("--format", export_opts.format, "perfetto, chrome (the same trace-event JSON) or paraver")->required();
  exp->add_option("-o,--output", export_opts.output,
                  "output file ('-' for stdout); for paraver the base name of OUT.prv, OUT.pcf and OUT.row")
      ->required();
  exp->add_flag("--no-findings", export_opts.no_findings, "do not run the analysis (no findings track)");
  exp->add_option("--rules", common.rule_dirs, "also run the Lua rules in this folder for the findings track (repeatable)");
  add_rule_error_flags(exp);
  add_derive_flags(exp);

  std::string explain_id;
  auto* rules = app.add_subcommand("rules", "built-in detectors and Lua rules");
  rules->require_subcommand(1);
  auto* rules_list = rules->add_subcommand("list", "every detector and rule: id, source, status, what it needs");
  rules_list->add_option("--config", common.config_path, "configuration file (default ./proflint.toml)");
  rules_list->add_option("--rules", common.rule_dirs, "also list the Lua rules in this folder (repeatable)");
  auto* rules_explain = rules->add_subcommand("explain", "print a detector's or rule's documentation");
  rules_explain->add_option("ID", explain_id, "detector or rule id")->required();
  rules_explain->add_option("--config", common.config_path, "configuration file (default ./proflint.toml)");
  rules_explain->add_option("--rules", common.rule_dirs, "also look in this folder of Lua rules (repeatable)");
  std::vector<std::string> check_files;
  auto* rules_check = rules->add_subcommand("check", "load and validate Lua rule files without a profile");
  rules_check->add_option("FILE", check_files, "rule files (.lua)")->required();

  auto* config = app.add_subcommand("config", "configuration");
  config->require_subcommand(1);
  auto* config_dump = config->add_subcommand("dump", "print the effective configuration as TOML");
  config_dump->add_option("--config", common.config_path, "configuration file (default ./proflint.toml)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (!common.progress) common.progress = stderr_is_terminal();
  if (fail_rules && no_fail_rules) {
    std::cerr << "proflint: error: give --fail-on-rule-error or --no-fail-on-rule-error, not both\n";
    return 2;
  }
  if (fail_rules || no_fail_rules) common.fail_on_rule_error = fail_rules;

  // The files an error that escaped every stage is attributed to.
  auto named_inputs = [&] {
    if (query->parsed()) return std::vector<std::string>{query_input};
    std::vector<std::string> all = common.inputs;
    for (const auto* list : {&compare_opts.positional, &compare_opts.baseline, &compare_opts.candidate})
      all.insert(all.end(), list->begin(), list->end());
    return all;
  };
  return run_command([&]() -> int {
    if (analyze->parsed()) return cmd_analyze(common, analyze_opts);
    if (summary->parsed()) return cmd_summary(common);
    if (report->parsed()) return cmd_report(common, report_opts);
    if (compare->parsed()) return cmd_compare(common, compare_opts);
    if (ingest->parsed()) return cmd_ingest(common, db_path);
    if (exp->parsed()) return cmd_export(common, export_opts);
    if (query->parsed()) {
      common.inputs = {query_input};
      return cmd_query(common, sql);
    }
    if (config_dump->parsed()) return cmd_config_dump(common);
    if (rules_list->parsed()) return cmd_rules_list(common);
    if (rules_explain->parsed()) return cmd_rules_explain(common, explain_id);
    if (rules_check->parsed()) return cmd_rules_check(common, check_files);
    return 2;
  }, named_inputs());
}
