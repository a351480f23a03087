// tests/report/report_cli_test.cpp — `proflint report` end to end: golden files per report, the
// saved-store round trip (same bytes as from the profile, with and without derive flags), and
// bad input (exit 2, a clear message, nothing written).
#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/support/run.hpp"

namespace fs = std::filesystem;
using namespace proflint::testing;

namespace {

const std::vector<std::string> kReports = {"summary", "detail",  "iteration",  "kernel",        "tensor",
                                           "op_type", "group_node", "expert_systems", "collectives", "graphs"};

std::string fixture() { return shell_quote(fixture_path("report_mlp.json.gz").string()); }

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::path(::testing::TempDir()) / ("proflint_report_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::map<std::string, std::string> files_in(const fs::path& dir) {
  std::map<std::string, std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) out[e.path().filename().string()] = slurp(e.path().string());
  return out;
}

// Records of an RFC 4180 text: line ends outside quoted fields.
size_t csv_records(const std::string& text) {
  size_t n = 0;
  bool quoted = false;
  for (char c : text) {
    if (c == '"')
      quoted = !quoted;
    else if (c == '\n' && !quoted)
      ++n;
  }
  return n;
}

}  // namespace

// One golden file per report (CSV), plus the JSON of three of them; the other JSON files must
// hold the same rows as their CSV. PROFLINT_UPDATE_GOLDENS=1 rewrites tests/golden/reports/mlp/.
TEST(ReportCli, GoldenReportsOnTheMlpFixture) {
  auto out = fresh_dir("golden");
  auto r = run_proflint("report " + fixture() + " --reports all --formats csv,json --base-name mlp --output-path " +
                        shell_quote(out.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto files = files_in(out);
  ASSERT_EQ(files.size(), 20u);
  for (const auto& rep : kReports) {
    std::string stem = "mlp_" + rep;
    EXPECT_NE(r.out.find("wrote " + (out / (stem + ".csv")).string()), std::string::npos) << r.out;
    ASSERT_TRUE(files.count(stem + ".csv") && files.count(stem + ".json")) << stem;
    auto j = nlohmann::json::parse(files[stem + ".json"]);
    EXPECT_EQ(j["report"], rep);
    if (rep != "summary" && rep != "collectives" && rep != "graphs") {  // several tables: long form
      EXPECT_EQ(csv_records(files[stem + ".csv"]), j["tables"][0]["rows"].size() + 1) << stem;
    }
  }
  auto golden = source_dir() / "tests" / "golden" / "reports" / "mlp";
  std::set<std::string> kept;
  for (const auto& rep : kReports) kept.insert("mlp_" + rep + ".csv");
  for (const char* j : {"mlp_summary.json", "mlp_tensor.json", "mlp_expert_systems.json"}) kept.insert(j);
  if (std::getenv("PROFLINT_UPDATE_GOLDENS")) {
    fs::create_directories(golden);
    for (const auto& name : kept) std::ofstream(golden / name, std::ios::binary) << files[name];
    GTEST_SKIP() << "rewrote " << golden;
  }
  for (const auto& name : kept) {
    ASSERT_TRUE(fs::exists(golden / name)) << "missing " << (golden / name) << "; run with PROFLINT_UPDATE_GOLDENS=1";
    EXPECT_EQ(slurp((golden / name).string()), files[name])
        << name << " changed; review, then PROFLINT_UPDATE_GOLDENS=1 to accept";
  }
}

// `ingest` then `report s.db FLAGS` gives the same bytes as `report PROFILE FLAGS`, for every
// flag set, and a store ingested with a range restates that range without flags.
TEST(ReportCli, SavedStoreGivesTheSameReportBytesAsTheProfile) {
  auto dir = fresh_dir("roundtrip");
  std::string db = shell_quote((dir / "s.db").string());
  auto ing = run_proflint("ingest " + fixture() + " --db " + db);
  ASSERT_EQ(ing.exit_code, 0) << ing.err;
  const std::vector<std::string> flag_sets = {"", "--iter-start 1 --iter-stop 1", "--key-node Optimizer.step",
                                              "--key-node Optimizer.step --iter-start 1 --iter-stop 2"};
  std::set<std::string> distinct_summaries;
  for (size_t i = 0; i < flag_sets.size(); ++i) {
    auto a = dir / ("profile_" + std::to_string(i));
    auto b = dir / ("store_" + std::to_string(i));
    std::string common = " --reports all --formats csv,json " + flag_sets[i] + " --output-path ";
    auto ra = run_proflint("report " + fixture() + common + shell_quote(a.string()));
    auto rb = run_proflint("report " + db + common + shell_quote(b.string()));
    ASSERT_EQ(ra.exit_code, 0) << ra.err;
    ASSERT_EQ(rb.exit_code, 0) << rb.err;
    auto fa = files_in(a), fb = files_in(b);
    ASSERT_EQ(fa.size(), 20u);
    EXPECT_EQ(fa, fb) << "flags: " << flag_sets[i];
    distinct_summaries.insert(fa["proflint_summary.csv"]);
  }
  EXPECT_EQ(distinct_summaries.size(), flag_sets.size()) << "each flag set must change the summary";

  // Ingested with a range: the store remembers it.
  std::string db2 = shell_quote((dir / "s2.db").string());
  ASSERT_EQ(run_proflint("ingest " + fixture() + " --iter-start 1 --iter-stop 1 --db " + db2).exit_code, 0);
  auto a = dir / "ranged_profile", b = dir / "ranged_store";
  ASSERT_EQ(run_proflint("report " + fixture() +
                         " --reports summary,kernel,iteration --iter-start 1 --iter-stop 1 --output-path " +
                         shell_quote(a.string()))
                .exit_code,
            0);
  ASSERT_EQ(
      run_proflint("report " + db2 + " --reports summary,kernel,iteration --output-path " + shell_quote(b.string()))
          .exit_code,
      0);
  EXPECT_EQ(files_in(a), files_in(b));
  EXPECT_NE(files_in(a)["proflint_summary.csv"].find("Iterations,Aggregated Iterations,Value,1\n"), std::string::npos);
}

TEST(ReportCli, UnknownReportNameSuggestsAndWritesNothing) {
  auto dir = fresh_dir("unknown") / "out";
  auto r = run_proflint("report " + fixture() + " --reports summary,sumary --output-path " + shell_quote(dir.string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown report 'sumary' (did you mean 'summary'?)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir));
}

TEST(ReportCli, MissingReportsFlagIsAUsageError) {
  auto r = run_proflint("report " + fixture());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--reports"), std::string::npos) << r.err;
}

TEST(ReportCli, UnknownFormatAndDomainAreRefused) {
  auto dir = fresh_dir("domain") / "out";
  auto f = run_proflint("report " + fixture() + " --reports summary --formats jsn --output-path " +
                        shell_quote(dir.string()));
  EXPECT_EQ(f.exit_code, 2);
  EXPECT_NE(f.err.find("unknown report format 'jsn' (did you mean 'json'?)"), std::string::npos) << f.err;
  auto d = run_proflint("report " + fixture() + " --reports summary --domains Forward --output-path " +
                        shell_quote(dir.string()));
  EXPECT_EQ(d.exit_code, 2);
  EXPECT_NE(d.err.find("unknown NVTX domain 'Forward'"), std::string::npos) << d.err;
  EXPECT_NE(d.err.find("no named NVTX domains"), std::string::npos) << d.err;
  EXPECT_FALSE(fs::exists(dir));
}

TEST(ReportCli, ExistingFilesNeedForceAndNothingIsWrittenWithoutIt) {
  auto dir = fresh_dir("existing");
  std::ofstream(dir / "proflint_kernel.csv") << "keep me\n";
  auto r = run_proflint("report " + fixture() + " --reports summary,kernel --output-path " + shell_quote(dir.string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("proflint_kernel.csv already exists"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
  EXPECT_EQ(slurp((dir / "proflint_kernel.csv").string()), "keep me\n");
  EXPECT_FALSE(fs::exists(dir / "proflint_summary.csv")) << "no partial output";
  auto f = run_proflint("report " + fixture() + " --reports summary,kernel --force --output-path " +
                        shell_quote(dir.string()));
  EXPECT_EQ(f.exit_code, 0) << f.err;
  EXPECT_NE(slurp((dir / "proflint_kernel.csv").string()), "keep me\n");
  EXPECT_TRUE(fs::exists(dir / "proflint_summary.csv"));
}

TEST(ReportCli, OutputPathThatCannotBeAFolderIsRefused) {
  auto dir = fresh_dir("notafolder");
  std::ofstream(dir / "file") << "x";
  auto a =
      run_proflint("report " + fixture() + " --reports summary --output-path " + shell_quote((dir / "file").string()));
  EXPECT_EQ(a.exit_code, 2);
  EXPECT_NE(a.err.find("must be a folder"), std::string::npos) << a.err;
  auto b = run_proflint("report " + fixture() + " --reports summary --output-path " +
                        shell_quote((dir / "file" / "sub").string()));
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find("cannot create the output folder"), std::string::npos) << b.err;
  EXPECT_EQ(files_in(dir).size(), 1u);
}

// A store saved before schema version 2 (no trace.iter_start/iter_stop, and none of version 3's
// steady_state table and trace.workload) is upgraded in memory, never on disk, and reports as the
// profile does.
TEST(ReportCli, StoreFromSchemaVersion1IsUpgradedInMemory) {
  auto dir = fresh_dir("v1store");
  auto db_path = dir / "v1.db";
  ASSERT_EQ(run_proflint("ingest " + fixture() + " --db " + shell_quote(db_path.string())).exit_code, 0);
  {
    SQLite::Database db(db_path.string(), SQLite::OPEN_READWRITE);
    // Undo schema 13 (iteration.selected, _range.marker; its migration recreates the range view, so
    // the placeholder view only has to exist), 12 (its columns go with the tables of schemas 8 and 9
    // below) and 11 (graph node creation events).
    db.exec("DROP INDEX range_by_marker; DROP VIEW range; ALTER TABLE _range DROP COLUMN marker; ALTER TABLE iteration DROP COLUMN selected; "
            "CREATE VIEW range AS SELECT id FROM _range");
    db.exec("DROP VIEW graph_node_event; DROP TABLE _graph_node_event");
    // Undo schema 10 (the counter view over nsys GPU metrics, OS call callers), then schema 6
    // (samples: its tables, view and index)
    db.exec("DROP VIEW counter; CREATE VIEW counter AS SELECT c.trace_id, c.device_id, c.ts_ns, s.value AS name, c.value "
            "FROM _counter c JOIN string s ON s.id = c.name_id; DROP VIEW os_call_caller");
    db.exec("DROP VIEW sample; DROP TABLE sample_point; DROP TABLE sample_series; DROP TABLE operator_timing");
    // Undo schema 9 (graphs and compiled regions), schema 8 (source attribution), schema 7 (host activity), schema 5 (jobs), schema 4 (kernel.tc_eligible_op_id; its migration recreates the kernel
    // view, so the placeholder view only has to exist), schema 3 (steady state, workload) and schema 2.
    db.exec("DROP VIEW kernel; ALTER TABLE _kernel DROP COLUMN tc_eligible_op_id; CREATE VIEW kernel AS SELECT id "
            "FROM _kernel; ALTER TABLE trace DROP COLUMN iter_start; ALTER TABLE trace DROP COLUMN iter_stop; "
            "DROP TABLE steady_state; ALTER TABLE trace DROP COLUMN workload; DROP VIEW collective_rank_summary; "
            "DROP TABLE collective_participation; DROP TABLE collective_instance; DROP TABLE job_rank; DROP TABLE job; "
            "DROP TABLE collective_arg; DROP VIEW os_call; DROP VIEW cpu_sample; DROP VIEW cpu_frame; "
            "DROP TABLE _os_call; DROP TABLE _cpu_sample; DROP TABLE _cpu_frame; "
            "DROP TABLE kernel_graph_node; DROP TABLE graph_kernel; DROP TABLE cuda_graph; "
            "DROP TABLE compiled_region; DROP TABLE kernel_compiled; DROP VIEW source; DROP TABLE _source; "
            "PRAGMA user_version=1");
  }
  auto a = dir / "a", b = dir / "b";
  auto rb = run_proflint("report " + shell_quote(db_path.string()) + " --reports summary,detail --output-path " +
                         shell_quote(b.string()));
  ASSERT_EQ(rb.exit_code, 0) << rb.err;
  ASSERT_EQ(run_proflint("report " + fixture() + " --reports summary,detail --output-path " + shell_quote(a.string()))
                .exit_code,
            0);
  EXPECT_EQ(files_in(a), files_in(b));
  SQLite::Database db(db_path.string(), SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("PRAGMA user_version").getInt(), 1) << "the user's file is never modified";
}

TEST(ReportCli, IterationRangeMustBeOrderedAndNonNegative) {
  auto dir = fresh_dir("badrange") / "out";
  auto a = run_proflint("report " + fixture() + " --reports summary --iter-start 2 --iter-stop 1 --output-path " +
                        shell_quote(dir.string()));
  EXPECT_EQ(a.exit_code, 2);
  EXPECT_NE(a.err.find("--iter-stop (1) must be at least --iter-start (2)"), std::string::npos) << a.err;
  auto b = run_proflint("analyze " + fixture() + " --iter-start -1");
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find("cannot be negative"), std::string::npos) << b.err;
  EXPECT_FALSE(fs::exists(dir));
}

TEST(ReportCli, RangeThatSelectsNoIterationIsRefused) {
  auto dir = fresh_dir("emptyrange") / "out";
  auto r = run_proflint("report " + fixture() + " --reports summary --iter-start 7 --output-path " +
                        shell_quote(dir.string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("select none of its 3 iterations (0-2)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir));
}
