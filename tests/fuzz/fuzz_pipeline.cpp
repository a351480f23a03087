// tests/fuzz/fuzz_pipeline.cpp — libFuzzer entry point of target 'pipeline' (tests/fuzz/targets.hpp).
#include "tests/fuzz/targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  proflint::fuzz::pipeline(data, size);
  return 0;
}
