// engine/derive/breakdown.hpp — where the wall time went, per device and iteration.
//
// A priority sweep gives every instant of a window to the highest-priority activity running then,
// so the categories of one (device, iteration) add up exactly to the window length:
//
//   kernel_tc > kernel_other > communication > memcpy > memset > runtime > dataloader > cpu > idle
//
// GPU side (that device only): Tensor Core kernels, other compute kernels, communication kernels
// (NCCL & co. — below compute, so 'communication' is the *exposed* part not hidden by compute),
// memcpy, memset. Host side (processes that launched work on the device): runtime/driver API
// calls, DataLoader annotations, any other CPU op or annotation (not python frames, not the
// iteration markers themselves, which would cover everything). What is left is idle.
//
// Windows: iteration -1 is the capture window [trace.start_ns, trace.end_ns). Iteration k is
// [max(start_k, end of window k-1), max(end_k, gpu_end_k)): it keeps the GPU tail of the work it
// launched and never overlaps the previous window. With --iter-start/--iter-stop only the selected
// iterations get rows and -1 covers the selected span instead of the capture window.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/common/intervals.hpp"
#include "engine/derive/model.hpp"

namespace proflint {

// kBreakdownCategories and kSteadyStateRows: engine/model/model.hpp (the store writes them too).

struct BreakdownRow {
  int64_t device_id = -1;
  int64_t iteration = -1;
  std::string_view category;
  int64_t time_ns = 0;
};

// The windows described above, indexed like trace.iterations.
std::vector<Interval> iteration_windows(const TraceData& trace);

std::vector<BreakdownRow> compute_breakdown(const TraceData& trace);

}  // namespace proflint
