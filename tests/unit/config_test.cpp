// tests/unit/config_test.cpp — proflint.toml parsing: values, and errors naming file:line:column.
#include "engine/config/config.hpp"

#include <gtest/gtest.h>

#include "engine/common/error.hpp"

using namespace proflint;

TEST(Config, ReadsTensorCorePatternsAndKeyNode) {
  auto c = parse_config(
      "[tensor_cores]\nuses = [\"my_hmma_kernel\"]\nnot = [\"my_fp32\"]\n[iterations]\nkey_node = \"train_step\"\n",
      "p.toml");
  ASSERT_EQ(c.tensor_core_patterns.size(), 2u);
  EXPECT_EQ(c.tensor_core_patterns[0].substring, "my_fp32");
  EXPECT_FALSE(c.tensor_core_patterns[0].uses_tensor_cores);
  EXPECT_EQ(c.tensor_core_patterns[1].substring, "my_hmma_kernel");
  EXPECT_TRUE(c.tensor_core_patterns[1].uses_tensor_cores);
  EXPECT_EQ(c.key_node.value_or(""), "train_step");
}

TEST(Config, UnknownKeyNamesFileLineColumn) {
  try {
    parse_config("[tensor_cores]\nuses = []\nusess = [\"x\"]\n", "proj/proflint.toml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "proj/proflint.toml:3:1: unknown key 'tensor_cores.usess' (known: not, uses)");
  }
}

TEST(Config, BadValueNamesPlace) {
  try {
    parse_config("[iterations]\nkey_node = 3\n", "c.toml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("c.toml:2:"), std::string::npos) << e.what();
  }
}

TEST(Config, SyntaxErrorNamesPlace) {
  try {
    parse_config("[tensor_cores\n", "s.toml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("s.toml:1:", 0), 0u) << e.what();
  }
}

TEST(Config, DumpRoundTrips) {
  auto c = parse_config("[tensor_cores]\nuses = [\"a\\\"b\"]\n", "x.toml");
  auto again = parse_config(dump_config(c), "dump");
  ASSERT_EQ(again.tensor_core_patterns.size(), 1u);
  EXPECT_EQ(again.tensor_core_patterns[0].substring, "a\"b");
}

TEST(Config, GateTableParsesAndRoundTrips) {
  Config c = parse_config(
      "[gate]\nalpha = 0.01\nmin_iterations = 10\nwarmup = 2\nfail_on_new_findings = [\"amp-not-used\"]\n"
      "skip_metrics = [\"wall_time\"]\nmax_regression = \"3%\"\n[gate.budgets]\niteration_time = \"2%\"\n"
      "\"breakdown.*\" = \"2 ms\"\ngpu_utilization = \"3 pp\"\npeak_memory = \"512 MiB\"\n",
      "g.toml");
  EXPECT_DOUBLE_EQ(c.gate.alpha, 0.01);
  EXPECT_EQ(c.gate.min_iterations, 10);
  EXPECT_EQ(c.gate.warmup, "2");
  ASSERT_EQ(c.gate.budgets.size(), 4u);
  EXPECT_EQ(c.gate.budgets[1].first, "breakdown.*");
  EXPECT_EQ(c.gate.budgets[1].second.kind, GateBudget::Kind::time_ns);
  EXPECT_DOUBLE_EQ(c.gate.budgets[1].second.amount, 2e6);
  EXPECT_EQ(c.gate.budgets[1].second.where, "g.toml:10:17");
  EXPECT_DOUBLE_EQ(c.gate.budgets[3].second.amount, 512.0 * 1024 * 1024);
  ASSERT_TRUE(c.gate.max_regression);
  EXPECT_EQ(c.gate.max_regression->text, "3%");
  Config again = parse_config(dump_config(c), "dump.toml");
  EXPECT_EQ(dump_config(again).substr(dump_config(again).find("[gate]")),
            dump_config(c).substr(dump_config(c).find("[gate]")));
  Config severity = parse_config("[gate]\nfail_on_new_findings = \"high\"\n", "s.toml");
  EXPECT_EQ(severity.gate.fail_on_new_severity, "high");
  EXPECT_THROW(parse_config("[gate]\nfail_on_new_findings = \"info\"\n", "s.toml"), Error);
  EXPECT_THROW(parse_config("[gate]\nmin_iterations = 1\n", "s.toml"), Error);
  EXPECT_THROW(parse_config("[gate]\nwarmup = \"sometimes\"\n", "s.toml"), Error);
}

// Found by the fuzz_config target (tests/fuzz/regressions/config/): `config dump` wrote option
// keys bare ("breakdown.* = ..." is not TOML; "a.b" would become a nested table), a budget's
// metric with a newline as a multi-line string (forbidden in keys), and nan/inf as JSON's null.
TEST(Config, DumpQuotesKeysAndValuesSoThatItParsesAgain) {
  Config c = parse_config(
      "[rules.\"odd.rule id\"]\n\"breakdown.*\" = \"2 ms\"\nplain_key = 1\n"
      "[detectors.gpu-idle-gaps]\n\"tab\\there\" = nan\nlimit = -inf\nlist = [1.5, \"a\\\"b\"]\n"
      "[gate.budgets]\n\"line\\nbreak\" = \"3%\"\n",
      "c.toml");
  std::string dumped = dump_config(c);
  EXPECT_NE(dumped.find("[rules.\"odd.rule id\"]\n\"breakdown.*\" = '2 ms'\nplain_key = 1\n"), std::string::npos)
      << dumped;
  EXPECT_NE(dumped.find("limit = -inf\n"), std::string::npos) << dumped;
  EXPECT_NE(dumped.find("\"tab\\u0009here\" = nan\n"), std::string::npos) << dumped;
  EXPECT_NE(dumped.find("\"line\\u000Abreak\" = '3%'\n"), std::string::npos) << dumped;
  Config again = parse_config(dumped, "c.toml");
  EXPECT_EQ(dump_config(again), dumped);
  ASSERT_EQ(again.rules.rules.count("odd.rule id"), 1u);
  EXPECT_EQ(again.rules.rules.at("odd.rule id").options.at("breakdown.*"), "2 ms");
  ASSERT_EQ(again.gate.budgets.size(), 1u);
  EXPECT_EQ(again.gate.budgets[0].first, "line\nbreak");
}

// Found by fuzz_config: a rule table named after a [rules] setting dumped as both `paths = [...]` and
// [rules.paths], which does not parse. The table is refused where it is written.
TEST(Config, RuleTableNamedAfterASettingIsRefused) {
  for (const char* name : {"paths", "instruction_limit", "max_findings"}) {
    try {
      parse_config(std::string("[rules]\n[rules.") + name + "]\nenabled = true\n", "r.toml");
      FAIL() << name;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(std::string("r.toml:2:") , 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::string("'rules.") + name + "' is a setting"), std::string::npos)
          << e.what();
    }
  }
  // Any other id is a rule table and survives the dump.
  Config c = parse_config("[rules.paths_rule]\nenabled = false\n", "r.toml");
  EXPECT_EQ(dump_config(parse_config(dump_config(c), "r.toml")), dump_config(c));
}
