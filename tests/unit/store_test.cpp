// tests/unit/store_test.cpp — the fact store: schema golden dump, versions, atomic saves.
#include "engine/store/store.hpp"

#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/common/error.hpp"
#include "engine/store/writer.hpp"
#include "tests/support/realdata.hpp"
#include "tests/support/run.hpp"

namespace fs = std::filesystem;
using proflint::Store;

namespace {

// Every schema object's SQL, sorted by type and name: reviewing a schema change means reading
// the diff of tests/golden/schema.sql.
std::string dump_schema(Store& store) {
  SQLite::Statement q(store.db(),
                      "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL "
                      "AND name NOT LIKE 'sqlite_%' ORDER BY type, name");
  std::string out = "-- user_version " + std::to_string(store.schema_version()) + "\n";
  while (q.executeStep())
    out += "-- " + q.getColumn(0).getString() + " " + q.getColumn(1).getString() + "\n" + q.getColumn(2).getString() +
           ";\n\n";
  return out;
}

std::string temp_path(const std::string& name) {
  auto p = fs::path(::testing::TempDir()) / ("proflint_store_test_" + std::to_string(getpid()) + "_" + name);
  fs::remove(p);
  return p.string();
}

}  // namespace

TEST(Store, CreatesLatestVersion) {
  auto store = Store::create_in_memory();
  EXPECT_EQ(store.schema_version(), proflint::latest_schema_version());
  EXPECT_GE(proflint::latest_schema_version(), 1);
}

TEST(Store, SchemaMatchesGoldenDump) {
  auto store = Store::create_in_memory();
  std::string dump = dump_schema(store);
  auto golden = proflint::testing::source_dir() / "tests" / "golden" / "schema.sql";
  if (std::getenv("PROFLINT_UPDATE_GOLDENS")) {
    std::ofstream(golden) << dump;
    GTEST_SKIP() << "rewrote " << golden;
  }
  ASSERT_TRUE(fs::exists(golden)) << "missing " << golden << "; run with PROFLINT_UPDATE_GOLDENS=1";
  EXPECT_EQ(proflint::testing::slurp(golden.string()), dump)
      << "schema changed; review and run with PROFLINT_UPDATE_GOLDENS=1 to accept";
}

TEST(Store, SavedStoreIsRecognisedAndReopened) {
  auto path = temp_path("saved.db");
  {
    auto store = Store::create_in_memory();
    proflint::TraceInfo info;
    info.path = "x.json";
    info.format = "kineto";
    proflint::StoreWriter w(store, info);
    proflint::KernelRow k;
    k.start_ns = 10;
    k.dur_ns = 5;
    k.name = "kern";
    w.add_kernel(k);
    w.commit();
    store.save_as(path);
  }
  EXPECT_TRUE(Store::is_store_file(path));
  EXPECT_FALSE(fs::exists(path + ".tmp-proflint"));
  auto reopened = Store::open_existing(path, true);
  EXPECT_EQ(reopened.db().execAndGet("SELECT name FROM kernel").getString(), "kern");
  EXPECT_EQ(reopened.db().execAndGet("SELECT start_ns || '-' || end_ns FROM trace").getString(), "10-15");
  fs::remove(path);
}

// op_by_range and op_by_name serve only reports, exports and saved stores: the store analysis
// works on does without them, a saved store has them, and asking twice (or on a read-only store)
// is harmless.
TEST(Store, ReportIndexesAreBuiltOnlyWhenAskedForAndAlwaysSaved) {
  auto indexes = [](Store& store) {
    return store.db().execAndGet("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN ('op_by_range', 'op_by_name')")
        .getInt();
  };
  auto path = temp_path("indexes.db");
  {
    auto store = Store::create_in_memory();
    store.create_indexes();
    EXPECT_EQ(indexes(store), 0);
    EXPECT_EQ(store.db().execAndGet("SELECT count(*) FROM sqlite_master WHERE name = 'kernel_by_time'").getInt(), 1);
    store.save_as(path);
    EXPECT_EQ(indexes(store), 2);
    store.create_report_indexes();
    EXPECT_EQ(indexes(store), 2);
  }
  auto saved = Store::open_existing(path, true);
  EXPECT_EQ(indexes(saved), 2);
  EXPECT_NO_THROW(saved.create_report_indexes());
  fs::remove(path);
}

// range_by_name is built by `analyze` only for a store of several traces: with one trace, the
// lookups by name (a set of names, once per trace) scan the table faster than the index is built
// (store.cpp). range_by_thread always (allocation-churn probes it per call). Reports, exports and
// saved stores get range_by_name in a one-trace store too; a second trace builds it with the rest.
TEST(Store, RangeByNameOnlyForSeveralTracesOrWhenAReportOrASaveAsks) {
  // 1 for range_by_thread, 2 for it and range_by_name.
  auto range_indexes = [](Store& store) {
    return store.db()
        .execAndGet("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name IN ('range_by_thread', 'range_by_name')")
        .getInt();
  };
  auto add_trace = [](Store& store, int id) {
    store.db().exec("INSERT INTO trace(trace_id, path, format, clock) VALUES (" + std::to_string(id) + ", 't" +
                    std::to_string(id) + ".json', 'kineto', 'host')");
  };
  auto path = temp_path("range_indexes.db");
  {
    auto store = Store::create_in_memory();
    add_trace(store, 1);
    store.create_indexes();
    EXPECT_EQ(range_indexes(store), 1);
    store.create_report_indexes();
    EXPECT_EQ(range_indexes(store), 2);
  }
  {
    auto store = Store::create_in_memory();
    add_trace(store, 1);
    store.create_indexes();
    store.save_as(path);
    EXPECT_EQ(range_indexes(store), 2);
  }
  {
    auto saved = Store::open_existing(path, true);
    EXPECT_EQ(range_indexes(saved), 2);
  }
  {
    auto store = Store::create_in_memory();
    add_trace(store, 1);
    add_trace(store, 2);
    store.create_indexes();
    EXPECT_EQ(range_indexes(store), 2);
  }
  fs::remove(path);
}

// The _source lookups by API call and by range use partial indexes (schema 14: only the few rows
// with one are indexed, so writing the ~one row per op costs no index upkeep for them), and the
// queries that use them (engine/analysis/source_sites.cpp, the source view) still find them.
TEST(Store, SourceLookupsByApiCallAndRangeUsePartialIndexes) {
  auto store = Store::create_in_memory();
  store.create_indexes();
  auto plan = [&](const std::string& sql) {
    SQLite::Statement q(store.db(), "EXPLAIN QUERY PLAN " + sql);
    std::string all;
    while (q.executeStep()) all += q.getColumn(3).getString() + "\n";
    return all;
  };
  EXPECT_NE(plan("SELECT a.id, s.file_id FROM _api_call a JOIN _source s ON s.api_call_id = a.id WHERE a.id IN (1, 2)")
                .find("INDEX source_api_call"),
            std::string::npos);
  EXPECT_NE(plan("SELECT r.id, s.line FROM _range r JOIN _source s ON s.range_id = r.id WHERE r.id IN (1, 2)").find("INDEX source_range"),
            std::string::npos);
  EXPECT_NE(plan("SELECT * FROM source WHERE api_call_id = 7").find("INDEX source_api_call"), std::string::npos);
  EXPECT_EQ(store.db().execAndGet("SELECT count(*) FROM sqlite_master WHERE name IN ('source_api_call', 'source_range') AND "
                                  "sql LIKE '% WHERE % IS NOT NULL'").getInt(),
            2);
}

TEST(Store, RefusesStoreFromNewerProflint) {
  auto path = temp_path("newer.db");
  {
    auto store = Store::create_file(path);
    store.db().exec("PRAGMA user_version=" + std::to_string(proflint::latest_schema_version() + 7));
  }
  try {
    Store::open_existing(path, true);
    FAIL() << "expected an error";
  } catch (const proflint::Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("newer proflint"), std::string::npos) << msg;
  }
  fs::remove(path);
}

TEST(Store, PlainSqliteFileIsNotAStore) {
  auto path = temp_path("plain.db");
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec("CREATE TABLE t(x)");
  }
  EXPECT_FALSE(Store::is_store_file(path));
  EXPECT_THROW(Store::open_existing(path, true), proflint::Error);
  fs::remove(path);
}

TEST(StoreWriter, InternsTextAndCountsIssues) {
  auto store = Store::create_in_memory();
  proflint::TraceInfo info;
  info.path = "t";
  info.format = "kineto";
  proflint::StoreWriter w(store, info);
  for (int i = 0; i < 3; ++i) {
    proflint::ApiCallRow a;
    a.start_ns = i * 100;
    a.dur_ns = 10;
    a.name = "cudaLaunchKernel";
    w.add_api_call(a);
  }
  w.add_issue("negative_duration", "ev1", "byte 10");
  w.add_issue("negative_duration", "ev2", "byte 20");
  EXPECT_EQ(w.issue_count(), 2);
  w.commit();
  auto& db = store.db();
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM string WHERE value = 'cudaLaunchKernel'").getInt(), 1);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM api_call WHERE name = 'cudaLaunchKernel'").getInt(), 3);
  EXPECT_EQ(db.execAndGet("SELECT count || ':' || example || ':' || location FROM import_issue").getString(),
            "2:ev1:byte 10");
}

TEST(StoreWriter, RollsBackWhenNotCommitted) {
  auto store = Store::create_in_memory();
  {
    proflint::TraceInfo info;
    info.path = "t";
    info.format = "kineto";
    proflint::StoreWriter w(store, info);
    proflint::KernelRow k;
    k.name = "k";
    w.add_kernel(k);
  }
  EXPECT_EQ(store.db().execAndGet("SELECT count(*) FROM trace").getInt(), 0);
  EXPECT_EQ(store.db().execAndGet("SELECT count(*) FROM _kernel").getInt(), 0);
}

// In-memory stores live in SQLite's memdb VFS; saving must still land on disk, also under a name
// with the characters a URI escapes (regression: VACUUM INTO wrote the copy into memdb).
TEST(Store, SaveOfInMemoryStoreWritesAFileEvenWithUriCharactersInItsName) {
  auto path = temp_path("odd name ?#%&=.db");
  {
    auto store = Store::create_in_memory();
    store.db().exec("INSERT INTO string(id, value) VALUES (1, 'kept')");
    store.save_as(path);
  }
  ASSERT_TRUE(fs::exists(path));
  EXPECT_TRUE(Store::is_store_file(path));
  auto reopened = Store::open_existing(path, true);
  EXPECT_EQ(reopened.db().execAndGet("SELECT value FROM string WHERE id = 1").getString(), "kept");
  fs::remove(path);
}
