// engine/config/tensor_core_pattern.hpp — one [tensor_cores] pattern of proflint.toml.
//
// Its own header so derivation, which applies the patterns, needs nothing else of configuration.
#pragma once

#include <string>

namespace proflint {

// One extra Tensor Core pattern from configuration: a kernel-name substring (case-sensitive)
// that marks a kernel as using (uses_tensor_cores = true) or not using Tensor Cores.
struct TensorCorePattern {
  std::string substring;
  bool uses_tensor_cores = true;
};

}  // namespace proflint
