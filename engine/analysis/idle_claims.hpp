// engine/analysis/idle_claims.hpp — claim keys for GPU-idle time.
//
// Several detectors estimate their saving from the same GPU-idle time: the gap after a host sync
// (host-sync), inside a DataLoader fetch (dataloader-stall), before a late launch (launch-bound),
// under a cudaMalloc/cudaFree (allocation-churn), and the idle time as such (gpu-idle-gaps,
// gpu-underutilized). So that ranking counts each idle nanosecond once (Finding::claims), they all
// name idle time the same way: a device's idle time is cut into the gaps between its busy
// intervals (kernels, copies and memsets, union over streams), and a gap's key names the trace,
// the device and the time the GPU's next work starts ("gpu-idle:t1:d0:1695835585827782000"; a
// gap with no later work ends at "end"). Gaps are also cut where a DataLoader fetch starts or
// ends (engine/analysis/dataloader_ranges.hpp): every detector but dataloader-stall leaves the
// fetch time out, so the waits for input and the idle time around them are different keys; such
// a piece is named by the cut that ends it. Each detector adds, per piece, the part of its estimate
// that comes from that piece.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/analysis/facts.hpp"
#include "engine/common/intervals.hpp"

namespace proflint {

class IdleGapKeys {
 public:
  // The busy intervals of one device (device_id NULL reads as 0, as the detectors do) and the
  // trace's DataLoader fetches.
  IdleGapKeys(const Facts& facts, int64_t trace_id, int64_t device_id);
  // From busy intervals and fetches already read (sorted, disjoint: union_intervals' output).
  IdleGapKeys(int64_t trace_id, int64_t device_id, std::vector<Interval> busy, const std::vector<Interval>& fetches);

  // GPU-idle nanoseconds inside `pieces` (any order, may overlap busy time), per gap key.
  std::map<std::string, int64_t> idle_by_gap(const std::vector<Interval>& pieces) const;

  const std::vector<Interval>& busy() const { return busy_; }

 private:
  int64_t trace_id_, device_id_;
  std::vector<Interval> busy_;
  std::vector<int64_t> cuts_;  // fetch starts and ends, sorted
};

// Adds `by_gap` to `claims`, scaled so that the added claims sum to `estimate` (a detector that
// recovers half of the idle time it measured claims half of each gap).
void add_idle_claims(std::map<std::string, int64_t>& claims, const std::map<std::string, int64_t>& by_gap,
                     int64_t estimate);

}  // namespace proflint
