// tests/unit/parallel_analysis_test.cpp — detectors and rules run on several threads, each on its
// own read-only connection to the store, and give exactly what one thread gives.
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>

#include "engine/lua/rules.hpp"
#include "engine/pipeline/analyze.hpp"
#include "engine/pipeline/load.hpp"
#include "tests/support/all_checks.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint;

namespace {

AnalysisResult analyze(Store& store, unsigned jobs) { return proflint::testing::analyze_all(store, jobs); }
using proflint::testing::rendered;

}  // namespace

TEST(StoreReader, SeesCommittedFactsAndCannotWrite) {
  auto store = Store::create_in_memory();
  store.db().exec("INSERT INTO string(id, value) VALUES (1, 'x')");
  auto reader = store.open_reader();
  EXPECT_EQ(reader->execAndGet("SELECT value FROM string WHERE id = 1").getString(), "x");
  EXPECT_THROW(reader->exec("INSERT INTO string(id, value) VALUES (2, 'y')"), SQLite::Exception);
  store.db().exec("INSERT INTO string(id, value) VALUES (3, 'z')");
  EXPECT_EQ(reader->execAndGet("SELECT count(*) FROM string").getInt(), 2);
}

TEST(StoreReader, TwoStoresInOneProcessStaySeparate) {
  auto a = Store::create_in_memory();
  auto b = Store::create_in_memory();
  a.db().exec("INSERT INTO string(id, value) VALUES (1, 'a')");
  EXPECT_EQ(b.open_reader()->execAndGet("SELECT count(*) FROM string").getInt(), 0);
  EXPECT_EQ(a.open_reader()->execAndGet("SELECT count(*) FROM string").getInt(), 1);
}

TEST(ParallelAnalysis, SameFindingsInSameOrderAsOneThread) {
  for (const char* rel : {"kineto/tb_resnet50_v100_workers0.pt.trace.json.gz", "nsys/nsys2026_h100_2gpu_1s.sqlite"}) {
    REALDATA_OR_SKIP(path, rel);
    Store store = load_inputs({path}, LoadOptions{});
    auto one = analyze(store, 1);
    ASSERT_FALSE(one.findings.empty()) << rel;
    std::string expected = rendered(one);
    for (unsigned jobs : {2u, 3u, 8u})
      EXPECT_EQ(rendered(analyze(store, jobs)), expected) << rel << " with " << jobs << " jobs";
  }
}

TEST(ParallelAnalysis, FixtureWithSeveralTracesMatchesOneThread) {
  auto dir = proflint::testing::source_dir() / "fixtures";
  Store store =
      load_inputs({(dir / "sample_train.json.gz").string(), (dir / "sample_amp.json.gz").string()}, LoadOptions{});
  auto one = analyze(store, 1);
  EXPECT_EQ(one.summaries.size(), 2u);
  EXPECT_EQ(rendered(analyze(store, 4)), rendered(one));
}
