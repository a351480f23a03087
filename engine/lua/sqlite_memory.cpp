// engine/lua/sqlite_memory.cpp — see SqliteMemoryScope in api.hpp.
//
// SQLite has no per-connection memory limit (sqlite3_hard_heap_limit64 is process-wide, so one
// rule would fail the detectors running beside it). Instead SQLite's allocator is wrapped once, at
// start-up, and allocations made on a thread while a scope is open there count against that
// scope: rules run one at a time per thread, each on its own connection, so this is the memory
// SQLite spends on the rule's queries (values, sorters, temporary b-trees, page cache growth).
#include <sqlite3.h>

#include "engine/lua/api.hpp"

namespace proflint::lua {

namespace {

sqlite3_mem_methods g_default{};
thread_local SqliteMemoryScope* t_scope = nullptr;

int64_t size_of(void* p) { return p ? g_default.xSize(p) : 0; }

void* counted_malloc(int n) {
  SqliteMemoryScope* s = t_scope;
  if (!s) return g_default.xMalloc(n);
  if (s->used + n > s->limit) {
    s->exceeded = true;
    return nullptr;
  }
  void* p = g_default.xMalloc(n);
  s->used += size_of(p);
  return p;
}

void counted_free(void* p) {
  if (SqliteMemoryScope* s = t_scope) s->used -= size_of(p);
  g_default.xFree(p);
}

void* counted_realloc(void* p, int n) {
  SqliteMemoryScope* s = t_scope;
  if (!s) return g_default.xRealloc(p, n);
  int64_t old = size_of(p);
  if (s->used - old + n > s->limit) {
    s->exceeded = true;
    return nullptr;
  }
  void* q = g_default.xRealloc(p, n);
  if (q) s->used += size_of(q) - old;
  return q;
}

// Before main(): sqlite3_config only works before SQLite initializes itself.
const bool g_installed = [] {
  if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &g_default) != SQLITE_OK || !g_default.xMalloc) return false;
  sqlite3_mem_methods counted = g_default;
  counted.xMalloc = counted_malloc;
  counted.xFree = counted_free;
  counted.xRealloc = counted_realloc;
  return sqlite3_config(SQLITE_CONFIG_MALLOC, &counted) == SQLITE_OK;
}();

}  // namespace

bool sqlite_memory_cap_available() { return g_installed; }

SqliteMemoryScope::SqliteMemoryScope(int64_t limit_bytes) : limit(limit_bytes), outer_(t_scope) {
  if (g_installed) t_scope = this;
}

SqliteMemoryScope::~SqliteMemoryScope() {
  if (g_installed) t_scope = outer_;
}

}  // namespace proflint::lua
