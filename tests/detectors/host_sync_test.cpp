// tests/detectors/host_sync_test.cpp — host-sync fires on avoidable syncs, tolerates one loss.item() per step.
#include <gtest/gtest.h>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint::testing;

namespace {
const char* kId = "host-sync";
}

TEST(HostSync, FiresOnCudaDeviceSynchronizeEveryStep) {
  // sample_train: one cudaDeviceSynchronize per step between backward and the optimizer (≈ 111 ms
  // each) plus the per-step loss.item().
  auto f = findings_of(analyze_with(fixture_path("sample_train.json.gz").string(), kId), kId);
  ASSERT_EQ(f.size(), 1u);
  const auto& e = f[0].evidence;
  EXPECT_EQ(e["explicit"]["count"], 6);
  EXPECT_EQ(e["explicit"]["sites"], "cudaDeviceSynchronize outside any op ×6");
  EXPECT_NEAR(e["explicit"]["host_blocked_ns"].get<double>(), 664.8e6, 0.5e6);
  EXPECT_EQ(e["readback"]["count"], 6);  // loss.item(): tolerated, listed
  EXPECT_EQ(e["steps_with_excess_syncs"], 6);
  EXPECT_EQ(e["host_blocked_ns"], e["explicit"]["host_blocked_ns"]);  // the read-backs are not excess
  EXPECT_EQ(e["blocking_copy_syncs"], "12 (reported by sync-memcpy)");
  // loss.item() syncs right after anyway, so little GPU idle follows the device syncs: the estimate
  // stays small (the GPU idles between the optimizer's launches only).
  EXPECT_GT(f[0].estimated_savings_ns, 0);
  EXPECT_LT(f[0].estimated_savings_ns, 2'000'000);
  EXPECT_EQ(f[0].scope.iter_first.value_or(-1), 0);
  EXPECT_EQ(f[0].scope.iter_last.value_or(-1), 5);
  EXPECT_NE(f[0].recommendation.find("torch.cuda.set_sync_debug_mode(\"warn\")"), std::string::npos);
}

TEST(HostSync, SameOnTheNsysExport) {
  auto f = findings_of(analyze_with(fixture_path("sample_train.nsys.sqlite").string(), kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["explicit"]["count"], 6);
  EXPECT_EQ(f[0].evidence["readback"]["count"], 6);
}

TEST(HostSync, SilentWhenOnlyLossItemSyncs) {
  // sample_amp: the only sync is one loss.item() per step.
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("sample_amp.json.gz").string(), kId), kId).empty());
}

TEST(HostSync, FiresOnHtaEventSyncMicroTrace) {
  REALDATA_OR_SKIP(path, "kineto/hta_event_sync.json.gz");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["explicit"]["count"], 2);  // cudaEventSynchronize + cudaDeviceSynchronize
  EXPECT_EQ(f[0].evidence["explicit"]["host_blocked_ns"], 42000);
  EXPECT_EQ(f[0].evidence["readback"]["count"], 1);  // aten::is_nonzero
  EXPECT_EQ(f[0].evidence["readback"]["sites"], "cudaStreamSynchronize in aten::is_nonzero › aten::_local_scalar_dense ×1");
}

TEST(HostSync, SilentOnCudnnAutotuningInTheFirstIteration) {
  // 357 cudaEventSynchronize inside aten::cudnn_convolution*, all in the warm-up iteration
  // (cudnn.benchmark autotuning): not a per-step cost.
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_autograd_api_no_steps.pt.trace.json.gz");
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}

TEST(HostSync, SilentWhenReadbacksWaitForBusyCopies) {
  // The H100 slice: .item()/is_nonzero syncs wait 857 ms for queued pinned H2D copies, but the GPU
  // is busy copying meanwhile and has work right after: the copies, not the syncs, are the problem.
  REALDATA_OR_SKIP(path, "nsys/nsys2026_h100_2gpu_1s.sqlite");
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}

TEST(HostSync, SilentOnOneSyncOutsideTheSteps) {
  // A single cudaDeviceSynchronize (89 ms) before the first step is not a per-step pattern.
  REALDATA_OR_SKIP(path, "kineto/hta_ns_resolution.pt.trace.json.gz");
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}

TEST(HostSync, FiresOnLibrarySyncsOfCudf) {
  // cuDF: 240 cudaStreamSynchronize inside its NVTX ranges (aggregate, left_join, gather …).
  REALDATA_OR_SKIP(path, "nsys/nsys2020_cudf.sqlite");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["library"]["count"], 240);
  EXPECT_NEAR(f[0].evidence["library"]["host_blocked_ns"].get<double>(), 87.1e6, 0.1e6);
  EXPECT_NEAR(f[0].evidence["host_blocked_ns"].get<double>(), 86.7e6, 0.1e6);  // inside the 4 steps
  EXPECT_NE(f[0].recommendation.find("inside library ops"), std::string::npos);
}

TEST(HostSync, BlockShareOptionSilencesIt) {
  auto r = analyze_with(fixture_path("sample_train.json.gz").string(), kId, {{"min_block_share", 0.9}});
  EXPECT_TRUE(findings_of(r, kId).empty());
}
