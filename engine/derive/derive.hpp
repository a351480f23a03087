// engine/derive/derive.hpp — everything computed from imported facts, in one entry point.
//
// Runs after import, before detectors: correlation (kernel/memcpy/memset -> api_call -> op),
// the op table and hierarchy, iterations, Tensor Core classification and kernel categories,
// and the time breakdown. Writes only derived tables and columns (schema/ marks them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/config/tensor_core_pattern.hpp"

namespace proflint {

struct DeriveOptions {
  std::optional<std::string> key_node;     // --key-node NAME: op/range name that marks one iteration
  std::optional<int64_t> iter_start, iter_stop;  // restrict aggregation (inclusive iteration ordinals)
  std::vector<TensorCorePattern> extra_tensor_core_patterns;  // checked before the built-in table
  // --job-by: how traces form jobs (docs/multi-rank.md): 'auto' (distributedInfo, nsys processes),
  // 'given' (all inputs are the ranks of one job), 'none' (every trace is a job of its own).
  std::string job_by = "auto";
  // [source] skip / keep: top-level Python packages added to / removed from the built-in list of
  // library code that source attribution looks past (engine/derive/source.hpp).
  std::vector<std::string> source_skip, source_keep;
};

// The iteration selection: true when iteration ordinal k is inside --iter-start/--iter-stop
// (always, without them; never for work outside every iteration, k < 0, when they are given).
// Derivation restricts the breakdown and the op aggregates to it and stores it as
// iteration.selected, which every later reader takes instead of re-applying the range.
inline bool iteration_selected(const DeriveOptions* options, int64_t k) {
  if (!options || (!options->iter_start && !options->iter_stop)) return true;
  if (k < 0) return false;
  if (options->iter_start && k < *options->iter_start) return false;
  if (options->iter_stop && k > *options->iter_stop) return false;
  return true;
}

}  // namespace proflint
