// engine/analysis/dataloader_ranges.hpp — the host-side DataLoader/DataPipe fetch annotations,
// as several detectors need them (dataloader-stall, gpu-idle-gaps, host-sync).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/analysis/facts.hpp"
#include "engine/common/intervals.hpp"

namespace proflint {

// Derivation marks them: _range.marker = 'dataloader' (schema/0013_selection_markers.sql: the names
// the breakdown counts as 'dataloader', `enumerate(DataLoader)#…__next__`, `enumerate(DataPipe)#…`
// and emit_nvtx copies). The host-side ones, for a WHERE clause on _range or the range view:
#define PROFLINT_HOST_DATALOADER_RANGE_SQL "marker = 'dataloader' AND kind != 'gpu_user_annotation'"

// Union of the trace's fetch annotations (host time spent fetching input), GPU-side copies excluded.
std::vector<Interval> dataloader_union(const Facts& facts, int64_t trace_id);

}  // namespace proflint
