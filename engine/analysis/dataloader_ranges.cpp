// engine/analysis/dataloader_ranges.cpp — see dataloader_ranges.hpp.
#include "engine/analysis/dataloader_ranges.hpp"

#include <SQLiteCpp/Statement.h>

#include <utility>

namespace proflint {

std::vector<Interval> dataloader_union(const Facts& facts, int64_t trace_id) {
  SQLite::Statement q(facts.db(),
                      "SELECT start_ns, start_ns + dur_ns FROM _range WHERE trace_id = ? AND " PROFLINT_HOST_DATALOADER_RANGE_SQL);
  q.bind(1, trace_id);
  std::vector<Interval> out;
  while (q.executeStep()) out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64()});
  return union_intervals(std::move(out));
}

}  // namespace proflint
