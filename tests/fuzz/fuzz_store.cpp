// tests/fuzz/fuzz_store.cpp — libFuzzer entry point of target 'store' (tests/fuzz/targets.hpp).
#include "tests/fuzz/targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  proflint::fuzz::store(data, size);
  return 0;
}
