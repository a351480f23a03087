// tests/detectors/slow_api_test.cpp — slow-api fires only on clear evidence of debugging APIs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint::testing;

namespace {

const char* kId = "slow-api";

struct Shape {
  bool anomaly_frames = false;   // python frames of torch/autograd/anomaly_mode.py
  bool nan_checks = false;       // isnan/_is_any_true/item in every backward node
  int annotations = 0;           // tiny record_function annotations per step
  bool deterministic = false;    // a use_deterministic_algorithms frame
  bool deterministic_query = false;  // are_deterministic_algorithms_enabled (a query, not the setting)
};

// Three 20 ms steps: a forward GEMM on the main thread and 12 backward nodes on the autograd thread.
std::string make_trace(const Shape& shape) {
  std::string ev;
  auto add = [&](const std::string& e) { ev += (ev.empty() ? "" : ",\n") + e; };
  const double t0 = 1700000000000000.0;
  int64_t ext = 1, corr = 1000;
  for (int s = 0; s < 3; ++s) {
    double t = t0 + s * 20000.0;
    add(fmt::format(R"({{"ph":"X","cat":"user_annotation","name":"ProfilerStep#{}","pid":1,"tid":1,"ts":{:.3f},"dur":19900}})", s + 1, t));
    if (shape.anomaly_frames) {
      add(fmt::format(R"({{"ph":"X","cat":"python_function","name":"torch/autograd/anomaly_mode.py(91): __init__","pid":1,"tid":1,"ts":{:.3f},"dur":40}})", t + 5));
      add(fmt::format(R"({{"ph":"X","cat":"python_function","name":"torch/autograd/anomaly_mode.py(97): __enter__","pid":1,"tid":1,"ts":{:.3f},"dur":60}})", t + 50));
    }
    if (shape.deterministic)
      add(fmt::format(R"({{"ph":"X","cat":"python_function","name":"torch/__init__.py(1100): use_deterministic_algorithms","pid":1,"tid":1,"ts":{:.3f},"dur":20}})", t + 120));
    if (shape.deterministic_query)
      add(fmt::format(R"({{"ph":"X","cat":"python_function","name":"torch/__init__.py(1473): are_deterministic_algorithms_enabled","pid":1,"tid":1,"ts":{:.3f},"dur":3}})", t + 150));
    for (int a = 0; a < shape.annotations; ++a)
      add(fmt::format(R"({{"ph":"X","cat":"user_annotation","name":"layer_{}","pid":1,"tid":1,"ts":{:.3f},"dur":1.5}})", a % 8, t + 200 + 2.0 * a));
    int64_t e = ext++, c = corr++;
    add(fmt::format(R"({{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":{:.3f},"dur":30,"args":{{"External id":{}}}}})", t + 100, e));
    add(fmt::format(R"({{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{:.3f},"dur":8,"args":{{"External id":{},"correlation":{}}}}})", t + 105, e, c));
    add(fmt::format(R"({{"ph":"X","cat":"kernel","name":"ampere_sgemm_128x64_nn","pid":0,"tid":7,"ts":{:.3f},"dur":5000,"args":{{"External id":{},"device":0,"stream":7,"correlation":{}}}}})", t + 120, e, c));
    for (int n = 0; n < 12; ++n) {
      double b = t + 6000 + n * 1000.0;
      add(fmt::format(R"({{"ph":"X","cat":"cpu_op","name":"autograd::engine::evaluate_function: MmBackward0","pid":1,"tid":2,"ts":{:.3f},"dur":900,"args":{{"External id":{}}}}})", b, ext++));
      add(fmt::format(R"({{"ph":"X","cat":"cpu_op","name":"MmBackward0","pid":1,"tid":2,"ts":{:.3f},"dur":200,"args":{{"External id":{}}}}})", b + 5, ext++));
      if (shape.nan_checks) {
        add(fmt::format(R"({{"ph":"X","cat":"cpu_op","name":"aten::isnan","pid":1,"tid":2,"ts":{:.3f},"dur":20,"args":{{"External id":{}}}}})", b + 300, ext++));
        add(fmt::format(R"({{"ph":"X","cat":"cpu_op","name":"aten::_is_any_true","pid":1,"tid":2,"ts":{:.3f},"dur":15,"args":{{"External id":{}}}}})", b + 330, ext++));
        add(fmt::format(R"({{"ph":"X","cat":"cpu_op","name":"aten::item","pid":1,"tid":2,"ts":{:.3f},"dur":100,"args":{{"External id":{}}}}})", b + 360, ext++));
      }
    }
  }
  return R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8, "computeMinor": 0, "numSms": 108}],
  "traceEvents": [
)" + ev + "\n]}\n";
}

std::string write_trace(const std::string& name, const Shape& shape) {
  auto dir = std::filesystem::temp_directory_path() / "proflint_slow_api_test";
  std::filesystem::create_directories(dir);
  auto path = dir / name;
  std::ofstream(path, std::ios::binary) << make_trace(shape);
  return path.string();
}

}  // namespace

TEST(SlowApi, FiresOnAnomalyModeFrames) {
  auto f = findings_of(analyze_with(write_trace("anomaly_frames.json", {.anomaly_frames = true}), kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["api"], "anomaly_detection");
  EXPECT_EQ(f[0].evidence["matches"], 6);
  EXPECT_EQ(f[0].evidence["host_time_ns"], 3 * 100000);  // 40 + 60 µs per step
  EXPECT_EQ(f[0].estimated_savings_ns, 300000);
  EXPECT_NE(f[0].recommendation.find("set_detect_anomaly(True)"), std::string::npos);
}

TEST(SlowApi, FiresOnPerNodeNanChecksInBackward) {
  auto f = findings_of(analyze_with(write_trace("nan_checks.json", {.nan_checks = true}), kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["api"], "anomaly_detection");
  EXPECT_EQ(f[0].evidence["matches"], 0);  // no python frames: caught by the checks alone
  EXPECT_EQ(f[0].evidence["nan_checks"], 36);
  EXPECT_EQ(f[0].evidence["backward_nodes"], 36);
  EXPECT_EQ(f[0].evidence["check_host_time_ns"], 36 * (20000 + 15000 + 100000));
}

TEST(SlowApi, FramesAndNanChecksMakeOneFinding) {
  auto f = findings_of(analyze_with(write_trace("both.json", {.anomaly_frames = true, .nan_checks = true}), kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["matches"], 6);
  EXPECT_EQ(f[0].evidence["nan_checks"], 36);
  EXPECT_EQ(f[0].estimated_savings_ns, 3 * 100000 + 36 * (20000 + 15000 + 100000));
}

TEST(SlowApi, FiresOnAnnotationFlood) {
  // 2,000 annotations of 1.5 µs per 20 ms step: 2 µs of bookkeeping each is 20% of the host time.
  auto f = findings_of(analyze_with(write_trace("flood.json", {.annotations = 2000}), kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["api"], "record_function");
  EXPECT_EQ(f[0].evidence["annotations"], 6000);
  EXPECT_EQ(f[0].estimated_savings_ns, 6000 * 2000);
}

TEST(SlowApi, FewAnnotationsAreFine) {
  EXPECT_TRUE(findings_of(analyze_with(write_trace("few.json", {.annotations = 20}), kId), kId).empty());
}

TEST(SlowApi, DeterministicSettingIsReportedButNotQuantified) {
  auto f = findings_of(analyze_with(write_trace("deterministic.json", {.deterministic = true}), kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["api"], "deterministic_algorithms");
  EXPECT_EQ(f[0].estimated_savings_ns, 0);
  EXPECT_LT(f[0].confidence, 0.5);
}

TEST(SlowApi, QueriesOfTheSettingDoNotCount) {
  EXPECT_TRUE(findings_of(analyze_with(write_trace("query.json", {.deterministic_query = true}), kId), kId).empty());
}

TEST(SlowApi, SilentOnCleanTraces) {
  EXPECT_TRUE(findings_of(analyze_with(write_trace("clean.json", {}), kId), kId).empty());
  for (const char* fx : {"sample_train.json.gz", "sample_amp.json.gz", "sample_train.nsys.sqlite", "legacy_bare_array.json"})
    EXPECT_TRUE(findings_of(analyze_with(fixture_path(fx).string(), kId), kId).empty()) << fx;
}

TEST(SlowApi, SilentOnB200WithDeterminismQueries) {
  // vLLM calls torch.are_deterministic_algorithms_enabled() 36 times: a query, not the setting.
  REALDATA_OR_SKIP(path, "kineto/tracelens_b200_eager.json.gz");
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}

TEST(SlowApi, SilentOnEmitNvtxCapture) {
  // emit_nvtx ranges are how the profile was taken, not a debugging API left on.
  REALDATA_OR_SKIP(path, "nsys/nsys2026_h100_2gpu_1s.sqlite");
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}
