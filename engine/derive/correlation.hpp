// engine/derive/correlation.hpp — GPU work -> launching API call -> enclosing op.
#pragma once

#include "engine/derive/model.hpp"

namespace proflint {

// kernel/memcpy/memset -> api_call by (pid, correlation id); when the GPU row has no pid or no
// API call of that pid matches (Kineto GPU rows carry the device as pid), by correlation id alone
// when that is unique in the trace, else the latest call with that id starting before the work.
// Sets GpuRec::api and ApiRec::launches.
void correlate_gpu_to_api(TraceData& trace);

// Position of the first host range of thread (pid, tid) in nest_ranges' order (host ranges by
// pid, tid, start; GPU-side annotations after them), or where it would be.
size_t first_host_range(const std::vector<RangeRec>& ranges, int64_t pid, int64_t tid);

// api_call -> innermost op enclosing its start on the same (pid, tid), one sorted sweep per
// thread; falls back to the op whose range has the call's Kineto External id.
void attribute_api_to_ops(TraceData& trace);

// GPU work -> the op of its API call; else the op with the work's External id; else an
// 'unassociated:<api name>' op (or 'unassociated:<kernel category>' / memcpy / memset when even
// the API call is missing), one per name, as DLProf does. API calls that launched such work get
// the unassociated op too. Needs kernel categories.
void attribute_gpu_to_ops(TraceData& trace);

}  // namespace proflint
