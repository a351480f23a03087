// tests/lua/lua_tensor_core_test.cpp — proflint.uses_tensor_cores on hostile names (issue 20,
// defect 3): a 100,000-character name used to overflow the stack inside std::regex and kill the
// whole process. The matcher is now a linear substring scan, so the call returns.
#include <gtest/gtest.h>

#include "tests/lua/lua_support.hpp"

using namespace proflint;
using namespace proflint::testing;

TEST(LuaTensorCores, HugeNamesReturnInsteadOfCrashing) {
  auto r = run_rules(sample_store(), {rule("rules/probe.lua", rule_text("probe", R"(
    local plain, why = proflint.uses_tensor_cores(string.rep("K", 100000))
    -- A marker after 10^6 characters is still found: the scan covers the whole name.
    local marked = proflint.uses_tensor_cores(string.rep("K", 1000000) .. "_wgmma")
    local ffma = proflint.uses_tensor_cores(string.rep("sm80_xmma_", 50000) .. "ffma")
    ctx:report{ problem = table.concat({ tostring(plain), why, tostring(marked), tostring(ffma),
                                         proflint.category(string.rep("K", 100000)) }, ' ') })"))});
  auto f = with_id(r, "probe");
  ASSERT_EQ(f.size(), 1u) << (r.findings.empty() ? "" : r.findings[0].problem) << (r.notes.empty() ? "" : r.notes[0]);
  EXPECT_EQ(f[0].problem, "false no Tensor Core pattern matched true false other");
}
