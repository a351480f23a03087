// tests/unit/selection_test.cpp — the derived iteration selection (iteration.selected) and range
// markers (_range.marker) of schema 13: derivation stores them, the migration gives a store saved
// by an earlier proflint the same values, and the analysis cut follows the stored selection.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "engine/analysis/dataloader_ranges.hpp"
#include "engine/derive/ops.hpp"
#include "engine/pipeline/restrict.hpp"
#include "engine/store/store.hpp"
#include "tests/report/report_support.hpp"
#include "tests/support/run.hpp"

namespace fs = std::filesystem;
using namespace proflint;
using namespace proflint::testing;

namespace {

int64_t count_of(Store& store, const std::string& sql) { return store.db().execAndGet(sql).getInt64(); }

// Every range's stored marker is what classify_marker says of its name.
void expect_markers_match_names(Store& store) {
  SQLite::Statement q(store.db(), "SELECT s.value, r.marker FROM _range r JOIN string s ON s.id = r.name_id");
  int64_t rows = 0;
  while (q.executeStep()) {
    ++rows;
    std::string name = q.getColumn(0).getString();
    std::string stored = q.getColumn(1).isNull() ? "" : q.getColumn(1).getString();
    EXPECT_EQ(stored, std::string(marker_text(classify_marker(name)))) << name;
  }
  EXPECT_GT(rows, 0);
}

}  // namespace

// sample_train: 6 ProfilerStep# iterations, each with a DataLoader fetch and an optimizer step
// (checked with python3 over the fixture's 'X' events: 'ProfilerStep#' 6 user_annotation + 6
// gpu_user_annotation, 'enumerate(DataLoader)#' 6 user_annotation, 'Optimizer.step#' 6 + 6,
// 'Optimizer.zero_grad#' 6 user_annotation).
TEST(Selection, DerivationStoresTheSelectionAndTheMarkers) {
  DeriveOptions o;
  o.iter_start = 2;
  o.iter_stop = 3;
  Built b = load_for_reports(fixture_path("sample_train.json.gz").string(), o);
  EXPECT_EQ(count_of(b.store, "SELECT COUNT(*) FROM iteration"), 6);
  SQLite::Statement sel(b.store.db(), "SELECT group_concat(iteration) FROM (SELECT iteration FROM iteration WHERE "
                                      "selected = 1 ORDER BY iteration)");
  ASSERT_TRUE(sel.executeStep());
  EXPECT_EQ(sel.getColumn(0).getString(), "2,3");
  EXPECT_EQ(count_of(b.store, "SELECT COUNT(*) FROM range WHERE marker = 'profiler_step'"), 12);
  EXPECT_EQ(count_of(b.store, "SELECT COUNT(*) FROM range WHERE marker = 'dataloader' AND kind != 'gpu_user_annotation'"), 6);
  EXPECT_EQ(count_of(b.store, "SELECT COUNT(*) FROM range WHERE marker = 'optimizer' AND kind != 'gpu_user_annotation'"), 12);
  EXPECT_EQ(count_of(b.store, "SELECT COUNT(*) FROM range WHERE marker = 'optimizer'"), 18);
  expect_markers_match_names(b.store);

  // Without a range every iteration is selected.
  Built all = load_for_reports(fixture_path("sample_train.json.gz").string());
  EXPECT_EQ(count_of(all.store, "SELECT COUNT(*) FROM iteration WHERE selected = 1"), 6);
}

// The cut before analysis follows iteration.selected, not a second reading of the range: with the
// stored selection narrowed to iteration 3 alone, only iteration 3's work is left.
TEST(Selection, AnalysisCutFollowsTheStoredSelection) {
  DeriveOptions o;
  o.iter_start = 2;
  o.iter_stop = 3;
  Built b = load_for_reports(fixture_path("sample_train.json.gz").string(), o);
  int64_t kernels3 = count_of(b.store, "SELECT COUNT(*) FROM _kernel WHERE iteration = 3");
  ASSERT_GT(kernels3, 0);
  b.store.db().exec("UPDATE iteration SET selected = 0 WHERE iteration = 2");
  restrict_to_selection(b.store);
  EXPECT_EQ(count_of(b.store, "SELECT COUNT(*) FROM _kernel"), kernels3);
  EXPECT_EQ(count_of(b.store, "SELECT COUNT(*) FROM _op WHERE iteration IS NOT 3"), 0);
  EXPECT_EQ(count_of(b.store, "SELECT start_ns FROM trace"), count_of(b.store, "SELECT start_ns FROM iteration WHERE iteration = 3"));

  // A recorded range whose selection is empty is refused, naming the file.
  b.store.db().exec("UPDATE iteration SET selected = 0");
  try {
    require_selected_iterations(b.store);
    ADD_FAILURE() << "an empty selection was accepted";
  } catch (const std::exception& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("sample_train.json.gz"), std::string::npos) << what;
    EXPECT_NE(what.find("select none of its 6 iterations (0-5)"), std::string::npos) << what;
  }
}

// A store saved by schema 12 (no iteration.selected, no _range.marker) gets both from the migration,
// by the same rules derivation applies: the recorded range for the selection, classify_marker's
// for the names, edge cases included.
TEST(Selection, MigrationGivesAnOlderStoreTheSameSelectionAndMarkers) {
  auto dir = fs::path(::testing::TempDir()) / ("proflint_selection_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "v12.db").string();
  const std::vector<std::string> names = {
      "ProfilerStep#5",           "ProfilerStep#",      "ProfilerStep#5x",     "ProfilerStep#012",
      "Optimizer.step#SGD.step",  "Optimizer.zero_grad#SGD.zero_grad",         "Optimizer.step",
      "optimizer.step",           "OPTIMIZER.STEP#x",   "optimizer.stepper",   "optimizer.zero_grad",
      "Optimizer.Zero_Grad",      "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
      "enumerate(DataPipe)#ShufflerIterDataPipe",       "DataLoader.__next__", "MyDataLoader",
      "aten::conv2d",             "",                   "ProfilerStep#3 "};
  {
    Store store = Store::create_file(path);
    auto& db = store.db();
    db.exec("INSERT INTO trace(trace_id, path, format, clock, iteration_source, iter_start, iter_stop) "
            "VALUES (1, 't.json', 'kineto', 'host', 'profiler_step', 1, 2)");
    for (int k = 0; k < 4; ++k)
      db.exec("INSERT INTO iteration(trace_id, iteration, start_ns, end_ns, dur_ns, source) VALUES (1, " +
              std::to_string(k) + ", " + std::to_string(k * 10) + ", " + std::to_string(k * 10 + 10) +
              ", 10, 'profiler_step')");
    for (size_t i = 0; i < names.size(); ++i) {
      SQLite::Statement s(db, "INSERT INTO string(id, value) VALUES (?, ?)");
      s.bind(1, static_cast<int64_t>(i + 1));
      s.bind(2, names[i]);
      s.exec();
      db.exec("INSERT INTO _range(id, trace_id, start_ns, dur_ns, name_id, kind) VALUES (" + std::to_string(i + 1) +
              ", 1, 0, 1, " + std::to_string(i + 1) + ", 'user_annotation')");
    }
    // Back to schema 12's shape.
    db.exec("DROP INDEX range_by_marker; DROP VIEW range; ALTER TABLE _range DROP COLUMN marker; ALTER TABLE iteration DROP COLUMN selected; "
            "CREATE VIEW range AS SELECT id FROM _range; PRAGMA user_version=12");
  }
  {
    Store store = Store::open_existing(path, /*read_only=*/false);  // upgrades in place
    ASSERT_EQ(store.schema_version(), latest_schema_version());
    expect_markers_match_names(store);
    SQLite::Statement sel(store.db(), "SELECT group_concat(selected) FROM (SELECT selected FROM iteration ORDER BY iteration)");
    ASSERT_TRUE(sel.executeStep());
    EXPECT_EQ(sel.getColumn(0).getString(), "0,1,1,0");
  }
  fs::remove_all(dir);
}

// The DataLoader lookups of the detectors go through the small partial index of marked ranges,
// not a scan of every range (a scan made dataloader-stall 5x slower on the x20 tiled trace).
TEST(Selection, DataLoaderLookupsUseTheMarkerIndex) {
  Built b = load_for_reports(fixture_path("sample_train.json.gz").string());
  for (const char* sql : {"SELECT start_ns, start_ns + dur_ns FROM _range WHERE trace_id = ? AND " PROFLINT_HOST_DATALOADER_RANGE_SQL,
                          "SELECT id, name, start_ns, dur_ns FROM range WHERE trace_id = ? AND " PROFLINT_HOST_DATALOADER_RANGE_SQL
                          " ORDER BY start_ns, id"}) {
    SQLite::Statement q(b.store.db(), std::string("EXPLAIN QUERY PLAN ") + sql);
    q.bind(1, int64_t{1});
    std::string plan;
    while (q.executeStep()) plan += q.getColumn(3).getString() + "\n";
    EXPECT_NE(plan.find("range_by_marker"), std::string::npos) << sql << "\n" << plan;
  }
  EXPECT_EQ(count_of(b.store, "SELECT COUNT(*) FROM _range WHERE trace_id = 1 AND " PROFLINT_HOST_DATALOADER_RANGE_SQL), 6);
}
