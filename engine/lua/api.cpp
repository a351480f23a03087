// engine/lua/api.cpp — see api.hpp. Every function here is called from Lua: it raises Lua errors
// only once its C++ locals are gone (the error buffers below are plain char arrays), because
// Lua's longjmp skips destructors.
#include "engine/lua/api.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <string_view>

#include "engine/analysis/host_activity.hpp"
#include "engine/analysis/source_sites.hpp"
#include "engine/common/format.hpp"
#include "engine/common/intervals.hpp"
#include "engine/common/saturate.hpp"
#include "engine/common/suggest.hpp"
#include "engine/common/utf8.hpp"
#include "engine/derive/categories.hpp"
#include "engine/derive/source.hpp"
#include "engine/derive/tensor_cores.hpp"

namespace proflint::lua {

namespace {

constexpr int kMaxDepth = 32;
constexpr size_t kErr = 512;
const char* const kStmtMeta = "proflint.statement";

// ---------------------------------------------------------------- Lua value -> JSON
bool to_json(lua_State* L, int idx, int depth, nlohmann::ordered_json& out, char* err) {
  idx = lua_absindex(L, idx);
  switch (lua_type(L, idx)) {
    case LUA_TNIL:
      out = nullptr;
      return true;
    case LUA_TBOOLEAN:
      out = static_cast<bool>(lua_toboolean(L, idx));
      return true;
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx))
        out = static_cast<int64_t>(lua_tointeger(L, idx));
      else if (std::isfinite(lua_tonumber(L, idx)))
        out = lua_tonumber(L, idx);
      else
        out = nullptr;
      return true;
    case LUA_TSTRING: {
      size_t n = 0;
      const char* s = lua_tolstring(L, idx, &n);
      out = std::string(s, n);
      return true;
    }
    case LUA_TTABLE:
      break;
    default:
      std::snprintf(err, kErr, "cannot put a %s value into a finding", luaL_typename(L, idx));
      return false;
  }
  if (depth > kMaxDepth || !lua_checkstack(L, 4)) {
    std::snprintf(err, kErr, "tables nested deeper than %d levels (a cycle?)", kMaxDepth);
    return false;
  }
  lua_Unsigned n = lua_rawlen(L, idx);
  size_t count = 0;
  bool array = true;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    ++count;
    if (!lua_isinteger(L, -2)) array = false;
    lua_pop(L, 1);
  }
  if (array && count == n) {  // an empty table is an empty list (evidence lists are often empty)
    out = nlohmann::ordered_json::array();
    for (lua_Unsigned i = 1; i <= n; ++i) {
      lua_rawgeti(L, idx, static_cast<lua_Integer>(i));
      nlohmann::ordered_json v;
      bool ok = to_json(L, -1, depth + 1, v, err);
      lua_pop(L, 1);
      if (!ok) return false;
      out.push_back(std::move(v));
    }
    return true;
  }
  std::map<std::string, nlohmann::ordered_json> sorted;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    std::string key;
    if (lua_type(L, -2) == LUA_TSTRING) {
      size_t kn = 0;
      const char* k = lua_tolstring(L, -2, &kn);
      key.assign(k, kn);
    } else if (lua_isinteger(L, -2)) {
      key = std::to_string(lua_tointeger(L, -2));
    } else {
      std::snprintf(err, kErr, "table keys must be strings or integers, not %s", luaL_typename(L, -2));
      lua_pop(L, 2);
      return false;
    }
    nlohmann::ordered_json v;
    if (!to_json(L, -1, depth + 1, v, err)) {
      lua_pop(L, 2);
      return false;
    }
    sorted[key] = std::move(v);
    lua_pop(L, 1);
  }
  out = nlohmann::ordered_json::object();
  for (auto& [k, v] : sorted) out[k] = std::move(v);
  return true;
}

// ---------------------------------------------------------------- proflint.* helpers
bool read_intervals(lua_State* L, int idx, std::vector<Interval>& out, char* err) {
  if (lua_type(L, idx) != LUA_TTABLE) {
    std::snprintf(err, kErr, "argument #%d: expected a list of {start, end} pairs, got %s", idx, luaL_typename(L, idx));
    return false;
  }
  lua_Unsigned n = lua_rawlen(L, idx);
  for (lua_Unsigned i = 1; i <= n; ++i) {
    lua_rawgeti(L, idx, static_cast<lua_Integer>(i));
    bool ok = lua_type(L, -1) == LUA_TTABLE;
    int64_t v[2] = {0, 0};
    for (int j = 0; ok && j < 2; ++j) {
      lua_rawgeti(L, -1, j + 1);
      int isnum = 0;
      lua_Number x = lua_tonumberx(L, -1, &isnum);
      ok = isnum && std::isfinite(x);
      v[j] = static_cast<int64_t>(x);
      if (lua_isinteger(L, -1)) v[j] = lua_tointeger(L, -1);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    if (!ok) {
      std::snprintf(err, kErr, "argument #%d: item %llu is not a {start, end} pair of numbers", idx,
                    static_cast<unsigned long long>(i));
      return false;
    }
    out.push_back({v[0], v[1]});
  }
  return true;
}

void push_intervals(lua_State* L, const std::vector<Interval>& list) {
  lua_createtable(L, static_cast<int>(list.size()), 0);
  for (size_t i = 0; i < list.size(); ++i) {
    lua_createtable(L, 2, 0);
    lua_pushinteger(L, list[i].start);
    lua_rawseti(L, -2, 1);
    lua_pushinteger(L, list[i].end);
    lua_rawseti(L, -2, 2);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
}

int pf_union(lua_State* L) {
  char err[kErr] = {0};
  bool ok;
  std::vector<Interval> out;
  {
    std::vector<Interval> in;
    try {
      ok = read_intervals(L, 1, in, err);
      if (ok) out = union_intervals(std::move(in));
    } catch (const std::exception& e) {
      ok = false;
      std::snprintf(err, kErr, "%s", e.what());
    }
  }
  if (!ok) return luaL_error(L, "proflint.union: %s", err);
  push_intervals(L, out);
  return 1;
}

int pf_intersect(lua_State* L) {
  char err[kErr] = {0};
  bool ok;
  std::vector<Interval> out;
  {
    std::vector<Interval> a, b;
    try {
      ok = read_intervals(L, 1, a, err) && read_intervals(L, 2, b, err);
      if (ok) out = intersect_intervals(union_intervals(std::move(a)), union_intervals(std::move(b)));
    } catch (const std::exception& e) {
      ok = false;
      std::snprintf(err, kErr, "%s", e.what());
    }
  }
  if (!ok) return luaL_error(L, "proflint.intersect: %s", err);
  push_intervals(L, out);
  return 1;
}

int pf_total(lua_State* L) {
  char err[kErr] = {0};
  int64_t total = 0;
  bool ok;
  {
    std::vector<Interval> in;
    try {
      ok = read_intervals(L, 1, in, err);
      if (ok) total = total_length(union_intervals(std::move(in)));
    } catch (const std::exception& e) {
      ok = false;
      std::snprintf(err, kErr, "%s", e.what());
    }
  }
  if (!ok) return luaL_error(L, "proflint.total: %s", err);
  lua_pushinteger(L, total);
  return 1;
}

int pf_format_ns(lua_State* L) {
  auto v = static_cast<int64_t>(luaL_checknumber(L, 1));
  char buf[64] = "?";
  try {
    std::snprintf(buf, sizeof buf, "%s", format_ns(v).c_str());
  } catch (const std::exception&) {  // never let a C++ exception cross Lua's C frames
  }
  lua_pushstring(L, buf);
  return 1;
}
int pf_format_bytes(lua_State* L) {
  auto v = static_cast<int64_t>(luaL_checknumber(L, 1));
  char buf[64] = "?";
  try {
    std::snprintf(buf, sizeof buf, "%s", format_bytes(v).c_str());
  } catch (const std::exception&) {  // never let a C++ exception cross Lua's C frames
  }
  lua_pushstring(L, buf);
  return 1;
}
int pf_format_percent(lua_State* L) {
  double v = luaL_checknumber(L, 1);
  char buf[64] = "?";
  try {
    std::snprintf(buf, sizeof buf, "%s", format_percent(v).c_str());
  } catch (const std::exception&) {  // never let a C++ exception cross Lua's C frames
  }
  lua_pushstring(L, buf);
  return 1;
}
int pf_uses_tensor_cores(lua_State* L) {
  size_t n = 0;
  const char* name = luaL_checklstring(L, 1, &n);
  char why[kErr] = {0};
  bool uses = false, failed = false;
  try {
    auto verdict = classify_tensor_core(std::string_view(name, n));
    uses = verdict.uses_tensor_cores;
    std::snprintf(why, sizeof why, "%s", verdict.why.c_str());
  } catch (const std::exception& e) {  // e.g. std::bad_alloc copying a huge name (the matcher is linear)
    failed = true;
    std::snprintf(why, sizeof why, "%s", e.what());
  }
  if (failed) return luaL_error(L, "proflint.uses_tensor_cores: %s", why);
  lua_pushboolean(L, uses);
  lua_pushstring(L, why);
  return 2;
}
int pf_category(lua_State* L) {
  size_t n = 0;
  const char* name = luaL_checklstring(L, 1, &n);
  std::string_view c = "other";
  try {
    c = kernel_category(std::string_view(name, n));
  } catch (const std::exception&) {  // never let a C++ exception cross Lua's C frames
  }
  lua_pushlstring(L, c.data(), c.size());
  return 1;
}

// proflint.triton_kind(name): what an Inductor Triton kernel does, from its name prefix; nil for
// other kernels (the classifier behind kernel_compiled.triton_kind).
int pf_triton_kind(lua_State* L) {
  size_t n = 0;
  const char* name = luaL_checklstring(L, 1, &n);
  std::string_view kind = triton_kernel_kind(std::string_view(name, n));
  if (kind.empty()) lua_pushnil(L);
  else lua_pushlstring(L, kind.data(), kind.size());
  return 1;
}

// Torch dtype name ("float32", "int64", …) for a type name as profilers record it ("float",
// "long int", "c10::Half"); other names (argument kinds such as "Scalar" or "TensorList") come back
// lower-cased, an empty name (no tensor) as "".
std::string normalized_dtype(std::string_view raw) {
  static const std::pair<std::string_view, std::string_view> table[] = {
      {"float", "float32"},          {"float32", "float32"},
      {"double", "float64"},         {"float64", "float64"},
      {"c10::half", "float16"},      {"half", "float16"},
      {"float16", "float16"},        {"c10::bfloat16", "bfloat16"},
      {"bfloat16", "bfloat16"},      {"long int", "int64"},
      {"long", "int64"},             {"long long", "int64"},
      {"int64", "int64"},            {"int64_t", "int64"},
      {"int", "int32"},              {"int32", "int32"},
      {"short int", "int16"},        {"short", "int16"},
      {"int16", "int16"},            {"signed char", "int8"},
      {"int8", "int8"},              {"unsigned char", "uint8"},
      {"uint8", "uint8"},            {"bool", "bool"},
      {"c10::complex<float>", "complex64"}, {"c10::complex<double>", "complex128"},
      {"c10::complex<c10::half>", "complex32"}};
  std::string lower(raw);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  while (!lower.empty() && lower.back() == ' ') lower.pop_back();
  for (const auto& [from, to] : table)
    if (lower == from) return std::string(to);
  if (lower.rfind("c10::", 0) == 0) return lower.substr(5);  // c10::Float8_e4m3fn -> float8_e4m3fn, c10::qint8
  return lower;
}

// Writes the normalized dtype of `raw` into buf (plain data, so callers can raise afterwards).
void dtype_into(std::string_view raw, char* buf, size_t size) {
  buf[0] = '\0';
  try {
    std::snprintf(buf, size, "%s", normalized_dtype(raw.substr(0, 100)).c_str());
  } catch (const std::exception&) {  // never let a C++ exception cross Lua's C frames
  }
}

// A small JSON reader that builds Lua values directly (no C++ object lives while Lua may raise):
// arrays become lists, numbers integers (or floats), strings strings (dtype-normalized when
// `dtypes`), true/false booleans and null an empty string. Profile strings may hold anything:
// nesting is limited and anything malformed gives false with the stack as it was.
struct JsonCursor {
  const char* p;
  const char* end;
};

void skip_space(JsonCursor& c) {
  while (c.p < c.end && std::isspace(static_cast<unsigned char>(*c.p))) ++c.p;
}

bool push_json_text(lua_State* L, JsonCursor& c, int depth, bool dtypes) {
  skip_space(c);
  if (c.p >= c.end || depth > 8 || !lua_checkstack(L, 4)) return false;
  char first = *c.p;
  if (first == '[') {
    ++c.p;
    lua_newtable(L);
    lua_Integer n = 0;
    skip_space(c);
    if (c.p < c.end && *c.p == ']') {
      ++c.p;
      return true;
    }
    while (true) {
      if (!push_json_text(L, c, depth + 1, dtypes)) {
        lua_pop(L, 1);
        return false;
      }
      lua_rawseti(L, -2, ++n);
      skip_space(c);
      if (c.p < c.end && *c.p == ',') {
        ++c.p;
        continue;
      }
      if (c.p < c.end && *c.p == ']') {
        ++c.p;
        return true;
      }
      lua_pop(L, 1);
      return false;
    }
  }
  if (first == '"') {
    const char* begin = ++c.p;
    while (c.p < c.end && *c.p != '"') c.p += *c.p == '\\' ? 2 : 1;
    if (c.p >= c.end) return false;
    std::string_view text(begin, static_cast<size_t>(c.p - begin));
    ++c.p;
    if (dtypes) {
      char buf[128];
      dtype_into(text, buf, sizeof buf);
      lua_pushstring(L, buf);
    } else {
      lua_pushlstring(L, text.data(), text.size());
    }
    return true;
  }
  if (first == '-' || std::isdigit(static_cast<unsigned char>(first))) {
    char buf[64];
    size_t k = 0;
    while (c.p < c.end && k + 1 < sizeof buf && std::strchr("+-.eE0123456789", *c.p)) buf[k++] = *c.p++;
    buf[k] = '\0';
    return lua_stringtonumber(L, buf) != 0;
  }
  for (const char* word : {"true", "false", "null"}) {
    size_t len = std::strlen(word);
    if (static_cast<size_t>(c.end - c.p) >= len && std::strncmp(c.p, word, len) == 0) {
      c.p += len;
      if (word[0] == 'n')
        lua_pushliteral(L, "");
      else
        lua_pushboolean(L, word[0] == 't');
      return true;
    }
  }
  return false;
}

int pf_dtype(lua_State* L) {
  size_t n = 0;
  const char* name = luaL_checklstring(L, 1, &n);
  char buf[128];
  dtype_into(std::string_view(name, n), buf, sizeof buf);
  lua_pushstring(L, buf);
  return 1;
}

// proflint.shapes(op.input_dims) / proflint.dtypes(op.input_types): the JSON text as a Lua list
// (dtypes normalized), or nil when the text is missing or not a JSON list.
int parsed_list(lua_State* L, bool dtypes) {
  size_t n = 0;
  const char* text = lua_isnoneornil(L, 1) ? nullptr : luaL_checklstring(L, 1, &n);
  JsonCursor c{text, text + n};
  skip_space(c);
  if (text && c.p < c.end && *c.p == '[' && push_json_text(L, c, 0, dtypes)) {
    skip_space(c);
    if (c.p == c.end) return 1;
  }
  lua_pushnil(L);
  return 1;
}
int pf_dtypes(lua_State* L) { return parsed_list(L, true); }
int pf_shapes(lua_State* L) { return parsed_list(L, false); }

// ---------------------------------------------------------------- statements
struct StmtBox {
  sqlite3_stmt* stmt;
};

int stmt_finalize(lua_State* L) {
  auto* box = static_cast<StmtBox*>(luaL_checkudata(L, 1, kStmtMeta));
  if (box->stmt) sqlite3_finalize(box->stmt);
  box->stmt = nullptr;
  return 0;
}

RunContext& run_of(lua_State* L) { return *static_cast<RunContext*>(lua_touserdata(L, lua_upvalueindex(1))); }

void check_self(lua_State* L, const char* method) {
  if (lua_type(L, 1) != LUA_TTABLE) luaL_error(L, "call it as ctx:%s(...) (with a colon)", method);
}

// Prepares the SQL at index 2 with parameters 3..top; leaves the statement box on the stack.
StmtBox* prepare(lua_State* L, RunContext& run, const char* method) {
  check_self(L, method);
  size_t sql_len = 0;
  const char* sql = luaL_checklstring(L, 2, &sql_len);
  int nparams = lua_gettop(L) - 2;
  auto* box = static_cast<StmtBox*>(lua_newuserdatauv(L, sizeof(StmtBox), 0));
  box->stmt = nullptr;
  luaL_setmetatable(L, kStmtMeta);
  sqlite3* db = run.facts->db().getHandle();
  const char* tail = nullptr;
  if (sqlite3_prepare_v2(db, sql, static_cast<int>(sql_len), &box->stmt, &tail) != SQLITE_OK) {
    const char* msg = sqlite3_errmsg(db);
    if (run.sqlite_memory && run.sqlite_memory->exceeded) {
      run.sqlite_memory->exceeded = false;
      luaL_error(L, "ctx:%s: SQLite needed more than %d MiB to prepare the statement (raise [rules] memory_limit_mb)",
                 method, static_cast<int>(run.sqlite_memory->limit >> 20));
    }
    if (std::strstr(msg, "not authorized"))
      luaL_error(L, "ctx:%s: %s (rules may only read the fact store: SELECT or WITH)", method, msg);
    luaL_error(L, "ctx:%s: %s", method, msg);
  }
  if (!box->stmt) luaL_error(L, "ctx:%s: empty SQL statement", method);
  while (tail && *tail && (std::isspace(static_cast<unsigned char>(*tail)) || *tail == ';')) ++tail;
  if (tail && *tail) luaL_error(L, "ctx:%s: give exactly one SQL statement", method);
  if (!sqlite3_stmt_readonly(box->stmt))
    luaL_error(L, "ctx:%s: only read-only statements (SELECT, WITH ...) are allowed", method);
  int expected = sqlite3_bind_parameter_count(box->stmt);
  if (expected != nparams)
    luaL_error(L, "ctx:%s: the SQL has %d '?' parameter(s) but %d value(s) were given", method, expected, nparams);
  for (int i = 1; i <= nparams; ++i) {
    int a = i + 2;
    switch (lua_type(L, a)) {
      case LUA_TNIL:
        sqlite3_bind_null(box->stmt, i);
        break;
      case LUA_TBOOLEAN:
        sqlite3_bind_int(box->stmt, i, lua_toboolean(L, a));
        break;
      case LUA_TNUMBER:
        if (lua_isinteger(L, a))
          sqlite3_bind_int64(box->stmt, i, lua_tointeger(L, a));
        else
          sqlite3_bind_double(box->stmt, i, lua_tonumber(L, a));
        break;
      case LUA_TSTRING: {
        size_t n = 0;
        const char* s = lua_tolstring(L, a, &n);
        sqlite3_bind_text(box->stmt, i, s, static_cast<int>(n), SQLITE_TRANSIENT);
        break;
      }
      default:
        luaL_error(L, "ctx:%s: parameter %d is a %s (give numbers, strings, booleans or nil)", method, i,
                   luaL_typename(L, a));
    }
  }
  return box;
}

// Steps once under the query time limit; raises on errors. True when a row is ready.
bool step(lua_State* L, RunContext& run, StmtBox* box, const char* method) {
  run.deadline = std::chrono::steady_clock::now() + run.query_time_limit;
  int rc = sqlite3_step(box->stmt);
  run.deadline = {};
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3* db = run.facts->db().getHandle();
  char msg[kErr];
  if (rc == SQLITE_INTERRUPT && budget_spent(budget_of(L))) {
    sqlite3_finalize(box->stmt);
    box->stmt = nullptr;
    raise_budget_error(L);
  }
  if (rc == SQLITE_NOMEM && run.sqlite_memory && run.sqlite_memory->exceeded) {
    run.sqlite_memory->exceeded = false;
    std::snprintf(msg, sizeof msg, "SQLite needed more than %lld MiB for this query (raise [rules] memory_limit_mb)",
                  static_cast<long long>(run.sqlite_memory->limit >> 20));
  } else if (rc == SQLITE_TOOBIG)
    std::snprintf(msg, sizeof msg,
                  "a value of more than %d bytes (SQL values a rule builds are capped at [rules] memory_limit_mb)",
                  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1));
  else if (rc == SQLITE_INTERRUPT)
    std::snprintf(msg, sizeof msg, "query stopped after the time limit of %lld ms (raise [rules] query_time_limit_ms)",
                  static_cast<long long>(run.query_time_limit.count()));
  else
    std::snprintf(msg, sizeof msg, "%s", sqlite3_errmsg(db));
  sqlite3_finalize(box->stmt);
  box->stmt = nullptr;
  luaL_error(L, "ctx:%s: %s", method, msg);
  return false;
}

void push_row(lua_State* L, sqlite3_stmt* stmt) {
  int cols = sqlite3_column_count(stmt);
  lua_createtable(L, 0, cols);
  for (int c = 0; c < cols; ++c) {
    switch (sqlite3_column_type(stmt, c)) {
      case SQLITE_INTEGER:
        lua_pushinteger(L, sqlite3_column_int64(stmt, c));
        break;
      case SQLITE_FLOAT:
        lua_pushnumber(L, sqlite3_column_double(stmt, c));
        break;
      case SQLITE_NULL:
        continue;
      default:
        lua_pushlstring(L, reinterpret_cast<const char*>(sqlite3_column_blob(stmt, c)),
                        static_cast<size_t>(sqlite3_column_bytes(stmt, c)));
    }
    lua_setfield(L, -2, sqlite3_column_name(stmt, c));
  }
}

int ctx_query(lua_State* L) {
  RunContext& run = run_of(L);
  StmtBox* box = prepare(L, run, "query");
  lua_newtable(L);
  lua_Integer n = 0;
  while (step(L, run, box, "query")) {
    push_row(L, box->stmt);
    lua_rawseti(L, -2, ++n);
  }
  sqlite3_finalize(box->stmt);
  box->stmt = nullptr;
  return 1;
}

int rows_next(lua_State* L) {
  RunContext& run = *static_cast<RunContext*>(lua_touserdata(L, lua_upvalueindex(1)));
  auto* box = static_cast<StmtBox*>(lua_touserdata(L, lua_upvalueindex(2)));
  if (!box->stmt) return 0;
  if (!step(L, run, box, "rows")) {
    sqlite3_finalize(box->stmt);
    box->stmt = nullptr;
    lua_pushnil(L);
    return 1;
  }
  push_row(L, box->stmt);
  return 1;
}

int ctx_rows(lua_State* L) {
  RunContext& run = run_of(L);
  prepare(L, run, "rows");
  int box = lua_gettop(L);
  lua_pushlightuserdata(L, &run);
  lua_pushvalue(L, box);
  lua_pushcclosure(L, rows_next, 2);
  lua_pushnil(L);
  lua_pushnil(L);
  lua_pushvalue(L, box);  // to-be-closed value of the generic for: finalizes on break or error
  return 4;
}

// ctx:source(op_id): where the op comes from in the user's code (schema/0008_source.sql), or nil.
// Read into C++ values first, so that no Lua error can skip the destructors of the query.
int ctx_source(lua_State* L) {
  RunContext& run = run_of(L);
  check_self(L, "source");
  lua_Integer op_id = luaL_checkinteger(L, 2);
  char err[kErr] = {0};
  bool found = false;
  std::string origin, file, function, site, module, stack;
  int64_t line = 0, forward_op = -1;
  bool has_file = false;
  std::vector<std::pair<std::string, std::optional<PyFrame>>> frames;
  try {
    SQLite::Statement q(run.facts->db(),
                        "SELECT origin, file, line, function, site, module_path, stack, forward_op_id FROM source "
                        "WHERE op_id = ?");
    q.bind(1, static_cast<int64_t>(op_id));
    if (q.executeStep()) {
      found = true;
      auto text = [&](int c) { return q.getColumn(c).isNull() ? std::string() : q.getColumn(c).getString(); };
      origin = text(0);
      has_file = !q.getColumn(1).isNull();
      file = text(1);
      line = q.getColumn(2).isNull() ? 0 : q.getColumn(2).getInt64();
      function = text(3);
      site = text(4);
      module = text(5);
      stack = text(6);
      if (!q.getColumn(7).isNull()) forward_op = q.getColumn(7).getInt64();
      size_t pos = 0;
      while (pos < stack.size()) {
        size_t end = std::min(stack.find(';', pos), stack.size());
        std::string f = stack.substr(pos, end - pos);
        if (!f.empty()) frames.emplace_back(f, parse_py_frame(f));
        pos = end + 1;
      }
    }
  } catch (const std::exception& e) {
    std::snprintf(err, kErr, "ctx:source: %s", e.what());
  }
  if (err[0]) return luaL_error(L, "%s", err);
  if (!found) {
    lua_pushnil(L);
    return 1;
  }
  lua_newtable(L);
  lua_pushstring(L, origin.c_str());
  lua_setfield(L, -2, "origin");
  if (has_file) {
    lua_pushstring(L, file.c_str());
    lua_setfield(L, -2, "file");
    lua_pushinteger(L, static_cast<lua_Integer>(line));
    lua_setfield(L, -2, "line");
    lua_pushstring(L, function.c_str());
    lua_setfield(L, -2, "function");
    lua_pushstring(L, site.c_str());
    lua_setfield(L, -2, "site");
  }
  if (!module.empty()) {
    lua_pushstring(L, module.c_str());
    lua_setfield(L, -2, "module_path");
  }
  if (forward_op >= 0) {
    lua_pushinteger(L, static_cast<lua_Integer>(forward_op));
    lua_setfield(L, -2, "forward_op_id");
  }
  lua_newtable(L);  // frames, innermost first
  lua_Integer n = 0;
  for (const auto& [text, parsed] : frames) {
    lua_newtable(L);
    lua_pushstring(L, text.c_str());
    lua_setfield(L, -2, "text");
    if (parsed) {
      lua_pushstring(L, parsed->file.c_str());
      lua_setfield(L, -2, "file");
      lua_pushinteger(L, static_cast<lua_Integer>(parsed->line));
      lua_setfield(L, -2, "line");
      lua_pushstring(L, parsed->function.c_str());
      lua_setfield(L, -2, "function");
    } else if (auto m = module_frame_name(text)) {
      lua_pushlstring(L, m->data(), m->size());
      lua_setfield(L, -2, "module");
    }
    lua_rawseti(L, -2, ++n);
  }
  lua_setfield(L, -2, "frames");
  return 1;
}

std::vector<std::string> need_names() {
  std::vector<std::string> out;
  for (auto n : known_needs()) out.emplace_back(n);
  return out;
}

// ctx:kernel_origin(kernel_id): where a kernel comes from beyond its launching op (docs/lua-api.md,
// "CUDA graphs and torch.compile"): the graph and node that replayed it, the op captured into that
// node, the compiled region that launched it and its Triton kind. nil when it is neither a replayed
// nor a compiled kernel.
int ctx_kernel_origin(lua_State* L) {
  RunContext& run = run_of(L);
  check_self(L, "kernel_origin");
  lua_Integer kernel = luaL_checkinteger(L, 2);
  lua_settop(L, 1);
  lua_pushliteral(L,
                  "SELECT k.id AS kernel_id, g.graph_id, g.node AS graph_node, g.replay, g.launch_api_call_id, "
                  "g.captured_op_id, co.name AS captured_op, c.region_range_id AS compiled_region_range_id, "
                  "r.name AS compiled_region, c.triton_kind, c.fallback FROM _kernel k "
                  "LEFT JOIN graph_kernel g ON g.kernel_id = k.id LEFT JOIN op co ON co.id = g.captured_op_id "
                  "LEFT JOIN kernel_compiled c ON c.kernel_id = k.id LEFT JOIN compiled_region r ON r.range_id = c.region_range_id "
                  "WHERE k.id = ? AND (g.kernel_id IS NOT NULL OR c.kernel_id IS NOT NULL)");
  lua_pushinteger(L, kernel);
  StmtBox* box = prepare(L, run, "kernel_origin");
  if (step(L, run, box, "kernel_origin")) push_row(L, box->stmt);
  else lua_pushnil(L);
  sqlite3_finalize(box->stmt);
  box->stmt = nullptr;
  return 1;
}

int ctx_has(lua_State* L) {
  RunContext& run = run_of(L);
  check_self(L, "has");
  const char* need = luaL_checkstring(L, 2);
  lua_Integer trace = luaL_optinteger(L, 3, run.trace_id);
  char err[kErr] = {0};
  bool has = false;
  {
    auto names = need_names();
    if (std::find(names.begin(), names.end(), need) == names.end()) {
      std::snprintf(err, kErr, "ctx:has: unknown need '%s'%s", need, did_you_mean(need, names).c_str());
    } else {
      try {
        has = run.facts->has(need, trace);
      } catch (const std::exception& e) {
        std::snprintf(err, kErr, "ctx:has: %s", e.what());
      }
    }
  }
  if (err[0]) return luaL_error(L, "%s", err);
  lua_pushboolean(L, has);
  return 1;
}

void set_int(lua_State* L, const char* key, int64_t v);
void set_str(lua_State* L, const char* key, const std::string& v);

// The steady window of `device` in `trace` (the summary's), or false when the device ran nothing.
bool steady_window_of(const Facts& facts, int64_t trace, int64_t device, Interval& out) {
  const TraceSummary* s = facts.summary(trace);
  if (!s) return false;
  for (const auto& d : s->devices)
    if (d.device_id == device) {
      out = {d.steady_start_ns, d.steady_end_ns};
      return true;
    }
  return false;
}

// ctx:host_waits(device_id [, trace_id]): io-bound-input's measurement (engine/analysis/host_activity.hpp).
int ctx_host_waits(lua_State* L) {
  RunContext& run = run_of(L);
  check_self(L, "host_waits");
  const lua_Integer device = luaL_checkinteger(L, 2);
  const lua_Integer trace = luaL_optinteger(L, 3, run.trace_id);
  char err[kErr] = {0};
  std::vector<OsWaitTotal> calls;
  int64_t blocked_ns = 0;
  std::vector<HostThread> launchers;
  try {
    Interval steady;
    if (steady_window_of(*run.facts, trace, device, steady)) {
      HostWaits w = host_waits(*run.facts, trace, device, steady, IdleGapKeys(*run.facts, trace, device));
      calls = std::move(w.calls);
      blocked_ns = total_length(w.blocked);
      launchers.assign(w.idle.launchers.begin(), w.idle.launchers.end());
    }
  } catch (const std::exception& e) {
    std::snprintf(err, kErr, "ctx:host_waits: %s", e.what());
  }
  if (err[0]) return luaL_error(L, "%s", err);
  lua_newtable(L);
  set_int(L, "gpu_idle_blocked_ns", blocked_ns);
  lua_newtable(L);
  for (size_t i = 0; i < launchers.size(); ++i) {
    lua_newtable(L);
    set_int(L, "pid", launchers[i].pid);
    set_int(L, "tid", launchers[i].tid);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "launching_threads");
  lua_newtable(L);
  for (size_t i = 0; i < calls.size(); ++i) {
    lua_newtable(L);
    set_str(L, "name", calls[i].name);
    set_str(L, "category", calls[i].category);
    set_int(L, "calls", calls[i].calls);
    set_int(L, "gpu_idle_ns", calls[i].gpu_idle_ns);
    set_int(L, "example_os_call_id", calls[i].example);
    if (!calls[i].caller.empty()) set_str(L, "caller", calls[i].caller);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "calls");
  return 1;
}

// ctx:cpu_hotspots(device_id [, trace_id]): cpu-hotspot-idle's measurement.
int ctx_cpu_hotspots(lua_State* L) {
  RunContext& run = run_of(L);
  check_self(L, "cpu_hotspots");
  const lua_Integer device = luaL_checkinteger(L, 2);
  const lua_Integer trace = luaL_optinteger(L, 3, run.trace_id);
  char err[kErr] = {0};
  CpuHotspots hot;
  try {
    Interval steady;
    if (steady_window_of(*run.facts, trace, device, steady))
      hot = cpu_hotspots(*run.facts, trace, device, steady, IdleGapKeys(*run.facts, trace, device));
  } catch (const std::exception& e) {
    std::snprintf(err, kErr, "ctx:cpu_hotspots: %s", e.what());
  }
  if (err[0]) return luaL_error(L, "%s", err);
  lua_newtable(L);
  set_int(L, "period_ns", hot.period_ns);
  set_int(L, "samples_in_window", hot.samples_in_window);
  set_int(L, "samples_while_idle", hot.samples_while_idle);
  lua_newtable(L);
  for (size_t i = 0; i < hot.functions.size(); ++i) {
    lua_newtable(L);
    set_str(L, "function", hot.functions[i].function);
    set_int(L, "samples", hot.functions[i].samples);
    set_int(L, "example_sample_id", hot.functions[i].sample_ids.front());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "functions");
  return 1;
}

std::optional<int64_t> opt_int(const nlohmann::ordered_json& j, const char* key, char* err) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  if (!j[key].is_number()) {
    std::snprintf(err, kErr, "scope.%s must be a number", key);
    return std::nullopt;
  }
  if (j[key].is_number_float()) {
    // Truncated like before; beyond int64 (1e300, inf, nan) there is no such GPU, rank or
    // iteration, and the conversion would be undefined.
    double v = j[key].get<double>();
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) {
      std::snprintf(err, kErr, "scope.%s must be an integer (got %g)", key, v);
      return std::nullopt;
    }
    return static_cast<int64_t>(v);
  }
  return j[key].get<int64_t>();
}

// The optional `scope` table of ctx:report and ctx:below_threshold, read into `scope` (unknown
// fields and non-integers are errors written to err).
void read_scope(nlohmann::ordered_json& t, Scope& scope, char* err) {
  if (err[0] || !t.contains("scope")) return;
  auto& s = t["scope"];
  if (s.is_array() && s.empty()) s = nlohmann::ordered_json::object();
  static const std::vector<std::string> keys = {"device_id", "iter_first", "iter_last", "rank", "trace_id"};
  if (!s.is_object()) std::snprintf(err, kErr, "'scope' must be a table");
  for (const auto& [k, v] : s.items()) {
    if (err[0]) break;
    if (std::find(keys.begin(), keys.end(), k) == keys.end())
      std::snprintf(err, kErr, "unknown scope field '%s'%s", k.c_str(), did_you_mean(k, keys).c_str());
  }
  if (err[0]) return;
  if (auto v = opt_int(s, "trace_id", err)) scope.trace_id = v;
  scope.device_id = opt_int(s, "device_id", err);
  scope.rank = opt_int(s, "rank", err);
  scope.iter_first = opt_int(s, "iter_first", err);
  scope.iter_last = opt_int(s, "iter_last", err);
}

// Repairs invalid UTF-8 in every string and key (a rule's text may hold any bytes; the JSON and
// SARIF emitters need valid UTF-8).
void repair_strings(nlohmann::ordered_json& j) {
  if (j.is_string()) {
    repair_utf8(j.get_ref<std::string&>());
  } else if (j.is_array()) {
    for (auto& v : j) repair_strings(v);
  } else if (j.is_object()) {
    bool bad_key = false;
    for (auto it = j.begin(); it != j.end(); ++it) {
      repair_strings(it.value());
      bad_key = bad_key || !is_valid_utf8(it.key());
    }
    if (bad_key) {
      nlohmann::ordered_json fixed = nlohmann::ordered_json::object();
      for (auto it = j.begin(); it != j.end(); ++it) fixed[sanitize_utf8(it.key())] = std::move(it.value());
      j = std::move(fixed);
    }
  }
}

// ctx:report's `where`: the rows behind a finding, each `{ op_id | kernel_id | api_call_id |
// memcpy_id | memset_id | range_id = ID, time_ns = N }`, become the finding's source locations
// (the places in the user's code with the most time), as the built-in detectors attach them.
// `where_label` says what the times are (default "time"). Without recorded frames it adds nothing.
constexpr size_t kMaxWhereRows = 100000;

void read_where(const RunContext& run, const nlohmann::ordered_json& t, Finding& f, char* err) {
  if (err[0] || !t.contains("where")) return;
  const auto& rows = t["where"];
  std::string label = "time";
  if (t.contains("where_label")) {
    if (!t["where_label"].is_string()) {
      std::snprintf(err, kErr, "'where_label' must be a string");
      return;
    }
    label = t["where_label"].get<std::string>();
  }
  if (rows.is_object() && rows.empty()) return;  // {} reads as an empty table
  if (!rows.is_array()) {
    std::snprintf(err, kErr, "'where' must be a list of { op_id = ..., time_ns = ... } tables");
    return;
  }
  if (rows.size() > kMaxWhereRows) {
    std::snprintf(err, kErr, "'where' lists %zu rows; at most %zu", rows.size(), kMaxWhereRows);
    return;
  }
  static const std::vector<std::string> kinds = {"api_call_id", "kernel_id", "memcpy_id", "memset_id", "op_id", "range_id"};
  SourceSites sites(*run.facts, f.scope.trace_id.value_or(run.trace_id), label);
  for (size_t i = 0; i < rows.size() && !err[0]; ++i) {
    const auto& row = rows[i];
    if (!row.is_object()) {
      std::snprintf(err, kErr, "where[%zu] must be a table { op_id = ..., time_ns = ... }", i + 1);
      return;
    }
    std::string kind;
    int64_t id = 0, time_ns = 0;
    for (const auto& [k, v] : row.items()) {
      if (k == "time_ns") {
        if (!v.is_number() || v.get<double>() < 0 || !std::isfinite(v.get<double>())) {
          std::snprintf(err, kErr, "where[%zu].time_ns must be a number >= 0", i + 1);
          return;
        }
        time_ns = static_cast<int64_t>(std::min(v.get<double>(), 9.2e18));
      } else if (std::find(kinds.begin(), kinds.end(), k) != kinds.end()) {
        if (!kind.empty() || !v.is_number_integer()) {
          std::snprintf(err, kErr, "where[%zu] needs exactly one integer row id (op_id, kernel_id, api_call_id, "
                                   "memcpy_id, memset_id or range_id)", i + 1);
          return;
        }
        kind = k;
        id = v.get<int64_t>();
      } else {
        std::snprintf(err, kErr, "where[%zu]: unknown field '%s'%s", i + 1, k.c_str(),
                      did_you_mean(k, kinds).c_str());
        return;
      }
    }
    if (kind.empty()) {
      std::snprintf(err, kErr, "where[%zu] names no row (op_id, kernel_id, api_call_id, memcpy_id, memset_id or "
                               "range_id)", i + 1);
      return;
    }
    if (!sites.available()) continue;  // no frames or modules recorded: nothing to attach
    if (kind == "op_id") sites.add_op(id, time_ns);
    else if (kind == "kernel_id") sites.add_kernel(id, time_ns);
    else if (kind == "api_call_id") sites.add_api_call(id, time_ns);
    else if (kind == "memcpy_id") sites.add_memcpy(id, time_ns);
    else if (kind == "memset_id") sites.add_memset(id, time_ns);
    else sites.add_range(id, time_ns);
  }
  if (!err[0]) attach_locations(f, sites.top(5));
}

int ctx_report(lua_State* L) {
  RunContext& run = run_of(L);
  check_self(L, "report");
  luaL_checktype(L, 2, LUA_TTABLE);
  if (run.reported >= run.max_findings) {  // counted for the rule-error run_rule adds
    ++run.dropped;
    return 0;
  }
  char err[kErr] = {0};
  {
    try {
      nlohmann::ordered_json t;
      if (to_json(L, 2, 0, t, err)) {
        repair_strings(t);
        static const std::vector<std::string> fields = {
            "claims",         "confidence",     "diagnostic", "estimated_savings_ns", "evidence",      "min_savings_ns",
            "min_wall_share", "problem",        "recommendation", "savings_method",   "scope",         "severity",
            "where",          "where_label"};
        if (!t.is_object()) std::snprintf(err, kErr, "give a table of fields: ctx:report{ problem = ..., ... }");
        for (const auto& [k, v] : t.items()) {
          if (err[0]) break;
          if (std::find(fields.begin(), fields.end(), k) == fields.end())
            std::snprintf(err, kErr, "unknown field '%s'%s", k.c_str(), did_you_mean(k, fields).c_str());
        }
        Finding f;
        f.id = run.rule_id;
        f.title = run.title;
        f.source = run.path;
        f.severity = run.severity;
        f.scope.trace_id = run.trace_id;
        auto text = [&](const char* key, std::string& dst, bool required) {
          if (err[0]) return;
          if (!t.contains(key)) {
            if (required) std::snprintf(err, kErr, "'%s' is required", key);
            return;
          }
          if (!t[key].is_string())
            std::snprintf(err, kErr, "'%s' must be a string", key);
          else
            dst = t[key].get<std::string>();
        };
        if (!err[0]) text("problem", f.problem, true);
        text("recommendation", f.recommendation, false);
        text("savings_method", f.savings_method, false);
        if (!err[0] && t.contains("severity")) {
          auto s = t["severity"].is_string() ? parse_severity(t["severity"].get<std::string>()) : std::nullopt;
          if (!s)
            std::snprintf(err, kErr, "'severity' must be \"high\", \"medium\", \"low\" or \"info\"");
          else
            f.severity = s;
        }
        if (!err[0] && t.contains("estimated_savings_ns")) {
          if (!t["estimated_savings_ns"].is_number() || t["estimated_savings_ns"].get<double>() < 0)
            std::snprintf(err, kErr, "'estimated_savings_ns' must be a number >= 0");
          else
            f.estimated_savings_ns = saturate_to_int64(std::round(t["estimated_savings_ns"].get<double>()));
        }
        if (!err[0] && t.contains("min_savings_ns")) {
          if (!t["min_savings_ns"].is_number() || t["min_savings_ns"].get<double>() < 0)
            std::snprintf(err, kErr, "'min_savings_ns' must be a number >= 0");
          else
            f.min_savings_ns = saturate_to_int64(std::round(t["min_savings_ns"].get<double>()));
        }
        if (!err[0] && t.contains("min_wall_share")) {
          if (!t["min_wall_share"].is_number() || t["min_wall_share"].get<double>() < 0 ||
              t["min_wall_share"].get<double>() > 1)
            std::snprintf(err, kErr, "'min_wall_share' must be a number from 0 to 1");
          else
            f.min_wall_share = t["min_wall_share"].get<double>();
        }
        if (!err[0] && t.contains("claims")) {
          auto& c = t["claims"];
          if (c.is_array() && c.empty()) c = nlohmann::ordered_json::object();
          if (!c.is_object()) std::snprintf(err, kErr, "'claims' must be a table of key = nanoseconds");
          for (const auto& [k, v] : c.items()) {
            if (err[0]) break;
            if (!v.is_number() || v.get<double>() < 0)
              std::snprintf(err, kErr, "claims['%s'] must be a number >= 0", k.c_str());
            else
              f.claims[k] = saturate_to_int64(std::round(v.get<double>()));
          }
        }
        if (!err[0] && t.contains("confidence")) {
          if (!t["confidence"].is_number() || t["confidence"].get<double>() < 0 || t["confidence"].get<double>() > 1)
            std::snprintf(err, kErr, "'confidence' must be a number from 0 to 1");
          else
            f.confidence = t["confidence"].get<double>();
        }
        if (!err[0] && t.contains("diagnostic")) {
          if (!t["diagnostic"].is_boolean())
            std::snprintf(err, kErr, "'diagnostic' must be true or false");
          else
            f.diagnostic = t["diagnostic"].get<bool>();
        }
        if (!err[0] && t.contains("evidence")) {
          auto& e = t["evidence"];
          if (e.is_array() && e.empty()) e = nlohmann::ordered_json::object();
          if (!e.is_object())
            std::snprintf(err, kErr, "'evidence' must be a table of name = value");
          else
            f.evidence = e;
        }
        read_scope(t, f.scope, err);
        read_where(run, t, f, err);
        if (!err[0]) {
          run.sink->report(std::move(f));
          ++run.reported;
        }
      }
    } catch (const std::exception& e) {
      std::snprintf(err, kErr, "%s", e.what());
    }
  }
  if (err[0]) return luaL_error(L, "ctx:report: %s", err);
  return 0;
}

// ctx:log(...): the arguments (as tostring gives them, separated by spaces) as one line on stderr,
// "proflint: rule ID: …". Bounded: each line is cut at kMaxLogLine bytes, and a rule writes at most
// kMaxLogLines lines per trace. Control characters and invalid UTF-8 are escaped so a rule cannot
// rewrite the user's terminal. Lines of rules running on other threads never interleave.
constexpr int kMaxLogLines = 50;
constexpr size_t kMaxLogLine = 1000;

std::mutex& log_mutex() {
  static std::mutex m;
  return m;
}

void write_log_line(const char* text, size_t n) {
  std::lock_guard<std::mutex> lock(log_mutex());
  std::fwrite(text, 1, n, stderr);
  std::fflush(stderr);
}

int ctx_log(lua_State* L) {
  RunContext& run = run_of(L);
  check_self(L, "log");
  if (run.log_lines > kMaxLogLines) return 0;
  char line[kMaxLogLine + 256];
  int head = std::snprintf(line, sizeof line, "proflint: rule %s: ", run.rule_id.c_str());
  size_t used = head > 0 ? std::min(static_cast<size_t>(head), sizeof line - 1) : 0;
  size_t limit = used + kMaxLogLine;
  bool cut = false;
  if (++run.log_lines > kMaxLogLines) {
    used += static_cast<size_t>(std::snprintf(line + used, sizeof line - used,
                                              "further ctx:log lines of this rule are dropped (at most %d per trace)",
                                              kMaxLogLines));
  } else {
    int n = lua_gettop(L);
    for (int i = 2; i <= n && !cut; ++i) {
      size_t len = 0;
      const char* piece = luaL_tolstring(L, i, &len);
      std::string_view v(piece, len);
      if (i > 2 && used < limit) line[used++] = ' ';
      for (size_t k = 0; k < v.size() && !cut;) {
        auto c = static_cast<unsigned char>(v[k]);
        size_t seq = utf8_sequence(v, k);
        if (seq == 0 || c < 0x20 || c == 0x7f) {  // escaped as \xNN
          if (used + 4 > limit) {
            cut = true;
            break;
          }
          std::snprintf(line + used, 5, "\\x%02X", c);
          used += 4;
          ++k;
        } else {
          if (used + seq > limit) {
            cut = true;
            break;
          }
          std::memcpy(line + used, v.data() + k, seq);
          used += seq;
          k += seq;
        }
      }
      lua_pop(L, 1);
    }
    if (cut) used += static_cast<size_t>(std::snprintf(line + used, sizeof line - used, " [cut]"));
  }
  used = std::min(used, sizeof line - 2);
  line[used++] = '\n';
  write_log_line(line, used);
  return 0;
}

// ctx:below_threshold{ measured = "...", value = n, threshold = n, unit = "...", scope = {...} }:
// the rule checked something and stayed under its threshold (listed, never a finding).
int ctx_below_threshold(lua_State* L) {
  RunContext& run = run_of(L);
  check_self(L, "below_threshold");
  luaL_checktype(L, 2, LUA_TTABLE);
  char err[kErr] = {0};
  try {
    nlohmann::ordered_json t;
    if (to_json(L, 2, 0, t, err)) {
      repair_strings(t);
      static const std::vector<std::string> fields = {"measured", "scope", "threshold", "unit", "value"};
      if (!t.is_object()) std::snprintf(err, kErr, "give a table of fields: ctx:below_threshold{ measured = ..., ... }");
      for (const auto& [k, v] : t.items()) {
        if (err[0]) break;
        if (std::find(fields.begin(), fields.end(), k) == fields.end())
          std::snprintf(err, kErr, "unknown field '%s'%s", k.c_str(), did_you_mean(k, fields).c_str());
      }
      BelowThreshold b;
      b.id = run.rule_id;
      b.source = run.path;
      b.scope.trace_id = run.trace_id;
      for (const char* key : {"measured", "unit"}) {
        if (err[0]) break;
        if (!t.contains(key) || !t[key].is_string())
          std::snprintf(err, kErr, "'%s' is required and must be a string", key);
        else
          (std::string(key) == "measured" ? b.measured : b.unit) = t[key].get<std::string>();
      }
      for (const char* key : {"value", "threshold"}) {
        if (err[0]) break;
        if (!t.contains(key) || !t[key].is_number())
          std::snprintf(err, kErr, "'%s' is required and must be a number", key);
        else
          (std::string(key) == "value" ? b.value : b.threshold) = t[key].get<double>();
      }
      read_scope(t, b.scope, err);
      if (!err[0]) run.sink->below_threshold(std::move(b));
    }
  } catch (const std::exception& e) {
    std::snprintf(err, kErr, "%s", e.what());
  }
  if (err[0]) return luaL_error(L, "ctx:below_threshold: %s", err);
  return 0;
}

// ---------------------------------------------------------------- summary
void set_int(lua_State* L, const char* key, int64_t v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, key);
}
void set_num(lua_State* L, const char* key, double v) {
  lua_pushnumber(L, v);
  lua_setfield(L, -2, key);
}
void set_str(lua_State* L, const char* key, const std::string& v) {
  lua_pushlstring(L, v.data(), v.size());
  lua_setfield(L, -2, key);
}
template <class T>
void set_opt(lua_State* L, const char* key, const std::optional<T>& v) {
  if (!v) return;
  if constexpr (std::is_same_v<T, std::string>)
    set_str(L, key, *v);
  else
    set_int(L, key, static_cast<int64_t>(*v));
}

// ctx.summary.system_view (docs/lua-api.md, "Sampled series"): present only when the trace has
// samples or operator timings.
void push_sampled_stat(lua_State* L, const char* key, const std::optional<SampledStat>& st) {
  if (!st) return;
  lua_newtable(L);
  set_num(L, "mean", st->mean);
  set_num(L, "min", st->min);
  set_num(L, "max", st->max);
  set_int(L, "samples", st->samples);
  lua_setfield(L, -2, key);
}

void push_system_view(lua_State* L, const SystemView& v) {
  if (v.empty()) return;
  lua_newtable(L);
  set_int(L, "start_ns", v.start_ns);
  set_int(L, "end_ns", v.end_ns);
  lua_createtable(L, static_cast<int>(v.metrics.size()), 0);
  for (size_t i = 0; i < v.metrics.size(); ++i) {
    lua_pushlstring(L, v.metrics[i].data(), v.metrics[i].size());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "metrics");
  lua_createtable(L, static_cast<int>(v.gpus.size()), 0);
  for (size_t i = 0; i < v.gpus.size(); ++i) {
    const SampledGpu& g = v.gpus[i];
    lua_newtable(L);
    set_int(L, "device_id", g.device_id);
    if (!g.name.empty()) set_str(L, "name", g.name);
    push_sampled_stat(L, "gpu_active", g.gpu_active);
    push_sampled_stat(L, "memory_used", g.memory_used);
    if (g.memory_total_bytes) set_num(L, "memory_total_bytes", *g.memory_total_bytes);
    push_sampled_stat(L, "power_draw", g.power_draw);
    push_sampled_stat(L, "temperature", g.temperature);
    push_sampled_stat(L, "clock_sm", g.clock_sm);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "gpus");
  lua_createtable(L, static_cast<int>(v.operators.size()), 0);
  for (size_t i = 0; i < v.operators.size(); ++i) {
    lua_newtable(L);
    set_str(L, "operator", v.operators[i].operator_name);
    if (!v.operators[i].module.empty()) set_str(L, "module", v.operators[i].module);
    set_int(L, "time_ns", v.operators[i].time_ns);
    set_int(L, "count", v.operators[i].count);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "operators");
  lua_setfield(L, -2, "system_view");
}

void push_summary(lua_State* L, const TraceSummary& s) {
  lua_newtable(L);
  set_int(L, "trace_id", s.trace_id);
  set_str(L, "path", s.path);
  set_str(L, "format", s.format);
  set_opt(L, "format_version", s.format_version);
  set_opt(L, "tool_version", s.tool_version);
  set_opt(L, "framework", s.framework);
  set_opt(L, "vendor", s.vendor);
  set_opt(L, "comm_backend", s.comm_backend);
  set_opt(L, "rank", s.rank);
  set_opt(L, "world_size", s.world_size);
  set_int(L, "wall_ns", s.wall_ns);
  set_int(L, "event_count", s.event_count);
  set_int(L, "kernel_count", s.kernel_count);
  set_int(L, "memcpy_count", s.memcpy_count);
  set_int(L, "memset_count", s.memset_count);
  set_int(L, "api_call_count", s.api_call_count);
  set_int(L, "op_count", s.op_count);
  lua_pushboolean(L, s.has_gpu_work);
  lua_setfield(L, -2, "has_gpu_work");
  set_int(L, "devices_listed", s.devices_listed);
  set_opt(L, "workload", s.workload);
  set_int(L, "startup_ns", s.startup_ns);
  set_int(L, "steady_wall_ns", s.steady_wall_ns);
  lua_createtable(L, static_cast<int>(s.devices.size()), 0);
  for (size_t i = 0; i < s.devices.size(); ++i) {
    const DeviceSummary& d = s.devices[i];
    lua_newtable(L);
    set_int(L, "device_id", d.device_id);
    if (!d.name.empty()) set_str(L, "name", d.name);
    set_opt(L, "compute_major", d.compute_major);
    set_opt(L, "compute_minor", d.compute_minor);
    set_int(L, "window_ns", d.window_ns);
    set_int(L, "kernel_count", d.kernel_count);
    set_int(L, "kernel_time_ns", d.kernel_time_ns);
    set_int(L, "kernel_busy_ns", d.kernel_busy_ns);
    set_int(L, "gpu_busy_ns", d.gpu_busy_ns);
    set_int(L, "memcpy_count", d.memcpy_count);
    set_int(L, "memcpy_time_ns", d.memcpy_time_ns);
    set_int(L, "memcpy_bytes", d.memcpy_bytes);
    set_int(L, "memset_time_ns", d.memset_time_ns);
    set_int(L, "communication_time_ns", d.communication_time_ns);
    set_int(L, "tensor_core_time_ns", d.tensor_core_time_ns);
    set_int(L, "tc_eligible_not_used_ns", d.tc_eligible_not_used_ns);
    set_num(L, "gpu_utilization", d.gpu_utilization);
    set_num(L, "tensor_core_share", d.tensor_core_share);
    lua_newtable(L);
    for (const auto& [k, v] : d.breakdown_ns) set_int(L, k.c_str(), v);
    lua_setfield(L, -2, "breakdown_ns");
    set_int(L, "startup_ns", d.startup_ns);
    if (!d.startup_cause.empty()) set_str(L, "startup_cause", d.startup_cause);
    set_int(L, "steady_start_ns", d.steady_start_ns);
    set_int(L, "steady_window_ns", d.steady_window_ns);
    set_int(L, "steady_kernel_busy_ns", d.steady_kernel_busy_ns);
    set_num(L, "steady_gpu_utilization", d.steady_gpu_utilization);
    lua_newtable(L);
    for (const auto& [k, v] : d.steady_breakdown_ns) set_int(L, k.c_str(), v);
    lua_setfield(L, -2, "steady_breakdown_ns");
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "devices");
  lua_createtable(L, static_cast<int>(s.idle_devices.size()), 0);
  for (size_t i = 0; i < s.idle_devices.size(); ++i) {
    const DeviceSummary& d = s.idle_devices[i];
    lua_newtable(L);
    set_int(L, "device_id", d.device_id);
    if (!d.name.empty()) set_str(L, "name", d.name);
    set_opt(L, "compute_major", d.compute_major);
    set_opt(L, "compute_minor", d.compute_minor);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "unused_devices");
  lua_newtable(L);
  set_int(L, "ops", s.tc_eligible_ops);
  set_int(L, "gpu_time_ns", s.tc_eligible_gpu_ns);
  set_int(L, "tensor_core_time_ns", s.tc_eligible_tc_ns);
  set_int(L, "ops_without_tc", s.tc_eligible_ops_no_tc);
  set_int(L, "gpu_time_without_tc_ns", s.tc_eligible_no_tc_gpu_ns);
  lua_setfield(L, -2, "tc_eligible");
  const IterationSummary& it = s.iterations;
  lua_newtable(L);
  set_str(L, "source", it.source);
  set_int(L, "count", it.count);
  set_num(L, "mean_ns", it.mean_ns);
  set_num(L, "stddev_ns", it.stddev_ns);
  set_int(L, "min_ns", it.min_ns);
  set_int(L, "max_ns", it.max_ns);
  set_int(L, "median_ns", it.median_ns);
  lua_createtable(L, static_cast<int>(it.durations_ns.size()), 0);
  for (size_t i = 0; i < it.durations_ns.size(); ++i) {
    lua_pushinteger(L, it.durations_ns[i]);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "durations_ns");
  lua_setfield(L, -2, "iterations");
  lua_createtable(L, static_cast<int>(s.issues.size()), 0);
  for (size_t i = 0; i < s.issues.size(); ++i) {
    lua_newtable(L);
    set_str(L, "kind", s.issues[i].kind);
    set_str(L, "example", s.issues[i].example);
    set_str(L, "location", s.issues[i].location);
    set_int(L, "count", s.issues[i].count);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "issues");
  push_system_view(L, s.system_view);
}

}  // namespace

void push_json(lua_State* L, const nlohmann::json& v) {
  luaL_checkstack(L, 4, "nested too deep");
  if (v.is_null())
    lua_pushnil(L);
  else if (v.is_boolean())
    lua_pushboolean(L, v.get<bool>());
  else if (v.is_number_integer() || v.is_number_unsigned())
    lua_pushinteger(L, v.get<int64_t>());
  else if (v.is_number())
    lua_pushnumber(L, v.get<double>());
  else if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    lua_pushlstring(L, s.data(), s.size());
  } else if (v.is_array()) {
    lua_createtable(L, static_cast<int>(v.size()), 0);
    lua_Integer i = 0;
    for (const auto& item : v) {
      push_json(L, item);
      lua_rawseti(L, -2, ++i);
    }
  } else {
    lua_createtable(L, 0, static_cast<int>(v.size()));
    for (const auto& [k, item] : v.items()) {
      push_json(L, item);
      lua_setfield(L, -2, k.c_str());
    }
  }
}

int query_progress(void* data) {
  auto* run = static_cast<RunContext*>(data);
  if (run->budget && budget_spent(*run->budget)) return 1;
  return run->deadline != std::chrono::steady_clock::time_point{} && std::chrono::steady_clock::now() > run->deadline;
}

void open_proflint_library(lua_State* L) {
  static const luaL_Reg fns[] = {{"category", pf_category},   {"dtype", pf_dtype},
                                 {"dtypes", pf_dtypes},       {"shapes", pf_shapes},
                                 {"format_bytes", pf_format_bytes},
                                 {"format_ns", pf_format_ns}, {"format_percent", pf_format_percent},
                                 {"intersect", pf_intersect}, {"total", pf_total},
                                 {"union", pf_union},         {"uses_tensor_cores", pf_uses_tensor_cores},
                                 {"triton_kind", pf_triton_kind},
                                 {nullptr, nullptr}};
  luaL_newlib(L, fns);
  lua_setglobal(L, "proflint");
  if (luaL_newmetatable(L, kStmtMeta)) {
    lua_pushcfunction(L, stmt_finalize);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, stmt_finalize);
    lua_setfield(L, -2, "__close");
    lua_pushliteral(L, "statement");
    lua_setfield(L, -2, "__metatable");
  }
  lua_pop(L, 1);
}

void push_ctx(lua_State* L, RunContext& run, const nlohmann::json& options) {
  lua_newtable(L);
  set_int(L, "trace_id", run.trace_id);
  if (const TraceSummary* s = run.facts->summary(run.trace_id))
    push_summary(L, *s);
  else
    lua_newtable(L);
  lua_setfield(L, -2, "summary");
  push_json(L, options.is_object() && !options.empty() ? options : nlohmann::json::object());
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    lua_newtable(L);
  }
  lua_setfield(L, -2, "options");
  // Methods live in the metatable so `pairs(ctx)` shows the data and the metatable the methods.
  lua_newtable(L);
  lua_newtable(L);
  static const luaL_Reg methods[] = {
      {"below_threshold", ctx_below_threshold}, {"cpu_hotspots", ctx_cpu_hotspots}, {"has", ctx_has},
      {"host_waits", ctx_host_waits}, {"kernel_origin", ctx_kernel_origin}, {"log", ctx_log}, {"query", ctx_query},
      {"report", ctx_report}, {"rows", ctx_rows}, {"source", ctx_source}, {nullptr, nullptr}};
  for (const luaL_Reg* m = methods; m->name; ++m) {
    lua_pushlightuserdata(L, &run);
    lua_pushcclosure(L, m->func, 1);
    lua_setfield(L, -2, m->name);
  }
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
}

}  // namespace proflint::lua
