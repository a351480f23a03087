// engine/derive/tensor_cores.cpp — applies the Tensor Core rule table to kernel names, and the op
// fallback for names the table cannot decide.
#include "engine/derive/tensor_cores.hpp"

#include <cctype>
#include <stdexcept>
#include <unordered_set>
#include <vector>

#include "engine/derive/model.hpp"
#include "engine/derive/ops.hpp"

namespace proflint {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// One alternative: literal pieces with a digit run between consecutive pieces (a trailing '#' adds
// an empty last piece), and an optional text that must not follow the match.
struct Alternative {
  std::vector<std::string> pieces;
  std::string not_followed_by;
};

struct Clause {
  bool negated = false;
  std::vector<Alternative> alternatives;
};

struct CompiledRule {
  std::vector<Clause> clauses;
};

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t begin = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(begin, i - begin));
      begin = i + 1;
    }
  }
  return out;
}

Alternative compile_alternative(std::string_view text, std::string_view pattern) {
  auto bad = [&](const char* what) {
    return std::invalid_argument("Tensor Core pattern '" + std::string(pattern) + "': " + what);
  };
  Alternative alt;
  if (size_t tilde = text.find('~'); tilde != std::string_view::npos) {
    alt.not_followed_by = std::string(text.substr(tilde + 1));
    text = text.substr(0, tilde);
    if (alt.not_followed_by.empty()) throw bad("nothing after '~'");
  }
  for (auto piece : split(text, '#')) alt.pieces.emplace_back(piece);
  if (alt.pieces.front().empty()) throw bad("an alternative must start with literal text");
  for (size_t i = 1; i < alt.pieces.size(); ++i) {
    if (!alt.pieces[i].empty() && is_digit(alt.pieces[i].front())) throw bad("a digit right after '#'");
    if (alt.pieces[i].empty() && i + 1 < alt.pieces.size()) throw bad("'##'");
  }
  return alt;
}

CompiledRule compile(std::string_view pattern) {
  CompiledRule rule;
  for (auto word : split(pattern, ' ')) {
    if (word.empty()) continue;
    Clause clause;
    if (word.front() == '!') {
      clause.negated = true;
      word.remove_prefix(1);
    }
    for (auto alt : split(word, '|')) {
      if (alt.empty()) throw std::invalid_argument("Tensor Core pattern '" + std::string(pattern) + "': empty alternative");
      clause.alternatives.push_back(compile_alternative(alt, pattern));
    }
    rule.clauses.push_back(std::move(clause));
  }
  if (rule.clauses.empty()) throw std::invalid_argument("empty Tensor Core pattern");
  return rule;
}

// Does the alternative match with its first piece at `pos`? Digit runs are taken whole, so the
// scan from one start never revisits a character: no backtracking.
bool matches_at(const Alternative& alt, std::string_view name, size_t pos) {
  pos += alt.pieces.front().size();
  for (size_t i = 1; i < alt.pieces.size(); ++i) {
    size_t digits = pos;
    while (digits < name.size() && is_digit(name[digits])) ++digits;
    if (digits == pos) return false;
    pos = digits;
    const std::string& piece = alt.pieces[i];
    if (name.compare(pos, piece.size(), piece) != 0) return false;
    pos += piece.size();
  }
  return alt.not_followed_by.empty() || name.compare(pos, alt.not_followed_by.size(), alt.not_followed_by) != 0;
}

bool occurs(const Alternative& alt, std::string_view name) {
  const std::string& first = alt.pieces.front();
  for (size_t pos = name.find(first); pos != std::string_view::npos; pos = name.find(first, pos + 1))
    if (matches_at(alt, name, pos)) return true;
  return false;
}

bool holds(const CompiledRule& rule, std::string_view name) {
  for (const auto& clause : rule.clauses) {
    bool any = false;
    for (const auto& alt : clause.alternatives) {
      if (occurs(alt, name)) {
        any = true;
        break;
      }
    }
    if (any == clause.negated) return false;
  }
  return true;
}

// Compiled once (derivation classifies each distinct kernel name once).
const std::vector<CompiledRule>& compiled_rules() {
  static const std::vector<CompiledRule> compiled = [] {
    std::vector<CompiledRule> out;
    for (const auto& rule : tensor_core_rules()) out.push_back(compile(rule.pattern));
    return out;
  }();
  return compiled;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Devices the trace describes as lacking Tensor Cores / matrix cores: NVIDIA before Volta
// (compute capability < 7), AMD Instinct before MI100 (no MFMA). Anything else, including a device
// the trace does not describe, is not known to lack them.
bool known_without_matrix_units(const TraceData::DeviceInfo& d) {
  if (d.vendor == "nvidia") return d.compute_major && *d.compute_major < 7;
  if (d.vendor == "amd") {
    size_t mi = d.name.find("MI");
    if (mi == std::string::npos || mi + 2 >= d.name.size() || !is_digit(d.name[mi + 2])) return false;
    int number = 0;
    for (size_t i = mi + 2; i < d.name.size() && is_digit(d.name[i]) && number < 10000; ++i) number = number * 10 + (d.name[i] - '0');
    return number < 100;
  }
  return false;
}

}  // namespace

bool tensor_core_pattern_matches(std::string_view pattern, std::string_view name) { return holds(compile(pattern), name); }

TensorCoreVerdict classify_tensor_core(std::string_view kernel_name, std::span<const TensorCorePattern> extra) {
  for (const auto& p : extra) {
    if (!p.substring.empty() && kernel_name.find(p.substring) != std::string_view::npos)
      return {p.uses_tensor_cores, true, "configured pattern '" + p.substring + "'"};
  }
  const auto& rules = tensor_core_rules();
  const auto& compiled = compiled_rules();
  std::string lowered;
  for (size_t i = 0; i < rules.size(); ++i) {
    std::string_view subject = kernel_name;
    if (rules[i].ignore_case) {
      if (lowered.empty()) lowered = lower(kernel_name);
      subject = lowered;
    }
    if (holds(compiled[i], subject)) return {rules[i].uses_tensor_cores, true, rules[i].why};
  }
  return {false, false, "no Tensor Core pattern matched"};
}

bool dtype_is_tensor_core_precision(std::string_view json) {
  static const std::unordered_set<std::string_view> reduced = {
      "c10::Half",           "half",                "float16",           "c10::BFloat16",       "bfloat16",
      "c10::Float8_e4m3fn",  "c10::Float8_e5m2",    "c10::Float8_e4m3fnuz", "c10::Float8_e5m2fnuz",
      "c10::Float8_e8m0fnu", "c10::Float4_e2m1fn_x2"};
  static const std::unordered_set<std::string_view> not_dtypes = {
      "", "Scalar", "ScalarList", "TensorList", "GenericList", "Int", "Bool", "Device", "Layout", "ScalarType", "None", "String",
      "IntList"};
  // A JSON array of strings: scan the quoted items without a JSON parser.
  size_t i = 0;
  while ((i = json.find('"', i)) != std::string_view::npos) {
    size_t j = json.find('"', i + 1);
    if (j == std::string_view::npos) break;
    std::string_view item = json.substr(i + 1, j - i - 1);
    i = j + 1;
    if (not_dtypes.contains(item)) continue;
    return reduced.contains(item);
  }
  return false;
}

int64_t resolve_tensor_cores_by_op(TraceData& t) {
  int64_t turned = 0;
  for (auto& g : t.gpu) {
    if (g.kind != GpuKind::kernel || g.tensor_core_decided || g.op < 0) continue;
    if (std::string_view c = g.category_text(); c != "gemm" && c != "conv" && c != "attention") continue;
    const OpRec& op = t.ops[static_cast<size_t>(g.op)];
    if (op.range < 0) continue;
    const RangeRec& r = t.ranges[static_cast<size_t>(op.range)];
    const int64_t types_id = t.args(r).input_types_id;
    if (types_id == kNone) continue;
    // Inductor records each Triton launch as an op named after the kernel, with the kernel's inputs.
    bool launch_record = op.name_id == g.name_id || t.text(op.name_id) == t.text(g.name_id);
    if (!launch_record && !is_tc_eligible_type(op_type_text(op, t.op_types))) continue;
    if (!dtype_is_tensor_core_precision(t.text(types_id))) continue;
    auto dev = t.devices.find(g.device_id);
    if (dev != t.devices.end() && known_without_matrix_units(dev->second)) continue;
    g.tensor_core = true;
    ++turned;
  }
  return turned;
}

}  // namespace proflint
