// engine/cli/cmd_compare.cpp — `proflint compare`: the regression gate (docs/compare.md).
#include <algorithm>
#include <filesystem>
#include <future>

#include "engine/pipeline/restrict.hpp"
#include "engine/cli/commands.hpp"
#include "engine/common/error.hpp"
#include "engine/gate/compare.hpp"
#include "engine/report/compare_report.hpp"
#include "engine/report/html_report.hpp"
#include "engine/report/output.hpp"

namespace proflint {

namespace {

// A folder stands for the profiles in it (not recursive): the files whose names end like a
// profile or a saved store, in name order so the result does not depend on the file system.
std::vector<std::string> expand(const std::vector<std::string>& inputs, const std::string& side) {
  namespace fs = std::filesystem;
  static const std::vector<std::string> endings = {".json", ".json.gz", ".gz", ".sqlite", ".sqlite3", ".db", ".pflt"};
  std::vector<std::string> out;
  for (const auto& in : inputs) {
    std::error_code ec;
    if (!fs::is_directory(in, ec)) {
      out.push_back(in);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(in, ec)) {
      if (!entry.is_regular_file(ec)) continue;
      std::string name = entry.path().filename().string();
      if (std::any_of(endings.begin(), endings.end(), [&](const std::string& e) {
            return name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0;
          }))
        found.push_back(entry.path().string());
    }
    if (ec) throw input_error(in, "", "cannot read the folder: " + ec.message());
    if (found.empty())
      throw input_error(in, "",
                        "no profile in this " + side + " folder (looked for *.json, *.json.gz, *.sqlite, *.db)");
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

struct LoadedSide {
  gate::Side side;
  std::vector<Finding> findings;
};

LoadedSide load_side(const std::vector<std::string>& paths, const CommonOptions& options, const Config& config) {
  Store store = load_store(paths, options);
  restrict_to_selection(store);
  AnalysisResult analysis = run_analysis(store, analysis_options(config, options), detector_registry());
  gate::ExtractOptions eo;
  eo.warmup = config.gate.warmup;
  eo.warmup_tolerance = config.gate.warmup_tolerance;
  eo.user_range = options.iter_start.has_value() || options.iter_stop.has_value();
  eo.top = config.gate.top;
  LoadedSide out{gate::extract_side(store, eo), std::move(analysis.findings)};
  return out;
}

// Renders the result in the chosen format and writes it (stdout or -o FILE).
// `baselines` and `candidate` feed the HTML page's step-time distributions.
void emit(const gate::CompareResult& result, const CommonOptions& options, const std::vector<const gate::Side*>& baselines,
          const gate::Side& candidate) {
  bool color = options.format == "text" && options.output == "-" && use_color_on_stdout();
  std::string text;
  if (options.format == "json")
    text = render_compare_json(result);
  else if (options.format == "markdown")
    text = render_compare_markdown(result);
  else if (options.format == "junit")
    text = render_compare_junit(result);
  else if (options.format == "html")
    text = render_compare_html(result, baselines, candidate);
  else
    text = render_compare_text(result, color);
  write_output(options.output, text, color);
}

// `compare --baseline DIR_OF_PAST_RUNS CANDIDATE`: every profile or store in the folder is one
// past run of the job (loaded on its own), the candidate is judged against their spread.
int compare_history(const CommonOptions& options, const CompareOptions& compare, const std::string& candidate) {
  std::vector<std::string> past = expand(compare.baseline, "baseline");
  Config config = load_config(options.config_path);
  for (const auto& dir : options.rule_dirs) lua::rule_files_in(dir);
  for (const auto& [metric, budget] : config.gate.budgets)
    if (metric.find('*') == std::string::npos) gate::budget_for(config.gate, metric);
  CommonOptions quiet = options;
  quiet.progress = false;
  LoadedSide c = load_side({candidate}, options, config);
  std::vector<gate::Side> sides;
  std::vector<std::vector<Finding>> findings;
  for (const auto& path : past) {
    LoadedSide p = load_side({path}, quiet, config);
    sides.push_back(std::move(p.side));
    findings.push_back(std::move(p.findings));
  }
  auto result = gate::compare_history(sides, c.side, findings, c.findings, config.gate, compare.strict);
  std::vector<const gate::Side*> baselines;
  for (const auto& s : sides) baselines.push_back(&s);
  emit(result, options, baselines, c.side);
  std::vector<const std::vector<Finding>*> all{&c.findings};
  for (const auto& f : findings) all.push_back(&f);
  if (int rc = rule_error_exit_code(all, options)) return rc;
  return result.exit_code();
}

}  // namespace

int cmd_compare(const CommonOptions& options, const CompareOptions& compare) {
  static const std::vector<std::string> formats = {"text", "json", "markdown", "junit", "html"};
  if (std::find(formats.begin(), formats.end(), options.format) == formats.end())
    throw Error("--format must be text, json, markdown, junit or html, got '" + options.format + "'");
  // History mode: --baseline FOLDER... CANDIDATE without --candidate (the option takes several
  // values, so the candidate may arrive as its last value or as the one positional argument).
  if (compare.candidate.empty() && !compare.baseline.empty()) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (compare.positional.size() == 1 && fs::is_directory(compare.baseline.front(), ec))
      return compare_history(options, compare, compare.positional.front());
    if (compare.positional.empty() && compare.baseline.size() >= 2 && fs::is_directory(compare.baseline.front(), ec) &&
        !fs::is_directory(compare.baseline.back(), ec)) {
      CompareOptions history = compare;
      std::string candidate = history.baseline.back();
      history.baseline.pop_back();
      return compare_history(options, history, candidate);
    }
  }
  std::vector<std::string> base = compare.baseline, cand = compare.candidate;
  if (!compare.positional.empty()) {
    if (!base.empty() || !cand.empty())
      throw Error("give BASELINE CANDIDATE, or --baseline ... --candidate ..., not both");
    if (compare.positional.size() != 2)
      throw Error(
          "compare takes two profiles, BASELINE CANDIDATE (several files per side: --baseline A B "
          "--candidate C D)");
    base = {compare.positional[0]};
    cand = {compare.positional[1]};
  }
  if (base.empty() || cand.empty()) throw Error("compare needs a baseline and a candidate: BASELINE CANDIDATE");
  base = expand(base, "baseline");
  cand = expand(cand, "candidate");
  Config config = load_config(options.config_path);
  for (const auto& dir : options.rule_dirs)
    lua::rule_files_in(dir);  // a missing --rules folder fails before any import
  // Budgets that name a metric in the wrong unit are found before minutes of import.
  for (const auto& [metric, budget] : config.gate.budgets)
    if (metric.find('*') == std::string::npos) gate::budget_for(config.gate, metric);
  // The sides are independent stores (one connection each, used by one thread), so the candidate
  // loads on a second thread while the baseline loads here; only the baseline draws progress.
  CommonOptions quiet = options;
  quiet.progress = false;
  auto pending = std::async(std::launch::async, [&]() { return load_side(cand, quiet, config); });
  LoadedSide b = [&]() {
    try {
      return load_side(base, options, config);
    } catch (...) {
      pending.wait();  // never leave the other thread running past an error
      throw;
    }
  }();
  LoadedSide c = pending.get();
  auto result = gate::compare_sides(b.side, c.side, b.findings, c.findings, config.gate, compare.strict);
  emit(result, options, {&b.side}, c.side);
  if (int rc = rule_error_exit_code({&b.findings, &c.findings}, options)) return rc;
  return result.exit_code();
}

}  // namespace proflint
