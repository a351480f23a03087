// engine/derive/startup.hpp — start-up versus steady state, and the kind of workload.
//
// A capture often begins with one-time work that says nothing about how the job runs: CUDA
// context creation (the first runtime call of a process, whatever its name, takes 0.2–30 s),
// lazy module loading and library initialisation (the first cuBLAS/cuDNN call, the first launch
// of a module: one cudaFree/cudaLaunchKernel of seconds), and warm-up iterations. Judged over the
// whole window, that time reads as an idle GPU and buries the real problems below thresholds.
//
// Start-up is a prefix of the analysed window, found per device from these candidates:
//   context_creation     an API call of >= kStartupCallNs on the device's host processes before the
//                        device's first GPU activity: start-up lasts until that first activity;
//   lazy_initialization  an API call of >= kStartupCallNs that is a one-off: >= kOutlierFactor x the
//                        median of its name, or one of fewer than kMinCallsForMedian calls of
//                        that name (two cudaFree of 0.2 and 1 s initialising cuBLAS have no
//                        meaningful median). Calls that wait for device work (copies, memsets,
//                        synchronizations, queries, waits) are never initialisation;
//   warmup_range         a user annotation or NVTX range whose name says warm-up ("warmup",
//                        "warm_up", "warm-up", "warm up", any case);
//   warmup_iteration     one of the first two iterations lasting >= 2 x the median iteration
//                        (only with >= 3 iterations);
//   graph_capture        the host replays CUDA/HIP graphs (>= 2 *GraphLaunch calls) that it captured
//                        or instantiated in the window before the first replay: start-up lasts
//                        until the first replay (applied after the chain below, without its
//                        contiguity test: eager warm-up, capture and instantiation precede the
//                        replays by design).
// The candidates chain in time order: one extends the prefix when the time between the prefix's
// end and its start is no longer than the candidate itself (start-up is contiguous; a slow call
// long after the job settled belongs to the steady state). When nothing of the device's GPU work
// starts after the prefix, there is nothing to separate and the whole window counts as steady.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/common/intervals.hpp"
#include "engine/derive/model.hpp"

namespace proflint {

inline constexpr int64_t kStartupCallNs = 50'000'000;  // 50 ms: far above any steady-state API call
inline constexpr int64_t kOutlierFactor = 20;
inline constexpr int64_t kMinCallsForMedian = 5;

// The window the breakdown's iteration -1 covers: the capture, or the selected iterations' span
// under --iter-start/--iter-stop.
Interval analysed_window(const TraceData& t);

// One SteadyState per device with GPU activity (none when the trace has no GPU work).
std::vector<SteadyState> find_startup(const TraceData& t);

// 'non_framework' when GPU work was recorded and the trace names no framework (trace.framework is
// set by the importers from PyTorch CPU ops or emit_nvtx ranges); else 'training' when any op runs
// in a backward pass or an optimizer step, 'inference' when framework ops exist without either,
// '' otherwise.
std::string_view classify_workload(const TraceData& t);

}  // namespace proflint
