// ModelWrite (engine/store/model_io.hpp): the store written in steps, the ranges from a second
// thread while derivation runs, as the load pipeline does (engine/pipeline/load.cpp), holds
// exactly what write_models writes after derivation; derive_trace publishes the ranges' final
// columns; a write that does not finish leaves nothing behind.
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/derive/derive_trace.hpp"
#include "engine/derive/jobs.hpp"
#include "engine/import/importer.hpp"
#include "engine/model/model.hpp"
#include "engine/store/model_io.hpp"
#include "engine/store/store.hpp"
#include "tests/support/realdata.hpp"

namespace proflint {
namespace {

using testing::fixture_path;

// Inputs with collectives and flows (two DDP ranks of a generated job: collective instances), call
// stacks (source attribution adds texts), and a sampling log given alone (sample series, no ranges).
std::vector<std::string> inputs() {
  return {fixture_path("jobs/ddp4_compute_r2/rank0.json.gz").string(), fixture_path("jobs/ddp4_compute_r2/rank1.json.gz").string(),
          fixture_path("inference_preprocess_with_stack.json.gz").string(),
          fixture_path("samples/nvsmi_2gpu_stalls.csv").string()};
}

std::vector<TraceModel> imported(const std::vector<std::string>& paths) {
  std::vector<TraceModel> models(paths.size());
  ImportOptions options;
  options.progress = false;
  for (size_t i = 0; i < paths.size(); ++i) import_file(paths[i], models[i], options);
  return models;
}

std::vector<TraceModel*> pointers(std::vector<TraceModel>& models) {
  std::vector<TraceModel*> all;
  for (auto& m : models) all.push_back(&m);
  return all;
}

JobFacts jobs_of(std::vector<TraceModel>& models) {
  std::vector<const TraceModel*> all;
  for (auto& m : models) all.push_back(&m);
  return derive_jobs(all, DeriveOptions{});
}

// Every row of every table, in rowid order, as text: two stores with the same dump hold the same facts.
std::vector<std::string> dump(Store& store) {
  std::vector<std::string> tables, out;
  {
    SQLite::Statement q(store.db(), "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
    while (q.executeStep()) tables.push_back(q.getColumn(0).getString());
  }
  for (const auto& t : tables) {
    SQLite::Statement q(store.db(), "SELECT * FROM \"" + t + "\" ORDER BY rowid");
    while (q.executeStep()) {
      std::string row = t + ":";
      for (int c = 0; c < q.getColumnCount(); ++c) row += (q.getColumn(c).isNull() ? std::string("NULL") : q.getColumn(c).getString()) + "|";
      out.push_back(std::move(row));
    }
  }
  return out;
}

int64_t count(Store& store, const std::string& table) {
  return store.db().execAndGet("SELECT COUNT(*) FROM " + table).getInt64();
}

TEST(ModelWrite, RangesWrittenBesideDerivationGiveTheStoreOfOneWriteAfterIt) {
  auto paths = inputs();
  // The reference: derive every model, then write them all at once.
  std::vector<TraceModel> reference = imported(paths);
  for (auto& m : reference) derive_trace(m, DeriveOptions{});
  JobFacts reference_jobs = jobs_of(reference);
  Store expected = Store::create_in_memory();
  write_models(expected, pointers(reference), &reference_jobs);  // keeps the models: compared below

  // As the load does: the write starts before derivation, its imported tables and each model's
  // ranges go in from a second thread as soon as derivation publishes them.
  std::vector<TraceModel> models = imported(paths);
  Store store = Store::create_in_memory();
  ModelWrite write(store, pointers(models), /*release=*/true);
  std::thread beside;
  for (size_t i = 0; i < models.size(); ++i) {
    bool called = false;
    derive_trace(models[i], DeriveOptions{}, [&] {
      called = true;
      // What the writer will read must be final already: the same as the reference's.
      EXPECT_EQ(models[i].derived.range_parent, reference[i].derived.range_parent) << paths[i];
      EXPECT_EQ(models[i].derived.range_depth, reference[i].derived.range_depth) << paths[i];
      EXPECT_EQ(models[i].derived.range_marker, reference[i].derived.range_marker) << paths[i];
      if (i == 0)
        beside = std::thread([&] {
          write.write_imported();
          write.write_ranges(0);
        });
    });
    EXPECT_TRUE(called) << paths[i];
    if (i == 0) beside.join();
    else write.write_ranges(i);
  }
  JobFacts jobs = jobs_of(models);
  write.finish(&jobs);

  EXPECT_GT(count(store, "_range"), 1000);
  EXPECT_GT(count(store, "flow"), 0);
  EXPECT_GT(count(store, "collective_arg"), 0);
  EXPECT_GT(count(store, "_source"), 0);
  EXPECT_GT(count(store, "sample_point"), 0);
  EXPECT_GT(count(store, "collective_participation"), 0);
  EXPECT_GT(count(store, "_range WHERE marker IS NOT NULL"), 0);
  auto got = dump(store), want = dump(expected);
  ASSERT_EQ(got.size(), want.size());
  for (size_t r = 0; r < got.size(); ++r) ASSERT_EQ(got[r], want[r]) << "row " << r;
  for (size_t i = 0; i < models.size(); ++i) EXPECT_EQ(models[i].trace_id, static_cast<int64_t>(i) + 1);
}

TEST(ModelWrite, AWriteThatDoesNotFinishLeavesNothing) {
  std::vector<TraceModel> models = imported({fixture_path("sample_train.json.gz").string()});
  Store store = Store::create_in_memory();
  {
    ModelWrite write(store, pointers(models), /*release=*/false);
    write.write_imported();
    write.write_ranges(0);
    EXPECT_GT(count(store, "_range"), 0);  // inside the write's transaction
  }  // derivation failed, say: the write goes without finish()
  EXPECT_EQ(count(store, "_range"), 0);
  EXPECT_EQ(count(store, "string"), 0);
  EXPECT_EQ(count(store, "flow"), 0);
  // The store takes a whole write afterwards.
  write_models(store, pointers(models));
  EXPECT_GT(count(store, "_range"), 0);
  EXPECT_EQ(count(store, "trace"), 1);
}

TEST(ModelWrite, RangesOutOfModelOrderAreRefused) {
  std::vector<TraceModel> models = imported({fixture_path("sample_train.json.gz").string(), fixture_path("sample_amp.json.gz").string()});
  Store store = Store::create_in_memory();
  ModelWrite write(store, pointers(models), /*release=*/false);
  EXPECT_THROW(write.write_ranges(1), Error);
  write.write_ranges(0);
  EXPECT_THROW(write.write_ranges(0), Error);
  write.write_ranges(1);
  EXPECT_THROW(write.write_ranges(2), Error);
}

}  // namespace
}  // namespace proflint
