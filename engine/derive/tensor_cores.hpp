// engine/derive/tensor_cores.hpp — does a kernel use Tensor Cores (NVIDIA) / matrix cores (AMD)?
//
// Decided from the kernel name by a data-driven rule table (tensor_core_table.cpp): configured
// extra patterns first, then the built-in negative rules (FP32 FFMA/SIMT kernels that merely look
// like Tensor Core kernels), then the positive rules; no match means "not Tensor Core".
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "engine/derive/derive.hpp"

namespace proflint {

// One row of the built-in table. `pattern` is an ECMAScript regular expression searched anywhere in
// the kernel name (case-sensitive unless `ignore_case`); `why` is shown to users who ask.
struct TensorCoreRule {
  const char* pattern;
  bool uses_tensor_cores;
  bool ignore_case;
  const char* why;
};

// The built-in rules in evaluation order (all negative rules come before the positive ones).
std::span<const TensorCoreRule> tensor_core_rules();

struct TensorCoreVerdict {
  bool uses_tensor_cores = false;
  std::string why;  // the rule that decided, or "no Tensor Core pattern matched"
};

// Classifies one kernel name. `extra` are the configured patterns (substrings), checked first.
TensorCoreVerdict classify_tensor_core(std::string_view kernel_name, std::span<const TensorCorePattern> extra = {});

}  // namespace proflint
