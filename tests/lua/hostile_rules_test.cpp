// tests/lua/hostile_rules_test.cpp — rules that try to hang, exhaust memory, escape the sandbox
// or write the store: each must end in a clear rule-error diagnostic, in bounded time, with the
// store and the file system unchanged and the other rules still run.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "tests/lua/lua_support.hpp"

using namespace proflint;
using namespace proflint::testing;

namespace {

int64_t kernel_rows(Store& store) {
  SQLite::Statement q(store.db(), "SELECT count(*) FROM _kernel");
  q.executeStep();
  return q.getColumn(0).getInt64();
}

// Runs `body` as the evaluate function of rule hostile.lua next to a well-behaved rule, and returns
// the rule-error problem text (empty when there was none).
std::string hostile(const std::string& body, RuleLimits limits = {}, double max_seconds = 10) {
  Store& store = sample_store();
  int64_t before = kernel_rows(store);
  auto start = std::chrono::steady_clock::now();
  auto r = run_rules(store,
                     {rule("rules/hostile.lua", rule_text("hostile", body)),
                      rule("rules/good.lua", rule_text("good", "ctx:report{ problem = 'still ran' }"))},
                     limits);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, max_seconds) << body;
  EXPECT_EQ(kernel_rows(store), before) << "the store changed";
  EXPECT_EQ(with_id(r, "good").size(), 1u) << "the other rule must still run";
  EXPECT_TRUE(with_id(r, "hostile").empty());
  auto errors = with_id(r, "rule-error");
  if (errors.empty()) return "";
  EXPECT_EQ(errors.size(), 1u);
  EXPECT_TRUE(errors[0].diagnostic);
  EXPECT_EQ(errors[0].source, "rules/hostile.lua");
  return errors[0].problem;
}

RuleLimits small() {
  RuleLimits l;
  l.instruction_limit = 2'000'000;
  l.memory_limit_mb = 32;
  return l;
}

}  // namespace

TEST(LuaHostile, InfiniteLoopHitsTheInstructionLimit) {
  EXPECT_EQ(hostile("    while true do end", small()),
            "rules/hostile.lua:5: instruction limit of 2000000 exceeded (a loop that never ends? raise [rules] "
            "instruction_limit)");
}

TEST(LuaHostile, CatchingTheBudgetErrorDoesNotHelp) {
  auto msg = hostile("    while true do pcall(function() while true do end end) end", small());
  EXPECT_NE(msg.find("instruction limit of 2000000 exceeded"), std::string::npos) << msg;
}

TEST(LuaHostile, HugeStringHitsTheMemoryCap) {
  // Above 2 GiB Lua refuses by itself; below, the allocator's cap does.
  EXPECT_EQ(hostile("    local s = string.rep('x', 1e10)", small()), "rules/hostile.lua:5: resulting string too large");
  EXPECT_EQ(hostile("    local s = string.rep('x', 1e9)", small()),
            "rules/hostile.lua:5: memory limit of 32 MiB exceeded (raise [rules] memory_limit_mb)");
}

TEST(LuaHostile, UnboundedTableHitsTheMemoryCap) {
  auto msg = hostile("    local t = {}\n    while true do t[#t + 1] = string.rep('x', 1000) .. #t end", small());
  EXPECT_NE(msg.find("rules/hostile.lua:6: memory limit of 32 MiB exceeded"), std::string::npos) << msg;
}

TEST(LuaHostile, NoOsIoRequireLoadOrDebug) {
  EXPECT_EQ(hostile("    os.execute('touch /tmp/proflint_pwned')"), "rules/hostile.lua:5: unknown global 'os'");
  EXPECT_FALSE(std::filesystem::exists("/tmp/proflint_pwned"));
  EXPECT_EQ(hostile("    io.open('/tmp/proflint_pwned', 'w')"), "rules/hostile.lua:5: unknown global 'io'");
  EXPECT_FALSE(std::filesystem::exists("/tmp/proflint_pwned"));
  EXPECT_EQ(hostile("    require('os')"), "rules/hostile.lua:5: unknown global 'require'");
  EXPECT_EQ(hostile("    local f = function() end\n    load(string.dump(f))"),
            "rules/hostile.lua:6: unknown global 'load'");
  EXPECT_EQ(hostile("    string.dump(print)"), "rules/hostile.lua:5: unknown global 'print'");
  EXPECT_EQ(hostile("    local f = string.dump"), "");  // reading it gives nil; calling it fails:
  EXPECT_NE(hostile("    string.dump(function() end)").find("attempt to call a nil value (field 'dump')"),
            std::string::npos);
  EXPECT_EQ(hostile("    debug.sethook()"), "rules/hostile.lua:5: unknown global 'debug'");
  EXPECT_EQ(hostile("    dofile('/etc/passwd')"), "rules/hostile.lua:5: unknown global 'dofile'");
  EXPECT_EQ(hostile("    collectgarbage()"), "rules/hostile.lua:5: unknown global 'collectgarbage'");
}

TEST(LuaHostile, MetatableTricksFail) {
  EXPECT_EQ(hostile("    setmetatable(_G, {})"), "rules/hostile.lua:5: cannot change a protected metatable");
  EXPECT_EQ(hostile("    getmetatable('').__index = function() return 1 end"),
            "rules/hostile.lua:5: attempt to index a boolean value");
  EXPECT_EQ(hostile("    leaked = 1"), "rules/hostile.lua:5: assignment to global 'leaked' (declare it local)");
}

TEST(LuaHostile, SqlWritesAttachAndPragmasAreDenied) {
  auto del = hostile("    ctx:query('DELETE FROM _kernel')");
  EXPECT_NE(del.find("rules/hostile.lua:5: ctx:query: not authorized"), std::string::npos) << del;
  auto attach = hostile("    ctx:query(\"ATTACH DATABASE '/tmp/proflint_attached.db' AS x\")");
  EXPECT_NE(attach.find("not authorized"), std::string::npos) << attach;
  EXPECT_FALSE(std::filesystem::exists("/tmp/proflint_attached.db"));
  auto pragma = hostile("    ctx:query('PRAGMA writable_schema = 1')");
  EXPECT_NE(pragma.find("not authorized"), std::string::npos) << pragma;
  auto two = hostile("    ctx:query('SELECT 1; DELETE FROM _kernel')");
  EXPECT_EQ(two, "rules/hostile.lua:5: ctx:query: give exactly one SQL statement");
  auto rows = hostile("    for r in ctx:rows('DROP TABLE _kernel') do end");
  EXPECT_NE(rows.find("not authorized"), std::string::npos) << rows;
}

TEST(LuaHostile, ErrorInsideTheRowsLoopFinalizesTheStatement) {
  EXPECT_EQ(hostile("    for row in ctx:rows('SELECT id FROM _kernel') do\n      error('stop at ' .. row.id)\n    end"),
            "rules/hostile.lua:6: stop at 1");
  // The store is still usable (no statement left open, no lock held).
  EXPECT_GT(kernel_rows(sample_store()), 0);
}

TEST(LuaHostile, ErrorObjectsThatAreNotStrings) {
  EXPECT_EQ(hostile("    error({ code = 1 })"), "rules/hostile.lua:5: error object is a table value");
  EXPECT_EQ(hostile("    error(nil)"), "rules/hostile.lua:5: error object is a nil value");
  EXPECT_EQ(hostile("    error(setmetatable({}, { __tostring = function() while true do end end }))", small()),
            "rules/hostile.lua:5: error object is a table value");
}

TEST(LuaHostile, SlowQueryIsStoppedByTheTimeLimit) {
  RuleLimits l;
  l.query_time_limit_ms = 200;
  auto msg = hostile(
      "    ctx:query('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c')", l, 10);
  EXPECT_EQ(msg,
            "rules/hostile.lua:5: ctx:query: query stopped after the time limit of 200 ms (raise [rules] "
            "query_time_limit_ms)");
}

TEST(LuaHostile, BrokenFilesBecomeRuleErrors) {
  Store& store = sample_store();
  auto r =
      run_rules(store, {rule("rules/syntax.lua", "return {\n  id = 'x',\n  title = = 'y',\n}\n"),
                        rule("rules/number.lua", "return 42\n"), rule("rules/top.lua", "local x = nil\nreturn x.y\n"),
                        rule("rules/good.lua", rule_text("good", "ctx:report{ problem = 'ran' }"))});
  auto errors = with_id(r, "rule-error");
  ASSERT_EQ(errors.size(), 3u);
  std::vector<std::string> problems;
  for (const auto& f : errors) problems.push_back(f.problem);
  std::sort(problems.begin(), problems.end());
  EXPECT_EQ(
      problems[0],
      "rules/number.lua:1: the file must return a rule table { id, title, needs, options, evaluate }, not a number");
  EXPECT_EQ(problems[1], "rules/syntax.lua:3: unexpected symbol near '='");
  EXPECT_EQ(problems[2], "rules/top.lua:2: attempt to index a nil value (local 'x')");
  EXPECT_EQ(with_id(r, "good").size(), 1u);
}

TEST(LuaHostile, DuplicateIdsAreErrors) {
  Store& store = sample_store();
  auto r = run_rules(store, {rule("rules/a.lua", rule_text("same", "ctx:report{ problem = 'a' }")),
                             rule("rules/b.lua", rule_text("same", "ctx:report{ problem = 'b' }")),
                             rule("rules/c.lua", rule_text("amp-not-used", "ctx:report{ problem = 'c' }"))});
  auto same = with_id(r, "same");
  ASSERT_EQ(same.size(), 1u);
  EXPECT_EQ(same[0].problem, "a");
  auto errors = with_id(r, "rule-error");
  ASSERT_EQ(errors.size(), 2u);
  std::vector<std::string> problems = {errors[0].problem, errors[1].problem};
  std::sort(problems.begin(), problems.end());
  EXPECT_EQ(problems[0], "rules/b.lua:1: rule id 'same' is already used by rules/a.lua");
  EXPECT_EQ(problems[1],
            "rules/c.lua:1: rule id 'amp-not-used' is already used by the built-in detector 'amp-not-used'");
}

TEST(LuaHostile, BinaryChunksAreRefused) {
  Store& store = sample_store();
  auto r = run_rules(store, {rule("rules/bin.lua", std::string("\x1bLua\x54\x00", 6) + "garbage")});
  auto errors = with_id(r, "rule-error");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].problem.find("attempt to load a binary chunk"), std::string::npos) << errors[0].problem;
}

// ---------------------------------------------------------------- issue 20, defect 4: rules that
// ran forever despite the instruction budget. Each must end as a rule-error within the deadline.
namespace {

// A deadline far below the instruction budget, so the clock is what stops the rule.
RuleLimits deadline_ms(int64_t ms) {
  RuleLimits l;
  l.time_limit_ms = ms;
  l.instruction_limit = 1'000'000'000'000;
  return l;
}

bool budget_error(const std::string& msg) {
  return msg.find("time limit of") != std::string::npos || msg.find("instruction limit of") != std::string::npos;
}

}  // namespace

TEST(LuaHostile, FinalizersAreRefused) {
  // Lua runs __gc with hooks off, also while the state closes: a finalizer loop escaped every limit.
  EXPECT_EQ(hostile("    setmetatable({}, { __gc = function() while true do end end })", deadline_ms(500), 5),
            "rules/hostile.lua:5: __gc metamethods are not available to rules (finalizers run outside the rule's "
            "limits)");
  EXPECT_EQ(hostile("    setmetatable({}, { __gc = false })", deadline_ms(500), 5),
            "rules/hostile.lua:5: __gc metamethods are not available to rules (finalizers run outside the rule's "
            "limits)");
  // Set after setmetatable, __gc is never called (Lua marks objects for finalization only then).
  EXPECT_EQ(hostile("    local mt = {}\n    local t = setmetatable({}, mt)\n"
                    "    mt.__gc = function() while true do end end\n    t = nil",
                    deadline_ms(500), 5),
            "");
}

TEST(LuaHostile, LoopingXpcallHandlerIsStopped) {
  // The message handler of an error raised by the hook runs with hooks off: it must not be called.
  auto msg = hostile("    xpcall(function() while true do end end, function(e) while true do end end)",
                     deadline_ms(300), 5);
  EXPECT_EQ(msg, "rules/hostile.lua:5: time limit of 300 ms exceeded (raise [rules] time_limit_ms)");
  auto by_count = hostile("    xpcall(function() while true do end end, function(e) while true do end end)", small(), 5);
  EXPECT_EQ(by_count,
            "rules/hostile.lua:5: instruction limit of 2000000 exceeded (a loop that never ends? raise [rules] "
            "instruction_limit)");
  // A handler that keeps failing, in a loop of xpcalls.
  auto again = hostile("    while true do xpcall(error, function(e) while true do end end, 'x') end", deadline_ms(300), 5);
  EXPECT_EQ(again, "rules/hostile.lua:5: time limit of 300 ms exceeded (raise [rules] time_limit_ms)");
  // Ordinary errors still reach the rule's handler.
  EXPECT_EQ(hostile("    local ok, e = xpcall(error, function(m) return 'handled ' .. m end, 'boom')\n"
                    "    error(e)"),
            "rules/hostile.lua:6: handled boom");
}

TEST(LuaHostile, PcallAroundSlowQueriesStopsAtTheDeadline) {
  RuleLimits l = deadline_ms(700);
  l.query_time_limit_ms = 200;  // each query is stopped and caught; the rule's deadline still holds
  auto msg = hostile(
      "    while true do\n"
      "      pcall(ctx.query, ctx, 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) "
      "FROM c')\n    end",
      l, 5);
  EXPECT_EQ(msg, "rules/hostile.lua:6: time limit of 700 ms exceeded (raise [rules] time_limit_ms)");
  // With no query limit at all, the deadline stops the query itself.
  RuleLimits q = deadline_ms(300);
  q.query_time_limit_ms = 1'000'000;
  msg = hostile("    ctx:query('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c')",
                q, 5);
  EXPECT_EQ(msg, "rules/hostile.lua:5: time limit of 300 ms exceeded (raise [rules] time_limit_ms)");
}

TEST(LuaHostile, StringRepOfNothingReturnsAtOnce) {
  EXPECT_EQ(hostile("    error('len ' .. #string.rep('', 1e15) .. ' ' .. #string.rep('', 1e15, ''))", deadline_ms(500), 5),
            "rules/hostile.lua:5: len 0 0");
  EXPECT_EQ(hostile("    error(string.rep('ab', 3, '-'))"), "rules/hostile.lua:5: ab-ab-ab");
}

TEST(LuaHostile, TableMoveOverAHugeRangeIsStopped) {
  auto msg = hostile("    local t = {1, 2, 3}\n    table.move(t, 1, 1e15, 2)", deadline_ms(300), 5);
  EXPECT_EQ(msg, "rules/hostile.lua:6: time limit of 300 ms exceeded (raise [rules] time_limit_ms)");
  msg = hostile("    local t = {1, 2, 3}\n    table.move(t, 1, 1e15, 2)", small(), 5);
  EXPECT_NE(msg.find("rules/hostile.lua:6: instruction limit of 2000000 exceeded"), std::string::npos) << msg;
  // Ordinary moves behave like Lua's.
  EXPECT_EQ(hostile("    local t = table.move({1, 2, 3}, 1, 3, 2)\n    error(table.concat(t, ','))"),
            "rules/hostile.lua:6: 1,1,2,3");
  EXPECT_EQ(hostile("    local t = table.move({1, 2, 3}, 2, 3, 1)\n    error(table.concat(t, ','))"),
            "rules/hostile.lua:6: 2,3,3");
  EXPECT_EQ(hostile("    local t = table.move({1, 2}, 1, 2, 3, {9})\n    error(t[1] .. tostring(t[2]) .. t[3] .. t[4])"),
            "rules/hostile.lua:6: 9nil12");
}

TEST(LuaHostile, BacktrackingPatternsAreStopped) {
  for (const char* call : {"find", "match", "gmatch", "gsub"}) {
    std::string body = std::string("    local s = ('a'):rep(3000)\n    local r = s:") + call + "('.-.-.-b'" +
                       (std::string(call) == "gsub" ? ", '')" : std::string(call) == "gmatch" ? ")()" : ")");
    auto msg = hostile(body, deadline_ms(300), 5);
    EXPECT_EQ(msg, "rules/hostile.lua:6: time limit of 300 ms exceeded (raise [rules] time_limit_ms)") << call;
  }
  auto by_count = hostile("    local r = ('a'):rep(3000):find('.-.-.-b')", small(), 5);
  EXPECT_NE(by_count.find("rules/hostile.lua:5: instruction limit of 2000000 exceeded"), std::string::npos)
      << by_count;
  // A plain search with many near misses is charged too.
  auto plain = hostile("    local r = ('a'):rep(4e6):find(('a'):rep(2e4) .. 'b', 1, true)", small(), 5);
  EXPECT_NE(plain.find("instruction limit of 2000000 exceeded"), std::string::npos) << plain;
}

TEST(LuaHostile, CFunctionMetamethodLoopsEndAtALimit) {
  // __index = rawlen makes every t[i] a number without running Lua code: concat loops inside C.
  auto msg = hostile("    local t = setmetatable({}, { __index = rawlen })\n    table.concat(t, '', 1, 1e15)",
                     deadline_ms(300), 5);
  EXPECT_EQ(msg, "rules/hostile.lua:6: time limit of 300 ms exceeded (raise [rules] time_limit_ms)");
  // __len = rawget with t[t] = 2^50 makes #t 2^50: insert and remove shift that many slots.
  const std::string huge_len = "    local t = {}\n    t[t] = 1 << 50\n    setmetatable(t, { __len = rawget })\n";
  for (const char* call : {"table.insert(t, 1, 'x')", "table.remove(t, 1)", "table.concat(t)"}) {
    msg = hostile(huge_len + "    " + call, deadline_ms(300), 5);
    if (std::string(call) == "table.concat(t)")  // t[1] is nil: concat stops at once
      EXPECT_EQ(msg, "rules/hostile.lua:8: invalid value (at index 1) in table for 'concat'");
    else
      EXPECT_EQ(msg, "rules/hostile.lua:8: time limit of 300 ms exceeded (raise [rules] time_limit_ms)") << call;
  }
  // Ordinary use is unchanged.
  EXPECT_EQ(hostile("    local t = {'a', 'c'}\n    table.insert(t, 2, 'b')\n    table.insert(t, 'd')\n"
                    "    local r = table.remove(t, 1)\n    error(r .. table.concat(t, '-') .. table.concat({}, 'x') .. "
                    "table.concat({1, 2, 3}, '', 2, 3))"),
            "rules/hostile.lua:9: ab-c-d23");
}

TEST(LuaHostile, CloseHandlersAndErrorLoopsEndAtTheDeadline) {
  auto msg = hostile(
      "    local x <close> = setmetatable({}, { __close = function() while true do end end })\n    error('x')",
      deadline_ms(300), 5);
  EXPECT_TRUE(budget_error(msg)) << msg;
  msg = hostile("    while true do pcall(error, 'again') end", deadline_ms(300), 5);
  EXPECT_EQ(msg, "rules/hostile.lua:5: time limit of 300 ms exceeded (raise [rules] time_limit_ms)");
}

// The bounded pattern functions give Lua 5.4's results (checked against the reference manual's
// examples and by hand).
TEST(LuaHostile, BoundedPatternFunctionsBehaveLikeLuas) {
  // The value of `expr`, raised as the error message (which gets the rule's position in front).
  auto eval = [](const std::string& expr) {
    std::string msg = hostile("    error(" + expr + ", 0)");
    const std::string where = "rules/hostile.lua:5: ";
    return msg.rfind(where, 0) == 0 ? msg.substr(where.size()) : "unpositioned: " + msg;
  };
  EXPECT_EQ(eval("table.concat({('hello world'):find('o w')}, ',')"), "5,7");
  EXPECT_EQ(eval("table.concat({('hello world'):find('l+')}, ',')"), "3,4");
  EXPECT_EQ(eval("table.concat({('hello'):find('l', 1, true)}, ',')"), "3,3");
  EXPECT_EQ(eval("tostring(('hello'):find('xyz'))"), "nil");
  EXPECT_EQ(eval("table.concat({('key = value'):match('(%w+)%s*=%s*(%w+)')}, ',')"), "key,value");
  EXPECT_EQ(eval("table.concat({('hello'):find('()ll()')}, ',')"), "3,4,3,5");
  EXPECT_EQ(eval("('THE (quick) fox'):find('%((%a+)%)') .. ''"), "5");
  EXPECT_EQ(eval("('f(a(b)c)d'):match('%b()')"), "(a(b)c)");
  EXPECT_EQ(eval("('THE (quick) fox'):gsub('%f[%a]%a+', 'W')"), "W (W) W");
  EXPECT_EQ(eval("('hello world'):gsub('(%w+)', '<%1>')"), "<hello> <world>");
  EXPECT_EQ(eval("('hello world'):gsub('%w+', '%0 %0', 1)"), "hello hello world");
  EXPECT_EQ(eval("('abc'):gsub('', '-')"), "-a-b-c-");
  EXPECT_EQ(eval("('$name is $x'):gsub('%$(%w+)', { name = 'lua' })"), "lua is $x");
  EXPECT_EQ(eval("('4+5'):gsub('(%d)%+(%d)', function(a, b) return a + b end)"), "9");
  EXPECT_EQ(eval("select(2, ('a,b,,c'):gsub(',', ';'))"), "3");
  EXPECT_EQ(eval("('  trim  '):match('^%s*(.-)%s*$')"), "trim");
  EXPECT_EQ(eval("('x=1, y=22'):match('y=(%d+)$')"), "22");
  EXPECT_EQ(eval("('[x]'):match('[]]')"), "]");
  EXPECT_EQ(eval("('a.b'):match('[^%.]+$')"), "b");
  EXPECT_EQ(eval("('abab'):match('(ab)%1')"), "ab");
  EXPECT_EQ(eval("('aaa'):match('^a-$')"), "aaa");
  EXPECT_EQ(eval("('ab'):match('^(a?)(b)$')"), "a");
  EXPECT_EQ(eval("('^x'):match('^^x')"), "^x");
  EXPECT_EQ(eval("(function() local t = {} for k, v in ('a=1, b=2'):gmatch('(%w+)=(%w+)') do t[#t + 1] = k .. v end "
                 "return table.concat(t, ' ') end)()"),
            "a1 b2");
  EXPECT_EQ(eval("(function() local t = {} for w in ('one two'):gmatch('%a*') do t[#t + 1] = '[' .. w .. ']' end "
                 "return table.concat(t) end)()"),
            "[one][two]");
  EXPECT_EQ(eval("(function() local t = {} for w in ('abc'):gmatch('.', 2) do t[#t + 1] = w end "
                 "return table.concat(t) end)()"),
            "bc");
  EXPECT_EQ(eval("('x'):rep(3)"), "xxx");
  // Errors keep Lua's words.
  EXPECT_EQ(hostile("    ('a'):find('%')"), "rules/hostile.lua:5: malformed pattern (ends with '%')");
  EXPECT_EQ(hostile("    ('a'):find('[a')"), "rules/hostile.lua:5: malformed pattern (missing ']')");
  EXPECT_EQ(hostile("    ('a'):find('(a')"), "rules/hostile.lua:5: unfinished capture");
  EXPECT_EQ(hostile("    ('a'):match('a)')"), "rules/hostile.lua:5: invalid pattern capture");
  EXPECT_EQ(hostile("    error(tostring(('a'):find('a)')), 0)"), "rules/hostile.lua:5: nil");  // ')' alone: a plain search
  EXPECT_EQ(hostile("    ('a'):gsub('a', '%2')"), "rules/hostile.lua:5: invalid capture index %2");
  EXPECT_EQ(hostile("    ('a'):gsub('a', '%x')"), "rules/hostile.lua:5: invalid use of '%' in replacement string");
  EXPECT_EQ(hostile("    ('a'):find('%f')"), "rules/hostile.lua:5: missing '[' after '%f' in pattern");
  EXPECT_EQ(hostile("    ('a'):rep(40):find(('(a)'):rep(40))"), "rules/hostile.lua:5: too many captures");
}

TEST(LuaHostile, DetectorsStillReportBesideAHostileRule) {
  AnalysisOptions ao;
  ao.rule_files = {rule("rules/hostile.lua", rule_text("hostile", "    local r = ('a'):rep(3000):find('.-.-.-b')"))};
  ao.rule_limits = deadline_ms(300);
  auto start = std::chrono::steady_clock::now();
  auto r = run_analysis(sample_store(), ao, detector_registry());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10);
  auto errors = with_id(r, "rule-error");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].problem, "rules/hostile.lua:5: time limit of 300 ms exceeded (raise [rules] time_limit_ms)");
  // sample_train's DataLoader stall (tests/cases/dataloader-stall-fires-sample-train) is still found.
  EXPECT_EQ(with_id(r, "dataloader-stall").size(), 1u);
}
