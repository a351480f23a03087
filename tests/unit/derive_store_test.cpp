// tests/unit/derive_store_test.cpp — derive_all on small hand-built stores: correlation,
// unassociated ops, nesting and paths, passes, every iteration source, the breakdown.
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/pipeline/load.hpp"
#include "engine/derive/derive.hpp"
#include "engine/derive/ops.hpp"
#include "engine/store/store.hpp"
#include "engine/store/writer.hpp"

namespace proflint {
namespace {

// Builds one trace with StoreWriter, derives it, and answers SQL questions about the result.
class TraceBuilder {
 public:
  explicit TraceBuilder(const std::string& format = "kineto") : store_(Store::create_in_memory()) {
    TraceInfo info;
    info.path = "test." + format;
    info.format = format;
    writer_ = std::make_unique<StoreWriter>(store_, info);
  }

  void range(int64_t tid, int64_t start, int64_t dur, std::string_view name, const std::string& kind = "cpu_op",
             std::optional<std::string> types = {}, opt_i64 external_id = {}, int64_t pid = 1) {
    RangeRow r;
    r.pid = pid;
    r.tid = tid;
    r.start_ns = start;
    r.dur_ns = dur;
    r.name = name;
    r.kind = kind;
    r.input_types = std::move(types);
    r.external_id = external_id;
    writer_->add_range(r);
  }
  void api(int64_t tid, int64_t start, int64_t dur, opt_i64 corr, std::string_view name = "cudaLaunchKernel",
           opt_i64 external_id = {}, int64_t pid = 1) {
    ApiCallRow a;
    a.pid = pid;
    a.tid = tid;
    a.start_ns = start;
    a.dur_ns = dur;
    a.name = name;
    a.correlation_id = corr;
    a.external_id = external_id;
    writer_->add_api_call(a);
  }
  void kernel(int64_t start, int64_t dur, std::string_view name, opt_i64 corr, int64_t device = 0, opt_i64 pid = {},
              opt_i64 external_id = {}) {
    KernelRow k;
    k.device_id = device;
    k.stream_id = 7;
    k.pid = pid;
    k.start_ns = start;
    k.dur_ns = dur;
    k.name = name;
    k.correlation_id = corr;
    k.external_id = external_id;
    writer_->add_kernel(k);
  }
  void memcpy(int64_t start, int64_t dur, opt_i64 corr, int64_t device = 0) {
    MemcpyRow m;
    m.device_id = device;
    m.start_ns = start;
    m.dur_ns = dur;
    m.kind = "htod";
    m.correlation_id = corr;
    writer_->add_memcpy(m);
  }
  void memset(int64_t start, int64_t dur, opt_i64 corr, int64_t device = 0) {
    MemsetRow m;
    m.device_id = device;
    m.start_ns = start;
    m.dur_ns = dur;
    m.correlation_id = corr;
    writer_->add_memset(m);
  }
  StoreWriter& writer() { return *writer_; }

  void derive(const DeriveOptions& options = {}) {
    if (writer_) {
      writer_->commit();
      writer_.reset();
    }
    derive_all(store_, options);
  }
  void rederive(const DeriveOptions& options) { derive_all(store_, options, /*force=*/true); }
  // As an SQLite older than 3.32 (999) or a build with a lower limit would allow.
  void limit_parameters(int n) { sqlite3_limit(store_.db().getHandle(), SQLITE_LIMIT_VARIABLE_NUMBER, n); }

  int64_t num(const std::string& sql) {
    SQLite::Statement q(store_.db(), sql);
    if (!q.executeStep()) ADD_FAILURE() << "no row: " << sql;
    return q.getColumn(0).isNull() ? -999 : q.getColumn(0).getInt64();
  }
  std::string text(const std::string& sql) {
    SQLite::Statement q(store_.db(), sql);
    if (!q.executeStep()) return "<no row>";
    return q.getColumn(0).isNull() ? "<null>" : q.getColumn(0).getString();
  }
  std::vector<std::string> column(const std::string& sql) {
    SQLite::Statement q(store_.db(), sql);
    std::vector<std::string> out;
    while (q.executeStep()) out.push_back(q.getColumn(0).isNull() ? "<null>" : q.getColumn(0).getString());
    return out;
  }
  // Every (device, iteration) of the breakdown adds up to its window.
  void expect_breakdown_sums(const std::vector<std::pair<int64_t, int64_t>>& expected_window_by_iteration) {
    for (auto [iteration, length] : expected_window_by_iteration)
      EXPECT_EQ(num("SELECT SUM(time_ns) FROM breakdown WHERE iteration = " + std::to_string(iteration)), length)
          << "iteration " << iteration;
  }

 private:
  Store store_;
  std::unique_ptr<StoreWriter> writer_;
};

using Strings = std::vector<std::string>;

// An op's thread and span are its range's (TraceModel::op_span reads them, OpFact keeps no copy);
// an unassociated op's span covers the calls and work it gathers, on no thread.
TEST(DeriveStore, OpSpansComeFromRangesOrWhatTheyGather) {
  TraceBuilder b;
  b.range(3, 100, 400, "aten::linear", "cpu_op", {}, {}, 9);
  b.api(1, 600, 10, 11);  // outside any op: unassociated:cudaLaunchKernel from 600 ...
  b.kernel(700, 50, "void at::native::vectorized_elementwise_kernel<4>()", 11);
  b.api(1, 900, 30, 12);  // ... to 930
  b.kernel(950, 50, "void at::native::vectorized_elementwise_kernel<4>()", 12);
  b.kernel(1200, 20, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", 99);  // launch not captured
  b.kernel(1100, 30, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", 98);
  b.derive();
  EXPECT_EQ(b.column("SELECT pid || ' ' || tid || ' ' || start_ns || ' ' || dur_ns FROM op WHERE name = 'aten::linear'"),
            (Strings{"9 3 100 400"}));
  EXPECT_EQ(b.column("SELECT coalesce(pid, 'null') || ' ' || coalesce(tid, 'null') || ' ' || start_ns || ' ' || dur_ns "
                     "FROM op WHERE range_id IS NULL ORDER BY name"),
            (Strings{"null null 1100 120", "null null 600 330"}));
}

TEST(DeriveStore, CorrelatesKernelsToApiCallsAndInnermostOps) {
  TraceBuilder b;
  b.range(1, 0, 1000, "ProfilerStep#1", "user_annotation");
  b.range(1, 100, 400, "aten::linear");
  b.range(1, 150, 300, "aten::addmm");
  b.api(1, 200, 20, 10);
  b.kernel(300, 100, "volta_h884gemm_64x64_ldg8_nn", 10);
  b.api(1, 600, 10, 11);  // inside the step but outside any op
  b.kernel(700, 50, "void at::native::vectorized_elementwise_kernel<4>()", 11);
  b.kernel(800, 20, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", 99);  // its launch was not captured
  b.derive();

  EXPECT_EQ(b.text("SELECT o.name FROM kernel k JOIN op o ON o.id = k.op_id WHERE k.correlation_id = 10"), "aten::addmm");
  EXPECT_EQ(b.text("SELECT a.name FROM kernel k JOIN api_call a ON a.id = k.api_call_id WHERE k.correlation_id = 10"),
            "cudaLaunchKernel");
  EXPECT_EQ(b.text("SELECT o.name FROM api_call a JOIN op o ON o.id = a.op_id WHERE a.correlation_id = 10"), "aten::addmm");
  EXPECT_EQ(b.text("SELECT o.name FROM kernel k JOIN op o ON o.id = k.op_id WHERE k.correlation_id = 11"),
            "unassociated:cudaLaunchKernel");
  EXPECT_EQ(b.text("SELECT o.name FROM api_call a JOIN op o ON o.id = a.op_id WHERE a.correlation_id = 11"),
            "unassociated:cudaLaunchKernel");
  EXPECT_EQ(b.text("SELECT o.name FROM kernel k JOIN op o ON o.id = k.op_id WHERE k.correlation_id = 99"),
            "unassociated:communication");
  EXPECT_EQ(b.num("SELECT api_call_id FROM kernel WHERE correlation_id = 99"), -999);
  // One unassociated op per name, with no range, at the top.
  EXPECT_EQ(b.column("SELECT path FROM op WHERE range_id IS NULL ORDER BY path"),
            (Strings{"/unassociated:communication", "/unassociated:cudaLaunchKernel"}));
  EXPECT_EQ(b.text("SELECT op_type FROM op WHERE name = 'unassociated:communication'"), "unassociated");
  // Inclusive aggregates.
  EXPECT_EQ(b.num("SELECT gpu_time_ns FROM op WHERE name = 'aten::linear'"), 100);
  EXPECT_EQ(b.num("SELECT kernel_count FROM op WHERE name = 'aten::linear'"), 1);
  EXPECT_EQ(b.num("SELECT tc_time_ns FROM op WHERE name = 'aten::linear'"), 100);
  EXPECT_EQ(b.num("SELECT gpu_time_ns FROM op WHERE name = 'unassociated:cudaLaunchKernel'"), 50);
  EXPECT_EQ(b.column("SELECT path FROM op WHERE range_id IS NOT NULL ORDER BY start_ns"),
            (Strings{"/ProfilerStep#1/aten::linear", "/ProfilerStep#1/aten::linear/aten::addmm"}));
  EXPECT_EQ(b.num("SELECT depth FROM op WHERE name = 'aten::addmm'"), 1);
  EXPECT_EQ(b.text("SELECT p.name FROM op o JOIN op p ON p.id = o.parent_id WHERE o.name = 'aten::addmm'"), "aten::linear");
  EXPECT_EQ(b.num("SELECT is_tensor_core FROM kernel WHERE correlation_id = 10"), 1);
  EXPECT_EQ(b.text("SELECT category FROM kernel WHERE correlation_id = 99"), "communication");
}

TEST(DeriveStore, CorrelationPrefersTheSameProcessAndFallsBackToTraceWide) {
  TraceBuilder b("nsys");
  b.api(1, 100, 10, 5, "cudaLaunchKernel", {}, /*pid=*/1);
  b.api(2, 120, 10, 5, "cudaLaunchKernel", {}, /*pid=*/2);
  b.api(3, 130, 10, 6, "cudaMemcpyAsync", {}, /*pid=*/2);
  b.kernel(200, 10, "k_pid2", 5, 0, /*pid=*/2);
  b.kernel(116, 2, "k_unknown_pid", 5, 0, std::nullopt);  // latest launch with that id before it: pid 1's
  b.memcpy(300, 10, 6);                                   // no pid, unique id
  b.derive();
  EXPECT_EQ(b.num("SELECT a.pid FROM kernel k JOIN api_call a ON a.id = k.api_call_id WHERE k.name = 'k_pid2'"), 2);
  EXPECT_EQ(b.num("SELECT a.pid FROM kernel k JOIN api_call a ON a.id = k.api_call_id WHERE k.name = 'k_unknown_pid'"), 1);
  EXPECT_EQ(b.text("SELECT a.name FROM memcpy m JOIN api_call a ON a.id = m.api_call_id"), "cudaMemcpyAsync");
  EXPECT_EQ(b.text("SELECT o.name FROM memcpy m JOIN op o ON o.id = m.op_id"), "unassociated:cudaMemcpyAsync");
}

TEST(DeriveStore, ExternalIdLinksWorkWhenTimeContainmentFails) {
  TraceBuilder b;
  b.range(1, 0, 100, "aten::mm", "cpu_op", std::nullopt, /*external_id=*/42);
  b.api(2, 500, 10, 1, "cudaLaunchKernel", /*external_id=*/42);  // other thread, outside the op
  b.kernel(600, 10, "gemm_a", 1);
  b.kernel(700, 10, "gemm_b", std::nullopt, 0, std::nullopt, /*external_id=*/42);  // no launch recorded
  b.derive();
  EXPECT_EQ(b.text("SELECT o.name FROM api_call a JOIN op o ON o.id = a.op_id"), "aten::mm");
  EXPECT_EQ(b.column("SELECT o.name FROM kernel k JOIN op o ON o.id = k.op_id ORDER BY k.start_ns"),
            (Strings{"aten::mm", "aten::mm"}));
}

TEST(DeriveStore, NestingGivesRangeParentsAndDlprofPaths) {
  TraceBuilder b;
  b.range(1, 0, 1000, "ProfilerStep#3", "user_annotation");
  for (int i = 0; i < 3; ++i) {
    b.range(1, 100 + 200 * i, 100, "aten::conv2d");
    b.range(1, 110 + 200 * i, 50, "aten::convolution");
  }
  b.range(1, 700, 0, "aten::empty");  // zero-length ranges are siblings, not parents
  b.range(1, 700, 0, "aten::empty");
  b.derive();
  EXPECT_EQ(b.column("SELECT path FROM op ORDER BY start_ns, id"),
            (Strings{"/ProfilerStep#3/aten::conv2d", "/ProfilerStep#3/aten::conv2d/aten::convolution",
                     "/ProfilerStep#3/aten::conv2d(2)", "/ProfilerStep#3/aten::conv2d(2)/aten::convolution",
                     "/ProfilerStep#3/aten::conv2d(3)", "/ProfilerStep#3/aten::conv2d(3)/aten::convolution",
                     "/ProfilerStep#3/aten::empty", "/ProfilerStep#3/aten::empty(2)"}));
  EXPECT_EQ(b.column("SELECT depth FROM range ORDER BY start_ns, id"), (Strings{"0", "1", "2", "1", "2", "1", "2", "1", "1"}));
  EXPECT_EQ(b.num("SELECT COUNT(*) FROM range r JOIN range p ON p.id = r.parent_id WHERE p.name = 'ProfilerStep#3'"), 5);
  // The annotation is a path prefix, not an op: top-level ops have depth 0 and no parent.
  EXPECT_EQ(b.num("SELECT COUNT(*) FROM op WHERE name = 'ProfilerStep#3'"), 0);
  EXPECT_EQ(b.num("SELECT COUNT(*) FROM op WHERE depth = 0 AND parent_id IS NULL"), 5);
}

TEST(DeriveStore, LongNamesAndDeepNestingGiveBoundedDistinctPaths) {
  // Issue 20, defect 7: a long NVTX name was copied into the path of every op beneath it.
  TraceBuilder b;
  // Names are cut to 64 KiB at import (StoreWriter::kMaxNameBytes); these two differ in the last byte.
  const std::string huge_a = std::string(60000, 'A') + "1", huge_b = std::string(60000, 'A') + "2";
  b.range(1, 0, 1000, huge_a, "nvtx");
  for (int i = 0; i < 50; ++i) b.range(1, 10 + 10 * i, 5, "aten::add");
  b.range(1, 2000, 1000, huge_b, "nvtx");
  b.range(1, 2010, 5, "aten::add");
  // 60 nested ops with 100-byte names: 60 * 101 bytes of path, past kMaxPathBytes (4096).
  for (int d = 0; d < 60; ++d) b.range(1, 5000 + d, 1000 - 2 * d, "op" + std::to_string(d) + std::string(96, 'x'));
  b.derive();
  EXPECT_EQ(b.num("SELECT count(*) FROM op"), 111);
  EXPECT_LE(b.num("SELECT max(length(CAST(path AS BLOB))) FROM op"),
            static_cast<int64_t>(kMaxPathBytes + kMaxPathLabelBytes + 16));
  // The names themselves are kept whole (once, in the string table); only paths are shortened.
  EXPECT_EQ(b.num("SELECT count(*) FROM range WHERE length(name) = 60001"), 2);
  // Paths under the two long names differ although their first 236 bytes are the same.
  auto under = b.column("SELECT path FROM op WHERE name = 'aten::add' AND start_ns IN (10, 2010) ORDER BY start_ns");
  ASSERT_EQ(under.size(), 2u);
  EXPECT_NE(under[0], under[1]);
  EXPECT_EQ(under[0].rfind("/" + std::string(236, 'A') + "\u2026#", 0), 0u) << under[0].substr(0, 300);
  EXPECT_EQ(under[0].size(), 1 + 256 + std::string("/aten::add").size());
  EXPECT_EQ(b.num("SELECT count(DISTINCT path) FROM op"), 111);
  // The deepest op: its path restarted from a digest of its parent's and ends with its own name.
  std::string deepest = b.text("SELECT path FROM op ORDER BY depth DESC LIMIT 1");
  EXPECT_EQ(deepest.rfind("/\u2026#", 0), 0u) << deepest;
  EXPECT_EQ(deepest.substr(deepest.size() - 100), "op59" + std::string(96, 'x'));
  EXPECT_EQ(b.num("SELECT max(depth) FROM op"), 59);
}

TEST(DeriveStore, PassesFromBackwardThreadOptimizerAndDataLoader) {
  TraceBuilder b;
  b.range(1, 0, 10000, "ProfilerStep#1", "user_annotation");
  b.range(1, 0, 100, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "user_annotation");
  b.range(1, 10, 10, "aten::stack");
  b.range(1, 200, 100, "aten::conv2d", "cpu_op", R"(["float","float"])");
  b.range(1, 5000, 1000, "Optimizer.step#SGD.step", "user_annotation");
  b.range(1, 5100, 100, "aten::add_");
  b.range(2, 1000, 1000, "autograd::engine::evaluate_function: AddmmBackward0");
  b.range(2, 1010, 890, "AddmmBackward0");
  b.range(2, 1020, 480, "aten::mm", "cpu_op", R"(["long int","long int"])");
  b.range(1, 20000, 100, "aten::zeros");
  b.derive();
  auto pass = [&](const std::string& name) { return b.text("SELECT pass FROM op WHERE name = '" + name + "'"); };
  EXPECT_EQ(pass("aten::stack"), "dataloader");
  EXPECT_EQ(pass("aten::conv2d"), "fwd");
  EXPECT_EQ(pass("aten::add_"), "optimizer");
  EXPECT_EQ(pass("autograd::engine::evaluate_function: AddmmBackward0"), "bwd");
  EXPECT_EQ(pass("aten::mm"), "bwd");
  EXPECT_EQ(pass("aten::zeros"), "other");
  EXPECT_EQ(b.text("SELECT op_type FROM op WHERE name = 'aten::add_'"), "add");
  EXPECT_EQ(b.text("SELECT op_type FROM op WHERE name = 'AddmmBackward0'"), "AddmmBackward");
  EXPECT_EQ(b.num("SELECT tc_eligible FROM op WHERE name = 'aten::conv2d'"), 1);
  EXPECT_EQ(b.num("SELECT tc_eligible FROM op WHERE name = 'aten::mm'"), 0);  // long inputs
  EXPECT_EQ(b.num("SELECT tc_eligible FROM op WHERE name = 'AddmmBackward0'"), 1);
  EXPECT_EQ(b.num("SELECT iteration FROM op WHERE name = 'aten::mm'"), 0);
  EXPECT_EQ(b.num("SELECT iteration FROM op WHERE name = 'aten::zeros'"), -999);
}

TEST(DeriveStore, KeyNodeBeatsProfilerStepAndRunsUntilTheNextOccurrence) {
  TraceBuilder b;
  b.range(1, 0, 400, "ProfilerStep#1", "user_annotation");
  b.range(1, 0, 100, "train#1", "user_annotation");
  b.range(1, 150, 100, "train#2", "user_annotation");
  b.range(1, 300, 50, "train#3", "user_annotation");
  b.range(1, 310, 10, "train_helper", "user_annotation");
  b.derive();
  EXPECT_EQ(b.text("SELECT iteration_source FROM trace"), "profiler_step");
  DeriveOptions o;
  o.key_node = "train";
  b.rederive(o);
  EXPECT_EQ(b.text("SELECT iteration_source FROM trace"), "key_node");
  EXPECT_EQ(b.column("SELECT start_ns || '-' || end_ns || '#' || number FROM iteration ORDER BY iteration"),
            (Strings{"0-150#1", "150-300#2", "300-350#3"}));
  EXPECT_EQ(b.num("SELECT COUNT(*) FROM breakdown WHERE iteration = 2"), 9);
  // Re-derivation replaces, never duplicates.
  EXPECT_EQ(b.num("SELECT COUNT(*) FROM iteration"), 3);
  EXPECT_EQ(b.num("SELECT COUNT(*) FROM import_issue WHERE kind = 'key_node_not_found'"), 0);
  o.key_node = "absent";
  b.rederive(o);
  EXPECT_EQ(b.text("SELECT iteration_source FROM trace"), "profiler_step");
  EXPECT_EQ(b.num("SELECT COUNT(*) FROM iteration"), 1);
  // The miss is noted, with the closest names (issue 21 point 9): numbered markers count under
  // their --key-node name ("train", 3 times); names containing the key come first.
  o.key_node = "Train";
  b.rederive(o);
  EXPECT_EQ(b.text("SELECT example FROM import_issue WHERE kind = 'key_node_not_found'"),
            "key node 'Train' not found; candidates: 'train' (3×), 'train_helper' (1×), 'ProfilerStep' (1×)");
  EXPECT_EQ(b.text("SELECT location FROM import_issue WHERE kind = 'key_node_not_found'"), "--key-node");
  // A later run that finds the key node drops the note.
  o.key_node = "train";
  b.rederive(o);
  EXPECT_EQ(b.num("SELECT COUNT(*) FROM import_issue WHERE kind = 'key_node_not_found'"), 0);
}

TEST(DeriveStore, ProfilerStepsGiveNumberedIterationsAndIgnoreGpuCopies) {
  TraceBuilder b;
  for (int i = 0; i < 3; ++i) {
    b.range(1, 1000 * i, 1000, "ProfilerStep#" + std::to_string(7 + i), "user_annotation");
    b.range(7, 1000 * i + 50, 900, "ProfilerStep#" + std::to_string(7 + i), "gpu_user_annotation");
    b.range(1, 1000 * i + 100, 100, "aten::mm");
    b.api(1, 1000 * i + 120, 10, 100 + i);
    b.kernel(1000 * i + 300, 50, "volta_sgemm_128x64_nn", 100 + i);
  }
  b.derive();
  EXPECT_EQ(b.text("SELECT iteration_source FROM trace"), "profiler_step");
  EXPECT_EQ(b.column("SELECT number FROM iteration ORDER BY iteration"), (Strings{"7", "8", "9"}));
  EXPECT_EQ(b.column("SELECT gpu_start_ns || '-' || gpu_end_ns FROM iteration ORDER BY iteration"),
            (Strings{"300-350", "1300-1350", "2300-2350"}));
  EXPECT_EQ(b.column("SELECT iteration FROM kernel ORDER BY start_ns"), (Strings{"0", "1", "2"}));
  EXPECT_EQ(b.column("SELECT iteration FROM api_call ORDER BY start_ns"), (Strings{"0", "1", "2"}));
}

TEST(DeriveStore, NvtxStepRangesFromNsys) {
  TraceBuilder b("nsys");
  b.range(1, 0, 100, "step 1", "nvtx");
  b.range(1, 100, 100, "step 2", "nvtx");
  b.range(1, 10, 20, "aten::add, op_id = 5", "nvtx");
  b.derive();
  EXPECT_EQ(b.text("SELECT iteration_source FROM trace"), "nvtx");
  EXPECT_EQ(b.column("SELECT number FROM iteration ORDER BY iteration"), (Strings{"1", "2"}));
  // emit_nvtx text becomes the op name; the step ranges are not ops.
  EXPECT_EQ(b.column("SELECT name || ' ' || op_type || ' ' || path FROM op"), (Strings{"aten::add add /step 1/aten::add"}));
}

TEST(DeriveStore, NvtxTopLevelRangeThatLaunchesMostGpuWork) {
  TraceBuilder b("nsys");
  for (int i = 0; i < 3; ++i) {
    int64_t t = 1000 * i;
    b.range(1, t, 100, "setup", "nvtx");
    b.range(1, t + 200, 500, "train", "nvtx");
    b.range(1, t + 250, 100, "compute", "nvtx");
    b.api(1, t + 260, 10, 10 + i);
    b.kernel(t + 300, 200, "saxpy_kernel", 10 + i);
    b.api(1, t + 400, 10, 20 + i);  // inside train, not inside compute
    b.kernel(t + 500, 100, "scale_kernel", 20 + i);
  }
  b.api(1, 5000, 10, 99);
  b.kernel(5100, 50, "tail_kernel", 99);
  b.derive();
  EXPECT_EQ(b.text("SELECT iteration_source FROM trace"), "nvtx");
  EXPECT_EQ(b.column("SELECT name || ':' || start_ns FROM iteration ORDER BY iteration"),
            (Strings{"train:200", "train:1200", "train:2200"}));
  // Plain CUDA app: its other NVTX ranges are its ops; the iteration ranges are not.
  EXPECT_EQ(b.num("SELECT COUNT(*) FROM op WHERE name = 'setup'"), 3);
  EXPECT_EQ(b.num("SELECT COUNT(*) FROM op WHERE name = 'train'"), 0);
  EXPECT_EQ(b.num("SELECT kernel_count FROM op WHERE path = '/train/compute' AND iteration = 0"), 1);
  EXPECT_EQ(b.num("SELECT kernel_count FROM op WHERE name = 'unassociated:cudaLaunchKernel'"), 4);
}

TEST(DeriveStore, OptimizerStepsDelimitIterationsWithoutProfilerSteps) {
  TraceBuilder b;
  b.range(1, 0, 50, "aten::empty");  // set-up before the loop
  for (int i = 0; i < 4; ++i) {
    int64_t t = 1000 + 1000 * i;
    b.range(1, t, 100, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "user_annotation");
    b.range(1, t + 200, 200, "aten::conv2d");
    b.api(1, t + 210, 10, 10 + i);
    b.kernel(t + 250, 100, "implicit_convolve_sgemm", 10 + i);
    b.range(1, t + 500, 100, "Optimizer.step#SGD.step", "user_annotation");
    b.range(1, t + 510, 10, "aten::add_");
  }
  b.derive();
  EXPECT_EQ(b.text("SELECT iteration_source FROM trace"), "auto_period");
  // The first iteration starts at the DataLoader fetch that heads every iteration.
  EXPECT_EQ(b.column("SELECT start_ns || '-' || end_ns FROM iteration ORDER BY iteration"),
            (Strings{"1000-1600", "1600-2600", "2600-3600", "3600-4600"}));
  EXPECT_EQ(b.text("SELECT pass FROM op WHERE name = 'aten::add_' AND iteration = 2"), "optimizer");
}

TEST(DeriveStore, OptimizerStepsBackToBackGiveTheFirstIterationNoHead) {
  // Regression (fuzz_pipeline, tests/fuzz/regressions/pipeline): three top-level ranges before step
  // 0 and none between step 0 and step 1. Iteration 1 has no head to look for, so iteration 0
  // starts at step 0 itself; the old code read before0[3] of a 3-element vector.
  TraceBuilder b;
  b.range(1, 0, 50, "aten::empty");
  b.range(1, 100, 50, "aten::zeros");
  b.range(1, 200, 50, "aten::ones");
  b.range(1, 1000, 100, "Optimizer.step#SGD.step", "user_annotation");
  b.range(1, 1100, 100, "Optimizer.step#SGD.step", "user_annotation");
  b.derive();
  EXPECT_EQ(b.column("SELECT start_ns || '-' || end_ns FROM iteration ORDER BY iteration"), (Strings{"1000-1100", "1100-1200"}));
}

TEST(DeriveStore, RepeatedTopLevelOpSequenceGivesAutoPeriodIterations) {
  TraceBuilder b;
  b.range(1, 0, 50, "aten::empty");
  for (int i = 0; i < 4; ++i) {
    int64_t t = 100 + 300 * i;
    b.range(1, t, 50, "aten::conv2d");
    b.range(1, t + 100, 50, "aten::relu");
    b.range(1, t + 200, 50, "aten::sum");
  }
  b.derive();
  EXPECT_EQ(b.text("SELECT iteration_source FROM trace"), "auto_period");
  EXPECT_EQ(b.column("SELECT name || ':' || start_ns || '-' || end_ns FROM iteration ORDER BY iteration"),
            (Strings{"aten::conv2d:100-400", "aten::conv2d:400-700", "aten::conv2d:700-1000", "aten::conv2d:1000-1250"}));
  // Top-level siblings are numbered per iteration, so the same op has the same path in each.
  EXPECT_EQ(b.column("SELECT DISTINCT path FROM op WHERE name = 'aten::relu'"), (Strings{"/aten::relu"}));
}

TEST(DeriveStore, RepeatsInsideOneAnnotationAreLayersNotIterations) {
  TraceBuilder b;
  b.range(1, 0, 2000, "## forward ##", "user_annotation");
  for (int i = 0; i < 4; ++i) {
    int64_t t = 100 + 300 * i;
    b.range(1, t, 50, "aten::linear");
    b.range(1, t + 100, 50, "aten::gelu");
    b.range(1, t + 200, 50, "aten::layer_norm");
  }
  b.derive();
  EXPECT_EQ(b.text("SELECT iteration_source FROM trace"), "none");
}

TEST(DeriveStore, RepeatedKernelSequenceWhenThereAreNoOps) {
  TraceBuilder b;
  int64_t corr = 1;
  for (int i = 0; i < 3; ++i) {
    for (const char* k : {"gemm_a", "relu_b", "gemm_a", "sum_c"}) {
      b.api(1, 1000 * i + 10 * corr, 5, corr);
      b.kernel(1000 * i + 10 * corr + 100, 5, k, corr);
      ++corr;
    }
  }
  b.derive();
  EXPECT_EQ(b.text("SELECT iteration_source FROM trace"), "auto_period");
  EXPECT_EQ(b.num("SELECT COUNT(*) FROM iteration"), 3);
}

TEST(DeriveStore, NoIterationsWhenNothingRepeats) {
  TraceBuilder b;
  b.range(1, 0, 10, "aten::a");
  b.range(1, 20, 10, "aten::b");
  b.range(1, 40, 10, "aten::c");
  b.derive();
  EXPECT_EQ(b.text("SELECT iteration_source FROM trace"), "none");
  EXPECT_EQ(b.num("SELECT COUNT(*) FROM iteration"), 0);
  EXPECT_EQ(b.column("SELECT DISTINCT iteration FROM breakdown"), (Strings{"-1"}));
  EXPECT_EQ(b.column("SELECT DISTINCT device_id FROM breakdown"), (Strings{"-1"}));  // no GPU activity
  EXPECT_EQ(b.num("SELECT time_ns FROM breakdown WHERE category = 'cpu'"), 30);
  EXPECT_EQ(b.num("SELECT time_ns FROM breakdown WHERE category = 'idle'"), 20);
}

TEST(DeriveStore, BreakdownPriorityAndExactSum) {
  TraceBuilder b;
  b.range(1, 0, 40, "aten::x");
  b.api(1, 50, 10, 1);
  b.kernel(100, 100, "volta_h884gemm_64x64_ldg8_nn", 1);
  b.api(1, 60, 10, 2);
  b.kernel(150, 150, "void at::native::vectorized_elementwise_kernel<4>()", 2);
  b.api(1, 70, 10, 3);
  b.kernel(250, 150, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", 3);
  b.api(1, 80, 10, 4, "cudaMemcpyAsync");
  b.memcpy(350, 100, 4);
  b.api(1, 460, 10, 5, "cudaMemsetAsync");
  b.memset(500, 20, 5);
  b.range(1, 530, 30, "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", "user_annotation");
  b.range(1, 540, 60, "aten::y");
  b.derive();
  auto t = [&](const std::string& c) {
    return b.num("SELECT time_ns FROM breakdown WHERE device_id = 0 AND iteration = -1 AND category = '" + c + "'");
  };
  EXPECT_EQ(t("kernel_tc"), 100);
  EXPECT_EQ(t("kernel_other"), 100);     // [200, 300): hidden by the TC kernel before
  EXPECT_EQ(t("communication"), 100);    // [300, 400): exposed part only
  EXPECT_EQ(t("memcpy"), 50);
  EXPECT_EQ(t("memset"), 20);
  EXPECT_EQ(t("runtime"), 50);
  EXPECT_EQ(t("dataloader"), 30);
  EXPECT_EQ(t("cpu"), 80);
  EXPECT_EQ(t("idle"), 70);
  b.expect_breakdown_sums({{-1, 600}});
  EXPECT_EQ(b.num("SELECT COUNT(*) FROM breakdown"), 9);
  EXPECT_EQ(b.num("SELECT has_activity FROM device WHERE device_id = 0"), 1);
}

TEST(DeriveStore, IterationWindowsKeepTheirGpuTailWithoutOverlapping) {
  TraceBuilder b;
  b.range(1, 0, 100, "ProfilerStep#1", "user_annotation");
  b.api(1, 10, 10, 1);
  b.kernel(80, 70, "k1", 1);  // runs past the end of step 1
  b.range(1, 100, 100, "ProfilerStep#2", "user_annotation");
  b.api(1, 110, 10, 2);
  b.kernel(160, 10, "k2", 2);
  b.derive();
  EXPECT_EQ(b.num("SELECT gpu_end_ns FROM iteration WHERE iteration = 0"), 150);
  b.expect_breakdown_sums({{-1, 200}, {0, 150}, {1, 50}});
  EXPECT_EQ(b.num("SELECT time_ns FROM breakdown WHERE iteration = 1 AND category = 'kernel_other'"), 10);
}

TEST(DeriveStore, IterStartStopRestrictBreakdownAndOpAggregates) {
  TraceBuilder b;
  for (int i = 0; i < 3; ++i) {
    b.range(1, 1000 * i, 1000, "ProfilerStep#" + std::to_string(i), "user_annotation");
    b.range(1, 1000 * i + 100, 200, "aten::mm");
    b.api(1, 1000 * i + 110, 10, 10 + i);
    b.kernel(1000 * i + 200, 100 + i, "volta_sgemm_128x64_nn", 10 + i);
  }
  DeriveOptions o;
  o.iter_start = 1;
  o.iter_stop = 1;
  b.derive(o);
  EXPECT_EQ(b.column("SELECT DISTINCT iteration FROM breakdown ORDER BY iteration"), (Strings{"-1", "1"}));
  b.expect_breakdown_sums({{-1, 1000}, {1, 1000}});
  EXPECT_EQ(b.column("SELECT gpu_time_ns FROM op WHERE name = 'aten::mm' ORDER BY start_ns"), (Strings{"0", "101", "0"}));
  // Assignment itself is not restricted.
  EXPECT_EQ(b.column("SELECT iteration FROM kernel ORDER BY start_ns"), (Strings{"0", "1", "2"}));
}

TEST(DeriveStore, DeviceActivityAndUndescribedDevices) {
  TraceBuilder b;
  for (int64_t id : {0, 1}) {
    DeviceRow d;
    d.device_id = id;
    b.writer().add_device(d);
  }
  b.api(1, 0, 10, 1);
  b.kernel(20, 10, "k", 1, /*device=*/0);
  b.api(1, 40, 10, 2);
  b.kernel(60, 10, "k", 2, /*device=*/3);
  b.derive();
  EXPECT_EQ(b.column("SELECT device_id || ':' || has_activity FROM device ORDER BY device_id"), (Strings{"0:1", "1:0", "3:1"}));
  EXPECT_EQ(b.column("SELECT DISTINCT device_id FROM breakdown ORDER BY device_id"), (Strings{"0", "3"}));
  b.expect_breakdown_sums({{-1, 2 * 70}});
}

// The store writes its large tables 256 rows per statement step, fed through the proflint_feed
// virtual table (engine/store/model_io.cpp), and lets SQLite number them: 2,100 kernels and API
// calls and 2,049 ranges are eight full steps and a shorter last one each; every row arrives once,
// in order, with its own values (start = 10 * i by construction) and the id every reference to it
// was written with. SQLite's limit on bound parameters no longer matters (no values are bound;
// once the last row of a batch was inserted twice under a low limit).
TEST(DeriveStore, BatchedWriteKeepsEveryRowInOrder) {
  constexpr int64_t kCalls = 2100, kRanges = 2049;
  for (int limit : {0, 30}) {  // 0: SQLite's own limit on parameters
    SCOPED_TRACE(limit);
    TraceBuilder b;
    if (limit) b.limit_parameters(limit);
    for (int64_t i = 0; i < kCalls; ++i) {
      b.api(1, 10 * i, 5, i + 1);
      b.kernel(10 * i + 2, 3, i % 2 ? "odd" : "even", i + 1);
    }
    for (int64_t i = 0; i < kRanges; ++i) b.range(2, 10 * i, 4, "aten::op" + std::to_string(i));
    b.derive();
    EXPECT_EQ(b.num("SELECT COUNT(*) FROM _kernel"), kCalls);
    EXPECT_EQ(b.num("SELECT COUNT(*) FROM _kernel WHERE start_ns = 10 * (id - 1) + 2 AND dur_ns = 3"), kCalls);
    EXPECT_EQ(b.num("SELECT COUNT(*) FROM kernel k WHERE k.name = CASE (k.id - 1) % 2 WHEN 1 THEN 'odd' ELSE 'even' END"),
              kCalls);
    EXPECT_EQ(b.num("SELECT COUNT(*) FROM _kernel k JOIN _api_call a ON a.id = k.api_call_id WHERE a.correlation_id = k.id"),
              kCalls);
    EXPECT_EQ(b.num("SELECT COUNT(*) FROM range WHERE name = 'aten::op' || ((start_ns / 10)) AND dur_ns = 4"), kRanges);
    // The launches run on a thread without ranges: one more op gathers them.
    EXPECT_EQ(b.num("SELECT COUNT(*) FROM op WHERE name LIKE 'aten::op%'"), kRanges);
    EXPECT_EQ(b.num("SELECT COUNT(*) FROM op o JOIN range r ON r.id = o.range_id WHERE r.name = o.name"), kRanges);
    EXPECT_EQ(b.column("SELECT name FROM op WHERE name NOT LIKE 'aten::op%'"), (Strings{"unassociated:cudaLaunchKernel"}));
    EXPECT_EQ(b.num("SELECT MAX(id) - MIN(id) + 1 FROM _range"), kRanges);
    EXPECT_EQ(b.num("SELECT typeof(start_ns) = 'integer' AND typeof(name_id) = 'integer' AND typeof(category) = 'text' "
                    "AND typeof(grid_x) = 'null' FROM _kernel WHERE id = 1"),
              1);
    b.rederive({});
    EXPECT_EQ(b.num("SELECT COUNT(*) FROM _kernel WHERE start_ns = 10 * (id - 1) + 2"), kCalls);
    EXPECT_EQ(b.num("SELECT COUNT(*) FROM op"), kRanges + 1);
    // The feed exists only while the store is written: no query (a rule's) can read it later.
    EXPECT_THROW(b.num("SELECT COUNT(*) FROM proflint_feed"), SQLite::Exception);
  }
}

TEST(DeriveStore, DerivesOnlyNewTracesUnlessForced) {
  TraceBuilder b;
  b.range(1, 0, 10, "aten::a");
  b.derive();
  EXPECT_EQ(b.num("SELECT COUNT(*) FROM op"), 1);
  b.derive();  // nothing new
  EXPECT_EQ(b.num("SELECT COUNT(*) FROM op"), 1);
  b.rederive({});
  EXPECT_EQ(b.num("SELECT COUNT(*) FROM op"), 1);
  EXPECT_EQ(b.num("SELECT COUNT(*) FROM breakdown"), 9);
}

}  // namespace
}  // namespace proflint

namespace proflint {
namespace {

// Regression: nsys2026_h100_2gpu_1s linked GPU work of pid 112 to pid 111 calls sharing the
// correlation id (e.g. a 160 MiB copy to a later cudaEventDestroy).
TEST(DeriveStoreRegression, KnownPidNeverCorrelatesAcrossProcesses) {
  TraceBuilder b("nsys");
  b.api(1, 500, 10, 42, "cudaEventDestroy", {}, /*pid=*/111);
  b.kernel(100, 10, "k_of_112", 42, 1, /*pid=*/112);
  b.derive();
  EXPECT_EQ(b.num("SELECT api_call_id FROM kernel WHERE name = 'k_of_112'"), -999);
  EXPECT_EQ(b.text("SELECT o.name FROM kernel k JOIN op o ON o.id = k.op_id").rfind("unassociated:", 0), 0u);
}

// Regression: forward ops carry 'Fwd thread id': 0 and were classified as backward.
TEST(DeriveStoreRegression, FwdThreadIdZeroIsForward) {
  TraceBuilder b;
  RangeRow step;
  step.pid = 1; step.tid = 1; step.start_ns = 0; step.dur_ns = 1000; step.name = "ProfilerStep#1"; step.kind = "user_annotation";
  b.writer().add_range(step);
  RangeRow fwd;
  fwd.pid = 1; fwd.tid = 1; fwd.start_ns = 10; fwd.dur_ns = 100; fwd.name = "aten::linear"; fwd.fwd_thread_id = 0;
  b.writer().add_range(fwd);
  RangeRow bwd;
  bwd.pid = 1; bwd.tid = 2; bwd.start_ns = 300; bwd.dur_ns = 100; bwd.name = "aten::mm"; bwd.fwd_thread_id = 1;
  b.writer().add_range(bwd);
  b.derive();
  EXPECT_EQ(b.text("SELECT pass FROM op WHERE name = 'aten::linear'"), "fwd");
  EXPECT_EQ(b.text("SELECT pass FROM op WHERE name = 'aten::mm'"), "bwd");
}

}  // namespace
}  // namespace proflint
