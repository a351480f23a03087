// engine/cli/cmd_rules.cpp — `proflint rules list | explain ID | check FILE.lua`: built-in
// detectors and Lua rules alike.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/docs.hpp"
#include "engine/cli/commands.hpp"
#include "engine/common/error.hpp"
#include "engine/common/suggest.hpp"
#include "engine/config/config.hpp"
#include "engine/lua/rules.hpp"
#include "engine/report/output.hpp"

namespace proflint {

namespace {

struct LoadedRule {
  lua::RuleFile file;
  lua::RuleInfo info;
};

std::vector<LoadedRule> load_all(const Config& config, const CommonOptions& options) {
  std::vector<LoadedRule> out;
  for (auto& file : lua::collect_rule_files(config, options.rule_dirs)) {
    auto info = lua::load_rule(file, config.rules.limits);
    out.push_back({std::move(file), std::move(info)});
  }
  return out;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out.empty() ? "-" : out;
}

}  // namespace

int cmd_rules_list(const CommonOptions& options) {
  Config config = load_config(options.config_path);
  std::string out = fmt::format("{:<26} {:<9} {}\n", "ID", "STATUS", "TITLE / SOURCE, NEEDS");
  std::vector<std::string> ids;
  for (const auto& info : detector_registry()) {
    auto detector = info.make(OptionValues(info.options, nlohmann::json::object()));
    auto it = config.detectors.find(std::string(info.id));
    bool enabled = it == config.detectors.end() || it->second.enabled != false;
    auto needs = detector->needs();
    out += fmt::format("{:<26} {:<9} {}\n{:<37}source: builtin; needs: {}\n", info.id, enabled ? "enabled" : "disabled",
                       detector->title(), "", join(needs));
    ids.emplace_back(info.id);
  }
  for (const auto& r : load_all(config, options)) {
    std::string status = "enabled", title = r.info.title, id = r.info.id.empty() ? "?" : r.info.id;
    if (!r.info.ok()) {
      status = "error";
      title = r.info.problems.front();
    } else if (std::find(ids.begin(), ids.end(), r.info.id) != ids.end()) {
      status = "error";
      title = "id '" + r.info.id + "' is already used by another detector or rule";
    } else {
      auto it = config.rules.rules.find(r.info.id);
      if (it != config.rules.rules.end() && it->second.enabled == false) status = "disabled";
      ids.push_back(r.info.id);
    }
    out += fmt::format("{:<26} {:<9} {}\n{:<37}source: {}; needs: {}\n", id, status, title, "", r.file.path,
                       join(r.info.needs));
  }
  write_output(options.output, out);
  return 0;
}

int cmd_rules_explain(const CommonOptions& options, const std::string& id) {
  std::vector<std::string> ids;
  for (const auto& info : detector_registry()) ids.emplace_back(info.id);
  if (std::find(ids.begin(), ids.end(), id) != ids.end()) {
    auto doc = detector_docs().find(id);
    if (doc == detector_docs().end()) throw Error("internal: no documentation page for '" + id + "'");
    std::string text = doc->second;
    for (const auto& info : detector_registry()) {
      if (info.id != id) continue;
      text += "\n## Defaults in this build\n";
      for (const auto& opt : info.options)
        text += fmt::format("- `{}` = {} — {}\n", opt.name, opt.default_value.dump(), opt.doc);
    }
    write_output(options.output, text);
    return 0;
  }
  Config config = load_config(options.config_path);
  for (const auto& r : load_all(config, options)) {
    if (!r.info.ok()) continue;
    ids.push_back(r.info.id);
    if (r.info.id != id) continue;
    std::string text = fmt::format("# {} (Lua rule)\n\n{}\n\n", r.info.id, r.info.title);
    if (!r.info.doc.empty()) text += r.info.doc + "\n\n";
    text += fmt::format("- file: `{}`\n- needs: {}\n- severity: {}\n", r.file.path, join(r.info.needs),
                        r.info.severity ? std::string(severity_name(*r.info.severity)) : "from the estimated saving");
    text += "\n## Options (defaults; override in [rules." + r.info.id + "] of proflint.toml)\n";
    if (r.info.options.empty()) text += "none\n";
    for (const auto& opt : r.info.options)
      text +=
          fmt::format("- `{}` = {}{}\n", opt.name, opt.default_value.dump(), opt.doc.empty() ? "" : " — " + opt.doc);
    write_output(options.output, text);
    return 0;
  }
  throw Error("unknown detector or rule '" + id + "'" + did_you_mean(id, ids));
}

int cmd_rules_check(const CommonOptions& options, const std::vector<std::string>& files) {
  Config config = load_config(options.config_path);
  bool all_ok = true;
  std::string out;
  for (const auto& path : files) {
    auto info = lua::load_rule(lua::read_rule_file(path), config.rules.limits);
    std::vector<std::string> ids;
    for (const auto& d : detector_registry()) ids.emplace_back(d.id);
    if (info.ok() && std::find(ids.begin(), ids.end(), info.id) != ids.end())
      info.problems.push_back(path + ":1: id '" + info.id + "' is the id of a built-in detector; choose another");
    if (info.ok()) {
      out += fmt::format("{}: ok: rule {} ({}), needs {}, {} option(s)\n", path, info.id, info.title, join(info.needs),
                         info.options.size());
    } else {
      all_ok = false;
      for (const auto& p : info.problems) std::cerr << p << "\n";
    }
  }
  write_output(options.output, out);
  return all_ok ? 0 : 2;
}

}  // namespace proflint
