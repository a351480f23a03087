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

namespace proflint {
namespace {

// fixtures/cuda_graph_nodes.nsys.sqlite (gen_profile.py graphs cuda_graph_nodes), read by hand with
// sqlite3: CUDA_GRAPH_EVENTS holds nodes 1..4, created at 1000082000, 1000182000, 1000282000 and
// 1000382000 ns on the main thread inside the emit_nvtx ranges aten::addmm (op_id 101), aten::relu
// (op_id 102), aten::addmm (op_id 105) and aten::_softmax (op_id 107), and their clones 11..14
// (originalGraphNodeId 1..4) made inside cudaGraphInstantiate. Six replays run kernels with
// graphNodeId 11 (GEMM, stream 7), 13 (GEMM, stream 8, 1 us later), 12 (relu) and 14 (softmax), in
// that start order: 20 + 20 + 5 + 8 us per replay.
std::string node_attribution(Store& store) {
  return store.db()
      .execAndGet("SELECT group_concat(n, ',') FROM (SELECT g.node || '=' || o.name || '@' || (o.start_ns - 1000000000) "
                  "AS n FROM graph_kernel g JOIN op o ON o.id = g.captured_op_id WHERE g.replay = 2 ORDER BY g.node)")
      .getString();
}

TEST(GraphNodeEvents, ReplayedKernelsAreAttributedToTheOpThatCreatedTheirNode) {
  Loaded f("cuda_graph_nodes.nsys.sqlite");
  EXPECT_EQ(f.count("SELECT COUNT(*) FROM graph_node_event"), 8);
  EXPECT_EQ(f.count("SELECT COUNT(*) FROM graph_node_event WHERE original_graph_node_id IS NULL AND name = 'cudaLaunchKernel'"), 4);
  EXPECT_EQ(f.text("SELECT group_concat(graph_node_id || '<' || original_graph_node_id, ',') FROM graph_node_event "
                   "WHERE original_graph_node_id IS NOT NULL"),
            "11<1,12<2,13<3,14<4");
  // Node 13's GEMM (the second addmm, started 260 us in) runs second in every replay; relu third.
  EXPECT_EQ(node_attribution(f.store), "11=aten::addmm@60000,12=aten::relu@150000,13=aten::addmm@260000,14=aten::_softmax@360000");
  EXPECT_EQ(f.count("SELECT COUNT(*) FROM graph_kernel WHERE captured_op_id IS NOT NULL"), 24);
  EXPECT_EQ(f.text("SELECT id_source || ' ' || graph_id || ' ' || replays || ' ' || kernels_per_replay || ' ' || "
                   "gpu_time_per_replay_ns || ' ' || captured_ops || ' ' || top_captured_op FROM cuda_graph"),
            "recorded 1 6 4 53000 4 aten::addmm");
  // The stream capture (cudaStreamBeginCapture at 20 us) is the graph's capture.
  EXPECT_EQ(f.count("SELECT capture_start_ns - 1000000000 FROM cuda_graph"), 20'000);
  // Per node, six replays: GEMMs 120 us each, relu 30 us, softmax 48 us, each op's kernels only.
  EXPECT_EQ(f.text("SELECT group_concat(n, ',') FROM (SELECT o.name || ':' || SUM(k.dur_ns) AS n FROM graph_kernel g "
                   "JOIN kernel k ON k.id = g.kernel_id JOIN op o ON o.id = g.captured_op_id GROUP BY o.id ORDER BY o.id)"),
            "aten::addmm:120000,aten::relu:30000,aten::addmm:120000,aten::_softmax:48000");
}

TEST(GraphNodeEvents, WithoutTheTableTheReplayPositionDecidesAsBefore) {
  // The same export without CUDA_GRAPH_EVENTS: the four captured launches are matched by position,
  // so node 13's GEMM (second to start) is given to aten::relu and the relu kernel to the second
  // aten::addmm: the misattribution node creation events put right.
  auto dir = std::filesystem::path(::testing::TempDir()) / "proflint_graph_nodes_without";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto path = (dir / "nodes.sqlite").string();
  std::filesystem::copy_file(fixture_path("cuda_graph_nodes.nsys.sqlite"), path);
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE);
    db.exec("DROP TABLE CUDA_GRAPH_EVENTS");
  }
  Store store = load_inputs({path}, LoadOptions{});
  EXPECT_EQ(store.db().execAndGet("SELECT COUNT(*) FROM graph_node_event").getInt64(), 0);
  EXPECT_EQ(node_attribution(store), "11=aten::addmm@60000,12=aten::addmm@260000,13=aten::relu@150000,14=aten::_softmax@360000");
  std::filesystem::remove_all(dir);
}

TEST(GraphNodeEvents, SurviveASavedStoreAndDeriveAgain) {
  Loaded f("cuda_graph_nodes.nsys.sqlite");
  auto path = (std::filesystem::path(::testing::TempDir()) / "proflint_graph_nodes_saved.db").string();
  std::filesystem::remove(path);
  f.store.save_as(path);
  LoadOptions again;
  again.rederive = true;
  Store reloaded = load_inputs({path}, again);
  EXPECT_EQ(reloaded.db().execAndGet("SELECT COUNT(*) FROM graph_node_event").getInt64(), 8);
  EXPECT_EQ(node_attribution(reloaded), "11=aten::addmm@60000,12=aten::relu@150000,13=aten::addmm@260000,14=aten::_softmax@360000");
  std::filesystem::remove(path);
}

// Hand-laid rows: one replay of three kernels whose nodes 31, 32, 33 are clones. 31's original
// (21) was created at 150 ns inside aten::mm; 32's original (22) is not in the table (created
// before the capture window) and 33 names itself through a loop (33 -> 23 -> 33). Bad rows: a NULL
// node, a node 0, a negative node, a text node, a NULL thread. None may stop the import; the two
// unresolvable kernels fall back to their position (no capture in the file: none).
TEST(GraphNodeEvents, BadRowsAreImportIssuesAndLoopsEndTheChain) {
  constexpr int64_t kVm = int64_t{1} << 48;
  const int64_t gpid = kVm | (int64_t{111} << 24), gtid = gpid | 111;
  std::string p = std::to_string(gpid), t = std::to_string(gtid);
  std::string sql =
      "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
      "INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'cudaGraphInstantiate_v10000'),"
      " (3, 'cudaGraphLaunch_v10000'), (4, 'gemm_kernel'), (5, 'relu_kernel');"
      "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid,"
      " demangledName, shortName, graphNodeId);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 1020, 0, 1, 7, 10, " + p + ", 4, 4, 31),"
      " (1020, 1025, 0, 1, 7, 10, " + p + ", 5, 5, 32), (1025, 1030, 0, 1, 7, 10, " + p + ", 5, 5, 33);"
      "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue);"
      "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (140, 160, 0, " + t + ", 1, 1, 0), (900, 950, 0, " + t + ", 10, 3, 0);"
      "CREATE TABLE NVTX_EVENTS (start, end, eventType, text, globalTid, domainId);"
      "INSERT INTO NVTX_EVENTS VALUES (110, 200, 59, 'aten::mm, seq = 1', " + t + ", 0),"
      " (210, 300, 59, 'aten::relu, seq = 2', " + t + ", 0);"
      "CREATE TABLE CUDA_GRAPH_EVENTS (start, end, eventClass, globalTid, nameId, graphNodeId, originalGraphNodeId);"
      "INSERT INTO CUDA_GRAPH_EVENTS VALUES (150, 152, 0, " + t + ", 1, 21, NULL),"
      " (500, 502, 0, " + t + ", 2, 31, 21), (510, 512, 0, " + t + ", 2, 32, 22),"
      " (520, 522, 0, " + t + ", 2, 33, 23), (530, 532, 0, " + t + ", 2, 23, 33),"
      " (540, 542, 0, " + t + ", 2, NULL, 21), (550, 552, 0, " + t + ", 2, 0, 21), (560, 562, 0, " + t + ", 2, -4, 21),"
      " (570, 572, 0, " + t + ", 2, 'abc', 21), (580, 582, 0, NULL, 2, 40, 21), (590, 580, 0, " + t + ", 2, 41, NULL);"
      "CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);"
      "INSERT INTO PROCESSES VALUES (" + p + ", 111, 'python3');";
  auto dir = std::filesystem::path(::testing::TempDir()) / "proflint_graph_nodes_bad";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto path = (dir / "bad.sqlite").string();
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec(sql);
  }
  Store store = load_inputs({path}, LoadOptions{});
  auto& db = store.db();
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM graph_node_event").getInt64(), 5);  // 21, 31, 32, 33, 23
  // NULL node, node 0, node -4, node 'abc' (reads as 0), NULL thread: five unusable rows.
  EXPECT_EQ(db.execAndGet("SELECT count FROM import_issue WHERE kind = 'graph_node_event_unusable'").getInt64(), 5);
  // end before start.
  EXPECT_EQ(db.execAndGet("SELECT count FROM import_issue WHERE kind = 'negative_duration'").getInt64(), 1);
  EXPECT_EQ(db.execAndGet("SELECT group_concat(n, ',') FROM (SELECT g.node || '=' || coalesce(o.name, '-') AS n "
                          "FROM graph_kernel g LEFT JOIN op o ON o.id = g.captured_op_id ORDER BY g.node)")
                .getString(),
            "31=aten::mm,32=-,33=-");
  EXPECT_EQ(db.execAndGet("SELECT captured_ops FROM cuda_graph").getInt64(), 1);
  std::filesystem::remove_all(dir);
}

TEST(GraphNodeEvents, ATableWithoutTheNeededColumnsIsSkippedWithAnIssue) {
  auto dir = std::filesystem::path(::testing::TempDir()) / "proflint_graph_nodes_cols";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto path = (dir / "cols.sqlite").string();
  std::filesystem::copy_file(fixture_path("cuda_graph_nodes.nsys.sqlite"), path);
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE);
    db.exec("ALTER TABLE CUDA_GRAPH_EVENTS RENAME COLUMN globalTid TO threadId");
  }
  Store store = load_inputs({path}, LoadOptions{});
  EXPECT_EQ(store.db().execAndGet("SELECT COUNT(*) FROM graph_node_event").getInt64(), 0);
  EXPECT_EQ(store.db().execAndGet("SELECT example FROM import_issue WHERE kind = 'graph_table_columns_missing'").getString(),
            "no column globalTid");
  // The rest of the export loads: six replays, attributed by position.
  EXPECT_EQ(store.db().execAndGet("SELECT replays FROM cuda_graph").getInt64(), 6);
  std::filesystem::remove_all(dir);
}

// fixtures/compile_python_break.json.gz (gen_profile.py graphs compile_python_break), by hand from
// the scenario: per step regions 0/0, 1/0, 0/0, 1/0 with only 'TorchDynamo Cache Lookup' between
// them; each 1/0 resumes 0/0 (a larger frame id): 2 breaks per step, 8 in 4 steps, all
// 'python_only'; the second 0/0 of a step is a new call of frame 0, no break.
TEST(CompiledFixtures, BreaksWithOnlyPythonBetweenRegionsCount) {
  Loaded f("compile_python_break.json.gz");
  EXPECT_EQ(f.count("SELECT COUNT(*) FROM compiled_region"), 16);
  EXPECT_EQ(f.count("SELECT SUM(graph_break_before) FROM compiled_region"), 8);
  EXPECT_EQ(f.count("SELECT COUNT(*) FROM compiled_region WHERE frame = '1/0' AND graph_break_cause = 'python_only'"), 8);
  EXPECT_EQ(f.count("SELECT COUNT(*) FROM compiled_region WHERE frame = '0/0' AND graph_break_before = 0 "
                    "AND graph_break_cause IS NULL"),
            8);
  auto s = summarize(f.store).at(0);
  EXPECT_EQ(s.compiled.graph_breaks, 8);
  // The eager break of compile_graph_break keeps its count and says why.
  Loaded eager("compile_graph_break.json.gz");
  EXPECT_EQ(eager.count("SELECT COUNT(*) FROM compiled_region WHERE graph_break_cause = 'eager_ops'"), 4);
  EXPECT_EQ(eager.count("SELECT COUNT(*) FROM compiled_region WHERE graph_break_cause = 'python_only'"), 0);
}

}  // namespace
}  // namespace proflint

namespace proflint {
namespace {

// The one real export with the table (nsys 2022.2, all tables exported) has it empty: nothing is
// imported and no issue is raised (python3/sqlite3: SELECT COUNT(*) FROM CUDA_GRAPH_EVENTS = 0).
TEST(GraphNodeEvents, RealExportWithAnEmptyTableImportsNothing) {
  REALDATA_OR_SKIP(path, "nsys/nsys2022_saxpy_mpi_all_tables.sqlite");
  Store store = load_inputs({path}, LoadOptions{});
  EXPECT_EQ(store.db().execAndGet("SELECT COUNT(*) FROM graph_node_event").getInt64(), 0);
  EXPECT_EQ(store.db().execAndGet("SELECT COUNT(*) FROM import_issue WHERE kind LIKE 'graph%'").getInt64(), 0);
}

// hta_a100_16rank_rank0, python3 over the JSON: per ProfilerStep 7 'CompiledFunction' regions on
// thread 4515; between consecutive ones, in every step, ops once ('## forward:sparse_arch ##',
// aten::view, aten::cat, ... between the 2nd and 3rd) and nothing at all five times (gaps of
// 37-214 us): 5 eager and 25 Python-only breaks over the 5 steps.
TEST(GraphsRealdataBreaks, Hta16RankCountsPythonOnlyBreaksBetweenCompiledFunctions) {
  REALDATA_OR_SKIP(path, "kineto/hta_a100_16rank_rank0.json.gz");
  Store store = load_inputs({path}, LoadOptions{});
  EXPECT_EQ(store.db().execAndGet("SELECT COUNT(*) FROM compiled_region WHERE graph_break_cause = 'eager_ops'").getInt64(), 5);
  EXPECT_EQ(store.db().execAndGet("SELECT COUNT(*) FROM compiled_region WHERE graph_break_cause = 'python_only'").getInt64(), 25);
  auto s = summarize(store).at(0);
  EXPECT_EQ(s.compiled.graph_breaks, 30);
  EXPECT_EQ(s.compiled.graph_breaks_python_only, 25);
}

}  // namespace
}  // namespace proflint
