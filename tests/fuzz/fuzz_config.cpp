// tests/fuzz/fuzz_config.cpp — libFuzzer entry point of target 'config' (tests/fuzz/targets.hpp).
#include "tests/fuzz/targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  proflint::fuzz::config(data, size);
  return 0;
}
