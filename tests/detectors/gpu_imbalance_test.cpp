// tests/detectors/gpu_imbalance_test.cpp — gpu-imbalance names the busiest GPU or rank.
#include <gtest/gtest.h>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint;
using namespace proflint::testing;

namespace {

const char* kId = "gpu-imbalance";

AnalysisResult analyze_many(const std::vector<std::string>& paths, nlohmann::json options = nlohmann::json::object()) {
  Store store = load_inputs(paths, LoadOptions{});
  AnalysisOptions ao;
  ao.only = {kId};
  if (!options.empty()) ao.detectors[kId].options = options;
  return run_analysis(store, ao, detector_registry());
}

}  // namespace

TEST(GpuImbalance, NamesTheSlowRankOfASyntheticPair) {
  // Rank 1 runs every kernel 30% longer: 19.7 ms of GPU work per step against 15.1 ms.
  auto r = analyze_many({fixture_path("ddp2_rank0.json.gz").string(), fixture_path("ddp2_rank1_slow30.json.gz").string()});
  auto f = findings_of(r, kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["straggler"], "rank 1");
  EXPECT_EQ(f[0].scope.rank.value_or(-1), 1);
  EXPECT_EQ(f[0].scope.trace_id.value_or(-1), 2);
  EXPECT_EQ(f[0].scope.device_id.value_or(-1), 1);
  EXPECT_NEAR(f[0].evidence["imbalance"].get<double>(), 0.230, 0.005);
  EXPECT_TRUE(f[0].evidence["per_iteration"].get<bool>());
  ASSERT_EQ(f[0].evidence["gpus"].size(), 2u);
  // Work per step = compute kernels + copies + memsets launched in the step, median over the steps
  // both ranks recorded (ProfilerStep#2..4). By hand from the raw events (python3: kernels joined to
  // their cudaLaunchKernel by correlation, launch inside the ProfilerStep range, nccl excluded):
  // rank 0 15,114,071 / 15,145,330 / 15,133,340 ns, rank 1 19,670,260 / 19,647,701 / 19,663,141 ns.
  EXPECT_EQ(f[0].evidence["matched_steps"], 3);
  EXPECT_EQ(f[0].evidence["gpus"][0]["work_per_step_ns"], 19663141);
  EXPECT_EQ(f[0].evidence["gpus"][1]["work_per_step_ns"], 15133340);
  // Savings: half of the straggler's work above the mean, over its 3 iterations.
  EXPECT_NEAR(static_cast<double>(f[0].estimated_savings_ns), 0.5 * 3 * (19663141 - (19663141 + 15133340) / 2.0), 2.0);
  EXPECT_NE(f[0].problem.find("rank 1 does the most GPU work"), std::string::npos) << f[0].problem;
}

TEST(GpuImbalance, OrderOfFilesDoesNotMatter) {
  auto f = findings_of(analyze_many({fixture_path("ddp2_rank1_slow30.json.gz").string(), fixture_path("ddp2_rank0.json.gz").string()}), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["straggler"], "rank 1");
  EXPECT_EQ(f[0].scope.trace_id.value_or(-1), 1);
}

TEST(GpuImbalance, SkippedOnOneSingleGpuTrace) {
  auto r = analyze_many({fixture_path("ddp2_rank0.json.gz").string()});
  EXPECT_TRUE(findings_of(r, kId).empty());
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("needs multi_device"), std::string::npos);
}

TEST(GpuImbalance, SilentOnProfilesThatAreNotRanksOfOneJob) {
  // Two single-GPU runs without distributedInfo: comparing them says nothing about balance.
  auto r = analyze_many({fixture_path("sample_train.json.gz").string(), fixture_path("sample_amp.json.gz").string()});
  EXPECT_TRUE(findings_of(r, kId).empty());
}

TEST(GpuImbalance, SampledRanksOfA128RankJob) {
  // Rank 1 does 36% more compute than rank 0 and waits less in NCCL; the steps stay in lockstep, so
  // the cost is small: a low finding. By hand from the raw events (compute kernels, copies and
  // memsets launched inside ProfilerStep#551/#552, nccl excluded): rank 0 106.914 / 104.731 ms,
  // rank 1 138.215 / 150.262 ms; medians 105.8225 and 144.2385 ms -> imbalance 0.2663, excess over
  // the mean 19.208 ms per step x 2 steps = 38.416 ms.
  REALDATA_OR_SKIP(r0, "kineto/hta_sampled_rank-0.json.gz");
  REALDATA_OR_SKIP(r1, "kineto/hta_sampled_rank-1.json.gz");
  auto f = findings_of(analyze_many({r0, r1}), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["straggler"], "rank 1");
  EXPECT_EQ(f[0].evidence["matched_steps"], 2);
  EXPECT_NEAR(f[0].evidence["imbalance"].get<double>(), 0.2663, 0.0005);
  EXPECT_NEAR(f[0].evidence["excess_ns"].get<double>(), 38416000, 1000);
  EXPECT_NE(f[0].problem.find("shortest communication kernels"), std::string::npos);
  EXPECT_EQ(f[0].effective_severity, Severity::low);
  // A stricter share threshold silences it.
  EXPECT_TRUE(findings_of(analyze_many({r0, r1}, {{"min_share", 0.05}}), kId).empty());
}

TEST(GpuImbalance, SilentOnBalancedTwoGpuCapture) {
  // nsys capture of two ranks (one process per GPU) doing the same work.
  REALDATA_OR_SKIP(path, "nsys/nsys2026_h100_2gpu_1s.sqlite");
  EXPECT_TRUE(findings_of(analyze_many({path}), kId).empty());
}
