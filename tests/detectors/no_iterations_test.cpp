// tests/detectors/no_iterations_test.cpp — no-iterations says what was tried and proposes a usable --key-node.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint::testing;

namespace {

const char* kId = "no-iterations";

// Five 10 ms steps without any step marker: each starts with aten::embedding, then a different
// number of aten::add and aten::mul ops (data-dependent control flow), so the top-level op
// sequence has no period; every op launches one kernel.
std::string write_unmarked(const std::string& name) {
  const std::vector<int> adds = {1, 3, 2, 4, 2}, muls = {2, 1, 3, 1, 2};
  std::string ev;
  auto add = [&](const std::string& e) { ev += (ev.empty() ? "" : ",\n") + e; };
  int64_t ext = 1, corr = 100;
  auto op = [&](const char* op_name, double ts) {
    int64_t e = ext++, c = corr++;
    add(fmt::format(
        R"({{"ph":"X","cat":"cpu_op","name":"{}","pid":1,"tid":1,"ts":{:.3f},"dur":100,"args":{{"External id":{}}}}})",
        op_name, ts, e));
    add(fmt::format(
        R"({{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{:.3f},"dur":5,"args":{{"External id":{},"correlation":{}}}}})",
        ts + 10, e, c));
    add(fmt::format(
        R"({{"ph":"X","cat":"kernel","name":"void at::native::vectorized_elementwise_kernel<4>","pid":0,"tid":7,"ts":{:.3f},"dur":50,"args":{{"External id":{},"device":0,"stream":7,"correlation":{}}}}})",
        ts + 20, e, c));
  };
  for (size_t k = 0; k < adds.size(); ++k) {
    double t = 1700000000000000.0 + 10000.0 * static_cast<double>(k);
    op("aten::embedding", t);
    double u = t + 500;
    for (int i = 0; i < adds[k]; ++i, u += 500) op("aten::add", u);
    for (int i = 0; i < muls[k]; ++i, u += 500) op("aten::mul", u);
  }
  auto dir = std::filesystem::temp_directory_path() / "proflint_no_iterations_test";
  std::filesystem::create_directories(dir);
  auto path = dir / name;
  std::ofstream(path)
      << R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8, "computeMinor": 0, "numSms": 108}],
  "traceEvents": [
)" << ev
      << "\n]}\n";
  return path.string();
}

}  // namespace

TEST(NoIterations, SilentWhenProfilerStepsExist) {
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("sample_train.json.gz").string(), kId), kId).empty());
}

TEST(NoIterations, ProposesTheOncePerStepOpAsKeyNode) {
  auto path = write_unmarked("unmarked.json");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(f[0].diagnostic);
  EXPECT_EQ(f[0].evidence["optimizer_steps"], 0);
  EXPECT_EQ(f[0].evidence["top_level_ops"], 5 + 12 + 9);
  const auto& c = f[0].evidence["key_node_candidates"];
  ASSERT_GE(c.size(), 1u);
  EXPECT_EQ(c[0]["name"], "aten::embedding");
  EXPECT_EQ(c[0]["count"], 5);
  EXPECT_EQ(c[0]["period_ns"], 10000000);
  EXPECT_NE(f[0].recommendation.find("`--key-node \"aten::embedding\"` (5 times, every 10.0 ms ± 0%)"),
            std::string::npos)
      << f[0].recommendation;
  EXPECT_NE(f[0].recommendation.find("prof.step()"), std::string::npos);

  // The suggestion works: with it the derivation finds the five steps.
  proflint::LoadOptions lo;
  lo.derive.key_node = "aten::embedding";
  proflint::Store store = proflint::load_inputs({path}, lo);
  proflint::AnalysisOptions ao;
  ao.only = {kId};
  auto r = proflint::run_analysis(store, ao, proflint::detector_registry());
  ASSERT_EQ(r.summaries.size(), 1u);
  EXPECT_EQ(r.summaries[0].iterations.source, "key_node");
  EXPECT_EQ(r.summaries[0].iterations.count, 5);
  EXPECT_TRUE(findings_of(r, kId).empty());
}

TEST(NoIterations, MinRepeatsOptionRejectsRarerCandidates) {
  auto path = write_unmarked("unmarked_cv.json");
  auto f = findings_of(analyze_with(path, kId, {{"min_repeats", 6}}), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(f[0].evidence["key_node_candidates"].empty());
}

TEST(NoIterations, FiresOnH100WindowWithOnlyOpRanges) {
  // A 1 s window of emit_nvtx op ranges: per-layer ops, no step structure, no candidate.
  REALDATA_OR_SKIP(path, "nsys/nsys2026_h100_2gpu_1s.sqlite");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["kernels"], 3442);
  EXPECT_TRUE(f[0].evidence["key_node_candidates"].empty());
  EXPECT_NE(f[0].recommendation.find("torch.cuda.nvtx.range_push"), std::string::npos);
}

TEST(NoIterations, GenericNvtxAdviceForNonPytorchCapture) {
  REALDATA_OR_SKIP(path, "nsys/nsys2020_workflow.sqlite");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_NE(f[0].recommendation.find("nvtx.annotate"), std::string::npos);
  EXPECT_EQ(f[0].recommendation.find("torch"), std::string::npos) << f[0].recommendation;
}

TEST(NoIterations, LayersInsideOneDecodeStepAreNotKeyNodes) {
  // vLLM eager decode: 36 evenly spaced vllm::moe_forward, all inside execute_context_….
  REALDATA_OR_SKIP(path, "kineto/tracelens_b200_eager.json.gz");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(f[0].evidence["key_node_candidates"].empty());
}

TEST(NoIterations, SilentOnCpuOnlyNonFrameworkCapture) {
  REALDATA_OR_SKIP(path, "nsys/nsys2020_quickstart.sqlite");
  EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty());
}
