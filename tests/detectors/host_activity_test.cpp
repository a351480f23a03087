// tests/detectors/host_activity_test.cpp — io-bound-input and cpu-hotspot-idle on the generated
// host-activity exports (docs/fixtures.md) and a real nsys export with CPU sampling, and the
// input-bound verdict of dataloader-stall on real CPU-only captures (issue 17).
//
// Every expected number was computed by hand from the raw rows with python3 + sqlite3, not read
// back from proflint: GPU busy = union of CUPTI kernel and memcpy rows; GPU idle = window minus
// busy (the planted reads and samples all lie between the first and the last busy interval, so
// [first busy start, last busy end) gives the same counts as the trace's steady window);
// launching threads = globalTid of the runtime rows whose correlationId a kernel or copy carries;
// a blocking OS call counts its part outside the thread's runtime calls and inside GPU idle.
#include <gtest/gtest.h>

#include <numeric>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint;
using namespace proflint::testing;

namespace {

int64_t claimed(const Finding& f) {
  return std::accumulate(f.claims.begin(), f.claims.end(), int64_t{0},
                         [](int64_t s, const auto& kv) { return s + kv.second; });
}

}  // namespace

TEST(IoBoundInput, NamesTheReadsThatKeepTheGpuIdle) {
  auto r = analyze_with(fixture_path("host_io.nsys.sqlite").string(), "io-bound-input");
  auto f = findings_of(r, "io-bound-input");
  ASSERT_EQ(f.size(), 1u);
  const auto& e = f[0].evidence;
  // python3: blocked 3887557 ns = 66 read calls (3857557 ns) + 6 open64 (30000 ns); the ioctl
  // inside cudaStreamSynchronize and the CUPTI thread's pthread_cond_timedwait count nothing. The
  // steady window is the whole capture (8613999 ns: trace.end_ns - trace.start_ns, no start-up).
  EXPECT_EQ(e["gpu_idle_blocked_ns"].get<int64_t>(), 3887557);
  EXPECT_EQ(e["steady_window_ns"].get<int64_t>(), 8613999);
  EXPECT_EQ(e["main_category"], "io");
  ASSERT_EQ(e["calls"].size(), 2u);
  EXPECT_EQ(e["calls"][0]["name"], "read");
  EXPECT_EQ(e["calls"][0]["calls"].get<int64_t>(), 66);
  EXPECT_EQ(e["calls"][0]["gpu_idle_ns"].get<int64_t>(), 3857557);
  EXPECT_EQ(e["calls"][1]["name"], "open64");
  EXPECT_EQ(e["calls"][1]["calls"].get<int64_t>(), 6);
  EXPECT_EQ(e["calls"][1]["gpu_idle_ns"].get<int64_t>(), 30000);
  // Their backtraces (OSRT_CALLCHAINS chain 3 for read, 1 for open64, genprof/host.py): the first
  // frame above the libc function is the caller; the worker's wait (chain 2) has none and counts nothing.
  EXPECT_EQ(e["calls"][0]["caller"], "ShardReader::next_record()");
  EXPECT_EQ(e["calls"][1]["caller"], "_io_FileIO___init__");
  EXPECT_NE(f[0].problem.find("(66 calls, from `ShardReader::next_record()`)"), std::string::npos) << f[0].problem;
  EXPECT_EQ(e["launching_threads"].size(), 2u);  // the main thread and the autograd thread
  EXPECT_EQ(f[0].estimated_savings_ns, static_cast<int64_t>(0.8 * 3887557));
  // GPU-idle time, not host time: the claims are idle-gap keys and add up to the estimate.
  EXPECT_EQ(claimed(f[0]), f[0].estimated_savings_ns);
  for (const auto& [key, ns] : f[0].claims) EXPECT_EQ(key.rfind("gpu-idle:", 0), 0u) << key;
  EXPECT_NE(f[0].problem.find("thread"), std::string::npos);
  EXPECT_NE(f[0].problem.find("'python3'"), std::string::npos) << f[0].problem;
  // The trace is a PyTorch training job: DataLoader advice.
  EXPECT_NE(f[0].recommendation.find("num_workers"), std::string::npos);
}

TEST(IoBoundInput, SilentWhenTheOnlyWaitsAreTheDriversOrAnotherThreads) {
  auto r = analyze_with(fixture_path("host_quiet.nsys.sqlite").string(), "io-bound-input");
  EXPECT_TRUE(findings_of(r, "io-bound-input").empty());
  ASSERT_EQ(r.below_threshold.size(), 1u);
  EXPECT_EQ(r.below_threshold[0].value, 0.0);
}

TEST(IoBoundInput, ZeroThresholdsWithNothingBlockedReportNothing) {
  // Regression guard: with every threshold at 0 there is still no blocked thread to name.
  auto r = analyze_with(fixture_path("host_quiet.nsys.sqlite").string(), "io-bound-input",
                        {{"min_share", 0}, {"min_idle_ns", 0}});
  EXPECT_TRUE(findings_of(r, "io-bound-input").empty());
  ASSERT_EQ(r.below_threshold.size(), 1u);
}

TEST(IoBoundInput, SkippedWithoutOsRuntimeCalls) {
  auto r = analyze_with(fixture_path("sample_train.nsys.sqlite").string(), "io-bound-input");
  EXPECT_TRUE(findings_of(r, "io-bound-input").empty());
  EXPECT_TRUE(r.below_threshold.empty());
}

TEST(IoBoundInput, SharesTheIdleTimeWithDataloaderStallWithoutCountingItTwice) {
  Store store = load_inputs({fixture_path("host_io.nsys.sqlite").string()}, LoadOptions{});
  AnalysisOptions ao;
  ao.only = {"io-bound-input", "dataloader-stall"};
  auto r = run_analysis(store, ao, detector_registry());
  ASSERT_EQ(r.findings.size(), 2u);
  // The reads sit inside the DataLoader fetches: both claim the same gaps, and the finding ranked
  // second keeps only what the first did not claim.
  const Finding& second = r.findings[1];
  ASSERT_EQ(second.overlaps.size(), 1u);
  EXPECT_EQ(second.overlaps[0].id, r.findings[0].id);
  EXPECT_GT(second.overlaps[0].shared_ns, 0);
  EXPECT_EQ(second.estimated_savings_ns + second.overlaps[0].shared_ns, second.gross_savings_ns);
}

TEST(CpuHotspotIdle, NamesTheFunctionsTheLaunchingThreadRunsWhileTheGpuIdles) {
  auto r = analyze_with(fixture_path("host_cpu.nsys.sqlite").string(), "cpu-hotspot-idle");
  auto f = findings_of(r, "cpu-hotspot-idle");
  ASSERT_EQ(f.size(), 1u);
  const auto& e = f[0].evidence;
  // python3 over COMPOSITE_EVENTS/SAMPLING_CALLCHAINS: 158 samples in the window, 147 in GPU-idle
  // time: 107 ImagingResampleHorizontal_8bpc, 27 __memmove_avx_unaligned_erms, 13 cudaLaunchKernel;
  // median spacing 50 us.
  EXPECT_EQ(e["samples_in_window"].get<int64_t>(), 158);
  EXPECT_EQ(e["samples_while_gpu_idle"].get<int64_t>(), 147);
  EXPECT_EQ(e["sample_period_ns"].get<int64_t>(), 50000);
  ASSERT_EQ(e["hotspots"].size(), 3u);
  EXPECT_EQ(e["hotspots"][0]["function"], "ImagingResampleHorizontal_8bpc");
  EXPECT_EQ(e["hotspots"][0]["samples"].get<int64_t>(), 107);
  EXPECT_EQ(e["hotspots"][0]["module"], "_imaging.cpython-311-x86_64-linux-gnu.so");
  EXPECT_EQ(e["hotspots"][0]["callers"][0]["path"], "`ImagingResample` ← `_PyEval_EvalFrameDefault`");
  EXPECT_EQ(e["hotspots"][1]["function"], "__memmove_avx_unaligned_erms");
  EXPECT_EQ(e["hotspots"][1]["samples"].get<int64_t>(), 27);
  EXPECT_EQ(e["hotspots"][2]["function"], "cudaLaunchKernel");
  EXPECT_EQ(e["hotspots"][2]["samples"].get<int64_t>(), 13);
  EXPECT_EQ(e["kind"], "decode");
  // Each idle sample stands for at most one 50 us period of idle time.
  EXPECT_LE(e["host_busy_gpu_idle_ns"].get<int64_t>(), 147 * 50000);
  EXPECT_EQ(claimed(f[0]), f[0].estimated_savings_ns);
}

TEST(CpuHotspotIdle, SilentWhenTheHotCodeRunsOnAThreadThatLaunchesNothing) {
  auto r = analyze_with(fixture_path("host_quiet.nsys.sqlite").string(), "cpu-hotspot-idle");
  EXPECT_TRUE(findings_of(r, "cpu-hotspot-idle").empty());
  ASSERT_EQ(r.below_threshold.size(), 1u);
  EXPECT_EQ(r.below_threshold[0].unit, "samples");
  EXPECT_LT(r.below_threshold[0].value, 20.0);
}

TEST(CpuHotspotIdle, RealSaxpyMpiExportShowsTheHostLoopBetweenIterations) {
  REALDATA_OR_SKIP(path, "nsys/nsys2022_saxpy_mpi_all_tables.sqlite");
  auto f = findings_of(analyze_with(path, "cpu-hotspot-idle"), "cpu-hotspot-idle");
  ASSERT_EQ(f.size(), 1u);
  const auto& e = f[0].evidence;
  // python3 over the steady window the store records (steady_state of device 0): the one sampled
  // thread ('MPI Rank 0') has 4755 samples there, 4070 in GPU-idle time: main 2635,
  // std::abs(double) 492, cxip_cq_progress 194.
  EXPECT_EQ(e["samples_in_window"].get<int64_t>(), 4755);
  EXPECT_EQ(e["samples_while_gpu_idle"].get<int64_t>(), 4070);
  EXPECT_EQ(e["hotspots"][0]["function"], "main");
  EXPECT_EQ(e["hotspots"][0]["samples"].get<int64_t>(), 2635);
  EXPECT_EQ(e["hotspots"][1]["function"], "std::abs(double)");
  EXPECT_EQ(e["hotspots"][1]["samples"].get<int64_t>(), 492);
  EXPECT_EQ(e["hotspots"][2]["function"], "cxip_cq_progress");
  EXPECT_EQ(e["hotspots"][2]["samples"].get<int64_t>(), 194);
  // Not a framework job: no DataLoader advice.
  EXPECT_EQ(f[0].recommendation.find("DataLoader"), std::string::npos) << f[0].recommendation;
}

TEST(DataloaderStallCpuOnly, RealSlowLoaderCaptureIsInputBound) {
  auto r = analyze_with(fixture_path("captured/torch_cpu_mlp/mlp_slow_loader_4steps.pt.trace.json.gz").string(),
                        "dataloader-stall");
  auto f = findings_of(r, "dataloader-stall");
  ASSERT_EQ(f.size(), 1u);
  const auto& e = f[0].evidence;
  // python3 over the ranges: the 4 ProfilerStep windows cover 595751 us; the
  // enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__ ranges inside them 587718 us.
  EXPECT_EQ(e["verdict"], "input_bound");
  EXPECT_EQ(e["gpu_work"], false);
  EXPECT_EQ(e["fetch_in_steps_ns"].get<int64_t>(), 587718000);
  EXPECT_EQ(e["covered_ns"].get<int64_t>(), 595751000);
  EXPECT_EQ(e["steps"].get<int64_t>(), 4);
  EXPECT_EQ(e["steps_affected"].get<int64_t>(), 4);
  EXPECT_EQ(e["loader"], "single-process (num_workers=0)");
  EXPECT_EQ(f[0].problem.rfind("The job is input-bound", 0), 0u) << f[0].problem;
  EXPECT_TRUE(f[0].claims.empty());  // host time: no GPU-idle time to claim
}

TEST(DataloaderStallCpuOnly, RealPlainLoopIsNotInputBound) {
  auto r = analyze_with(fixture_path("captured/torch_cpu_mlp/mlp_4steps.pt.trace.json.gz").string(),
                        "dataloader-stall");
  EXPECT_TRUE(findings_of(r, "dataloader-stall").empty());
  ASSERT_EQ(r.below_threshold.size(), 1u);
  EXPECT_LT(r.below_threshold[0].value, 0.5);
}

TEST(HostActivityImport, RealCudfExportKeepsEveryOsRuntimeCall) {
  REALDATA_OR_SKIP(path, "nsys/nsys2020_cudf.sqlite");
  Store store = load_inputs({path}, LoadOptions{});
  // sqlite3 on the export: SELECT count(*), sum(end - start) FROM OSRT_API WHERE eventClass = 27
  // gives 4809 calls, 11344864656 ns; the 6 marker rows (eventClass 31/32) are not calls.
  SQLite::Statement q(store.db(), "SELECT count(*), sum(dur_ns), sum(category = 'wait'), sum(category = 'driver') "
                                  "FROM os_call");
  ASSERT_TRUE(q.executeStep());
  EXPECT_EQ(q.getColumn(0).getInt64(), 4809);
  EXPECT_EQ(q.getColumn(1).getInt64(), 11344864656);
  // 46 sem_timedwait, 39 poll, 5 pthread_cond_timedwait, 4 pthread_mutex_lock, 1 pthread_cond_wait, 1 waitpid
  EXPECT_EQ(q.getColumn(2).getInt64(), 96);
  EXPECT_EQ(q.getColumn(3).getInt64(), 1536);  // ioctl
  // The capture window stays the CUDA/NVTX one (2.72 s), not the OS calls' span.
  SQLite::Statement w(store.db(), "SELECT end_ns - start_ns FROM trace");
  ASSERT_TRUE(w.executeStep());
  EXPECT_LT(w.getColumn(0).getInt64(), 3000000000);
}
