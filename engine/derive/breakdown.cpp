// engine/derive/breakdown.cpp — the priority sweep over GPU and host activity (rules in breakdown.hpp).
#include "engine/derive/breakdown.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "engine/derive/startup.hpp"

namespace proflint {

namespace {

enum Category : int { kKernelTc, kKernelOther, kCommunication, kMemcpy, kMemset, kRuntime, kDataloader, kCpu, kIdle };

int gpu_category(const GpuRec& g) {
  if (g.kind == GpuKind::memcpy) return kMemcpy;
  if (g.kind == GpuKind::memset) return kMemset;
  if (g.category_text() == "communication") return kCommunication;
  return g.tensor_core ? kKernelTc : kKernelOther;
}

bool counts_as_cpu(const RangeRec& r) {
  if (r.iteration_marker || r.marker == MarkerKind::profiler_step) return false;
  return r.kind == RangeKind::cpu_op || r.kind == RangeKind::user_annotation || r.kind == RangeKind::nvtx ||
         r.kind == RangeKind::other;
}

int64_t device_of(const GpuRec& g) { return g.device_id == kNone ? 0 : g.device_id; }

}  // namespace

std::vector<Interval> iteration_windows(const TraceData& t) {
  std::vector<Interval> out;
  int64_t prev_end = INT64_MIN;
  for (const auto& it : t.iterations) {
    int64_t start = std::max(it.start, prev_end);
    int64_t end = std::max({it.end, it.gpu_end == kNone ? it.end : it.gpu_end, start});
    out.push_back({start, end});
    prev_end = end;
  }
  return out;
}

std::vector<BreakdownRow> compute_breakdown(const TraceData& t) {
  std::vector<std::pair<int64_t, Interval>> windows;  // (iteration, window)
  auto iter_windows = iteration_windows(t);
  Interval whole = analysed_window(t);
  windows.push_back({-1, whole});
  for (size_t k = 0; k < iter_windows.size(); ++k)
    if (iteration_selected(t.options, static_cast<int64_t>(k))) windows.push_back({static_cast<int64_t>(k), iter_windows[k]});

  std::set<int64_t> devices;
  for (const auto& g : t.gpu) devices.insert(device_of(g));
  if (devices.empty()) devices.insert(-1);

  std::vector<BreakdownRow> rows;
  for (int64_t device : devices) {
    PrioritySweep::Builder intervals(kIdle);
    std::set<int64_t> host_pids;
    for (const auto& g : t.gpu) {
      if (device_of(g) != device) continue;
      intervals.add(g.start, g.end, gpu_category(g));
      if (g.api >= 0) host_pids.insert(t.apis[static_cast<size_t>(g.api)].pid);
    }
    // Host activity of the processes that drove this device (all processes when unknown).
    auto host = [&](int64_t pid) { return host_pids.empty() || pid == kNone || host_pids.contains(pid); };
    for (const auto& a : t.apis)
      if (host(a.pid)) intervals.add(a.start, a.end, kRuntime);
    for (const auto& r : t.ranges) {
      if (!host(r.pid)) continue;
      if (r.marker == MarkerKind::dataloader) intervals.add(r.start, r.end, kDataloader);
      else if (counts_as_cpu(r)) intervals.add(r.start, r.end, kCpu);
    }
    // The windows, then the steady-state span of the device (after start-up, startup.hpp), from
    // one walk over its intervals.
    std::vector<Interval> spans;
    std::vector<int64_t> iterations;
    for (const auto& [iteration, window] : windows) {
      spans.push_back(window);
      iterations.push_back(iteration);
    }
    for (const auto& st : t.steady) {
      if (st.device_id != device) continue;
      spans.push_back({st.steady_start, st.window_end});
      iterations.push_back(kSteadyStateRows);
    }
    auto totals = PrioritySweep::totals_per_window(std::move(intervals), kIdle, spans);
    for (size_t w = 0; w < spans.size(); ++w)
      for (size_t c = 0; c < kBreakdownCategories.size(); ++c)
        rows.push_back({device, iterations[w], kBreakdownCategories[c], totals[w][c]});
  }
  return rows;
}

}  // namespace proflint
