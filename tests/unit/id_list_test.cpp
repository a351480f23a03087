// tests/unit/id_list_test.cpp — for_rows_with_ids: many rows by id, 500 ids per statement.
#include "engine/analysis/id_list.hpp"

#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace proflint {
namespace {

// 1,203 ids (two full statements of 500 and a shorter one), each asked for twice, some missing:
// every present id comes back exactly once with its own value (value = 3 * id by construction).
TEST(IdList, ChunksCoverEveryIdOnceAndSkipMissingOnes) {
  SQLite::Database db(":memory:", SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  db.exec("CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER)");
  db.exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1200) "
          "INSERT INTO t SELECT i, 3 * i FROM n");
  std::vector<int64_t> ids;
  for (int64_t id = 1203; id >= 1; --id) ids.push_back(id);  // 1201-1203 are not in t
  ids.insert(ids.end(), ids.begin(), ids.end());
  std::map<int64_t, int> seen;
  for_rows_with_ids(db, "SELECT id, v FROM t WHERE id IN ({ids})", ids, [&](SQLite::Statement& q) {
    EXPECT_EQ(q.getColumn(1).getInt64(), 3 * q.getColumn(0).getInt64());
    ++seen[q.getColumn(0).getInt64()];
  });
  EXPECT_EQ(seen.size(), 1200u);
  for (const auto& [id, n] : seen) EXPECT_EQ(n, 1) << id;
  int calls = 0;
  for_rows_with_ids(db, "SELECT id FROM t WHERE id IN ({ids})", {}, [&](SQLite::Statement&) { ++calls; });
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace proflint
