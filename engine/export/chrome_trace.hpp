// engine/export/chrome_trace.hpp — the fact store as Chrome trace-event JSON (docs/export.md).
//
// The file opens in Perfetto UI (ui.perfetto.dev) and chrome://tracing, and proflint's own Kineto
// importer reads it back with the same kernels, copies, API calls and ops. One process per rank,
// with its host threads, its GPU streams, its iterations and proflint's findings as tracks;
// launch -> GPU work as flow arrows. Written as it is read from the store (no document in memory).
#pragma once

#include <ostream>
#include <vector>

#include "engine/analysis/finding.hpp"
#include "engine/store/store.hpp"

namespace proflint::exporter {

struct ChromeExportStats {
  int64_t events = 0;  // trace events written (metadata included)
  int64_t flows = 0;   // launch -> GPU work arrows
};

// Writes the whole JSON document to `out`. `findings` (ranked, may be empty) become slices on a
// "proflint findings" track of the rank they concern.
ChromeExportStats write_chrome_trace(Store& store, const std::vector<Finding>& findings, std::ostream& out);

}  // namespace proflint::exporter
