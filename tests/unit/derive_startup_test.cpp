// tests/unit/derive_startup_test.cpp — start-up versus steady state and the workload kind, on
// hand-built traces (engine/derive/startup.hpp). Every expected figure follows from the
// intervals written in the test.
#include <gtest/gtest.h>

#include "engine/derive/startup.hpp"

namespace proflint {
namespace {

constexpr int64_t ms = 1'000'000;

// A trace with window [0, end) and named strings 1.. for API names.
struct Builder {
  TraceData t;
  explicit Builder(int64_t end) {
    t.start_ns = 0;
    t.end_ns = end;
    for (const char* name : {"cudaFree", "cudaLaunchKernel", "warmup|forward", "cudaMalloc"}) t.intern(name);  // ids 1..4
  }
  int64_t api(int64_t name, int64_t start, int64_t end) {
    ApiRec a;
    a.id = static_cast<int64_t>(t.apis.size()) + 1;
    a.pid = 1;
    a.tid = 1;
    a.start = start;
    a.end = end;
    a.name_id = name;
    t.apis.push_back(a);
    return static_cast<int64_t>(t.apis.size()) - 1;
  }
  void kernel(int64_t start, int64_t end) {
    GpuRec g;
    g.device_id = 0;
    g.start = start;
    g.end = end;
    g.api = api(2, start - 10'000, start - 5'000);  // a 5 µs launch just before
    t.gpu.push_back(g);
  }
};

TEST(DeriveStartup, ContextCreationBeforeTheFirstKernelIsStartup) {
  Builder b(1000 * ms);
  b.api(1, 1 * ms, 301 * ms);  // the first call of the process creates the context: 300 ms
  for (int i = 0; i < 10; ++i) b.kernel((302 + 60 * i) * ms, (352 + 60 * i) * ms);
  auto s = find_startup(b.t);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].steady_start, 302 * ms);  // the first kernel
  EXPECT_EQ(s[0].window_end, 1000 * ms);
  EXPECT_EQ(s[0].cause, "context_creation");
  EXPECT_EQ(s[0].evidence, "cudaFree 300.0 ms");
}

TEST(DeriveStartup, LazyInitialisationRightAfterTheFirstKernelChains) {
  Builder b(2000 * ms);
  b.api(1, 1 * ms, 301 * ms);
  b.kernel(302 * ms, 303 * ms);
  b.api(1, 310 * ms, 810 * ms);  // first library call: 500 ms, 7 ms after the start-up's end
  for (int i = 0; i < 20; ++i) b.api(1, (900 + i) * ms, (900 + i) * ms + 10'000);  // 10 µs frees
  for (int i = 0; i < 10; ++i) b.kernel((820 + 100 * i) * ms, (870 + 100 * i) * ms);
  auto s = find_startup(b.t);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].steady_start, 810 * ms);
  EXPECT_EQ(s[0].cause, "context_creation,lazy_initialization");
  EXPECT_EQ(s[0].evidence, "cudaFree 500.0 ms");
}

TEST(DeriveStartup, ASlowCallLongAfterStartupStaysInTheSteadyState) {
  // A 60 ms cudaFree 400 ms after the job settled is the allocator under memory pressure, to be
  // judged, not start-up: the gap (400 ms) is longer than the call.
  Builder b(1000 * ms);
  for (int i = 0; i < 10; ++i) b.kernel((10 + 90 * i) * ms, (60 + 90 * i) * ms);
  for (int i = 0; i < 20; ++i) b.api(1, (100 + i) * ms, (100 + i) * ms + 10'000);
  b.api(1, 400 * ms, 460 * ms);
  auto s = find_startup(b.t);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].steady_start, 0);
  EXPECT_EQ(s[0].cause, "");
}

TEST(DeriveStartup, WarmupRangeAndWarmupIteration) {
  Builder b(1000 * ms);
  RangeRec r;
  r.pid = 1;
  r.tid = 1;
  r.start = 0;
  r.end = 200 * ms;
  r.name_id = 3;
  r.kind = RangeKind::user_annotation;
  b.t.ranges.push_back(r);
  for (int i = 0; i < 10; ++i) b.kernel((10 + 90 * i) * ms, (60 + 90 * i) * ms);
  auto s = find_startup(b.t);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].steady_start, 200 * ms);
  EXPECT_EQ(s[0].cause, "warmup_range");

  // Iterations of 300, 100, 100, 100 ms: the first (>= 2 x the 100 ms median) is warm-up.
  Builder c(700 * ms);
  for (int k = 0; k < 4; ++k) {
    IterationRec it;
    it.start = k == 0 ? 0 : (200 + 100 * k) * ms;
    it.end = (300 + 100 * k) * ms;
    c.t.iterations.push_back(it);
  }
  for (int i = 0; i < 10; ++i) c.kernel((5 + 60 * i) * ms, (30 + 60 * i) * ms);
  auto w = find_startup(c.t);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].steady_start, 300 * ms);
  EXPECT_EQ(w[0].cause, "warmup_iteration");
}

TEST(DeriveStartup, CallsThatWaitForTheGpuAreNeverStartup) {
  // One 800 ms cudaStreamSynchronize right after the first kernel is the job waiting for its own
  // work (nsys2026_h100_2gpu_1s), a rare and long call but not initialisation.
  Builder b(1000 * ms);
  ASSERT_EQ(b.t.intern("cudaStreamSynchronize"), 5);
  b.kernel(10 * ms, 900 * ms);
  b.api(5, 20 * ms, 820 * ms);
  for (int i = 0; i < 10; ++i) b.kernel((900 + 5 * i) * ms, (902 + 5 * i) * ms);
  EXPECT_EQ(find_startup(b.t)[0].steady_start, 0);
}

TEST(DeriveStartup, NothingSeparatedWhenNoWorkFollowsTheStartup) {
  Builder b(1000 * ms);
  b.kernel(10 * ms, 20 * ms);
  b.api(4, 30 * ms, 990 * ms);  // a one-off call after the only kernel: nothing after it to judge
  for (int i = 0; i < 20; ++i) b.api(4, 991 * ms + i * 100'000, 991 * ms + i * 100'000 + 10'000);
  auto s = find_startup(b.t);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].steady_start, 0);
  EXPECT_EQ(s[0].cause, "");
  EXPECT_EQ(s[0].evidence, "");
}

TEST(DeriveStartup, ShortCallsAreNeverStartup) {
  // 49 ms before the first kernel is below the 50 ms floor of a start-up call.
  Builder b(1000 * ms);
  b.api(1, 1 * ms, 50 * ms);
  for (int i = 0; i < 10; ++i) b.kernel((60 + 90 * i) * ms, (100 + 90 * i) * ms);
  EXPECT_EQ(find_startup(b.t)[0].steady_start, 0);
}

TEST(DeriveWorkload, FromOpsAndFramework) {
  TraceData t;
  EXPECT_EQ(classify_workload(t), "");  // nothing at all
  GpuRec g;
  t.gpu.push_back(g);
  EXPECT_EQ(classify_workload(t), "non_framework");
  t.framework = "pytorch";
  EXPECT_EQ(classify_workload(t), "");  // a framework trace without ops cannot tell
  OpRec fwd;
  fwd.range = 0;
  fwd.pass = OpPass::fwd;
  t.ops.push_back(fwd);
  EXPECT_EQ(classify_workload(t), "inference");
  OpRec bwd = fwd;
  bwd.pass = OpPass::bwd;
  t.ops.push_back(bwd);
  EXPECT_EQ(classify_workload(t), "training");
  TraceData u;  // a library's NVTX ranges become ops, but no framework is named: plain CUDA code
  u.gpu.push_back(g);
  u.ops.push_back(fwd);
  EXPECT_EQ(classify_workload(u), "non_framework");
  TraceData v;  // unassociated:<name> placeholders are not framework ops
  v.framework = "pytorch";
  v.gpu.push_back(g);
  OpRec unassociated;
  unassociated.range = -1;
  v.ops.push_back(unassociated);
  EXPECT_EQ(classify_workload(v), "");
}

}  // namespace
}  // namespace proflint
