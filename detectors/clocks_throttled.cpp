// detectors/clocks_throttled.cpp — clocks-throttled
// GPUs that ran their work below full clocks: from sampled throttle reasons (nvidia-smi
// clocks_throttle_reasons / clocks_event_reasons), SM clocks against their maximum, power draw
// against the power limit, and dmon's power/thermal violation counters, over the samples in which
// the GPU was busy. Docs: docs/detectors/clocks-throttled.md
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/system_view.hpp"
#include "engine/common/format.hpp"

namespace proflint {

namespace {

// NVML clocks event reasons (nvidia-smi -q -d PERFORMANCE): bit -> kind.
struct Reason {
  uint64_t bit;
  const char* name;
  const char* kind;  // power | thermal | settings
};
constexpr Reason kReasons[] = {
    {0x2, "applications clocks setting", "settings"}, {0x4, "software power cap", "power"},
    {0x8, "hardware slowdown", "thermal"},            {0x20, "software thermal slowdown", "thermal"},
    {0x40, "hardware thermal slowdown", "thermal"},   {0x80, "hardware power brake", "power"},
};

// Value of `series` at or just before `t` (samples in time order), nullopt when none within `tolerance`.
std::optional<double> at(const std::vector<std::pair<int64_t, double>>& series, int64_t t, int64_t tolerance) {
  auto it = std::upper_bound(series.begin(), series.end(), t,
                             [](int64_t x, const std::pair<int64_t, double>& p) { return x < p.first; });
  if (it == series.begin()) return std::nullopt;
  --it;
  if (t - it->first > tolerance) return std::nullopt;
  return it->second;
}

class ClocksThrottled final : public Detector {
 public:
  explicit ClocksThrottled(const OptionValues& o)
      : min_share_(o.number("min_share")),
        idle_below_(o.number("idle_below")),
        clock_ratio_(o.number("clock_ratio")),
        power_ratio_(o.number("power_ratio")) {}

  std::string_view id() const override { return "clocks-throttled"; }
  std::string_view title() const override { return "GPU clocks throttled while busy"; }
  // No need listed: without a sampling log there is nothing to judge, and a "not checked" line on
  // every profile would only be noise (docs/samples.md).
  std::vector<std::string> needs() const override { return {}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* s = facts.summary(trace_id);
    if (!s || s->system_view.gpus.empty()) return;
    auto& db = facts.db();
    for (const auto& g : s->system_view.gpus) {
      auto active = sample_values(db, trace_id, g.device_id, "gpu_active");
      auto reasons = sample_values(db, trace_id, g.device_id, "throttle_reasons");
      auto clock = sample_values(db, trace_id, g.device_id, "clock_sm");
      if (clock.empty()) clock = sample_values(db, trace_id, g.device_id, "clock_graphics");
      auto power = sample_values(db, trace_id, g.device_id, "power_draw");
      auto pviol = sample_values(db, trace_id, g.device_id, "power_violation");
      auto tviol = sample_values(db, trace_id, g.device_id, "thermal_violation");
      const std::optional<double> clock_max = g.clock_sm_max_mhz;
      const std::optional<double> power_limit = g.power_limit_w;
      // The moments judged: busy samples when activity is sampled, else every sample of a signal.
      std::vector<int64_t> moments;
      if (!active.empty()) {
        for (const auto& [t, v] : active)
          if (v > idle_below_) moments.push_back(t);
      } else {
        for (const auto* v : {&reasons, &clock, &pviol})
          if (!v->empty()) {
            for (const auto& [t, x] : *v) moments.push_back(t);
            break;
          }
      }
      if (moments.empty()) continue;
      const bool has_signal = !reasons.empty() || (!clock.empty() && clock_max) || (!power.empty() && power_limit) ||
                              !pviol.empty() || !tviol.empty();
      if (!has_signal) continue;
      const int64_t tolerance = 2'000'000'000;  // a signal sampled in another row of the same burst
      std::map<std::string, int64_t> by_cause;
      int64_t throttled = 0;
      double clock_sum = 0;
      int64_t clock_n = 0;
      for (int64_t t : moments) {
        std::vector<std::string> causes;
        // A bit mask is 0 .. 2^64 - 1; anything else in the cell is not one (and would not convert).
        if (auto r = at(reasons, t, tolerance); r && *r >= 0 && *r < 18446744073709551616.0) {
          auto bits = static_cast<uint64_t>(*r);
          for (const auto& reason : kReasons)
            if (bits & reason.bit) causes.push_back(reason.kind);
        }
        if (auto p = at(pviol, t, tolerance); p && *p > 0) causes.push_back("power");
        if (auto p = at(tviol, t, tolerance); p && *p > 0) causes.push_back("thermal");
        if (power_limit)
          if (auto p = at(power, t, tolerance); p && *p >= power_ratio_ * *power_limit) causes.push_back("power");
        std::optional<double> c = clock_max ? at(clock, t, tolerance) : std::nullopt;
        if (c && !(*c > 0)) c.reset();  // no clock reading: a busy GPU's clock is positive
        if (c && *c < clock_ratio_ * *clock_max && causes.empty()) causes.push_back("clocks below maximum");
        if (causes.empty()) continue;
        ++throttled;
        std::sort(causes.begin(), causes.end());
        causes.erase(std::unique(causes.begin(), causes.end()), causes.end());
        for (const auto& cause : causes) ++by_cause[cause];
        if (c && *clock_max > 0) {
          clock_sum += std::min(*c / *clock_max, 1.0);  // above its maximum (a bad log): not slower than it
          ++clock_n;
        }
      }
      const double share = static_cast<double>(throttled) / static_cast<double>(moments.size());
      if (share < min_share_) {
        sink.below_threshold(checked_below(*this, trace_id, g.device_id, "share of busy samples with throttled clocks",
                                           share, min_share_, "share"));
        continue;
      }
      std::string causes;
      for (const auto& [cause, n] : by_cause)
        causes += fmt::format("{}{} in {} samples", causes.empty() ? "" : ", ", cause, n);
      Finding f = make_finding(FindingScope::of_trace(trace_id).on_device(g.device_id).of_rank(s->rank));
      f.problem = fmt::format("GPU {}{} ran throttled in {} of {} busy samples ({}): {}.", g.device_id,
                              g.name.empty() ? "" : " (" + g.name + ")", throttled, moments.size(), format_percent(share),
                              causes);
      double mean_ratio = clock_n ? clock_sum / static_cast<double>(clock_n) : 1.0;
      if (clock_n)
        f.problem += fmt::format(" SM clock then averaged {} of its {:.0f} MHz maximum.", format_percent(mean_ratio), *clock_max);
      if (g.temperature) f.problem += fmt::format(" Peak temperature {:.0f} C.", g.temperature->max);
      if (g.power_draw && power_limit)
        f.problem += fmt::format(" Peak power {:.0f} W of a {:.0f} W limit.", g.power_draw->max, *power_limit);
      const bool power_capped = by_cause.contains("power"), thermal = by_cause.contains("thermal");
      f.recommendation =
          thermal ? "Check cooling: airflow, fan curves, inlet temperature and a clean heat sink (nvidia-smi -q -d "
                    "TEMPERATURE,PERFORMANCE shows the slowdown thresholds); a thermally throttled GPU also slows every "
                    "rank that waits for it."
          : power_capped ? "The GPU reaches its power limit: check `nvidia-smi -q -d POWER` (a limit set below the default with "
                    "nvidia-smi -pl?), and that power capping is intended; lower precision (bf16) does the same work with "
                    "less energy."
                  : "Clocks stay below their maximum while busy: check application clocks (nvidia-smi -q -d CLOCK; reset "
                    "with nvidia-smi -rac) and locked clocks (nvidia-smi -rgc).";
      // The busy time lost to lower clocks: throttled share x (1 - clock ratio), when clocks are known.
      f.estimated_savings_ns = static_cast<int64_t>(static_cast<double>(std::max<int64_t>(s->steady_wall_ns, 0)) *
                                                    share * std::max(0.0, 1.0 - mean_ratio));
      f.savings_method = clock_n ? "throttled share of the busy samples x the SM clock lost in them, over the trace's window"
                                 : "none: the log has no SM clock to measure the slowdown";
      f.confidence = 0.5;
      f.evidence["device_id"] = g.device_id;
      f.evidence["busy_samples"] = static_cast<int64_t>(moments.size());
      f.evidence["throttled_samples"] = throttled;
      nlohmann::ordered_json c = nlohmann::ordered_json::object();
      for (const auto& [cause, n] : by_cause) c[cause] = n;
      f.evidence["causes"] = c;
      if (clock_n) f.evidence["mean_clock_ratio"] = mean_ratio;
      sink.report(std::move(f));
    }
  }

 private:
  double min_share_, idle_below_, clock_ratio_, power_ratio_;
};

}  // namespace

DetectorInfo clocks_throttled_info() {
  return {"clocks-throttled",
          {{"min_share", 0.1, "report when this share of the busy samples is throttled"},
           {"idle_below", 5.0, "a sample whose GPU activity (%) is at most this is idle, not judged"},
           {"clock_ratio", 0.9, "an SM clock below this share of its maximum counts as throttled"},
           {"power_ratio", 0.97, "a power draw at this share of the power limit counts as power-capped"}},
          [](const OptionValues& o) { return std::make_unique<ClocksThrottled>(o); }};
}

}  // namespace proflint
