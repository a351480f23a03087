// detectors/small_capture.cpp — small-capture
// A diagnostic for captures too small to judge the job: a handful of kernels or events (a
// hand-trimmed excerpt, one step of a toy model, one kernel in a long step). Without it such a
// capture gets no finding at all and reads as "nothing wrong"; this says what it can and cannot show.
// Docs: docs/detectors/small-capture.md
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "engine/analysis/detector.hpp"
#include "engine/common/format.hpp"

namespace proflint {

namespace {

class SmallCapture final : public Detector {
 public:
  explicit SmallCapture(const OptionValues& o)
      : min_kernels_(o.integer("min_kernels")),
        min_events_(o.integer("min_events")),
        min_kernel_busy_ns_(o.integer("min_kernel_busy_ns")) {}

  std::string_view id() const override { return "small-capture"; }
  std::string_view title() const override { return "Capture too small to judge the job"; }
  std::vector<std::string> needs() const override { return {"gpu_activity"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* s = facts.summary(trace_id);
    if (!s) return;
    int64_t kernel_time = 0, busy = 0;
    for (const auto& d : s->devices) {
      kernel_time += d.kernel_time_ns;
      busy = std::max(busy, d.kernel_busy_ns);
    }
    // Nothing to record as "checked, below threshold" otherwise: this diagnostic fires under its
    // thresholds, and a capture above them is simply large enough.
    if (s->kernel_count >= min_kernels_ && s->event_count >= min_events_ && busy >= min_kernel_busy_ns_) return;
    // The longest API call, when it alone is a large part of so small a window (a first launch
    // that loads the module, a first allocation).
    std::string longest;
    int64_t longest_ns = 0;
    {
      SQLite::Statement q(facts.db(),
                          "SELECT name, dur_ns FROM api_call WHERE trace_id = ? ORDER BY dur_ns DESC, id LIMIT 1");
      q.bind(1, trace_id);
      if (q.executeStep()) {
        longest = q.getColumn(0).getString();
        longest_ns = q.getColumn(1).getInt64();
      }
    }
    Finding f = make_diagnostic(FindingScope::of_trace(trace_id).of_rank(s->rank));
    f.problem = fmt::format(
        "The capture holds {} kernel{}, {} cop{}/memset{} and {} events in all, {} of kernel time in a {} window "
        "(kernels busy {} of it).",
        s->kernel_count, s->kernel_count == 1 ? "" : "s", s->memcpy_count, s->memcpy_count == 1 ? "y" : "ies",
        s->memset_count == 1 ? "" : "s", s->event_count, format_ns(kernel_time), format_ns(s->wall_ns),
        format_percent(s->wall_ns > 0 ? static_cast<double>(busy) / static_cast<double>(s->wall_ns) : 0.0));
    if (s->wall_ns > 0 && 4 * longest_ns >= s->wall_ns)
      f.problem += fmt::format(" One {} call alone takes {} ({} of the window): in so short a capture one-time costs "
                               "(a first launch loading its module, a first allocation) dominate.",
                               longest, format_ns(longest_ns),
                               format_percent(static_cast<double>(longest_ns) / static_cast<double>(s->wall_ns)));
    f.problem +=
        " It can show which kernels, copies and ops ran, how long each took, their Tensor Core use and how the "
        "file was read. It cannot show how the job behaves: utilization, idle gaps, launch overhead, data loading "
        "and the ranking of problems need several repetitions of the steady state, so detectors that judge them "
        "stay silent here.";
    const std::string workload = s->workload.value_or("");
    if (workload == "non_framework")
      f.recommendation =
          "Capture a longer steady-state stretch: several iterations of the main loop after initialisation, e.g. "
          "`nsys profile --capture-range=cudaProfilerApi` with cudaProfilerStart()/cudaProfilerStop() around them, "
          "or `--delay`/`--duration`; then analyze that capture.";
    else
      f.recommendation =
          "Capture several steady-state iterations after warm-up: `torch.profiler.profile(schedule="
          "torch.profiler.schedule(wait=1, warmup=1, active=5), ...)` with `prof.step()` every iteration (or `nsys "
          "profile --capture-range=cudaProfilerApi` around them), keep the whole trace rather than an excerpt, and "
          "analyze that capture.";
    f.confidence = 1.0;
    f.evidence["kernels"] = s->kernel_count;
    f.evidence["events"] = s->event_count;
    f.evidence["kernel_time_ns"] = kernel_time;
    f.evidence["wall_ns"] = s->wall_ns;
    if (!longest.empty()) {
      f.evidence["longest_api"] = longest;
      f.evidence["longest_api_ns"] = longest_ns;
    }
    sink.report(std::move(f));
  }

 private:
  int64_t min_kernels_;
  int64_t min_events_;
  int64_t min_kernel_busy_ns_;
};

}  // namespace

DetectorInfo small_capture_info() {
  return {"small-capture",
          {{"min_kernels", 20, "say so when the capture has fewer kernels than this (gpu-underutilized's min_kernels)"},
           {"min_events", 50, "or fewer events than this in all"},
          {"min_kernel_busy_ns", 100000,
           "or when no GPU's kernels are busy this long in all (gpu-underutilized's min_kernel_busy_ns)"}},
          [](const OptionValues& o) { return std::make_unique<SmallCapture>(o); }};
}

}  // namespace proflint
