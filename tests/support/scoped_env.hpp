// tests/support/scoped_env.hpp — an environment variable set for one scope (the test-only switches
// PROFLINT_SHARED_STORE_BUDGET, PROFLINT_PARSE_THREAD, TMPDIR...), restored afterwards.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

namespace proflint::testing {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace proflint::testing
