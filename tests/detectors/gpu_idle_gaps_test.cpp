// tests/detectors/gpu_idle_gaps_test.cpp — gpu-idle-gaps reports long idle stretches and what the host did.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint::testing;

namespace {

const char* kId = "gpu-idle-gaps";

// Five 100 ms steps, each a 90 ms kernel (10 ms idle between steps); in step 3 the host spends `pause_us` in a
// `save_checkpoint` annotation before launching, so the GPU idles that long.
std::string make_trace(double pause_us) {
  std::string ev;
  auto add = [&](const std::string& e) { ev += (ev.empty() ? "" : ",\n") + e; };
  double t = 1700000000000000.0;
  for (int s = 0; s < 5; ++s) {
    double pause = s == 2 ? pause_us : 0;
    double dur = 100000 + pause;
    int64_t ext = 10 * s + 1, corr = 1000 + s;
    add(fmt::format(R"({{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{}","pid":1,"tid":1,"ts":{:.3f},"dur":{:.3f}}})", s + 1, t, dur - 100));
    if (pause > 0)
      add(fmt::format(R"({{"ph":"X","cat":"user_annotation","name":"save_checkpoint","pid":1,"tid":1,"ts":{:.3f},"dur":{:.3f}}})", t + 10, pause));
    double launch = t + 20 + pause;
    add(fmt::format(R"({{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":{:.3f},"dur":30,"args":{{"External id":{}}}}})", launch, ext));
    add(fmt::format(R"({{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{:.3f},"dur":8,"args":{{"External id":{},"correlation":{}}}}})", launch + 5, ext, corr));
    add(fmt::format(R"({{"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":7,"ts":{:.3f},"dur":90000,"args":{{"External id":{},"device":0,"stream":7,"correlation":{}}}}})", launch + 20, ext, corr));
    t += dur;
  }
  return R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8, "computeMinor": 0, "numSms": 108}],
  "traceEvents": [
)" + ev + "\n]}\n";
}

std::string write_trace(const std::string& name, const std::string& json) {
  auto dir = std::filesystem::temp_directory_path() / "proflint_gpu_idle_gaps_test";
  std::filesystem::create_directories(dir);
  auto path = dir / name;
  std::ofstream(path, std::ios::binary) << json;
  return path.string();
}

}  // namespace

TEST(GpuIdleGaps, StepRelativeGapWithHostActivity) {
  // A 60 ms checkpoint pause in a 100 ms-step job: above 25% of the median step.
  auto f = findings_of(analyze_with(write_trace("checkpoint.json", make_trace(60000)), kId), kId);
  ASSERT_EQ(f.size(), 1u);
  const auto& g = f[0].evidence["largest_gaps"];
  ASSERT_EQ(g.size(), 1u);
  // Gap = the 10 ms tail between steps + the 60 ms pause.
  EXPECT_EQ(g[0]["dur_ns"], 70'000'000);
  EXPECT_EQ(g[0]["iteration"], 2);  // the step whose work waited
  EXPECT_EQ(g[0]["host"], "save_checkpoint (85.7% of the gap)");
  EXPECT_EQ(g[0]["cause"], "checkpoint saving");
  EXPECT_EQ(f[0].evidence["relative_gap_ns"], 24'975'000);  // 25% of the 99.9 ms median step
  EXPECT_EQ(f[0].estimated_savings_ns, 35'000'000);
  EXPECT_EQ(f[0].scope.iter_first.value_or(-1), 2);
}

TEST(GpuIdleGaps, SilentWhenGapsAreShort) {
  // Only the 10 ms tails between steps: under 25% of the step.
  EXPECT_TRUE(findings_of(analyze_with(write_trace("no_pause.json", make_trace(0)), kId), kId).empty());
}

TEST(GpuIdleGaps, ShareOptionSilencesIt) {
  auto path = write_trace("checkpoint2.json", make_trace(60000));
  EXPECT_TRUE(findings_of(analyze_with(path, kId, {{"iteration_share", 0.8}}), kId).empty());
}

TEST(GpuIdleGaps, SilentOnSampleAmp) {
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("sample_amp.json.gz").string(), kId), kId).empty());
}

TEST(GpuIdleGaps, LeavesDataLoaderGapsToDataloaderStall) {
  // sample_train's only long gaps are the 73 ms DataLoader fetches.
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("sample_train.json.gz").string(), kId), kId).empty());
}

TEST(GpuIdleGaps, SilentOnAlexnetStartupGaps) {
  // The four gaps above 500 ms (largest 10.0 s) were read as harness pauses; they are first-call
  // cuDNN and context initialisation inside the warm-up forward (realdata README, Corrections).
  // After start-up (43.3 s) the measured forwards have no gap to report.
  REALDATA_OR_SKIP(path, "kineto/hta_alexnet_a100_inference.json.gz");
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}

TEST(GpuIdleGaps, SilentOnLegacyAutogradTraceAfterWarmup) {
  // Its 1.565 s gap (a blocking first cudaLaunchKernel: lazy module loading) lies in the warm-up
  // iteration, which is start-up now (4.49 s); the stable steps' gaps are DataLoader fetches.
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_autograd_api_no_steps.pt.trace.json.gz");
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}

TEST(GpuIdleGaps, CopiesAreNotIdle) {
  // The H100 slice: kernels leave gaps up to 156 ms, but pinned H2D copies fill them.
  REALDATA_OR_SKIP(path, "nsys/nsys2026_h100_2gpu_1s.sqlite");
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}

TEST(GpuIdleGaps, SilentOnGpuBoundDdp) {
  REALDATA_OR_SKIP(path, "kineto/hta_ns_resolution.pt.trace.json.gz");
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}
