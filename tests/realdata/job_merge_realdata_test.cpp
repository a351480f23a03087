// tests/realdata/job_merge_realdata_test.cpp — one finding per job problem on multi-GPU nsys
// exports: the real 2-GPU export in ../shared/realdata (skipped visibly when absent) and the
// generated two-process fixture whose processes both call their GPU "device 0".
#include <gtest/gtest.h>

#include <map>
#include <string>

#include <SQLiteCpp/Database.h>

#include "engine/lua/rules.hpp"
#include "engine/pipeline/analyze.hpp"
#include "engine/pipeline/load.hpp"
#include "tests/support/realdata.hpp"

namespace proflint::testing {
namespace {

AnalysisResult analyze_all(const std::string& path) {
  Store store = load_inputs({path}, LoadOptions{});
  return run_analysis(store, AnalysisOptions{}, detector_registry());
}

const Finding* only_one(const AnalysisResult& r, const std::string& id) {
  const Finding* found = nullptr;
  int n = 0;
  for (const auto& f : r.findings)
    if (f.id == id && !f.diagnostic) {
      found = &f;
      ++n;
    }
  EXPECT_EQ(n, 1) << id << " should be listed once for the job";
  return n == 1 ? found : nullptr;
}

}  // namespace

// nsys2026_h100_2gpu_1s: processes 111 and 112 drive GPUs 0 and 1 with the same work. Before
// issue 16 memcpy-bound and amp-not-used were each listed twice with near-identical numbers.
TEST(JobMergeRealdata, TwoGpuExportListsEachRepeatedProblemOnce) {
  auto path = realdata_dir() / "nsys" / "nsys2026_h100_2gpu_1s.sqlite";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "real data absent: " << path.string();
  AnalysisResult r = analyze_all(path.string());
  std::map<std::string, int> problems_per_id;
  for (const auto& f : r.findings)
    if (!f.diagnostic) ++problems_per_id[f.id];
  for (const auto& [id, n] : problems_per_id) EXPECT_EQ(n, 1) << id << " listed " << n << " times";

  const Finding* memcpy = only_one(r, "memcpy-bound");
  ASSERT_NE(memcpy, nullptr);
  ASSERT_EQ(memcpy->instances.size(), 2u);
  EXPECT_EQ(memcpy->instances[0].scope.device_id.value_or(-1), 0);
  EXPECT_EQ(memcpy->instances[1].scope.device_id.value_or(-1), 1);
  // Checked by hand with python3/sqlite3 on the raw export: the union of each device's MEMCPY rows
  // (no kernel overlaps them) is 940,490,300 ns on device 0 and 940,351,914 ns on device 1; the
  // detector recovers half of it (recoverable_fraction 0.5).
  EXPECT_EQ(memcpy->instances[0].evidence["exposed_copy_ns"], 940490300);
  EXPECT_EQ(memcpy->instances[1].evidence["exposed_copy_ns"], 940351914);
  EXPECT_EQ(memcpy->instances[0].estimated_savings_ns, 470245150);
  EXPECT_EQ(memcpy->instances[1].estimated_savings_ns, 470175957);
  // Both GPUs share the trace's wall time: the job saves the smaller of the two, not the sum.
  EXPECT_EQ(memcpy->estimated_savings_ns, 470175957);
  EXPECT_EQ(memcpy->evidence["spread"]["exposed_copy_ns"]["min"], 940351914);
  EXPECT_EQ(memcpy->evidence["spread"]["exposed_copy_ns"]["max"], 940490300);
  EXPECT_NE(memcpy->problem.find("2 GPUs of one job (rank 0 (GPU 0), rank 1 (GPU 1))"), std::string::npos) << memcpy->problem;

  const Finding* amp = only_one(r, "amp-not-used");
  ASSERT_NE(amp, nullptr);
  ASSERT_EQ(amp->instances.size(), 2u);
  EXPECT_EQ(amp->instances[0].scope.device_id.value_or(-1), 0);
  EXPECT_EQ(amp->instances[1].scope.device_id.value_or(-1), 1);
  EXPECT_LE(amp->estimated_savings_ns,
            std::min(amp->instances[0].estimated_savings_ns, amp->instances[1].estimated_savings_ns));
}

// fixtures/ddp2_per_process_ids.nsys.sqlite (gen_profile.py --device-ids per-process, docs/fixtures.md):
// two DDP processes, each calling its GPU device 0, with pageable copies on both. The importer maps
// each process's device 0 to its own GPU (TARGET_INFO_CUDA_DEVICE), so the job has two GPUs and
// each repeated finding is listed once for both; without the mapping both processes' work lands on
// one "device 0" and pageable-memcpy is a single finding of one GPU with no instances.
TEST(JobMergeRealdata, GeneratedProcessesOnDevice0AreTwoGpusAndMergeOnce) {
  AnalysisResult r = analyze_all(fixture_path("ddp2_per_process_ids.nsys.sqlite").string());
  ASSERT_EQ(r.summaries.size(), 1u);
  ASSERT_EQ(r.summaries[0].devices.size(), 2u) << "the two processes' device 0 are two GPUs";
  // 372 kernels per process in the raw file (sqlite3: GROUP BY globalPid), all deviceId 0.
  EXPECT_EQ(r.summaries[0].devices[0].kernel_count, 372);
  EXPECT_EQ(r.summaries[0].devices[1].kernel_count, 372);
  const Finding* pageable = only_one(r, "pageable-memcpy");
  ASSERT_NE(pageable, nullptr);
  ASSERT_EQ(pageable->instances.size(), 2u);
  EXPECT_EQ(pageable->evidence["where"], nlohmann::ordered_json::array({"rank 0 (GPU 0)", "rank 1 (GPU 1)"}));
  EXPECT_EQ(pageable->estimated_savings_ns, std::min(pageable->instances[0].estimated_savings_ns,
                                                     pageable->instances[1].estimated_savings_ns));
  // sync-memcpy claims the same copies: its whole job-level estimate is counted under #1.
  const Finding* sync = only_one(r, "sync-memcpy");
  ASSERT_NE(sync, nullptr);
  EXPECT_EQ(sync->estimated_savings_ns, 0);
  ASSERT_EQ(sync->overlaps.size(), 1u);
  EXPECT_EQ(sync->overlaps[0].id, "pageable-memcpy");
  EXPECT_EQ(sync->overlaps[0].rank, 1u);
}

// Job identity from the job tables (schema 5, docs/multi-rank.md) when the store has them: they
// override the world-size rule. The two DDP rank files record world size 2 / nccl, so by default
// channels-last-not-used (a shipped Lua rule, on both ranks) is one job finding; job_rank putting them in two jobs
// keeps two findings, and a rank per GPU of one trace names the GPUs by rank.
TEST(JobMergeRealdata, JobRankTableDecidesWhichTracesAreOneJob) {
  auto run = [](const std::vector<std::string>& paths, const std::string& rows) {
    Store store = load_inputs(paths, LoadOptions{});
    store.db().exec(
        "CREATE TABLE IF NOT EXISTS job_rank (job_id INTEGER NOT NULL, rank INTEGER NOT NULL, trace_id INTEGER NOT NULL,"
        " pid INTEGER, device_id INTEGER, clock_offset_ns INTEGER NOT NULL DEFAULT 0, offset_residual_ns INTEGER,"
        " PRIMARY KEY (job_id, rank)); DELETE FROM job_rank;");
    if (!rows.empty()) store.db().exec("INSERT INTO job_rank (job_id, rank, trace_id, pid, device_id) VALUES " + rows);
    AnalysisOptions options;  // with the shipped rule that fires on both DDP ranks
    options.rule_files = {lua::read_rule_file((source_dir() / "rules" / "channels_last_not_used.lua").string())};
    return run_analysis(store, options, detector_registry());
  };
  std::vector<std::string> ranks = {fixture_path("ddp2_rank0.json.gz").string(),
                                    fixture_path("ddp2_rank1_slow30.json.gz").string()};
  auto count = [](const AnalysisResult& r, const std::string& id) {
    int n = 0;
    for (const auto& f : r.findings) n += f.id == id;
    return n;
  };
  AnalysisResult together = run(ranks, "(1, 0, 1, NULL, 0), (1, 1, 2, NULL, 1)");
  ASSERT_EQ(count(together, "channels-last-not-used"), 1);
  AnalysisResult apart = run(ranks, "(1, 0, 1, NULL, 0), (2, 0, 2, NULL, 1)");
  EXPECT_EQ(count(apart, "channels-last-not-used"), 2);

  AnalysisResult nsys = run({fixture_path("ddp2_per_process_ids.nsys.sqlite").string()},
                            "(1, 0, 1, 7461, 0), (1, 1, 1, 7558, 1)");
  const Finding* pageable = only_one(nsys, "pageable-memcpy");
  ASSERT_NE(pageable, nullptr);
  EXPECT_EQ(pageable->evidence["where"], nlohmann::ordered_json::array({"rank 0 (GPU 0)", "rank 1 (GPU 1)"}));
}

}  // namespace proflint::testing
