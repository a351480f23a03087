// detectors/import_issues.cpp — import-issues
// A profile diagnostic: the importer skipped or approximated events (import_issue). Lists each kind
// with its count and example, and says what it means for the analysis, so a reader knows which
// figures rest on incomplete data. Docs: docs/detectors/import-issues.md
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "engine/analysis/detector.hpp"
#include "engine/common/format.hpp"
#include "engine/common/import_issue_kinds.hpp"

namespace proflint {

namespace {

// What a kind of issue costs the analysis (engine/common/import_issue_kinds.hpp); a kind not
// listed (a store written by another version) is described generically and counted as skipped.
const import_issue::Kind* effect_of(const std::string& kind) { return import_issue::find(kind); }

class ImportIssues final : public Detector {
 public:
  explicit ImportIssues(const OptionValues& o) : max_kinds_(std::max<int64_t>(1, o.integer("max_kinds"))) {}

  std::string_view id() const override { return "import-issues"; }
  std::string_view title() const override { return "The importer skipped or approximated events"; }
  std::vector<std::string> needs() const override { return {}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* s = facts.summary(trace_id);
    if (!s || s->issues.empty()) return;
    int64_t total = 0, dropped = 0;
    for (const auto& i : s->issues) {
      total += i.count;
      const import_issue::Kind* e = effect_of(i.kind);
      if (!e || e->effect == import_issue::Effect::skipped) dropped += i.count;
    }
    std::string problem = fmt::format("While reading {} the importer met {} problem{} of {} kind{}", s->path, total,
                                      total == 1 ? "" : "s", s->issues.size(), s->issues.size() == 1 ? "" : "s");
    if (s->event_count > 0)
      problem += fmt::format(" ({} skipped, {} of the {} events read)", dropped,
                             format_percent(static_cast<double>(dropped) / static_cast<double>(s->event_count)),
                             s->event_count);
    problem += ":";
    nlohmann::ordered_json kinds = nlohmann::ordered_json::array();
    size_t shown = 0;
    for (const auto& i : s->issues) {  // summary orders them by count, then kind
      const import_issue::Kind* e = effect_of(i.kind);
      if (static_cast<int64_t>(shown) < max_kinds_) {
        problem += fmt::format(" {} × {} — {}", i.count, i.kind,
                               e ? e->meaning : "events the importer could not use were skipped");
        if (!i.example.empty())
          problem += fmt::format(" (e.g. `{}{}`", i.example.substr(0, 120), i.example.size() > 120 ? "…" : "");
        if (!i.example.empty() && !i.location.empty()) problem += fmt::format(" at {}", i.location);
        if (!i.example.empty()) problem += ")";
        problem += ";";
        ++shown;
      }
      kinds.push_back({{"kind", i.kind},
                       {"count", i.count},
                       {"skipped", !e || e->effect == import_issue::Effect::skipped},
                       {"example", i.example},
                       {"location", i.location}});
    }
    if (shown < s->issues.size())
      problem +=
          fmt::format(" and {} more kind{};", s->issues.size() - shown, s->issues.size() - shown == 1 ? "" : "s");
    problem.back() = '.';

    bool only_device = std::all_of(s->issues.begin(), s->issues.end(), [](const ImportIssueSummary& i) {
      return i.kind == "device_inferred_from_kernel_names" || i.kind == "device_not_in_gpu_table";
    });
    // Sampling and operator logs (docs/samples.md): what was assumed is said above; the fix is in
    // how the log is written or given, not in re-exporting a trace.
    bool only_logs = std::all_of(s->issues.begin(), s->issues.end(), [](const ImportIssueSummary& i) {
      return i.kind.rfind("sample", 0) == 0 || i.kind.rfind("operator_log", 0) == 0;
    });
    std::string rec;
    if (only_logs) {
      rec = "The sampling log was read with the assumptions named above. To avoid them, log the GPU index and a "
            "timestamp (nvidia-smi --query-gpu=timestamp,index,... --format=csv, nvidia-smi dmon -o DT), keep operator "
            "log lines in the '<text><KEY><text>: <milliseconds>' form, and give --sample-offset SECONDS when the log's "
            "clock differs from the trace's.";
    } else if (only_device) {
      rec =
          "No timing data is missing; only the GPU description is. Captures inside containers often lack it: profile "
          "with a "
          "recent Nsight Systems that can read the GPU (TARGET_INFO_GPU), and until then expect rules that need the "
          "compute "
          "capability or memory size to be skipped.";
    } else {
      rec = "Read the figures that depend on the affected events with care. ";
    }
    if (only_device || only_logs) {
    } else if (s->format == "nsys")
      rec +=
          "Re-export the report with the Nsight Systems version that captured it (`nsys export --type sqlite "
          "--lazy=false report.nsys-rep`); ";
    else
      rec +=
          "Check that the trace file is complete (a trace cut off while writing, or edited by hand, loses events) and "
          "re-export it with `prof.export_chrome_trace(...)`; ";
    if (!only_device && !only_logs) rec += "if the file is intact, report the kinds and examples above to the proflint maintainers.";

    Finding f = make_diagnostic(FindingScope::of_trace(trace_id).of_rank(s->rank));
    f.problem = std::move(problem);
    f.recommendation = std::move(rec);
    f.savings_method = kNoSavingsDiagnostic;
    f.confidence = 1.0;
    f.evidence["issues"] = total;
    f.evidence["skipped"] = dropped;
    f.evidence["events_read"] = s->event_count;
    f.evidence["kinds"] = kinds;
    sink.report(std::move(f));
  }

 private:
  int64_t max_kinds_;
};

}  // namespace

DetectorInfo import_issues_info() {
  return {"import-issues",
          {{"max_kinds", 8, "issue kinds spelled out in the problem text (all are in the evidence)"}},
          [](const OptionValues& o) { return std::make_unique<ImportIssues>(o); }};
}

}  // namespace proflint
