// tests/report/below_threshold_test.cpp — nothing hidden: checks that stayed under a threshold are
// listed with their value and threshold (issue 21, point 8), and findings that claim the same
// evidence count it once (issue 21, point 3).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"
#include "tests/support/run.hpp"

using namespace proflint;
using namespace proflint::testing;

namespace {

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

const nlohmann::json* below_entry(const nlohmann::json& root, const std::string& id) {
  for (const auto& b : root["below_threshold"])
    if (b["id"] == id) return &b;
  return nullptr;
}

}  // namespace

// fixtures/small_fp32_mlp.json.gz: a tiny FP32 MLP on a V100 (compute capability 7.0). Its only
// Tensor-Core-eligible kernels are the six volta_sgemm kernels; python3 over the raw events
// (sum of 'dur' of the kernels named volta_sgemm_*) gives 99.021 µs, one stream, so the AMP
// estimate is 99,021 ns x (1 - 1/2) = 49,510.5 ns, under min_savings_ns = 100,000 ns.
TEST(BelowThreshold, TinyFp32ModelListsAmpWithItsEstimateAndThresholdInTextAndJson) {
  auto path = fixture_path("small_fp32_mlp.json.gz").string();
  auto json_run = run_proflint("analyze --format json " + shell_quote(path));
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  auto root = nlohmann::json::parse(json_run.out);
  for (const auto& f : root["findings"]) EXPECT_NE(f["id"], "amp-not-used");
  const auto* amp = below_entry(root, "amp-not-used");
  ASSERT_NE(amp, nullptr) << json_run.out;
  EXPECT_NEAR((*amp)["value"].get<double>(), 49510.5, 1.0);
  EXPECT_DOUBLE_EQ((*amp)["threshold"].get<double>(), 100000);
  EXPECT_EQ((*amp)["unit"], "ns");
  EXPECT_EQ((*amp)["measured"], "estimated saving");
  EXPECT_EQ((*amp)["scope"]["device_id"], 0);
  EXPECT_TRUE(contains((*amp)["detail"].get<std::string>(), "Tensor-Core-eligible")) << (*amp)["detail"];

  auto text = run_proflint("analyze " + shell_quote(path));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  auto at = text.out.find("Checked, below threshold");
  ASSERT_NE(at, std::string::npos) << text.out;
  EXPECT_TRUE(contains(text.out.substr(at), "amp-not-used: estimated saving 49.5 µs, threshold 100 µs")) << text.out;

  auto md = run_proflint("analyze --format markdown " + shell_quote(path));
  EXPECT_TRUE(contains(md.out, "| `amp-not-used` | estimated saving | 49.5 µs | 100 µs | GPU 0, iterations 0-3 |")) << md.out;

  // SARIF 2.1.0: a result of kind "pass" must have level "none".
  auto sarif = nlohmann::json::parse(run_proflint("analyze --format sarif " + shell_quote(path)).out);
  bool found = false;
  for (const auto& r : sarif["runs"][0]["results"]) {
    if (r["ruleId"] != "amp-not-used") continue;
    found = true;
    EXPECT_EQ(r["kind"], "pass");
    EXPECT_EQ(r["level"], "none");
    EXPECT_NEAR(r["properties"]["value"].get<double>(), 49510.5, 1.0);
    EXPECT_DOUBLE_EQ(r["properties"]["threshold"].get<double>(), 100000);
  }
  EXPECT_TRUE(found);
}

// The option lowers the threshold: the same estimate is then a finding, no longer listed below.
TEST(BelowThreshold, LoweringTheThresholdTurnsTheSameEstimateIntoAFinding) {
  auto r = analyze_with(fixture_path("small_fp32_mlp.json.gz").string(), "amp-not-used", {{"min_savings_ns", 1000}});
  auto f = findings_of(r, "amp-not-used");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NEAR(static_cast<double>(f[0].estimated_savings_ns), 49510.5, 1.0);
  EXPECT_TRUE(r.below_threshold.empty());
}

// sample_amp: 4 workers and pinned memory, so no DataLoader fetch leaves the GPU idle; the
// detector still says what it measured (0 ns against min_stall_ns = 1 ms).
TEST(BelowThreshold, DataloaderStallOnHealthySampleListsItsMeasuredValue) {
  auto r = analyze_with(fixture_path("sample_amp.json.gz").string(), "dataloader-stall");
  EXPECT_TRUE(findings_of(r, "dataloader-stall").empty());
  ASSERT_EQ(r.below_threshold.size(), 1u);
  const auto& b = r.below_threshold[0];
  EXPECT_EQ(b.id, "dataloader-stall");
  EXPECT_EQ(b.source, "builtin");
  EXPECT_GE(b.value, 0);
  EXPECT_LT(b.value, b.threshold);
  EXPECT_FALSE(b.measured.empty());
  EXPECT_FALSE(b.unit.empty());
}

// sample_train plants 18 pageable copies (12 host-to-device of 441 MiB, 6 device-to-host of 24 B);
// both pageable-memcpy (copy time x 0.5) and sync-memcpy (exposed copy time x 0.5) estimate a
// saving from them. python3 over the raw events: the 18 gpu_memcpy events ('Pageable' in the
// name) last 54,164.908 µs, and no kernel runs beside any of them, so each copy's larger claim
// is dur x 0.5 and the two findings together may count 27,082,454 ns, not twice that.
TEST(BelowThreshold, SampleTrainCountsTheSameCopiesOnce) {
  auto path = fixture_path("sample_train.json.gz").string();
  auto root = nlohmann::json::parse(run_proflint("analyze --format json " + shell_quote(path)).out);
  int64_t copies_total = 0, sum = 0;
  const nlohmann::json* sync = nullptr;
  for (const auto& f : root["findings"]) {
    sum += f["estimated_savings_ns"].get<int64_t>();
    if (f["id"] == "pageable-memcpy" || f["id"] == "sync-memcpy") copies_total += f["estimated_savings_ns"].get<int64_t>();
    if (f["id"] == "sync-memcpy") sync = &f;
  }
  EXPECT_EQ(copies_total, 27082454);
  ASSERT_NE(sync, nullptr);
  EXPECT_EQ(sync->at("overlaps").size(), 1u);
  EXPECT_EQ(sync->at("overlaps")[0]["id"], "pageable-memcpy");
  EXPECT_EQ(sync->at("gross_savings_ns").get<int64_t>(), 27082454);
  EXPECT_EQ(sync->at("estimated_savings_ns").get<int64_t>(), 0);  // every copy already counted
  // The ranked savings never add up to more than the wall time of the capture.
  EXPECT_LE(sum, root["traces"][0]["wall_ns"].get<int64_t>());
}

// ResNet-50 on a V100 with a for-loop SGD. python3 over the raw events: optimizer kernels are the
// kernels whose launching cudaLaunchKernel (matched on 'correlation') starts inside an
// Optimizer.step / Optimizer.zero_grad op; sorted by start, a run is a stretch of optimizer
// kernels with no other kernel between them. The 12 runs' spans minus their kernel time total
// 37,711 µs of GPU idle, so the estimate is 37,711 µs x 0.8 = 30,168.8 µs — not the host time of
// the optimizer ops x 0.8 (86.0 ms) it was, while the GPU still ran the backward pass.
TEST(BelowThreshold, OptimizerNotFusedEstimatesFromGpuIdleTimeBetweenItsKernels) {
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_v100_workers0.pt.trace.json.gz");
  auto root = nlohmann::json::parse(
      run_proflint("analyze --format json --only optimizer-not-fused,no-fusion " + shell_quote(path)).out);
  const nlohmann::json* opt = nullptr;
  for (const auto& f : root["findings"])
    if (f["id"] == "optimizer-not-fused") opt = &f;
  ASSERT_NE(opt, nullptr) << root.dump(1);
  EXPECT_NEAR(opt->at("gross_savings_ns").get<double>(), 30168800.0, 1000.0);
  EXPECT_EQ(opt->at("evidence")["optimizer_gpu_idle_ns"].get<int64_t>() / 1000, 37711);
  EXPECT_EQ(opt->at("evidence")["optimizer_kernel_runs"], 12);
}
