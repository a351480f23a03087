// tests/fuzz/fuzz_nsys.cpp — libFuzzer entry point of target 'nsys' (tests/fuzz/targets.hpp).
#include "tests/fuzz/targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  proflint::fuzz::nsys(data, size);
  return 0;
}
