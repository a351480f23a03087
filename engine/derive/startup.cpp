// engine/derive/startup.cpp — start-up span and workload kind (rules in startup.hpp).
#include "engine/derive/startup.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>
#include <string>
#include <unordered_map>

#include "engine/common/ascii.hpp"
#include "engine/derive/breakdown.hpp"

namespace proflint {

namespace {

int64_t device_of(const GpuRec& g) { return g.device_id == kNone ? 0 : g.device_id; }

bool says_warmup(std::string_view name) {
  for (std::string_view w : {"warmup", "warm_up", "warm-up", "warm up"})
    if (contains_ascii_nocase(name, w)) return true;
  return false;
}

// Calls whose duration is GPU work they wait for (a copy, a synchronization), never initialisation.
bool waits_on_device(const std::string& name) {
  for (const char* w : {"Memcpy", "Memset", "Synchronize", "Query", "Wait"})
    if (name.find(w) != std::string::npos) return true;
  return false;
}

std::string describe(const std::string& name, int64_t ns) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " %.1f ms", static_cast<double>(ns) / 1e6);
  return name + buf;
}

struct Candidate {
  int64_t start = 0, end = 0;
  std::string_view cause;
  std::string label;
};

}  // namespace

Interval analysed_window(const TraceData& t) {
  int64_t lo = t.start_ns, hi = t.end_ns;
  if (lo == kNone || hi == kNone) {
    lo = INT64_MAX;
    hi = INT64_MIN;
    auto see = [&](int64_t s, int64_t e) {
      lo = std::min(lo, s);
      hi = std::max(hi, e);
    };
    for (const auto& r : t.ranges) see(r.start, r.end);
    for (const auto& a : t.apis) see(a.start, a.end);
    for (const auto& g : t.gpu) see(g.start, g.end);
    if (lo > hi) lo = hi = 0;
  }
  Interval whole{lo, hi};
  if (t.options && (t.options->iter_start || t.options->iter_stop)) {
    auto iter_windows = iteration_windows(t);
    whole = {0, 0};
    bool any = false;
    for (size_t k = 0; k < iter_windows.size(); ++k) {
      if (!iteration_selected(t.options, static_cast<int64_t>(k))) continue;
      whole = any ? Interval{std::min(whole.start, iter_windows[k].start), std::max(whole.end, iter_windows[k].end)}
                  : iter_windows[k];
      any = true;
    }
  }
  return whole;
}

std::vector<SteadyState> find_startup(const TraceData& t) {
  std::vector<SteadyState> out;
  const Interval window = analysed_window(t);
  std::set<int64_t> devices;
  for (const auto& g : t.gpu) devices.insert(device_of(g));

  // Median duration per API name, for the names that have a call long enough to matter.
  std::unordered_map<int64_t, int64_t> median_by_name, calls_by_name;
  {
    std::unordered_map<int64_t, std::vector<int64_t>> durs;
    for (const auto& a : t.apis)
      if (a.end - a.start >= kStartupCallNs) durs[a.name_id];
    for (const auto& a : t.apis)
      if (auto it = durs.find(a.name_id); it != durs.end()) it->second.push_back(a.end - a.start);
    for (auto& [name, v] : durs) {
      calls_by_name[name] = static_cast<int64_t>(v.size());
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
      median_by_name[name] = v[v.size() / 2];
    }
  }
  // Warm-up iterations: the first two when they are >= 2x the median iteration.
  std::vector<Candidate> shared;
  {
    auto windows = iteration_windows(t);
    if (windows.size() >= 3) {
      std::vector<int64_t> d;
      for (const auto& w : windows) d.push_back(w.length());
      std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2), d.end());
      int64_t median = d[d.size() / 2];
      for (size_t k = 0; k < 2 && k + 1 < windows.size(); ++k) {
        if (windows[k].length() < 2 * median) break;
        shared.push_back({windows[k].start, windows[k].end, "warmup_iteration",
                          describe("iteration " + std::to_string(k), windows[k].length())});
      }
    }
  }

  for (int64_t device : devices) {
    SteadyState s;
    s.device_id = device;
    s.window_start = window.start;
    s.window_end = window.end;
    s.steady_start = window.start;
    std::set<int64_t> host_pids;
    int64_t first_gpu = INT64_MAX;
    for (const auto& g : t.gpu) {
      if (device_of(g) != device) continue;
      if (g.api >= 0) host_pids.insert(t.apis[static_cast<size_t>(g.api)].pid);
      if (g.start >= window.start) first_gpu = std::min(first_gpu, g.start);
    }
    auto host = [&](int64_t pid) { return host_pids.empty() || pid == kNone || host_pids.contains(pid); };

    std::vector<Candidate> cands = shared;
    const ApiRec* context = nullptr;
    for (const auto& a : t.apis) {
      int64_t dur = a.end - a.start;
      if (dur < kStartupCallNs || !host(a.pid) || a.end <= window.start) continue;
      if (a.start < first_gpu) {
        if (!context || dur > context->end - context->start) context = &a;
        continue;
      }
      auto med = median_by_name.find(a.name_id);
      auto calls = calls_by_name.find(a.name_id);
      bool rare = calls != calls_by_name.end() && calls->second < kMinCallsForMedian;
      if (waits_on_device(t.text(a.name_id))) continue;
      if (rare || (med != median_by_name.end() && dur >= kOutlierFactor * med->second))
        cands.push_back({a.start, a.end, "lazy_initialization", describe(t.text(a.name_id), dur)});
    }
    for (const auto& r : t.ranges) {
      if ((r.kind != RangeKind::user_annotation && r.kind != RangeKind::nvtx) || !host(r.pid)) continue;
      if (r.end <= window.start || !says_warmup(t.text(r.name_id))) continue;
      cands.push_back({r.start, r.end, "warmup_range", describe(t.text(r.name_id), r.end - r.start)});
    }
    std::sort(cands.begin(), cands.end(),
              [](const Candidate& a, const Candidate& b) { return a.start < b.start || (a.start == b.start && a.end > b.end); });

    int64_t prefix = window.start;
    std::vector<std::string_view> causes;
    int64_t longest = 0;
    auto take = [&](int64_t end, std::string_view cause, const std::string& label, int64_t len) {
      prefix = std::max(prefix, end);
      if (std::find(causes.begin(), causes.end(), cause) == causes.end()) causes.push_back(cause);
      if (len > longest) {
        longest = len;
        s.evidence = label;
      }
    };
    if (context && first_gpu != INT64_MAX)
      take(first_gpu, "context_creation", describe(t.text(context->name_id), context->end - context->start),
           context->end - context->start);
    for (const auto& c : cands) {
      if (c.end <= prefix) continue;
      if (std::max<int64_t>(0, c.start - prefix) > c.end - c.start) continue;
      take(c.end, c.cause, c.label, c.end - c.start);
    }
    // A job that replays CUDA/HIP graphs it captured inside the window runs eagerly first (warm-up
    // on a side stream, then the capture and the instantiation): until the first replay that is
    // set-up by design, however long, and the replays are the steady state.
    {
      int64_t first_replay = INT64_MAX, replays = 0, capture = INT64_MAX;
      for (const auto& a : t.apis) {
        if (!host(a.pid) || a.start < window.start || a.start >= window.end) continue;
        const std::string& name = t.text(a.name_id);
        if (name.starts_with("cudaGraphLaunch") || name.starts_with("hipGraphLaunch") ||
            name.starts_with("cuGraphLaunch")) {
          ++replays;
          first_replay = std::min(first_replay, a.start);
        } else if (name.find("StreamBeginCapture") != std::string::npos ||
                   name.find("GraphInstantiate") != std::string::npos) {
          capture = std::min(capture, a.start);
        }
      }
      if (replays >= 2 && capture < first_replay && first_replay > prefix)
        take(first_replay, "graph_capture",
             describe("graph capture before the first of " + std::to_string(replays) + " replays",
                      first_replay - std::max(prefix, window.start)),
             0);
    }
    prefix = std::min(prefix, window.end);
    bool work_after = false;
    for (const auto& g : t.gpu)
      if (device_of(g) == device && g.start >= prefix && g.start < window.end) {
        work_after = true;
        break;
      }
    if (prefix > window.start && work_after) {
      s.steady_start = prefix;
      for (auto c : causes) s.cause += (s.cause.empty() ? "" : ",") + std::string(c);
    } else {
      s.evidence.clear();
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::string_view classify_workload(const TraceData& t) {
  // NVTX ranges of a library (RAPIDS, a CUDA code's own annotations) become ops too: only a trace
  // that names a framework (PyTorch CPU ops, its emit_nvtx ranges) has framework ops.
  if (t.framework.empty()) return t.gpu.empty() ? "" : "non_framework";
  bool framework_ops = false;
  for (const auto& op : t.ops) {
    if (op.range < 0) continue;  // unassociated:<name> placeholders are not framework ops
    framework_ops = true;
    if (op.pass == OpPass::bwd || op.pass == OpPass::optimizer) return "training";
  }
  for (const auto& r : t.ranges)
    if (r.marker == MarkerKind::optimizer || (r.backward_name && r.kind == RangeKind::cpu_op)) return "training";
  return framework_ops ? "inference" : "";
}

}  // namespace proflint
