// engine/cli/cmd_report.cpp — `proflint report`: DLProf-style reports written as files.
//
// Files are named <base>_<report>[_<domain>].<csv|json> in --output-path. Existing targets
// (without --force), an unknown report, format or domain, and an unwritable folder are all refused
// before any report is built. Reports are then built and written one at a time to temporary
// files, and moved into place together at the end (OutputFile, commit_all), so a failed run
// leaves no partial output and memory holds one report at a time.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>

#include "engine/pipeline/restrict.hpp"
#include "engine/cli/commands.hpp"
#include "engine/common/error.hpp"
#include "engine/common/format.hpp"
#include "engine/common/output_file.hpp"
#include "engine/common/suggest.hpp"
#include "engine/config/config.hpp"
#include "engine/pipeline/analyze.hpp"
#include "engine/report/dlprof/reports.hpp"

namespace proflint {

namespace {

std::vector<std::string> checked_reports(const std::vector<std::string>& given) {
  const auto& known = dlprof::report_names();
  std::vector<std::string> out;
  for (const auto& name : given) {
    if (name == "all") {
      for (const auto& k : known)
        if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
      continue;
    }
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      auto candidates = known;
      candidates.push_back("all");
      throw Error(
          "unknown report '" + name + "'" + did_you_mean(name, candidates) +
          "; choose from summary, detail, iteration, kernel, tensor, op_type, group_node, expert_systems, collectives, graphs or all");
    }
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  if (out.empty()) throw Error("--reports needs at least one report name (or 'all')");
  return out;
}

std::vector<std::string> checked_formats(const std::vector<std::string>& given) {
  static const std::vector<std::string> known = {"csv", "json"};
  std::vector<std::string> out;
  for (const auto& f : given) {
    if (f == "both") {  // csv and json
      for (const auto& k : known)
        if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
      continue;
    }
    if (std::find(known.begin(), known.end(), f) == known.end())
      throw Error("unknown report format '" + f + "'" + did_you_mean(f, {"csv", "json", "both"}) +
                  "; choose csv, json or both");
    if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  }
  if (out.empty()) out.push_back("csv");
  return out;
}

// A domain name as a file-name part: path separators and blanks become '_'.
std::string file_part(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (c == '/' || c == '\\' || c == ' ' || c == '\t' || c == ':') c = '_';
  return out;
}

}  // namespace

int cmd_report(const CommonOptions& options, const ReportOptions& report) {
  namespace fs = std::filesystem;
  auto names = checked_reports(report.reports);
  auto formats = checked_formats(report.formats);
  if (report.base_name.empty() || report.base_name.find('/') != std::string::npos)
    throw Error("--base-name must be a plain file-name prefix, got '" + report.base_name + "'");

  Store store = load_store(options.inputs, options);
  dlprof::Model model = dlprof::load_model(store);
  require_selected_iterations(store);  // a range selecting nothing would give empty reports

  std::vector<std::string> domains;
  if (report.domains.empty()) {
    domains.push_back("");
    domains.insert(domains.end(), model.domains.begin(), model.domains.end());
  } else {
    for (const auto& d : report.domains) {
      if (std::find(model.domains.begin(), model.domains.end(), d) == model.domains.end()) {
        std::string have;
        for (const auto& x : model.domains) have += (have.empty() ? "" : ", ") + x;
        throw Error("unknown NVTX domain '" + d + "'" + did_you_mean(d, model.domains) +
                    (have.empty()
                         ? "; the profile has no named NVTX domains (leave out --domains for the default domain)"
                         : "; the profile has: " + have));
      }
      if (std::find(domains.begin(), domains.end(), d) == domains.end()) domains.push_back(d);
    }
  }

  std::optional<AnalysisResult> analysis;
  if (std::find(names.begin(), names.end(), "expert_systems") != names.end()) {
    Config config = load_config(options.config_path);
    AnalysisOptions ao = analysis_options(config, options);
    // The model is loaded; cutting the store to the range now only affects the detectors.
    restrict_to_selection(store);
    analysis = run_analysis(store, ao, detector_registry());
  }
  dlprof::ReportInput input{&store, &model, analysis ? &*analysis : nullptr};

  // File names first: existing targets and an unusable folder are refused before any work.
  fs::path dir = report.output_path.empty() ? fs::path(".") : fs::path(report.output_path);
  // 'collectives' and 'graphs' are trace-wide: written once, not per NVTX domain.
  auto written = [](const std::string& name, const std::string& domain) {
    return !((name == "collectives" || name == "graphs") && !domain.empty());
  };
  std::vector<fs::path> paths;
  for (const auto& domain : domains)
    for (const auto& name : names)
      if (written(name, domain))
        for (const auto& f : formats)
          paths.push_back(dir / (report.base_name + "_" + name + (domain.empty() ? "" : "_" + file_part(domain)) + "." + f));

  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw input_error(dir.string(), "", "--output-path must be a folder, not a file");
  if (!report.force) {
    std::vector<std::string> existing;
    for (const auto& path : paths)
      if (fs::exists(path, ec)) existing.push_back(path.string());
    if (!existing.empty())
      throw Error(
          existing.front() + " already exists" +
          (existing.size() > 1 ? " (and " + std::to_string(existing.size() - 1) + " more report file(s))" : "") +
          "; nothing was written. Use --force to overwrite, or another --output-path/--base-name");
  }
  bool created_dir = false;
  if (!fs::exists(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec) throw input_error(dir.string(), "", "cannot create the output folder: " + ec.message());
    created_dir = true;
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    throw input_error(dir.string(), "", "the output folder is not writable; nothing was written");

  // One report at a time is built and written, a row at a time, to its file's temporary name
  // (OutputFile::stage_file), then freed: memory holds the model and one report, never every
  // report's text (issue 20, defect 7: 10^6 kernels took 4.4 GB). No file is moved into place
  // before all are staged, so a failure leaves no report file (and no folder this run created).
  std::vector<OutputFile> outputs;
  outputs.reserve(paths.size());
  try {
    size_t next = 0;
    for (const auto& domain : domains) {
      for (const auto& name : names) {
        if (!written(name, domain)) continue;
        dlprof::Report r = dlprof::build_report(name, input, domain);
        for (const auto& f : formats) {
          outputs.emplace_back(paths[next++].string(), "--output-path");
          outputs.back().stage_file([&](const std::string& temp) {
            std::FILE* file = std::fopen(temp.c_str(), "wbx");
            if (!file) throw input_error(outputs.back().path(), "", std::string("cannot write: ") + std::strerror(errno));
            bool ok = true;
            auto sink = [&](std::string_view piece) {
              std::string text = escape_controls(piece);
              ok = ok && std::fwrite(text.data(), 1, text.size(), file) == text.size();
            };
            if (f == "csv")
              dlprof::write_csv(r, sink);
            else
              dlprof::write_json(r, sink);
            int err = ok ? 0 : errno;
            if (std::fclose(file) != 0 && err == 0) err = errno;
            if (!ok || err != 0)
              throw input_error(outputs.back().path(), "", std::string("write failed: ") + std::strerror(err ? err : EIO));
          });
        }
      }
    }
    std::vector<OutputFile*> all;
    for (auto& o : outputs) all.push_back(&o);
    commit_all(all);
  } catch (...) {
    outputs.clear();  // discards what was staged
    if (created_dir) fs::remove(dir, ec);  // only when still empty
    throw;
  }
  for (const auto& path : paths) std::cout << "wrote " << path.string() << "\n";
  return analysis ? rule_error_exit_code({&analysis->findings}, options) : 0;
}

}  // namespace proflint
