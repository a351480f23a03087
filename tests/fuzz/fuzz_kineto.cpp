// tests/fuzz/fuzz_kineto.cpp — libFuzzer entry point of target 'kineto' (tests/fuzz/targets.hpp).
#include "tests/fuzz/targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  proflint::fuzz::kineto(data, size);
  return 0;
}
