// tests/detectors/emit_nvtx_missing_test.cpp — emit-nvtx-missing: nsys captures whose kernels no
// NVTX range attributes to an op, with framework-appropriate advice.
#include <gtest/gtest.h>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint::testing;

namespace {

const char* kId = "emit-nvtx-missing";

}  // namespace

TEST(EmitNvtxMissing, FiresOnNsysCaptureWithoutAnyNvtx) {
  auto f = findings_of(analyze_with(fixture_path("no_nvtx.nsys.sqlite").string(), kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(f[0].diagnostic);
  EXPECT_EQ(f[0].evidence["kernels"], 486);
  EXPECT_EQ(f[0].evidence["nvtx_ranges"], 0);
  EXPECT_EQ(f[0].evidence["pytorch"], true);
  EXPECT_NE(f[0].recommendation.find("--pytorch=autograd-shapes-nvtx"), std::string::npos);
  EXPECT_NE(f[0].recommendation.find("emit_nvtx(record_shapes=True)"), std::string::npos);
  // Iterations still came from the repeating kernel sequence; the text must not deny them.
  EXPECT_EQ(f[0].problem.find("iterations cannot be found"), std::string::npos) << f[0].problem;
}

TEST(EmitNvtxMissing, SilentWithEmitNvtxOpRanges) {
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("sample_train.nsys.sqlite").string(), kId), kId).empty());
}

TEST(EmitNvtxMissing, NeverOnKinetoTraces) {
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("sample_train.json.gz").string(), kId), kId).empty());
}

TEST(EmitNvtxMissing, TinyPytorchCaptureWithoutNvtxTable) {
  REALDATA_OR_SKIP(path, "nsys/nsys2026_small.sqlite");  // torch.zeros(16).sum().item()
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["kernels"], 2);
  EXPECT_EQ(f[0].evidence["pytorch"], true);  // no framework field; at::native kernel names
  EXPECT_NE(f[0].problem.find("tiny"), std::string::npos);
}

TEST(EmitNvtxMissing, CoarseRangesOfANonPytorchJobGetGenericAdvice) {
  REALDATA_OR_SKIP(path, "nsys/nsys2020_workflow.sqlite");  // CuPy: 1,002 kernels under 4 user ranges
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["pytorch"], false);
  EXPECT_EQ(f[0].evidence["ranges_with_kernels"], 4);
  EXPECT_NE(f[0].problem.find("coarse"), std::string::npos);
  EXPECT_EQ(f[0].recommendation.find("torch"), std::string::npos) << f[0].recommendation;
  EXPECT_NE(f[0].recommendation.find("nvtx.annotate"), std::string::npos);
}

TEST(EmitNvtxMissing, SilentOnRealEmitNvtxAndFineGrainedLibraryRanges) {
  REALDATA_OR_SKIP(h100, "nsys/nsys2026_h100_2gpu_1s.sqlite");
  EXPECT_TRUE(findings_of(analyze_with(h100, kId), kId).empty());
  REALDATA_OR_SKIP(cudf, "nsys/nsys2020_cudf.sqlite");
  EXPECT_TRUE(findings_of(analyze_with(cudf, kId), kId).empty());
}
