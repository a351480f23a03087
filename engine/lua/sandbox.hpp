// engine/lua/sandbox.hpp — one sandboxed Lua 5.4 state per rule run.
//
// Modelled on Suricata's util-lua-sandbox: a custom lua_Alloc caps the heap, a count hook caps the
// instructions, and only base (without load, loadfile, dofile, collectgarbage, print, warn),
// string (without string.dump), table, math and utf8 are opened. The metatables of _G and of
// strings are locked. Chunks are loaded in text mode only.
//
// A wall-clock deadline ([rules] time_limit_ms) holds whatever the rule does: it is checked by the
// count hook, by the allocator, by SQLite's progress handler (api.cpp) and inside the C functions
// that can loop without running Lua code (string.rep, table.move and the string-pattern functions
// are replaced by bounded versions, bounded.cpp). Once the budget is spent the hook fails on every
// instruction, pcall/xpcall re-raise, xpcall no longer calls the rule's message handler (Lua runs
// it with hooks off when the error comes from the hook), and setmetatable refuses `__gc` (Lua runs
// finalizers with hooks off, also while closing the state), so nothing the rule wrote can run
// unbounded.
#pragma once

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
}

#include <chrono>
#include <cstdint>
#include <string>

#include "engine/config/config.hpp"

namespace proflint::lua {

// Accounting shared by the allocator and the hook; reached from any lua_State via its extra space.
struct Budget {
  int64_t memory_used = 0, memory_limit = 0;
  int64_t instructions = 0, instruction_limit = 0;
  bool memory_exceeded = false, instructions_exceeded = false, deadline_exceeded = false;
  int64_t time_limit_ms = 0;
  std::chrono::steady_clock::time_point deadline{};  // of the whole rule run (load, evaluate, close)
  uint32_t allocations = 0;                          // the allocator looks at the clock now and then
  bool raised = false;     // the budget error was raised (last_line no longer moves)
  int last_line = 0;       // last line of a Lua function seen by the hook (for out-of-memory messages)
  std::string path;        // the rule file
  lua_State* L = nullptr;  // the main thread, once created
};

class Sandbox {
 public:
  Sandbox(const std::string& path, const RuleLimits& limits);
  ~Sandbox();
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  lua_State* L() const { return L_; }
  Budget& budget() { return budget_; }

  // Loads `text` as chunk `@path` (text mode only). On failure returns false and sets `error`.
  bool load(const std::string& text, std::string& error);
  // Calls the function below `nargs` arguments on the stack with the error handler; on success
  // leaves `nresults` values and returns true; otherwise sets `error` to "path:LINE: message".
  bool call(int nargs, int nresults, std::string& error);

 private:
  std::string error_text(int status);
  Budget budget_;
  lua_State* L_ = nullptr;
};

Budget& budget_of(lua_State* L);
// True once the instruction budget or the deadline is spent (looks at the clock).
bool budget_spent(Budget& b);
// The message of the spent budget: "path:LINE: instruction limit of N exceeded (…)" or the deadline's.
std::string budget_message(const Budget& b);
// Counts `steps` units of work done in C against the instruction budget and checks the deadline;
// raises the budget error when either is spent. Callers hold no C++ objects that need destructors.
void charge(lua_State* L, int64_t steps);
// Raises the budget error (the hook keeps raising it on every instruction afterwards).
[[noreturn]] void raise_budget_error(lua_State* L);
// Replaces string.rep, table.move, string.find/match/gmatch/gsub with versions that charge their
// work (bounded.cpp).
void install_bounded_functions(lua_State* L);
// Raises a Lua error with the message, positioned at the calling Lua line (like luaL_error).
[[noreturn]] void raise(lua_State* L, const std::string& message);

}  // namespace proflint::lua
