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
