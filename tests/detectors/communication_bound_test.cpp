// tests/detectors/communication_bound_test.cpp — communication-bound fires on exposed NCCL/RCCL time only.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/analysis.hpp"
#include "tests/support/job_tables.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint;
using namespace proflint::testing;

namespace {

const char* kId = "communication-bound";

}  // namespace

TEST(CommunicationBound, FiresOnUnbucketedDdpV100) {
  // 2,020 per-parameter all-reduces in 5 steps, after backward, nothing overlapping them.
  REALDATA_OR_SKIP(path, "kineto/hta_ddp_v100_rank1.json.gz");
  auto r = analyze_with(path, kId);
  auto f = findings_of(r, kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].scope.device_id.value_or(-1), 1);
  EXPECT_EQ(f[0].scope.rank.value_or(-1), 1);
  EXPECT_EQ(f[0].evidence["collectives"], 2020);
  EXPECT_EQ(f[0].evidence["collectives_by_type"]["all_reduce"], 2020);
  EXPECT_NEAR(f[0].evidence["collectives_per_iteration"].get<double>(), 404.0, 1e-9);
  EXPECT_NEAR(f[0].evidence["communication_share_of_kernel_time"].get<double>(), 0.365, 0.005);
  EXPECT_EQ(f[0].evidence["communication_time_ns"], 357343000);
  EXPECT_NEAR(f[0].evidence["overlap_ratio"].get<double>(), 0.0, 0.01);
  EXPECT_TRUE(f[0].evidence["many_small_collectives"].get<bool>());
  EXPECT_EQ(f[0].evidence["backward_collectives"], 2020);
  EXPECT_NE(f[0].problem.find("2,020 collective kernels (2,020 all_reduce 357 ms), 404 per iteration"), std::string::npos) << f[0].problem;
  EXPECT_NE(f[0].recommendation.find("bucket_cap_mb"), std::string::npos);
  EXPECT_NE(f[0].recommendation.find("no_sync()"), std::string::npos);
  // Exposed time is the breakdown's 'communication' category.
  // Unbucketed tiny all-reduces: most of the exposed time goes with bucketing (unbucketed_recoverable_fraction 0.8).
  EXPECT_EQ(f[0].estimated_savings_ns, static_cast<int64_t>(static_cast<double>(f[0].evidence["exposed_ns"].get<int64_t>()) * 0.8));
  EXPECT_EQ(f[0].evidence["exposed_ns"].get<int64_t>(), r.summaries[0].devices[0].breakdown_ns.at("communication"));
}

TEST(CommunicationBound, ExposedPlusOverlapIsMergedTime) {
  // Our own overlap computation must agree with the derived breakdown on the exposed part.
  REALDATA_OR_SKIP(path, "kineto/tracelens_mi300_resnet_act_checkpoint.json.gz");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  auto merged = f[0].evidence["merged_communication_ns"].get<int64_t>();
  auto overlap = f[0].evidence["overlap_ns"].get<int64_t>();
  EXPECT_NEAR(static_cast<double>(merged - overlap), f[0].evidence["exposed_ns"].get<double>(), 0.001 * static_cast<double>(merged));
}

TEST(CommunicationBound, FiresOnAmdRcclWithLowBusBandwidth) {
  // MI300X DDP: RCCL ncclDevKernel_Generic = 74% of kernel time, 5.5 MiB median all-reduce at ~3 GB/s.
  REALDATA_OR_SKIP(path, "kineto/tracelens_mi300_resnet_act_checkpoint.json.gz");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].scope.device_id.value_or(-1), 2);
  EXPECT_NEAR(f[0].evidence["communication_share_of_kernel_time"].get<double>(), 0.735, 0.005);
  EXPECT_NEAR(f[0].evidence["exposed_share"].get<double>(), 0.640, 0.005);
  EXPECT_EQ(f[0].evidence["collectives"], 17);
  EXPECT_EQ(f[0].evidence["collectives_by_type"]["all_reduce"], 6);
  EXPECT_EQ(f[0].evidence["collectives_by_type"]["broadcast"], 6);
  EXPECT_EQ(f[0].evidence["median_message_bytes"], 5746640);  // 2,873,320 bf16 elements
  EXPECT_LT(f[0].evidence["median_bus_bandwidth_gbps"].get<double>(), 10.0);
  EXPECT_FALSE(f[0].evidence["many_small_collectives"].get<bool>());
  EXPECT_NE(f[0].recommendation.find("NCCL_DEBUG=INFO"), std::string::npos);
}

TEST(CommunicationBound, KindsComeFromTheNcclAnnotations) {
  // TorchRec recsys job: every kernel is ncclKernel_SendRecv, the nccl:* annotations tell the kinds apart.
  REALDATA_OR_SKIP(path, "kineto/hta_a100_16rank_rank0.json.gz");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  const auto& by_type = f[0].evidence["collectives_by_type"];
  EXPECT_EQ(by_type["all_to_all"], 45);
  EXPECT_EQ(by_type["all_reduce"], 10);
  EXPECT_EQ(by_type["all_gather"], 10);
  EXPECT_EQ(by_type["reduce_scatter"], 10);
  EXPECT_EQ(f[0].evidence["time_by_type_ns"]["all_reduce"], 126555000);
  EXPECT_NEAR(f[0].evidence["exposed_share"].get<double>(), 0.150, 0.002);
}

TEST(CommunicationBound, SilentOnSingleGpuTraces) {
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("sample_train.json.gz").string(), kId), kId).empty());
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("sample_amp.json.gz").string(), kId), kId).empty());
}

TEST(CommunicationBound, SilentOnSingleGpuRealTraces) {
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_v100_workers4.pt.trace.json.gz");
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}

TEST(CommunicationBound, SilentWhenBucketedAllReduceOverlapsBackward) {
  // Synthetic DDP rank 0: bucketed all-reduces on their own stream, hidden behind backward.
  auto path = fixture_path("ddp2_rank0.json.gz").string();
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
  // With the threshold at zero it reports, and sees the overlap and few collectives.
  auto f = findings_of(analyze_with(path, kId, {{"min_exposed_share", 0.0}}), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NEAR(f[0].evidence["overlap_ratio"].get<double>(), 0.694, 0.005);  // only the last bucket trails backward
  EXPECT_LT(f[0].evidence["exposed_share"].get<double>(), 0.01);
  EXPECT_NEAR(f[0].evidence["collectives_per_iteration"].get<double>(), 3.0, 1e-9);
  EXPECT_FALSE(f[0].evidence["many_small_collectives"].get<bool>());
  EXPECT_EQ(f[0].recommendation.find("bucket_cap_mb"), std::string::npos);
}

TEST(CommunicationBound, SilentOnTensorParallelInferenceWithLittleExposedComm) {
  // B200 eager vLLM: 74 all-reduces, 2.4% of the window exposed.
  REALDATA_OR_SKIP(path, "kineto/tracelens_b200_eager.json.gz");
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}

TEST(CommunicationBound, OneRankOfALargerJobEstimatesItsWaitAlone) {
  // Rank 0 of the 4-rank job whose rank 2 is late (fixtures/jobs/ddp4_compute_r2): 12 NCCL
  // all-reduce kernels, 66,749,424 ns in all (python over the raw trace). Without sizes they are
  // grouped by kernel name; the 10th percentile (the 2nd shortest, 4,593,305 ns) stands for the
  // transfer, so the estimated wait is the sum of each kernel's excess over it: 11,645,375 ns. The
  // straggler is late every step, so every kernel waits and the estimate stays low: a limit the
  // docs state.
  auto r = analyze_with(fixture_path("jobs/ddp4_compute_r2/rank0.json.gz").string(), kId);
  auto f = findings_of(r, kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["world_size"], 4);
  EXPECT_EQ(f[0].evidence["ranks_present"], 1);
  EXPECT_EQ(f[0].evidence["estimated_wait_ns"], 11645375);
  EXPECT_EQ(f[0].evidence["estimated_transfer_ns"], 66749424 - 11645375);
  EXPECT_EQ(f[0].evidence["estimate_basis_collectives"], 12);
  EXPECT_NE(f[0].problem.find("Only 1 of the job's 4 ranks is here"), std::string::npos) << f[0].problem;
  EXPECT_NE(f[0].recommendation.find("Profile all ranks together"), std::string::npos);
}

TEST(CommunicationBound, WaitingForAStragglerIsNotCommunication) {
  // The whole job, clocks aligned (job tables from the fixture's true offsets): the waiting ranks'
  // collectives are mostly wait (rank 2 arrives ~6 ms late per bucket); the transfer left is
  // ~0.35 ms per all-reduce, about 1.2 % of the window, so no rank is communication-bound and no
  // rank is told to tune NCCL.
  std::ifstream in(fixture_path("jobs/ddp4_compute_r2/truth.json"));
  auto truth = nlohmann::json::parse(in);
  std::vector<std::string> paths;
  for (int r = 0; r < 4; ++r) paths.push_back(fixture_path("jobs/ddp4_compute_r2/rank" + std::to_string(r) + ".json.gz").string());
  Store store = load_inputs(paths, LoadOptions{});
  fill_job_tables(store, truth);
  AnalysisOptions ao;
  ao.only = {kId};
  auto r = run_analysis(store, ao, detector_registry());
  EXPECT_TRUE(findings_of(r, kId).empty());
  // One below-threshold entry for the job (ranking merges the four ranks' checks), the largest of
  // the four values, each instance under 2 %.
  int checks = 0;
  for (const auto& c : r.below_threshold) {
    if (c.id != kId) continue;
    ++checks;
    EXPECT_NE(c.measured.find("waiting for other ranks excluded"), std::string::npos);
    EXPECT_LT(c.value, 0.02);
    ASSERT_EQ(c.instances.size(), 4u);
    for (const auto& i : c.instances) EXPECT_LE(i.value, c.value);
  }
  EXPECT_EQ(checks, 1);
}
