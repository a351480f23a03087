// engine/derive/derive_trace.hpp — derivation of one trace's fact model (no store involved).
#pragma once

#include "engine/derive/derive.hpp"
#include "engine/model/model.hpp"

namespace proflint {

// Derives one trace: fills model.derived from model's facts (replacing an earlier derivation).
// Pure: reads and writes only the model. Throws what a derivation step throws.
void derive_trace(TraceModel& model, const DeriveOptions& options);

}  // namespace proflint
