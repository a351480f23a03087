// engine/derive/derive_trace.hpp — derivation of one trace's fact model (no store involved).
#pragma once

#include <functional>

#include "engine/derive/derive.hpp"
#include "engine/model/model.hpp"

namespace proflint {

// Derives one trace: fills model.derived from model's facts (replacing an earlier derivation).
// Pure: reads and writes only the model. Throws what a derivation step throws.
//
// `ranges_derived`, when given, is called as soon as the ranges' derived columns
// (model.derived.range_parent, range_depth, range_marker) are final, early in derivation: from
// then on derivation neither writes them nor model.ranges, model.collectives or model.labels, so
// another thread may read those (the pipeline writes the range table beside the rest of
// derivation, engine/pipeline/load.cpp). Derivation keeps reading them and writes the rest of
// model.derived and model.strings (new op names) until it returns.
void derive_trace(TraceModel& model, const DeriveOptions& options, const std::function<void()>& ranges_derived = {});

}  // namespace proflint
