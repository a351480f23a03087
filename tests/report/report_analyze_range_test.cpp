// tests/report/report_analyze_range_test.cpp — --iter-start/--iter-stop hold for analyze's
// detectors too (not only the breakdown), and a saved store gives the same findings.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/analysis/summary.hpp"
#include "tests/report/report_support.hpp"
#include "tests/support/run.hpp"

namespace fs = std::filesystem;
using namespace proflint;
using namespace proflint::testing;

namespace {

nlohmann::json finding(const nlohmann::json& out, const std::string& id) {
  for (const auto& f : out["findings"])
    if (f["id"] == id) return f;
  return nullptr;
}

}  // namespace

// pageable-memcpy counted all 18 copies of the capture even with --iter-start 2 --iter-stop 3
// (detectors query the raw tables); it must count the 6 of iterations 2..3.
TEST(ReportAnalyzeRange, DetectorsSeeOnlyTheSelectedIterations) {
  std::string profile = fixture_path("sample_train.json.gz").string();
  auto r = run_proflint("analyze " + shell_quote(profile) + " --format json --iter-start 2 --iter-stop 3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = nlohmann::json::parse(r.out);
  DeriveOptions o;
  o.iter_start = 2;
  o.iter_stop = 3;
  Built b = load_for_reports(profile, o);
  int64_t copies = sql_int(b.store,
                           "SELECT COUNT(*) FROM memcpy WHERE iteration BETWEEN 2 AND 3 AND (src_kind = 'pageable' OR "
                           "dst_kind = 'pageable')");
  EXPECT_EQ(copies, 6);
  auto f = finding(out, "pageable-memcpy");
  ASSERT_FALSE(f.is_null());
  EXPECT_EQ(f["evidence"]["copies"], copies);
  // The whole capture still has 18, and the header's wall time is the selected windows' span.
  EXPECT_EQ(sql_int(b.store, "SELECT COUNT(*) FROM memcpy WHERE src_kind = 'pageable' OR dst_kind = 'pageable'"), 18);
  EXPECT_EQ(out["traces"][0]["wall_ns"], sql_int(b.store,
                                                 "SELECT MAX(MAX(end_ns, COALESCE(gpu_end_ns, end_ns))) - "
                                                 "MIN(start_ns) FROM iteration WHERE iteration BETWEEN 2 AND 3"));
}

TEST(ReportAnalyzeRange, SavedStoreGivesTheSameFindingsAsTheProfile) {
  auto dir = fs::path(::testing::TempDir()) / ("proflint_analyze_range_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string profile = shell_quote(fixture_path("sample_train.json.gz").string());
  std::string db = shell_quote((dir / "s.db").string());
  ASSERT_EQ(run_proflint("ingest " + profile + " --db " + db).exit_code, 0);
  for (const char* flags : {"--iter-start 2 --iter-stop 3", "--key-node 'enumerate(DataLoader)' --iter-start 1"}) {
    auto a = run_proflint("analyze " + profile + " --format json " + flags);
    auto b = run_proflint("analyze " + db + " --format json " + flags);
    ASSERT_EQ(a.exit_code, 0) << a.err;
    ASSERT_EQ(b.exit_code, 0) << b.err;
    auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
    ja["traces"][0].erase("path");
    jb["traces"][0].erase("path");
    EXPECT_EQ(ja["findings"], jb["findings"]) << flags;
    EXPECT_EQ(ja["traces"], jb["traces"]) << flags;
  }
}

// The headline summary (proflint summary, ctx.summary, detector inputs) covers the same range as
// the breakdown beside it: kernels and iterations of iterations 2..3 only.
TEST(ReportAnalyzeRange, SummaryCountsOnlyTheSelectedIterations) {
  DeriveOptions o;
  o.iter_start = 2;
  o.iter_stop = 3;
  Built b = load_for_reports(fixture_path("sample_train.json.gz").string(), o);
  auto s = summarize(b.store);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].iterations.count, 2);
  ASSERT_EQ(s[0].devices.size(), 1u);
  EXPECT_EQ(s[0].devices[0].kernel_count,
            sql_int(b.store, "SELECT COUNT(*) FROM kernel WHERE iteration BETWEEN 2 AND 3"));
  EXPECT_EQ(s[0].devices[0].memcpy_count,
            sql_int(b.store, "SELECT COUNT(*) FROM memcpy WHERE iteration BETWEEN 2 AND 3"));
  EXPECT_LT(s[0].devices[0].kernel_count, sql_int(b.store, "SELECT COUNT(*) FROM kernel"));
}

TEST(ReportAnalyzeRange, AnalyzeRefusesARangeThatSelectsNothing) {
  auto r = run_proflint("analyze " + shell_quote(fixture_path("sample_train.json.gz").string()) + " --iter-start 9");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("select none of its 6 iterations (0-5)"), std::string::npos) << r.err;
}
