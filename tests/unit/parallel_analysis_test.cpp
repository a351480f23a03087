// tests/unit/parallel_analysis_test.cpp — detectors and rules run on several threads, each on its
// own read-only connection to the store, and give exactly what one thread gives.
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>

#include "engine/lua/rules.hpp"
#include "engine/pipeline/analyze.hpp"
#include "engine/pipeline/load.hpp"
#include "engine/analysis/summary.hpp"
#include "engine/report/summary_report.hpp"
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

// The summary computes its op-table parts (Tensor Core eligibility, the module view) on a second
// connection of the store when it may use two jobs: the same summaries as one thread gives, for
// several traces, one of them with modules (slow_module_with_modules: 13 module paths).
TEST(ParallelAnalysis, SummaryOnTwoConnectionsMatchesOneThread) {
  auto dir = proflint::testing::source_dir() / "fixtures";
  Store store = load_inputs({(dir / "sample_train.json.gz").string(), (dir / "sample_amp.json.gz").string(),
                             (dir / "slow_module_with_modules.json.gz").string()},
                            LoadOptions{});
  auto one = summarize(store, 1);
  ASSERT_EQ(one.size(), 3u);
  EXPECT_EQ(one[2].modules.size(), 13u);
  EXPECT_GT(one[0].tc_eligible_ops + one[1].tc_eligible_ops + one[2].tc_eligible_ops, 0);
  for (unsigned jobs : {2u, 4u}) {
    auto many = summarize(store, jobs);
    ASSERT_EQ(many.size(), one.size());
    EXPECT_EQ(render_summary_text(many, false), render_summary_text(one, false)) << jobs << " jobs";
    for (size_t t = 0; t < one.size(); ++t) {
      EXPECT_EQ(many[t].tc_eligible_ops, one[t].tc_eligible_ops);
      EXPECT_EQ(many[t].tc_eligible_no_tc_gpu_ns, one[t].tc_eligible_no_tc_gpu_ns);
      ASSERT_EQ(many[t].modules.size(), one[t].modules.size());
      for (size_t m = 0; m < one[t].modules.size(); ++m) {
        EXPECT_EQ(many[t].modules[m].path, one[t].modules[m].path);
        EXPECT_EQ(many[t].modules[m].gpu_time_ns, one[t].modules[m].gpu_time_ns);
      }
    }
  }
}
