// tests/lua/lua_source_test.cpp — ctx:source(op_id): an op's place in the user's code and its
// frames, on the with_stack / with_modules fixtures (gen_profile.py source-scenario, whose
// docstring gives the frames by hand).
#include <gtest/gtest.h>

#include "tests/lua/lua_support.hpp"

using namespace proflint;
using namespace proflint::testing;

namespace {

Store& fixture_store(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Store>> stores;
  auto& s = stores[name];
  if (!s) s = std::make_unique<Store>(load_inputs({fixture_path(name).string()}, LoadOptions{}));
  return *s;
}

std::string problem_of(const std::string& fixture, const std::string& body) {
  auto r = run_rules(fixture_store(fixture), {rule("rules/src.lua", rule_text("src", body))});
  auto f = with_id(r, "src");
  if (f.size() != 1) {
    std::string notes;
    for (const auto& n : r.notes) notes += n + "\n";
    for (const auto& d : r.findings) notes += d.id + ": " + d.problem + "\n";
    ADD_FAILURE() << "rule did not report once:\n" << notes;
    return "";
  }
  return f[0].problem;
}

TEST(LuaSource, ItemOpHasSiteAndFrames) {
  // The first aten::_local_scalar_dense: site train.py:84 in log_metrics; frames innermost first:
  // the built-in item method, log_metrics, train, <module>.
  std::string p = problem_of("item_in_logging_with_stack.json.gz", R"(
    local op = ctx:query("SELECT id FROM op WHERE name = 'aten::_local_scalar_dense' ORDER BY start_ns LIMIT 1")[1]
    local s = ctx:source(op.id)
    local parts = { s.origin, s.site, s.file, tostring(s.line), s["function"], tostring(s.module_path), tostring(#s.frames) }
    for _, f in ipairs(s.frames) do parts[#parts + 1] = (f.file or "-") .. ":" .. tostring(f.line) end
    ctx:report{ problem = table.concat(parts, "|") })");
  EXPECT_EQ(p,
            "python_function|train.py:84 in log_metrics|train.py|84|log_metrics|nil|4|"
            "-:nil|train.py:84|train.py:101|train.py:130");
}

TEST(LuaSource, ModulePathAndModuleFrames) {
  // The FP32 GEMM's op sits in Encoder_0 > Block_2 > Linear_5; the user frame is model.py:40 forward.
  std::string p = problem_of("slow_module_with_modules.json.gz", R"(
    local op = ctx:query("SELECT op_id AS id FROM kernel WHERE name = 'ampere_sgemm_128x64_tn' ORDER BY start_ns LIMIT 1")[1]
    local s = ctx:source(op.id)
    local modules = {}
    for _, f in ipairs(s.frames) do if f.module then modules[#modules + 1] = f.module end end
    ctx:report{ problem = s.site .. "|" .. s.module_path .. "|" .. table.concat(modules, ",") })");
  EXPECT_EQ(p, "model.py:40 in forward|Encoder_0/Block_2/Linear_5|Linear_5,Block_2,Encoder_0");
}

TEST(LuaSource, NilWithoutAttribution) {
  // sample_train records no Python frames.
  auto r = run_rules(sample_store(), {rule("rules/src.lua", rule_text("src", R"(
    local op = ctx:query("SELECT id FROM op LIMIT 1")[1]
    ctx:report{ problem = tostring(ctx:source(op.id)) })"))});
  auto f = with_id(r, "src");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].problem, "nil");
}

}  // namespace

namespace {

std::vector<Finding> where_findings(Store& store, const std::string& body, std::vector<std::string>* notes = nullptr) {
  auto r = run_rules(store, {rule("rules/src.lua", rule_text("src", body))});
  if (notes) *notes = r.notes;
  std::vector<Finding> out;
  for (const auto& f : r.findings)
    if (f.id == "src" || f.id == "rule-error") out.push_back(f);
  return out;
}

// ctx:report{ where = ... }: a rule names the rows behind its finding and gets the places in the
// user's code, as built-in detectors do (issue 18). The fixture's docstring puts every .item() at
// train.py:84 in log_metrics; the count and time are checked against the rows the rule passes.
TEST(LuaSource, ReportWhereGivesTheFindingItsPlaces) {
  auto found = where_findings(fixture_store("item_in_logging_with_stack.json.gz"), R"(
    local where, total, n = {}, 0, 0
    for row in ctx:rows("SELECT id, dur_ns FROM op WHERE name = 'aten::_local_scalar_dense'") do
      where[#where + 1] = { op_id = row.id, time_ns = row.dur_ns }
      total, n = total + row.dur_ns, n + 1
    end
    ctx:report{ problem = "Syncs: " .. n .. " calls, " .. total .. " ns.", where = where, where_label = "host blocked" })");
  ASSERT_EQ(found.size(), 1u);
  const Finding& f = found[0];
  ASSERT_EQ(f.id, "src") << f.problem;
  ASSERT_FALSE(f.locations.empty());
  const SourceLocation& l = f.locations[0];
  EXPECT_EQ(l.file, "train.py");
  EXPECT_EQ(l.line, 84);
  EXPECT_EQ(l.function, "log_metrics");
  EXPECT_EQ(l.time_label, "host blocked");
  // "Syncs: N calls, T ns." — the place holds every row the rule passed.
  long long n = 0, total = 0;
  ASSERT_EQ(std::sscanf(f.problem.c_str(), "Syncs: %lld calls, %lld ns.", &n, &total), 2) << f.problem;
  EXPECT_EQ(l.count, n);
  EXPECT_EQ(l.time_ns, total);
  EXPECT_NE(f.problem.find("Where: "), std::string::npos) << f.problem;
  EXPECT_NE(f.problem.find("train.py:84 in log_metrics"), std::string::npos) << f.problem;
}

TEST(LuaSource, ReportWhereIsCheckedAndQuietWithoutFrames) {
  // Bad rows are the rule's error, named by position.
  for (const auto& [body, message] : std::vector<std::pair<std::string, std::string>>{
           {"ctx:report{ problem = 'x', where = { { op_id = 1, kernel_id = 2 } } }", "where[1] needs exactly one"},
           {"ctx:report{ problem = 'x', where = { { op_id = 1 }, { opid = 3 } } }", "where[2]: unknown field 'opid'"},
           {"ctx:report{ problem = 'x', where = { { time_ns = 5 } } }", "where[1] names no row"},
           {"ctx:report{ problem = 'x', where = { { op_id = 1, time_ns = -1 } } }", "where[1].time_ns must be"},
           {"ctx:report{ problem = 'x', where = 7 }", "'where' must be a list"},
           {"ctx:report{ problem = 'x', where = {}, where_label = 3 }", "'where_label' must be a string"}}) {
    auto found = where_findings(fixture_store("item_in_logging_with_stack.json.gz"), body);
    ASSERT_EQ(found.size(), 1u) << body;
    EXPECT_EQ(found[0].id, "rule-error") << body;
    EXPECT_NE(found[0].problem.find(message), std::string::npos) << found[0].problem;
  }
  // sample_train records no Python frames: the rows are accepted and nothing is attached.
  auto found = where_findings(sample_store(), R"(
    local op = ctx:query("SELECT id FROM op LIMIT 1")[1]
    ctx:report{ problem = "x", where = { { op_id = op.id, time_ns = 10 } } })");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].id, "src") << found[0].problem;
  EXPECT_TRUE(found[0].locations.empty());
  EXPECT_EQ(found[0].problem, "x");
}

}  // namespace
