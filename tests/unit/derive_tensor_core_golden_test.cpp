// tests/unit/derive_tensor_core_golden_test.cpp — every real kernel name, classified as reviewed.
//
// tests/golden/tensor_core_kernels.tsv lists each distinct kernel name found in ../shared/realdata
// (scripts/list_kernel_names.py) with the Tensor Core verdict and category a human approved. The
// test never rewrites it unless PROFLINT_UPDATE_GOLDENS=1; then the reviewer reads the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/derive/categories.hpp"
#include "engine/derive/tensor_cores.hpp"
#include "tests/support/realdata.hpp"

namespace proflint {
namespace {

struct GoldenRow {
  std::string name;
  std::string is_tc;
  std::string category;
};

std::filesystem::path golden_path() { return testing::source_dir() / "tests" / "golden" / "tensor_core_kernels.tsv"; }

constexpr const char* kHeader =
    "# Every distinct kernel name in ../shared/realdata (scripts/list_kernel_names.py) with proflint's Tensor Core\n"
    "# verdict and category, reviewed by hand. Rewrite with PROFLINT_UPDATE_GOLDENS=1 and review the diff.\n"
    "name\tis_tc\tcategory\n";

std::vector<GoldenRow> read_golden() {
  std::ifstream in(golden_path());
  std::vector<GoldenRow> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line == "name\tis_tc\tcategory") continue;
    std::istringstream fields(line);
    GoldenRow row;
    std::getline(fields, row.name, '\t');
    std::getline(fields, row.is_tc, '\t');
    std::getline(fields, row.category, '\t');
    rows.push_back(row);
  }
  return rows;
}

TEST(DeriveTensorCoreGolden, EveryRealKernelNameMatchesTheReviewedVerdict) {
  auto rows = read_golden();
  ASSERT_GT(rows.size(), 600u) << "golden file missing or truncated: " << golden_path();
  const char* update = std::getenv("PROFLINT_UPDATE_GOLDENS");
  if (update && std::string(update) == "1") {
    std::ofstream out(golden_path());
    out << kHeader;
    for (const auto& row : rows)
      out << row.name << '\t' << (classify_tensor_core(row.name).uses_tensor_cores ? 1 : 0) << '\t' << kernel_category(row.name) << '\n';
    GTEST_SKIP() << "rewrote " << golden_path() << ": review the diff";
  }
  int mismatches = 0;
  for (const auto& row : rows) {
    auto verdict = classify_tensor_core(row.name);
    std::string is_tc = verdict.uses_tensor_cores ? "1" : "0";
    EXPECT_EQ(is_tc, row.is_tc) << row.name << " (rule: " << verdict.why << ")";
    EXPECT_EQ(std::string(kernel_category(row.name)), row.category) << row.name;
    if (is_tc != row.is_tc || kernel_category(row.name) != row.category) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0);
}

}  // namespace
}  // namespace proflint
