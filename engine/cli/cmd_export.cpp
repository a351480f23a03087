// engine/cli/cmd_export.cpp — `proflint export`: the profile as a trace for a timeline viewer
// (docs/export.md). Chrome trace-event JSON for Perfetto UI and chrome://tracing, or a Paraver
// trace (.prv + .pcf + .row). Outputs are checked before the import and written through
// OutputFile, so a failed export leaves no file behind and a reader never sees half a trace.
#include <fstream>
#include <iostream>
#include <sstream>

#include "engine/pipeline/restrict.hpp"
#include "engine/cli/commands.hpp"
#include "engine/common/error.hpp"
#include "engine/common/output_file.hpp"
#include "engine/common/suggest.hpp"
#include "engine/config/config.hpp"
#include "engine/export/chrome_trace.hpp"
#include "engine/export/paraver.hpp"
#include "engine/pipeline/analyze.hpp"

namespace proflint {

namespace {

// Streams into the staged file `path`; a failed write (disk full) is an error naming the output.
void fill_file(const std::string& path, const std::string& shown, const std::function<void(std::ostream&)>& body) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw input_error(shown, "", "cannot create the output file");
  body(f);
  f.flush();
  if (!f) throw input_error(shown, "", "write failed (disk full?); nothing was written");
}

}  // namespace

int cmd_export(const CommonOptions& options, const ExportOptions& e) {
  if (e.format != "perfetto" && e.format != "chrome" && e.format != "paraver")
    throw Error("unknown export format '" + e.format + "'" + did_you_mean(e.format, {"perfetto", "chrome", "paraver"}) +
                "; choose perfetto, chrome or paraver");
  if (e.output.empty()) throw Error("export needs -o OUT (a file, '-' for stdout, or for paraver the base name of the three files)");
  Config config = load_config(options.config_path);
  for (const auto& dir : options.rule_dirs) lua::rule_files_in(dir);

  // Targets first: a directory or unwritable path fails before the import.
  std::vector<OutputFile> outputs;
  std::string base = e.output;
  if (e.format == "paraver") {
    if (base == "-") throw Error("-o: paraver writes three files (.prv, .pcf, .row); give their base name, not '-'");
    if (base.size() > 4 && base.compare(base.size() - 4, 4, ".prv") == 0) base.resize(base.size() - 4);
    outputs.reserve(3);
    for (const char* ext : {".prv", ".pcf", ".row"}) outputs.emplace_back(base + ext, "-o");
  } else {
    outputs.emplace_back(e.output, "-o");
  }

  Store store = load_store(options.inputs, options);
  restrict_to_selection(store);  // --iter-start/--iter-stop export just those iterations
  std::vector<Finding> findings;
  if (!e.no_findings) {
    AnalysisOptions ao = analysis_options(config, options);
    findings = run_analysis(store, ao, detector_registry()).findings;
  }

  std::string summary;
  if (e.format == "paraver") {
    std::ostringstream pcf, row;
    exporter::ParaverExportStats stats;
    outputs[0].stage_file([&](const std::string& path) {
      fill_file(path, outputs[0].path(), [&](std::ostream& out) { stats = exporter::write_paraver(store, findings, out, pcf, row); });
    });
    outputs[1].stage(pcf.str());
    outputs[2].stage(row.str());
    summary = std::to_string(stats.records) + " records, " + std::to_string(stats.tasks) + " task(s), " +
              std::to_string(stats.threads) + " rows, " + std::to_string(findings.size()) + " finding(s)";
  } else {
    exporter::ChromeExportStats stats;
    outputs[0].stage_file([&](const std::string& path) {
      fill_file(path, outputs[0].path(), [&](std::ostream& out) { stats = exporter::write_chrome_trace(store, findings, out); });
    });
    summary = std::to_string(stats.events) + " events, " + std::to_string(stats.flows) + " flows, " +
              std::to_string(findings.size()) + " finding(s)";
  }
  std::vector<OutputFile*> all;
  for (auto& o : outputs) all.push_back(&o);
  commit_all(all);
  // Like `report`, the files written go to stdout, unless stdout is the trace itself.
  (e.output == "-" ? std::cerr : std::cout) << "wrote " << (e.format == "paraver" ? base + ".prv, .pcf, .row" : e.output)
                                            << " (" << summary << ")\n";
  return rule_error_exit_code({&findings}, options);
}

}  // namespace proflint
