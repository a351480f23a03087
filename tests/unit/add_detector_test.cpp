// tests/unit/add_detector_test.cpp — scripts/add_detector.py writes a detector skeleton that
// compiles, a registry kept in id order, a doc page with every section and option, and two golden
// case skeletons. It runs into a temporary tree (--root) holding a copy of detectors/registry.cpp;
// the C++ check is `c++ -fsyntax-only` against this repository's headers (skipped without c++).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/run.hpp"

namespace fs = std::filesystem;
using proflint::testing::shell_quote;
using proflint::testing::slurp;
using proflint::testing::source_dir;

namespace {

int sh(const std::string& cmd) {
  int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct TempTree {
  fs::path root = fs::path(::testing::TempDir()) / ("add_detector_" + std::to_string(getpid()));
  TempTree() {
    fs::remove_all(root);
    fs::create_directories(root / "detectors");
    fs::copy_file(source_dir() / "detectors/registry.cpp", root / "detectors/registry.cpp");
  }
  ~TempTree() { fs::remove_all(root); }
  int add(const std::string& id, const std::string& extra = "") const {
    return sh("python3 " + shell_quote((source_dir() / "scripts/add_detector.py").string()) + " " + id + " --root " +
              shell_quote(root.string()) + " " + extra + " >/dev/null 2>&1");
  }
};

}  // namespace

TEST(AddDetector, WritesSkeletonRegistryDocAndCases) {
  if (sh("command -v python3 >/dev/null") != 0) GTEST_SKIP() << "python3 not on PATH";
  TempTree t;
  ASSERT_EQ(t.add("zz-probe-check", "--dry-run"), 0);
  EXPECT_FALSE(fs::exists(t.root / "detectors/zz_probe_check.cpp")) << "--dry-run wrote a file";
  EXPECT_EQ(slurp((t.root / "detectors/registry.cpp").string()),
            slurp((source_dir() / "detectors/registry.cpp").string()));

  ASSERT_EQ(t.add("zz-probe-check"), 0);
  ASSERT_EQ(t.add("aa-probe-check"), 0);
  EXPECT_NE(t.add("Not_Kebab"), 0);
  EXPECT_NE(t.add("aa-probe-check"), 0) << "a second run over an existing detector must refuse";

  // Registry: both declared and listed, and the list still in id order (registry_test's rule).
  const std::string reg = slurp((t.root / "detectors/registry.cpp").string());
  EXPECT_NE(reg.find("DetectorInfo zz_probe_check_info();"), std::string::npos);
  std::vector<std::string> listed;
  static const std::regex entry(R"(\n      (\w+)_info\(\),)");
  for (std::sregex_iterator it(reg.begin(), reg.end(), entry), stop; it != stop; ++it) {
    std::string id = (*it)[1];
    std::replace(id.begin(), id.end(), '_', '-');
    listed.push_back(id);
  }
  ASSERT_GE(listed.size(), 3u);
  EXPECT_TRUE(std::is_sorted(listed.begin(), listed.end()));
  EXPECT_EQ(listed.front(), "aa-probe-check");
  EXPECT_EQ(listed.back(), "zz-probe-check");

  // Doc page: the sections every page has, and the option the skeleton declares.
  const std::string doc = slurp((t.root / "docs/detectors/zz-probe-check.md").string());
  for (const char* section : {"# zz-probe-check — ", "**Needs:**", "## What it checks", "## Estimate", "## Options",
                              "| `min_share` | 0.05 |", "## Fix", "## Does not fire"})
    EXPECT_NE(doc.find(section), std::string::npos) << section;

  // Golden case skeletons in the format of tests/cases (README + args).
  for (const char* c : {"zz-probe-check-fires-TODO", "zz-probe-check-silent-sample-amp"}) {
    EXPECT_TRUE(fs::exists(t.root / "tests/cases" / c / "README")) << c;
    EXPECT_NE(slurp((t.root / "tests/cases" / c / "args").string()).find("analyze --only zz-probe-check "),
              std::string::npos)
        << c;
  }
  EXPECT_TRUE(fs::exists(source_dir() / "fixtures/sample_amp.json.gz")) << "the silent case's fixture";

  // The skeleton compiles against this tree's headers and uses the finding helpers.
  const std::string src = slurp((t.root / "detectors/zz_probe_check.cpp").string());
  EXPECT_NE(src.find("make_finding(FindingScope::of_trace(trace_id)"), std::string::npos);
  EXPECT_NE(src.find("DetectorInfo zz_probe_check_info()"), std::string::npos);
  if (sh("command -v c++ >/dev/null") != 0) GTEST_SKIP() << "no c++ on PATH: skeleton not compiled";
  EXPECT_EQ(sh("c++ -std=c++20 -fsyntax-only -I" + shell_quote(source_dir().string()) + " " +
               shell_quote((t.root / "detectors/zz_probe_check.cpp").string())),
            0)
      << "the generated detector does not compile";
}
