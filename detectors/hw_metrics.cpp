// detectors/hw_metrics.cpp — hw-metrics
// What the hardware counters say about busy GPUs (DCGM profiling fields, nsys GPU_METRICS):
// SMs busy but Tensor Cores idle, DRAM bandwidth near its peak (memory-bound kernels), and PCIe or
// NVLink saturated. Averages are over the samples in which the SMs were active.
// Docs: docs/detectors/hw-metrics.md
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/system_view.hpp"
#include "engine/common/format.hpp"

namespace proflint {

namespace {

using Series = std::vector<std::pair<int64_t, double>>;

// Value of `s` at the sample time `t` or the latest before it (within `tolerance`).
std::optional<double> at(const Series& s, int64_t t, int64_t tolerance) {
  auto it = std::upper_bound(s.begin(), s.end(), t, [](int64_t x, const std::pair<int64_t, double>& p) { return x < p.first; });
  if (it == s.begin()) return std::nullopt;
  --it;
  if (t - it->first > tolerance) return std::nullopt;
  return it->second;
}

class HwMetrics final : public Detector {
 public:
  explicit HwMetrics(const OptionValues& o)
      : busy_sm_(o.number("busy_sm_active")),
        min_sm_(o.number("min_sm_active")),
        max_tensor_ratio_(o.number("max_tensor_ratio")),
        dram_near_peak_(o.number("dram_near_peak")),
        link_near_peak_(o.number("link_near_peak")),
        min_share_(o.number("min_share")) {}

  std::string_view id() const override { return "hw-metrics"; }
  std::string_view title() const override { return "Hardware counters show the GPU limited by one unit"; }
  // No need listed: without a sampling log there is nothing to judge, and a "not checked" line on
  // every profile would only be noise (docs/samples.md).
  std::vector<std::string> needs() const override { return {}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* s = facts.summary(trace_id);
    if (!s || s->system_view.gpus.empty()) return;
    auto& db = facts.db();
    const int64_t tolerance = 2'000'000'000;
    for (const auto& g : s->system_view.gpus) {
      Series sm = sample_values(db, trace_id, g.device_id, "sm_active");
      if (sm.empty()) continue;
      Series tensor = sample_values(db, trace_id, g.device_id, "tensor_active");
      Series dram = sample_values(db, trace_id, g.device_id, "dram_active");
      Series dram_r = sample_values(db, trace_id, g.device_id, "dram_read");
      Series dram_w = sample_values(db, trace_id, g.device_id, "dram_write");
      std::vector<std::pair<std::string, Series>> links;
      for (const char* m : {"pcie_rx_util", "pcie_tx_util", "nvlink_rx_util", "nvlink_tx_util"}) {
        Series v = sample_values(db, trace_id, g.device_id, m);
        if (!v.empty()) links.emplace_back(m, std::move(v));
      }
      // Busy samples: SMs active above busy_sm_active.
      std::vector<std::pair<int64_t, double>> busy;
      for (const auto& p : sm)
        if (p.second > busy_sm_) busy.push_back(p);
      if (busy.empty()) continue;
      const double busy_share = static_cast<double>(busy.size()) / static_cast<double>(sm.size());
      double sm_mean = 0, tensor_sum = 0, dram_sum = 0;
      int64_t tensor_n = 0, dram_n = 0, dram_hot = 0;
      for (const auto& [t, v] : busy) {
        sm_mean += v;
        if (auto x = at(tensor, t, tolerance)) {
          tensor_sum += *x;
          ++tensor_n;
        }
        std::optional<double> d = at(dram, t, tolerance);
        if (!d) {
          auto r = at(dram_r, t, tolerance), w = at(dram_w, t, tolerance);
          if (r || w) d = std::max(r.value_or(0), w.value_or(0));
        }
        if (d) {
          dram_sum += *d;
          ++dram_n;
          if (*d >= dram_near_peak_) ++dram_hot;
        }
      }
      sm_mean /= static_cast<double>(busy.size());
      const int64_t wall = std::max<int64_t>(s->steady_wall_ns, 0);
      std::string device = fmt::format("GPU {}{}", g.device_id, g.name.empty() ? "" : " (" + g.name + ")");
      // SMs busy, Tensor Cores idle.
      if (tensor_n > 0) {
        double tensor_mean = tensor_sum / static_cast<double>(tensor_n);
        if (sm_mean >= min_sm_ && tensor_mean < max_tensor_ratio_ * sm_mean) {
          Finding f = make_finding("SMs busy but Tensor Cores idle (hardware counters)",
                                   FindingScope::of_trace(trace_id).on_device(g.device_id).of_rank(s->rank));
          f.problem = fmt::format(
              "{}: in the {} samples with the SMs active (mean SM active {:.1f}%), Tensor Cores were active {:.1f}% of the "
              "time: the math runs on the CUDA cores.",
              device, busy.size(), sm_mean, tensor_mean);
          if (s->tc_eligible_ops > 0)
            f.problem += fmt::format(" The trace has {} Tensor-Core-eligible op(s) ({} of GPU time).", s->tc_eligible_ops,
                                     format_ns(s->tc_eligible_gpu_ns));
          f.recommendation =
              "If the model's work is GEMMs, convolutions or attention, run it in bf16/fp16 "
              "(torch.autocast(\"cuda\", dtype=torch.bfloat16)) or allow TF32 (torch.backends.cuda.matmul.allow_tf32 = True, "
              "torch.backends.cudnn.allow_tf32 = True), and keep GEMM dimensions multiples of 8; amp-not-used names the ops "
              "when a trace of the job is given.";
          // Tensor Cores run eligible math several times faster; how much of the busy time is such math
          // the counters cannot say: a quarter of the busy time is taken as recoverable.
          f.estimated_savings_ns = static_cast<int64_t>(static_cast<double>(wall) * busy_share * 0.25);
          f.savings_method = "a quarter of the time the SMs were busy (the part of it in eligible math is unknown)";
          f.confidence = s->tc_eligible_ops > 0 ? 0.5 : 0.3;
          f.evidence["device_id"] = g.device_id;
          f.evidence["busy_samples"] = static_cast<int64_t>(busy.size());
          f.evidence["sm_active_percent"] = sm_mean;
          f.evidence["tensor_active_percent"] = tensor_mean;
          sink.report(std::move(f));
        } else {
          sink.below_threshold(checked_below(*this, trace_id, g.device_id, "Tensor active / SM active while busy",
                                             sm_mean > 0 ? tensor_mean / sm_mean : 1.0, max_tensor_ratio_, "ratio"));
        }
      }
      // DRAM near peak.
      if (dram_n > 0) {
        double hot_share = static_cast<double>(dram_hot) / static_cast<double>(dram_n);
        if (hot_share >= min_share_) {
          Finding f = make_finding("DRAM bandwidth near its peak: memory-bound kernels (hardware counters)",
                                   FindingScope::of_trace(trace_id).on_device(g.device_id).of_rank(s->rank));
          f.problem = fmt::format("{}: DRAM was at least {:.0f}% busy in {} of the {} busy samples (mean {:.1f}%): the "
                                  "kernels wait on memory bandwidth, not on arithmetic.",
                                  device, dram_near_peak_, dram_hot, dram_n, dram_sum / static_cast<double>(dram_n));
          f.recommendation =
              "Move fewer bytes: fuse elementwise and normalisation kernels (torch.compile), use bf16/fp16 activations, "
              "avoid materialising intermediates (in-place ops, fused optimizers: torch.optim.AdamW(fused=True)), and "
              "prefer fused attention (scaled_dot_product_attention).";
          f.estimated_savings_ns = static_cast<int64_t>(static_cast<double>(wall) * busy_share * hot_share * 0.2);
          f.savings_method = "a fifth of the busy time spent near the DRAM peak (fusion removes part of the traffic)";
          f.confidence = 0.3;
          f.evidence["device_id"] = g.device_id;
          f.evidence["dram_hot_samples"] = dram_hot;
          f.evidence["dram_mean_percent"] = dram_sum / static_cast<double>(dram_n);
          sink.report(std::move(f));
        } else {
          sink.below_threshold(checked_below(*this, trace_id, g.device_id, "share of busy samples with DRAM near peak",
                                             hot_share, min_share_, "share"));
        }
      }
      // PCIe / NVLink saturated (throughput as % of the link's peak).
      for (const auto& [name, v] : links) {
        int64_t hot = 0;
        double peak = 0;
        for (const auto& [t, x] : v) {
          if (x >= link_near_peak_) ++hot;
          peak = std::max(peak, x);
        }
        double hot_share = static_cast<double>(hot) / static_cast<double>(v.size());
        if (hot_share < min_share_) {
          sink.below_threshold(checked_below(*this, trace_id, g.device_id, "share of samples with " + name + " near peak",
                                             hot_share, min_share_, "share"));
          continue;
        }
        bool nvlink = name.rfind("nvlink", 0) == 0;
        Finding f = make_finding(nvlink ? "NVLink saturated (hardware counters)" : "PCIe saturated (hardware counters)",
                                 FindingScope::of_trace(trace_id).on_device(g.device_id).of_rank(s->rank));
        f.problem = fmt::format("{}: {} was at least {:.0f}% of its peak in {} of {} samples ({}; peak {:.0f}%).", device,
                                name, link_near_peak_, hot, v.size(), format_percent(hot_share), peak);
        f.recommendation =
            nvlink ? "Collectives fill NVLink: overlap them with compute (DDP bucket_cap_mb, FSDP prefetching), reduce "
                     "their volume (gradient compression, bf16 gradients: DDP comm hooks), or shard less."
                   : "Host-device copies fill PCIe: keep data resident on the GPU, move fewer bytes (uint8 images, "
                     "decode on GPU), use pinned memory with non_blocking=True so copies overlap compute.";
        f.estimated_savings_ns = static_cast<int64_t>(static_cast<double>(wall) * hot_share * 0.3);
        f.savings_method = "three tenths of the time the link was saturated";
        f.confidence = 0.3;
        f.evidence["device_id"] = g.device_id;
        f.evidence["metric"] = name;
        f.evidence["hot_samples"] = hot;
        sink.report(std::move(f));
      }
    }
  }

 private:
  double busy_sm_, min_sm_, max_tensor_ratio_, dram_near_peak_, link_near_peak_, min_share_;
};

}  // namespace

DetectorInfo hw_metrics_info() {
  return {"hw-metrics",
          {{"busy_sm_active", 5.0, "a sample with SM active (%) above this is a busy sample"},
           {"min_sm_active", 40.0, "Tensor Cores idle: report when the busy samples' mean SM active (%) reaches this"},
           {"max_tensor_ratio", 0.1, "... and Tensor active is below this share of SM active"},
           {"dram_near_peak", 70.0, "DRAM active (% of peak bandwidth) at which a sample counts as near the peak"},
           {"link_near_peak", 80.0, "PCIe/NVLink throughput (% of peak) at which a sample counts as saturated"},
           {"min_share", 0.2, "DRAM / link: report when this share of the samples is near the peak"}},
          [](const OptionValues& o) { return std::make_unique<HwMetrics>(o); }};
}

}  // namespace proflint
