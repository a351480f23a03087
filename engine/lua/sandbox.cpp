// engine/lua/sandbox.cpp — see sandbox.hpp.
//
// Lua reports errors with longjmp, which skips C++ destructors: functions called from Lua raise
// only after their C++ locals are gone (see raise()).
#include "engine/lua/sandbox.hpp"

#include <cstdlib>
#include <cstring>

#include "engine/common/error.hpp"

namespace proflint::lua {

namespace {

constexpr int kHookEvery = 1000;  // instructions between two budget checks

// The innermost line of the rule file being run. Reads only call-info and prototype fields, so it
// is safe from inside the allocator (used there to place out-of-memory errors).
void note_line(Budget& b) {
  lua_Debug ar;
  for (int level = 0; b.L && lua_getstack(b.L, level, &ar); ++level) {
    if (lua_getinfo(b.L, "Sl", &ar) && ar.currentline > 0 && ar.source[0] == '@') {
      b.last_line = ar.currentline;
      return;
    }
  }
}

void* limited_alloc(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* b = static_cast<Budget*>(ud);
  int64_t old = ptr ? static_cast<int64_t>(osize) : 0;
  if (nsize == 0) {
    std::free(ptr);
    b->memory_used -= old;
    return nullptr;
  }
  int64_t grow = static_cast<int64_t>(nsize) - old;
  // C functions that loop while allocating (table.concat over an __index that is a C function)
  // run no Lua instruction: the allocator looks at the clock for them.
  bool look = (++b->allocations & 255) == 0 || grow >= (1 << 20);
  if (grow > 0 && (b->deadline_exceeded || (look && b->deadline != std::chrono::steady_clock::time_point{} &&
                                            std::chrono::steady_clock::now() > b->deadline))) {
    b->deadline_exceeded = true;
    return nullptr;
  }
  if (grow > 0 && b->memory_used + grow > b->memory_limit) {
    b->memory_exceeded = true;
    note_line(*b);
    return nullptr;
  }
  void* p = std::realloc(ptr, nsize);
  if (p) b->memory_used += grow;
  return p;
}

void count_hook(lua_State* L, lua_Debug* ar) {
  Budget& b = budget_of(L);
  b.instructions += kHookEvery;
  if (!b.raised && lua_getinfo(L, "Sl", ar) && ar->currentline > 0) b.last_line = ar->currentline;
  if (budget_spent(b)) raise_budget_error(L);
}

// pcall/xpcall that re-raise once the budget is spent, so a rule cannot catch the budget error and
// loop on.
int safe_pcall(lua_State* L) {
  luaL_checkany(L, 1);
  int status = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
  if (budget_spent(budget_of(L))) raise_budget_error(L);
  lua_pushboolean(L, status == LUA_OK);
  lua_insert(L, 1);
  return lua_gettop(L);
}

// The message handler xpcall installs: the rule's handler, except for the budget error. Lua calls
// a message handler before unwinding, so for an error raised by the count hook it runs with hooks
// off: a handler that loops would never be stopped.
int xpcall_handler(lua_State* L) {
  if (budget_spent(budget_of(L))) return 1;
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

int safe_xpcall(lua_State* L) {
  int n = lua_gettop(L);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_pushvalue(L, 2);
  lua_pushcclosure(L, xpcall_handler, 1);
  lua_pushvalue(L, 1);
  lua_replace(L, 2);
  lua_replace(L, 1);  // handler, f, args...
  int status = lua_pcall(L, n - 2, LUA_MULTRET, 1);
  if (budget_spent(budget_of(L))) raise_budget_error(L);
  lua_pushboolean(L, status == LUA_OK);
  lua_replace(L, 1);
  return lua_gettop(L);
}

// setmetatable without __gc: Lua runs finalizers with hooks off (during collection and while the
// state closes), so a finalizer could loop past every limit.
int safe_setmetatable(lua_State* L) {
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_pushliteral(L, "__gc");
    if (lua_rawget(L, 2) != LUA_TNIL)
      return luaL_error(L, "__gc metamethods are not available to rules (finalizers run outside the rule's limits)");
    lua_pop(L, 1);
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

// Globals that are not defined are errors, and so is creating one: rule files keep their state in
// locals (STYLE.md), and a typo fails loudly instead of reading nil.
int strict_index(lua_State* L) {
  return luaL_error(L, "unknown global '%s'", lua_tostring(L, 2) ? lua_tostring(L, 2) : "?");
}
int strict_newindex(lua_State* L) {
  return luaL_error(L, "assignment to global '%s' (declare it local)", lua_tostring(L, 2) ? lua_tostring(L, 2) : "?");
}

// Error handler: gives every message the position of the innermost line of the rule file, and a
// text to error objects that are not strings.
int on_error(lua_State* L) {
  Budget& b = budget_of(L);
  char text[4096];  // messages longer than this are cut
  try {
    std::string where;
    lua_Debug ar;
    for (int level = 1; lua_getstack(L, level, &ar); ++level) {
      if (lua_getinfo(L, "Sl", &ar) && ar.currentline > 0 && ar.source[0] == '@') {
        where = std::string(ar.source + 1) + ":" + std::to_string(ar.currentline) + ": ";
        break;
      }
    }
    if (where.empty()) where = b.path + ":" + std::to_string(b.last_line) + ": ";
    std::string out;
    int t = lua_type(L, 1);
    if (t == LUA_TSTRING) {
      std::string msg = lua_tostring(L, 1);
      if (b.memory_exceeded && msg == "not enough memory")
        msg =
            "memory limit of " + std::to_string(b.memory_limit >> 20) + " MiB exceeded (raise [rules] memory_limit_mb)";
      // Messages Lua positioned itself start with the (possibly shortened) chunk name.
      bool positioned = msg.rfind(b.path + ":", 0) == 0 || msg.rfind("...", 0) == 0;
      out = positioned ? msg : where + msg;
    } else if (t == LUA_TNUMBER) {
      out = where + lua_tostring(L, 1);
    } else {
      out = where + "error object is a " + luaL_typename(L, 1) + " value";
    }
    std::snprintf(text, sizeof text, "%s", out.c_str());
  } catch (const std::exception&) {  // never let a C++ exception cross Lua's C frames
    std::snprintf(text, sizeof text, "%s:%d: error (out of memory while reporting it)", b.path.c_str(), b.last_line);
  }
  lua_pushstring(L, text);
  return 1;
}

}  // namespace

Budget& budget_of(lua_State* L) { return **static_cast<Budget**>(lua_getextraspace(L)); }

bool budget_spent(Budget& b) {
  if (b.instructions_exceeded || b.deadline_exceeded) return true;
  if (b.instructions > b.instruction_limit) {
    b.instructions_exceeded = true;
  } else if (b.deadline != std::chrono::steady_clock::time_point{} && std::chrono::steady_clock::now() > b.deadline) {
    b.deadline_exceeded = true;
  }
  return b.instructions_exceeded || b.deadline_exceeded;
}

namespace {
void format_budget_message(const Budget& b, char* buf, size_t size) {
  if (b.instructions_exceeded)
    std::snprintf(buf, size,
                  "%s:%d: instruction limit of %lld exceeded (a loop that never ends? raise [rules] instruction_limit)",
                  b.path.c_str(), b.last_line, static_cast<long long>(b.instruction_limit));
  else
    std::snprintf(buf, size, "%s:%d: time limit of %lld ms exceeded (raise [rules] time_limit_ms)", b.path.c_str(),
                  b.last_line, static_cast<long long>(b.time_limit_ms));
}
}  // namespace

std::string budget_message(const Budget& b) {
  char buf[1024];
  format_budget_message(b, buf, sizeof buf);
  return buf;
}

void raise_budget_error(lua_State* L) {
  Budget& b = budget_of(L);
  if (!b.raised) {
    b.raised = true;
    note_line(b);
    lua_sethook(L, count_hook, LUA_MASKCOUNT, 1);  // fail again at once if the error is caught
  }
  char buf[1024];
  format_budget_message(b, buf, sizeof buf);
  lua_pushstring(L, buf);
  lua_error(L);
  std::abort();  // not reached
}

void charge(lua_State* L, int64_t steps) {
  Budget& b = budget_of(L);
  b.instructions += steps;
  if (budget_spent(b)) raise_budget_error(L);
}

void raise(lua_State* L, const std::string& message) {
  luaL_where(L, 1);
  lua_pushlstring(L, message.data(), message.size());
  lua_concat(L, 2);
  lua_error(L);
  std::abort();  // not reached
}

Sandbox::Sandbox(const std::string& path, const RuleLimits& limits) {
  budget_.path = path;
  budget_.memory_limit = limits.memory_limit_mb << 20;
  budget_.instruction_limit = limits.instruction_limit;
  budget_.time_limit_ms = limits.time_limit_ms;
  if (limits.time_limit_ms > 0)
    budget_.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limits.time_limit_ms);
  L_ = lua_newstate(limited_alloc, &budget_);
  if (!L_) throw Error(path + ": cannot create a Lua state within the memory limit");
  *static_cast<Budget**>(lua_getextraspace(L_)) = &budget_;
  budget_.L = L_;
  lua_atpanic(L_, [](lua_State*) -> int { std::abort(); });

  static const luaL_Reg libs[] = {{LUA_GNAME, luaopen_base},
                                  {LUA_STRLIBNAME, luaopen_string},
                                  {LUA_TABLIBNAME, luaopen_table},
                                  {LUA_MATHLIBNAME, luaopen_math},
                                  {LUA_UTF8LIBNAME, luaopen_utf8}};
  for (const auto& lib : libs) {
    luaL_requiref(L_, lib.name, lib.func, 1);
    lua_pop(L_, 1);
  }
  lua_pushglobaltable(L_);
  for (const char* name : {"dofile", "loadfile", "load", "collectgarbage", "print", "warn", "require"}) {
    lua_pushnil(L_);
    lua_setfield(L_, -2, name);
  }
  lua_pushcfunction(L_, safe_pcall);
  lua_setfield(L_, -2, "pcall");
  lua_pushcfunction(L_, safe_xpcall);
  lua_setfield(L_, -2, "xpcall");
  lua_getfield(L_, -1, "setmetatable");
  lua_pushcclosure(L_, safe_setmetatable, 1);
  lua_setfield(L_, -2, "setmetatable");
  lua_getfield(L_, -1, "string");
  lua_pushnil(L_);
  lua_setfield(L_, -2, "dump");
  lua_pop(L_, 1);
  lua_pop(L_, 1);
  install_bounded_functions(L_);
  // math.random is seeded from the clock in 5.4: fix the seed so rules stay deterministic.
  luaL_dostring(L_, "math.randomseed(42)");

  // Lock the string metatable (getmetatable("") returns false) ...
  lua_pushliteral(L_, "");
  if (lua_getmetatable(L_, -1)) {
    lua_pushboolean(L_, 0);
    lua_setfield(L_, -2, "__metatable");
    lua_pop(L_, 1);
  }
  lua_pop(L_, 1);
  lua_sethook(L_, count_hook, LUA_MASKCOUNT, kHookEvery);
}

Sandbox::~Sandbox() {
  if (L_) lua_close(L_);  // finalizes open statements (their __gc)
}

bool Sandbox::load(const std::string& text, std::string& error) {
  // Lock _G after the libraries (and the helpers the host adds) are in: strict globals.
  lua_pushglobaltable(L_);
  if (!lua_getmetatable(L_, -1)) {
    lua_newtable(L_);
    lua_pushcfunction(L_, strict_index);
    lua_setfield(L_, -2, "__index");
    lua_pushcfunction(L_, strict_newindex);
    lua_setfield(L_, -2, "__newindex");
    lua_pushliteral(L_, "the global table is locked");
    lua_setfield(L_, -2, "__metatable");
    lua_setmetatable(L_, -2);
  } else {
    lua_pop(L_, 1);
  }
  lua_pop(L_, 1);
  std::string chunk = "@" + budget_.path;
  int status = luaL_loadbufferx(L_, text.data(), text.size(), chunk.c_str(), "t");
  if (status != LUA_OK) {
    error = error_text(status);
    if (error.rfind(budget_.path + ":", 0) != 0) error = budget_.path + ":1: " + error;  // e.g. a binary chunk
    lua_pop(L_, 1);
    return false;
  }
  return true;
}

bool Sandbox::call(int nargs, int nresults, std::string& error) {
  int base = lua_gettop(L_) - nargs;  // the function's index
  lua_pushcfunction(L_, on_error);
  lua_insert(L_, base);
  int status = lua_pcall(L_, nargs, nresults, base);
  lua_remove(L_, base);
  if (status == LUA_OK) return true;
  // The budget message when the budget error was raised, or when the allocator refused memory
  // because the deadline had passed; any other error keeps its own words.
  bool budget = budget_.raised || (status == LUA_ERRMEM && budget_.deadline_exceeded);
  error = budget ? budget_message(budget_) : error_text(status);
  lua_pop(L_, 1);
  return false;
}

std::string Sandbox::error_text(int status) {
  std::string msg;
  if (lua_type(L_, -1) == LUA_TSTRING) msg = lua_tostring(L_, -1);
  if (status == LUA_ERRMEM || (budget_.memory_exceeded && (msg.empty() || msg == "not enough memory"))) {
    return budget_.path + ":" + std::to_string(budget_.last_line) + ": memory limit of " +
           std::to_string(budget_.memory_limit >> 20) + " MiB exceeded (raise [rules] memory_limit_mb)";
  }
  if (msg.empty()) msg = budget_.path + ": error (" + std::string(luaL_typename(L_, -1)) + " error object)";
  // Lua shortens long chunk names to "...tail"; show the whole path.
  if (msg.rfind("...", 0) == 0) {
    size_t colon = msg.find(':');
    std::string tail = msg.substr(3, colon == std::string::npos ? 0 : colon - 3);
    if (!tail.empty() && budget_.path.size() >= tail.size() &&
        budget_.path.compare(budget_.path.size() - tail.size(), tail.size(), tail) == 0)
      msg = budget_.path + msg.substr(colon);
  }
  return msg;
}

}  // namespace proflint::lua
