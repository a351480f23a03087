// engine/derive/iterations.hpp — finding training iterations and assigning rows to them.
//
// Sources, first that yields iterations wins (trace.iteration_source says which):
//   key_node      --key-node NAME: ranges named NAME or NAME#…; each runs until the next one starts
//   profiler_step ProfilerStep#N annotations (the range is the iteration, number N)
//   nvtx          NVTX / user-annotation ranges that look like steps: a name with step|iter|batch and
//                 a number repeated, or a top-level range repeated >= 3 times that launches most GPU work
//   auto_period   Optimizer.step#… / optimizer.step repeated: end of one step to end of the next; else
//                 the smallest period of the top-level op sequence (of the kernel sequence when the
//                 trace has no ops) that repeats >= 3 times and covers at least half of the sequence
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/derive/model.hpp"

namespace proflint {

struct PeriodMatch {
  size_t start = 0;    // index of the first element of the first period
  size_t period = 0;   // elements per period
  size_t repeats = 0;  // whole periods found
};

// Smallest period p >= min_period such that tokens[start, start + repeats*p) is p-periodic with
// repeats >= min_repeats and repeats*p >= min_coverage * tokens.size(). Candidate periods come
// from distances between equal tokens, so the cost is O(n) per candidate, not O(n^2).
std::optional<PeriodMatch> detect_period(const std::vector<int64_t>& tokens, size_t min_repeats = 3,
                                         double min_coverage = 0.5, size_t min_period = 2);

// --key-node: NAME itself or NAME#anything.
bool key_node_matches(std::string_view name, std::string_view key);

// 'step 12', 'train_iter_3', 'Batch#7' -> number; nullopt when the name does not look like a step.
std::optional<int64_t> step_like_number(std::string_view name);
// Name with every digit run replaced by '#': groups 'step 3' and 'step 4' together.
std::string digit_template(std::string_view name);

// Why --key-node KEY marked no iteration, with the closest host range and op names as candidates:
// "key node 'KEY' not found; candidates: 'a' (12×), …".
std::string key_node_problem(const TraceData& trace, const std::string& key);

// Fills trace.iterations and trace.iteration_source (and trace.key_node_problem); marks ranges used as markers. Needs nested
// and classified ranges and GPU work correlated to API calls (for coverage).
void detect_iterations(TraceData& trace);

// Sets the iteration of API calls, GPU work (by the launching call's start, else its own start)
// and sync events, and each iteration's gpu_start/gpu_end.
void assign_iterations(TraceData& trace);

}  // namespace proflint
