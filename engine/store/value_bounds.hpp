// engine/store/value_bounds.hpp — are a saved store's numbers and links what an import can produce?
//
// Importers hold every row to the limits of FactSink (engine/model/sink.hpp): times within ±2^61 ns,
// the durations of a trace's rows adding up to at most 2^56 ns, byte counts within 2^50. Detectors,
// rules and the summary add and subtract those numbers in int64 because of that. A store edited
// after proflint wrote it (or damaged) can hold anything, so a saved store is checked once when it
// is loaded, before anything computes with its rows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/store/store.hpp"

namespace proflint {

// A number or link of a store that no import writes.
struct StoreValueProblem {
  std::string table;
  std::string column;
  int64_t rowid = 0;      // the row holding the value (for a sum, the row of largest magnitude)
  std::string value;      // the value as SQLite quotes it
  std::string violation;  // what is wrong with it, in words
};

// The rules, by the column's name (every INTEGER column of every table, the schema read from the
// store itself so that new columns are covered without a list to keep):
//   - identifiers (`id`, `*_id`, pid, tid, seq, sequence_number, rank) and a system call's
//     return_value (an address as often as a count) are only compared: unchecked;
//   - compute_major / compute_minor lie in 0..999 (FactSink::add_device's rule);
//   - clock offsets (`*offset_ns`, `*residual_ns`: a difference of two points) lie within ±2^62;
//   - points in time and levels (`start_ns`, `*_start_ns`, `end_ns`, `ts_ns`, `last_arrival_ns`,
//     `*_bytes` of a level such as allocated_bytes) lie within ±2^61: a difference of two fits int64;
//   - every other number (durations, counts, byte amounts, sizes) is an amount, which code adds
//     up: the magnitudes of a column add up to at most 2^61 over its whole table, so that sums of
//     a few such columns fit int64 as well.
// Besides numbers, one rule between columns: an op's parent_id is below its id (ops are written
// parents first), which is what makes walking up the op tree end.
// Returns the first problem found (in the order of the tables' sizes), nothing for a store within
// the rules. Reads every row of every table once, the tables shared out between two connections
// where the store can have a second one (the x20 trace's 194 MB store: 0.22 s, 0.40 s of CPU).
std::optional<StoreValueProblem> find_value_out_of_bounds(Store& store);

}  // namespace proflint
