// tests/unit/facts_test.cpp — detectors and rules read the store but can never change it.
#include <gtest/gtest.h>

#include "engine/analysis/facts.hpp"

using namespace proflint;

TEST(ReadOnlyGuard, AllowsReadsDeniesEverythingElse) {
  auto store = Store::create_in_memory();
  auto& db = store.db();
  db.exec("INSERT INTO string(id, value) VALUES (1, 'x')");
  ReadOnlyGuard guard(db);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM kernel").getInt(), 0);
  EXPECT_EQ(db.execAndGet("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<3) SELECT sum(i) FROM n").getInt(), 6);
  EXPECT_THROW(db.exec("DELETE FROM string"), SQLite::Exception);
  EXPECT_THROW(db.exec("INSERT INTO string(id, value) VALUES (2, 'y')"), SQLite::Exception);
  EXPECT_THROW(db.exec("UPDATE string SET value = 'z'"), SQLite::Exception);
  EXPECT_THROW(db.exec("DROP TABLE string"), SQLite::Exception);
  EXPECT_THROW(db.exec("CREATE TABLE evil(x)"), SQLite::Exception);
  EXPECT_THROW(db.exec("ATTACH DATABASE '/tmp/proflint_evil.db' AS evil"), SQLite::Exception);
  EXPECT_THROW(db.exec("PRAGMA writable_schema = ON"), SQLite::Exception);
  EXPECT_THROW(db.execAndGet("SELECT load_extension('/tmp/evil.so')"), SQLite::Exception);
  EXPECT_EQ(db.execAndGet("SELECT value FROM string").getString(), "x");
}

TEST(ReadOnlyGuard, WritesWorkAgainAfterwards) {
  auto store = Store::create_in_memory();
  { ReadOnlyGuard guard(store.db()); }
  store.db().exec("INSERT INTO string(id, value) VALUES (1, 'x')");
  EXPECT_EQ(store.db().execAndGet("SELECT count(*) FROM string").getInt(), 1);
}
