// engine/config/config.cpp — see config.hpp.
#include "engine/config/config.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include "engine/common/error.hpp"

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

std::string toml_quote(const std::string& s) {
  std::ostringstream os;
  os << toml::value<std::string>(s);
  return os.str();
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
  reject_unknown_keys(root, {"tensor_cores", "iterations"}, "", source);
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
  if (const auto* node = root.get("iterations")) {
    const auto* table = node->as_table();
    if (!table) throw Error(fmt::format("{}: 'iterations' must be a table", where(source, node->source())));
    reject_unknown_keys(*table, {"key_node"}, "iterations", source);
    if (const auto* n = table->get("key_node")) {
      const auto* s = n->as_string();
      if (!s || s->get().empty()) throw Error(fmt::format("{}: 'iterations.key_node' must be a non-empty string", where(source, n->source())));
      config.key_node = s->get();
    }
  }
  return config;
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
  out += config.key_node ? fmt::format("key_node = {}\n", toml_quote(*config.key_node)) : "# key_node = \"...\"  (not set)\n";
  std::string uses, nots;
  for (const auto& p : config.tensor_core_patterns) {
    auto& list = p.uses_tensor_cores ? uses : nots;
    list += (list.empty() ? "" : ", ") + toml_quote(p.substring);
  }
  out += fmt::format("\n[tensor_cores]\n# kernel-name substrings checked before the built-in table\nuses = [{}]\nnot = [{}]\n", uses, nots);
  return out;
}

}  // namespace proflint
