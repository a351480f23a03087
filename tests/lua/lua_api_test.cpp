// tests/lua/lua_api_test.cpp — what a rule sees: ctx methods, ctx.summary/options, proflint.*,
// and findings that are ranked, filtered and suppressed like built-in ones.
#include <gtest/gtest.h>

#include "engine/common/error.hpp"
#include "engine/config/config.hpp"
#include "tests/lua/lua_support.hpp"

using namespace proflint;
using namespace proflint::testing;

TEST(LuaApi, QueryRowsHasAndReport) {
  auto r = run_rules(sample_store(), {rule("rules/probe.lua", rule_text("probe", R"(
    local n = ctx:query('SELECT count(*) AS n, sum(dur_ns) AS ns FROM kernel WHERE trace_id = ? AND category = ?',
                        ctx.trace_id, 'conv')[1]
    local seen = 0
    for row in ctx:rows('SELECT id, name, op_id FROM kernel WHERE trace_id = ? ORDER BY id LIMIT 3', ctx.trace_id) do
      seen = seen + 1
      assert(type(row.name) == 'string' and math.type(row.id) == 'integer')
    end
    local nothing = ctx:query('SELECT NULL AS missing, 1.5 AS x')[1]
    ctx:report{
      problem = string.format('%d conv kernels, %s', n.n, proflint.format_ns(n.ns)),
      recommendation = 'r',
      estimated_savings_ns = 1000000,
      savings_method = 'm',
      confidence = 0.7,
      evidence = { conv_kernels = n.n, rows = seen, missing = nothing.missing == nil, x = nothing.x,
                   has_ops = ctx:has('ops'), has_memory = ctx:has('memory'), list = { 3, 2, 1 } },
      scope = { device_id = 0, iter_first = 1, iter_last = 4 },
    })"))});
  auto f = with_id(r, "probe");
  ASSERT_EQ(f.size(), 1u) << (r.findings.empty() ? "" : r.findings[0].problem) << (r.notes.empty() ? "" : r.notes[0]);
  EXPECT_EQ(f[0].problem, "354 conv kernels, 606 ms");
  EXPECT_EQ(f[0].source, "rules/probe.lua");
  EXPECT_EQ(f[0].title, "t");
  EXPECT_EQ(f[0].estimated_savings_ns, 1000000);
  EXPECT_DOUBLE_EQ(f[0].confidence, 0.7);
  EXPECT_EQ(f[0].evidence.dump(),
            R"({"conv_kernels":354,"has_memory":true,"has_ops":true,"list":[3,2,1],"missing":true,"rows":3,"x":1.5})");
  EXPECT_EQ(f[0].scope.trace_id, 1);
  EXPECT_EQ(f[0].scope.device_id, 0);
  EXPECT_EQ(f[0].scope.iter_first, 1);
  EXPECT_EQ(f[0].scope.iter_last, 4);
  EXPECT_NEAR(f[0].savings_share, 1e6 / 1180972913.0, 1e-9);  // ranked like a built-in finding
}

TEST(LuaApi, SummaryAndOptions) {
  std::map<std::string, DetectorConfig> config;
  config["probe"].options = {{"limit", 7}};
  auto r = run_rules(
      sample_store(),
      {rule("rules/probe.lua",
            rule_text("probe", R"(
    local s = ctx.summary
    local d = s.devices[1]
    ctx:report{ problem = string.format('%s %s %d %d %s %d cc%d.%d %.3f %d %d %s',
      s.path, s.format, s.wall_ns, s.iterations.count, s.iterations.source, #s.iterations.durations_ns,
      d.compute_major, d.compute_minor, d.gpu_utilization, ctx.options.limit, ctx.options.other, ctx.options.names[2]) })",
                      "  options = { limit = 3, other = { default = 5, doc = 'd' }, names = { 'a', 'b' } },\n"))},
      {}, config);
  auto f = with_id(r, "probe");
  ASSERT_EQ(f.size(), 1u) << (r.findings.empty() ? "" : r.findings[0].problem) << (r.notes.empty() ? "" : r.notes[0]);
  EXPECT_EQ(f[0].problem,
            fixture_path("sample_train.json.gz").string() + " kineto 1180972913 6 profiler_step 6 cc8.0 0.587 7 5 b");
}

TEST(LuaApi, HelperLibrary) {
  auto r = run_rules(sample_store(), {rule("rules/probe.lua", rule_text("probe", R"(
    local u = proflint.union({ { 10, 20 }, { 15, 30 }, { 40, 50 }, { 5, 5 } })
    local i = proflint.intersect({ { 0, 100 } }, { { 10, 20 }, { 90, 120 } })
    local tc, why = proflint.uses_tensor_cores('sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32')
    local fp32 = proflint.uses_tensor_cores('volta_sgemm_128x64_nn')
    ctx:report{ problem = table.concat({
      #u, u[1][1], u[1][2], u[2][1], u[2][2], #i, i[2][1], i[2][2],
      proflint.total({ { 0, 10 }, { 5, 15 } }),
      proflint.format_ns(1234567), proflint.format_bytes(3 * 1024 * 1024), proflint.format_percent(0.1234),
      tostring(tc), tostring(fp32), proflint.category('volta_sgemm_128x64_nn'),
      proflint.category('void at::native::vectorized_elementwise_kernel<4>'), type(why) }, ' ') })"))});
  auto f = with_id(r, "probe");
  ASSERT_EQ(f.size(), 1u) << (r.findings.empty() ? "" : r.findings[0].problem) << (r.notes.empty() ? "" : r.notes[0]);
  EXPECT_EQ(f[0].problem, "2 10 30 40 50 2 90 100 15 1.23 ms 3.0 MiB 12.3% true false gemm elementwise string");
}

TEST(LuaApi, BadCallsGiveClearMessages) {
  struct Case {
    std::string body, expected;
  };
  std::vector<Case> cases = {
      {"ctx:report{ problme = 'x' }",
       "rules/probe.lua:5: ctx:report: unknown field 'problme' (did you mean 'problem'?)"},
      {"ctx:report{ recommendation = 'x' }", "rules/probe.lua:5: ctx:report: 'problem' is required"},
      {"ctx:report{ problem = 'x', severity = 'urgent' }",
       "rules/probe.lua:5: ctx:report: 'severity' must be \"high\", \"medium\", \"low\" or \"info\""},
      {"ctx:report{ problem = 'x', scope = { devce_id = 1 } }",
       "rules/probe.lua:5: ctx:report: unknown scope field 'devce_id' (did you mean 'device_id'?)"},
      {"ctx:report{ problem = 'x', evidence = { f = print } }", "rules/probe.lua:5: unknown global 'print'"},
      {"ctx:report{ problem = 'x', evidence = { f = function() end } }",
       "rules/probe.lua:5: ctx:report: cannot put a function value into a finding"},
      {"ctx:has('kernel')", "rules/probe.lua:5: ctx:has: unknown need 'kernel' (did you mean 'kernels'?)"},
      {"ctx.query('SELECT 1')", "rules/probe.lua:5: call it as ctx:query(...) (with a colon)"},
      {"ctx:query('SELECT ?', 1, 2)",
       "rules/probe.lua:5: ctx:query: the SQL has 1 '?' parameter(s) but 2 value(s) were given"},
      {"ctx:query('SELECT * FROM no_such_table')", "rules/probe.lua:5: ctx:query: no such table: no_such_table"},
      {"proflint.union({ 1, 2 })",
       "rules/probe.lua:5: proflint.union: argument #1: item 1 is not a {start, end} pair of numbers"},
  };
  for (const auto& c : cases) {
    auto r = run_rules(sample_store(), {rule("rules/probe.lua", rule_text("probe", "    " + c.body))});
    auto errors = with_id(r, "rule-error");
    ASSERT_EQ(errors.size(), 1u) << c.body;
    EXPECT_EQ(errors[0].problem, c.expected) << c.body;
  }
}

TEST(LuaApi, OnlySkipSuppressAndDisable) {
  auto files =
      std::vector<lua::RuleFile>{rule("rules/probe.lua", rule_text("probe", "    ctx:report{ problem = 'kernel x' }"))};
  {
    AnalysisOptions ao;
    ao.rule_files = files;
    ao.only = {"probe"};
    auto r = run_analysis(sample_store(), ao, detector_registry());
    ASSERT_EQ(r.findings.size(), 1u);
    EXPECT_EQ(r.findings[0].id, "probe");
  }
  {
    AnalysisOptions ao;
    ao.rule_files = files;
    ao.only = {"probe"};
    ao.suppressions.push_back({"probe", "kernel", "known", "x"});
    auto r = run_analysis(sample_store(), ao, detector_registry());
    EXPECT_TRUE(r.findings.empty());
  }
  {
    AnalysisOptions ao;
    ao.rule_files = files;
    ao.only = {"amp-not-used"};
    ao.skip = {"probe"};
    auto r = run_analysis(sample_store(), ao, detector_registry());
    EXPECT_TRUE(with_id(r, "probe").empty());
  }
  {
    std::map<std::string, DetectorConfig> config;
    config["probe"].enabled = false;
    auto r = run_rules(sample_store(), files, {}, config);
    EXPECT_TRUE(with_id(r, "probe").empty());
  }
  {
    AnalysisOptions ao;
    ao.rule_files = files;
    ao.only = {"prob"};
    EXPECT_THROW(
        {
          try {
            run_analysis(sample_store(), ao, detector_registry());
          } catch (const Error& e) {
            EXPECT_STREQ(e.what(), "unknown detector or rule id 'prob' in --only/--skip (did you mean 'probe'?)");
            throw;
          }
        },
        Error);
  }
}

TEST(LuaApi, ConfigErrorsNameThePlace) {
  auto config = parse_config("[rules]\npaths = [\"my_rules\"]\nmemory_limit_mb = 64\n\n[rules.probe]\nlimt = 3\n",
                             "/x/proflint.toml");
  EXPECT_EQ(config.rules.paths, std::vector<std::string>{"/x/my_rules"});
  EXPECT_EQ(config.rules.limits.memory_limit_mb, 64);
  AnalysisOptions ao;
  ao.rule_files = {rule("rules/probe.lua", rule_text("probe", "", "  options = { limit = 1 },\n"))};
  ao.rules = config.rules.rules;
  ao.only = {"probe"};
  try {
    run_analysis(sample_store(), ao, detector_registry());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "/x/proflint.toml:6:1: unknown option 'limt' for rule probe (did you mean 'limit'?)");
  }
  ao.rules = parse_config("[rules.prob]\nenabled = false\n", "p.toml").rules.rules;
  try {
    run_analysis(sample_store(), ao, detector_registry());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "p.toml:1:8: unknown rule 'prob' (did you mean 'probe'?)");
  }
  try {
    parse_config("[rules]\ninstruction_limt = 5\n", "p.toml");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "p.toml:2:1: unknown key 'rules.instruction_limt' (did you mean 'instruction_limit'?)"),
              std::string::npos)
        << e.what();
  }
}

TEST(LuaApi, ConfigDumpRoundTrips) {
  auto c = parse_config(
      "[rules]\npaths = [\"/abs/rules\"]\ninstruction_limit = 5000\nquery_time_limit_ms = 7\ntime_limit_ms = 900\n"
      "max_findings = 12\n\n"
      "[rules.my-rule]\nenabled = false\nlimit = 2\n",
      "a.toml");
  auto again = parse_config(dump_config(c), "dump");
  EXPECT_EQ(again.rules.paths, std::vector<std::string>{"/abs/rules"});
  EXPECT_EQ(again.rules.limits.instruction_limit, 5000);
  EXPECT_EQ(again.rules.limits.memory_limit_mb, 256);
  EXPECT_EQ(again.rules.limits.query_time_limit_ms, 7);
  EXPECT_EQ(again.rules.limits.time_limit_ms, 900);
  EXPECT_EQ(again.rules.limits.max_findings, 12);
  EXPECT_EQ(parse_config("", "empty.toml").rules.limits.time_limit_ms, 60000);
  EXPECT_EQ(parse_config("", "empty.toml").rules.limits.max_findings, 1000);
  EXPECT_THROW(parse_config("[rules]\ntime_limit_ms = 0\n", "p.toml"), Error);
  ASSERT_TRUE(again.rules.rules.count("my-rule"));
  EXPECT_EQ(again.rules.rules["my-rule"].enabled, false);
  EXPECT_EQ(again.rules.rules["my-rule"].options["limit"], 2);
  EXPECT_THROW(parse_config("[rules]\nmemory_limit_mb = 0\n", "p.toml"), Error);
  EXPECT_THROW(parse_config("[rules]\npaths = \"r\"\n", "p.toml"), Error);
}

// Numbers beyond int64 from a rule: an estimate of 1e300 ns is held at INT64_MAX and then at the
// trace's wall time like any other (it once became INT64_MIN through llround and showed as 0),
// and claims of 1e300 on two keys that another finding claimed too are deducted without the sum
// of the two overflowing (UBSan reports signed overflow in ranking otherwise).
TEST(LuaApi, SavingsAndClaimsBeyondInt64AreHeldAtTheLimit) {
  const std::string wall = "1180972913";  // the sample's wall time (QueryRowsHasAndReport)
  auto r = run_rules(sample_store(),
                     {rule("rules/huge.lua", rule_text("huge", R"(
    ctx:report{ problem = 'p', recommendation = 'r', estimated_savings_ns = 1e300, claims = { a = 1e300, b = 1e300 } })")),
                      rule("rules/second.lua", rule_text("second", R"(
    ctx:report{ problem = 'q', recommendation = 'r', estimated_savings_ns = 1e6, claims = { a = 1e300, b = 1e300 } })"))});
  auto huge = with_id(r, "huge");
  ASSERT_EQ(huge.size(), 1u);
  EXPECT_EQ(std::to_string(huge[0].estimated_savings_ns), wall);
  EXPECT_DOUBLE_EQ(huge[0].savings_share, 1.0);
  auto second = with_id(r, "second");
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].estimated_savings_ns, 0);  // all of it claimed by the larger finding
  ASSERT_EQ(second[0].overlaps.size(), 1u);
  EXPECT_EQ(second[0].overlaps[0].id, "huge");
}

// A scope number beyond int64 (a float such as 1e300) is refused with a rule error instead of
// converted (undefined: found by running the lua_rule fuzz target's harness on such a rule); a
// fractional one is truncated as before.
TEST(LuaApi, ScopeNumbersBeyondInt64AreARuleError) {
  auto r = run_rules(sample_store(),
                     {rule("rules/fraction.lua", rule_text("fraction", R"(
    ctx:report{ problem = 'kept', recommendation = 'r', scope = { device_id = 0, iter_first = 2.7 } })")),
                      rule("rules/huge.lua", rule_text("huge", R"(
    ctx:report{ problem = 'refused', recommendation = 'r', scope = { device_id = 1e300 } })"))});
  auto kept = with_id(r, "fraction");
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].scope.iter_first, 2);
  auto errors = with_id(r, "rule-error");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].source, "rules/huge.lua");
  EXPECT_NE(errors[0].problem.find("scope.device_id must be an integer (got 1e+300)"), std::string::npos)
      << errors[0].problem;
  EXPECT_TRUE(with_id(r, "huge").empty());  // a failing rule reports nothing
}
