// engine/derive/store_io.hpp — reading one trace's facts into TraceData and writing the derived
// columns and tables back. The only part of derive/ that speaks SQL.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/derive/breakdown.hpp"
#include "engine/derive/model.hpp"
#include "engine/store/store.hpp"

namespace proflint {

// Loads ranges (sorted by thread), API calls (sorted by thread and time), kernels/memcpys/memsets
// (sorted by start), sync events, described devices and the text of every name used.
TraceData load_trace(Store& store, int64_t trace_id);

// Deletes what an earlier derivation of this trace wrote (ops, iterations, breakdown).
void clear_derived(Store& store, int64_t trace_id);

// Writes every derived column and table of the trace. Runs inside the caller's transaction.
// Frees parts of `trace` it no longer needs as it goes (names, op paths, ranges): the trace is
// left incomplete, for nothing after it.
void write_trace(Store& store, TraceData& trace, const std::vector<BreakdownRow>& breakdown);

}  // namespace proflint
