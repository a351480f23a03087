// tests/lua/rule_limits_test.cpp — what one rule may cost outside the Lua heap (issue 20, defects
// 7 and 8): findings per rule, SQLite memory and value length per rule query, and text that is not
// UTF-8. Each ends as a rule-error or a repaired text, never as a failed run. Also the helpers rule
// authors asked for (issue 21, point 10): parsed shapes and dtypes, json_extract, ctx:log.
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/lua/api.hpp"
#include "engine/report/findings_report.hpp"
#include "tests/lua/lua_support.hpp"
#include "tests/support/run.hpp"

using namespace proflint;
using namespace proflint::testing;

namespace {

// The rule-error of rule file `path` in `r`, or "".
std::string rule_error_of(const AnalysisResult& r, const std::string& path) {
  for (const auto& f : with_id(r, "rule-error"))
    if (f.source == path) return f.problem;
  return "";
}

std::string temp_rules_dir(const std::string& name, const std::string& file, const std::string& text) {
  std::string dir = ::testing::TempDir() + name;
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/" + file, std::ios::binary) << text;
  return dir;
}

}  // namespace

TEST(LuaRuleLimits, FindingsAreCappedPerRuleWithADiagnostic) {
  RuleLimits l;
  l.max_findings = 100;
  auto start = std::chrono::steady_clock::now();
  auto r = run_rules(sample_store(),
                     {rule("rules/many.lua", rule_text("many", "    for i = 1, 1000000 do ctx:report{ problem = 'p' .. i } end")),
                      rule("rules/good.lua", rule_text("good", "ctx:report{ problem = 'still ran' }"))},
                     l);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 30);
  auto kept = with_id(r, "many");
  ASSERT_EQ(kept.size(), 100u);
  EXPECT_EQ(rule_error_of(r, "rules/many.lua"),
            "rules/many.lua: reported 1000000 findings on one trace; kept the first 100 (raise [rules] max_findings)");
  EXPECT_EQ(with_id(r, "good").size(), 1u);
  // Under the cap nothing is said.
  auto few = run_rules(sample_store(), {rule("rules/few.lua", rule_text("few", "    for i = 1, 100 do ctx:report{ problem = 'p' } end"))}, l);
  EXPECT_EQ(with_id(few, "few").size(), 100u);
  EXPECT_TRUE(with_id(few, "rule-error").empty());
}

TEST(LuaRuleLimits, SqliteValuesAreCappedAtTheRuleMemoryLimit) {
  RuleLimits l;
  l.memory_limit_mb = 32;
  // Only the memory cap may stop these queries: under ASan the second one once ran past the
  // default 20 s query limit before it reached the cap (see below), and a rule's own time limit
  // would say something else again.
  l.query_time_limit_ms = 600'000;
  l.time_limit_ms = 900'000;
  // A 1 GB string (SQLite's own limit is 1e9 bytes, built outside the Lua heap): a value may take
  // a quarter of the rule's memory cap, 8 MiB here.
  for (const char* sql : {"SELECT length(zeroblob(1000000000)) AS n",
                          // 1,000 pieces of 10,000 bytes: past half the length limit SQLite grows the string
                          // by each piece, and under ASan every realloc copies it (10,000 pieces of 1,000
                          // bytes took 21 s in a Debug + ASan build, 100,000 of 100 bytes as long)
                          "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000) "
                          "SELECT length(group_concat(printf('%.10000c', 'y'))) AS n FROM c"}) {
    auto r = run_rules(sample_store(),
                       {rule("rules/big.lua", rule_text("big", std::string("    ctx:query(\"") + sql + "\")")),
                        rule("rules/good.lua", rule_text("good", "ctx:report{ problem = 'still ran' }"))},
                       l);
    EXPECT_EQ(rule_error_of(r, "rules/big.lua"),
              "rules/big.lua:5: ctx:query: a value of more than 8388608 bytes (SQL values a rule builds are capped at "
              "[rules] memory_limit_mb)")
        << sql;
    EXPECT_EQ(with_id(r, "good").size(), 1u);
  }
  // The limit is put back for the detectors on the same connection.
  SQLite::Statement q(sample_store().db(), "SELECT length(zeroblob(100000000))");
  ASSERT_TRUE(q.executeStep());
  EXPECT_EQ(q.getColumn(0).getInt64(), 100000000);
}

TEST(LuaRuleLimits, SqliteMemoryOfARuleQueryIsCapped) {
  ASSERT_TRUE(lua::sqlite_memory_cap_available());
  RuleLimits l;
  l.memory_limit_mb = 1;
  // DISTINCT over 300,000 integers builds a temporary b-tree in memory (temp_store=MEMORY) of
  // several MiB.
  auto r = run_rules(
      sample_store(),
      {rule("rules/hungry.lua",
            rule_text("hungry",
                      "    ctx:query('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) "
                      "SELECT count(*) AS n FROM (SELECT DISTINCT x * 7919 % 1000003 FROM c)')")),
       rule("rules/good.lua", rule_text("good", "ctx:report{ problem = 'still ran' }"))},
      l);
  EXPECT_EQ(rule_error_of(r, "rules/hungry.lua"),
            "rules/hungry.lua:5: ctx:query: SQLite needed more than 1 MiB for this query (raise [rules] "
            "memory_limit_mb)");
  EXPECT_EQ(with_id(r, "good").size(), 1u);
  // The same query within the default cap runs (300,000 distinct values: 1000003 is prime, so
  // x -> 7919 x mod 1000003 is one-to-one for x < 1000003). No query time limit: the machine may
  // be busy.
  RuleLimits big;
  big.query_time_limit_ms = 600'000;
  auto ok = run_rules(sample_store(),
                      {rule("rules/fine.lua",
                            rule_text("fine",
                                      "    local n = ctx:query('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
                                      "FROM c WHERE x < 300000) SELECT count(*) AS n FROM (SELECT DISTINCT x * 7919 % "
                                      "1000003 FROM c)')[1].n\n    ctx:report{ problem = tostring(n) }"))},
                      big);
  auto fine = with_id(ok, "fine");
  ASSERT_EQ(fine.size(), 1u) << rule_error_of(ok, "rules/fine.lua");
  EXPECT_EQ(fine[0].problem, "300000");
}

TEST(LuaRuleLimits, InvalidUtf8IsRepairedWhereRulesReportIt) {
  auto r = run_rules(sample_store(),
                     {rule("rules/bytes.lua",
                           rule_text("bytes",
                                     "    ctx:report{ problem = 'bad \\255 byte', recommendation = '\\192\\175',\n"
                                     "      evidence = { ['k\\255'] = { 'v\\254', 1 } } }")),
                      rule("rules/err.lua", rule_text("err", "    error('broken \\255')"))});
  auto f = with_id(r, "bytes");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].problem, "bad \xEF\xBF\xBD byte");
  EXPECT_EQ(f[0].recommendation, "\xEF\xBF\xBD\xEF\xBF\xBD");  // an overlong '/' is two invalid bytes
  EXPECT_EQ(f[0].evidence.dump(), "{\"k\xEF\xBF\xBD\":[\"v\xEF\xBF\xBD\",1]}");
  EXPECT_EQ(rule_error_of(r, "rules/err.lua"), "rules/err.lua:5: broken \xEF\xBF\xBD");
  // Every emitter takes the result.
  EXPECT_NO_THROW(nlohmann::json::parse(render_findings_json(r)));
  EXPECT_NO_THROW(nlohmann::json::parse(render_findings_sarif(r)));
}

TEST(LuaRuleLimits, EmittersRepairInvalidUtf8FromTheStore) {
  // A string read from a (tampered) store reaches a finding unrepaired: the JSON and SARIF
  // emitters replace the bad byte instead of failing the run.
  AnalysisResult r;
  Finding f;
  f.id = "x";
  f.title = "t";
  f.problem = "kernel \xFF name";
  f.evidence["kernel"] = "k\xFE";
  r.findings.push_back(f);
  std::string json;
  ASSERT_NO_THROW(json = render_findings_json(r));
  auto parsed = nlohmann::json::parse(json);
  EXPECT_EQ(parsed["findings"][0]["problem"], "kernel \xEF\xBF\xBD name");
  EXPECT_NO_THROW(nlohmann::json::parse(render_findings_sarif(r)));
  EXPECT_NO_THROW(render_findings_text(r, false));
  EXPECT_NO_THROW(render_findings_markdown(r));
}

TEST(LuaRuleLimits, InvalidUtf8FromARuleDoesNotFailTheCli) {
  std::string dir = temp_rules_dir("utf8_rules", "bytes.lua", rule_text("bytes", "    ctx:report{ problem = 'bad \\255' }"));
  for (const char* format : {"json", "sarif", "text", "markdown"}) {
    auto out = run_proflint_in(source_dir().string(), std::string("analyze fixtures/sample_train.json.gz --format ") +
                                                          format + " --rules " + shell_quote(dir));
    EXPECT_EQ(out.exit_code, 0) << format << ": " << out.err;
    EXPECT_NE(out.out.find("bad \xEF\xBF\xBD"), std::string::npos) << format;
    if (std::string(format) == "json" || std::string(format) == "sarif") {
      EXPECT_NO_THROW(nlohmann::json::parse(out.out)) << format;
    }
  }
}

TEST(LuaRuleHelpers, ShapesAndDtypes) {
  auto eval = [](const std::string& body) {
    auto r = run_rules(sample_store(), {rule("rules/h.lua", rule_text("h", body))});
    auto f = with_id(r, "h");
    return f.empty() ? "error: " + rule_error_of(r, "rules/h.lua") : f[0].problem;
  };
  EXPECT_EQ(eval("    local s = proflint.shapes('[[32, 3, 224, 224], [], [[1, 2], [3]]]')\n"
                 "    ctx:report{ problem = #s .. ' ' .. table.concat(s[1], 'x') .. ' ' .. #s[2] .. ' ' .. s[3][2][1] }"),
            "3 32x3x224x224 0 3");
  EXPECT_EQ(eval("    ctx:report{ problem = table.concat(proflint.dtypes('[\"float\", \"c10::Half\", \"long int\", "
                 "\"Scalar\", \"\", \"c10::BFloat16\", \"double\", \"signed char\"]'), ',') }"),
            "float32,float16,int64,scalar,,bfloat16,float64,int8");
  EXPECT_EQ(eval("    ctx:report{ problem = proflint.dtype('c10::Float8_e4m3fn') .. ' ' .. proflint.dtype('bool') .. ' ' .. "
                 "proflint.dtype('TensorList') .. ' ' .. proflint.dtype('unsigned char') }"),
            "float8_e4m3fn bool tensorlist uint8");
  // Missing or malformed text gives nil, never an error; deep nesting is refused.
  EXPECT_EQ(eval("    ctx:report{ problem = tostring(proflint.shapes(nil)) .. tostring(proflint.shapes('[1,')) .. "
                 "tostring(proflint.dtypes('{}')) .. tostring(proflint.shapes(string.rep('[', 100000))) }"),
            "nilnilnilnil");
  // On a real op: sample_train's first aten::sub_ has Input Dims [[3, 224, 224], [3, 1, 1], []]
  // and Input type ['float', 'float', 'Scalar'] (read from the trace with python3).
  EXPECT_EQ(eval("    local op = ctx:query(\"SELECT input_dims, input_types FROM op WHERE trace_id = ? AND name = "
                 "'aten::sub_' ORDER BY start_ns LIMIT 1\", ctx.trace_id)[1]\n"
                 "    local s, d = proflint.shapes(op.input_dims), proflint.dtypes(op.input_types)\n"
                 "    ctx:report{ problem = table.concat(s[2], 'x') .. ' ' .. table.concat(d, ',') }"),
            "3x1x1 float32,float32,scalar");
  // The documented json_extract use gives the same numbers in SQL.
  EXPECT_EQ(eval("    local r = ctx:query(\"SELECT json_extract(input_dims, '$[0][0]') AS c, json_array_length(input_dims) "
                 "AS n, json_extract(input_types, '$[2]') AS t FROM op WHERE trace_id = ? AND name = 'aten::sub_' "
                 "ORDER BY start_ns LIMIT 1\", ctx.trace_id)[1]\n"
                 "    ctx:report{ problem = r.c .. ' ' .. r.n .. ' ' .. r.t }"),
            "3 3 Scalar");
}

TEST(LuaRuleHelpers, LogGoesToStderrWithTheRuleIdAndIsBounded) {
  std::string dir = temp_rules_dir(
      "log_rules", "log.lua",
      rule_text("log-rule", "    ctx:log('hello', 42, true)\n    ctx:log('esc\\27[2J bad\\255')\n"
                            "    ctx:log(string.rep('x', 5000))\n    for i = 1, 100 do ctx:log('line', i) end"));
  auto out = run_proflint_in(source_dir().string(),
                             "analyze fixtures/sample_train.json.gz --format json --rules " + shell_quote(dir));
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_NE(out.err.find("proflint: rule log-rule: hello 42 true\n"), std::string::npos) << out.err;
  EXPECT_NE(out.err.find("proflint: rule log-rule: esc\\x1B[2J bad\\xFF\n"), std::string::npos) << out.err;
  EXPECT_NE(out.err.find("proflint: rule log-rule: " + std::string(1000, 'x') + " [cut]\n"), std::string::npos);
  // 50 lines in all: the three above and 47 of the loop, then one line saying the rest is dropped.
  EXPECT_NE(out.err.find("proflint: rule log-rule: line 47\n"), std::string::npos);
  EXPECT_EQ(out.err.find("proflint: rule log-rule: line 48\n"), std::string::npos);
  EXPECT_NE(out.err.find("proflint: rule log-rule: further ctx:log lines of this rule are dropped (at most 50 per "
                         "trace)\n"),
            std::string::npos);
  EXPECT_EQ(out.out.find("hello"), std::string::npos) << "log lines never reach the findings";
}
