// engine/lua/sandbox.hpp — one sandboxed Lua 5.4 state per rule run.
//
// Modelled on Suricata's util-lua-sandbox: a custom lua_Alloc caps the heap, a count hook caps the
// instructions, and only base (without load, loadfile, dofile, collectgarbage, print, warn),
// string (without string.dump), table, math and utf8 are opened. pcall/xpcall are replaced so a
// rule cannot swallow the budget error and keep running. The metatables of _G and of strings are
// locked. Chunks are loaded in text mode only.
#pragma once

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
}

#include <cstdint>
#include <string>

#include "engine/config/config.hpp"

namespace proflint::lua {

// Accounting shared by the allocator and the hook; reached from any lua_State via its extra space.
struct Budget {
  int64_t memory_used = 0, memory_limit = 0;
  int64_t instructions = 0, instruction_limit = 0;
  bool memory_exceeded = false, instructions_exceeded = false;
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
// Raises a Lua error with the message, positioned at the calling Lua line (like luaL_error).
[[noreturn]] void raise(lua_State* L, const std::string& message);

}  // namespace proflint::lua
