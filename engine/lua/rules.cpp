// engine/lua/rules.cpp — see rules.hpp.
#include "engine/lua/rules.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "engine/common/error.hpp"
#include "engine/common/suggest.hpp"
#include "engine/common/utf8.hpp"
#include "engine/lua/api.hpp"
#include "engine/lua/sandbox.hpp"

namespace proflint::lua {

// rules/*.lua, embedded by CMakeLists.txt (generated/shipped_rules.cpp): file name -> text.
const std::vector<std::pair<std::string, std::string>>& embedded_rules();

namespace fs = std::filesystem;

namespace {

// 1-based line of the first `field =` in the source, else of the last `return`, else 1: rule
// files are tables written by hand, so this points at the line a message is about. (Plain
// scanning, not std::regex: user text may have very long lines.)
int line_of(const std::string& text, const std::string& field) {
  auto starts_word = [](std::string_view line, std::string_view word) {
    if (line.substr(0, word.size()) != word) return false;
    return line.size() == word.size() ||
           !(std::isalnum(static_cast<unsigned char>(line[word.size()])) || line[word.size()] == '_');
  };
  int n = 0, return_line = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    ++n;
    size_t i = line.find_first_not_of(" \t\r");
    if (i != std::string_view::npos) {
      line.remove_prefix(i);
      if (!field.empty() && starts_word(line, field)) {
        std::string_view rest = line.substr(field.size());
        size_t j = rest.find_first_not_of(" \t");
        if (j != std::string_view::npos && rest[j] == '=' && (j + 1 >= rest.size() || rest[j + 1] != '=')) return n;
      }
      if (starts_word(line, "return")) return_line = n;
    }
    pos = end + 1;
  }
  return return_line > 0 ? return_line : 1;
}

bool kebab(const std::string& id) {
  if (id.empty() || id.front() == '-' || id.back() == '-') return false;
  for (size_t i = 0; i < id.size(); ++i) {
    char c = id[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (c == '-' && id[i - 1] != '-');
    if (!ok) return false;
  }
  return true;
}

// Reads a plain value (number, bool, string, or array of numbers/strings) as JSON.
bool option_value(lua_State* L, int idx, nlohmann::json& out) {
  switch (lua_type(L, idx)) {
    case LUA_TBOOLEAN:
      out = static_cast<bool>(lua_toboolean(L, idx));
      return true;
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx))
        out = static_cast<int64_t>(lua_tointeger(L, idx));
      else
        out = lua_tonumber(L, idx);
      return true;
    case LUA_TSTRING:
      out = sanitize_utf8(lua_tostring(L, idx));
      return true;
    case LUA_TTABLE: {
      idx = lua_absindex(L, idx);
      out = nlohmann::json::array();
      lua_Unsigned n = lua_rawlen(L, idx);
      for (lua_Unsigned i = 1; i <= n; ++i) {
        lua_rawgeti(L, idx, static_cast<lua_Integer>(i));
        int t = lua_type(L, -1);
        if (t == LUA_TNUMBER)
          out.push_back(lua_isinteger(L, -1) ? nlohmann::json(lua_tointeger(L, -1))
                                             : nlohmann::json(lua_tonumber(L, -1)));
        else if (t == LUA_TSTRING)
          out.push_back(sanitize_utf8(lua_tostring(L, -1)));
        lua_pop(L, 1);
        if (t != LUA_TNUMBER && t != LUA_TSTRING) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

// Reads the rule table on top of the stack into `info`, collecting every problem.
void read_rule_table(lua_State* L, const std::string& text, RuleInfo& info) {
  int t = lua_gettop(L);
  auto problem = [&](const std::string& field, const std::string& msg) {
    info.problems.push_back(info.path + ":" + std::to_string(line_of(text, field)) + ": " + msg);
  };
  static const std::vector<std::string> fields = {"description", "doc",     "evaluate", "id",
                                                  "needs",       "options", "severity", "title"};
  std::vector<std::string> unknown;  // sorted: Lua's table order is not deterministic
  bool non_string_key = false;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    if (lua_type(L, -2) != LUA_TSTRING) {
      non_string_key = true;
    } else {
      std::string k = lua_tostring(L, -2);
      if (std::find(fields.begin(), fields.end(), k) == fields.end()) unknown.push_back(k);
    }
    lua_pop(L, 1);
  }
  if (non_string_key)
    problem("", "the rule table has a non-string key; fields are id, title, severity, needs, options, doc, evaluate");
  std::sort(unknown.begin(), unknown.end());
  for (const auto& k : unknown)
    problem(k, "unknown field '" + k + "'" + did_you_mean(k, fields) +
                   " (fields: id, title, severity, needs, options, doc, evaluate)");
  auto get = [&](const char* name) {
    lua_pushstring(L, name);
    return lua_rawget(L, t);
  };
  auto string_field = [&](const char* name, std::string& out, bool required) {
    int type = get(name);
    if (type == LUA_TSTRING)
      out = lua_tostring(L, -1);
    else if (type == LUA_TNIL) {
      if (required) problem("", std::string("missing field '") + name + "' (a string)");
    } else {
      problem(name, std::string("'") + name + "' must be a string, not a " + lua_typename(L, type));
    }
    lua_pop(L, 1);
  };
  string_field("id", info.id, true);
  if (!info.id.empty() && !kebab(info.id))
    problem("id", "id '" + info.id + "' must be kebab-case (lower-case words joined by '-', e.g. 'my-rule')");
  string_field("title", info.title, true);
  std::string doc, description;
  string_field("doc", doc, false);
  string_field("description", description, false);
  info.doc = !doc.empty() ? doc : description;
  std::string severity;
  string_field("severity", severity, false);
  if (!severity.empty()) {
    info.severity = parse_severity(severity);
    if (!info.severity) problem("severity", "unknown severity '" + severity + "' (high, medium, low or info)");
  }
  int type = get("needs");
  if (type == LUA_TTABLE) {
    std::vector<std::string> known;
    for (auto n : known_needs()) known.emplace_back(n);
    lua_Unsigned n = lua_rawlen(L, -1);
    for (lua_Unsigned i = 1; i <= n; ++i) {
      lua_rawgeti(L, -1, static_cast<lua_Integer>(i));
      if (lua_type(L, -1) != LUA_TSTRING) {
        problem("needs", "'needs' must be a list of strings");
      } else {
        std::string need = lua_tostring(L, -1);
        if (std::find(known.begin(), known.end(), need) == known.end())
          problem("needs", "unknown need '" + need + "'" + did_you_mean(need, known));
        else
          info.needs.push_back(need);
      }
      lua_pop(L, 1);
    }
  } else if (type != LUA_TNIL) {
    problem("needs", std::string("'needs' must be a list of strings, not a ") + lua_typename(L, type));
  }
  lua_pop(L, 1);
  type = get("options");
  if (type == LUA_TTABLE) {
    int o = lua_gettop(L);
    std::vector<OptionSpec> specs;
    lua_pushnil(L);
    while (lua_next(L, o)) {
      if (lua_type(L, -2) != LUA_TSTRING) {
        problem("options", "option names must be strings");
        lua_pop(L, 1);
        continue;
      }
      OptionSpec spec;
      spec.name = lua_tostring(L, -2);
      bool ok;
      bool spec_table = false;
      if (lua_type(L, -1) == LUA_TTABLE) {
        lua_pushliteral(L, "default");
        spec_table = lua_rawget(L, -2) != LUA_TNIL;
        lua_pop(L, 1);
      }
      if (spec_table) {
        // { default = value, doc = "..." }
        lua_pushliteral(L, "default");
        lua_rawget(L, -2);
        ok = option_value(L, -1, spec.default_value);
        lua_pop(L, 1);
        lua_pushliteral(L, "doc");
        if (lua_rawget(L, -2) == LUA_TSTRING) spec.doc = lua_tostring(L, -1);
        lua_pop(L, 1);
      } else {
        ok = option_value(L, -1, spec.default_value);
      }
      if (!ok)
        problem(spec.name, "option '" + spec.name + "' must default to a number, boolean, string or list of them");
      else
        specs.push_back(std::move(spec));
      lua_pop(L, 1);
    }
    std::sort(specs.begin(), specs.end(), [](const OptionSpec& a, const OptionSpec& b) { return a.name < b.name; });
    info.options = std::move(specs);
  } else if (type != LUA_TNIL) {
    problem("options", std::string("'options' must be a table of name = default, not a ") + lua_typename(L, type));
  }
  lua_pop(L, 1);
  type = get("evaluate");
  if (type == LUA_TNIL)
    problem("", "missing field 'evaluate' (a function(ctx) ... end)");
  else if (type != LUA_TFUNCTION)
    problem("evaluate", std::string("'evaluate' must be a function, not a ") + lua_typename(L, type));
  lua_pop(L, 1);
}

// Loads the file into `box` and leaves the returned value on the stack; false with `error` set otherwise.
bool run_chunk(Sandbox& box, const RuleFile& file, std::string& error) {
  open_proflint_library(box.L());
  if (!box.load(file.text, error)) return false;
  return box.call(0, 1, error);
}

// Protected entry points: everything that touches Lua values runs inside lua_pcall, so an
// allocation failure or a metamethod can only end in a Lua error, never in a panic.
struct ReadArgs {
  const std::string* text;
  RuleInfo* info;
};
int read_entry(lua_State* L) {
  auto* a = static_cast<ReadArgs*>(lua_touserdata(L, 1));
  lua_pushvalue(L, 2);
  bool failed = false;
  try {
    read_rule_table(L, *a->text, *a->info);
  } catch (const std::exception&) {  // never let a C++ exception cross Lua's C frames
    failed = true;
  }
  if (failed) return luaL_error(L, "out of memory while reading the rule table");
  return 0;
}

struct EvalArgs {
  RunContext* run;
  const nlohmann::json* options;
};
int evaluate_entry(lua_State* L) {
  auto* a = static_cast<EvalArgs*>(lua_touserdata(L, 1));
  lua_pushliteral(L, "evaluate");
  lua_rawget(L, 2);
  bool failed = false;
  try {
    push_ctx(L, *a->run, *a->options);
  } catch (const std::exception&) {  // never let a C++ exception cross Lua's C frames
    failed = true;
  }
  if (failed) return luaL_error(L, "out of memory while building ctx");
  lua_call(L, 1, 0);
  return 0;
}

// The page cache may grow while a rule reads and counts as its SQLite memory: in-memory stores
// (the "memdb" VFS) keep a small cache, a store read from a file may cache up to 256 MiB
// (engine/store/store.cpp), which a rule's cap must leave room for.
int64_t page_cache_headroom(sqlite3* db) {
  char* vfs = nullptr;
  bool memdb = sqlite3_file_control(db, "main", SQLITE_FCNTL_VFSNAME, &vfs) == SQLITE_OK && vfs &&
               std::string_view(vfs).find("memdb") != std::string_view::npos;
  sqlite3_free(vfs);
  return memdb ? 0 : int64_t{256} << 20;
}

}  // namespace

RuleFile read_rule_file(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw input_error(path, "", "rule file not found");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw input_error(path, "", "cannot read the rule file");
  std::stringstream ss;
  ss << in.rdbuf();
  return {path, ss.str(), false};
}

std::vector<RuleFile> rule_files_in(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw input_error(dir, "", "rules folder not found (give a folder of .lua files)");
  std::vector<std::string> paths;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".lua") paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  std::vector<RuleFile> out;
  for (const auto& p : paths) out.push_back(read_rule_file(p));
  return out;
}

std::vector<RuleFile> shipped_rules() {
  if (const char* dir = std::getenv("PROFLINT_RULES_DIR"); dir && *dir) {
    auto files = rule_files_in(dir);
    for (auto& f : files) f.shipped = true;
    return files;
  }
  std::vector<RuleFile> out;
  for (const auto& [name, text] : embedded_rules()) out.push_back({"rules/" + name, text, true});
  return out;
}

std::vector<RuleFile> collect_rule_files(const Config& config, const std::vector<std::string>& cli_dirs) {
  std::vector<RuleFile> out = shipped_rules();
  for (const auto& dir : config.rules.paths) {
    std::vector<RuleFile> files;
    try {
      files = rule_files_in(dir);
    } catch (const Error& e) {
      throw Error(config.rules.where + ": [rules] paths: " + e.what());
    }
    out.insert(out.end(), files.begin(), files.end());
  }
  for (const auto& dir : cli_dirs) {
    auto files = rule_files_in(dir);
    out.insert(out.end(), files.begin(), files.end());
  }
  return out;
}

RuleInfo load_rule(const RuleFile& file, const RuleLimits& limits) {
  RuleInfo info;
  info.path = file.path;
  try {
    Sandbox box(file.path, limits);
    std::string error;
    if (!run_chunk(box, file, error)) {
      info.problems.push_back(error);
      return info;
    }
    lua_State* L = box.L();
    if (lua_type(L, -1) != LUA_TTABLE) {
      info.problems.push_back(file.path + ":" + std::to_string(line_of(file.text, "")) +
                              ": the file must return a rule table { id, title, needs, options, evaluate }, not a " +
                              luaL_typename(L, -1));
      return info;
    }
    ReadArgs args{&file.text, &info};
    lua_pushcfunction(L, read_entry);
    lua_insert(L, -2);
    lua_pushlightuserdata(L, &args);
    lua_insert(L, -2);
    if (!box.call(2, 0, error)) info.problems.push_back(error);
    repair_utf8(info.title);
    repair_utf8(info.doc);
  } catch (const std::exception& e) {
    info.problems.push_back(file.path + ": " + e.what());
  }
  return info;
}

Finding rule_error(const std::string& path, const std::string& message, std::optional<int64_t> trace_id) {
  Finding f;
  f.id = "rule-error";
  f.title = "A Lua rule failed";
  f.diagnostic = true;
  f.problem = sanitize_utf8(message);
  f.recommendation = sanitize_utf8("Fix the rule (check it with `proflint rules check " + path +
                                   "`); the other rules and detectors ran normally.");
  f.source = sanitize_utf8(path);
  f.scope.trace_id = trace_id;
  return f;
}

void run_rule(const RuleInfo& info, const RuleFile& file, const nlohmann::json& options, const Facts& facts,
              int64_t trace_id, const RuleLimits& limits, FindingSink& sink) {
  VectorSink found;
  RunContext run;
  run.facts = &facts;
  run.trace_id = trace_id;
  run.rule_id = info.id;
  run.title = info.title;
  run.path = info.path;
  run.severity = info.severity;
  run.query_time_limit = std::chrono::milliseconds(limits.query_time_limit_ms);
  run.sink = &found;
  run.max_findings = limits.max_findings;
  std::string error;
  sqlite3* db = facts.db().getHandle();
  // No single SQL value a rule builds may exceed a quarter of its memory cap (SQLite's own default
  // is 1 GB, allocated outside the Lua heap, and a value is copied into Lua when read); restored
  // afterwards for the detectors on this connection.
  int old_length = sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1);
  int64_t cap = std::clamp<int64_t>((limits.memory_limit_mb << 20) / 4, 1 << 20, old_length);
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, static_cast<int>(cap));
  auto restore = [&] {
    sqlite3_progress_handler(db, 0, nullptr, nullptr);
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, old_length);
  };
  try {
    sqlite3_progress_handler(db, 1000, query_progress, &run);
    {
      SqliteMemoryScope sqlite_memory((limits.memory_limit_mb << 20) + page_cache_headroom(db));
      run.sqlite_memory = &sqlite_memory;
      Sandbox box(file.path, limits);
      run.budget = &box.budget();
      if (run_chunk(box, file, error)) {
        lua_State* L = box.L();
        if (lua_type(L, -1) != LUA_TTABLE) {
          error = file.path + ": the file no longer returns a rule table";
        } else {
          EvalArgs args{&run, &options};
          lua_pushcfunction(L, evaluate_entry);
          lua_insert(L, -2);
          lua_pushlightuserdata(L, &args);
          lua_insert(L, -2);
          box.call(2, 0, error);
        }
      }
      run.budget = nullptr;
      run.sqlite_memory = nullptr;
    }  // lua_close: open statements are finalized here (rules cannot set __gc)
    restore();
  } catch (const std::exception& e) {
    run.budget = nullptr;
    run.sqlite_memory = nullptr;
    restore();
    error = file.path + ": " + e.what();
  }
  if (!error.empty()) {
    sink.report(rule_error(info.path, error, trace_id));
    return;
  }
  if (run.dropped > 0)
    sink.report(rule_error(info.path,
                           info.path + ": reported " + std::to_string(run.reported + run.dropped) +
                               " findings on one trace; kept the first " + std::to_string(run.reported) +
                               " (raise [rules] max_findings)",
                           trace_id));
  for (auto& f : found.findings) sink.report(std::move(f));
  for (auto& c : found.checks) sink.below_threshold(std::move(c));
}

}  // namespace proflint::lua
