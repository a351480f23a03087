// tests/unit/fuzz_regressions_test.cpp — every input a fuzz target once failed on, replayed in the
// ordinary test suite (and under ASan + UBSan in CI) through the same function libFuzzer calls
// (tests/fuzz/targets.hpp). The inputs live in tests/fuzz/regressions/TARGET/; docs/fuzzing.md
// says how one gets there. A regression aborts or trips a sanitizer, failing this test.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "tests/fuzz/targets.hpp"
#include "tests/support/realdata.hpp"

namespace proflint {
namespace {

using Target = void (*)(const uint8_t*, size_t);

const std::map<std::string, Target>& targets() {
  static const std::map<std::string, Target> all = {
      {"config", fuzz::config}, {"kineto", fuzz::kineto},   {"lua_rule", fuzz::lua_rule},
      {"nsys", fuzz::nsys},     {"pipeline", fuzz::pipeline}, {"store", fuzz::store},
  };
  return all;
}

TEST(FuzzRegressions, EveryRecordedInputReplaysCleanly) {
  namespace fs = std::filesystem;
  fs::path root = testing::source_dir() / "tests" / "fuzz" / "regressions";
  ASSERT_TRUE(fs::is_directory(root)) << root;
  int replayed = 0;
  for (const auto& dir : fs::directory_iterator(root)) {
    if (!dir.is_directory()) continue;
    auto target = targets().find(dir.path().filename().string());
    ASSERT_NE(target, targets().end()) << "no fuzz target named " << dir.path().filename();
    for (const auto& file : fs::directory_iterator(dir.path())) {
      std::ifstream in(file.path(), std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      SCOPED_TRACE(file.path().string());
      target->second(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++replayed;
    }
  }
  EXPECT_GT(replayed, 0) << "tests/fuzz/regressions/ holds no input";
}

}  // namespace
}  // namespace proflint
