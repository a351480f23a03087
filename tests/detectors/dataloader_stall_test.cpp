// tests/detectors/dataloader_stall_test.cpp — dataloader-stall fires when the GPU waits on data loading only.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint::testing;

namespace {

const char* kId = "dataloader-stall";

// A PyTorch-profiler trace of `steps` steps of 100 ms with no DataLoader annotation: the host runs a
// CPU-only `prep_us` collate op, then launches one kernel that runs `kernel_us`.
std::string make_unannotated_trace(int steps, double prep_us, double kernel_us) {
  std::string ev;
  auto add = [&](const std::string& e) { ev += (ev.empty() ? "" : ",\n") + e; };
  const double t0 = 1700000000000000.0;
  for (int s = 0; s < steps; ++s) {
    double t = t0 + s * 100000.0;
    int64_t ext = 10 * s + 1, corr = 1000 + s;
    add(fmt::format(R"({{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{}","pid":1,"tid":1,"ts":{:.3f},"dur":99000}})", s + 1, t));
    add(fmt::format(R"({{"ph":"X","cat":"cpu_op","name":"aten::stack","pid":1,"tid":1,"ts":{:.3f},"dur":{:.3f},"args":{{"External id":{}}}}})", t + 10, prep_us, ext));
    double launch = t + 20 + prep_us;
    add(fmt::format(R"({{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":{:.3f},"dur":30,"args":{{"External id":{}}}}})", launch, ext + 1));
    add(fmt::format(R"({{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{:.3f},"dur":8,"args":{{"External id":{},"correlation":{}}}}})", launch + 5, ext + 1, corr));
    add(fmt::format(R"({{"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":7,"ts":{:.3f},"dur":{:.3f},"args":{{"External id":{},"device":0,"stream":7,"correlation":{}}}}})", launch + 20, kernel_us, ext + 1, corr));
  }
  return R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8, "computeMinor": 0, "numSms": 108}],
  "traceEvents": [
)" + ev + "\n]}\n";
}

std::string write_trace(const std::string& name, const std::string& json) {
  auto dir = std::filesystem::temp_directory_path() / "proflint_dataloader_stall_test";
  std::filesystem::create_directories(dir);
  auto path = dir / name;
  std::ofstream(path, std::ios::binary) << json;
  return path.string();
}

}  // namespace

TEST(DataloaderStall, FiresOnSampleTrainWithSingleProcessLoader) {
  auto f = findings_of(analyze_with(fixture_path("sample_train.json.gz").string(), kId), kId);
  ASSERT_EQ(f.size(), 1u);
  const auto& e = f[0].evidence;
  EXPECT_EQ(e["signal"], "dataloader_annotation");
  EXPECT_EQ(e["loader"], "single-process (num_workers=0)");
  EXPECT_EQ(e["steps"], 6);
  EXPECT_EQ(e["steps_affected"], 6);
  // The breakdown's GPU-idle 'dataloader' time of the six steps (fixture doc: ≈ 73 ms = 37% per step).
  EXPECT_EQ(e["gpu_idle_waiting_ns"].get<int64_t>(), 432392403);
  EXPECT_NEAR(e["median_step_share"].get<double>(), 0.368, 0.005);
  EXPECT_NEAR(e["median_stall_per_step_ns"].get<double>(), 72.8e6, 0.2e6);
  EXPECT_EQ(f[0].scope.device_id.value_or(-1), 0);
  EXPECT_EQ(f[0].scope.iter_first.value_or(-1), 0);
  EXPECT_EQ(f[0].scope.iter_last.value_or(-1), 5);
  // 0.9 x the stall (the six steps cover the capture but for 92 µs).
  EXPECT_NEAR(static_cast<double>(f[0].estimated_savings_ns), 0.9 * 432392403, 0.9 * 432392403 * 0.001);
  EXPECT_NE(f[0].recommendation.find("num_workers=N, pin_memory=True, persistent_workers=True"), std::string::npos);
  EXPECT_NE(f[0].problem.find("ProfilerStep#2 … ProfilerStep#7"), std::string::npos);
}

TEST(DataloaderStall, FiresOnNsysExportOfTheSameJob) {
  auto f = findings_of(analyze_with(fixture_path("sample_train.nsys.sqlite").string(), kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NEAR(f[0].evidence["median_step_share"].get<double>(), 0.368, 0.005);
  EXPECT_EQ(f[0].evidence["annotations"][0]["name"], "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
}

TEST(DataloaderStall, SilentWithFourWorkersAndPinnedMemory) {
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("sample_amp.json.gz").string(), kId), kId).empty());
}

TEST(DataloaderStall, ThresholdOptionSilencesIt) {
  auto r = analyze_with(fixture_path("sample_train.json.gz").string(), kId, {{"min_share", 0.5}});
  EXPECT_TRUE(findings_of(r, kId).empty());
}

TEST(DataloaderStall, FiresOnResnetWorkers0) {
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_v100_workers0.pt.trace.json.gz");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  // Expert view: the DataLoader is 40% of ProfilerStep time; the GPU-idle part of it is a third.
  EXPECT_NEAR(f[0].evidence["median_step_share"].get<double>(), 0.335, 0.01);
  EXPECT_NEAR(f[0].evidence["share"].get<double>(), 0.334, 0.01);
  EXPECT_EQ(f[0].evidence["gpu_idle_waiting_ns"].get<int64_t>(), 355571000);
  EXPECT_EQ(f[0].evidence["dataloader_host_time_ns"].get<int64_t>(), 415791000);
  EXPECT_EQ(f[0].evidence["steps_affected"], 6);
}

TEST(DataloaderStall, SilentOnResnetWorkers4) {
  // The "fixed" twin: the DataLoader share drops to ~1% of the steps.
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_v100_workers4.pt.trace.json.gz");
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}

TEST(DataloaderStall, FiresOnLegacyBareArrayWorkers0) {
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_bare_array_workers0.pt.trace.json.gz");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NEAR(f[0].evidence["median_step_share"].get<double>(), 0.234, 0.01);
  EXPECT_EQ(f[0].evidence["gpu_idle_waiting_ns"].get<int64_t>(), 282671000);
}

TEST(DataloaderStall, MultiProcessLoaderGetsMoreWorkersAdvice) {
  // param_resnet: 30 `_MultiProcessingDataLoaderIter.__next__` (median 110 ms), half the steps starve.
  REALDATA_OR_SKIP(path, "kineto/param_resnet.json.gz");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["loader"], "multi-process workers");
  EXPECT_EQ(f[0].evidence["steps_affected"], 15);
  EXPECT_NEAR(f[0].evidence["share"].get<double>(), 0.469, 0.01);
  EXPECT_NE(f[0].recommendation.find("already uses worker processes"), std::string::npos);
}

TEST(DataloaderStall, UnannotatedGapBeforeEachStepsFirstKernelFires) {
  // 40 ms of host collate before the step's only kernel: the GPU idles ~40% of each 100 ms step.
  auto path = write_trace("unannotated_gap.json", make_unannotated_trace(4, 40000, 55000));
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["signal"], "gpu_idle_before_first_gpu_work");
  EXPECT_EQ(f[0].evidence["steps"], 4);
  EXPECT_NEAR(f[0].evidence["median_step_share"].get<double>(), 0.4, 0.01);
  EXPECT_LT(f[0].confidence, 0.5);
}

TEST(DataloaderStall, UnannotatedShortHostPrepIsSilent) {
  // 2 ms of host work before a 95 ms kernel: 2% of the step, under min_prestep_share.
  auto path = write_trace("unannotated_short.json", make_unannotated_trace(4, 2000, 95000));
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}

TEST(DataloaderStall, UnannotatedHostWorkInsideTheForwardIsNotInputLoading) {
  // dataparallel_2gpu: each step spends 1 ms in DataParallel.forward (scatter, replica threads)
  // before the first GEMM; that is model work on another thread, not input preparation.
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("dataparallel_2gpu.json").string(), kId), kId).empty());
}

TEST(DataloaderStall, UnannotatedNeedsThreeSteps) {
  auto path = write_trace("unannotated_two_steps.json", make_unannotated_trace(2, 40000, 55000));
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}
