// tests/detectors/memcpy_bound_test.cpp — memcpy-bound fires when the GPU mostly copies.
#include <gtest/gtest.h>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint::testing;

namespace {

const char* kId = "memcpy-bound";

}  // namespace

TEST(MemcpyBound, FiresOnH100HostToDeviceTraffic) {
  // Each GPU: 223 pinned H2D copies (25.5 GB at ~28 GB/s) + 29.7 GB DtoD fill 0.94 s of the 0.97 s window.
  REALDATA_OR_SKIP(path, "nsys/nsys2026_h100_2gpu_1s.sqlite");
  auto r = analyze_with(path, kId);
  auto f = findings_of(r, kId);
  ASSERT_EQ(f.size(), 2u);
  std::set<int64_t> devices;
  for (const auto& x : f) {
    devices.insert(x.scope.device_id.value_or(-1));
    const auto& htod = x.evidence["by_direction"]["htod"];
    EXPECT_EQ(htod["copies"], 225);
    EXPECT_EQ(htod["pinned"], 223);
    EXPECT_NEAR(htod["bytes"].get<double>(), 25.475e9, 0.001e9);
    EXPECT_NEAR(htod["time_ns"].get<double>(), 921e6, 1e6);
    EXPECT_NEAR(htod["gbps"].get<double>(), 27.7, 0.1);
    EXPECT_NEAR(x.evidence["by_direction"]["dtod"]["bytes"].get<double>(), 29.684e9, 0.001e9);
    EXPECT_NEAR(x.evidence["exposed_share"].get<double>(), 0.970, 0.002);
    EXPECT_NE(x.problem.find("25.5 GB"), std::string::npos) << x.problem;
    EXPECT_NE(x.problem.find("29.7 GB"), std::string::npos);
    EXPECT_NE(x.problem.find("223 pinned"), std::string::npos);
    EXPECT_NE(x.problem.find("82 x 160.0 MiB"), std::string::npos);
    // FSDP::pre_forward uploads offloaded parameters: more than half of the H2D time.
    EXPECT_NE(x.problem.find("inside FSDP hooks"), std::string::npos);
    EXPECT_GT(x.evidence["offload_copy_ns"].get<double>(), 0.5 * htod["time_ns"].get<double>());
    EXPECT_EQ(x.estimated_savings_ns, x.evidence["exposed_copy_ns"].get<int64_t>() / 2);
  }
  EXPECT_EQ(devices, (std::set<int64_t>{0, 1}));
  // It is the top problem: nearly half of the wall time.
  EXPECT_GT(f[0].savings_share, 0.45);
}

TEST(MemcpyBound, FiresOnSaxpyWithHugeSynchronousCopies) {
  REALDATA_OR_SKIP(path, "nsys/nsys2022_saxpy_mpi_all_tables.sqlite");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["by_direction"]["htod"]["bytes"], 2621440000);
  EXPECT_EQ(f[0].evidence["by_direction"]["dtoh"]["bytes"], 1310720000);
  EXPECT_EQ(f[0].evidence["expected_link_gbps"], 25.0);  // A100: PCIe gen4
}

TEST(MemcpyBound, SilentOnHealthyInputCopies) {
  // sample_amp: one pinned 73.5 MiB batch per step next to a busy GPU (12% of the window).
  auto path = fixture_path("sample_amp.json.gz").string();
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
  // The busy-time gate is what keeps it silent.
  auto f = findings_of(analyze_with(path, kId, {{"min_busy_share", 0.0}}), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["by_direction"]["htod"]["copies"], 12);
}

TEST(MemcpyBound, SilentOnDdpWithSmallCopies) {
  REALDATA_OR_SKIP(path, "kineto/hta_ddp_v100_rank1.json.gz");
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}

TEST(MemcpyBound, SilentOnSampleTrain) {
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("sample_train.json.gz").string(), kId), kId).empty());
}
