// engine/derive/tensor_cores.hpp — does a kernel use Tensor Cores (NVIDIA) / matrix cores (AMD)?
//
// Decided from the kernel name by a data-driven rule table (tensor_core_table.cpp): configured
// extra patterns first, then the built-in negative rules (FP32 FFMA/SIMT kernels and helper kernels
// that merely look like Tensor Core kernels), then the positive rules. A name no rule matches is
// "undecided": derivation then asks the op that launched it (resolve_tensor_cores_by_op).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "engine/derive/derive.hpp"

namespace proflint {

struct TraceData;

// One row of the built-in table. `pattern` is a small match expression, not a regular expression
// (kernel names can be 10^6 characters long; a backtracking matcher recursed once per character
// and overflowed the stack on them):
//   * words separated by spaces are clauses that must all hold;
//   * a clause is alternatives separated by '|' and holds when any alternative occurs in the name;
//     a clause starting with '!' holds when none of its alternatives occurs;
//   * inside an alternative '#' stands for a run of one or more decimal digits (taken whole, never
//     given back, so the character after '#' must not be a digit), and 'abc~xyz' means 'abc' not
//     immediately followed by 'xyz'.
// Each alternative is a forward substring search: time linear in the name, constant stack.
// `ignore_case` rows are matched against the lower-cased name (write their patterns in lower case).
struct TensorCoreRule {
  const char* pattern;
  bool uses_tensor_cores;
  bool ignore_case;
  const char* why;
};

// The built-in rules in evaluation order (all negative rules come before the positive ones).
std::span<const TensorCoreRule> tensor_core_rules();

// True when `pattern` (TensorCoreRule syntax) holds for `name`. Throws std::invalid_argument on a
// malformed pattern (empty alternative, '#' followed by a digit, '#' first in an alternative).
bool tensor_core_pattern_matches(std::string_view pattern, std::string_view name);

struct TensorCoreVerdict {
  bool uses_tensor_cores = false;
  bool decided = false;  // a configured pattern or a table rule matched
  std::string why;       // the rule that decided, or "no Tensor Core pattern matched"
};

// Classifies one kernel name. `extra` are the configured patterns (substrings), checked first.
TensorCoreVerdict classify_tensor_core(std::string_view kernel_name, std::span<const TensorCorePattern> extra = {});

// True when a Kineto 'Input type' list (["c10::BFloat16", "c10::BFloat16", ""]) starts, at its first
// tensor dtype, with a format only Tensor Cores make fast: FP16, BF16, FP8 or FP4. FP32 (TF32 is
// a runtime switch the trace does not record), integer and unrecorded dtypes give false.
bool dtype_is_tensor_core_precision(std::string_view input_types_json);

// The op fallback, after kernels are attributed to ops: a kernel whose name no rule decided, whose
// category says it is matrix work (gemm, conv, attention), counts as Tensor Core when the op that
// launched it is a Tensor-Core-eligible op (or Inductor's launch record named after the kernel)
// with FP16/BF16/FP8/FP4 inputs, on a device not known to lack Tensor Cores / matrix cores.
// Sets GpuRec::tensor_core; returns how many kernels it turned to Tensor Core.
int64_t resolve_tensor_cores_by_op(TraceData& trace);

}  // namespace proflint
