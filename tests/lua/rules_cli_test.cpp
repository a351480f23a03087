// tests/lua/rules_cli_test.cpp — the rules commands and --rules, through the real binary:
// usage errors exit 2 with a message naming the file and place, never a crash.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/run.hpp"

using namespace proflint::testing;

namespace {

std::string root() { return source_dir().string(); }

std::string temp_file(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

}  // namespace

TEST(LuaRulesCli, CheckValidAndBroken) {
  auto ok = run_proflint_in(root(), "rules check rules/optimizer_not_fused.lua rules/examples/step_time_budget.lua");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("rules/optimizer_not_fused.lua: ok: rule optimizer-not-fused"), std::string::npos) << ok.out;

  auto bad = run_proflint_in(root(), "rules check tests/lua/hostile/broken_rule.lua");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("tests/lua/hostile/broken_rule.lua:4: unknown field 'titel' (did you mean 'title'?)"),
            std::string::npos)
      << bad.err;
  EXPECT_NE(bad.err.find("tests/lua/hostile/broken_rule.lua:5: unknown need 'kernel' (did you mean 'kernels'?)"),
            std::string::npos);
  EXPECT_NE(bad.err.find("tests/lua/hostile/broken_rule.lua:8: 'evaluate' must be a function, not a number"),
            std::string::npos);

  auto syntax = temp_file("syntax_rule.lua", "return {\n  id = 'x'\n  title = 'y',\n}\n");
  auto s = run_proflint("rules check " + shell_quote(syntax));
  EXPECT_EQ(s.exit_code, 2);
  EXPECT_NE(s.err.find(syntax + ":3: '}' expected (to close '{' at line 1) near 'title'"), std::string::npos) << s.err;

  auto missing = run_proflint("rules check /no/such/rule.lua");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/no/such/rule.lua: rule file not found"), std::string::npos) << missing.err;

  auto builtin_id =
      temp_file("builtin_id.lua", "return { id = 'amp-not-used', title = 't', evaluate = function() end }\n");
  auto b = run_proflint("rules check " + shell_quote(builtin_id));
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.err.find("id 'amp-not-used' is the id of a built-in detector"), std::string::npos) << b.err;
}

TEST(LuaRulesCli, MissingRulesFolderIsAUsageError) {
  auto r = run_proflint_in(root(), "analyze fixtures/sample_train.json.gz --rules /no/such/rules");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "proflint: error: /no/such/rules: rules folder not found (give a folder of .lua files)\n");
  EXPECT_TRUE(r.out.empty());
}

TEST(LuaRulesCli, ListAndExplainShowRules) {
  auto list = run_proflint_in(root(), "rules list --rules rules/examples");
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("amp-not-used               enabled"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("source: builtin"), std::string::npos);
  EXPECT_NE(list.out.find("optimizer-not-fused        enabled   The optimizer updates parameters one kernel at a time"),
            std::string::npos);
  EXPECT_NE(list.out.find("source: rules/optimizer_not_fused.lua; needs: kernels, ops, iterations"), std::string::npos);
  EXPECT_NE(list.out.find("source: rules/examples/step_time_budget.lua; needs: iterations"), std::string::npos);

  auto config = temp_file("rules_list.toml", "[rules.op-type-gpu-budget]\nenabled = false\n");
  auto disabled = run_proflint_in(root(), "rules list --config " + shell_quote(config));
  EXPECT_NE(disabled.out.find("op-type-gpu-budget         disabled"), std::string::npos) << disabled.out;

  auto explain = run_proflint_in(root(), "rules explain step-time-budget --rules rules/examples");
  EXPECT_EQ(explain.exit_code, 0) << explain.err;
  EXPECT_NE(explain.out.find("# step-time-budget (Lua rule)"), std::string::npos) << explain.out;
  EXPECT_NE(explain.out.find("- `max_step_ms` = 350 — budget for the median step, in milliseconds"), std::string::npos);
  EXPECT_NE(explain.out.find("- file: `rules/examples/step_time_budget.lua`"), std::string::npos);

  auto unknown = run_proflint_in(root(), "rules explain optimizer-not-fuse");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("did you mean 'optimizer-not-fused'?"), std::string::npos) << unknown.err;
}

TEST(LuaRulesCli, ConfigMistakesNameThePlace) {
  auto config = temp_file("rules_bad.toml", "[rules]\npaths = [\"" + root() +
                                                "/rules/examples\"]\n\n[rules.step-time-budgt]\nmax_step_ms = 1\n");
  auto r = run_proflint_in(root(), "analyze fixtures/sample_train.json.gz --config " + shell_quote(config));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "proflint: error: " + config + ":4:8: unknown rule 'step-time-budgt' (did you mean 'step-time-budget'?)\n");

  auto wrong_type =
      temp_file("rules_type.toml", "[rules]\npaths = [\"" + root() +
                                       "/rules/examples\"]\n\n[rules.step-time-budget]\nmax_step_ms = \"fast\"\n");
  auto t = run_proflint_in(root(), "analyze fixtures/sample_train.json.gz --config " + shell_quote(wrong_type));
  EXPECT_EQ(t.exit_code, 2);
  EXPECT_NE(t.err.find("[rules.step-time-budget]: option 'max_step_ms' must be a number, got string"),
            std::string::npos)
      << t.err;
}
