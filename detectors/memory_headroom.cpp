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

class MemoryHeadroom final : public Detector {
 public:
  explicit MemoryHeadroom(const OptionValues& o)
      : max_occupancy_(o.number("max_occupancy")),
        memory_target_(o.number("memory_target")),
        max_factor_(o.integer("max_factor")),
        min_samples_(o.integer("min_samples")) {}

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
      double idle_share = 0;
      if (g.gpu_active) {
        idle_share = std::clamp(1.0 - g.gpu_active->mean / 100.0, 0.0, 1.0);
        f.problem += fmt::format(" Its average activity was {:.1f}%.", g.gpu_active->mean);
      }
      f.recommendation = fmt::format(
          "Increase the batch size about ×{} (DataLoader(batch_size=…), or more requests per batch for inference): "
          "the peak would stay near {} of the device memory. For training, scale the learning rate with the batch "
          "(linear scaling with warm-up) and check convergence; if the batch is fixed by the recipe, use the memory "
          "for a larger model, longer sequences or fewer gradient-accumulation steps instead.",
          k, format_percent(occupancy * static_cast<double>(k)));
      // Per original batch at a doubled batch (the first step of the change, whatever k memory
      // allows: the per-step host time is rarely all of the idle time): GPU work stays, the
      // per-step host time, taken as the sampled idle share, is paid once per two batches.
      f.estimated_savings_ns =
          static_cast<int64_t>(static_cast<double>(std::max<int64_t>(s->steady_wall_ns, 0)) * idle_share * 0.5);
      f.savings_method = g.gpu_active ? "the sampled idle share of the GPU paid once per two batches instead of every batch (the batch doubled)"
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
      sink.report(std::move(f));
    }
  }

 private:
  double max_occupancy_, memory_target_;
  int64_t max_factor_, min_samples_;
};

}  // namespace

DetectorInfo memory_headroom_info() {
  return {"memory-headroom",
          {{"max_occupancy", 0.5, "report when the peak sampled memory use is below this share of the device memory"},
           {"memory_target", 0.85, "share of the device memory the suggested batch may fill at its peak"},
           {"max_factor", int64_t{8}, "largest batch factor suggested"},
           {"min_samples", int64_t{5}, "memory samples a GPU needs to be judged"}},
          [](const OptionValues& o) { return std::make_unique<MemoryHeadroom>(o); }};
}

}  // namespace proflint
