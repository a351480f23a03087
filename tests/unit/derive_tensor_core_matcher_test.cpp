// tests/unit/derive_tensor_core_matcher_test.cpp — the Tensor Core pattern language (no regular
// expressions), its behaviour on hostile names, and the op/dtype fallback for undecided names.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include "engine/derive/model.hpp"
#include "engine/derive/tensor_cores.hpp"

namespace proflint {
namespace {

TEST(TensorCorePattern, ClausesAlternativesNegationDigitsAndLookahead) {
  EXPECT_TRUE(tensor_core_pattern_matches("gemm", "xx_gemm_yy"));
  EXPECT_FALSE(tensor_core_pattern_matches("gemm", "xx_GEMM_yy"));  // case-sensitive
  // All clauses must hold; any alternative satisfies a clause.
  EXPECT_TRUE(tensor_core_pattern_matches("bf16|f16 gemm|conv", "conv_f16"));
  EXPECT_FALSE(tensor_core_pattern_matches("bf16|f16 gemm|conv", "conv_f32"));
  // A negated clause holds when none of its alternatives occurs.
  EXPECT_TRUE(tensor_core_pattern_matches("sgemm !tf32", "ampere_sgemm_128x64_nn"));
  EXPECT_FALSE(tensor_core_pattern_matches("sgemm !tf32", "sm80_sgemm_tf32_nn"));
  // '#' is a run of one or more digits.
  EXPECT_TRUE(tensor_core_pattern_matches("Cijk_ _MI#x#x#", "Cijk_Alik_MT64x16x32_MI16x16x1_SN"));
  EXPECT_TRUE(tensor_core_pattern_matches("Cijk_ _MI#x#x#", "Cijk_Alik_MI16x16x16x1_SN"));
  EXPECT_FALSE(tensor_core_pattern_matches("Cijk_ _MI#x#x#", "Cijk_Alik_MT64x64x8_SN_MIx16x1"));
  EXPECT_FALSE(tensor_core_pattern_matches("Cijk_ _MI#x#x#", "Cijk_Alik_MI16x16x_SN"));
  // A later occurrence can match where an earlier one fails.
  EXPECT_TRUE(tensor_core_pattern_matches("a#b", "a1c a22b"));
  // 'abc~xyz': abc not immediately followed by xyz.
  EXPECT_FALSE(tensor_core_pattern_matches("f16 conv~ert", "convert_f16"));
  EXPECT_TRUE(tensor_core_pattern_matches("f16 conv~ert", "convert_f16_conv2d"));
  EXPECT_TRUE(tensor_core_pattern_matches("f16 conv~ert", "f16_conv"));  // at the very end
}

TEST(TensorCorePattern, MalformedPatternsAreRefused) {
  for (const char* bad : {"", "a||b", "#abc", "a#1", "a##b", "a~", "!"})
    EXPECT_THROW(tensor_core_pattern_matches(bad, "abc"), std::invalid_argument) << bad;
}

TEST(TensorCorePattern, EveryTableRowCompilesAndCaseInsensitiveRowsAreLowerCase) {
  for (const auto& rule : tensor_core_rules()) {
    EXPECT_NO_THROW(tensor_core_pattern_matches(rule.pattern, "x")) << rule.pattern;
    if (rule.ignore_case) {
      std::string p = rule.pattern;
      for (char c : p) EXPECT_FALSE(c >= 'A' && c <= 'Z') << rule.pattern;
    }
  }
}

// Issue 20, defect 3: a 30,000-character name overflowed the stack in std::regex_search. Names of
// 3*10^4 and 10^6 characters, plain and made of near-misses for every rule, classify in linear time.
TEST(TensorCorePattern, HugeNamesClassifyWithoutRecursion) {
  std::vector<std::string> names = {std::string(30000, 'K'), std::string(1000000, 'K')};
  std::string near_misses;
  while (near_misses.size() < 1000000) near_misses += "Cijk_MI1x1x_sgem_conver_flash_e4m_MI";
  names.push_back(near_misses);
  std::string digits = "Cijk__MI";
  digits += std::string(1000000, '7');
  names.push_back(digits);
  auto start = std::chrono::steady_clock::now();
  for (const auto& n : names) EXPECT_FALSE(classify_tensor_core(n).uses_tensor_cores) << n.substr(0, 40);
  EXPECT_TRUE(classify_tensor_core(std::string(1000000, 'K') + "_wgmma").uses_tensor_cores);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Linear work over ~4*10^6 characters times ~40 rules: well under a second even in a debug build;
  // the old backtracking matcher crashed instead.
  EXPECT_LT(seconds, 20.0);
}

TEST(TensorCoreDtype, FirstTensorDtypeDecides) {
  EXPECT_TRUE(dtype_is_tensor_core_precision(R"(["c10::BFloat16","c10::BFloat16",""])"));
  EXPECT_TRUE(dtype_is_tensor_core_precision(R"(["","Scalar","c10::Half"])"));
  EXPECT_TRUE(dtype_is_tensor_core_precision(R"(["c10::Float8_e4m3fn","c10::Float8_e4m3fn","float"])"));
  EXPECT_FALSE(dtype_is_tensor_core_precision(R"(["float","float",""])"));  // TF32 is a runtime switch
  EXPECT_FALSE(dtype_is_tensor_core_precision(R"(["double"])"));
  EXPECT_FALSE(dtype_is_tensor_core_precision(R"(["","Scalar"])"));
  EXPECT_FALSE(dtype_is_tensor_core_precision(""));
}

// A trace with one op per case and one kernel under each; returns the kernels' verdicts.
struct FallbackCase {
  std::string op_name, op_type, input_types, kernel_name, category;
  bool decided = false;
  int64_t device = 0;
};

std::vector<bool> run_fallback(const std::vector<FallbackCase>& cases, const TraceData::DeviceInfo& device) {
  TraceData t;
  t.devices[0] = device;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    RangeRec r;
    r.id = static_cast<int64_t>(i);
    r.name_id = t.intern(c.op_name);
    r.op = static_cast<int64_t>(i);
    t.ranges.push_back(r);
    RangeFact f;
    if (!c.input_types.empty()) {
      f.args = static_cast<int32_t>(t.own_range_args.size());
      t.own_range_args.push_back({});
      t.own_range_args.back().input_types_id = t.intern(c.input_types);
    }
    t.own_range_facts.push_back(f);
    OpRec op;
    op.range = static_cast<int64_t>(i);
    op.name_id = static_cast<int32_t>(r.name_id);
    op.op_type = t.add_op_type(c.op_type);
    t.ops.push_back(op);
    GpuRec g;
    g.kind = GpuKind::kernel;
    g.device_id = c.device;
    g.name_id = t.intern(c.kernel_name);
    g.op = static_cast<int64_t>(i);
    g.category = kernel_category_index(c.category);
    g.tensor_core_decided = c.decided;
    t.gpu.push_back(g);
  }
  resolve_tensor_cores_by_op(t);
  std::vector<bool> out;
  for (const auto& g : t.gpu) out.push_back(g.tensor_core);
  return out;
}

TEST(TensorCoreFallback, UndecidedMatrixKernelsFollowTheLaunchingOpsDtype) {
  const std::string bf16 = R"(["c10::BFloat16","c10::BFloat16",""])", fp32 = R"(["float","float",""])";
  std::vector<FallbackCase> cases = {
      // Inductor's Triton matmul template: the launch record is named after the kernel.
      {"triton_tem_fused_mm_0", "triton_tem_fused_mm_0", bf16, "triton_tem_fused_mm_0", "gemm"},
      {"triton_tem_fused_mm_0", "triton_tem_fused_mm_0", fp32, "triton_tem_fused_mm_0", "gemm"},
      // A GEMM under aten::mm whose name says nothing about precision.
      {"aten::mm", "mm", bf16, "gemm_kernel_generic", "gemm"},
      // Not matrix work by name: an elementwise helper under the same op stays non-TC.
      {"aten::mm", "mm", bf16, "vectorized_elementwise_kernel", "elementwise"},
      // A name the table decided (e.g. splitKreduce, negative) is never overridden.
      {"aten::mm", "mm", bf16, "splitKreduce_kernel", "gemm", true},
      // An op that is not Tensor-Core eligible and is not the kernel's launch record.
      {"aten::copy_", "copy_", bf16, "gemm_kernel_generic", "gemm"},
      // No recorded dtypes (nsys emit_nvtx ranges): nothing to go on.
      {"aten::mm", "mm", "", "gemm_kernel_generic", "gemm"},
  };
  TraceData::DeviceInfo h100{"nvidia", "NVIDIA H100 80GB HBM3", 9};
  EXPECT_EQ(run_fallback(cases, h100), (std::vector<bool>{true, false, true, false, false, false, false}));
  // The same launches on a Pascal GPU (no Tensor Cores) and on an MI50 (no MFMA) stay non-TC; on a
  // device the trace does not describe the dtype decides.
  EXPECT_EQ(run_fallback(cases, {"nvidia", "Tesla P100-PCIE-16GB", 6}), std::vector<bool>(cases.size(), false));
  EXPECT_EQ(run_fallback(cases, {"amd", "AMD Instinct MI50", 9}), std::vector<bool>(cases.size(), false));
  EXPECT_EQ(run_fallback(cases, {"amd", "AMD Instinct MI300X", 9})[0], true);
  EXPECT_EQ(run_fallback(cases, {"", "", std::nullopt})[0], true);
}

}  // namespace
}  // namespace proflint
