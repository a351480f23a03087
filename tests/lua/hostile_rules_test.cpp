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
