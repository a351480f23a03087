// engine/pipeline/restrict.hpp — making --iter-start/--iter-stop hold for every detector and rule.
//
// Derivation decides the selection once and stores it: iteration.selected (schema/0013), with the
// breakdown and the op aggregates restricted to it and the range recorded in
// trace.iter_start/iter_stop. Summary, gate and the DLProf reports read iteration.selected. The raw
// fact tables still hold the whole capture, and detectors and Lua rules query them directly, so
// before analysis the in-memory store (never a saved one: `--db` is staged first) is cut to the
// selection and every query sees only it.
#pragma once

#include "engine/store/store.hpp"

namespace proflint {

// Throws an input error naming the file for a trace with a recorded range that selects none of
// its iterations (or has none): analysing nothing would only produce misleading findings
// (no-iterations, no-gpu-activity), and reports would be empty.
void require_selected_iterations(Store& store);

// For each trace with a recorded range (after require_selected_iterations): deletes GPU work, API
// calls, sync events and ops outside the selected iterations, host ranges, flows, memory samples,
// counters, OS calls and CPU samples outside the span of the selected iteration windows (host
// start to the end of the GPU work they launched), and narrows trace.start_ns/end_ns to that span;
// a collective instance is dropped (with all its ranks' participation) when any participant's
// iteration is outside its trace's selection. Iterations, the breakdown and import issues are kept.
// No-op for unrestricted traces.
void restrict_to_selection(Store& store);

}  // namespace proflint
