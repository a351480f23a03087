// detectors/io_bound_input.cpp — io-bound-input
// Flags GPU-idle time during which the host thread that launches the GPU's work was blocked in OS
// calls (reads, poll/select/futex/condition waits, sleeps: nsys OSRT), naming the calls.
// Docs: docs/detectors/io-bound-input.md
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

class IoBoundInput final : public Detector {
 public:
  explicit IoBoundInput(const OptionValues& o)
      : min_share_(o.number("min_share")),
        min_idle_ns_(o.integer("min_idle_ns")),
        recoverable_fraction_(o.number("recoverable_fraction")),
        top_(std::max<int64_t>(1, o.integer("top"))) {}

  std::string_view id() const override { return "io-bound-input"; }
  std::string_view title() const override { return "GPU idles while the host waits in I/O"; }
  std::vector<std::string> needs() const override { return {"gpu_activity", "os_calls"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* s = facts.summary(trace_id);
    if (!s || s->steady_wall_ns <= 0) return;
    for (const auto& d : s->devices) run_device(facts, trace_id, *s, d, sink);
  }

 private:
  void run_device(const Facts& facts, int64_t trace_id, const TraceSummary& s, const DeviceSummary& d,
                  FindingSink& sink) const {
    IdleGapKeys keys(facts, trace_id, d.device_id);
    Interval steady{d.steady_start_ns, d.steady_end_ns};
    HostWaits waits = host_waits(facts, trace_id, d.device_id, steady, keys);
    const DeviceIdle& idle = waits.idle;
    if (idle.launchers.empty() || idle.idle.empty()) return;
    const std::vector<Interval>& blocked = waits.blocked;
    const int64_t blocked_ns = total_length(blocked);
    const int64_t window = std::max<int64_t>(1, steady.length());
    const double share = static_cast<double>(blocked_ns) / static_cast<double>(window);
    if (blocked_ns <= 0 || share < min_share_) {
      sink.below_threshold(checked_below(*this, trace_id, d.device_id,
                                         "share of the steady window the GPU idled while its launching thread was "
                                         "blocked in I/O, waits or sleeps",
                                         share, min_share_, "share of wall time"));
      return;
    }
    if (blocked_ns < min_idle_ns_) {
      sink.below_threshold(checked_below(*this, trace_id, d.device_id,
                                         "GPU-idle time with a launching thread blocked in I/O, waits or sleeps",
                                         static_cast<double>(blocked_ns), static_cast<double>(min_idle_ns_), "ns"));
      return;
    }

    const std::vector<OsWaitTotal>& calls = waits.calls;
    std::map<std::string, int64_t> by_category;
    for (const auto& c : calls) by_category[c.category] += c.gpu_idle_ns;
    std::string main_category = "io";
    for (const auto& [cat, ns] : by_category)
      if (ns > by_category[main_category]) main_category = cat;

    std::string named;
    for (size_t i = 0; i < calls.size() && i < static_cast<size_t>(top_); ++i)
      named += fmt::format("{}`{}` {} ({} call{}{})", i ? ", " : "", calls[i].name, format_ns(calls[i].gpu_idle_ns),
                           calls[i].calls, calls[i].calls == 1 ? "" : "s",
                           calls[i].caller.empty() ? "" : ", from `" + calls[i].caller + "`");
    // Name the launching thread that was blocked longest (usually the only one).
    auto most = std::max_element(waits.blocked_by_thread.begin(), waits.blocked_by_thread.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    std::string who = idle.launchers.size() == 1 ? "the thread that launches its work, " : "a thread that launches its work, ";
    who += thread_label(facts, trace_id, most->first) + ",";
    Finding f = make_finding(FindingScope::of_trace(trace_id).on_device(d.device_id).of_rank(s.rank));
    f.problem = fmt::format(
        "GPU {} sat idle for {} ({} of its steady window of {}) while {} was blocked in OS calls: {}. The GPU had "
        "nothing to run because the host was {}, not computing.",
        d.device_id, format_ns(blocked_ns), format_percent(share), format_ns(steady.length()), who, named,
        main_category == "io"      ? "reading its input"
        : main_category == "sleep" ? "sleeping"
                                   : "waiting for another thread or process (a loader worker, a queue, a lock)");
    f.recommendation = recommendation(main_category, s.workload.value_or(""));
    f.estimated_savings_ns = static_cast<int64_t>(recoverable_fraction_ * static_cast<double>(blocked_ns));
    f.savings_method = fmt::format(
        "GPU-idle time inside blocking OS calls of the launching thread (outside its CUDA calls), x {:.2f} "
        "(recoverable_fraction: the share that reading ahead on other threads hides)",
        recoverable_fraction_);
    add_idle_claims(f.claims, keys.idle_by_gap(blocked), f.estimated_savings_ns);
    f.confidence = main_category == "sleep" ? 0.5 : 0.6;
    f.evidence["device_id"] = d.device_id;
    f.evidence["gpu_idle_blocked_ns"] = blocked_ns;
    f.evidence["steady_window_ns"] = steady.length();
    f.evidence["share"] = share;
    f.evidence["main_category"] = main_category;
    nlohmann::ordered_json threads = nlohmann::ordered_json::array();
    for (const auto& t : idle.launchers) threads.push_back({{"pid", t.pid}, {"tid", t.tid}});
    f.evidence["launching_threads"] = threads;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (size_t i = 0; i < calls.size() && i < 10; ++i)
      list.push_back({{"name", calls[i].name},
                      {"category", calls[i].category},
                      {"calls", calls[i].calls},
                      {"gpu_idle_ns", calls[i].gpu_idle_ns},
                      {"example_os_call_id", calls[i].example}});
    for (size_t i = 0; i < calls.size() && i < 10; ++i)
      if (!calls[i].caller.empty()) list[i]["caller"] = calls[i].caller;
    f.evidence["calls"] = list;
    sink.report(std::move(f));
  }

  static std::string recommendation(const std::string& category, const std::string& workload) {
    const bool inference = workload == "inference";
    if (category == "sleep")
      return "Remove the sleeps from the thread that launches GPU work (time.sleep in a polling loop, a rate "
             "limiter, a retry back-off): wait on the event itself (queue.get with a timeout, a condition "
             "variable) so the next launch follows as soon as its input is there.";
    if (category == "io") {
      if (workload != "training" && workload != "inference")
        return "Read ahead on another thread or with asynchronous I/O (double-buffered reads, io_uring, POSIX aio) "
               "so the next input is in memory when the GPU finishes the current one; read larger sequential "
               "blocks from local storage instead of many small reads from network storage.";
      if (inference)
        return "Read and decode requests off the GPU thread: a reader thread or process fills a queue "
               "(torch.utils.data.DataLoader with num_workers, or a thread pool) and the GPU thread only "
               "launches; keep model inputs and weights in memory instead of reading them per request, and "
               "batch requests (dynamic batching in Triton or TorchServe) so each read feeds more GPU work.";
      return "Read the input in background workers instead of the training loop: DataLoader(dataset, "
             "num_workers=N, pin_memory=True, persistent_workers=True, prefetch_factor=4). Make each read "
             "cheaper: local NVMe or a page-cache-warm copy instead of network storage, many small files "
             "packed into shards (WebDataset, TFRecord) read sequentially, decoded samples cached. "
             "TensorFlow: tf.data with .interleave(num_parallel_calls=AUTOTUNE).prefetch(AUTOTUNE).";
    }
    if (inference)
      return "The GPU thread waits on another thread or process between requests: if requests are there, "
             "make the producer parallel (more pre-processing workers, a larger dynamic-batching queue); if the "
             "server is simply idle, this is spare capacity, not a defect. A lock held around pre-processing "
             "also shows up here: keep it out of the launch path.";
    return "The training loop waits for another thread or process, most often DataLoader workers that do not "
           "keep up (the main thread polls their result queue): raise num_workers and prefetch_factor, use "
           "persistent_workers=True, and make each sample cheaper (decode on the GPU with NVIDIA DALI, cache "
           "pre-processed samples). Sample the workers too (nsys --sample=process-tree) to see what they do.";
  }

  double min_share_;
  int64_t min_idle_ns_;
  double recoverable_fraction_;
  int64_t top_;
};

}  // namespace

DetectorInfo io_bound_input_info() {
  return {"io-bound-input",
          {{"min_share", 0.05,
            "report when the GPU idles this share of its steady window while its launching thread is blocked in "
            "I/O, waits or sleeps"},
           {"min_idle_ns", 1000000, "and at least this much such time in total (ns)"},
           {"recoverable_fraction", 0.8,
            "share of that GPU-idle time that reading ahead on other threads or processes is assumed to hide"},
           {"top", 3, "calls named in the problem text"}},
          [](const OptionValues& o) { return std::make_unique<IoBoundInput>(o); }};
}

}  // namespace proflint
