// tests/lua/lua_host_activity_test.cpp — ctx:host_waits and ctx:cpu_hotspots give a rule the numbers
// io-bound-input and cpu-hotspot-idle measure, and the os_call / cpu_sample / cpu_frame views are
// readable; the example rule of docs/lua-api.md ("Host activity") runs.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "tests/lua/lua_support.hpp"

using namespace proflint;
using namespace proflint::testing;

namespace {

Store& store_of(const std::string& fixture) {
  static std::map<std::string, std::unique_ptr<Store>> stores;
  auto& s = stores[fixture];
  if (!s) s = std::make_unique<Store>(load_inputs({fixture_path(fixture).string()}, LoadOptions{}));
  return *s;
}

// Every finding's problem (a rule error is a 'rule-error' diagnostic finding), for failure messages.
std::string all_problems(const AnalysisResult& r) {
  std::string out;
  for (const auto& f : r.findings) out += f.id + ": " + f.problem + "\n";
  return out;
}

}  // namespace

TEST(LuaHostActivity, HostWaitsGivesTheDetectorsMeasurement) {
  // Numbers checked by hand with python3 over OSRT_API (tests/detectors/host_activity_test.cpp).
  const char* body = R"(
    local w = ctx:host_waits(0)
    local c = w.calls
    ctx:report{ problem = string.format("%d %d %s %s %d %d %s %d", w.gpu_idle_blocked_ns, #w.launching_threads,
      c[1].name, c[1].category, c[1].calls, c[1].gpu_idle_ns, c[2].name, c[2].calls) }
    local none = ctx:host_waits(7)
    ctx:report{ problem = string.format("device 7: %d %d", none.gpu_idle_blocked_ns, #none.calls) })";
  auto r = run_rules(store_of("host_io.nsys.sqlite"), {rule("rules/w.lua", rule_text("w", body))});
  auto f = with_id(r, "w");
  ASSERT_EQ(f.size(), 2u) << all_problems(r);
  std::vector<std::string> problems{f[0].problem, f[1].problem};
  std::sort(problems.begin(), problems.end());
  EXPECT_EQ(problems[0], "3887557 2 read io 66 3857557 open64 6");
  EXPECT_EQ(problems[1], "device 7: 0 0");
}

TEST(LuaHostActivity, CpuHotspotsAndTheViews) {
  const char* body = R"(
    local h = ctx:cpu_hotspots(0)
    local top = h.functions[1]
    local frames = ctx:query([[SELECT f.depth, f.name FROM cpu_frame f WHERE f.sample_id = ? ORDER BY depth]],
                             top.example_sample_id)
    local n = ctx:query([[SELECT count(*) AS n FROM os_call WHERE trace_id = ? AND category = 'driver']],
                        ctx.trace_id)[1].n
    ctx:report{ problem = string.format("%d %d %d %s %d %s>%s ioctl=%d", h.period_ns, h.samples_in_window,
      h.samples_while_idle, top["function"], top.samples, frames[1].name, frames[2].name, n) })";
  auto r = run_rules(store_of("host_cpu.nsys.sqlite"), {rule("rules/h.lua", rule_text("h", body))});
  auto f = with_id(r, "h");
  ASSERT_EQ(f.size(), 1u) << all_problems(r);
  // 6 ioctl rows: one inside each cudaStreamSynchronize of the 6 steps (OSRT_API, by hand).
  EXPECT_EQ(f[0].problem, "50000 158 147 ImagingResampleHorizontal_8bpc 107 ImagingResampleHorizontal_8bpc>"
                          "ImagingResample ioctl=6");
}

TEST(LuaHostActivity, DocExampleRuleRuns) {
  std::ifstream in(source_dir() / "docs" / "lua-api.md");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  size_t at = text.find("id = \"reads-while-idle\"");
  ASSERT_NE(at, std::string::npos);
  size_t open = text.rfind("```lua\n", at), close = text.find("```", at);
  auto r = run_rules(store_of("host_io.nsys.sqlite"),
                     {rule("rules/reads.lua", text.substr(open + 7, close - open - 7))});
  auto f = with_id(r, "reads-while-idle");
  ASSERT_EQ(f.size(), 1u) << all_problems(r);
  EXPECT_EQ(f[0].problem, "GPU 0 idled 3.86 ms in 66 `read` calls.");
}
