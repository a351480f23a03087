// engine/derive/categories.cpp — kernel categories from name fragments (order decides ties).
#include "engine/derive/categories.hpp"

#include <array>
#include <cctype>
#include <initializer_list>
#include <utility>

namespace proflint {

namespace {

struct CategoryRule {
  std::string_view category;
  std::initializer_list<std::string_view> fragments;  // lower-case substrings
};

// First matching row wins. Communication and memory come first because their kernels also carry
// words like "reduce" or "copy"; conv precedes gemm because cuDNN implicit-GEMM convolutions say
// "gemm" too (implicit_convolve_sgemm, xmma_fprop_implicit_gemm).
const std::array<CategoryRule, 7>& rules() {
  static const std::array<CategoryRule, 7> table = {{
      {"communication", {"nccl", "rccl", "multimem_all_reduce", "cross_device_reduce", "dpsk::ep", "allreduce", "all_reduce",
                         "allgather", "all_gather", "reduce_scatter", "reducescatter", "alltoall", "all_to_all"}},
      {"memory", {"memcpy", "memset", "copy_page", "reshape_and_cache", "rocclr_copy", "rocclr_fill", "copybuffer"}},
      {"attention", {"flash", "fmha", "attn", "attention", "sdpa"}},
      {"conv", {"conv", "fprop", "dgrad", "wgrad", "winograd", "implicit_gemm", "igemm_fwd", "igemm_bwd", "igemm_wrw", "im2col",
                "scudnn", "cask_cudnn", "bwd_weight"}},
      {"gemm", {"gemm", "gemv", "nvjet", "cijk_", "matmul", "bmm", "splitkreduce", "dot_kernel", "xmma", "triton_tem_"}},
      {"reduction", {"reduce", "softmax", "norm", "sum", "mean", "welford", "moments", "argmax", "argmin", "nll_loss",
                     "classnllcriterion", "triton_red_", "triton_per_", "gammabetabackward", "bn_fw", "bn_bw", "topk",
                     "cross_entropy", "logsumexp"}},
      {"elementwise", {"elementwise", "catarraybatchedcopy", "triton_poi_", "fill", "multi_tensor_apply", "transpose",
                       "nchwtonhwc", "nhwctonchw", "copy", "cupy_", "axpy", "scal_kernel", "dropout", "pointwise", "index",
                       "gather", "scatter", "where", "relu", "gelu", "silu", "sigmoid", "tanh", "rotary", "quant", "cast",
                       "arange", "subtensorop"}},
  }};
  return table;
}

std::string lower_for_matching(std::string_view s) {
  std::string low;
  low.reserve(s.size());
  for (char c : s) low.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  // fbgemm_gpu kernels are embedding/quantization code, not GEMMs; "convert" is not "conv".
  std::string out;
  out.reserve(low.size());
  std::string_view rest = low;
  while (!rest.empty()) {
    if (rest.starts_with("fbgemm") || rest.starts_with("convert")) {
      out.push_back('_');
      rest.remove_prefix(rest.starts_with("fbgemm") ? 6 : 7);
    } else {
      out.push_back(rest.front());
      rest.remove_prefix(1);
    }
  }
  return out;
}

std::string_view match(const std::string& lowered) {
  for (const auto& rule : rules()) {
    for (auto fragment : rule.fragments) {
      if (lowered.find(fragment) != std::string::npos) return rule.category;
    }
  }
  return "other";
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) s.replace(pos, from.size(), to);
}

}  // namespace

std::string kernel_base_name(std::string_view full_name) {
  std::string s(full_name);
  // These contain '(' and '<' that do not start a parameter or template list.
  replace_all(s, "(anonymous namespace)", "anonymous_namespace");
  replace_all(s, "<unnamed>", "anonymous_namespace");
  size_t begin = 0;
  if (s.starts_with("std::enable_if<")) {
    // Return type of a SFINAE'd template: skip the balanced <…> and the following "::type ".
    // Comparisons inside the condition, e.g. std::enable_if<((8)>(0)), void>, are parenthesized.
    int depth = 0, parens = 0;
    for (size_t i = 14; i < s.size(); ++i) {
      if (s[i] == '(') ++parens;
      else if (s[i] == ')') --parens;
      else if (parens > 0) continue;
      else if (s[i] == '<') ++depth;
      else if (s[i] == '>' && --depth == 0) {
        begin = s.find(' ', i);
        begin = begin == std::string::npos ? s.size() : begin + 1;
        break;
      }
    }
  } else if (s.starts_with("void ")) {
    begin = 5;
  }
  size_t end = s.find_first_of("<(", begin);
  if (end == std::string::npos) end = s.size();
  std::string base = s.substr(begin, end - begin);
  while (!base.empty() && base.back() == ' ') base.pop_back();
  return base;
}

std::string_view triton_kernel_kind(std::string_view name) {
  if (name.starts_with("void ")) name.remove_prefix(5);
  if (!name.starts_with("triton_")) return "";
  static constexpr std::pair<std::string_view, std::string_view> kinds[] = {
      {"triton_poi_", "pointwise"}, {"triton_red_", "reduction"}, {"triton_per_", "persistent_reduction"},
      {"triton_tem_", "template"},  {"triton_for_", "foreach"}};
  for (const auto& [prefix, kind] : kinds)
    if (name.starts_with(prefix)) return kind;
  return "triton";
}

std::string_view kernel_category(std::string_view full_name) {
  // Inductor's prefix says what the kernel does; the fused op names after it (convolution, norm,
  // softmax) name the ops whose epilogues were fused in, which name matching would mistake for the work.
  std::string_view kind = triton_kernel_kind(full_name);
  if (kind == "pointwise" || kind == "foreach") return "elementwise";
  if (kind == "reduction" || kind == "persistent_reduction") return "reduction";
  if (kind == "template") {  // GEMM templates, unless the template is an attention or conv one (flex_attention)
    std::string_view by_name = match(lower_for_matching(full_name));
    return by_name == "attention" || by_name == "conv" ? by_name : std::string_view("gemm");
  }
  std::string base = kernel_base_name(full_name);
  std::string_view by_base = match(lower_for_matching(base));
  if (by_base != "other") return by_base;
  // Only generic launch wrappers name the real work in their template argument; for other kernels
  // the template and parameter types (iterators, functors, descriptors) would only add noise.
  if (base == "cutlass::Kernel" || base == "cutlass::Kernel2" || base == "cutlass::device_kernel")
    return match(lower_for_matching(full_name));
  return by_base;
}

}  // namespace proflint
