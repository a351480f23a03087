// tests/support/realdata.hpp — finding ../shared/realdata and the project's fixtures from tests.
//
// Tests on real profiles call REALDATA_OR_SKIP("kineto/x.json.gz"): when ../shared/realdata is
// absent (a user's fresh clone), the test is skipped with a visible message instead of failing.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace proflint::testing {

inline std::filesystem::path source_dir() {
  if (const char* env = std::getenv("PROFLINT_SOURCE_DIR")) return env;
#ifdef PROFLINT_SOURCE_DIR
  return PROFLINT_SOURCE_DIR;
#else
  return std::filesystem::current_path();
#endif
}

inline std::filesystem::path realdata_dir() {
  if (const char* env = std::getenv("PROFLINT_REALDATA")) return env;
  return source_dir() / ".." / "shared" / "realdata";
}

inline std::filesystem::path fixture_path(const std::string& rel) { return source_dir() / "fixtures" / rel; }

// Path of the proflint executable built next to the tests.
inline std::string proflint_binary() {
#ifdef PROFLINT_BINARY
  return PROFLINT_BINARY;
#else
  return "proflint";
#endif
}

}  // namespace proflint::testing

// Declares `std::string var` holding the real profile's path, or skips the test when absent.
#define REALDATA_OR_SKIP(var, rel)                                                                   \
  const auto var##_path_ = ::proflint::testing::realdata_dir() / (rel);                             \
  if (!std::filesystem::exists(var##_path_))                                                        \
    GTEST_SKIP() << "real profile " << (rel) << " not found under " << ::proflint::testing::realdata_dir() \
                 << " (../shared/realdata is absent): skipped";                                     \
  const std::string var = var##_path_.string()
