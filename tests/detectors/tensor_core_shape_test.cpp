// tests/detectors/tensor_core_shape_test.cpp — tensor-core-shape flags FP16/BF16 dims that are not multiples of 8.
#include <gtest/gtest.h>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint::testing;

namespace {
const char* kId = "tensor-core-shape";
}

TEST(TensorCoreShape, FiresOnPlantedHiddenSize1023) {
  auto f = findings_of(analyze_with(fixture_path("shape_not_multiple_of_8.json.gz").string(), kId), kId);
  ASSERT_EQ(f.size(), 1u);
  // 2 head linears x 3 steps (outermost op only, not their addmm) + 9 backward mm.
  EXPECT_EQ(f[0].evidence["affected_op_calls"], 15);
  EXPECT_EQ(f[0].evidence["affected_gpu_time_ns"], 175939);
  const auto& top = f[0].evidence["top_shapes"];
  ASSERT_EQ(top.size(), 4u);
  EXPECT_EQ(top[0]["op"], "aten::mm");
  EXPECT_EQ(top[0]["dims"], "N=1023 (pad to 1024)");
  EXPECT_EQ(top[0]["calls"], 6);
  EXPECT_EQ(top[1]["op"], "aten::linear");
  EXPECT_EQ(top[1]["dims"], "K=1023 (pad to 1024)");
  EXPECT_EQ(top[0]["multiple"], 8);
  // One stream: 0.3 x affected time.
  EXPECT_NEAR(static_cast<double>(f[0].estimated_savings_ns), 0.3 * 175939, 1.0);
  EXPECT_NE(f[0].problem.find("aten::linear with N=1023 (pad to 1024)"), std::string::npos) << f[0].problem;
}

TEST(TensorCoreShape, SilentWhenDimsAreMultiplesOf8) {
  // sample_amp: bf16 convs with 64..512 channels (and a 3-channel input conv, below min_dim), 1024/1000 features.
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("sample_amp.json.gz").string(), kId), kId).empty());
}

TEST(TensorCoreShape, SilentOnFp32) {
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("sample_train.json.gz").string(), kId), kId).empty());
}

TEST(TensorCoreShape, MinDimOptionFlagsTheRgbInputConv) {
  auto f = findings_of(
      analyze_with(fixture_path("sample_amp.json.gz").string(), kId, {{"min_dim", 1}, {"min_kernel_share", 0.0}}), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["top_shapes"][0]["dims"], "C_in=3 (pad to 8)");
}

TEST(TensorCoreShape, FiresOnBertVocabulary30522) {
  REALDATA_OR_SKIP(path, "kineto/tracelens_h100_bert_small.json.gz");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["affected_op_calls"], 1);
  EXPECT_EQ(f[0].evidence["top_shapes"][0]["op"], "aten::linear");
  EXPECT_EQ(f[0].evidence["top_shapes"][0]["dims"], "N=30522 (pad to 30528)");
  EXPECT_EQ(f[0].evidence["affected_gpu_time_ns"], 41280);
}

TEST(TensorCoreShape, SilentOnAlignedOrFp32RealProfiles) {
  for (const char* rel :
       {"kineto/tracelens_h100_qwen_0.5b.json.gz", "kineto/tb_resnet50_v100_workers0.pt.trace.json.gz",
        "kineto/hta_a100_16rank_rank0.json.gz"}) {
    REALDATA_OR_SKIP(path, rel);
    EXPECT_TRUE(findings_of(analyze_with(path, kId), kId).empty()) << rel;
  }
}
