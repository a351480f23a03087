// engine/lua/api.hpp — what a rule sees: the `proflint` helper library and the `ctx` object.
// Documented in docs/lua-api.md; tests/lua/api_surface_test.cpp keeps the two in step.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/analysis/facts.hpp"
#include "engine/analysis/finding.hpp"
#include "engine/lua/sandbox.hpp"

namespace proflint::lua {

// Installs the global `proflint` table (intervals, formatting, kernel classification).
void open_proflint_library(lua_State* L);

struct SqliteMemoryScope;

// What ctx's methods need; lives on the C++ stack for the duration of one evaluate(ctx).
struct RunContext {
  const Facts* facts = nullptr;
  int64_t trace_id = 0;
  std::string rule_id, title, path;
  std::optional<Severity> severity;
  std::chrono::milliseconds query_time_limit{20000};
  std::chrono::steady_clock::time_point deadline{};  // of the SQLite step under way
  Budget* budget = nullptr;                          // the rule's instructions and deadline
  SqliteMemoryScope* sqlite_memory = nullptr;        // SQLite memory of the rule's queries
  FindingSink* sink = nullptr;
  int64_t max_findings = 1000;  // ctx:report calls beyond this are counted, not kept
  int64_t reported = 0, dropped = 0;
  int log_lines = 0;  // ctx:log lines written
};

// While alive, SQLite memory allocated on this thread counts against `limit` bytes; past it SQLite
// gets no more memory and the statement fails with SQLITE_NOMEM (sqlite_memory.cpp). Used around a
// rule's run, on the rule's own connection.
struct SqliteMemoryScope {
  explicit SqliteMemoryScope(int64_t limit_bytes);
  ~SqliteMemoryScope();
  SqliteMemoryScope(const SqliteMemoryScope&) = delete;
  SqliteMemoryScope& operator=(const SqliteMemoryScope&) = delete;
  int64_t used = 0, limit = 0;
  bool exceeded = false;

 private:
  SqliteMemoryScope* outer_;
};
// False when SQLite was initialized before the allocator could be wrapped (then there is no cap).
bool sqlite_memory_cap_available();

// SQLite progress handler for rule queries (data: the RunContext): stops a statement at the query
// time limit or when the rule's budget is spent.
int query_progress(void* data);

// Pushes the ctx table for one trace: trace_id, summary, options and the methods.
void push_ctx(lua_State* L, RunContext& run, const nlohmann::json& options);

// Lua value <-> JSON (options, evidence). Tables with keys 1..n are arrays; other tables are
// objects with their keys sorted (Lua's own order is not deterministic).
void push_json(lua_State* L, const nlohmann::json& value);

}  // namespace proflint::lua
