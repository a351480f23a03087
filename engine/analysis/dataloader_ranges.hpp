// engine/analysis/dataloader_ranges.hpp — the host-side DataLoader/DataPipe fetch annotations,
// as several detectors need them (dataloader-stall, gpu-idle-gaps, host-sync).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/analysis/facts.hpp"
#include "engine/common/intervals.hpp"

namespace proflint {

// SQL subquery: ids of the fetch annotation names (the same names the breakdown counts as
// 'dataloader'): `enumerate(DataLoader)#…__next__`, `enumerate(DataPipe)#…`, and emit_nvtx copies.
// instr(value, 'Data') first: every pattern contains it, and one failed search per string (nsys
// stores can hold ~10^6 distinct range names) is cheaper than three.
#define PROFLINT_DATALOADER_NAME_IDS_SQL                                                                    \
  "SELECT id FROM string WHERE instr(value, 'Data') > 0 AND (instr(value, 'enumerate(DataLoader)') > 0 OR " \
  "instr(value, 'enumerate(DataPipe)') > 0 OR (instr(value, 'DataLoader') > 0 AND instr(value, '__next__') > 0))"

// Union of the trace's fetch annotations (host time spent fetching input), GPU-side copies excluded.
std::vector<Interval> dataloader_union(const Facts& facts, int64_t trace_id);

}  // namespace proflint
