// detectors/cpu_hotspot_idle.cpp — cpu-hotspot-idle
// Names the functions the launching host thread was running (sampled call chains, nsys CPU
// sampling) while its GPU had nothing to do. Docs: docs/detectors/cpu-hotspot-idle.md
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/host_activity.hpp"
#include "engine/analysis/idle_claims.hpp"
#include "engine/common/format.hpp"
#include "engine/common/intervals.hpp"

namespace proflint {

namespace {

// A hot function with what the text names besides its samples.
struct Named {
  const CpuHotspot* h = nullptr;
  std::string module;                      // of the innermost frame (file name only)
  std::map<std::string, int64_t> callers;  // "`caller` ← `its caller`" -> samples
};

bool contains(const std::string& s, std::string_view p) { return s.find(p) != std::string::npos; }

// What kind of host work a hot function is, from its name: decides the advice.
std::string kind_of(const std::string& f) {
  if (contains(f, "PyEval") || contains(f, "_PyObject") || contains(f, "PyObject_") || contains(f, "_Py") ||
      contains(f, "pybind11"))
    return "python";
  if (contains(f, "MPI") || contains(f, "progress") || contains(f, "ofi_") || contains(f, "ncclProxy") ||
      contains(f, "gloo") || contains(f, "spin_lock") || contains(f, "sched_yield"))
    return "polling";
  if (contains(f, "jpeg") || contains(f, "png") || contains(f, "av_") || contains(f, "avcodec") || contains(f, "cv::") ||
      contains(f, "decode") || contains(f, "Decode") || contains(f, "resize") || contains(f, "ImagingResample"))
    return "decode";
  if (contains(f, "memcpy") || contains(f, "memmove") || contains(f, "memset") || contains(f, "copy_"))
    return "copy";
  if (contains(f, "at::native") || contains(f, "mkl") || contains(f, "dnnl") || contains(f, "gemm") ||
      contains(f, "openblas"))
    return "cpu_math";
  return "other";
}

class CpuHotspotIdle final : public Detector {
 public:
  explicit CpuHotspotIdle(const OptionValues& o)
      : min_share_(o.number("min_share")),
        min_samples_(o.integer("min_samples")),
        recoverable_fraction_(o.number("recoverable_fraction")),
        top_(std::max<int64_t>(1, o.integer("top"))) {}

  std::string_view id() const override { return "cpu-hotspot-idle"; }
  std::string_view title() const override { return "Host code keeps the GPU waiting"; }
  std::vector<std::string> needs() const override { return {"gpu_activity", "cpu_samples"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* s = facts.summary(trace_id);
    if (!s || s->steady_wall_ns <= 0) return;
    for (const auto& d : s->devices) run_device(facts, trace_id, *s, d, sink);
  }

 private:
  void run_device(const Facts& facts, int64_t trace_id, const TraceSummary& s, const DeviceSummary& d,
                  FindingSink& sink) const {
    IdleGapKeys keys(facts, trace_id, d.device_id);
    CpuHotspots hot = cpu_hotspots(facts, trace_id, d.device_id, {d.steady_start_ns, d.steady_end_ns}, keys);
    const DeviceIdle& idle = hot.idle;
    const int64_t period = hot.period_ns;
    if (idle.launchers.empty() || idle.idle.empty() || period <= 0) return;

    // Host-busy GPU-idle time: each idle sample stands for one period around it, inside the idle time.
    auto busy_pieces = [&](const std::vector<int64_t>& ts) {
      std::vector<Interval> p;
      for (int64_t t : ts) p.push_back({t - period / 2, t + (period - period / 2)});
      return intersect_intervals(union_intervals(std::move(p)), idle.idle);
    };
    std::vector<int64_t> all_ts;
    for (const auto& h : hot.functions) all_ts.insert(all_ts.end(), h.sample_ts.begin(), h.sample_ts.end());
    const int64_t host_busy_idle_ns = total_length(busy_pieces(all_ts));
    const int64_t window = std::max<int64_t>(1, d.steady_end_ns - d.steady_start_ns);
    const double share = static_cast<double>(host_busy_idle_ns) / static_cast<double>(window);
    const int64_t idle_samples = hot.samples_while_idle, all_samples = hot.samples_in_window;
    if (idle_samples <= 0 || idle_samples < min_samples_) {
      sink.below_threshold(checked_below(*this, trace_id, d.device_id,
                                         "samples of the launching threads taken while the GPU idled",
                                         static_cast<double>(idle_samples), static_cast<double>(min_samples_),
                                         "samples"));
      return;
    }
    if (share < min_share_) {
      sink.below_threshold(checked_below(*this, trace_id, d.device_id,
                                         "share of the steady window the GPU idled while its launching thread was "
                                         "sampled running on the CPU",
                                         share, min_share_, "share of wall time"));
      return;
    }

    std::vector<Named> ranked;
    for (size_t i = 0; i < hot.functions.size() && i < static_cast<size_t>(top_); ++i)
      ranked.push_back({&hot.functions[i], {}, {}});
    describe_callers(facts, ranked);

    std::vector<int64_t> top_ts;
    std::string named;
    std::map<std::string, int64_t> kinds;
    for (size_t i = 0; i < ranked.size(); ++i) {
      const CpuHotspot& h = *ranked[i].h;
      top_ts.insert(top_ts.end(), h.sample_ts.begin(), h.sample_ts.end());
      kinds[kind_of(h.function)] += h.samples;
      std::string caller;
      if (!ranked[i].callers.empty()) {
        auto best = std::max_element(ranked[i].callers.begin(), ranked[i].callers.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
        caller = fmt::format(", called from {}", best->first);
      }
      named += fmt::format("{}`{}`{} {} samples ({}){}", i ? "; " : "", h.function,
                           ranked[i].module.empty() ? "" : fmt::format(" in {}", ranked[i].module), h.samples,
                           format_percent(static_cast<double>(h.samples) / static_cast<double>(idle_samples)), caller);
    }
    auto top_pieces = busy_pieces(top_ts);
    const int64_t top_ns = total_length(top_pieces);
    std::string main_kind = "other";
    int64_t most = 0;
    for (const auto& [k, n] : kinds)
      if (n > most) {
        most = n;
        main_kind = k;
      }

    // Name the launching thread with the most GPU-idle samples (usually the only one sampled there).
    auto busiest = std::max_element(hot.idle_samples_by_thread.begin(), hot.idle_samples_by_thread.end(),
                                    [](const auto& a, const auto& b) { return a.second < b.second; });
    std::string who = (idle.launchers.size() == 1 ? "the thread that launches its work, "
                                                  : "a thread that launches its work, ") +
                      thread_label(facts, trace_id, busiest->first) + ", was";
    if (hot.idle_samples_by_thread.size() > 1)
      who = fmt::format("{} of the threads that launch its work were", hot.idle_samples_by_thread.size());
    Finding f = make_finding(FindingScope::of_trace(trace_id).on_device(d.device_id).of_rank(s.rank));
    f.problem = fmt::format(
        "While GPU {} had nothing to run, {} busy on the CPU: {} of {} samples in the steady window fell in "
        "GPU-idle time (≈ {}, {} of the window at one sample every {}). Hottest functions: {}.",
        d.device_id, who, idle_samples, all_samples, format_ns(host_busy_idle_ns), format_percent(share),
        format_ns(period), named);
    f.recommendation = recommendation(main_kind, s.workload.value_or(""));
    f.estimated_savings_ns = static_cast<int64_t>(recoverable_fraction_ * static_cast<double>(top_ns));
    f.savings_method = fmt::format(
        "GPU-idle time covered by samples of the {} hottest functions (one sampling period each), x {:.2f} "
        "(recoverable_fraction: the share that making that host code faster or moving it off the launch path recovers)",
        ranked.size(), recoverable_fraction_);
    add_idle_claims(f.claims, keys.idle_by_gap(top_pieces), f.estimated_savings_ns);
    f.confidence = 0.5;
    f.evidence["device_id"] = d.device_id;
    f.evidence["samples_in_window"] = all_samples;
    f.evidence["samples_while_gpu_idle"] = idle_samples;
    f.evidence["sample_period_ns"] = period;
    f.evidence["host_busy_gpu_idle_ns"] = host_busy_idle_ns;
    f.evidence["share"] = share;
    f.evidence["kind"] = main_kind;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const Named& n : ranked) {
      nlohmann::ordered_json callers = nlohmann::ordered_json::array();
      std::vector<std::pair<std::string, int64_t>> c(n.callers.begin(), n.callers.end());
      std::sort(c.begin(), c.end(),
                [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
      for (size_t i = 0; i < c.size() && i < 3; ++i) callers.push_back({{"path", c[i].first}, {"samples", c[i].second}});
      list.push_back({{"function", n.h->function},
                      {"module", n.module},
                      {"samples", n.h->samples},
                      {"callers", callers},
                      {"example_sample_id", n.h->sample_ids.front()}});
    }
    f.evidence["hotspots"] = list;
    sink.report(std::move(f));
  }

  // For each hot function: the module of its innermost frame and its most common two callers.
  static void describe_callers(const Facts& facts, std::vector<Named>& ranked) {
    SQLite::Statement q(facts.db(),
                        "SELECT depth, name, coalesce(module, '') FROM cpu_frame WHERE sample_id = ? AND depth <= 2 "
                        "ORDER BY depth");
    for (Named& n : ranked) {
      // The callers of its first 200 idle-time samples are enough to name the common paths.
      for (size_t i = 0; i < n.h->sample_ids.size() && i < 200; ++i) {
        q.reset();
        q.bind(1, n.h->sample_ids[i]);
        std::string path;
        while (q.executeStep()) {
          if (q.getColumn(0).getInt() == 0) {
            std::string module = q.getColumn(2).getString();
            if (n.module.empty()) n.module = module.substr(module.find_last_of('/') + 1);
            continue;
          }
          path += (path.empty() ? "`" : " ← `") + q.getColumn(1).getString() + "`";
        }
        if (!path.empty()) ++n.callers[path];
      }
    }
  }

  static std::string recommendation(const std::string& kind, const std::string& workload) {
    // The workload (derived: training, inference, or a program without framework ops) decides where
    // host work can go instead.
    std::string tail;
    if (workload == "inference")
      tail = " For serving, keep this work out of the request's launch path (a pre-processing worker pool ahead of "
             "the GPU thread) and batch requests so each launch does more.";
    else if (workload == "training")
      tail = " In training, move per-batch host work into DataLoader workers (num_workers=N) so it overlaps the "
             "previous step's GPU work.";
    else
      tail = " Without a framework, overlap it with the GPU: launch the next GPU work asynchronously first (streams, "
             "non-blocking copies) and do the host work while it runs, or give it threads of its own.";
    if (kind == "python")
      return "The Python interpreter itself is the hot spot: per-op Python overhead between launches. Capture the "
             "step with torch.compile(model, mode=\"reduce-overhead\") or CUDA graphs (torch.cuda.graphs), fuse "
             "small ops, and remove per-step Python work (logging, .item(), list building)." +
             tail;
    if (kind == "polling")
      return "The thread spins in a communication or lock progress loop (MPI/libfabric progress, spin locks) while "
             "the GPU idles: it waits for a peer. Post the communication earlier and non-blocking (MPI_Isend/"
             "MPI_Irecv, NCCL on a side stream) so it overlaps GPU work, or balance the work between ranks.";
    if (kind == "decode")
      return "The thread decodes or resizes media on the CPU while the GPU waits: decode on the GPU (NVIDIA DALI, "
             "nvJPEG, torchvision.io.decode_jpeg(device='cuda')) or in parallel workers, and cache decoded samples." +
             tail;
    if (kind == "copy")
      return "The thread copies memory on the CPU while the GPU waits: use pinned host buffers "
             "(pin_memory=True, torch.empty(..., pin_memory=True)) and non_blocking=True transfers, and avoid "
             "copying tensors through Python lists or NumPy per step." +
             tail;
    if (kind == "cpu_math")
      return "The thread runs tensor math on the CPU while the GPU waits: move those tensors and ops to the GPU "
             "(.to('cuda') earlier), or run them in parallel with the GPU work." +
             tail;
    return "Make the named functions faster or move them off the thread that launches GPU work, so the next launch "
           "follows the previous kernel without a gap; the call paths in the evidence show who calls them." +
           tail;
  }

  double min_share_;
  int64_t min_samples_;
  double recoverable_fraction_;
  int64_t top_;
};

}  // namespace

DetectorInfo cpu_hotspot_idle_info() {
  return {"cpu-hotspot-idle",
          {{"min_share", 0.05,
            "report when GPU-idle time with the launching thread sampled busy reaches this share of the steady "
            "window"},
           {"min_samples", 20, "and at least this many samples of the launching threads fell in GPU-idle time"},
           {"recoverable_fraction", 0.5,
            "share of the hottest functions' GPU-idle time that making them faster or moving them off the launch "
            "path is assumed to recover"},
           {"top", 3, "functions named in the problem text"}},
          [](const OptionValues& o) { return std::make_unique<CpuHotspotIdle>(o); }};
}

}  // namespace proflint
