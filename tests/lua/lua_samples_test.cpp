// tests/lua/lua_samples_test.cpp — Lua rules see sampling logs (docs/lua-api.md, "Sampled series"):
// the `sample` view, the need `samples` and ctx.summary.system_view.
//
// fixtures/samples/nvsmi_2gpu_stalls.csv (scripts/genprof/make_sample_fixtures.sh) has 60 samples
// per GPU; its generator printed GPU 0's mean utilization.gpu as 57.916667 % and a peak of
// 10,247 MiB, checked by hand with python3 on the CSV.
#include <gtest/gtest.h>

#include "tests/lua/lua_support.hpp"

namespace proflint::testing {
namespace {

TEST(LuaSamples, SampleViewNeedAndSystemView) {
  Store store = load_inputs({fixture_path("samples/nvsmi_2gpu_stalls.csv").string()}, LoadOptions{});
  auto r = run_rules(store, {rule("rules/samples.lua", rule_text("samples-probe", R"(
    local q = ctx:query([[SELECT count(*) AS n, avg(value) AS mean, max(unit) AS unit FROM sample
                          WHERE trace_id = ? AND device_id = 0 AND metric = 'gpu_active']], ctx.trace_id)[1]
    local g = ctx.summary.system_view.gpus[1]
    ctx:report{ problem = string.format('%d %.4f %s | %d %.4f %.0f %s', q.n, q.mean, q.unit, g.device_id,
                                        g.gpu_active.mean, g.memory_used.max / 1048576,
                                        tostring(ctx:has('samples'))) })",
                                                                              "  needs = { 'samples' },\n"))});
  auto f = with_id(r, "samples-probe");
  ASSERT_EQ(f.size(), 1u) << (r.notes.empty() ? "" : r.notes[0]);
  EXPECT_EQ(f[0].problem, "60 57.9167 % | 0 57.9167 10247 true");
  // A trace without samples skips a rule that needs them.
  auto skipped = run_rules(sample_store(), {rule("rules/samples.lua", rule_text("samples-probe", "ctx:report{problem='x'}",
                                                                                "  needs = { 'samples' },\n"))});
  EXPECT_TRUE(with_id(skipped, "samples-probe").empty());
}

}  // namespace
}  // namespace proflint::testing
