// detectors/launch_bound.cpp — launch-bound
// Flags a GPU that starves on kernel launches: short kernels, each launched only after the previous
// work finished, so the GPU idles between them while the host runs framework code and launch calls.
// Docs: docs/detectors/launch-bound.md
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/idle_claims.hpp"
#include "engine/analysis/source_sites.hpp"
#include "engine/common/format.hpp"

namespace proflint {

namespace {

class LaunchBound final : public Detector {
 public:
  explicit LaunchBound(const OptionValues& o)
      : runtime_cutoff_ns_(o.integer("runtime_cutoff_ns")),
        max_gap_ns_(o.integer("max_gap_ns")),
        min_kernels_(o.integer("min_kernels")),
        min_short_share_(o.number("min_short_share")),
        min_idle_share_(o.number("min_idle_share")),
        max_queue_depth_(o.number("max_queue_depth")),
        recoverable_(std::clamp(o.number("recoverable_fraction"), 0.0, 1.0)) {}

  std::string_view id() const override { return "launch-bound"; }
  std::string_view title() const override { return "GPU starves on kernel launches"; }
  std::vector<std::string> needs() const override { return {"kernels", "api_calls"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* summary = facts.summary(trace_id);
    if (!summary || summary->wall_ns <= 0) return;
    auto& db = facts.db();
    for (const DeviceSummary& dev : summary->devices) {
      if (dev.kernel_count < min_kernels_ || dev.window_ns <= 0) continue;
      // All GPU work of the device in start order, with the start and duration of its launching call.
      struct Work {
        int64_t id, start, end, api_start, api_dur, iteration, op;
        bool kernel, replayed;
      };
      std::vector<Work> work;
      // One query per table, sorted here: SQLite sorting the UNION ALL of all three took most of the time.
      // Kernels a CUDA graph replays (graph_kernel) keep the GPU busy but are no launches of their
      // own: the graph launch issues them all at once, which is the cure, not the problem.
      for (const char* table : {"_kernel", "_memcpy", "_memset"}) {
        bool kernel = std::string_view(table) == "_kernel";
        SQLite::Statement q(db, fmt::format("SELECT w.id, w.start_ns, w.dur_ns, a.start_ns, a.dur_ns, w.iteration, w.op_id, {} "
                                            "FROM {} w LEFT JOIN _api_call a ON a.id = w.api_call_id {}"
                                            "WHERE w.trace_id = ?1 AND w.device_id IS ?2",
                                            kernel ? "g.kernel_id IS NOT NULL" : "0", table,
                                            kernel ? "LEFT JOIN graph_kernel g ON g.kernel_id = w.id " : ""));
        q.bind(1, trace_id);
        q.bind(2, dev.device_id);
        while (q.executeStep()) {
          int64_t start = q.getColumn(1).getInt64();
          work.push_back({q.getColumn(0).getInt64(), start, start + q.getColumn(2).getInt64(),
                          q.getColumn(3).isNull() ? -1 : q.getColumn(3).getInt64(),
                          q.getColumn(4).isNull() ? -1 : q.getColumn(4).getInt64(),
                          q.getColumn(5).isNull() ? -1 : q.getColumn(5).getInt64(),
                          q.getColumn(6).isNull() ? -1 : q.getColumn(6).getInt64(), kernel, q.getColumn(7).getInt64() != 0});
        }
      }
      // ORDER BY start_ns, is_kernel, id: copies and memsets before kernels starting at the same
      // time. (Among copies and memsets the order does not matter: they only move prev_end and the
      // sorted launch/end lists.)
      std::sort(work.begin(), work.end(), [](const Work& a, const Work& b) {
        if (a.start != b.start) return a.start < b.start;
        if (a.kernel != b.kernel) return !a.kernel;
        return a.id < b.id;
      });

      int64_t launched = 0, short_kernels = 0, late_gaps = 0, late_idle_ns = 0, first_iter = -1, last_iter = -1,
              example = -1, example_gap = 0;
      int64_t prev_end = -1;
      std::vector<int64_t> launch_starts, ends;
      std::vector<Interval> late_pieces;  // the late-launch gaps, for the claims
      std::vector<std::pair<int64_t, int64_t>> late_kernels;  // kernel id, the gap before it
      std::map<int64_t, std::pair<int64_t, int64_t>> late_idle_by_op;  // op of the kernel after a late gap -> idle ns, gaps
      int64_t replayed = 0;
      for (const auto& w : work) {
        if (w.replayed) {
          ++replayed;
          prev_end = std::max(prev_end, w.end);
          continue;
        }
        if (w.api_start >= 0) {
          launch_starts.push_back(w.api_start);
          ends.push_back(w.end);
        }
        if (w.kernel && w.api_start >= 0) {
          ++launched;
          // HTA's "short GPU kernel": the launch call is cheap (<= runtime cutoff) yet the kernel is shorter still.
          if (w.api_dur <= runtime_cutoff_ns_ && w.end - w.start < w.api_dur) ++short_kernels;
          // The GPU had run dry before the host even started to launch this kernel: the idle gap is
          // host/launch overhead. Long gaps are stalls of another kind (input, sync, sleep) and are left out.
          int64_t gap = prev_end >= 0 ? w.start - prev_end : 0;
          if (prev_end >= 0 && gap > 0 && w.api_start >= prev_end && gap <= max_gap_ns_) {
            ++late_gaps;
            late_idle_ns += gap;
            late_pieces.push_back({prev_end, w.start});
            late_kernels.emplace_back(w.id, gap);
            if (w.op >= 0) {
              late_idle_by_op[w.op].first += gap;
              ++late_idle_by_op[w.op].second;
            }
            if (gap > example_gap) {
              example_gap = gap;
              example = w.id;
            }
            if (w.iteration >= 0) {
              first_iter = first_iter < 0 ? w.iteration : std::min(first_iter, w.iteration);
              last_iter = std::max(last_iter, w.iteration);
            }
          }
        }
        prev_end = std::max(prev_end, w.end);
      }
      if (launched < min_kernels_) {
        // Say why a GPU busy with graph replays was not judged: its kernels were no launches.
        if (replayed > 0)
          sink.below_threshold(checked_below(*this, trace_id, dev.device_id,
                                             "kernels launched one by one (kernels replayed by CUDA graphs not counted)",
                                             static_cast<double>(launched), static_cast<double>(min_kernels_), "kernels"));
        continue;
      }
      double short_share = static_cast<double>(short_kernels) / static_cast<double>(launched);
      // Judged on the steady state: start-up inside the capture only dilutes the share.
      const int64_t window_ns = dev.startup_ns > 0 ? dev.steady_window_ns : dev.window_ns;
      double idle_share = static_cast<double>(late_idle_ns) / static_cast<double>(std::max<int64_t>(1, window_ns));
      if (short_share < min_short_share_) {
        sink.below_threshold(checked_below(*this, trace_id, dev.device_id, "share of launches that are short kernels",
                                           short_share, min_short_share_, "share"));
        continue;
      }
      if (idle_share < min_idle_share_) {
        sink.below_threshold(checked_below(*this, trace_id, dev.device_id,
                                           "GPU-idle time waiting for late launches", idle_share, min_idle_share_,
                                           "share of the GPU's steady-state window"));
        continue;
      }

      // Queue depth seen by each launch: work launched before it and not finished yet (HTA's queue length).
      std::sort(launch_starts.begin(), launch_starts.end());
      std::sort(ends.begin(), ends.end());
      std::vector<int64_t> depth;
      depth.reserve(launch_starts.size());
      for (int64_t t : launch_starts) {
        auto launched_before = std::lower_bound(launch_starts.begin(), launch_starts.end(), t) - launch_starts.begin();
        auto finished = std::upper_bound(ends.begin(), ends.end(), t) - ends.begin();
        depth.push_back(std::max<int64_t>(0, launched_before - finished));
      }
      std::sort(depth.begin(), depth.end());
      double median_depth = depth.empty() ? 0.0 : static_cast<double>(depth[depth.size() / 2]);
      if (median_depth > max_queue_depth_) continue;

      const bool steady = dev.startup_ns > 0;
      const auto& breakdown = steady ? dev.steady_breakdown_ns : dev.breakdown_ns;
      int64_t runtime_ns = 0;
      if (auto it = breakdown.find("runtime"); it != breakdown.end()) runtime_ns = it->second;
      int64_t gpu_idle = dev.startup_ns > 0 ? std::max<int64_t>(0, dev.steady_window_ns - dev.steady_gpu_busy_ns)
                                            : std::max<int64_t>(0, dev.window_ns - dev.gpu_busy_ns);
      auto savings = static_cast<int64_t>(recoverable_ * static_cast<double>(std::min(late_idle_ns, gpu_idle)));

      const GraphCandidate region = graph_candidate(db, trace_id, late_idle_by_op);

      Finding f = make_finding(
          FindingScope::of_trace(trace_id).on_device(dev.device_id).over_iterations_seen(first_iter, last_iter));
      f.problem = fmt::format(
          "GPU {} is busy only {} of the time: {} of its {} kernels ({}) are shorter than their own launch call "
          "(launch "
          "<= {}), the median launch finds {} operation(s) queued, and {} idle gaps totalling {} ({} of {}) "
          "open "
          "because the host had not yet issued the next launch when the previous work finished. The host spends {} in "
          "CUDA runtime calls while the GPU is idle{}.",
          dev.device_id, format_percent(steady ? dev.steady_gpu_utilization : dev.gpu_utilization), short_kernels,
          launched, format_percent(short_share), format_ns(runtime_cutoff_ns_), static_cast<int64_t>(median_depth),
          late_gaps, format_ns(late_idle_ns), format_percent(idle_share), steady ? "the steady state" : "wall time",
          format_ns(runtime_ns),
          steady ? fmt::format(" (steady state after {} of start-up: {})", format_ns(dev.startup_ns),
                               dev.startup_evidence)
                 : std::string());
      if (region.idle_ns > 0)
        f.problem += fmt::format(
            " {} of the launch-gap idle time ({} in {} gap(s)) falls in eagerly launched `{}`: the region to capture in a "
            "CUDA graph first.",
            format_percent(static_cast<double>(region.idle_ns) / static_cast<double>(std::max<int64_t>(1, late_idle_ns))),
            format_ns(region.idle_ns), region.gaps, region.name);
      if (replayed > 0)
        f.problem += fmt::format(" {} kernel(s) replayed by CUDA graphs on this GPU are not counted as launches.", replayed);
      if (summary->workload.value_or("") == "non_framework")
        // No framework op in the trace: CUDA code, so CUDA advice (PyTorch calls would not apply).
        f.recommendation =
            "Remove per-kernel launch overhead: capture the repeated kernel sequence once in a CUDA graph "
            "(cudaStreamBeginCapture/cudaStreamEndCapture, cudaGraphInstantiate, then cudaGraphLaunch per iteration; "
            "hipGraph* on ROCm), give each launch more work (merge small kernels, process more elements per launch, "
            "batch independent problems into one launch), and keep the host from waiting between launches (no "
            "synchronization in the loop).";
      else
        f.recommendation =
            "Remove per-kernel launch overhead: capture the steady-state step in a CUDA graph, e.g. "
            "`torch.compile(model, mode=\"reduce-overhead\")`, or `torch.cuda.make_graphed_callables(...)` / "
            "`torch.cuda.CUDAGraph` "
            "with `torch.cuda.graph(g):` for static shapes (for vLLM-style inference, keep CUDA graphs enabled: no "
            "`enforce_eager`); "
            "give each launch more work with a larger batch or by batching requests; and fuse small ops "
            "(`torch.compile(model)`, "
            "fused optimizers with `fused=True`). TensorFlow: `@tf.function(jit_compile=True)`. CUDA: "
            "cudaGraphInstantiate/"
            "cudaGraphLaunch over the repeated kernel sequence.";
      f.estimated_savings_ns = savings;
      // The late-launch gaps, claimed gap by gap (engine/analysis/idle_claims.hpp).
      add_idle_claims(f.claims, IdleGapKeys(facts, trace_id, dev.device_id).idle_by_gap(late_pieces), savings);
      f.savings_method = fmt::format(
          "GPU idle time in gaps (each <= {}) that opened because the next launch had not started yet, x {:.2f} "
          "(recoverable_fraction, the share a CUDA graph replay removes)",
          format_ns(max_gap_ns_), recoverable_);
      f.confidence = 0.7;
      f.evidence["kernels_launched"] = launched;
      f.evidence["short_kernels"] = short_kernels;
      f.evidence["short_kernel_share"] = short_share;
      f.evidence["launch_gaps"] = late_gaps;
      f.evidence["launch_gap_idle_ns"] = late_idle_ns;
      f.evidence["gpu_idle_ns"] = gpu_idle;
      f.evidence["runtime_breakdown_ns"] = runtime_ns;
      f.evidence["median_queue_depth"] = median_depth;
      f.evidence["gpu_utilization"] = dev.gpu_utilization;
      f.evidence["example_kernel_id"] = example;
      {
        // The code whose launches came late, when the profile records Python frames.
        SourceSites sites(facts, trace_id, "GPU idle before its launches");
        for (const auto& [id, gap] : late_kernels) sites.add_kernel(id, gap);
        attach_locations(f, sites.top(5));
      }
      if (replayed > 0) f.evidence["graph_replayed_kernels"] = replayed;
      if (region.idle_ns > 0) {
        f.evidence["graph_candidate_region"] = region.name;
        f.evidence["graph_candidate_region_gap_idle_ns"] = region.idle_ns;
        f.evidence["graph_candidate_region_gaps"] = region.gaps;
      }
      sink.report(std::move(f));
    }
  }

 private:
  struct GraphCandidate {
    std::string name;
    int64_t idle_ns = 0, gaps = 0;
  };

  // The eager region whose launches left the GPU idle longest: for each op that launched a kernel
  // after a late gap, its outermost enclosing user annotation (record_function / NVTX range; the
  // iteration markers themselves aside), else its top-level op; gaps added up per region name, the
  // largest wins (ties by name). Work launched outside every op (unassociated:...) names no region.
  static GraphCandidate graph_candidate(SQLite::Database& db, int64_t trace_id,
                                        const std::map<int64_t, std::pair<int64_t, int64_t>>& idle_by_op) {
    GraphCandidate best;
    if (idle_by_op.empty()) return best;
    std::set<std::pair<std::string, int64_t>> markers;  // iteration markers: (name, start)
    {
      SQLite::Statement q(db, "SELECT name, start_ns FROM iteration WHERE trace_id = ?1 AND name IS NOT NULL");
      q.bind(1, trace_id);
      while (q.executeStep()) markers.emplace(q.getColumn(0).getString(), q.getColumn(1).getInt64());
    }
    SQLite::Statement op_up(db, "SELECT o.parent_id, s.value, o.range_id FROM _op o JOIN string s ON s.id = o.name_id WHERE o.id = ?1");
    SQLite::Statement range_up(db, "SELECT r.parent_id, s.value, r.kind, r.start_ns FROM _range r JOIN string s ON s.id = r.name_id "
                                   "WHERE r.id = ?1");
    std::map<std::string, std::pair<int64_t, int64_t>> by_region;  // name -> idle ns, gaps
    std::map<int64_t, std::string> region_of;                       // op -> region name ('' none)
    for (const auto& [op, idle] : idle_by_op) {
      auto known = region_of.find(op);
      if (known == region_of.end()) {
        std::string root, annotation;
        int64_t range = -1;
        for (int64_t at = op, hops = 0; at >= 0 && hops < 256; ++hops) {
          op_up.bind(1, at);
          if (!op_up.executeStep()) break;
          at = op_up.getColumn(0).isNull() ? -1 : op_up.getColumn(0).getInt64();
          root = op_up.getColumn(1).getString();
          if (range < 0 && !op_up.getColumn(2).isNull()) range = op_up.getColumn(2).getInt64();
          op_up.reset();
        }
        op_up.reset();
        for (int64_t at = range, hops = 0; at >= 0 && hops < 256; ++hops) {
          range_up.bind(1, at);
          if (!range_up.executeStep()) break;
          at = range_up.getColumn(0).isNull() ? -1 : range_up.getColumn(0).getInt64();
          std::string name = range_up.getColumn(1).getString(), kind = range_up.getColumn(2).getString();
          if ((kind == "user_annotation" || kind == "nvtx") && !markers.contains({name, range_up.getColumn(3).getInt64()}))
            annotation = name;
          range_up.reset();
        }
        range_up.reset();
        std::string name = annotation.empty() ? root : annotation;
        if (name.starts_with("unassociated:")) name.clear();
        known = region_of.emplace(op, name).first;
      }
      if (known->second.empty()) continue;
      auto& slot = by_region[known->second];
      slot.first += idle.first;
      slot.second += idle.second;
    }
    for (const auto& [name, v] : by_region)
      if (v.first > best.idle_ns) best = {name, v.first, v.second};
    return best;
  }

  int64_t runtime_cutoff_ns_, max_gap_ns_, min_kernels_;
  double min_short_share_, min_idle_share_, max_queue_depth_, recoverable_;
};

}  // namespace

DetectorInfo launch_bound_info() {
  return {"launch-bound",
          {{"runtime_cutoff_ns", 50000,
            "a kernel is short when its launch call takes at most this long and the kernel less (HTA runtime_cutoff)"},
           {"max_gap_ns", 1000000, "idle gaps longer than this are other stalls (input, sync), not launch overhead"},
           {"min_kernels", 50, "devices with fewer launched kernels are not judged"},
           {"min_short_share", 0.5, "report when at least this share of launched kernels is short"},
           {"min_idle_share", 0.2, "and when the launch gaps add up to at least this share of wall time"},
           {"max_queue_depth", 2.0, "and when the median launch finds at most this many operations queued"},
           {"recoverable_fraction", 0.8, "share of the launch-gap idle time that CUDA graphs / fusion recover"}},
          [](const OptionValues& o) { return std::make_unique<LaunchBound>(o); }};
}

}  // namespace proflint
