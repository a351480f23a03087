// engine/derive/tensor_cores.cpp — applies the Tensor Core rule table to kernel names.
#include "engine/derive/tensor_cores.hpp"

#include <regex>
#include <vector>

namespace proflint {

namespace {

// Compiled once: derivation classifies each distinct kernel name once, so regex cost is small,
// but compiling per call would dominate.
const std::vector<std::regex>& compiled_rules() {
  static const std::vector<std::regex> compiled = [] {
    std::vector<std::regex> out;
    for (const auto& rule : tensor_core_rules()) {
      auto flags = std::regex::ECMAScript | std::regex::optimize;
      if (rule.ignore_case) flags |= std::regex::icase;
      out.emplace_back(rule.pattern, flags);
    }
    return out;
  }();
  return compiled;
}

}  // namespace

TensorCoreVerdict classify_tensor_core(std::string_view kernel_name, std::span<const TensorCorePattern> extra) {
  for (const auto& p : extra) {
    if (!p.substring.empty() && kernel_name.find(p.substring) != std::string_view::npos)
      return {p.uses_tensor_cores, "configured pattern '" + p.substring + "'"};
  }
  const auto& rules = tensor_core_rules();
  const auto& compiled = compiled_rules();
  for (size_t i = 0; i < rules.size(); ++i) {
    if (std::regex_search(kernel_name.begin(), kernel_name.end(), compiled[i])) return {rules[i].uses_tensor_cores, rules[i].why};
  }
  return {false, "no Tensor Core pattern matched"};
}

}  // namespace proflint
