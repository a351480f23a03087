// tests/detectors/bad_iteration_range_test.cpp — bad-iteration-range flags warm-up, tear-down and
// outlier steps and recommends the longest stable window.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint::testing;

namespace {

const char* kId = "bad-iteration-range";

// A PyTorch-profiler trace of back-to-back ProfilerStep#(10+k) ranges lasting `step_us[k]` µs, each
// with one op that launches a 100 µs kernel.
std::string write_steps(const std::string& name, const std::vector<double>& step_us) {
  std::string ev;
  auto add = [&](const std::string& e) { ev += (ev.empty() ? "" : ",\n") + e; };
  double t = 1700000000000000.0;
  int64_t ext = 1, corr = 100;
  for (size_t k = 0; k < step_us.size(); ++k) {
    add(fmt::format(
        R"({{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{}","pid":1,"tid":1,"ts":{:.3f},"dur":{:.3f},"args":{{"External id":{}}}}})",
        10 + k, t, step_us[k], ext++));
    int64_t e = ext++, c = corr++;
    add(fmt::format(
        R"({{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":{:.3f},"dur":50,"args":{{"External id":{}}}}})",
        t + 10, e));
    add(fmt::format(
        R"({{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{:.3f},"dur":5,"args":{{"External id":{},"correlation":{}}}}})",
        t + 20, e, c));
    add(fmt::format(
        R"({{"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":7,"ts":{:.3f},"dur":100,"args":{{"External id":{},"device":0,"stream":7,"correlation":{}}}}})",
        t + 30, e, c));
    t += step_us[k];
  }
  auto dir = std::filesystem::temp_directory_path() / "proflint_bad_iteration_range_test";
  std::filesystem::create_directories(dir);
  auto path = dir / name;
  std::ofstream(path)
      << R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8, "computeMinor": 0, "numSms": 108}],
  "traceEvents": [
)" << ev
      << "\n]}\n";
  return path.string();
}

std::vector<int64_t> ints(const nlohmann::ordered_json& j) { return j.get<std::vector<int64_t>>(); }

}  // namespace

TEST(BadIterationRange, SilentOnSampleTrainWhoseStepsAreWithin2Percent) {
  auto r = analyze_with(fixture_path("sample_train.json.gz").string(), kId);
  EXPECT_TRUE(findings_of(r, kId).empty());
}

TEST(BadIterationRange, WarmupStepIsLeadingOutlierAndScheduleShiftsByOne) {
  auto path = write_steps("warmup.json", {3000, 1000, 1000, 1000, 1000});
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(f[0].diagnostic);
  EXPECT_EQ(f[0].estimated_savings_ns, 0);
  EXPECT_EQ(f[0].evidence["leading_outliers"], 1);
  EXPECT_EQ(f[0].evidence["trailing_outliers"], 0);
  EXPECT_EQ(f[0].evidence["median_ns"], 1000000);
  EXPECT_EQ(f[0].evidence["excess_ns"], 2000000);
  EXPECT_EQ(f[0].evidence["stable_first"], 1);
  EXPECT_EQ(f[0].evidence["stable_last"], 4);
  EXPECT_NE(f[0].recommendation.find("--iter-start 1 --iter-stop 4"), std::string::npos) << f[0].recommendation;
  // ProfilerStep#10 was the first recorded step; one step later is wait=10, warmup=1.
  EXPECT_NE(f[0].recommendation.find("schedule(wait=10, warmup=1, active=5)"), std::string::npos)
      << f[0].recommendation;
  EXPECT_NE(f[0].problem.find("ProfilerStep#10 (iteration 0): 3.00 ms, 3.00x the median"), std::string::npos)
      << f[0].problem;
}

TEST(BadIterationRange, CutOffLastStepIsTrailingOutlier) {
  auto path = write_steps("teardown.json", {1000, 1010, 990, 1000, 200});
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["leading_outliers"], 0);
  EXPECT_EQ(f[0].evidence["trailing_outliers"], 1);
  EXPECT_EQ(f[0].evidence["stable_first"], 0);
  EXPECT_EQ(f[0].evidence["stable_last"], 3);
  EXPECT_EQ(ints(f[0].evidence["step_ns"]), (std::vector<int64_t>{1000000, 1010000, 990000, 1000000, 200000}));
}

TEST(BadIterationRange, InteriorOutlierIsNamedAsJobBehaviour) {
  auto path = write_steps("interior.json", {1000, 1000, 1000, 1600, 1000, 1000, 1000, 1000});
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(ints(f[0].evidence["interior_outliers"]), (std::vector<int64_t>{3}));
  EXPECT_EQ(f[0].evidence["stable_first"], 4);  // 4..7 (four steps) is longer than 0..2
  EXPECT_EQ(f[0].evidence["stable_last"], 7);
  EXPECT_NEAR(f[0].confidence, 0.6, 1e-9);
  EXPECT_NE(f[0].recommendation.find("job's own behaviour"), std::string::npos);
  // Dropping only warm-up and tear-down keeps all 8 steps here: no second range offered.
  EXPECT_EQ(f[0].recommendation.find("To keep the out-of-line steps"), std::string::npos);
}

TEST(BadIterationRange, SteadyJitterBelowSlowRatioIsSilent) {
  auto path = write_steps("jitter.json", {1000, 1200, 900, 1100, 1000});
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}

TEST(BadIterationRange, TwoStepsAreTooFewToJudge) {
  auto path = write_steps("two.json", {3000, 1000});
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}

TEST(BadIterationRange, SelectedStableWindowIsSilent) {
  auto path = write_steps("selected.json", {3000, 1000, 1000, 1000, 1000});
  proflint::LoadOptions lo;
  lo.derive.iter_start = 1;
  lo.derive.iter_stop = 4;
  proflint::Store store = proflint::load_inputs({path}, lo);
  proflint::AnalysisOptions ao;
  ao.only = {kId};
  EXPECT_TRUE(findings_of(proflint::run_analysis(store, ao, proflint::detector_registry()), kId).empty());
}

TEST(BadIterationRange, SlowRatioOptionWidensTheBand) {
  auto path = write_steps("option.json", {1400, 1000, 1000, 1000, 1000});
  EXPECT_EQ(findings_of(analyze_with(path, kId), kId).size(), 1u);
  EXPECT_TRUE(findings_of(analyze_with(path, kId, {{"slow_ratio", 1.5}}), kId).empty());
}

TEST(BadIterationRange, FiresOnMi300FirstStepDrainingPreCaptureBacklog) {
  // Host-side ProfilerStep#15..17 are all ~16 ms, but 637 kernels queued before the capture keep
  // the GPU busy: the first step's window is 49.1 ms against a 19.0 ms median.
  REALDATA_OR_SKIP(path, "kineto/tracelens_mi300_resnet_act_checkpoint.json.gz");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(ints(f[0].evidence["step_ns"]), (std::vector<int64_t>{49061918, 18982928, 18554331}));
  EXPECT_EQ(f[0].evidence["median_ns"], 18982928);
  EXPECT_EQ(f[0].evidence["leading_outliers"], 1);
  EXPECT_EQ(f[0].evidence["stable_first"], 1);
  EXPECT_EQ(f[0].evidence["stable_last"], 2);
  EXPECT_EQ(f[0].evidence["kernels_launched_before_capture"], 637);
  EXPECT_EQ(f[0].evidence["outlier_category"], "communication");
  EXPECT_NE(f[0].recommendation.find("(ProfilerStep#16 … ProfilerStep#17)"), std::string::npos);
}

TEST(BadIterationRange, FiresOnResnetWorkers4WarmupAndOneSlowStep) {
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_v100_workers4.pt.trace.json.gz");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["median_ns"], 126682000);
  EXPECT_EQ(f[0].evidence["leading_outliers"], 1);
  EXPECT_EQ(ints(f[0].evidence["interior_outliers"]), (std::vector<int64_t>{4}));
  EXPECT_EQ(f[0].evidence["stable_first"], 1);
  EXPECT_EQ(f[0].evidence["stable_last"], 3);
  EXPECT_NE(f[0].recommendation.find("`--iter-start 1 --iter-stop 5`"), std::string::npos) << f[0].recommendation;
}

TEST(BadIterationRange, SilentOnResnetWorkers0StableSteps) {
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_v100_workers0.pt.trace.json.gz");
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}
