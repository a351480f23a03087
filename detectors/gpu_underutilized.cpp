// detectors/gpu_underutilized.cpp — gpu-underutilized
// Flags devices whose kernels keep the GPU busy for less than a threshold share of the analysed
// window (DLProf "Underutilized GPU", the TensorBoard plugin's low-utilization rule, nsys
// gpu_time_util chunked over the capture), and says what the GPU waits on instead: copies, the
// DataLoader, CUDA API calls, host-side ops, or nothing recorded at all.
// Docs: docs/detectors/gpu-underutilized.md
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cctype>
#include <initializer_list>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/idle_claims.hpp"
#include "engine/common/format.hpp"
#include "engine/common/intervals.hpp"

namespace proflint {

namespace {

struct Waiting {
  std::string category;  // breakdown category
  int64_t ns = 0;
};

// Where the analysed window lies: the capture, or the selected iterations' span when
// --iter-start/--iter-stop restrict the breakdown (the same window the summary figures use).
Interval analysed_window(SQLite::Database& db, int64_t trace_id, bool& restricted) {
  restricted = false;
  Interval w{0, 0};
  {
    SQLite::Statement q(db, "SELECT COALESCE(start_ns, 0), COALESCE(end_ns, 0) FROM trace WHERE trace_id = ?");
    q.bind(1, trace_id);
    if (q.executeStep()) w = {q.getColumn(0).getInt64(), q.getColumn(1).getInt64()};
  }
  std::vector<int64_t> selected;
  {
    SQLite::Statement q(
        db, "SELECT DISTINCT iteration FROM breakdown WHERE trace_id = ? AND iteration >= 0 ORDER BY iteration");
    q.bind(1, trace_id);
    while (q.executeStep()) selected.push_back(q.getColumn(0).getInt64());
  }
  SQLite::Statement n(db, "SELECT count(*) FROM iteration WHERE trace_id = ?");
  n.bind(1, trace_id);
  int64_t total = n.executeStep() ? n.getColumn(0).getInt64() : 0;
  if (selected.empty() || static_cast<int64_t>(selected.size()) == total) return w;
  // Restricted: rebuild the iteration windows (start_k .. max(end_k, gpu_end_k), never overlapping).
  SQLite::Statement q(
      db, "SELECT iteration, start_ns, end_ns, gpu_end_ns FROM iteration WHERE trace_id = ? ORDER BY iteration");
  q.bind(1, trace_id);
  int64_t prev_end = INT64_MIN;
  bool any = false;
  Interval out{0, 0};
  while (q.executeStep()) {
    int64_t k = q.getColumn(0).getInt64();
    int64_t s = std::max(q.getColumn(1).getInt64(), prev_end);
    int64_t e = q.getColumn(2).getInt64();
    if (!q.isColumnNull(3)) e = std::max(e, q.getColumn(3).getInt64());
    e = std::max(e, s);
    prev_end = e;
    if (!std::binary_search(selected.begin(), selected.end(), k)) continue;
    out = any ? Interval{std::min(out.start, s), std::max(out.end, e)} : Interval{s, e};
    any = true;
  }
  restricted = any;
  return any ? out : w;
}

class GpuUnderutilized final : public Detector {
 public:
  explicit GpuUnderutilized(const OptionValues& o)
      : threshold_(o.number("threshold")),
        chunks_(std::clamp<int64_t>(o.integer("chunks"), 1, 1000)),
        target_(o.number("target_utilization")),
        min_kernels_(o.integer("min_kernels")),
        min_kernel_busy_ns_(o.integer("min_kernel_busy_ns")) {}

  std::string_view id() const override { return "gpu-underutilized"; }
  std::string_view title() const override { return "GPU is underutilized"; }
  std::vector<std::string> needs() const override { return {"kernels"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* s = facts.summary(trace_id);
    auto& db = facts.db();
    bool restricted = false;
    Interval window = analysed_window(db, trace_id, restricted);
    for (const auto& d : s->devices) {
      if (d.window_ns <= 0 || d.kernel_count < min_kernels_) continue;
      // Start-up inside the window (steady_state table) is judged apart: the steady state is the job.
      double util = d.startup_ns > 0 ? d.steady_gpu_utilization : d.gpu_utilization;
      if (util >= threshold_) continue;
      // A toy or an excerpt: with almost no GPU work the idle time is the script around it, not a
      // job to speed up (small-capture says what such a capture can show).
      int64_t busy = d.startup_ns > 0 ? d.steady_kernel_busy_ns : d.kernel_busy_ns;
      if (busy < min_kernel_busy_ns_) {
        sink.below_threshold(checked_below(*this, trace_id, d.device_id, "kernel busy time in the judged window",
                                           static_cast<double>(busy), static_cast<double>(min_kernel_busy_ns_), "ns"));
        continue;
      }
      report_device(facts, trace_id, d, window, restricted, sink);
    }
  }

 private:
  void report_device(const Facts& facts, int64_t trace_id, const DeviceSummary& d, Interval window, bool restricted,
                     FindingSink& sink) const {
    const TraceSummary* s = facts.summary(trace_id);
    auto& db = facts.db();
    const bool steady = d.startup_ns > 0;
    if (steady) window = {d.steady_start_ns, d.steady_end_ns};
    const int64_t W = steady ? d.steady_window_ns : d.window_ns;
    const int64_t K = steady ? d.steady_kernel_busy_ns : d.kernel_busy_ns;
    const double utilization = steady ? d.steady_gpu_utilization : d.gpu_utilization;
    const auto& breakdown = steady ? d.steady_breakdown_ns : d.breakdown_ns;
    auto cat = [&](const char* c) {
      auto it = breakdown.find(c);
      return it == breakdown.end() ? int64_t{0} : it->second;
    };
    const int64_t copies = cat("memcpy") + cat("memset");
    double busy_share = static_cast<double>(steady ? d.steady_gpu_busy_ns : d.gpu_busy_ns) / static_cast<double>(W);

    // Utilization per chunk of the window (nsys gpu_time_util: chunks of equal length).
    std::vector<double> chunk_util = chunk_utilization(db, trace_id, d.device_id, window);
    int64_t chunk_len = window.length() > 0 ? (window.length() + chunks_ - 1) / chunks_ : 0;
    int64_t low = 0, run_start = -1, best_start = -1, best_len = 0;
    for (size_t i = 0; i <= chunk_util.size(); ++i) {
      bool is_low = i < chunk_util.size() && chunk_util[i] < threshold_;
      if (is_low) {
        ++low;
        if (run_start < 0) run_start = static_cast<int64_t>(i);
      } else if (run_start >= 0) {
        if (static_cast<int64_t>(i) - run_start > best_len) {
          best_len = static_cast<int64_t>(i) - run_start;
          best_start = run_start;
        }
        run_start = -1;
      }
    }

    // What the GPU waits on: the biggest non-kernel part of the breakdown.
    std::vector<Waiting> waits;
    for (const char* c : {"memcpy", "memset", "runtime", "dataloader", "cpu", "idle"}) waits.push_back({c, cat(c)});
    std::sort(waits.begin(), waits.end(), [](const Waiting& a, const Waiting& b) {
      return a.ns > b.ns || (a.ns == b.ns && a.category < b.category);
    });
    const Waiting& top = waits.front();

    // The API the host spends the most time in while the device runs nothing (a synchronization
    // that only waits for running kernels costs nothing); one call covering most of the window is
    // start-up inside the capture.
    std::string top_api;
    int64_t top_api_ns = 0, top_api_max = 0, top_api_count = 0, top_api_exposed = 0;
    {
      std::vector<Interval> busy;
      for (const char* table : {"_kernel", "_memcpy", "_memset"}) {
        SQLite::Statement q(db, fmt::format("SELECT start_ns, start_ns + dur_ns FROM {} WHERE trace_id = ? AND "
                                            "device_id IS ? AND start_ns < ? AND start_ns + dur_ns > ?",
                                            table));
        q.bind(1, trace_id);
        q.bind(2, d.device_id);
        q.bind(3, window.end);
        q.bind(4, window.start);
        while (q.executeStep()) busy.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64()});
      }
      busy = union_intervals(std::move(busy));
      struct PerName {
        int64_t count = 0, ns = 0, max = 0, exposed = 0;
      };
      std::map<int64_t, PerName> per;
      SQLite::Statement q(db,
                          "SELECT name_id, start_ns, start_ns + dur_ns FROM _api_call WHERE trace_id = ? "
                          "AND start_ns < ? AND start_ns + dur_ns > ?");
      q.bind(1, trace_id);
      q.bind(2, window.end);
      q.bind(3, window.start);
      while (q.executeStep()) {
        Interval c{std::max(q.getColumn(1).getInt64(), window.start), std::min(q.getColumn(2).getInt64(), window.end)};
        auto& p = per[q.getColumn(0).getInt64()];
        ++p.count;
        p.ns += q.getColumn(2).getInt64() - q.getColumn(1).getInt64();
        p.max = std::max(p.max, q.getColumn(2).getInt64() - q.getColumn(1).getInt64());
        p.exposed += c.length() - length_within(busy, c);
      }
      int64_t best = -1;
      for (const auto& [name, p] : per) {
        if (best >= 0) {
          const auto& b = per[best];
          if (p.exposed < b.exposed || (p.exposed == b.exposed && p.ns <= b.ns)) continue;
        }
        best = name;
      }
      if (best >= 0) {
        SQLite::Statement n(db, "SELECT value FROM string WHERE id = ?");
        n.bind(1, best);
        if (n.executeStep()) top_api = n.getColumn(0).getString();
        top_api_count = per[best].count;
        top_api_ns = per[best].ns;
        top_api_max = per[best].max;
        top_api_exposed = per[best].exposed;
      }
    }
    bool startup = top_api_max > W / 2;

    std::string device =
        d.name.empty() ? fmt::format("GPU {}", d.device_id) : fmt::format("GPU {} ({})", d.device_id, d.name);
    std::string problem =
        fmt::format("Kernels keep {} busy only {} of the time: {} of the {} {} (threshold {}).", device,
                    format_percent(utilization), format_ns(K), format_ns(W),
                    steady ? "steady state" : restricted ? "selected iterations" : "capture window",
                    format_percent(threshold_));
    if (steady)
      problem += fmt::format(
          " Start-up is not judged: the first {} of the {} ({}: {}) precede the steady state; over the whole {} "
          "kernels are busy {}.",
          format_ns(d.startup_ns), restricted ? "selected iterations" : "capture window",
          startup_words(d.startup_cause), d.startup_evidence, restricted ? "selection" : "capture",
          format_percent(d.gpu_utilization));
    if (!chunk_util.empty())
      problem += fmt::format(" Cut into {} chunks of {}, {} are below the threshold", chunk_util.size(),
                             format_ns(chunk_len), low);
    if (best_len > 1)
      problem += fmt::format(", the longest low stretch running from +{} to +{} of the {}",
                             format_ns(best_start * chunk_len),
                             format_ns(std::min((best_start + best_len) * chunk_len, window.length())),
                             steady ? "steady state" : "window");
    if (!chunk_util.empty()) problem += ".";

    bool transfer_bound = busy_share >= threshold_ && copies > K;
    std::string rec;
    std::string waits_on;
    HostAttribution host;
    if (transfer_bound) {
      problem += fmt::format(
          " The GPU is not idle, though: memory copies and memsets occupy it {} of the time ({} of copies, "
          "{} moved), so counting every GPU activity (nsys 'time utilization') it is {} busy. "
          "The compute units wait on transfers: the job is transfer-bound, not compute-bound.",
          format_percent(static_cast<double>(copies) / static_cast<double>(W)), format_ns(d.memcpy_time_ns),
          format_bytes(d.memcpy_bytes), format_percent(busy_share));
      waits_on = "memcpy";
      rec =
          "Cut the transfers before anything else (see memcpy-bound, and pageable-memcpy if the host memory is not "
          "pinned): "
          "keep tensors on the GPU between steps instead of moving them back and forth (no `.cpu()`/`.to(\"cpu\")` "
          "round "
          "trips, no host offload of activations or optimizer state unless memory forces it), overlap the copies that "
          "remain with compute (`pin_memory=True`, `.to(device, non_blocking=True)`, a separate `torch.cuda.Stream` "
          "for "
          "prefetching), and prefer NVLink/peer copies over staging through host memory.";
    } else if (startup) {
      problem += fmt::format(
          " One call dominates: {} took {} ({} of the window) — start-up (CUDA context creation, lazy "
          "module loading, allocator growth) is inside the analysed window.",
          top_api, format_ns(top_api_max), format_percent(static_cast<double>(top_api_max) / static_cast<double>(W)));
      waits_on = "startup";
      rec =
          "Profile the steady state, not the start-up: run a few warm-up iterations before recording "
          "(`torch.profiler.schedule(wait=1, warmup=1, active=5)` with `prof.step()` every iteration, or "
          "`nsys profile --capture-range=cudaProfilerApi` with `torch.cuda.cudart().cudaProfilerStart()` after the "
          "warm-up), "
          "or restrict the analysis with `--iter-start`/`--iter-stop`; then judge the utilization again.";
    } else {
      waits_on = top.category;
      host = attribute_host(db, trace_id, d.device_id, window);
      problem += fmt::format(" Meanwhile the largest part of the window is {}: {} ({}).",
                             describe(top.category, !host.frames.empty()), format_ns(top.ns),
                             format_percent(static_cast<double>(top.ns) / static_cast<double>(W)));
      if (top.category == "runtime" && !top_api.empty())
        problem += fmt::format(" The busiest API while the GPU runs nothing is {} ({} calls, {}; {} of it with no GPU work).",
                               top_api, top_api_count, format_ns(top_api_ns), format_ns(top_api_exposed));
      rec = advice(top.category, top_api, s->workload.value_or(""));
      // The frames name the cause when nothing else was recorded, or when they say what they do;
      // generic host code beside framework ops keeps the framework advice.
      if (!host.frames.empty() && (top.category == "idle" || top.category == "cpu")) {
        std::string names;
        for (size_t i = 0; i < host.frames.size() && i < 3; ++i)
          names += fmt::format("{}`{}` ({} of GPU idle time, {} call{})", i ? ", " : "", host.frames[i].name,
                               format_ns(host.frames[i].idle_ns), host.frames[i].count,
                               host.frames[i].count == 1 ? "" : "s");
        problem += fmt::format(" While the GPU idles the host runs {} ({}): {}.", host.kind_words(),
                               host.source_words(), names);
        // Generic frames (the framework's own module calls, the main loop) only say where the host
        // was; the advice by category stays. Frames that say what they do change it.
        if (host.kind != "host_code") {
          waits_on = host.kind;
          rec = host_advice(host.kind, s->workload.value_or(""));
        }
      }
      // Host overhead per step does not grow with the batch; input loading and copies do.
      bool launch_like = (top.category == "cpu" || top.category == "idle" ||
                          (top.category == "runtime" && rec.find("launch-bound") != std::string::npos)) &&
                         host.frames.empty();
      if (launch_like) rec += " A larger batch per step also raises utilization when memory allows (see batch-size).";
    }

    Finding f = make_finding(FindingScope::of_trace(trace_id).on_device(d.device_id).of_rank(s->rank));
    f.problem = std::move(problem);
    f.recommendation = std::move(rec);
    // Filling the idle kernel time up to the target: target x W - K. Other findings (dataloader-stall,
    // launch-bound, host-sync, memcpy-bound...) estimate parts of the same gap more precisely.
    f.estimated_savings_ns = std::max<int64_t>(0, static_cast<int64_t>(target_ * static_cast<double>(W)) - K);
    if (startup) {
      // Start-up inside the window says nothing about the job's steady state: a diagnostic.
      f.diagnostic = true;
      f.estimated_savings_ns = 0;
    }
    // The window's idle time, claimed gap by gap: the findings that name the cause of a gap (host-sync,
    // dataloader-stall, launch-bound, allocation-churn, gpu-idle-gaps ...) are ranked on it first.
    f.generic = true;
    if (f.estimated_savings_ns > 0)
      add_idle_claims(f.claims, IdleGapKeys(facts, trace_id, d.device_id).idle_by_gap({window}),
                      f.estimated_savings_ns);
    f.savings_method = fmt::format(
        "{:.2f} x window - kernel busy time: the SM time left empty below the target utilization "
        "`target_utilization`; it overlaps the findings that name the cause",
        target_);
    f.confidence = startup ? 0.3 : transfer_bound ? 0.5 : 0.4;
    f.evidence["kernel_utilization"] = std::round(utilization * 10000) / 10000;
    if (steady) {
      f.evidence["whole_window_utilization"] = std::round(d.gpu_utilization * 10000) / 10000;
      f.evidence["startup_ns"] = d.startup_ns;
      f.evidence["startup_cause"] = d.startup_cause;
    }
    if (!host.frames.empty()) {
      nlohmann::ordered_json hf = nlohmann::ordered_json::array();
      for (const auto& fr : host.frames)
        hf.push_back({{"name", fr.name}, {"kind", fr.range_kind}, {"gpu_idle_ns", fr.idle_ns}, {"calls", fr.count}});
      f.evidence["host_while_idle"] = hf;
    }
    f.evidence["gpu_busy_share"] = std::round(busy_share * 10000) / 10000;
    f.evidence["window_ns"] = W;
    f.evidence["kernel_busy_ns"] = K;
    f.evidence["copy_busy_ns"] = copies;
    f.evidence["waits_on"] = waits_on;
    nlohmann::ordered_json bd = nlohmann::ordered_json::object();
    for (const auto& w : waits) bd[w.category] = w.ns;
    f.evidence["non_kernel_ns"] = bd;
    nlohmann::ordered_json cu = nlohmann::ordered_json::array();
    for (double u : chunk_util) cu.push_back(std::round(u * 1000) / 1000);
    f.evidence["chunk_ns"] = chunk_len;
    f.evidence["chunk_utilization"] = cu;
    f.evidence["low_chunks"] = low;
    if (!top_api.empty()) {
      f.evidence["top_api"] = top_api;
      f.evidence["top_api_ns"] = top_api_ns;
      f.evidence["top_api_max_ns"] = top_api_max;
    }
    sink.report(std::move(f));
  }

  static std::string describe(const std::string& c, bool frames_recorded) {
    if (c == "memcpy") return "memory copies";
    if (c == "memset") return "memsets";
    if (c == "runtime") return "CUDA runtime/driver calls on the host with no kernel running";
    if (c == "dataloader") return "the DataLoader with no kernel running";
    if (c == "cpu") return "host-side framework ops with no kernel running";
    if (frames_recorded) return "idle time: no kernel, copy, runtime call or framework op was running";
    return "idle time: neither the GPU nor any recorded host op was busy";
  }

  static std::string startup_words(const std::string& cause) {
    std::string out;
    size_t pos = 0;
    while (pos <= cause.size()) {
      size_t comma = cause.find(',', pos);
      std::string c = cause.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      std::string w = c == "context_creation"      ? "context creation"
                      : c == "lazy_initialization" ? "library/module initialisation"
                      : c == "warmup_range"        ? "a warm-up range"
                      : c == "warmup_iteration"    ? "a warm-up iteration"
                                                   : c;
      out += (out.empty() ? "" : ", ") + w;
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    return out;
  }

  // Advice by what the GPU waits on, worded for the workload (trace.workload): plain CUDA code
  // gets CUDA advice, inference no optimizer or training-step advice.
  static std::string advice(const std::string& c, const std::string& top_api, const std::string& workload) {
    const bool cuda = workload == "non_framework";
    const bool training = workload == "training";
    const char* step = training ? "training step" : workload == "inference" ? "inference step" : "iteration";
    if (c == "dataloader")
      return "Feed the GPU faster (see dataloader-stall): `DataLoader(num_workers=…, pin_memory=True, "
             "persistent_workers=True, "
             "prefetch_factor=…)`, lighter per-sample transforms, or GPU-side decoding/augmentation (e.g. NVIDIA "
             "DALI).";
    if (c == "memcpy" || c == "memset") {
      if (cuda)
        return "Reduce and overlap the copies (see memcpy-bound and pageable-memcpy): allocate host buffers pinned "
               "(cudaMallocHost/cudaHostRegister), issue cudaMemcpyAsync on a stream other than the compute stream "
               "and keep data resident on the GPU between kernels.";
      return "Reduce and overlap the copies (see memcpy-bound and pageable-memcpy): pinned memory with "
             "`.to(device, non_blocking=True)`, keep tensors on the GPU, prefetch on a side stream.";
    }
    if (c == "runtime") {
      auto has = [&](const char* t) { return top_api.find(t) != std::string::npos; };
      if (has("Synchronize") || has("EventQuery") || has("StreamQuery")) {
        if (cuda)
          return "The host waits on the GPU and then feeds it late (see host-sync): drop cudaDeviceSynchronize/"
                 "cudaStreamSynchronize between dependent kernels on one stream (stream order already serialises "
                 "them), wait on events only where the host needs a result, and queue the next work before waiting.";
        return fmt::format(
            "The host waits on the GPU and then feeds it late (see host-sync): remove per-{} synchronizations "
            "(`.item()`, `.cpu()`, `print` of tensors, `torch.cuda.synchronize()`) or move them off the critical "
            "path.",
            step);
      }
      if (has("Memcpy"))
        return cuda ? "The host is blocked in copy calls (see sync-memcpy and pageable-memcpy): copy from pinned host "
                      "memory with cudaMemcpyAsync on a non-default stream and read results back only when needed."
                    : "The host is blocked in copy calls (see sync-memcpy and pageable-memcpy): copies from pageable "
                      "memory and device-to-host reads wait for the GPU; pin host buffers (`pin_memory=True`), use "
                      "`.to(device, non_blocking=True)`, and avoid reading results back every step.";
      if (has("Malloc") || has("Free") || has("Create") || has("Destroy") || has("Register") || has("Module"))
        return std::string("The host spends its time allocating or setting up (cudaMalloc/cudaFree, stream/event "
                           "creation, module loading) after start-up: allocate once and reuse (see allocation-churn; ") +
               (cuda ? "a memory pool with cudaMallocAsync/cudaFreeAsync"
                     : "the caching allocator without `torch.cuda.empty_cache()` in the loop") +
               ") and create streams/events once.";
      if (cuda)
        return "The host spends its time launching work (see launch-bound): capture the repeated kernel sequence in "
               "a CUDA graph (cudaStreamBeginCapture … cudaGraphLaunch), fuse small kernels, and give each launch "
               "more work.";
      return fmt::format(
          "The host spends its time launching work (see launch-bound): fuse small ops with `torch.compile(model)`, "
          "replay whole {}s with CUDA graphs (`torch.compile(model, mode=\"reduce-overhead\")` or "
          "`torch.cuda.graphs`){}.",
          step, training ? ", use foreach/fused optimizers (`torch.optim.AdamW(..., fused=True)`)" : "");
    }
    if (c == "cpu")
      return "Host-side framework overhead leaves the GPU waiting (see launch-bound): `torch.compile(model)` to cut "
             "Python and "
             "dispatcher overhead, CUDA graphs for static shapes (`mode=\"reduce-overhead\"`), and more work per "
             "kernel.";
    if (cuda)
      return "Nothing on the host was recorded while the GPU idled: the time goes to host code between CUDA calls "
             "(input preparation, I/O, host-side computation, MPI waits). To find it, add NVTX ranges around the "
             "phases of the code or sample the host (`nsys profile --sample=cpu`); then overlap that work with the "
             "GPU (asynchronous copies and launches on streams, double buffering).";
    return "Nothing on the host was recorded while the GPU idled: the time goes to code outside profiled ops — in "
           "eager "
           "mode typically Python between ops (see launch-bound; `torch.compile(model)` or CUDA graphs remove it), "
           "else data "
           "preparation, logging, checkpointing or waiting for other processes. To find it, add "
           "`torch.profiler.record_function(\"…\")` or NVTX ranges, or sample the host (`py-spy`, `nsys profile "
           "--sample=cpu`).";
  }

  // What the host ran while the device idled, from Python frames (with_stack), user annotations
  // and NVTX ranges: the frames during most of which the GPU was idle, by idle time covered.
  struct HostFrame {
    std::string name, range_kind;
    int64_t idle_ns = 0, dur_ns = 0, count = 0;
  };
  struct HostAttribution {
    std::vector<HostFrame> frames;
    std::string kind;  // 'preprocessing', 'data_loading', 'logging_checkpointing', 'host_code'
    bool python = false, annotated = false;
    std::string kind_words() const {
      if (kind == "preprocessing") return "input preprocessing";
      if (kind == "data_loading") return "data loading";
      if (kind == "logging_checkpointing") return "logging/checkpointing";
      return "host code";
    }
    std::string source_words() const {
      if (python && annotated) return "Python frames and annotations recorded with the trace";
      return python ? "Python frames recorded with with_stack=True" : "annotations recorded with the trace";
    }
  };

  static std::string classify_frame(const std::string& name) {
    std::string n;
    for (char c : name) n.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    auto any = [&](std::initializer_list<const char*> words) {
      for (const char* w : words)
        if (n.find(w) != std::string::npos) return true;
      return false;
    };
    if (any({"decode", "video", "image", "imread", "jpeg", "pil/", "pil.", "cv2", "torchvision", "transform", "resize",
             "normaliz", "augment", "crop", "tokeniz", "preprocess", "audio", "decord", "torchcodec", "librosa",
             "read_frame", "frames"}))
      return "preprocessing";
    if (any({"dataloader", "_next_data", "collate", "dataset", "__getitem__", "fetch"})) return "data_loading";
    if (any({"checkpoint", "save", "logging", "log_", "wandb", "tensorboard", "print"})) return "logging_checkpointing";
    return "host_code";
  }

  static constexpr int64_t kNoId = INT64_MIN;

  static HostAttribution attribute_host(SQLite::Database& db, int64_t trace_id, int64_t device_id, Interval w) {
    HostAttribution out;
    if (w.length() <= 0) return out;
    std::vector<Interval> busy;
    std::set<int64_t> pids;
    for (const char* table : {"_kernel", "_memcpy", "_memset"}) {
      SQLite::Statement q(db, fmt::format("SELECT start_ns, start_ns + dur_ns, pid FROM {} WHERE trace_id = ? AND "
                                          "device_id IS ? AND start_ns < ? AND start_ns + dur_ns > ?",
                                          table));
      q.bind(1, trace_id);
      q.bind(2, device_id);
      q.bind(3, w.end);
      q.bind(4, w.start);
      while (q.executeStep()) {
        busy.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64()});
        if (!q.isColumnNull(2)) pids.insert(q.getColumn(2).getInt64());
      }
    }
    busy = union_intervals(std::move(busy));
    std::vector<Interval> idle;
    int64_t t = w.start;
    for (const auto& b : busy) {
      if (b.start > t) idle.push_back({t, std::min(b.start, w.end)});
      t = std::max(t, b.end);
    }
    if (t < w.end) idle.push_back({t, w.end});
    int64_t idle_total = total_length(idle);
    if (idle_total <= 0) return out;
    // Only the threads that launched this device's work: a progress-bar monitor or another
    // process idles too, and says nothing about why this GPU waits.
    std::set<std::pair<int64_t, int64_t>> threads;
    {
      SQLite::Statement q(db,
                          "SELECT DISTINCT a.pid, a.tid FROM _api_call a WHERE a.trace_id = ?1 AND a.id IN "
                          "(SELECT api_call_id FROM _kernel WHERE trace_id = ?1 AND device_id IS ?2 AND "
                          "api_call_id IS NOT NULL)");
      q.bind(1, trace_id);
      q.bind(2, device_id);
      while (q.executeStep())
        threads.insert({q.isColumnNull(0) ? kNoId : q.getColumn(0).getInt64(),
                        q.isColumnNull(1) ? kNoId : q.getColumn(1).getInt64()});
    }
    std::map<int64_t, HostFrame> by_name;
    std::map<int64_t, std::vector<Interval>> spans;  // a recursive frame nests in itself: union per name
    SQLite::Statement q(db,
                        "SELECT r.name_id, s.value, r.kind, r.start_ns, r.start_ns + r.dur_ns, r.pid, r.tid FROM _range r "
                        "JOIN string s ON s.id = r.name_id WHERE r.trace_id = ? AND r.kind IN ('python_function', "
                        "'user_annotation', 'nvtx') AND r.start_ns < ? AND r.start_ns + r.dur_ns > ? "
                        "AND s.value NOT LIKE 'ProfilerStep#%' AND s.value NOT LIKE 'Optimizer.%' "
                        "AND instr(s.value, 'DataLoader') = 0");  // the breakdown's 'dataloader' already counts those
    q.bind(1, trace_id);
    q.bind(2, w.end);
    q.bind(3, w.start);
    while (q.executeStep()) {
      std::pair<int64_t, int64_t> th{q.isColumnNull(5) ? kNoId : q.getColumn(5).getInt64(),
                                     q.isColumnNull(6) ? kNoId : q.getColumn(6).getInt64()};
      if (!threads.empty() && !threads.contains(th)) continue;
      if (threads.empty() && !pids.empty() && th.first != kNoId && !pids.contains(th.first)) continue;
      Interval r{std::max(q.getColumn(3).getInt64(), w.start), std::min(q.getColumn(4).getInt64(), w.end)};
      auto& fr = by_name[q.getColumn(0).getInt64()];
      if (fr.count == 0) {
        fr.name = q.getColumn(1).getString();
        fr.range_kind = q.getColumn(2).getString();
      }
      ++fr.count;
      spans[q.getColumn(0).getInt64()].push_back(r);
    }
    for (auto& [id, list] : spans) {
      auto u = union_intervals(std::move(list));
      auto& fr = by_name[id];
      fr.dur_ns = total_length(u);
      for (const auto& iv : u) fr.idle_ns += length_within(idle, iv);
    }
    // A frame names the cause when the GPU idled through most of it (an outer loop or the
    // forward pass covers busy time too) and it covers a fair part of all idle time.
    for (auto& [id, fr] : by_name) {
      if (fr.dur_ns <= 0 || 5 * fr.idle_ns < 4 * fr.dur_ns || 10 * fr.idle_ns < idle_total) continue;
      out.python = out.python || fr.range_kind == "python_function";
      out.annotated = out.annotated || fr.range_kind != "python_function";
      out.frames.push_back(fr);
    }
    std::sort(out.frames.begin(), out.frames.end(), [](const HostFrame& a, const HostFrame& b) {
      return a.idle_ns > b.idle_ns || (a.idle_ns == b.idle_ns && a.name < b.name);
    });
    if (out.frames.size() > 5) out.frames.resize(5);
    // The kind of the first frame that says what it does (outer frames are often generic).
    out.kind = "host_code";
    for (const auto& fr : out.frames) {
      auto k = classify_frame(fr.name);
      if (k != "host_code") {
        out.kind = k;
        break;
      }
    }
    return out;
  }

  static std::string host_advice(const std::string& kind, const std::string& workload) {
    const bool inference = workload == "inference";
    if (kind == "preprocessing")
      return std::string(
                 "Take input preprocessing off the GPU's critical path: decode and transform in DataLoader worker "
                 "processes (`DataLoader(num_workers=N, pin_memory=True, prefetch_factor=2)`) so the next input is "
                 "ready before the GPU finishes the current one; decode on the GPU (`torchvision.io.decode_jpeg(..., "
                 "device=\"cuda\")`, NVIDIA DALI, NVDEC video decoding through torchcodec or PyNvVideoCodec); or cache "
                 "preprocessed inputs when the same inputs come back.") +
             (inference ? " For a serving loop, preprocess request N+1 on a separate thread or process while the "
                          "model runs request N, and batch requests."
                        : "");
    if (kind == "data_loading")
      return "Load data in background workers so the GPU never waits for it (see dataloader-stall): "
             "`DataLoader(num_workers=N, pin_memory=True, persistent_workers=True)`, a cheaper `__getitem__`, "
             "or data already in memory or on the GPU.";
    if (kind == "logging_checkpointing")
      return "Move logging and checkpointing off the critical path: do it every N iterations, from a background "
             "thread or process (asynchronous checkpointing, e.g. torch.distributed.checkpoint.async_save), and "
             "keep metrics on the GPU until they are logged.";
    return "The named host code runs while the GPU waits: overlap it with GPU work (run it in a background thread "
           "or process, or start the GPU work it does not depend on first), make it cheaper, or move it out of "
           "the loop.";
  }

  // Kernel-busy share of each of `chunks_` equal chunks of `window` on one device.
  std::vector<double> chunk_utilization(SQLite::Database& db, int64_t trace_id, int64_t device_id,
                                        Interval window) const {
    std::vector<double> out;
    if (window.length() <= 0) return out;
    int64_t len = (window.length() + chunks_ - 1) / chunks_;
    if (len <= 0) return out;
    size_t n = static_cast<size_t>((window.length() + len - 1) / len);
    std::vector<int64_t> busy(n, 0);
    SQLite::Statement q(db,
                        "SELECT start_ns, start_ns + dur_ns FROM _kernel WHERE trace_id = ? AND device_id IS ? "
                        "AND start_ns < ? AND start_ns + dur_ns > ? ORDER BY start_ns");
    q.bind(1, trace_id);
    q.bind(2, device_id);
    q.bind(3, window.end);
    q.bind(4, window.start);
    auto add = [&](Interval iv) {
      iv.start = std::max(iv.start, window.start);
      iv.end = std::min(iv.end, window.end);
      for (int64_t t = iv.start; t < iv.end;) {
        size_t c = static_cast<size_t>((t - window.start) / len);
        int64_t chunk_end = window.start + static_cast<int64_t>(c + 1) * len;
        int64_t e = std::min(iv.end, chunk_end);
        busy[c] += e - t;
        t = e;
      }
    };
    std::optional<Interval> cur;  // streaming union of the sorted kernels
    while (q.executeStep()) {
      Interval k{q.getColumn(0).getInt64(), q.getColumn(1).getInt64()};
      if (cur && k.start <= cur->end) {
        cur->end = std::max(cur->end, k.end);
      } else {
        if (cur) add(*cur);
        cur = k;
      }
    }
    if (cur) add(*cur);
    for (size_t c = 0; c < n; ++c) {
      int64_t c_start = window.start + static_cast<int64_t>(c) * len;
      int64_t c_len = std::min(len, window.end - c_start);
      out.push_back(c_len > 0 ? static_cast<double>(busy[c]) / static_cast<double>(c_len) : 0.0);
    }
    return out;
  }

  double threshold_;
  int64_t chunks_;
  double target_;
  int64_t min_kernels_;
  int64_t min_kernel_busy_ns_;
};

}  // namespace

DetectorInfo gpu_underutilized_info() {
  return {
      "gpu-underutilized",
      {{"threshold", 0.5,
        "report a device whose kernels are busy less than this share of the window (nsys gpu_time_util, TensorBoard "
        "plugin)"},
       {"chunks", 30, "number of equal chunks the window is cut into for the per-chunk utilization (nsys default 30)"},
       {"target_utilization", 0.5, "utilization the estimate assumes a fix reaches"},
       {"min_kernels", 20, "ignore devices that ran fewer kernels than this (too little GPU work to judge)"},
       {"min_kernel_busy_ns", 100000,
        "ignore devices whose kernels are busy less than this in the judged window: a handful of small kernels, a "
        "toy or an excerpt (small-capture's min_kernel_busy_ns)"}},
      [](const OptionValues& o) { return std::make_unique<GpuUnderutilized>(o); }};
}

}  // namespace proflint
