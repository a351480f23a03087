// detectors/memory_headroom.cpp — memory-headroom
// DLProf's batch-size check from sampled memory use: when the GPU memory used over the whole job
// (nvidia-smi memory.used, dcgmi FBUSD, the PyTorch memory timeline) peaks far below the device's
// memory, a larger batch fits; with the GPU often idle, it also amortises the per-step host cost.
// Needs no profile_memory trace. Docs: docs/detectors/memory-headroom.md
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/system_view.hpp"
#include "engine/common/format.hpp"

namespace proflint {

namespace {

// The part of a GPU's sampled time a larger batch can win back: the idle fraction of its working
// samples, summed over the time they stand for. Working samples are those above `idle_below` and
// at least half the median of those (a job at 30% with a display or another process at 6% after
// it ended: only the job's samples count). Samples at or under that are stalls, start-up and the
// tail, judged by gpu-idle-sampled; a larger batch does not shorten them, and leaving them out
// keeps the two findings off the same time.
struct WorkingIdle {
  int64_t working_ns = 0;    // time the working samples stand for
  double mean_active = 0;    // their mean activity, %
  double idle_ns = 0;        // sum of (1 - activity) x time over them
  int64_t samples = 0;
};

WorkingIdle working_idle(const std::vector<std::pair<int64_t, double>>& v, double idle_below) {
  WorkingIdle w;
  if (v.size() < 2) return w;
  const std::vector<int64_t> spans = sample_spans(v);
  std::vector<double> above;
  for (const auto& [t, a] : v)
    if (a > idle_below) above.push_back(a);
  if (above.empty()) return w;
  std::nth_element(above.begin(), above.begin() + static_cast<std::ptrdiff_t>(above.size() / 2), above.end());
  const double floor = std::max(idle_below, above[above.size() / 2] / 2);
  double sum = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const double a = v[i].second;
    if (!(a > idle_below && a >= floor)) continue;
    const int64_t len = spans[i];
    w.working_ns += len;
    w.idle_ns += std::clamp(1.0 - a / 100.0, 0.0, 1.0) * static_cast<double>(len);
    sum += a;
    ++w.samples;
  }
  w.mean_active = w.samples ? sum / static_cast<double>(w.samples) : 0;
  return w;
}

class MemoryHeadroom final : public Detector {
 public:
  explicit MemoryHeadroom(const OptionValues& o)
      : max_occupancy_(o.number("max_occupancy")),
        memory_target_(o.number("memory_target")),
        max_factor_(o.integer("max_factor")),
        min_samples_(o.integer("min_samples")),
        idle_below_(o.number("idle_below")) {}

  std::string_view id() const override { return "memory-headroom"; }
  std::string_view title() const override { return "GPU memory left unused: a larger batch fits"; }
  // No need listed: without a sampling log there is nothing to judge, and a "not checked" line on
  // every profile would only be noise (docs/samples.md).
  std::vector<std::string> needs() const override { return {}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* s = facts.summary(trace_id);
    if (!s || s->system_view.gpus.empty()) return;
    for (const auto& g : s->system_view.gpus) {
      if (!g.memory_used || g.memory_used->samples < min_samples_ || !g.memory_total_bytes || *g.memory_total_bytes <= 0)
        continue;
      const double total = *g.memory_total_bytes;
      const double peak = g.memory_used->max;
      const double occupancy = peak / total;
      if (occupancy >= max_occupancy_ || peak <= 0) {
        sink.below_threshold(checked_below(*this, trace_id, g.device_id, "peak sampled memory use of the device memory",
                                           occupancy, max_occupancy_, "share"));
        continue;
      }
      // The largest power of two that keeps the peak under memory_target (as if all memory grew
      // with the batch; weights and the CUDA context do not, so the real headroom is larger).
      int64_t k = 1;
      while (k * 2 <= max_factor_ && static_cast<double>(k * 2) * occupancy <= memory_target_) k *= 2;
      if (k < 2) {
        sink.below_threshold(checked_below(*this, trace_id, g.device_id, "batch factor the memory allows",
                                           memory_target_ / occupancy, 2, "factor"));
        continue;
      }
      Finding f = make_finding(FindingScope::of_trace(trace_id).on_device(g.device_id).of_rank(s->rank));
      std::string device = fmt::format("GPU {}{}", g.device_id, g.name.empty() ? "" : " (" + g.name + ")");
      f.problem = fmt::format("{} used at most {} of its {} ({}) over {} samples (average {}).", device,
                              format_bytes_of(peak), format_bytes_of(total),
                              format_percent(occupancy), g.memory_used->samples,
                              format_bytes_of(g.memory_used->mean));
      WorkingIdle work;
      if (g.gpu_active) {
        auto v = sample_values(facts.db(), trace_id, g.device_id, "gpu_active");
        if (v.size() < 2) v = sample_values(facts.db(), trace_id, g.device_id, "graphics_active");
        work = working_idle(v, idle_below_);
        f.problem += fmt::format(" Its average activity was {:.1f}%", g.gpu_active->mean);
        f.problem += work.samples > 0 ? fmt::format(", {:.1f}% over the {} it was working.", work.mean_active,
                                                    format_ns(work.working_ns))
                                      : ".";
      }
      f.recommendation = fmt::format(
          "Increase the batch size about ×{} (DataLoader(batch_size=…), or more requests per batch for inference): "
          "the peak would stay near {} of the device memory. For training, scale the learning rate with the batch "
          "(linear scaling with warm-up) and check convergence; if the batch is fixed by the recipe, use the memory "
          "for a larger model, longer sequences or fewer gradient-accumulation steps instead.",
          k, format_percent(occupancy * static_cast<double>(k)));
      // Per original batch at a doubled batch (the first step of the change, whatever k memory
      // allows: the per-step host time is rarely all of the idle time): GPU work stays, the
      // per-step host time, taken as the idle part of the working samples, is paid once per two
      // batches. Never more than half the trace's steady wall time.
      const double cap = static_cast<double>(std::max<int64_t>(s->steady_wall_ns, 0)) * 0.5;
      f.estimated_savings_ns = static_cast<int64_t>(std::min(work.idle_ns * 0.5, cap));
      f.savings_method =
          work.samples > 0
              ? "half the idle part of the GPU's working samples (activity above idle_below and at least half their "
                "median): the per-step host time paid once per two batches instead of every batch (the batch "
                "doubled); stalls and start-up are not counted"
              : "none: no sampled GPU activity to estimate the per-step host time from";
      f.confidence = 0.4;
      f.evidence["device_id"] = g.device_id;
      f.evidence["memory_peak_bytes"] = peak;
      f.evidence["memory_mean_bytes"] = g.memory_used->mean;
      f.evidence["memory_total_bytes"] = total;
      f.evidence["peak_occupancy"] = occupancy;
      f.evidence["batch_factor"] = k;
      f.evidence["samples"] = g.memory_used->samples;
      if (g.gpu_active) f.evidence["mean_gpu_active_percent"] = g.gpu_active->mean;
      if (work.samples > 0) {
        f.evidence["working_ns"] = work.working_ns;
        f.evidence["working_mean_active_percent"] = work.mean_active;
        f.evidence["working_samples"] = work.samples;
      }
      sink.report(std::move(f));
    }
  }

 private:
  double max_occupancy_, memory_target_;
  int64_t max_factor_, min_samples_;
  double idle_below_;
};

}  // namespace

DetectorInfo memory_headroom_info() {
  return {"memory-headroom",
          {{"max_occupancy", 0.5, "report when the peak sampled memory use is below this share of the device memory"},
           {"memory_target", 0.85, "share of the device memory the suggested batch may fill at its peak"},
           {"max_factor", int64_t{8}, "largest batch factor suggested"},
           {"min_samples", int64_t{5}, "memory samples a GPU needs to be judged"},
           {"idle_below", 5.0,
            "samples at or under this GPU activity (%) are stalls, start-up or the tail, not counted in the estimate"}},
          [](const OptionValues& o) { return std::make_unique<MemoryHeadroom>(o); }};
}

}  // namespace proflint
