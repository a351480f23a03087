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

// What ctx's methods need; lives on the C++ stack for the duration of one evaluate(ctx).
struct RunContext {
  const Facts* facts = nullptr;
  int64_t trace_id = 0;
  std::string rule_id, title, path;
  std::optional<Severity> severity;
  std::chrono::milliseconds query_time_limit{20000};
  std::chrono::steady_clock::time_point deadline{};
  FindingSink* sink = nullptr;
};

// Pushes the ctx table for one trace: trace_id, summary, options and the methods.
void push_ctx(lua_State* L, RunContext& run, const nlohmann::json& options);

// Lua value <-> JSON (options, evidence). Tables with keys 1..n are arrays; other tables are
// objects with their keys sorted (Lua's own order is not deterministic).
void push_json(lua_State* L, const nlohmann::json& value);

}  // namespace proflint::lua
