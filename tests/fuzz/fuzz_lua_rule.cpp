// tests/fuzz/fuzz_lua_rule.cpp — libFuzzer entry point of target 'lua_rule' (tests/fuzz/targets.hpp).
#include "tests/fuzz/targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  proflint::fuzz::lua_rule(data, size);
  return 0;
}
