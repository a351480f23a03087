// tests/unit/store_split_test.cpp — a store split in two databases (Store::split_side: _op and
// _range in a side database written by a second thread) holds exactly the rows of a store in one
// database, in every table and view, on the store's connection and on readers; analysis finds the
// same; a temporary-file store splits into two files that are both gone afterwards; a split store
// is never saved.
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/pipeline/load.hpp"
#include "engine/store/model_io.hpp"
#include "engine/store/store.hpp"
#include "tests/support/all_checks.hpp"
#include "tests/support/run.hpp"
#include "tests/support/scoped_env.hpp"

using namespace proflint;
using proflint::testing::ScopedEnv;
namespace fs = std::filesystem;

namespace {

std::string fixture(const char* name) { return (proflint::testing::source_dir() / "fixtures" / name).string(); }

Store load(const std::vector<std::string>& paths, bool split) {
  LoadOptions options;
  options.split_store = split;
  return load_inputs(paths, options);
}

// The tables and views of a store in one database, by name.
std::vector<std::string> relations(Store& whole) {
  std::vector<std::string> names;
  SQLite::Statement q(whole.db(), "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE "
                                  "'sqlite_%' ORDER BY name");
  while (q.executeStep()) names.push_back(q.getColumn(0).getString());
  return names;
}

// Every row of every relation, in a fixed order (all columns), as text.
std::string dump(SQLite::Database& db, const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) {
    out += "## " + name + "\n";
    SQLite::Statement probe(db, "SELECT * FROM \"" + name + "\" LIMIT 0");
    std::string order;
    for (int c = 1; c <= probe.getColumnCount(); ++c) order += (c > 1 ? ", " : "") + std::to_string(c);
    SQLite::Statement rows(db, "SELECT * FROM \"" + name + "\"" + (order.empty() ? "" : " ORDER BY " + order));
    while (rows.executeStep()) {
      for (int c = 0; c < rows.getColumnCount(); ++c)
        out += (c ? "|" : "") + (rows.isColumnNull(c) ? std::string("∅") : rows.getColumn(c).getString());
      out += "\n";
    }
  }
  return out;
}

int64_t count(SQLite::Database& db, const std::string& sql) { return db.execAndGet(sql).getInt64(); }

}  // namespace

// Ops with Python source places (item_in_logging_with_stack), two ranks of one job (ranges by
// name are indexed in the side database), an nsys export with CUDA graphs.
TEST(SplitStore, HoldsTheRowsOfAStoreInOneDatabaseInEveryTableAndView) {
  const std::vector<std::vector<std::string>> inputs = {
      {fixture("item_in_logging_with_stack.json.gz")},
      {fixture("ddp2_rank0.json.gz"), fixture("ddp2_rank1_slow30.json.gz")},
      {fixture("cuda_graph_nodes.nsys.sqlite")},
  };
  for (const auto& paths : inputs) {
    SCOPED_TRACE(paths.front());
    Store whole = load(paths, false);
    Store split = load(paths, true);
    ASSERT_FALSE(whole.is_split());
    ASSERT_TRUE(split.is_split());
    // The side tables live in the side database only; their views are TEMP views.
    for (const char* table : {"_op", "_range"}) {
      EXPECT_EQ(count(split.db(), std::string("SELECT count(*) FROM main.sqlite_master WHERE name = '") + table + "'"), 0)
          << table;
      EXPECT_EQ(count(split.db(), std::string("SELECT count(*) FROM proflint_side.sqlite_master WHERE name = '") +
                                      table + "'"),
                1)
          << table;
    }
    EXPECT_EQ(count(split.db(), "SELECT count(*) FROM proflint_side.sqlite_master WHERE name = 'range_by_thread'"), 1);
    EXPECT_EQ(count(split.db(), "SELECT count(*) FROM sqlite_temp_master WHERE type = 'view' AND name IN ('op', 'range')"),
              2);
    EXPECT_GT(count(split.db(), "SELECT count(*) FROM op"), 5) << "the fixture must have ops to compare";
    EXPECT_GT(count(split.db(), "SELECT count(*) FROM range"), 5);
    const auto names = relations(whole);
    const std::string expected = dump(whole.db(), names);
    EXPECT_TRUE(dump(split.db(), names) == expected) << "the store's connection";
    auto reader = split.open_reader();
    EXPECT_TRUE(dump(*reader, names) == expected) << "a reader";
  }
}

TEST(SplitStore, AnalysisFindsTheSame) {
  const std::vector<std::string> paths = {fixture("sample_train.json.gz"), fixture("ddp2_rank0.json.gz")};
  Store whole = load(paths, false);
  Store split = load(paths, true);
  const std::string expected = proflint::testing::rendered(proflint::testing::analyze_all(whole, 3));
  ASSERT_NE(expected.find("\"id\""), std::string::npos) << "the fixtures must give findings to compare";
  EXPECT_EQ(proflint::testing::rendered(proflint::testing::analyze_all(split, 3)), expected);
  EXPECT_GE(split.readers_opened(), 2) << "analysis must have read the split store on several connections";
}

// A store over the in-memory budget is a temporary file: it splits into a second file beside it,
// and both are removed with the store.
TEST(SplitStore, TemporaryFileStoreSplitsIntoTwoFilesThatAreBothRemoved) {
  fs::path dir = fs::path(::testing::TempDir()) / ("proflint_split_store_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::vector<std::string> paths = {fixture("sample_train.json.gz")};
  std::string expected;
  {
    Store whole = load(paths, false);
    expected = dump(whole.db(), relations(whole));
  }
  {
    ScopedEnv tmp("TMPDIR", dir.string());
    ScopedEnv budget("PROFLINT_SHARED_STORE_BUDGET", "1");
    Store split = load(paths, true);
    ASSERT_FALSE(split.temp_path().empty());
    ASSERT_TRUE(split.is_split());
    size_t files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
    EXPECT_EQ(files, 2u) << "the store's file and the side database's";
    Store whole_again = load(paths, false);  // in memory: TMPDIR only holds the split store's files
    EXPECT_TRUE(dump(split.db(), relations(whole_again)) == expected);
    auto reader = split.open_reader();
    EXPECT_TRUE(dump(*reader, relations(whole_again)) == expected);
  }
  EXPECT_TRUE(fs::is_empty(dir)) << "a file of the split store was left behind";
  fs::remove_all(dir);
}

// A shared store whose side database fills up is loaded again into temporary files, split too.
TEST(SplitStore, FullSideDatabaseIsLoadedAgainIntoTemporaryFiles) {
  const std::vector<std::string> paths = {fixture("sample_train.json.gz"), fixture("sample_amp.json.gz")};
  std::vector<std::string> names;
  std::string expected;
  int64_t side_bytes = 0;
  {
    Store whole = load(paths, false);
    names = relations(whole);
    expected = dump(whole.db(), names);
    Store split = load(paths, true);
    ASSERT_TRUE(split.temp_path().empty());
    side_bytes = count(split.side_db(), "PRAGMA page_count") * count(split.side_db(), "PRAGMA page_size");
  }
  // Room for the side database's empty schema, not for the two fixtures' ops and ranges.
  ASSERT_GT(side_bytes, 200000);
  ScopedEnv limit("PROFLINT_SHARED_STORE_LIMIT", std::to_string(side_bytes / 2));
  Store split = load(paths, true);
  EXPECT_FALSE(split.temp_path().empty()) << "expected the temporary file store after the limit was hit";
  EXPECT_TRUE(split.is_split());
  EXPECT_TRUE(dump(split.db(), names) == expected);
}

TEST(SplitStore, ClearingItEmptiesBothDatabases) {
  Store split = load({fixture("sample_train.json.gz")}, true);
  ASSERT_TRUE(split.is_split());
  ASSERT_GT(count(split.db(), "SELECT count(*) FROM _op"), 0);
  clear_store(split);
  EXPECT_EQ(count(split.db(), "SELECT count(*) FROM _op"), 0);
  EXPECT_EQ(count(split.db(), "SELECT count(*) FROM _range"), 0);
  EXPECT_EQ(count(split.db(), "SELECT count(*) FROM _kernel"), 0);
  EXPECT_EQ(count(split.db(), "SELECT count(*) FROM trace"), 0);
}

TEST(SplitStore, IsNeverSaved) {
  Store split = load({fixture("sample_train.json.gz")}, true);
  ASSERT_TRUE(split.is_split());
  fs::path out = fs::path(::testing::TempDir()) / ("proflint_split_saved_" + std::to_string(getpid()) + ".pfdb");
  EXPECT_THROW(split.save_as(out.string()), Error);
  EXPECT_FALSE(fs::exists(out));
}
