// engine/pipeline/load.hpp — turning the command line's inputs into one derived fact store.
//
// Profiles are imported into an in-memory store; a saved proflint store is copied into memory
// (the user's file is never modified) and re-derived only when asked (other --key-node ...).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/derive/derive.hpp"
#include "engine/import/importer.hpp"
#include "engine/store/store.hpp"

namespace proflint {

struct LoadOptions {
  ImportOptions import;
  DeriveOptions derive;
  bool rederive = false;  // re-run derivation on a saved store (set when derive options were given)
  // Threads for importing several files at once: 0 = PROFLINT_JOBS when set, else the machine's
  // cores (at most 8). The store built does not depend on it.
  unsigned jobs = 0;
  // --sample-offset: added to the times of sampling logs given beside a trace (docs/samples.md);
  // unset: found from the clocks (engine/derive/sample_alignment.hpp).
  std::optional<int64_t> sample_offset_ns;
  // Split an in-memory store in two databases written by two threads (Store::split_side), for a
  // run that reads the store and never saves it (analyze without --db).
  bool split_store = false;
};

// Imports every path (a profile, or a saved store when it is the only input) and derives: each
// file is parsed into a TraceModel and derived (files side by side on threads when there are
// cores for it), then all are written into one new in-memory store, in file order.
Store load_inputs(const std::vector<std::string>& paths, const LoadOptions& options);

// Imports one file into `store` as a new, underived trace (tests and tools building a store step
// by step; derive_all then derives it).
ImportResult import_file(const std::string& path, Store& store, const ImportOptions& options);
// The same with a given importer (no sniffing).
ImportResult import_into(const Importer& importer, const std::string& path, Store& store, const ImportOptions& options);

// Derives a store's traces again: reads them into models (load_model), derives every one and the
// jobs across them, and writes the store again from the models, then rebuilds the indexes.
// Without `force`, only when some trace was never derived (trace.iteration_source IS NULL): a
// saved store otherwise keeps every derived table it was saved with, jobs and graph replays
// included; `force` re-derives it with other options (another --key-node, --job-by).
// Orchestration, so it lives here and not in derive/.
void derive_all(Store& store, const DeriveOptions& options, bool force = false);

}  // namespace proflint
