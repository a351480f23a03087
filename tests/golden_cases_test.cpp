// tests/golden_cases_test.cpp — golden end-to-end cases, one folder each under tests/cases/.
//
// A case folder holds README (one line: what it proves), `args` (the proflint arguments, run
// from the repository root; `{realdata}` stands for ../shared/realdata), `expected.out` (stdout)
// and optionally `expected_exit` (default 0). PROFLINT_UPDATE_GOLDENS=1 rewrites expected.out so
// a reviewer reads the diff. Cases that use {realdata} skip with a message when it is absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tests/support/run.hpp"

namespace fs = std::filesystem;
using namespace proflint::testing;

namespace {

std::vector<std::string> case_names() {
  std::vector<std::string> names;
  auto dir = source_dir() / "tests" / "cases";
  if (!fs::exists(dir)) return names;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_directory() && fs::exists(entry.path() / "args")) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

class GoldenCase : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST_P(GoldenCase, MatchesExpectedOutput) {
  auto dir = source_dir() / "tests" / "cases" / GetParam();
  std::string args = trim(slurp((dir / "args").string()));
  ASSERT_TRUE(fs::exists(dir / "README")) << "each case needs a one-line README saying what it proves";
  const std::string token = "{realdata}";
  if (args.find(token) != std::string::npos) {
    if (!fs::exists(realdata_dir())) GTEST_SKIP() << "case " << GetParam() << " needs ../shared/realdata, which is absent: skipped";
    for (size_t p; (p = args.find(token)) != std::string::npos;) args.replace(p, token.size(), "../shared/realdata");
  }
  // Run from the repository root so paths in the output stay relative and stable.
  auto r = run_proflint_in(source_dir().string(), args);
  int expected_exit = fs::exists(dir / "expected_exit") ? std::stoi(slurp((dir / "expected_exit").string())) : 0;
  EXPECT_EQ(r.exit_code, expected_exit) << r.err;
  auto expected_path = dir / "expected.out";
  if (std::getenv("PROFLINT_UPDATE_GOLDENS")) {
    std::ofstream(expected_path, std::ios::binary) << r.out;
    GTEST_SKIP() << "rewrote " << expected_path;
  }
  ASSERT_TRUE(fs::exists(expected_path)) << "missing " << expected_path << "; run with PROFLINT_UPDATE_GOLDENS=1";
  EXPECT_EQ(slurp(expected_path.string()), r.out) << "output of `proflint " << args << "` changed; review, then "
                                                  << "PROFLINT_UPDATE_GOLDENS=1 to accept";
}

INSTANTIATE_TEST_SUITE_P(Cases, GoldenCase, ::testing::ValuesIn(case_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           std::replace_if(n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
                           return n;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GoldenCase);
