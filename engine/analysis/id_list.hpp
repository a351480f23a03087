// engine/analysis/id_list.hpp — many rows by id in few statements.
//
// A detector that needs a few columns of 10^4-10^5 rows it knows by id (the ops of runs of
// kernels, the op and API call of each kernel of a finding) asks for them 500 ids at a time:
// "SELECT o.id, o.pass FROM _op o WHERE o.id IN (?,?,…)". A prepared statement stepped once per
// id spent most of its time resetting, binding and stepping (amp-not-used on the x20 tiled trace
// ran 104,818 of them). json_each over a JSON array would need one statement, but its table
// constructor is refused by the analysis connections' read-only authorizer.
#pragma once

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace proflint {

// Runs `sql`, in which "{ids}" stands for the placeholders of an IN list, over the distinct ids
// of `ids`, at most kIdsPerStatement at a time, and calls row(statement) for each result row.
// Rows come in no particular order.
template <class Row>
void for_rows_with_ids(SQLite::Database& db, const std::string& sql, std::vector<int64_t> ids, Row&& row) {
  constexpr size_t kIdsPerStatement = 500;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  auto prepared = [&](size_t n) {
    std::string list;
    for (size_t i = 0; i < n; ++i) list += i ? ",?" : "?";
    std::string text = sql;
    auto at = text.find("{ids}");
    text.replace(at, 5, list);
    return std::make_unique<SQLite::Statement>(db, text);
  };
  std::unique_ptr<SQLite::Statement> full;
  for (size_t from = 0; from < ids.size(); from += kIdsPerStatement) {
    size_t n = std::min(kIdsPerStatement, ids.size() - from);
    std::unique_ptr<SQLite::Statement> last;
    SQLite::Statement* q;
    if (n == kIdsPerStatement) {
      if (!full) full = prepared(n);
      q = full.get();
      q->reset();
    } else {
      last = prepared(n);
      q = last.get();
    }
    for (size_t i = 0; i < n; ++i) q->bind(static_cast<int>(i) + 1, ids[from + i]);
    while (q->executeStep()) row(*q);
  }
}

}  // namespace proflint
