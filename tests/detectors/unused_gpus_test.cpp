// tests/detectors/unused_gpus_test.cpp — unused-gpus on jobs of one Nsight Systems export per rank
// (issue 16): a GPU another rank of the job used is not unused, and ranks whose device ids are
// per-process ordinals that the exports do not resolve are not judged.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include <SQLiteCpp/Database.h>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint;
using namespace proflint::testing;

namespace fs = std::filesystem;

namespace {

const char* kId = "unused-gpus";

AnalysisResult analyze_many(const std::vector<std::string>& paths) {
  Store store = load_inputs(paths, LoadOptions{});
  AnalysisOptions ao;
  ao.only = {kId};
  return run_analysis(store, ao, detector_registry());
}

std::vector<std::string> cvd_ranks() {
  return {fixture_path("jobs/nsys_per_rank_cvd/rank0.sqlite").string(),
          fixture_path("jobs/nsys_per_rank_cvd/rank1.sqlite").string()};
}

}  // namespace

// fixtures/jobs/nsys_per_rank_cvd (make_job_fixtures.sh): 2 ranks, RANK/WORLD_SIZE in each export's
// environment, CUDA_VISIBLE_DEVICES per rank on a 4-GPU node. By hand (sqlite3): every KERNEL row of
// both exports says deviceId 0; TARGET_INFO_CUDA_DEVICE maps rank 0's (pid 52685) device 0 to gpuId 0
// and rank 1's (pid 52782) to gpuId 1; TARGET_INFO_GPU lists ids 0-3 (cuDevice 0-3). So the job
// used GPUs 0 and 1, and GPUs 2 and 3 are unused: one finding for the job, not one per export.
TEST(UnusedGpus, JobOfOneExportPerRankNamesOnlyTheGpusNoRankUsed) {
  auto r = analyze_many(cvd_ranks());
  auto f = findings_of(r, kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["unused_device_ids"], nlohmann::ordered_json::array({2, 3}));
  EXPECT_EQ(f[0].evidence["used_devices"], 2);
  EXPECT_EQ(f[0].evidence["visible_devices"], 4);
  EXPECT_NE(f[0].problem.find("The job used GPU 0 (NVIDIA A100-SXM4-80GB), GPU 1 (NVIDIA A100-SXM4-80GB) only"),
            std::string::npos)
      << f[0].problem;
  // Each rank's own devices: its device 0 is the GPU the export names, not GPU 0 for both.
  ASSERT_EQ(r.summaries.size(), 2u);
  std::set<int64_t> used;
  for (const auto& s : r.summaries) {
    ASSERT_EQ(s.devices.size(), 1u);
    used.insert(s.devices[0].device_id);
  }
  EXPECT_EQ(used, (std::set<int64_t>{0, 1}));
}

// Rank 1's export alone: its kernels (deviceId 0 in the file) and the GPU metrics nsys sampled for
// GPU 1 (typeId 0x10001) are one GPU in the store. By hand (sqlite3 on rank1.sqlite): SMs Active
// (metricId 0) sums to 107 over typeId 65536's 11 samples, 104 over 65537's, 0 over 65538/65539.
TEST(UnusedGpus, RankWithCudaVisibleDevicesKeepsItsGpuInEveryTable) {
  Store store = load_inputs({cvd_ranks()[1]}, LoadOptions{});
  auto ids = [&](const std::string& sql) {
    std::vector<std::string> out;
    SQLite::Statement q(store.db(), sql);
    while (q.executeStep()) out.push_back(q.getColumn(0).getString());
    return out;
  };
  EXPECT_EQ(ids("SELECT DISTINCT device_id FROM kernel"), std::vector<std::string>{"1"});
  EXPECT_EQ(ids("SELECT device_id FROM device WHERE has_activity = 1"), std::vector<std::string>{"1"});
  EXPECT_EQ(ids("SELECT device_id || ':' || CAST(sum(value) AS INTEGER) FROM sample WHERE metric = 'sm_active' "
                "GROUP BY device_id ORDER BY device_id"),
            (std::vector<std::string>{"0:107", "1:104", "2:0", "3:0"}));
}

// One rank of the job alone: the other rank (world size 2) may use any listed GPU: silent.
TEST(UnusedGpus, OneRankOfAnIncompleteJobIsNotJudged) {
  EXPECT_TRUE(findings_of(analyze_many({cvd_ranks()[0]}), kId).empty());
}

// The same exports without TARGET_INFO_CUDA_DEVICE (as nsys 2022-2024 write them): both ranks say
// device 0 and nothing says which GPU that is. Two ranks of one job never drive one GPU, so the ids
// are per-process and the listed GPUs cannot be matched to the used ones: no finding (before, GPUs
// 1-3 were reported unused although rank 1 ran on GPU 1).
TEST(UnusedGpus, RanksSharingADeviceIdWithoutGpuIdentityAreNotJudged) {
  fs::path dir = fs::path(::testing::TempDir()) / ("proflint_unused_gpus_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::vector<std::string> copies;
  for (const auto& path : cvd_ranks()) {
    fs::path copy = dir / fs::path(path).filename();
    fs::copy_file(path, copy, fs::copy_options::overwrite_existing);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(copy.string().c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "DROP TABLE TARGET_INFO_CUDA_DEVICE", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    copies.push_back(copy.string());
  }
  auto r = analyze_many(copies);
  EXPECT_TRUE(findings_of(r, kId).empty());
  ASSERT_EQ(r.summaries.size(), 2u);
  EXPECT_EQ(r.summaries[0].devices.at(0).device_id, 0);
  EXPECT_EQ(r.summaries[1].devices.at(0).device_id, 0);
  fs::remove_all(dir);
}

// A single-process capture keeps its verdict: the per-process fixture's export lists 2 GPUs, both used.
TEST(UnusedGpus, SilentWhenEveryListedGpuRanWork) {
  EXPECT_TRUE(findings_of(analyze_many({fixture_path("ddp2_per_process_ids.nsys.sqlite").string()}), kId).empty());
}
