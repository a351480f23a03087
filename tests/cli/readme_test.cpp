// tests/cli/readme_test.cpp — the output shown in README.md is what the binary prints today.
#include <gtest/gtest.h>

#include "tests/support/run.hpp"

TEST(Readme, OutputBlocksAreCurrent) {
  using namespace proflint::testing;
  std::string cmd = "cd " + shell_quote(source_dir().string()) + " && PROFLINT=" + shell_quote(proflint_binary()) +
                    " python3 scripts/update_readme.py --check";
  int status = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 0) << "README.md shows stale output: run scripts/update_readme.py and review the diff";
}
