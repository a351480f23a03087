// tests/unit/graphs_compiled_test.cpp — CUDA graph replays and torch.compile regions
// (engine/derive/graphs.cpp, schema/0009_graphs_compiled.sql): the name rules, the capture
// matching, and the derived tables on the generated fixtures (scripts/gen_profile.py graphs NAME).
//
// Fixture figures are those the scenario scripts lay down (scripts/genprof/graph_scenarios.py),
// checked by hand against the generated events with python3 (json/gzip):
//   cuda_graph_captured: 8 cudaGraphLaunch, each with 4 kernels of 20 + 5 + 20 + 8 us sharing its
//     correlation id; the capture in ProfilerStep#0 records one cudaLaunchKernel inside each of
//     aten::addmm, aten::relu, aten::addmm, aten::_softmax (in that order).
//   cuda_graph_replayed: 30 launches x 8 kernels of 3 us; no capture in the file.
//   compile_graph_break: per step, region 0/0 launches triton_poi (6 us), an aten::mm GEMM (30 us)
//     and triton_red (9 us); aten::nonzero runs between the regions; region 1/0 launches
//     triton_per (7 us), triton_tem (25 us) and triton_poi_fused_convolution_relu (5 us). 4 steps.
#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "engine/analysis/summary.hpp"
#include "engine/derive/categories.hpp"
#include "engine/derive/derive_trace.hpp"
#include "engine/derive/graphs.hpp"
#include "engine/pipeline/load.hpp"
#include "tests/support/realdata.hpp"

namespace proflint {
namespace {

using testing::fixture_path;

TEST(TritonKind, FromInductorPrefix) {
  EXPECT_EQ(triton_kernel_kind("triton_poi_fused_add_cos_sin_0"), "pointwise");
  EXPECT_EQ(triton_kernel_kind("triton_red_fused__unsafe_view_add_mean_mul_pow_rsqrt_1"), "reduction");
  EXPECT_EQ(triton_kernel_kind("triton_per_fused__softmax_2"), "persistent_reduction");
  EXPECT_EQ(triton_kernel_kind("triton_tem_fused_mm_3"), "template");
  EXPECT_EQ(triton_kernel_kind("triton_for_fused_0"), "foreach");
  EXPECT_EQ(triton_kernel_kind("triton_fused_attention_kernel"), "triton");
  EXPECT_EQ(triton_kernel_kind("void at::native::vectorized_elementwise_kernel<4>()"), "");
  EXPECT_EQ(triton_kernel_kind("my_triton_poi_"), "");
}

TEST(TritonKind, DecidesTheCategoryBeforeTheFusedOpNames) {
  // Name matching alone would call these conv and reduction ("convolution", "norm").
  EXPECT_EQ(kernel_category("triton_poi_fused_convolution_relu_4"), "elementwise");
  EXPECT_EQ(kernel_category("triton_poi_fused_native_layer_norm_0"), "elementwise");
  EXPECT_EQ(kernel_category("triton_per_fused_add_1"), "reduction");
  EXPECT_EQ(kernel_category("triton_tem_fused_addmm_0"), "gemm");
  EXPECT_EQ(kernel_category("triton_tem_fused_convolution_0"), "conv");
}

TEST(CompiledRegionNames, RegionsAndFrames) {
  EXPECT_TRUE(is_compiled_region_name("Torch-Compiled Region: 0/0"));
  EXPECT_TRUE(is_compiled_region_name("CompiledFunction"));
  EXPECT_TRUE(is_compiled_region_name("CompiledFunctionBackward"));
  EXPECT_TRUE(is_compiled_region_name("## Call CompiledFxGraph fal4xpiah2v6 ##"));
  EXPECT_FALSE(is_compiled_region_name("TorchDynamo Cache Lookup"));
  EXPECT_FALSE(is_compiled_region_name("CompiledFunctionX"));
  EXPECT_EQ(compiled_region_frame("Torch-Compiled Region: 2/1"), "2/1");
  EXPECT_EQ(compiled_region_frame("CompiledFunction"), "");
}

TEST(GraphLaunchNames, LaunchesAndCaptures) {
  EXPECT_TRUE(is_graph_launch_name("cudaGraphLaunch"));
  EXPECT_TRUE(is_graph_launch_name("cudaGraphLaunch_ptsz"));
  EXPECT_TRUE(is_graph_launch_name("hipGraphLaunch"));
  EXPECT_FALSE(is_kernel_launch_name("cudaGraphLaunch"));
  EXPECT_TRUE(is_kernel_launch_name("cudaLaunchKernel"));
  EXPECT_TRUE(is_kernel_launch_name("cuLaunchKernelEx"));
  EXPECT_TRUE(is_kernel_launch_name("hipModuleLaunchKernel"));
  EXPECT_FALSE(is_kernel_launch_name("cudaMemcpyAsync"));
}

TEST(CapturedNodes, LaunchCallsFirstThenLeafOpsElseNothing) {
  CaptureWindow w;
  w.launch_ops = {10, 11, 12};
  w.leaf_ops = {20, 21};
  EXPECT_EQ(captured_nodes(w, 3), (std::vector<int64_t>{10, 11, 12}));
  EXPECT_EQ(captured_nodes(w, 2), (std::vector<int64_t>{20, 21}));
  EXPECT_TRUE(captured_nodes(w, 4).empty());  // neither count matches: no one-to-one attribution
  EXPECT_TRUE(captured_nodes(w, 0).empty());
}

struct Loaded {
  Store store;
  explicit Loaded(const std::string& fixture) : store(load_inputs({fixture_path(fixture).string()}, LoadOptions{})) {}
  int64_t count(const std::string& sql) { return store.db().execAndGet(sql).getInt64(); }
  std::string text(const std::string& sql) { return store.db().execAndGet(sql).getString(); }
};

TEST(GraphFixtures, CapturedGraphNodesAreTheCapturedOps) {
  Loaded f("cuda_graph_captured.json.gz");
  EXPECT_EQ(f.count("SELECT COUNT(*) FROM cuda_graph"), 1);
  EXPECT_EQ(f.count("SELECT replays FROM cuda_graph"), 8);
  EXPECT_EQ(f.count("SELECT kernels_per_replay FROM cuda_graph"), 4);
  EXPECT_EQ(f.count("SELECT gpu_time_per_replay_ns FROM cuda_graph"), 53'000);
  EXPECT_EQ(f.count("SELECT span_per_replay_ns FROM cuda_graph"), 53'000);
  EXPECT_EQ(f.count("SELECT captured_ops FROM cuda_graph"), 4);
  EXPECT_EQ(f.text("SELECT top_captured_op FROM cuda_graph"), "aten::addmm");  // 2 x 20 us per replay
  EXPECT_EQ(f.text("SELECT id_source FROM cuda_graph"), "kernel_sequence");
  // Node by node, every replay: the op whose launch was captured into it.
  EXPECT_EQ(f.text("SELECT group_concat(n, ',') FROM (SELECT g.node || '=' || o.name AS n FROM graph_kernel g "
                   "JOIN op o ON o.id = g.captured_op_id WHERE g.replay = 3 ORDER BY g.node)"),
            "0=aten::addmm,1=aten::relu,2=aten::addmm,3=aten::_softmax");
  EXPECT_EQ(f.count("SELECT COUNT(*) FROM graph_kernel WHERE captured_op_id IS NOT NULL"), 32);
  EXPECT_EQ(f.count("SELECT COUNT(DISTINCT replay) FROM graph_kernel"), 8);
}

TEST(GraphFixtures, ReplayWithoutCaptureIsGraphAndNode) {
  Loaded f("cuda_graph_replayed.json.gz");
  EXPECT_EQ(f.count("SELECT replays FROM cuda_graph"), 30);
  EXPECT_EQ(f.count("SELECT kernels_per_replay FROM cuda_graph"), 8);
  EXPECT_EQ(f.count("SELECT gpu_time_per_replay_ns FROM cuda_graph"), 24'000);
  EXPECT_EQ(f.count("SELECT COUNT(*) FROM cuda_graph WHERE capture_start_ns IS NULL AND captured_ops IS NULL"), 1);
  EXPECT_EQ(f.count("SELECT COUNT(*) FROM graph_kernel WHERE captured_op_id IS NULL"), 240);
  EXPECT_EQ(f.count("SELECT MAX(node) FROM graph_kernel"), 7);
}

TEST(CompiledFixtures, RegionsTritonKernelsFallbacksAndGraphBreaks) {
  Loaded f("compile_graph_break.json.gz");
  EXPECT_EQ(f.count("SELECT COUNT(*) FROM compiled_region"), 8);  // 2 per step x 4 steps
  EXPECT_EQ(f.count("SELECT SUM(graph_break_before) FROM compiled_region"), 4);  // one per step, before 1/0
  EXPECT_EQ(f.count("SELECT COUNT(*) FROM compiled_region WHERE frame = '1/0' AND graph_break_before = 1"), 4);
  EXPECT_EQ(f.count("SELECT SUM(triton_kernels) FROM compiled_region WHERE frame = '0/0'"), 8);
  EXPECT_EQ(f.count("SELECT SUM(triton_time_ns) FROM compiled_region WHERE frame = '0/0'"), 4 * 15'000);
  EXPECT_EQ(f.count("SELECT SUM(other_kernels) FROM compiled_region WHERE frame = '0/0'"), 4);  // the aten::mm GEMM
  EXPECT_EQ(f.count("SELECT SUM(other_time_ns) FROM compiled_region WHERE frame = '0/0'"), 4 * 30'000);
  EXPECT_EQ(f.count("SELECT SUM(fallback_ops) FROM compiled_region"), 4);
  EXPECT_EQ(f.count("SELECT SUM(triton_time_ns) FROM compiled_region WHERE frame = '1/0'"), 4 * 37'000);
  // The eager aten::nonzero kernel between the regions belongs to none.
  EXPECT_EQ(f.count("SELECT COUNT(*) FROM kernel k LEFT JOIN kernel_compiled c ON c.kernel_id = k.id "
                    "WHERE k.name LIKE '%write_indices%' AND c.kernel_id IS NULL"),
            4);
  EXPECT_EQ(f.text("SELECT group_concat(t, ',') FROM (SELECT DISTINCT triton_kind AS t FROM kernel_compiled "
                   "WHERE triton_kind IS NOT NULL ORDER BY t)"),
            "persistent_reduction,pointwise,reduction,template");
  EXPECT_EQ(f.text("SELECT category FROM kernel WHERE name = 'triton_poi_fused_convolution_relu_4' LIMIT 1"), "elementwise");
  auto s = summarize(f.store).at(0);
  EXPECT_EQ(s.compiled.regions, 8);
  EXPECT_EQ(s.compiled.graph_breaks, 4);
  EXPECT_EQ(s.compiled.iterations_with_regions, 4);
  EXPECT_EQ(s.compiled.triton_kernels, 20);
  EXPECT_EQ(s.compiled.triton_time_ns, 4 * 52'000);
}

// The same figures from the model alone: derive_trace fills the graph facts before any store
// exists, ops and kernels named by position in the model (checked through the model's own links).
TEST(GraphModel, DerivedOnTheModelWithoutAStore) {
  TraceModel m;
  import_file(fixture_path("cuda_graph_captured.json.gz").string(), m, ImportOptions{});
  derive_trace(m, DeriveOptions{});
  const DerivedFacts& d = m.derived;
  ASSERT_EQ(d.cuda_graphs.size(), 1u);
  const CudaGraphFact& g = d.cuda_graphs[0];
  EXPECT_EQ(g.replays, 8);
  EXPECT_EQ(g.kernels_per_replay, 4);
  EXPECT_EQ(g.gpu_time_ns, 8 * 53'000);
  EXPECT_EQ(g.captured_ops, 4);
  EXPECT_EQ(g.top_captured_op.value_or("<none>"), "aten::addmm");
  EXPECT_FALSE(g.recorded);
  ASSERT_EQ(d.graph_kernels.size(), 32u);
  std::vector<std::string> replay3;
  for (const auto& k : d.graph_kernels) {
    EXPECT_EQ(k.graph_id, g.graph_id);
    ASSERT_GE(k.launch_api, 0);
    EXPECT_EQ(d.kernels[static_cast<size_t>(k.kernel)].api, k.launch_api);  // the kernel's own launch call
    EXPECT_TRUE(is_graph_launch_name(m.strings.text(m.apis[static_cast<size_t>(k.launch_api)].name_id)));
    ASSERT_GE(k.captured_op, 0);
    if (k.replay == 3) replay3.push_back(std::to_string(k.node) + "=" + m.strings.text(d.ops[static_cast<size_t>(k.captured_op)].name_id));
  }
  EXPECT_EQ(replay3, (std::vector<std::string>{"0=aten::addmm", "1=aten::relu", "2=aten::addmm", "3=aten::_softmax"}));
  // Deriving again replaces the rows rather than adding to them.
  derive_graphs_compiled(m);
  EXPECT_EQ(m.derived.graph_kernels.size(), 32u);
  EXPECT_EQ(m.derived.cuda_graphs.size(), 1u);
}

TEST(CompiledModel, RegionsOnTheModelWithoutAStore) {
  // compile_graph_break (see the top of this file): 2 regions per step x 4 steps, a graph break
  // before every 1/0; per step 2 Triton kernels in 0/0, 3 in 1/0 and the aten::mm fallback in 0/0.
  TraceModel m;
  import_file(fixture_path("compile_graph_break.json.gz").string(), m, ImportOptions{});
  derive_trace(m, DeriveOptions{});
  const DerivedFacts& d = m.derived;
  ASSERT_EQ(d.compiled_regions.size(), 8u);
  int breaks = 0;
  for (const auto& r : d.compiled_regions) {
    EXPECT_EQ(m.strings.text(m.ranges[static_cast<size_t>(r.range)].name_id), r.name);  // the range it names
    if (r.graph_break_before) {
      ++breaks;
      EXPECT_EQ(r.frame, "1/0");
    }
  }
  EXPECT_EQ(breaks, 4);
  int triton = 0, fallback = 0;
  for (const auto& k : d.kernel_compiled) {
    ASSERT_GE(k.region_range, 0);
    if (!k.triton_kind.empty()) ++triton;
    if (k.fallback) ++fallback;
  }
  EXPECT_EQ(triton, 4 * 5);
  EXPECT_EQ(fallback, 4);
}

TEST(CompiledFixtures, SavedStoreKeepsRecordedGraphIdsAndDerivesAgain) {
  // kernel_graph_node is an imported table: a store written and read back keeps it, and the
  // derived tables are rebuilt from it (here: a replay with no recorded ids stays numbered).
  Loaded f("cuda_graph_captured.json.gz");
  auto path = (std::filesystem::temp_directory_path() / "proflint_graphs_saved.db").string();
  std::filesystem::remove(path);
  f.store.save_as(path);
  LoadOptions again;
  again.rederive = true;
  Store reloaded = load_inputs({path}, again);
  EXPECT_EQ(reloaded.db().execAndGet("SELECT COUNT(*) FROM graph_kernel WHERE captured_op_id IS NOT NULL").getInt64(), 32);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace proflint

namespace proflint {
namespace {

// An nsys 2026 export with --cuda-graph-trace=node: the kernels of two replays carry graphId 5 and
// graphNodeId 101..103; the capture on thread 111 recorded three cudaLaunchKernel calls, each
// inside an emit_nvtx range (aten::mm, aten::relu, aten::add). Hand-laid rows, so every figure
// below is read off the INSERTs.
TEST(GraphNsys, RecordedIdsAndCapturedNvtxOpsSurviveASavedStore) {
  constexpr int64_t kVm = int64_t{1} << 48;
  const int64_t gpid = kVm | (int64_t{111} << 24), gtid = gpid | 111;
  std::string p = std::to_string(gpid), t = std::to_string(gtid);
  std::string sql =
      "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
      "INSERT INTO StringIds VALUES (1, 'cudaStreamBeginCapture_v10000'), (2, 'cudaStreamEndCapture_v10000'),"
      " (3, 'cudaLaunchKernel_v7000'), (4, 'cudaGraphLaunch_v10000'), (5, 'gemm_kernel'), (6, 'relu_kernel'),"
      " (7, 'add_kernel');"
      "CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);"
      "INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2026.2.1.210'), ('EXPORT_SCHEMA_VERSION', '3.25.0');"
      "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,"
      " demangledName, shortName, graphNodeId, graphId);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES"
      " (1000, 1020, 0, 1, 7, 10, " + p + ", 5, 5, 101, 5), (1020, 1025, 0, 1, 7, 10, " + p + ", 6, 6, 102, 5),"
      " (1025, 1030, 0, 1, 7, 10, " + p + ", 7, 7, 103, 5), (2000, 2020, 0, 1, 7, 11, " + p + ", 5, 5, 101, 5),"
      " (2020, 2025, 0, 1, 7, 11, " + p + ", 6, 6, 102, 5), (2025, 2030, 0, 1, 7, 11, " + p + ", 7, 7, 103, 5),"
      " (3000, 3010, 0, 1, 7, 12, " + p + ", 7, 7, 0, 0);"
      "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue, callchainId);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (100, 105, 0, " + t + ", 1, 1, 0, NULL),"
      " (120, 125, 0, " + t + ", 2, 3, 0, NULL), (220, 225, 0, " + t + ", 3, 3, 0, NULL), (320, 325, 0, " + t + ", 4, 3, 0, NULL),"
      " (400, 405, 0, " + t + ", 5, 2, 0, NULL), (900, 950, 0, " + t + ", 10, 4, 0, NULL),"
      " (1900, 1950, 0, " + t + ", 11, 4, 0, NULL), (2900, 2905, 0, " + t + ", 12, 3, 0, NULL);"
      "CREATE TABLE NVTX_EVENTS (start, end, eventType, rangeId, category, color, text, globalTid, endGlobalTid, textId,"
      " domainId, uint64Value, int64Value, doubleValue, uint32Value, int32Value, floatValue, jsonTextId, jsonText);"
      "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES"
      " (110, 200, 59, 'aten::mm, seq = 1', " + t + ", 0), (210, 300, 59, 'aten::relu, seq = 2', " + t + ", 0),"
      " (310, 390, 59, 'aten::add, seq = 3', " + t + ", 0);"
      "CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);"
      "INSERT INTO PROCESSES VALUES (" + p + ", 111, 'python3');";
  auto dir = std::filesystem::path(::testing::TempDir()) / "proflint_graph_nsys";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto path = (dir / "graphs.sqlite").string();
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec(sql);
  }
  auto check = [](Store& store) {
    auto& db = store.db();
    EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM kernel_graph_node WHERE graph_id = 5").getInt64(), 6);
    EXPECT_EQ(db.execAndGet("SELECT id_source || ' ' || graph_id || ' ' || replays || ' ' || kernels_per_replay || ' ' || "
                            "gpu_time_per_replay_ns FROM cuda_graph")
                  .getString(),
              "recorded 5 2 3 30");
    EXPECT_EQ(db.execAndGet("SELECT group_concat(n, ',') FROM (SELECT g.node || '=' || o.name AS n FROM graph_kernel g "
                            "JOIN op o ON o.id = g.captured_op_id WHERE g.replay = 1 ORDER BY g.node)")
                  .getString(),
              "101=aten::mm,102=aten::relu,103=aten::add");
    EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM graph_kernel").getInt64(), 6);  // the eager add_kernel is no replay
  };
  Store store = load_inputs({path}, LoadOptions{});
  check(store);
  auto saved = (dir / "saved.db").string();
  store.save_as(saved);
  LoadOptions again;
  again.rederive = true;
  Store reloaded = load_inputs({saved}, again);
  check(reloaded);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace proflint
