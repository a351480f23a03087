// detectors/gpu_idle_sampled.cpp — gpu-idle-sampled
// The Clara GPU profiler's "average GPU activity", judged: from sampled GPU activity (nvidia-smi
// utilization.gpu, dmon sm, DCGM GPUTL), the time inside the job's active window when every
// sampled GPU sat idle together, with the longest of those stalls as time ranges.
// Docs: docs/detectors/gpu-idle-sampled.md
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/system_view.hpp"
#include "engine/common/format.hpp"
#include "engine/common/intervals.hpp"

namespace proflint {

namespace {

struct GpuIdle {
  int64_t device_id = 0;
  double mean_active = 0;
  std::vector<std::pair<int64_t, double>> samples;
  std::vector<Interval> idle, busy;  // time each sample stands for, idle (<= idle_below) or not
};

// Each sample stands for the time until the next one of its GPU, at most twice the usual interval
// (a logger that stopped does not make its last sample last for minutes).
GpuIdle read_gpu(SQLite::Database& db, int64_t trace_id, int64_t device, const std::string& metric, double idle_below) {
  GpuIdle g;
  g.device_id = device;
  auto v = sample_values(db, trace_id, device, metric);
  if (v.size() < 2) return g;
  const std::vector<int64_t> spans = sample_spans(v);
  double sum = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    Interval iv{v[i].first, v[i].first + spans[i]};
    (v[i].second <= idle_below ? g.idle : g.busy).push_back(iv);
    sum += v[i].second;
  }
  g.mean_active = sum / static_cast<double>(v.size());
  g.idle = union_intervals(g.idle);
  g.busy = union_intervals(g.busy);
  g.samples = std::move(v);
  return g;
}

class GpuIdleSampled final : public Detector {
 public:
  explicit GpuIdleSampled(const OptionValues& o)
      : idle_below_(o.number("idle_below")),
        min_idle_share_(o.number("min_idle_share")),
        max_ranges_(o.integer("max_ranges")),
        min_gap_points_(o.number("min_gap_points")),
        min_startup_share_(o.number("min_startup_share")) {}

  std::string_view id() const override { return "gpu-idle-sampled"; }
  std::string_view title() const override { return "All GPUs sat idle for part of the job (sampled activity)"; }
  // No need listed: without a sampling log there is nothing to judge, and a "not checked" line on
  // every profile would only be noise (docs/samples.md).
  std::vector<std::string> needs() const override { return {}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* s = facts.summary(trace_id);
    if (!s || s->system_view.gpus.empty()) return;
    auto& db = facts.db();
    std::string metric = "gpu_active";
    std::vector<int64_t> devices;
    for (const auto& g : s->system_view.gpus)
      if (g.gpu_active) devices.push_back(g.device_id);
    if (devices.empty()) return;
    std::vector<GpuIdle> gpus;
    for (int64_t d : devices) {
      GpuIdle g = read_gpu(db, trace_id, d, metric, idle_below_);
      if (g.idle.empty() && g.busy.empty()) g = read_gpu(db, trace_id, d, "graphics_active", idle_below_);
      if (!g.idle.empty() || !g.busy.empty()) gpus.push_back(std::move(g));
    }
    if (gpus.empty()) return;
    // The active window: first to last busy sample of any GPU (the log's lead-in and tail, before
    // the job started and after it ended, are not the job's idle time).
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (const auto& g : gpus)
      if (!g.busy.empty()) {
        first = std::min(first, g.busy.front().start);
        last = std::max(last, g.busy.back().end);
      }
    if (first >= last) {
      sink.below_threshold(checked_below(*this, trace_id, std::nullopt, "samples with GPU activity above idle_below", 0,
                                         1, "count"));
      return;
    }
    const Interval window{first, last};
    int64_t span_start = INT64_MAX, span_end = INT64_MIN;
    for (const auto& g : gpus) {
      span_start = std::min(span_start, g.samples.front().first);
      span_end = std::max(span_end, std::max(g.idle.empty() ? INT64_MIN : g.idle.back().end,
                                             g.busy.empty() ? INT64_MIN : g.busy.back().end));
    }
    report_stalls(facts, trace_id, *s, gpus, window, sink);
    report_lagging_gpu(trace_id, *s, gpus, window, sink);
    // The lead-in: every GPU idle from the log's first sample to the job's first busy one.
    const int64_t lead_in = window.start - span_start, span = std::max<int64_t>(1, span_end - span_start);
    const double lead_share = static_cast<double>(lead_in) / static_cast<double>(span);
    if (lead_share < min_startup_share_) {
      sink.below_threshold(checked_below(*this, trace_id, std::nullopt, "idle lead-in's share of the sampled span",
                                         lead_share, min_startup_share_, "share"));
      return;
    }
    Finding f = make_finding("GPUs idle for the start of the job (sampled activity)",
                             FindingScope::of_trace(trace_id).of_rank(s->rank));
    f.problem = fmt::format(
        "Every sampled GPU was idle for the first {} of the {} the log covers ({}) before the first sample with "
        "activity above {:.0f}%: the job's start-up (process start, imports, loading the dataset and the model, "
        "compilation, warm-up) or a log started long before the job.",
        format_ns(lead_in), format_ns(span), format_percent(lead_share), idle_below_);
    f.recommendation =
        "If the log started with the job, shorten its start: cache the preprocessed dataset and load it lazily or in "
        "DataLoader workers, load checkpoints with mmap (torch.load(..., mmap=True)), keep torch.compile's cache "
        "between runs (TORCHINDUCTOR_CACHE_DIR / mega-cache), and start the GPU work before the whole dataset is read.";
    f.estimated_savings_ns = static_cast<int64_t>(static_cast<double>(std::max<int64_t>(s->steady_wall_ns, 0)) * lead_share * 0.5);
    f.savings_method = "half the idle lead-in's share of the log, applied to the trace's window";
    f.confidence = 0.3;
    f.evidence["lead_in_ns"] = lead_in;
    f.evidence["span_ns"] = span;
    f.evidence["first_busy_ns"] = window.start;
    sink.report(std::move(f));
  }

 private:
  // Every GPU idle together inside the active window.
  bool report_stalls(const Facts& facts, int64_t trace_id, const TraceSummary& summary, const std::vector<GpuIdle>& gpus,
                     Interval window, FindingSink& sink) const {
    const TraceSummary* s = &summary;
    auto& db = facts.db();
    const std::string metric = "gpu_active";
    std::vector<Interval> stalls = intersect_intervals(gpus.front().idle, {window});
    for (size_t i = 1; i < gpus.size(); ++i) stalls = intersect_intervals(stalls, gpus[i].idle);
    int64_t stall_ns = 0;
    for (const auto& iv : stalls) stall_ns += iv.end - iv.start;
    const int64_t window_ns = window.end - window.start;
    const double share = static_cast<double>(stall_ns) / static_cast<double>(window_ns);
    if (share < min_idle_share_) {
      sink.below_threshold(checked_below(*this, trace_id, std::nullopt, "share of the active window with every GPU idle",
                                         share, min_idle_share_, "share"));
      return false;
    }
    int64_t origin = 0;
    {
      SQLite::Statement q(db, "SELECT start_ns FROM trace WHERE trace_id = ?");
      q.bind(1, trace_id);
      if (q.executeStep() && !q.isColumnNull(0)) origin = q.getColumn(0).getInt64();
    }
    std::vector<Interval> longest = stalls;
    std::stable_sort(longest.begin(), longest.end(),
                     [](const Interval& a, const Interval& b) { return a.end - a.start > b.end - b.start; });
    if (static_cast<int64_t>(longest.size()) > max_ranges_) longest.resize(static_cast<size_t>(max_ranges_));
    std::string ranges;
    nlohmann::ordered_json range_json = nlohmann::ordered_json::array();
    for (const auto& iv : longest) {
      ranges += fmt::format("{}{} at +{:.1f} s", ranges.empty() ? "" : ", ", format_ns(iv.end - iv.start),
                            static_cast<double>(iv.start - origin) / 1e9);
      range_json.push_back({{"start_ns", iv.start}, {"end_ns", iv.end}, {"dur_ns", iv.end - iv.start},
                            {"offset_s", static_cast<double>(iv.start - origin) / 1e9}});
    }
    std::string per_gpu;
    nlohmann::ordered_json gpu_json = nlohmann::ordered_json::array();
    double lo = 101, hi = -1;
    for (const auto& g : gpus) {
      int64_t idle_in = 0;
      for (const auto& iv : intersect_intervals(g.idle, {window})) idle_in += iv.end - iv.start;
      per_gpu += fmt::format("{}GPU {} {:.1f}% average activity, idle {}", per_gpu.empty() ? "" : "; ", g.device_id,
                             g.mean_active, format_percent(static_cast<double>(idle_in) / static_cast<double>(window_ns)));
      gpu_json.push_back({{"device_id", g.device_id}, {"mean_active_percent", g.mean_active}, {"idle_ns", idle_in}});
      lo = std::min(lo, g.mean_active);
      hi = std::max(hi, g.mean_active);
    }
    Finding f = make_finding(FindingScope::of_trace(trace_id).of_rank(s->rank));
    std::string who = gpus.size() == 1 ? "The GPU" : fmt::format("All {} sampled GPUs", gpus.size());
    f.problem = fmt::format(
        "{} sat idle (activity at most {:.0f}%) together for {} of the {} active window ({}), in {} stall{}; the "
        "longest: {}. Per GPU: {}.",
        who, idle_below_, format_ns(stall_ns), format_ns(window_ns), format_percent(share), stalls.size(),
        stalls.size() == 1 ? "" : "s", ranges, per_gpu);
    if (gpus.size() > 1 && hi - lo >= 15)
      f.problem += fmt::format(" The GPUs are unevenly busy ({:.1f}% to {:.1f}% on average): the least busy one waits for "
                               "work the others do not (a rank doing extra host work, e.g. logging or evaluation on rank 0).",
                               lo, hi);
    f.recommendation =
        "Find what the job does while every GPU waits: stalls at a regular period are usually checkpoint saves or "
        "evaluation on the training ranks (save asynchronously, e.g. torch.distributed.checkpoint.async_save, or less "
        "often; run evaluation less often or on fewer batches), irregular ones the input pipeline (more DataLoader "
        "workers, pin_memory=True, prefetch). Capture one stall with torch.profiler or nsys (with --trace=osrt) to see "
        "the host side, and give that profile beside this log (proflint analyze trace.json gpu_log.csv).";
    // The stalled time, as a share of the trace's window: what removing the stalls would recover.
    f.estimated_savings_ns = static_cast<int64_t>(share * static_cast<double>(std::max<int64_t>(s->steady_wall_ns, 0)));
    f.savings_method = "the share of the sampled active window in which every GPU was idle, applied to the trace's window";
    f.confidence = 0.6;
    f.evidence["metric"] = metric;
    f.evidence["idle_below_percent"] = idle_below_;
    f.evidence["window_start_ns"] = window.start;
    f.evidence["window_end_ns"] = window.end;
    f.evidence["stall_ns"] = stall_ns;
    f.evidence["stall_count"] = static_cast<int64_t>(stalls.size());
    f.evidence["longest_stalls"] = range_json;
    f.evidence["gpus"] = gpu_json;
    sink.report(std::move(f));
    return true;
  }

  // One GPU idle while the others work: the least busy GPU, against the median of the others.
  bool report_lagging_gpu(int64_t trace_id, const TraceSummary& s, const std::vector<GpuIdle>& gpus, Interval window,
                          FindingSink& sink) const {
    if (gpus.size() < 2) return false;
    std::vector<double> means;
    for (const auto& g : gpus) {
      double sum = 0;
      int64_t n = 0;
      for (const auto& [t, v] : g.samples)
        if (t >= window.start && t < window.end) {
          sum += v;
          ++n;
        }
      means.push_back(n ? sum / static_cast<double>(n) : 0);
    }
    size_t low = static_cast<size_t>(std::min_element(means.begin(), means.end()) - means.begin());
    std::vector<double> others;
    std::vector<Interval> others_busy;
    for (size_t i = 0; i < gpus.size(); ++i)
      if (i != low) {
        others.push_back(means[i]);
        others_busy.insert(others_busy.end(), gpus[i].busy.begin(), gpus[i].busy.end());
      }
    std::sort(others.begin(), others.end());
    const double median = others[others.size() / 2];
    const int64_t window_ns = window.end - window.start;
    const int64_t alone_ns =
        total_length(intersect_intervals(intersect_intervals(gpus[low].idle, {window}), union_intervals(others_busy)));
    const double alone = static_cast<double>(alone_ns) / static_cast<double>(window_ns);
    if (median - means[low] < min_gap_points_ || alone < min_idle_share_) {
      sink.below_threshold(checked_below(*this, trace_id, gpus[low].device_id,
                                         "activity points below the other GPUs' median", median - means[low],
                                         min_gap_points_, "points"));
      return false;
    }
    const GpuIdle& g = gpus[low];
    Finding f = make_finding("One GPU idle while the others work (sampled activity)",
                             FindingScope::of_trace(trace_id).on_device(g.device_id).of_rank(s.rank));
    f.problem = fmt::format(
        "GPU {} averaged {:.1f}% activity in the active window against a median of {:.1f}% on the other {} GPUs, and was "
        "idle while another GPU worked for {} ({} of the window). In a data-parallel job the others then wait for it "
        "at the next collective (their activity stays high while they spin in NCCL).",
        g.device_id, means[low], median, gpus.size() - 1, format_ns(alone_ns), format_percent(alone));
    f.recommendation =
        "Find the work only this GPU's rank does (logging, metrics, evaluation or checkpoint writing on rank 0; an "
        "uneven data shard) and move it off the training loop: spread it over ranks, make it asynchronous, or do it "
        "less often. A trace of that rank beside this log shows what it does in those gaps.";
    f.estimated_savings_ns = static_cast<int64_t>(static_cast<double>(std::max<int64_t>(s.steady_wall_ns, 0)) * alone * 0.5);
    f.savings_method = "half the share of the active window in which this GPU idled while another worked";
    f.confidence = 0.4;
    f.evidence["device_id"] = g.device_id;
    f.evidence["mean_active_percent"] = means[low];
    f.evidence["others_median_percent"] = median;
    f.evidence["idle_while_others_busy_ns"] = alone_ns;
    sink.report(std::move(f));
    return true;
  }

  double idle_below_, min_idle_share_;
  int64_t max_ranges_;
  double min_gap_points_, min_startup_share_;
};

}  // namespace

DetectorInfo gpu_idle_sampled_info() {
  return {"gpu-idle-sampled",
          {{"idle_below", 5.0, "a sample whose GPU activity (%) is at most this counts as idle"},
           {"min_idle_share", 0.05, "report when every GPU is idle together for this share of the active window"},
           {"max_ranges", int64_t{5}, "longest stalls listed as time ranges"},
           {"min_gap_points", 15.0,
            "one GPU idle while others work: report when its mean activity is this many points below the others' median"},
           {"min_startup_share", 0.1, "report an idle lead-in (start-up) that takes this share of the sampled span"}},
          [](const OptionValues& o) { return std::make_unique<GpuIdleSampled>(o); }};
}

}  // namespace proflint
