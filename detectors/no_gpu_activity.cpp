// detectors/no_gpu_activity.cpp — no-gpu-activity
// Diagnostic: the profile holds no kernels, copies or memsets, so every GPU detector was skipped.
// Says what the trace does hold and how to capture GPU activity. Docs: docs/detectors/no-gpu-activity.md
#include <fmt/format.h>

#include "engine/analysis/detector.hpp"
#include "engine/common/format.hpp"

namespace proflint {

namespace {

int64_t count(const Facts& facts, const char* sql, int64_t trace_id) {
  SQLite::Statement q(facts.db(), sql);
  q.bind(1, trace_id);
  return q.executeStep() ? q.getColumn(0).getInt64() : 0;
}

class NoGpuActivity final : public Detector {
 public:
  explicit NoGpuActivity(const OptionValues&) {}
  std::string_view id() const override { return "no-gpu-activity"; }
  std::string_view title() const override { return "The profile has no GPU activity to analyse"; }
  std::vector<std::string> needs() const override { return {}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* s = facts.summary(trace_id);
    if (!s || s->has_gpu_work) return;
    // A sampling log alone (docs/samples.md) records no events to look for: the sample detectors judge it.
    if (facts.has("samples", trace_id) && !facts.has("trace_events", trace_id)) return;
    int64_t ops = count(facts, "SELECT count(*) FROM _range WHERE trace_id = ? AND kind = 'cpu_op'", trace_id);
    int64_t annotations = count(facts, "SELECT count(*) FROM _range WHERE trace_id = ? AND kind <> 'cpu_op'", trace_id);
    int64_t counters = count(facts, "SELECT count(*) FROM _counter WHERE trace_id = ?", trace_id);
    Finding f = make_diagnostic(FindingScope::of_trace(trace_id));
    f.confidence = 1.0;
    std::string held = fmt::format("{} CPU ops, {} other host ranges, {} runtime/driver calls", ops, annotations, s->api_call_count);
    if (counters) held += fmt::format(", {} counter samples", counters);
    f.problem = fmt::format("{} spans {} but records no GPU kernels, memory copies or memsets ({}{}), so GPU "
                            "utilization, Tensor Core use, the GPU time breakdown and every GPU detector could not be "
                            "evaluated; only host-side facts are available.",
                            s->path, format_ns(s->wall_ns), held,
                            s->devices_listed ? fmt::format("; {} device(s) are described", s->devices_listed) : "");
    if (s->api_call_count > 0 && counters > 0) {
      f.recommendation = "Runtime calls and counters are present but no activity records: this looks like a capture in "
                         "CUPTI range-profiler (counter) mode. Capture a regular trace as well (torch.profiler with "
                         "ProfilerActivity.CUDA, or nsys profile --trace=cuda,nvtx).";
    } else if (s->api_call_count > 0) {
      f.recommendation = "CUDA/HIP runtime calls were recorded but no GPU activity: enable device activity tracing "
                         "(torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]), or "
                         "nsys profile --trace=cuda).";
    } else {
      f.recommendation = "If this process should use a GPU, profile with device activities enabled: "
                         "torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) or "
                         "nsys profile --trace=cuda,nvtx; a CPU-only rank (e.g. a gloo rank, a data-loading process) "
                         "has nothing for the GPU detectors to check.";
    }
    f.evidence["cpu_ops"] = ops;
    f.evidence["host_ranges"] = annotations;
    f.evidence["api_calls"] = s->api_call_count;
    f.evidence["counters"] = counters;
    f.evidence["devices_described"] = s->devices_listed;
    sink.report(std::move(f));
  }
};

}  // namespace

DetectorInfo no_gpu_activity_info() {
  return {"no-gpu-activity", {}, [](const OptionValues& o) { return std::make_unique<NoGpuActivity>(o); }};
}

}  // namespace proflint
