// engine/analysis/restrict.hpp — making --iter-start/--iter-stop hold for every detector and rule.
//
// derive/ restricts the breakdown and the op aggregates to the selected iterations and records the
// range in trace.iter_start/iter_stop; the raw fact tables still hold the whole capture, and
// detectors and Lua rules query them directly. Before analysis, the in-memory store (never a saved
// one: `--db` is written first) is cut to the aggregation range so every query sees only it.
#pragma once

#include "engine/store/store.hpp"

namespace proflint {

// For each trace with a recorded range: deletes GPU work, API calls, sync events and ops outside
// the selected iterations, host ranges, flows, memory samples and counters outside the span of the
// selected iteration windows, and narrows trace.start_ns/end_ns to that span; a collective
// instance is dropped (with all its ranks' participation) when any participant's iteration is
// outside its trace's selection. Iterations, the breakdown and import issues are kept. No-op for
// unrestricted traces.
void restrict_to_aggregation_range(Store& store);

}  // namespace proflint
