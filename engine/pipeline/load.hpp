// engine/pipeline/load.hpp — turning the command line's inputs into one derived fact store.
//
// Profiles are imported into an in-memory store; a saved proflint store is copied into memory
// (the user's file is never modified) and re-derived only when asked (other --key-node ...).
#pragma once

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
};

// Imports every path (a profile, or a saved store when it is the only input) and derives.
Store load_inputs(const std::vector<std::string>& paths, const LoadOptions& options);

}  // namespace proflint
