// tests/realdata/derive_realdata_test.cpp — derivation on the real profiles in ../shared/realdata.
//
// Expected iteration counts were checked against the raw files with python3 (json/sqlite3):
// ProfilerStep#N annotations, and for traces without them the Optimizer.step#SGD.step
// annotations (6 in tb_resnet50_autograd_api_no_steps, 40 in param_linear_fp32, 30 in
// param_resnet) or the 5 saxpy loop turns of the nsys MPI example.
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "engine/pipeline/load.hpp"
#include "engine/derive/derive.hpp"
#include "engine/import/importer.hpp"
#include "engine/store/store.hpp"
#include "engine/store/value_bounds.hpp"
#include "tests/support/realdata.hpp"

namespace fs = std::filesystem;

namespace proflint {
namespace {

Store import_and_derive(const std::string& path, const DeriveOptions& options = {}) {
  Store store = Store::create_in_memory();
  import_file(path, store, {});
  derive_all(store, options);
  return store;
}

int64_t num(Store& store, const std::string& sql) {
  SQLite::Statement q(store.db(), sql);
  if (!q.executeStep() || q.getColumn(0).isNull()) return -999;
  return q.getColumn(0).getInt64();
}

double real(Store& store, const std::string& sql) {
  SQLite::Statement q(store.db(), sql);
  if (!q.executeStep() || q.getColumn(0).isNull()) return -1;
  return q.getColumn(0).getDouble();
}

std::string text(Store& store, const std::string& sql) {
  SQLite::Statement q(store.db(), sql);
  if (!q.executeStep()) return "<no row>";
  return q.getColumn(0).isNull() ? "<null>" : q.getColumn(0).getString();
}

std::vector<std::string> column(Store& store, const std::string& sql) {
  SQLite::Statement q(store.db(), sql);
  std::vector<std::string> out;
  while (q.executeStep()) out.push_back(q.getColumn(0).isNull() ? "<null>" : q.getColumn(0).getString());
  return out;
}

// Share of a breakdown category in the whole-trace row of the busiest device.
double whole_trace_share(Store& store, const std::string& category) {
  return real(store, "SELECT 1.0 * SUM(CASE WHEN category = '" + category + "' THEN time_ns END) / SUM(time_ns) "
                     "FROM breakdown WHERE iteration = -1 AND device_id = (SELECT device_id FROM breakdown "
                     "WHERE iteration = -1 AND category = 'idle' ORDER BY time_ns LIMIT 1)");
}

// Iteration windows as documented in engine/derive/breakdown.hpp, recomputed from the table.
std::map<int64_t, int64_t> expected_window_lengths(Store& store) {
  std::map<int64_t, int64_t> out;
  out[-1] = num(store, "SELECT end_ns - start_ns FROM trace");
  SQLite::Statement q(store.db(), "SELECT iteration, start_ns, end_ns, gpu_end_ns FROM iteration ORDER BY iteration");
  int64_t prev_end = INT64_MIN;
  while (q.executeStep()) {
    int64_t start = std::max(q.getColumn(1).getInt64(), prev_end);
    int64_t end = q.getColumn(2).getInt64();
    if (!q.getColumn(3).isNull()) end = std::max(end, q.getColumn(3).getInt64());
    end = std::max(end, start);
    out[q.getColumn(0).getInt64()] = end - start;
    prev_end = end;
  }
  return out;
}

TEST(DeriveRealdata, ResNetWithProfilerStepsHasSixStepsNoTensorCoresAndADataLoaderBottleneck) {
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_v100_workers0.pt.trace.json.gz");
  Store store = import_and_derive(path);
  EXPECT_EQ(text(store, "SELECT iteration_source FROM trace"), "profiler_step");
  EXPECT_EQ(column(store, "SELECT number FROM iteration ORDER BY iteration"),
            (std::vector<std::string>{"5", "6", "7", "8", "9", "10"}));
  EXPECT_EQ(num(store, "SELECT SUM(time_ns) FROM breakdown WHERE category = 'kernel_tc'"), 0);
  EXPECT_EQ(num(store, "SELECT COUNT(*) FROM kernel WHERE is_tensor_core = 1"), 0);
  // num_workers=0: the expert view measures ~40% of step time in DataLoader.__next__.
  double dataloader = real(store, "SELECT 1.0 * SUM(CASE WHEN category = 'dataloader' THEN time_ns END) / SUM(time_ns) "
                                  "FROM breakdown WHERE iteration >= 0");
  EXPECT_GT(dataloader, 0.30);
  EXPECT_LT(dataloader, 0.50);
  // Every kernel reaches an op through its launch; FP32 convolutions are eligible but not using TC.
  EXPECT_EQ(num(store, "SELECT COUNT(*) FROM kernel WHERE op_id IS NULL OR api_call_id IS NULL"), 0);
  EXPECT_GT(num(store, "SELECT COUNT(*) FROM op WHERE op_type = 'conv2d' AND tc_eligible = 1 AND gpu_time_ns > 0 "
                       "AND tc_time_ns = 0"), 0);
  EXPECT_EQ(text(store, "SELECT path FROM op WHERE op_type = 'conv2d' AND iteration = 0 ORDER BY start_ns LIMIT 1 OFFSET 2"),
            "/ProfilerStep#5/aten::conv2d(3)");
}

TEST(DeriveRealdata, WorkersFourTwinHasNoDataLoaderBottleneck) {
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_v100_workers4.pt.trace.json.gz");
  Store store = import_and_derive(path);
  EXPECT_EQ(num(store, "SELECT COUNT(*) FROM iteration"), 6);
  double dataloader = real(store, "SELECT 1.0 * SUM(CASE WHEN category = 'dataloader' THEN time_ns END) / SUM(time_ns) "
                                  "FROM breakdown WHERE iteration >= 0");
  EXPECT_LT(dataloader, 0.05);
}

TEST(DeriveRealdata, LegacyAutogradTraceSplitsAtOptimizerSteps) {
  REALDATA_OR_SKIP(path, "kineto/tb_resnet50_autograd_api_no_steps.pt.trace.json.gz");
  Store store = import_and_derive(path);
  EXPECT_EQ(text(store, "SELECT iteration_source FROM trace"), "auto_period");
  EXPECT_EQ(num(store, "SELECT COUNT(*) FROM iteration"), 6);  // 6 x Optimizer.step#SGD.step
  // Iteration 0 starts at the first DataLoader fetch (it includes the 3.8 s warm-up) and each
  // later one at the end of the previous optimizer step.
  EXPECT_EQ(num(store, "SELECT start_ns FROM iteration WHERE iteration = 0"),
            num(store, "SELECT MIN(start_ns) FROM range WHERE name LIKE 'enumerate(DataLoader)#%'"));
  EXPECT_EQ(num(store, "SELECT COUNT(*) FROM iteration i JOIN iteration p ON p.iteration = i.iteration - 1 "
                       "WHERE i.start_ns <> p.end_ns"), 0);
  EXPECT_EQ(num(store, "SELECT COUNT(*) FROM iteration WHERE iteration > 0 AND dur_ns NOT BETWEEN 100000000 AND 250000000"), 0);
  // The autograd engine launches some kernels outside any op: DLProf's unassociated op.
  EXPECT_GT(num(store, "SELECT kernel_count FROM op WHERE name = 'unassociated:cudaLaunchKernel'"), 0);
  EXPECT_GT(num(store, "SELECT COUNT(*) FROM op WHERE pass = 'bwd'"), 10000);
  EXPECT_GT(num(store, "SELECT COUNT(*) FROM op WHERE pass = 'optimizer'"), 0);
  EXPECT_GT(num(store, "SELECT COUNT(*) FROM op WHERE pass = 'dataloader'"), 0);
}

TEST(DeriveRealdata, ParamHarnessTracesSplitAtOptimizerSteps) {
  {
    REALDATA_OR_SKIP(path, "kineto/param_linear_fp32.json.gz");
    Store store = import_and_derive(path);
    EXPECT_EQ(text(store, "SELECT iteration_source FROM trace"), "auto_period");
    EXPECT_EQ(num(store, "SELECT COUNT(*) FROM iteration"), 40);  // 40 x Optimizer.step#SGD.step
    // Iteration 0 is headed by zero_grad like every other one, so it is not an outlier.
    EXPECT_LT(num(store, "SELECT dur_ns FROM iteration WHERE iteration = 0"), 2 * num(store, "SELECT MAX(dur_ns) FROM iteration WHERE iteration > 0"));
    EXPECT_EQ(num(store, "SELECT SUM(time_ns) FROM breakdown WHERE category = 'kernel_tc'"), 0);
  }
  {
    REALDATA_OR_SKIP(path, "kineto/param_resnet.json.gz");
    Store store = import_and_derive(path);
    EXPECT_EQ(text(store, "SELECT iteration_source FROM trace"), "auto_period");
    EXPECT_EQ(num(store, "SELECT COUNT(*) FROM iteration"), 30);
  }
}

TEST(DeriveRealdata, BackwardThreadExcerptUsesTensorCores) {
  REALDATA_OR_SKIP(path, "kineto/hta_backward_thread_excerpt.json");
  Store store = import_and_derive(path);
  EXPECT_EQ(num(store, "SELECT COUNT(*) FROM iteration"), 1);
  EXPECT_GT(whole_trace_share(store, "kernel_tc"), 0.0);
  EXPECT_EQ(num(store, "SELECT time_ns FROM breakdown WHERE iteration = 0 AND category = 'kernel_tc'"), 45000);
  EXPECT_EQ(text(store, "SELECT o.name FROM kernel k JOIN op o ON o.id = k.op_id"), "aten::mm");
  EXPECT_EQ(column(store, "SELECT DISTINCT pass FROM op"), (std::vector<std::string>{"bwd"}));
  EXPECT_EQ(num(store, "SELECT tc_time_ns FROM op WHERE name = 'autograd::engine::evaluate_function: AddmmBackward0'"), 45000);
}

TEST(DeriveRealdata, NsysSaxpyLoopHasFiveIterationsAndUnassociatedCopies) {
  REALDATA_OR_SKIP(path, "nsys/nsys2022_saxpy_mpi_all_tables.sqlite");
  Store store = import_and_derive(path);
  EXPECT_EQ(text(store, "SELECT iteration_source FROM trace"), "auto_period");
  EXPECT_EQ(num(store, "SELECT COUNT(*) FROM iteration"), 5);
  EXPECT_EQ(num(store, "SELECT COUNT(*) FROM memcpy m JOIN op o ON o.id = m.op_id WHERE o.name = 'unassociated:cudaMemcpy'"), 15);
  // The saxpy NVTX range is the op of the kernel it launches.
  EXPECT_EQ(column(store, "SELECT DISTINCT o.name FROM kernel k JOIN op o ON o.id = k.op_id"), (std::vector<std::string>{"saxpy"}));
}

TEST(DeriveRealdata, FakeTensorCoreNamesOnH100AndUnassociatedLaunchesWithoutNvtx) {
  {
    REALDATA_OR_SKIP(path, "nsys/nsys2026_h100_2gpu_1s.sqlite");
    Store store = import_and_derive(path);
    EXPECT_EQ(num(store, "SELECT COUNT(*) FROM kernel WHERE is_tensor_core = 1"), 0);  // sm80_xmma_..._ffma
    EXPECT_GT(whole_trace_share(store, "memcpy"), 0.9);
    EXPECT_EQ(text(store, "SELECT op_type FROM op WHERE name = 'aten::linear' LIMIT 1"), "linear");
    EXPECT_EQ(text(store, "SELECT iteration_source FROM trace"), "none");  // a 1 s slice inside one step
  }
  {
    REALDATA_OR_SKIP(path, "nsys/nsys2026_small.sqlite");
    Store store = import_and_derive(path);
    EXPECT_EQ(num(store, "SELECT kernel_count FROM op WHERE name = 'unassociated:cudaLaunchKernel'"), 2);
  }
}

TEST(DeriveRealdata, LayersOfOneForwardPassAreNotIterations) {
  // vLLM: the whole trace is one execute_context_… step of a 36-layer model; its 22-op layer
  // repeats 36 times inside that one annotation.
  REALDATA_OR_SKIP(path, "kineto/tracelens_b200_eager.json.gz");
  Store store = import_and_derive(path);
  EXPECT_EQ(text(store, "SELECT iteration_source FROM trace"), "none");
  EXPECT_GT(num(store, "SELECT COUNT(*) FROM kernel WHERE is_tensor_core = 1 AND name LIKE 'nvjet%'"), 0);
  EXPECT_GT(num(store, "SELECT COUNT(*) FROM kernel WHERE category = 'communication' AND name LIKE '%multimem_all_reduce%'"), 0);
}

TEST(DeriveRealdata, CpuOnlyTraceGetsHostOnlyBreakdown) {
  REALDATA_OR_SKIP(path, "kineto/hta_cpu_only_rank34.pt.trace.json.gz");
  Store store = import_and_derive(path);
  EXPECT_EQ(column(store, "SELECT DISTINCT device_id FROM breakdown"), (std::vector<std::string>{"-1"}));
  EXPECT_EQ(num(store, "SELECT SUM(time_ns) FROM breakdown WHERE category IN ('kernel_tc','kernel_other','memcpy','memset','communication')"), 0);
}

TEST(DeriveRealdata, MatrixCoresAndModernTensorCoreKernelsAreCounted) {
  for (const char* rel : {"kineto/tracelens_b200_eager.json.gz", "kineto/tracelens_h100_qwen_0.5b.json.gz",
                          "kineto/tracelens_torch_compile_triton.json.gz", "kineto/hta_amd_mi250_minitoy.json.gz"}) {
    REALDATA_OR_SKIP(path, rel);
    Store store = import_and_derive(path);
    EXPECT_GT(whole_trace_share(store, "kernel_tc"), 0.0) << rel;
  }
}

// Every real file: derivation succeeds, every kernel is classified and attributed to an op, and
// the breakdown of every (device, iteration) adds up exactly to its window.
TEST(DeriveRealdata, EveryRealFileBreakdownSumsToItsWindow) {
  REALDATA_OR_SKIP(root, "");
  std::vector<fs::path> files;
  for (const char* sub : {"kineto", "nsys"})
    for (const auto& e : fs::directory_iterator(fs::path(root) / sub)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 30u);
  for (const auto& file : files) {
    SCOPED_TRACE(file.filename().string());
    Store store = Store::create_in_memory();
    try {
      import_file(file.string(), store, {});
      derive_all(store, {});
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    EXPECT_NE(text(store, "SELECT iteration_source FROM trace"), "<null>");
    EXPECT_EQ(num(store, "SELECT COUNT(*) FROM kernel WHERE category IS NULL OR is_tensor_core IS NULL OR op_id IS NULL"), 0);
    EXPECT_EQ(num(store, "SELECT COUNT(*) FROM memcpy WHERE op_id IS NULL"), 0);
    auto windows = expected_window_lengths(store);
    SQLite::Statement q(store.db(), "SELECT device_id, iteration, SUM(time_ns), COUNT(*), MIN(time_ns) FROM breakdown "
                                    "GROUP BY device_id, iteration");
    int groups = 0;
    while (q.executeStep()) {
      ++groups;
      int64_t iteration = q.getColumn(1).getInt64();
      EXPECT_EQ(q.getColumn(2).getInt64(), windows[iteration]) << "device " << q.getColumn(0).getInt64() << " iteration " << iteration;
      EXPECT_EQ(q.getColumn(3).getInt64(), 9);
      EXPECT_GE(q.getColumn(4).getInt64(), 0);
    }
    EXPECT_GE(groups, 1);
    // What import and derivation write is within the limits a saved store is held to at load.
    auto problem = find_value_out_of_bounds(store);
    EXPECT_FALSE(problem) << problem->table << " row " << problem->rowid << " " << problem->column << " = " << problem->value
                          << ": " << problem->violation;
  }
}

}  // namespace
}  // namespace proflint
