// engine/lua/bounded.cpp — string and table functions whose work counts against the rule's budget.
//
// Lua's own string.rep, table.move/insert/remove/concat and string-pattern functions can run for
// hours inside C without executing one Lua instruction, so neither the count hook nor the deadline
// would see them:
// string.rep("", 1e15) copies zero bytes 10^15 times, table.move(t, 1, 1e15, 2) moves 10^15 nils,
// and a pattern such as ".-.-.-b" backtracks in O(n^4) over a string without a "b". The versions
// here give the results and error messages of Lua 5.4's for valid calls and call charge() every
// few thousand steps, which raises the budget error once the instruction budget or the deadline is
// spent. Everything that lives across a charge() is plain data: a Lua error unwinds with longjmp.
#include <cctype>
#include <climits>
#include <cstring>

#include "engine/lua/sandbox.hpp"

namespace proflint::lua {

namespace {

constexpr int64_t kChargeEvery = 4096;  // steps between two looks at the budget
constexpr int kMaxCaptures = 32;        // as LUA_MAXCAPTURES
constexpr int kMaxRecursion = 200;      // as Lua's MAXCCALLS for patterns
constexpr ptrdiff_t kUnfinished = -1;   // capture opened, not closed yet
constexpr ptrdiff_t kPosition = -2;     // position capture "()"

inline int byte_at(const char* p) { return static_cast<unsigned char>(*p); }

// ---------------------------------------------------------------- pattern matching
struct Capture {
  const char* start;
  ptrdiff_t len;  // or kUnfinished / kPosition
};

struct Matcher {
  lua_State* L;
  const char* subject;
  const char* subject_end;
  const char* pattern_end;
  int recursion_left;
  int level;  // captures in use
  int64_t steps;
  Capture capture[kMaxCaptures];
};

void start_matcher(Matcher& m, lua_State* L, const char* s, size_t ls, const char* p, size_t lp) {
  m.L = L;
  m.subject = s;
  m.subject_end = s + ls;
  m.pattern_end = p + lp;
  m.steps = 0;
}

void reset_matcher(Matcher& m) {
  m.level = 0;
  m.recursion_left = kMaxRecursion;
}

void tick(Matcher& m) {
  if (++m.steps >= kChargeEvery) {
    int64_t n = m.steps;
    m.steps = 0;
    charge(m.L, n);
  }
}

void settle(Matcher& m) {
  int64_t n = m.steps;
  m.steps = 0;
  charge(m.L, n);
}

// One past the single-character class that starts at p ("x", "%d", "[a-z]").
const char* class_end(Matcher& m, const char* p) {
  char c = *p++;
  if (c == '%') {
    if (p >= m.pattern_end) luaL_error(m.L, "malformed pattern (ends with '%%')");
    return p + 1;
  }
  if (c == '[') {
    if (*p == '^') ++p;
    // The first character of a set is part of it even when it is ']'.
    do {
      if (p >= m.pattern_end) luaL_error(m.L, "malformed pattern (missing ']')");
      c = *p++;
      if (c == '%' && p < m.pattern_end) ++p;
    } while (*p != ']');
    return p + 1;
  }
  return p;
}

bool in_class(int c, int cls) {
  bool yes;
  switch (std::tolower(cls)) {
    case 'a': yes = std::isalpha(c); break;
    case 'c': yes = std::iscntrl(c); break;
    case 'd': yes = std::isdigit(c); break;
    case 'g': yes = std::isgraph(c); break;
    case 'l': yes = std::islower(c); break;
    case 'p': yes = std::ispunct(c); break;
    case 's': yes = std::isspace(c); break;
    case 'u': yes = std::isupper(c); break;
    case 'w': yes = std::isalnum(c); break;
    case 'x': yes = std::isxdigit(c); break;
    default: return cls == c;  // "%." and the like: the character itself
  }
  return std::isupper(cls) ? !yes : yes;
}

// Whether c is in the set [..] that starts at `open` and whose ']' is at `close`.
bool in_set(int c, const char* open, const char* close) {
  const char* p = open + 1;
  bool wanted = true;
  if (*p == '^') {
    wanted = false;
    ++p;
  }
  while (p < close) {
    if (*p == '%') {
      if (in_class(c, byte_at(p + 1))) return wanted;
      p += 2;
    } else if (p[1] == '-' && p + 2 < close) {
      if (byte_at(p) <= c && c <= byte_at(p + 2)) return wanted;
      p += 3;
    } else {
      if (byte_at(p) == c) return wanted;
      ++p;
    }
  }
  return !wanted;
}

// Whether the subject character at s matches the class p..ep.
bool single(const Matcher& m, const char* s, const char* p, const char* ep) {
  if (s >= m.subject_end) return false;
  int c = byte_at(s);
  switch (*p) {
    case '.': return true;
    case '%': return in_class(c, byte_at(p + 1));
    case '[': return in_set(c, p, ep - 1);
    default: return byte_at(p) == c;
  }
}

const char* match(Matcher& m, const char* s, const char* p);

const char* greedy(Matcher& m, const char* s, const char* p, const char* ep) {
  ptrdiff_t n = 0;
  while (single(m, s + n, p, ep)) {
    ++n;
    tick(m);
  }
  for (; n >= 0; --n) {
    if (const char* r = match(m, s + n, ep + 1)) return r;
  }
  return nullptr;
}

const char* lazy(Matcher& m, const char* s, const char* p, const char* ep) {
  while (true) {
    if (const char* r = match(m, s, ep + 1)) return r;
    if (!single(m, s, p, ep)) return nullptr;
    ++s;
  }
}

const char* open_capture(Matcher& m, const char* s, const char* p, ptrdiff_t kind) {
  if (m.level >= kMaxCaptures) luaL_error(m.L, "too many captures");
  m.capture[m.level] = {s, kind};
  ++m.level;
  const char* r = match(m, s, p);
  if (!r) --m.level;
  return r;
}

const char* close_capture(Matcher& m, const char* s, const char* p) {
  int open = m.level - 1;
  while (open >= 0 && m.capture[open].len != kUnfinished) --open;
  if (open < 0) luaL_error(m.L, "invalid pattern capture");
  m.capture[open].len = s - m.capture[open].start;
  const char* r = match(m, s, p);
  if (!r) m.capture[open].len = kUnfinished;
  return r;
}

const char* balanced(Matcher& m, const char* s, const char* p) {
  if (p + 1 >= m.pattern_end) luaL_error(m.L, "malformed pattern (missing arguments to '%%b')");
  if (s >= m.subject_end || *s != *p) return nullptr;
  char open = p[0], close = p[1];
  int depth = 1;
  while (++s < m.subject_end) {
    tick(m);
    if (*s == close) {
      if (--depth == 0) return s + 1;
    } else if (*s == open) {
      ++depth;
    }
  }
  return nullptr;
}

const char* back_reference(Matcher& m, const char* s, int digit) {
  int i = digit - '1';
  if (i < 0 || i >= m.level || m.capture[i].len == kUnfinished)
    luaL_error(m.L, "invalid capture index %%%d", i + 1);
  auto len = static_cast<size_t>(m.capture[i].len);
  if (static_cast<size_t>(m.subject_end - s) >= len && std::memcmp(m.capture[i].start, s, len) == 0) {
    m.steps += static_cast<int64_t>(len / 64);
    return s + len;
  }
  return nullptr;
}

// The end of the match of pattern p at subject position s, or nullptr.
const char* match(Matcher& m, const char* s, const char* p) {
  if (m.recursion_left-- == 0) luaL_error(m.L, "pattern too complex");
  while (true) {
    tick(m);
    if (p == m.pattern_end) break;
    if (*p == '(') {
      s = p[1] == ')' ? open_capture(m, s, p + 2, kPosition) : open_capture(m, s, p + 1, kUnfinished);
      break;
    }
    if (*p == ')') {
      s = close_capture(m, s, p + 1);
      break;
    }
    if (*p == '$' && p + 1 == m.pattern_end) {
      if (s != m.subject_end) s = nullptr;
      break;
    }
    if (*p == '%' && p[1] == 'b') {
      s = balanced(m, s, p + 2);
      if (!s) break;
      p += 4;
      continue;
    }
    if (*p == '%' && p[1] == 'f') {
      p += 2;
      if (*p != '[') luaL_error(m.L, "missing '[' after '%%f' in pattern");
      const char* ep = class_end(m, p);
      int before = s == m.subject ? 0 : byte_at(s - 1);
      int here = s < m.subject_end ? byte_at(s) : 0;
      if (!in_set(before, p, ep - 1) && in_set(here, p, ep - 1)) {
        p = ep;
        continue;
      }
      s = nullptr;
      break;
    }
    if (*p == '%' && std::isdigit(byte_at(p + 1))) {
      s = back_reference(m, s, byte_at(p + 1));
      if (!s) break;
      p += 2;
      continue;
    }
    const char* ep = class_end(m, p);
    if (!single(m, s, p, ep)) {
      if (*ep == '*' || *ep == '?' || *ep == '-') {  // zero repetitions are fine
        p = ep + 1;
        continue;
      }
      s = nullptr;
      break;
    }
    if (*ep == '?') {
      if (const char* r = match(m, s + 1, ep + 1)) {
        s = r;
        break;
      }
      p = ep + 1;
      continue;
    }
    if (*ep == '+') {
      s = greedy(m, s + 1, p, ep);
      break;
    }
    if (*ep == '*') {
      s = greedy(m, s, p, ep);
      break;
    }
    if (*ep == '-') {
      s = lazy(m, s, p, ep);
      break;
    }
    ++s;
    p = ep;
  }
  ++m.recursion_left;
  return s;
}

// Pushes capture i; with no captures, capture 0 is the whole match s..e.
void push_capture(Matcher& m, int i, const char* s, const char* e) {
  if (i >= m.level) {
    if (i != 0) luaL_error(m.L, "invalid capture index %%%d", i + 1);
    lua_pushlstring(m.L, s, static_cast<size_t>(e - s));
    return;
  }
  ptrdiff_t len = m.capture[i].len;
  if (len == kUnfinished) luaL_error(m.L, "unfinished capture");
  if (len == kPosition)
    lua_pushinteger(m.L, static_cast<lua_Integer>(m.capture[i].start - m.subject) + 1);
  else
    lua_pushlstring(m.L, m.capture[i].start, static_cast<size_t>(len));
}

// Pushes every capture (or the whole match when there are none and s is given); returns how many.
int push_captures(Matcher& m, const char* s, const char* e) {
  int n = m.level == 0 && s ? 1 : m.level;
  luaL_checkstack(m.L, n, "too many captures");
  for (int i = 0; i < n; ++i) push_capture(m, i, s, e);
  return n;
}

// Lua's rule for a start position: negative counts from the end, 0 and below the start mean 1.
size_t start_index(lua_Integer pos, size_t len) {
  if (pos > 0) return static_cast<size_t>(pos);
  if (pos == 0 || pos < -static_cast<lua_Integer>(len)) return 1;
  return len + static_cast<size_t>(pos) + 1;
}

bool has_specials(const char* p, size_t lp) {
  static const char specials[] = "^$*+?.([%-";
  for (size_t i = 0; i < lp; ++i)
    if (p[i] != '\0' && std::strchr(specials, p[i])) return true;
  return false;
}

// memmem that charges its work: a needle of 10^4 bytes in 10^8 bytes of near-misses is 10^12 steps.
const char* plain_find(lua_State* L, const char* s, size_t ls, const char* p, size_t lp) {
  if (lp == 0) return s;
  if (lp > ls) return nullptr;
  const char* last = s + (ls - lp);
  int64_t work = 0;
  for (const char* at = s; at <= last;) {
    auto* hit = static_cast<const char*>(std::memchr(at, p[0], static_cast<size_t>(last - at) + 1));
    if (!hit) break;
    work += static_cast<int64_t>(lp / 32 + 1 + static_cast<size_t>(hit - at) / 256);
    if (std::memcmp(hit + 1, p + 1, lp - 1) == 0) {
      charge(L, work);
      return hit;
    }
    if (work >= kChargeEvery) {
      charge(L, work);
      work = 0;
    }
    at = hit + 1;
  }
  charge(L, work + static_cast<int64_t>(ls / 256));
  return nullptr;
}

int find_or_match(lua_State* L, bool find) {
  size_t ls = 0, lp = 0;
  const char* s = luaL_checklstring(L, 1, &ls);
  const char* p = luaL_checklstring(L, 2, &lp);
  size_t init = start_index(luaL_optinteger(L, 3, 1), ls) - 1;
  if (init > ls) {
    lua_pushnil(L);
    return 1;
  }
  if (find && (lua_toboolean(L, 4) || !has_specials(p, lp))) {
    if (const char* hit = plain_find(L, s + init, ls - init, p, lp)) {
      lua_pushinteger(L, static_cast<lua_Integer>(hit - s) + 1);
      lua_pushinteger(L, static_cast<lua_Integer>(hit - s + lp));
      return 2;
    }
    lua_pushnil(L);
    return 1;
  }
  bool anchored = lp > 0 && *p == '^';
  if (anchored) {
    ++p;
    --lp;
  }
  Matcher m;
  start_matcher(m, L, s, ls, p, lp);
  for (const char* at = s + init;; ++at) {
    reset_matcher(m);
    if (const char* e = match(m, at, p)) {
      settle(m);
      if (!find) return push_captures(m, at, e);
      lua_pushinteger(L, static_cast<lua_Integer>(at - s) + 1);
      lua_pushinteger(L, static_cast<lua_Integer>(e - s));
      return push_captures(m, nullptr, nullptr) + 2;
    }
    if (anchored || at >= m.subject_end) break;
  }
  settle(m);
  lua_pushnil(L);
  return 1;
}

int b_find(lua_State* L) { return find_or_match(L, true); }
int b_match(lua_State* L) { return find_or_match(L, false); }

struct GmatchState {
  Matcher m;
  const char* next;        // where the next search starts
  const char* last_match;  // end of the previous match (an empty match there is skipped)
  const char* pattern;
};

int gmatch_step(lua_State* L) {
  auto* g = static_cast<GmatchState*>(lua_touserdata(L, lua_upvalueindex(3)));
  g->m.L = L;
  for (const char* at = g->next; at <= g->m.subject_end; ++at) {
    reset_matcher(g->m);
    const char* e = match(g->m, at, g->pattern);
    if (e && e != g->last_match) {
      g->next = g->last_match = e;
      settle(g->m);
      return push_captures(g->m, at, e);
    }
  }
  settle(g->m);
  return 0;
}

int b_gmatch(lua_State* L) {
  size_t ls = 0, lp = 0;
  const char* s = luaL_checklstring(L, 1, &ls);
  const char* p = luaL_checklstring(L, 2, &lp);
  size_t init = start_index(luaL_optinteger(L, 3, 1), ls) - 1;
  if (init > ls) init = ls + 1;
  lua_settop(L, 2);  // the closure keeps both strings alive
  auto* g = static_cast<GmatchState*>(lua_newuserdatauv(L, sizeof(GmatchState), 0));
  start_matcher(g->m, L, s, ls, p, lp);
  g->next = s + init;
  g->last_match = nullptr;
  g->pattern = p;
  lua_pushcclosure(L, gmatch_step, 3);
  return 1;
}

// Appends the replacement string (argument 3) with %0..%9 and %% expanded.
void add_template(Matcher& m, luaL_Buffer& b, const char* s, const char* e) {
  size_t n = 0;
  const char* t = lua_tolstring(m.L, 3, &n);
  const char* end = t + n;
  while (t < end) {
    auto* pct = static_cast<const char*>(std::memchr(t, '%', static_cast<size_t>(end - t)));
    if (!pct) {
      luaL_addlstring(&b, t, static_cast<size_t>(end - t));
      break;
    }
    luaL_addlstring(&b, t, static_cast<size_t>(pct - t));
    char c = pct + 1 < end ? pct[1] : '\0';
    if (c == '%') {
      luaL_addchar(&b, '%');
    } else if (c == '0') {
      luaL_addlstring(&b, s, static_cast<size_t>(e - s));
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      push_capture(m, c - '1', s, e);
      luaL_addvalue(&b);  // a position capture is a number: added as its text
    } else {
      luaL_error(m.L, "invalid use of '%%' in replacement string");
    }
    t = pct + 2;
  }
}

// Appends the replacement of the match s..e; false when the match was kept unchanged.
bool add_replacement(Matcher& m, luaL_Buffer& b, const char* s, const char* e, int kind) {
  lua_State* L = m.L;
  if (kind == LUA_TFUNCTION) {
    lua_pushvalue(L, 3);
    int n = push_captures(m, s, e);
    lua_call(L, n, 1);
  } else if (kind == LUA_TTABLE) {
    push_capture(m, 0, s, e);
    lua_gettable(L, 3);
  } else {
    add_template(m, b, s, e);
    return true;
  }
  if (!lua_toboolean(L, -1)) {
    lua_pop(L, 1);
    luaL_addlstring(&b, s, static_cast<size_t>(e - s));
    return false;
  }
  if (!lua_isstring(L, -1)) luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
  luaL_addvalue(&b);
  return true;
}

int b_gsub(lua_State* L) {
  size_t ls = 0, lp = 0;
  const char* s = luaL_checklstring(L, 1, &ls);
  const char* p = luaL_checklstring(L, 2, &lp);
  int kind = lua_type(L, 3);
  lua_Integer max_n = luaL_optinteger(L, 4, static_cast<lua_Integer>(ls) + 1);
  luaL_argexpected(L, kind == LUA_TNUMBER || kind == LUA_TSTRING || kind == LUA_TFUNCTION || kind == LUA_TTABLE, 3,
                   "string/function/table");
  bool anchored = lp > 0 && *p == '^';
  if (anchored) {
    ++p;
    --lp;
  }
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  Matcher m;
  start_matcher(m, L, s, ls, p, lp);
  const char* at = s;
  const char* last_match = nullptr;
  lua_Integer count = 0;
  bool changed = false;
  while (count < max_n) {
    reset_matcher(m);
    const char* e = match(m, at, p);
    if (e && e != last_match) {
      ++count;
      changed = add_replacement(m, b, at, e, kind) || changed;
      at = last_match = e;
    } else if (at < m.subject_end) {
      luaL_addchar(&b, *at++);
    } else {
      break;
    }
    if (anchored) break;
  }
  settle(m);
  if (changed) {
    luaL_addlstring(&b, at, static_cast<size_t>(m.subject_end - at));
    luaL_pushresult(&b);
  } else {
    lua_pushvalue(L, 1);
  }
  lua_pushinteger(L, count);
  return 2;
}

// ---------------------------------------------------------------- string.rep, table.move
int b_rep(lua_State* L) {
  size_t l = 0, lsep = 0;
  luaL_checklstring(L, 1, &l);
  lua_Integer n = luaL_checkinteger(L, 2);
  luaL_optlstring(L, 3, "", &lsep);
  if (n <= 0 || l + lsep == 0) {  // Lua's own would copy nothing n times
    lua_pushliteral(L, "");
    return 1;
  }
  if (l + lsep <= static_cast<size_t>(INT_MAX) / static_cast<size_t>(n)) charge(L, n / 4096);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

int b_move(lua_State* L) {
  lua_Integer f = luaL_checkinteger(L, 2);
  lua_Integer e = luaL_checkinteger(L, 3);
  lua_Integer t = luaL_checkinteger(L, 4);
  int dest = lua_isnoneornil(L, 5) ? 1 : 5;
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, dest, LUA_TTABLE);
  if (e >= f) {
    luaL_argcheck(L, f > 0 || e < LUA_MAXINTEGER + f, 3, "too many elements to move");
    lua_Integer n = e - f + 1;
    luaL_argcheck(L, t <= LUA_MAXINTEGER - n + 1, 4, "destination wrap around");
    bool forward = t > e || t <= f || (dest != 1 && !lua_compare(L, 1, dest, LUA_OPEQ));
    int64_t steps = 0;
    for (lua_Integer i = 0; i < n; ++i) {
      lua_Integer k = forward ? i : n - 1 - i;
      lua_geti(L, 1, f + k);
      lua_seti(L, dest, t + k);
      if (++steps >= kChargeEvery) {
        charge(L, steps);
        steps = 0;
      }
    }
    charge(L, steps);
  }
  lua_pushvalue(L, dest);
  return 1;
}

// table.insert, table.remove and table.concat loop over #t, which a __len metamethod can make
// 2^50 without a table that large (__len = rawget on a table holding t[t] = 2^50).
class Steps {
 public:
  explicit Steps(lua_State* L) : L_(L) {}
  void tick() {
    if (++n_ >= kChargeEvery) settle();
  }
  void settle() {
    int64_t n = n_;
    n_ = 0;
    charge(L_, n);
  }

 private:
  lua_State* L_;
  int64_t n_ = 0;
};

int b_insert(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_Integer end = luaL_len(L, 1) + 1;  // first empty slot
  lua_Integer pos = end;
  Steps steps(L);
  switch (lua_gettop(L)) {
    case 2:
      break;
    case 3:
      pos = luaL_checkinteger(L, 2);
      luaL_argcheck(L, static_cast<lua_Unsigned>(pos) - 1u < static_cast<lua_Unsigned>(end), 2,
                    "position out of bounds");
      for (lua_Integer i = end; i > pos; --i) {
        lua_geti(L, 1, i - 1);
        lua_seti(L, 1, i);
        steps.tick();
      }
      break;
    default:
      return luaL_error(L, "wrong number of arguments to 'insert'");
  }
  steps.settle();
  lua_seti(L, 1, pos);
  return 0;
}

int b_remove(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_Integer size = luaL_len(L, 1);
  lua_Integer pos = luaL_optinteger(L, 2, size);
  if (pos != size)
    luaL_argcheck(L, static_cast<lua_Unsigned>(pos) - 1u <= static_cast<lua_Unsigned>(size), 2,
                  "position out of bounds");
  lua_geti(L, 1, pos);
  Steps steps(L);
  for (; pos < size; ++pos) {
    lua_geti(L, 1, pos + 1);
    lua_seti(L, 1, pos);
    steps.tick();
  }
  steps.settle();
  lua_pushnil(L);
  lua_seti(L, 1, pos);
  return 1;
}

int b_concat(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  size_t lsep = 0;
  const char* sep = luaL_optlstring(L, 2, "", &lsep);
  lua_Integer i = luaL_optinteger(L, 3, 1);
  lua_Integer last = lua_isnoneornil(L, 4) ? luaL_len(L, 1) : luaL_checkinteger(L, 4);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  Steps steps(L);
  for (; i <= last; ++i) {
    lua_geti(L, 1, i);
    if (!lua_isstring(L, -1))
      luaL_error(L, "invalid value (at index %I) in table for 'concat'", static_cast<LUAI_UACINT>(i));
    luaL_addvalue(&b);
    if (i != last) luaL_addlstring(&b, sep, lsep);
    steps.tick();
    if (i == LUA_MAXINTEGER) break;
  }
  steps.settle();
  luaL_pushresult(&b);
  return 1;
}

void replace_field(lua_State* L, const char* name, lua_CFunction fn, bool keep_original) {
  if (keep_original) {
    lua_getfield(L, -1, name);
    lua_pushcclosure(L, fn, 1);
  } else {
    lua_pushcfunction(L, fn);
  }
  lua_setfield(L, -2, name);
}

}  // namespace

void install_bounded_functions(lua_State* L) {
  lua_getglobal(L, "string");
  replace_field(L, "rep", b_rep, true);
  replace_field(L, "find", b_find, false);
  replace_field(L, "match", b_match, false);
  replace_field(L, "gmatch", b_gmatch, false);
  replace_field(L, "gsub", b_gsub, false);
  lua_pop(L, 1);
  lua_getglobal(L, "table");
  replace_field(L, "move", b_move, false);
  replace_field(L, "insert", b_insert, false);
  replace_field(L, "remove", b_remove, false);
  replace_field(L, "concat", b_concat, false);
  lua_pop(L, 1);
}

}  // namespace proflint::lua
