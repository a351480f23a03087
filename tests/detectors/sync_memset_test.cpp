// tests/detectors/sync_memset_test.cpp — sync-memset fires on cudaMemset of pinned/managed memory only.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint::testing;

namespace {

const char* kId = "sync-memset";

// Four 10 ms steps; each runs a 6 ms kernel, then a memset through `api` into `target` memory
// ("Pinned", "Managed", "Device") whose host call lasts `call_us`.
std::string make_trace(const std::string& api, const std::string& target, double call_us) {
  std::string ev;
  auto add = [&](const std::string& e) { ev += (ev.empty() ? "" : ",\n") + e; };
  const double t0 = 1700000000000000.0;
  for (int s = 0; s < 4; ++s) {
    double t = t0 + s * 10000.0;
    int64_t ext = 10 * s + 1, corr = 1000 + 2 * s;
    add(fmt::format(R"({{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{}","pid":1,"tid":1,"ts":{:.3f},"dur":9900}})", s + 1, t));
    add(fmt::format(R"({{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":{:.3f},"dur":30,"args":{{"External id":{}}}}})", t + 10, ext));
    add(fmt::format(R"({{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{:.3f},"dur":8,"args":{{"External id":{},"correlation":{}}}}})", t + 15, ext, corr));
    add(fmt::format(R"({{"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":7,"ts":{:.3f},"dur":6000,"args":{{"External id":{},"device":0,"stream":7,"correlation":{}}}}})", t + 30, ext, corr));
    double m = t + 7000;
    add(fmt::format(R"({{"ph":"X","cat":"cpu_op","name":"my_ext::clear_flags","pid":1,"tid":1,"ts":{:.3f},"dur":{:.3f},"args":{{"External id":{}}}}})", m, call_us + 20, ext + 1));
    add(fmt::format(R"({{"ph":"X","cat":"cuda_runtime","name":"{}","pid":1,"tid":1,"ts":{:.3f},"dur":{:.3f},"args":{{"External id":{},"correlation":{}}}}})", api, m + 5, call_us, ext + 1, corr + 1));
    add(fmt::format(R"J({{"ph":"X","cat":"gpu_memset","name":"Memset ({})","pid":0,"tid":7,"ts":{:.3f},"dur":3,"args":{{"External id":{},"device":0,"stream":7,"correlation":{},"bytes":4096}}}})J", target, m + 10, ext + 1, corr + 1));
  }
  return R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8, "computeMinor": 0, "numSms": 108}],
  "traceEvents": [
)" + ev + "\n]}\n";
}

std::string write_trace(const std::string& name, const std::string& json) {
  auto dir = std::filesystem::temp_directory_path() / "proflint_sync_memset_test";
  std::filesystem::create_directories(dir);
  auto path = dir / name;
  std::ofstream(path, std::ios::binary) << json;
  return path.string();
}

}  // namespace

TEST(SyncMemset, FiresOnCudaMemsetOfPinnedMemory) {
  auto path = write_trace("pinned.json", make_trace("cudaMemset", "Pinned", 400));
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  const auto& e = f[0].evidence;
  EXPECT_EQ(e["memsets"], 4);
  EXPECT_EQ(e["bytes"], 4 * 4096);
  EXPECT_EQ(e["host_blocked_ns"], 4 * 400000);
  EXPECT_EQ(e["exposed_ns"], 4 * 400000);  // the kernels ended 1 ms before each memset
  EXPECT_EQ(e["apis"], "cudaMemset ×4");
  EXPECT_EQ(e["memory_kinds"], "pinned ×4");
  EXPECT_EQ(e["ops"], "my_ext::clear_flags ×4");
  EXPECT_EQ(f[0].estimated_savings_ns, static_cast<int64_t>(0.8 * 4 * 400000));
  EXPECT_EQ(f[0].scope.iter_first.value_or(-1), 0);
  EXPECT_EQ(f[0].scope.iter_last.value_or(-1), 3);
  EXPECT_NE(f[0].recommendation.find("cudaMemsetAsync"), std::string::npos);
}

TEST(SyncMemset, FiresOnManagedMemoryToo) {
  auto path = write_trace("managed.json", make_trace("cudaMemset", "Managed", 400));
  ASSERT_EQ(findings_of(analyze_with(path, kId), kId).size(), 1u);
}

TEST(SyncMemset, SilentOnDeviceMemory) {
  // cudaMemset of device memory returns to the host at once (CUDA API sync behaviour).
  auto path = write_trace("device.json", make_trace("cudaMemset", "Device", 400));
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}

TEST(SyncMemset, SilentOnAsyncMemset) {
  auto path = write_trace("async.json", make_trace("cudaMemsetAsync", "Pinned", 400));
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}

TEST(SyncMemset, SilentWhenTooShortToMatter) {
  // 4 x 5 µs of blocking: under min_exposed_ns.
  auto path = write_trace("short.json", make_trace("cudaMemset", "Pinned", 5));
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}

TEST(SyncMemset, SilentOnFixtures) {
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("sample_amp.json.gz").string(), kId), kId).empty());
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("sample_train.nsys.sqlite").string(), kId), kId).empty());
}

TEST(SyncMemset, SilentOnRealMemsetsThatAreAsync) {
  // nsys2020_cudf (14 memsets) and the H100 slice (22) use cudaMemsetAsync on device memory.
  REALDATA_OR_SKIP(cudf, "nsys/nsys2020_cudf.sqlite");
  EXPECT_TRUE(findings_of(analyze_with(cudf, kId), kId).empty());
  REALDATA_OR_SKIP(h100, "nsys/nsys2026_h100_2gpu_1s.sqlite");
  EXPECT_TRUE(findings_of(analyze_with(h100, kId), kId).empty());
}
