// tests/detectors/sync_memcpy_test.cpp — sync-memcpy fires on host-blocking copies that run beside no kernel.
#include <gtest/gtest.h>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint::testing;

namespace {
const char* kId = "sync-memcpy";
}

TEST(SyncMemcpy, FiresOnBlockingBatchCopies) {
  // sample_train: each step copies the 77 MB batch with cudaMemcpyAsync + cudaStreamSynchronize
  // (non_blocking=False, pageable) and reads loss.item() into pageable memory.
  auto f = findings_of(analyze_with(fixture_path("sample_train.json.gz").string(), kId), kId);
  ASSERT_EQ(f.size(), 1u);
  const auto& e = f[0].evidence;
  EXPECT_EQ(e["copies"], 18);
  EXPECT_EQ(e["async_then_sync"]["count"], 12);
  EXPECT_EQ(e["async_then_sync"]["apis"], "cudaMemcpyAsync + cudaStreamSynchronize ×12");
  EXPECT_EQ(e["pageable_dtoh"]["count"], 6);
  // The loss read-back waits for the step's kernels: only its 1.5 µs transfer is exposed.
  EXPECT_LT(e["pageable_dtoh"]["exposed_ns"].get<int64_t>(), 20000);
  EXPECT_NEAR(e["exposed_ns"].get<double>(), 54.2e6, 0.2e6);
  EXPECT_NEAR(static_cast<double>(f[0].estimated_savings_ns), 0.5 * e["exposed_ns"].get<double>(), 1.0);
  EXPECT_EQ(f[0].scope.device_id.value_or(-1), 0);
}

TEST(SyncMemcpy, SilentWithPinnedNonBlockingCopies) {
  // sample_amp: pinned, non_blocking copies; loss.item()'s DtoH blocks while kernels run.
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("sample_amp.json.gz").string(), kId), kId).empty());
}

TEST(SyncMemcpy, FiresOnSaxpyCudaMemcpy) {
  // 15 cudaMemcpy (2.6 GB H2D + 1.3 GB D2H) serialised with the kernels.
  REALDATA_OR_SKIP(path, "nsys/nsys2022_saxpy_mpi_all_tables.sqlite");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  const auto& e = f[0].evidence;
  EXPECT_EQ(e["sync_api"]["count"], 15);
  EXPECT_EQ(e["sync_api"]["bytes"].get<int64_t>(), 3932160000);
  EXPECT_NEAR(e["host_blocked_ns"].get<double>(), 374.3e6, 0.5e6);
  EXPECT_NEAR(e["exposed_ns"].get<double>(), 284e6, 2e6);
  // Capped by the kernel time the copies could hide behind (5 saxpy kernels, 88.6 ms).
  EXPECT_EQ(f[0].estimated_savings_ns, e["kernel_busy_ns"].get<int64_t>());
}

TEST(SyncMemcpy, FiresOnCudfPageableCopies) {
  REALDATA_OR_SKIP(path, "nsys/nsys2020_cudf.sqlite");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["pageable_dtoh"]["count"], 36);
  EXPECT_EQ(f[0].evidence["copies"], 116);
}

TEST(SyncMemcpy, SilentWhenTheHostWaitsForQueuedWorkNotForTheCopy) {
  // hta_a100_16rank: 30 tiny pageable DtoH copies wait 758 ms for earlier GPU work; the transfers
  // themselves take microseconds (the waiting is host-sync's and gpu-idle-gaps' to report).
  REALDATA_OR_SKIP(path, "kineto/hta_a100_16rank_rank0.json.gz");
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}

TEST(SyncMemcpy, IgnoresCopiesCorrelatedToNonCopyCalls) {
  // Regression: in the H100 slice a 160 MiB memcpy is correlated to a cudaEventDestroy of another
  // process (its own launch is before the window); it must not count as a synchronous cudaMemcpy.
  REALDATA_OR_SKIP(path, "nsys/nsys2026_h100_2gpu_1s.sqlite");
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}
