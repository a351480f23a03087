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

namespace proflint {

namespace {

// What a kind of issue costs the analysis. Kinds not listed are described generically.
struct Effect {
  const char* kind;
  bool dropped;  // the event was skipped (else kept with a value approximated or left unknown)
  const char* meaning;
};

constexpr Effect kEffects[] = {
    {"invalid_event_json", true, "malformed events were skipped: times and counts are computed without them"},
    {"event_not_an_object", true, "non-event entries in traceEvents were skipped"},
    {"event_without_ph", true, "events without a phase were skipped"},
    {"unknown_phase", true, "events of an unknown phase were skipped"},
    {"unsupported_phase", true, "events of a Chrome-trace phase Kineto does not write (B/E, async) were skipped"},
    {"unexpected_phase", true, "events with a phase their category never has were skipped"},
    {"event_without_ts", true, "events without a timestamp were skipped"},
    {"bad_timestamp", true, "events with an unreadable timestamp were skipped"},
    {"event_without_dur", true, "complete events without a duration were skipped"},
    {"bad_duration", true, "events with an unreadable or overflowing duration were skipped"},
    {"negative_duration", true, "events with a negative duration were skipped (clock or export problem)"},
    {"missing_timestamp", true, "rows without start or end were skipped"},
    {"unknown_category", true,
     "events of an unknown category were skipped: if they are GPU work, utilization is understated"},
    {"event_without_category", true, "events without a category were skipped"},
    {"flow_without_id", true,
     "flow arrows without an id were skipped: some CPU->GPU or forward->backward links are missing"},
    {"oversized_event", true, "events larger than the reader's limit were skipped"},
    {"oversized_top_level_value", true,
     "a top-level value larger than the reader's limit was skipped (metadata may be missing)"},
    {"invalid_top_level_value", true, "an unreadable top-level value was skipped (metadata may be missing)"},
    {"table_unreadable", true, "a table of the export could not be read: everything it holds is missing"},
    {"kernel_without_name", true, "kernels without a name were skipped: kernel time is understated"},
    {"api_call_without_name", true, "API calls without a name were skipped: launches and syncs may be missing"},
    {"nvtx_event_without_type", true, "NVTX rows without an event type were skipped"},
    {"nvtx_mark_skipped", true,
     "NVTX marks (instants) were skipped; they carry no duration, so nothing is lost for timing"},
    {"nvtx_unsupported_event_type", true, "NVTX rows of an unsupported type were skipped"},
    {"nvtx_range_without_end", true, "NVTX ranges that never ended (capture stopped inside them) were skipped"},
    {"nvtx_range_without_text", true, "NVTX ranges without a name were skipped"},
    {"memory_event_incomplete", true, "incomplete memory events were skipped: the memory curve has gaps"},
    {"unknown_memory_operation", true, "memory events of an unknown operation were skipped"},
    {"gpu_metric_incomplete", true, "incomplete GPU metric samples were skipped"},
    {"gpu_metric_without_name", true, "GPU metric samples without a metric name were skipped"},
    {"missing_string_id", false, "names that point to no string were left unknown"},
    {"pid_mismatch", false, "process ids disagree between columns; the decoded globalPid was used"},
    {"stream_without_device", false, "streams with no known device were kept without one"},
    {"unknown_memcpy_kind", false,
     "copies of an unknown direction were kept as 'unknown': they are not checked for pageable memory"},
    {"unknown_memory_kind", false,
     "copies/memsets with an unknown memory kind were kept as 'unknown': they are not checked for pageable memory"},
    {"unknown_sync_type", false, "synchronizations of an unknown type were kept as 'unknown'"},
    {"nvtx_unknown_domain", false, "NVTX ranges of an undeclared domain were kept without a domain name"},
    {"key_node_not_found", false,
     "--key-node matched no op or annotation: iterations come from the next source (ProfilerStep#N, NVTX ranges, a "
     "repeating period), or there are none"},
    {"kernel_name_truncated", false,
     "kernel names over 64 KiB were cut to 64 KiB: names that differ only after that point count as one"},
    {"api_call_name_truncated", false, "API call names over 64 KiB were cut to 64 KiB"},
    {"range_name_truncated", false,
     "op/annotation/NVTX names over 64 KiB were cut to 64 KiB: names that differ only after that point count as one"},
    {"counter_name_truncated", false, "counter names over 64 KiB were cut to 64 KiB"},
    {"timestamp_out_of_range", true,
     "events more than 73 years (2^61 ns) from the clock's zero were skipped: no capture holds them (corrupt or edited file)"},
    {"duration_total_out_of_range", true,
     "events whose durations would add up past 2.3 years (2^56 ns) in one trace were skipped (corrupt or edited file)"},
    {"kernel_time_out_of_range", true, "kernels beyond +-2^61 ns were skipped (corrupt or edited file)"},
    {"memcpy_time_out_of_range", true, "copies beyond +-2^61 ns were skipped (corrupt or edited file)"},
    {"memset_time_out_of_range", true, "memsets beyond +-2^61 ns were skipped (corrupt or edited file)"},
    {"api_call_time_out_of_range", true, "API calls beyond +-2^61 ns were skipped (corrupt or edited file)"},
    {"range_time_out_of_range", true, "op/annotation/NVTX ranges beyond +-2^61 ns were skipped (corrupt or edited file)"},
    {"sync_event_time_out_of_range", true, "synchronizations beyond +-2^61 ns were skipped (corrupt or edited file)"},
    {"memory_sample_time_out_of_range", true, "memory samples beyond +-2^61 ns were skipped (corrupt or edited file)"},
    {"value_out_of_range", false,
     "byte counts beyond 2^50 or shared-memory sizes beyond 2^40 were left unknown (corrupt or edited file)"},
    {"memcpy_bytes_out_of_range", false, "copy sizes beyond 2^50 bytes were left unknown (corrupt or edited file)"},
    {"memset_bytes_out_of_range", false, "memset sizes beyond 2^50 bytes were left unknown (corrupt or edited file)"},
    {"device_not_in_gpu_table", false,
     "a device used by the trace is not described: its name, memory and compute capability are unknown"},
    {"device_inferred_from_kernel_names", false,
     "the export does not describe the GPU: device properties were inferred or left unknown, "
     "so rules that need the compute capability or memory size may be skipped"},
    {"device_shared_by_processes", false,
     "several processes ran work on one device id and the export does not say which physical GPU each meant: "
     "they were counted as one GPU (if each process had its own GPU, per-GPU figures mix them)"},
};

const Effect* effect_of(const std::string& kind) {
  for (const auto& e : kEffects)
    if (kind == e.kind) return &e;
  return nullptr;
}

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
      const Effect* e = effect_of(i.kind);
      if (!e || e->dropped) dropped += i.count;
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
      const Effect* e = effect_of(i.kind);
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
                       {"skipped", !e || e->dropped},
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
    std::string rec;
    if (only_device) {
      rec =
          "No timing data is missing; only the GPU description is. Captures inside containers often lack it: profile "
          "with a "
          "recent Nsight Systems that can read the GPU (TARGET_INFO_GPU), and until then expect rules that need the "
          "compute "
          "capability or memory size to be skipped.";
    } else {
      rec = "Read the figures that depend on the affected events with care. ";
    }
    if (only_device) {
    } else if (s->format == "nsys")
      rec +=
          "Re-export the report with the Nsight Systems version that captured it (`nsys export --type sqlite "
          "--lazy=false report.nsys-rep`); ";
    else
      rec +=
          "Check that the trace file is complete (a trace cut off while writing, or edited by hand, loses events) and "
          "re-export it with `prof.export_chrome_trace(...)`; ";
    if (!only_device) rec += "if the file is intact, report the kinds and examples above to the proflint maintainers.";

    Finding f;
    f.id = std::string(id());
    f.title = std::string(title());
    f.diagnostic = true;
    f.problem = std::move(problem);
    f.recommendation = std::move(rec);
    f.savings_method = "none: a profile diagnostic";
    f.confidence = 1.0;
    f.evidence["issues"] = total;
    f.evidence["skipped"] = dropped;
    f.evidence["events_read"] = s->event_count;
    f.evidence["kinds"] = kinds;
    f.scope.trace_id = trace_id;
    f.scope.rank = s->rank;
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
