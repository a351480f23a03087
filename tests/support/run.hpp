// tests/support/run.hpp — running the proflint binary from tests and capturing what it printed.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/support/realdata.hpp"

namespace proflint::testing {

struct RunResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''"; else q += c;
  }
  return q + "'";
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `proflint ARGS` in folder `cwd` (args already shell-quoted where needed), NO_COLOR set and
// CI cleared (under CI=true a failing Lua rule changes analyze's exit code).
inline RunResult run_proflint_in(const std::string& cwd, const std::string& args) {
  static int counter = 0;
  std::string base = ::testing::TempDir() + "proflint_run_" + std::to_string(getpid()) + "_" + std::to_string(++counter);
  std::string cmd = "cd " + shell_quote(cwd) + " && CI= NO_COLOR=1 " + shell_quote(proflint_binary()) + " " + args + " >" + base +
                    ".out 2>" + base + ".err";
  int status = std::system(cmd.c_str());
  RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(base + ".out");
  r.err = slurp(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

inline RunResult run_proflint(const std::string& args) { return run_proflint_in(".", args); }

}  // namespace proflint::testing
