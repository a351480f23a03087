// engine/config/config.cpp — see config.hpp.
#include "engine/config/config.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "engine/common/error.hpp"
#include "engine/common/severity.hpp"
#include "engine/common/suggest.hpp"

namespace proflint {

namespace {

std::string where(const std::string& source, const toml::source_region& region) {
  return fmt::format("{}:{}:{}", source, region.begin.line, region.begin.column);
}

void reject_unknown_keys(const toml::table& table, const std::set<std::string>& known, const std::string& section,
                         const std::string& source) {
  for (const auto& [key, node] : table) {
    if (!known.count(std::string(key.str()))) {
      std::string allowed;
      for (const auto& k : known) allowed += (allowed.empty() ? "" : ", ") + k;
      throw Error(fmt::format("{}: unknown key '{}{}' (known: {})", where(source, key.source()),
                              section.empty() ? "" : section + ".", key.str(), allowed));
    }
  }
}

std::vector<std::string> string_list(const toml::node& node, const std::string& name, const std::string& source) {
  const auto* arr = node.as_array();
  if (!arr) throw Error(fmt::format("{}: '{}' must be an array of strings", where(source, node.source()), name));
  std::vector<std::string> out;
  for (const auto& item : *arr) {
    const auto* s = item.as_string();
    if (!s || s->get().empty())
      throw Error(fmt::format("{}: '{}' must contain non-empty strings", where(source, item.source()), name));
    out.push_back(s->get());
  }
  return out;
}

// [detectors.<id>] or [rules.<id>]: `enabled` plus options of scalar or array values.
DetectorConfig parse_detector_table(const toml::table& dt, const std::string& name, const std::string& table_where,
                                    const std::string& source) {
  DetectorConfig dc;
  dc.where[""] = table_where;
  for (const auto& [key, value] : dt) {
    std::string k(key.str());
    dc.where[k] = where(source, key.source());
    if (k == "enabled") {
      if (!value.is_boolean())
        throw Error(fmt::format("{}: '{}.enabled' must be true or false", where(source, value.source()), name));
      dc.enabled = value.as_boolean()->get();
    } else if (value.is_integer()) {
      dc.options[k] = value.as_integer()->get();
    } else if (value.is_floating_point()) {
      dc.options[k] = value.as_floating_point()->get();
    } else if (value.is_boolean()) {
      dc.options[k] = value.as_boolean()->get();
    } else if (value.is_string()) {
      dc.options[k] = value.as_string()->get();
    } else if (value.is_array()) {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& item : *value.as_array()) {
        if (item.is_string())
          arr.push_back(item.as_string()->get());
        else if (item.is_integer())
          arr.push_back(item.as_integer()->get());
        else if (item.is_floating_point())
          arr.push_back(item.as_floating_point()->get());
        else
          throw Error(fmt::format("{}: arrays may hold strings or numbers only", where(source, item.source())));
      }
      dc.options[k] = arr;
    } else {
      throw Error(fmt::format("{}: '{}.{}' must be a number, boolean, string or array", where(source, value.source()),
                              name, k));
    }
  }
  return dc;
}

// [gate] and [gate.budgets].
GateConfig parse_gate(const toml::node& node, const std::string& source) {
  const auto* table = node.as_table();
  if (!table) throw Error(fmt::format("{}: 'gate' must be a table", where(source, node.source())));
  GateConfig g;
  g.where = where(source, node.source());
  static const std::vector<std::string> known = {"alpha",          "bootstrap_resamples",
                                                 "budgets",        "fail_on_new_findings",
                                                 "gating",         "history_min_runs",
                                                 "history_threshold",
                                                 "informational",  "max_iteration_count_ratio",
                                                 "max_regression", "metrics",
                                                 "min_iterations", "min_workload_overlap",
                                                 "noise_floor",    "seed",
                                                 "skip_metrics",   "top",
                                                 "warmup",         "warmup_tolerance"};
  for (const auto& [key, bound_value] : *table) {
    // A plain reference: lambdas cannot capture structured bindings before clang 16 (fuzz build).
    const auto& value = bound_value;
    std::string k(key.str());
    std::string at = where(source, value.source());
    if (std::find(known.begin(), known.end(), k) == known.end()) {
      std::string list;
      for (const auto& n : known) list += (list.empty() ? "" : ", ") + n;
      throw Error(fmt::format("{}: unknown key 'gate.{}'{} (known: {})", where(source, key.source()), k,
                              did_you_mean(k, known), list));
    }
    auto number = [&](double lo, double hi) {
      std::optional<double> v;
      if (value.is_integer()) v = static_cast<double>(value.as_integer()->get());
      if (value.is_floating_point()) v = value.as_floating_point()->get();
      if (!v || !(*v >= lo && *v <= hi))
        throw Error(fmt::format("{}: 'gate.{}' must be a number from {} to {}", at, k, lo, hi));
      return *v;
    };
    auto integer = [&](int64_t lo, int64_t hi) {
      const auto* n = value.as_integer();
      if (!n || n->get() < lo || n->get() > hi)
        throw Error(fmt::format("{}: 'gate.{}' must be an integer from {} to {}", at, k, lo, hi));
      return n->get();
    };
    if (k == "alpha")
      g.alpha = number(1e-9, 0.5);
    else if (k == "min_iterations")
      g.min_iterations = integer(2, 1'000'000);
    else if (k == "bootstrap_resamples")
      g.bootstrap_resamples = integer(100, 1'000'000);
    else if (k == "seed")
      g.seed = static_cast<uint64_t>(integer(0, INT64_MAX));
    else if (k == "warmup_tolerance")
      g.warmup_tolerance = number(0, 10);
    else if (k == "noise_floor")
      g.noise_floor = number(0, 1);
    else if (k == "min_workload_overlap")
      g.min_workload_overlap = number(0, 1);
    else if (k == "max_iteration_count_ratio")
      g.max_iteration_count_ratio = number(1, 1e9);
    else if (k == "top")
      g.top = integer(0, 1000);
    else if (k == "warmup") {
      if (value.is_string() && value.as_string()->get() == "auto")
        g.warmup = "auto";
      else
        g.warmup = std::to_string(integer(0, 1'000'000));
    } else if (k == "max_regression") {
      if (!value.is_string() && !value.is_integer() && !value.is_floating_point())
        throw Error(fmt::format("{}: 'gate.max_regression' must be a budget such as \"5%\", \"2 ms\" or \"3 pp\"", at));
      std::string text = value.is_string() ? value.as_string()->get() : fmt::format("{}", number(0, 1e18));
      g.max_regression = parse_gate_budget(text, at);
    } else if (k == "budgets") {
      const auto* bt = value.as_table();
      if (!bt) throw Error(fmt::format("{}: 'gate.budgets' must be a table of metric = budget", at));
      // toml++ keeps a table's keys sorted; "the last matching entry wins" must mean the last in
      // the file, so the entries are put back in source order.
      std::vector<std::pair<std::pair<uint32_t, uint32_t>, std::pair<std::string, GateBudget>>> ordered;
      for (const auto& [metric, budget] : *bt) {
        std::string bat = where(source, budget.source());
        std::string text;
        if (budget.is_string())
          text = budget.as_string()->get();
        else if (budget.is_integer())
          text = std::to_string(budget.as_integer()->get());
        else if (budget.is_floating_point())
          text = fmt::format("{}", budget.as_floating_point()->get());
        else
          throw Error(fmt::format("{}: 'gate.budgets.{}' must be a budget such as \"5%\"", bat, metric.str()));
        ordered.push_back({{metric.source().begin.line, metric.source().begin.column},
                           {std::string(metric.str()), parse_gate_budget(text, bat)}});
      }
      std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (auto& entry : ordered) g.budgets.push_back(std::move(entry.second));
    } else if (k == "fail_on_new_findings") {
      if (value.is_string()) {
        std::string sev = value.as_string()->get();
        if (!parse_severity(sev) || sev == "info")
          throw Error(fmt::format(
              "{}: 'gate.fail_on_new_findings' must be a list of ids or a severity (high, medium, low), got '{}'", at,
              sev));
        g.fail_on_new_severity = sev;
      } else {
        g.fail_on_new_findings = string_list(value, "gate.fail_on_new_findings", source);
      }
    } else if (k == "metrics")
      g.metrics = string_list(value, "gate.metrics", source);
    else if (k == "skip_metrics")
      g.skip_metrics = string_list(value, "gate.skip_metrics", source);
    else if (k == "informational")
      g.informational = string_list(value, "gate.informational", source);
    else if (k == "gating")
      g.gating = string_list(value, "gate.gating", source);
    else if (k == "history_threshold")
      g.history_threshold = number(0.5, 100);
    else if (k == "history_min_runs")
      g.history_min_runs = integer(2, 1'000'000);
  }
  return g;
}

std::string toml_basic_string(const std::string& s);

// toml++ writes a string holding a newline as a multi-line literal string, and TOML drops a newline
// right after its opening delimiter ("\nx" read back as "x"; found by fuzz_config): strings with
// control characters are written as one-line basic strings with escapes instead.
std::string toml_quote(const std::string& s) {
  if (std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
    return toml_basic_string(s);
  std::ostringstream os;
  os << toml::value<std::string>(s);
  return os.str();
}

// A key as written in TOML: bare when it can be ("max_step_ms", "attention-tensor-cores"), else
// quoted, so that "breakdown.*" stays one key instead of a syntax error or a dotted path.
std::string toml_key(const std::string& key) {
  bool bare = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
  if (bare) return key;
  // A basic string on one line: TOML forbids multi-line strings in keys.
  return toml_basic_string(key);
}

// A one-line TOML basic string: quotes and backslashes escaped, control characters as \uXXXX.
std::string toml_basic_string(const std::string& key) {
  std::string out = "\"";
  for (unsigned char c : key) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\u{:04X}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// An option value (what read_options stores: numbers, booleans, strings, arrays of them) as TOML.
// JSON's text is not TOML for strings with some escapes, nor for nan and inf (JSON writes null).
std::string toml_value(const nlohmann::json& v) {
  if (v.is_string()) return toml_quote(v.get<std::string>());
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  }
  if (v.is_array()) {
    std::string out;
    for (const auto& item : v) out += (out.empty() ? "" : ", ") + toml_value(item);
    return "[" + out + "]";
  }
  return v.dump();
}

}  // namespace

Config parse_config(const std::string& text, const std::string& source) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    throw Error(fmt::format("{}: {}", where(source, e.source()), e.description()));
  }
  Config config;
  config.source = source;
  reject_unknown_keys(root, {"detectors", "gate", "iterations", "rules", "source", "suppress", "tensor_cores"}, "", source);
  if (const auto* node = root.get("gate")) config.gate = parse_gate(*node, source);
  if (const auto* node = root.get("tensor_cores")) {
    const auto* table = node->as_table();
    if (!table) throw Error(fmt::format("{}: 'tensor_cores' must be a table", where(source, node->source())));
    reject_unknown_keys(*table, {"uses", "not"}, "tensor_cores", source);
    // 'not' patterns go first so a user's exclusion wins over the user's own broader inclusion.
    if (const auto* n = table->get("not"))
      for (auto& s : string_list(*n, "tensor_cores.not", source)) config.tensor_core_patterns.push_back({s, false});
    if (const auto* n = table->get("uses"))
      for (auto& s : string_list(*n, "tensor_cores.uses", source)) config.tensor_core_patterns.push_back({s, true});
  }
  if (const auto* node = root.get("source")) {
    const auto* table = node->as_table();
    if (!table) throw Error(fmt::format("{}: 'source' must be a table", where(source, node->source())));
    reject_unknown_keys(*table, {"keep", "skip"}, "source", source);
    if (const auto* n = table->get("skip")) config.source_skip = string_list(*n, "source.skip", source);
    if (const auto* n = table->get("keep")) config.source_keep = string_list(*n, "source.keep", source);
  }
  if (const auto* node = root.get("iterations")) {
    const auto* table = node->as_table();
    if (!table) throw Error(fmt::format("{}: 'iterations' must be a table", where(source, node->source())));
    reject_unknown_keys(*table, {"key_node"}, "iterations", source);
    if (const auto* n = table->get("key_node")) {
      const auto* s = n->as_string();
      if (!s || s->get().empty())
        throw Error(fmt::format("{}: 'iterations.key_node' must be a non-empty string", where(source, n->source())));
      config.key_node = s->get();
    }
  }
  if (const auto* node = root.get("detectors")) {
    const auto* table = node->as_table();
    if (!table)
      throw Error(
          fmt::format("{}: 'detectors' must be a table of [detectors.<id>] tables", where(source, node->source())));
    for (const auto& [id, sub] : *table) {
      const auto* dt = sub.as_table();
      if (!dt) throw Error(fmt::format("{}: 'detectors.{}' must be a table", where(source, sub.source()), id.str()));
      config.detectors[std::string(id.str())] =
          parse_detector_table(*dt, "detectors." + std::string(id.str()), where(source, id.source()), source);
    }
  }
  if (const auto* node = root.get("rules")) {
    const auto* table = node->as_table();
    if (!table)
      throw Error(fmt::format("{}: 'rules' must be a table ([rules] and [rules.<id>])", where(source, node->source())));
    config.rules.where = where(source, node->source());
    static const std::set<std::string> settings = {"instruction_limit", "max_findings", "memory_limit_mb",
                                                   "paths",             "query_time_limit_ms", "time_limit_ms"};
    namespace fs = std::filesystem;
    fs::path base = fs::path(source).parent_path();
    for (const auto& [key, sub] : *table) {
      std::string k(key.str());
      if (const auto* rt = sub.as_table()) {
        // [rules.paths] would collide with the setting of that name when the configuration is dumped
        // (and reads as a typo for it): a rule id cannot be one of the settings' names.
        if (settings.count(k))
          throw Error(fmt::format("{}: 'rules.{}' is a setting, not a rule: write {} = ... under [rules] (a rule "
                                  "cannot be named after a setting)",
                                  where(source, key.source()), k, k));
        config.rules.rules[k] = parse_detector_table(*rt, "rules." + k, where(source, key.source()), source);
        continue;
      }
      if (!settings.count(k)) {
        std::vector<std::string> known(settings.begin(), settings.end());
        throw Error(
            fmt::format("{}: unknown key 'rules.{}'{} (known: instruction_limit, max_findings, memory_limit_mb, "
                        "paths, query_time_limit_ms, time_limit_ms, or a [rules.<id>] table)",
                        where(source, key.source()), k, did_you_mean(k, known)));
      }
      if (k == "paths") {
        for (auto& p : string_list(sub, "rules.paths", source)) {
          fs::path rp(p);
          config.rules.paths.push_back((rp.is_absolute() || base.empty() ? rp : base / rp).lexically_normal().string());
        }
        continue;
      }
      const auto* n = sub.as_integer();
      if (!n || n->get() <= 0)
        throw Error(fmt::format("{}: 'rules.{}' must be a positive integer", where(source, sub.source()), k));
      if (k == "instruction_limit") config.rules.limits.instruction_limit = n->get();
      if (k == "memory_limit_mb") config.rules.limits.memory_limit_mb = n->get();
      if (k == "query_time_limit_ms") config.rules.limits.query_time_limit_ms = n->get();
      if (k == "time_limit_ms") config.rules.limits.time_limit_ms = n->get();
      if (k == "max_findings") config.rules.limits.max_findings = n->get();
    }
  }
  if (const auto* node = root.get("suppress")) {
    const auto* arr = node->as_array();
    if (!arr)
      throw Error(
          fmt::format("{}: 'suppress' must be an array of tables ([[suppress]])", where(source, node->source())));
    for (const auto& item : *arr) {
      const auto* t = item.as_table();
      if (!t) throw Error(fmt::format("{}: each [[suppress]] entry must be a table", where(source, item.source())));
      reject_unknown_keys(*t, {"id", "pattern", "reason"}, "suppress", source);
      Suppression sup;
      sup.where = where(source, item.source());
      auto text = [&](const char* key) -> std::string {
        const auto* n = t->get(key);
        if (!n) return "";
        if (!n->is_string())
          throw Error(fmt::format("{}: 'suppress.{}' must be a string", where(source, n->source()), key));
        return n->as_string()->get();
      };
      sup.id = text("id");
      sup.pattern = text("pattern");
      sup.reason = text("reason");
      if (sup.id.empty()) throw Error(fmt::format("{}: [[suppress]] needs an 'id'", sup.where));
      config.suppressions.push_back(std::move(sup));
    }
  }
  return config;
}

GateBudget parse_gate_budget(const std::string& text, const std::string& where) {
  auto fail = [&]() {
    return Error(
        fmt::format("{}: budget '{}' not understood: write a percentage (\"5%\"), percentage points of a "
                    "share (\"3 pp\"), a time (\"2 ms\", \"500 us\", \"1.5 s\") or a size (\"64 MiB\")",
                    where.empty() ? std::string("budget") : where, text));
  };
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  size_t start = i;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == start) throw fail();
  double amount = 0;
  try {
    size_t used = 0;
    amount = std::stod(text.substr(start, i - start), &used);
    if (used != i - start) throw fail();
  } catch (const std::logic_error&) {
    throw fail();
  }
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  std::string unit = text.substr(i);
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.back()))) unit.pop_back();
  GateBudget b;
  b.text = text;
  b.where = where;
  static const std::map<std::string, double> times = {
      {"ns", 1}, {"us", 1e3}, {"\xC2\xB5s", 1e3}, {"ms", 1e6}, {"s", 1e9}};
  static const std::map<std::string, double> sizes = {
      {"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}};
  if (unit.empty() || unit == "%") {
    b.kind = GateBudget::Kind::relative;
    b.amount = amount;
  } else if (unit == "pp") {
    b.kind = GateBudget::Kind::share_points;
    b.amount = amount / 100;
  } else if (auto t = times.find(unit); t != times.end()) {
    b.kind = GateBudget::Kind::time_ns;
    b.amount = amount * t->second;
  } else if (auto z = sizes.find(unit); z != sizes.end()) {
    b.kind = GateBudget::Kind::bytes;
    b.amount = amount * z->second;
  } else {
    throw fail();
  }
  return b;
}

Config load_config(const std::optional<std::string>& explicit_path) {
  namespace fs = std::filesystem;
  std::string path;
  if (explicit_path) {
    path = *explicit_path;
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) throw input_error(path, "", "configuration file not found");
  } else if (fs::is_regular_file("proflint.toml")) {
    path = "proflint.toml";
  } else {
    return Config{};
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), path);
}

std::string dump_config(const Config& config) {
  std::string out = fmt::format("# effective configuration, from {}\n\n[iterations]\n", config.source);
  out += config.key_node ? fmt::format("key_node = {}\n", toml_quote(*config.key_node))
                         : "# key_node = \"...\"  (not set)\n";
  std::string uses, nots;
  for (const auto& p : config.tensor_core_patterns) {
    auto& list = p.uses_tensor_cores ? uses : nots;
    list += (list.empty() ? "" : ", ") + toml_quote(p.substring);
  }
  out += fmt::format(
      "\n[tensor_cores]\n# kernel-name substrings checked before the built-in table\nuses = [{}]\nnot = [{}]\n", uses,
      nots);
  {
    std::string skip, keep;
    for (const auto& p : config.source_skip) skip += (skip.empty() ? "" : ", ") + toml_quote(p);
    for (const auto& p : config.source_keep) keep += (keep.empty() ? "" : ", ") + toml_quote(p);
    out += fmt::format(
        "\n[source]\n# top-level Python packages whose frames source attribution looks past, added to / removed "
        "from the built-in list (torch, the standard library, ...)\nskip = [{}]\nkeep = [{}]\n",
        skip, keep);
  }
  for (const auto& [id, dc] : config.detectors) {
    out += fmt::format("\n[detectors.{}]\n", toml_key(id));
    if (dc.enabled) out += fmt::format("enabled = {}\n", *dc.enabled ? "true" : "false");
    for (const auto& [key, value] : dc.options.items()) out += fmt::format("{} = {}\n", toml_key(key), toml_value(value));
  }
  out += "\n[rules]\n";
  std::string paths;
  for (const auto& p : config.rules.paths) paths += (paths.empty() ? "" : ", ") + toml_quote(p);
  out += fmt::format(
      "paths = [{}]\ninstruction_limit = {}\nmemory_limit_mb = {}\nquery_time_limit_ms = {}\ntime_limit_ms = {}\n"
      "max_findings = {}\n",
      paths, config.rules.limits.instruction_limit, config.rules.limits.memory_limit_mb,
      config.rules.limits.query_time_limit_ms, config.rules.limits.time_limit_ms, config.rules.limits.max_findings);
  for (const auto& [id, dc] : config.rules.rules) {
    out += fmt::format("\n[rules.{}]\n", toml_key(id));
    if (dc.enabled) out += fmt::format("enabled = {}\n", *dc.enabled ? "true" : "false");
    for (const auto& [key, value] : dc.options.items()) out += fmt::format("{} = {}\n", toml_key(key), toml_value(value));
  }
  const GateConfig& g = config.gate;
  auto quoted_list = [](const std::vector<std::string>& items) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : ", ") + toml_quote(i);
    return "[" + out + "]";
  };
  out += fmt::format("\n[gate]\nalpha = {}\nmin_iterations = {}\nbootstrap_resamples = {}\nseed = {}\n", g.alpha,
                     g.min_iterations, g.bootstrap_resamples, g.seed);
  out += fmt::format("min_workload_overlap = {}\n", g.min_workload_overlap);
  out += fmt::format("warmup = {}\nwarmup_tolerance = {}\nnoise_floor = {}\nmax_iteration_count_ratio = {}\ntop = {}\n",
                     g.warmup == "auto" ? "\"auto\"" : g.warmup, g.warmup_tolerance, g.noise_floor,
                     g.max_iteration_count_ratio, g.top);
  out += g.max_regression ? fmt::format("max_regression = {}\n", toml_quote(g.max_regression->text))
                          : "# max_regression = \"5%\"  (not set: built-in budget per metric, see docs/compare.md)\n";
  if (g.fail_on_new_severity)
    out += fmt::format("fail_on_new_findings = {}\n", toml_quote(*g.fail_on_new_severity));
  else
    out += fmt::format("fail_on_new_findings = {}\n", quoted_list(g.fail_on_new_findings));
  out += fmt::format("metrics = {}\nskip_metrics = {}\ngating = {}\ninformational = {}\n", quoted_list(g.metrics),
                     quoted_list(g.skip_metrics), quoted_list(g.gating), quoted_list(g.informational));
  out += fmt::format("history_threshold = {}\nhistory_min_runs = {}\n", g.history_threshold, g.history_min_runs);
  if (!g.budgets.empty()) {
    out += "\n[gate.budgets]\n";
    for (const auto& [metric, budget] : g.budgets)
      out += fmt::format("{} = {}\n", toml_key(metric), toml_quote(budget.text));
  }
  for (const auto& sup : config.suppressions)
    out += fmt::format("\n[[suppress]]\nid = {}\npattern = {}\nreason = {}\n", toml_quote(sup.id),
                       toml_quote(sup.pattern), toml_quote(sup.reason));
  return out;
}

}  // namespace proflint
