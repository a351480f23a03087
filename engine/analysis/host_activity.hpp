// engine/analysis/host_activity.hpp — what io-bound-input and cpu-hotspot-idle share: the GPU's
// idle time in its steady state, and the host threads that feed it.
//
// "The thread that launches work" is every host thread with a CUDA/HIP call that launched a
// kernel, copy or memset on the device (api_call_id of the GPU rows, derived by correlation).
// Read through Facts only (schema/0007_host_activity.sql and the core tables).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/analysis/facts.hpp"
#include "engine/analysis/idle_claims.hpp"
#include "engine/common/intervals.hpp"

namespace proflint {

struct HostThread {
  int64_t pid = 0, tid = 0;
  auto operator<=>(const HostThread&) const = default;
};

struct DeviceIdle {
  int64_t device_id = 0;
  Interval steady;             // the device's steady-state window (summary)
  std::vector<Interval> idle;  // steady window minus busy time (sorted, disjoint)
  std::set<HostThread> launchers;
};

// The idle time and launching threads of `device_id` in `trace_id`; `keys` gives the busy time.
DeviceIdle device_idle(const Facts& facts, int64_t trace_id, int64_t device_id, const Interval& steady,
                       const IdleGapKeys& keys);

// CUDA/HIP API calls of one thread, as sorted disjoint intervals: OS calls made inside them are
// the driver's (a synchronize blocking in ioctl or poll), not the program's.
std::vector<Interval> api_time_of(const Facts& facts, int64_t trace_id, const HostThread& t);

// One OS call name's part of the GPU-idle time a launching thread spent blocked.
struct OsWaitTotal {
  std::string name, category;  // os_call.name, os_call.category ('io', 'wait' or 'sleep')
  int64_t calls = 0;           // calls that overlapped GPU-idle time
  int64_t gpu_idle_ns = 0;     // GPU-idle time inside them, outside the thread's CUDA calls
  int64_t example = -1;        // os_call.id of the call with the most such time
  int64_t longest = 0;
  std::string caller;          // os_call_caller.caller behind most of that time; empty: no backtrace
};

struct HostWaits {
  DeviceIdle idle;
  std::vector<OsWaitTotal> calls;  // most GPU-idle time first, then by name
  std::vector<Interval> blocked;   // GPU-idle time with a launching thread blocked (sorted, disjoint)
  std::map<std::string, std::vector<Interval>> blocked_by_category;  // the same, per call category (sorted, disjoint each)
  std::map<HostThread, int64_t> blocked_by_thread;  // per launching thread that was blocked: its part
};

// What io-bound-input measures (and ctx:host_waits returns): the GPU-idle time in `steady` during
// which a launching thread was inside a blocking OS call (category io, wait or sleep; made by the
// program, nesting level 0) and not inside one of its CUDA calls, per call name.
HostWaits host_waits(const Facts& facts, int64_t trace_id, int64_t device_id, const Interval& steady,
                     const IdleGapKeys& keys);

// One innermost function of the launching threads' samples taken while the GPU idled.
struct CpuHotspot {
  std::string function;  // cpu_sample.leaf ('<no call chain>' when the sample has none)
  int64_t samples = 0;
  std::vector<int64_t> sample_ids, sample_ts;
};

struct CpuHotspots {
  DeviceIdle idle;
  int64_t period_ns = 0;       // median spacing of one thread's consecutive samples (0: too few)
  int64_t samples_in_window = 0, samples_while_idle = 0;
  std::map<HostThread, int64_t> idle_samples_by_thread;  // launching threads sampled in GPU-idle time
  std::vector<CpuHotspot> functions;  // most samples first, then by name
};

// What cpu-hotspot-idle measures (and ctx:cpu_hotspots returns).
CpuHotspots cpu_hotspots(const Facts& facts, int64_t trace_id, int64_t device_id, const Interval& steady,
                         const IdleGapKeys& keys);

// Both of the above for every device of `s` that ran work, for the summary and the reports
// (TraceSummary::host_activity); empty when the trace has no os_call nor cpu_sample rows.
HostActivitySummary summarize_host_activity(SQLite::Database& db, const TraceSummary& s);

// The name of a thread for text ("thread 1234 'python'", or "thread 1234").
std::string thread_label(const Facts& facts, int64_t trace_id, const HostThread& t);

}  // namespace proflint
