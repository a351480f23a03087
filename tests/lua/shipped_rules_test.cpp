// tests/lua/shipped_rules_test.cpp — each rule in rules/ loads, fires on a profile that has the
// problem and stays silent on one that does not; the examples in rules/examples/ load too.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/lua/rules.hpp"
#include "tests/lua/lua_support.hpp"

using namespace proflint;
using namespace proflint::testing;

namespace {

AnalysisResult run_shipped(const std::string& path, const std::string& id) {
  Store store = load_inputs({path}, LoadOptions{});
  AnalysisOptions ao;
  ao.rule_files = lua::shipped_rules();
  ao.only = {id, "rule-error"};
  return run_analysis(store, ao, detector_registry());
}

void expect_fires(const std::string& path, const std::string& id, size_t count = 1) {
  auto r = run_shipped(path, id);
  ASSERT_TRUE(with_id(r, "rule-error").empty()) << with_id(r, "rule-error")[0].problem;
  auto f = with_id(r, id);
  ASSERT_EQ(f.size(), count) << id << " on " << path;
  EXPECT_GT(f[0].estimated_savings_ns, 0);
  EXPECT_FALSE(f[0].recommendation.empty());
  EXPECT_EQ(f[0].source.rfind("rules/", 0), 0u) << f[0].source;
}

void expect_silent(const std::string& path, const std::string& id) {
  auto r = run_shipped(path, id);
  ASSERT_TRUE(with_id(r, "rule-error").empty()) << with_id(r, "rule-error")[0].problem;
  EXPECT_TRUE(with_id(r, id).empty()) << id << " fired on " << path << ": " << with_id(r, id)[0].problem;
}

}  // namespace

TEST(LuaShippedRules, AllLoadAndAreValid) {
  auto files = lua::shipped_rules();
  ASSERT_GE(files.size(), 4u);
  for (const auto& f : files) EXPECT_TRUE(lua::load_rule(f, {}).ok()) << f.path;
  for (const auto& entry : std::filesystem::directory_iterator(source_dir() / "rules" / "examples")) {
    if (entry.path().extension() != ".lua") continue;
    auto info = lua::load_rule(lua::read_rule_file(entry.path().string()), {});
    EXPECT_TRUE(info.ok()) << entry.path() << ": " << (info.ok() ? "" : info.problems[0]);
  }
}

TEST(LuaShippedRules, OptimizerNotFused) {
  expect_silent(fixture_path("sample_train.json.gz").string(), "optimizer-not-fused");  // foreach SGD
  REALDATA_OR_SKIP(p, "kineto/tb_resnet50_v100_workers0.pt.trace.json.gz");
  expect_fires(p, "optimizer-not-fused");
}

TEST(LuaShippedRules, ExcessiveDeviceTransfers) {
  expect_silent(fixture_path("sample_train.json.gz").string(), "excessive-device-transfers");  // 3 copies per step
  REALDATA_OR_SKIP(p, "kineto/hta_a100_16rank_rank0.json.gz");
  expect_fires(p, "excessive-device-transfers");
}

TEST(LuaShippedRules, ChannelsLastNotUsed) {
  expect_fires(fixture_path("sample_amp.json.gz").string(), "channels-last-not-used");
  expect_silent(fixture_path("sample_train.json.gz").string(), "channels-last-not-used");  // FP32, no transposes
}

TEST(LuaShippedRules, OpTypeGpuBudget) {
  expect_silent(fixture_path("sample_train.json.gz").string(), "op-type-gpu-budget");  // convolutions dominate
  REALDATA_OR_SKIP(p, "kineto/tracelens_h100_qwen_0.5b.json.gz");
  expect_fires(p, "op-type-gpu-budget");
}

TEST(LuaExampleRules, AttentionTensorCores) {
  std::vector<lua::RuleFile> files = {
      lua::read_rule_file((source_dir() / "rules/examples/attention_tensor_cores.lua").string())};
  {
    // The FP32 sample has no attention: pretend its linear layers are, by option.
    Store store = load_inputs({fixture_path("sample_train.json.gz").string()}, LoadOptions{});
    std::map<std::string, DetectorConfig> config;
    config["attention-tensor-cores"].options = {{"op_patterns", {"addmm", "aten::mm"}}};
    auto r = run_rules(store, files, {}, config);
    auto f = with_id(r, "attention-tensor-cores");
    ASSERT_EQ(f.size(), 1u) << (r.findings.empty() ? "" : r.findings[0].problem);
    EXPECT_NE(f[0].problem.find("runs without Tensor Cores"), std::string::npos) << f[0].problem;
    EXPECT_EQ(f[0].source, (source_dir() / "rules/examples/attention_tensor_cores.lua").string());
  }
  REALDATA_OR_SKIP(p, "kineto/tracelens_h100_bert_small.json.gz");
  Store store = load_inputs({p}, LoadOptions{});
  EXPECT_TRUE(with_id(run_rules(store, files), "attention-tensor-cores").empty());  // flash attention on H100
}
