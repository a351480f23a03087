// tests/realdata/graphs_realdata_test.cpp — CUDA graph replays and torch.compile regions on real
// profiles in ../shared/realdata (skipped with a message when absent).
//
// Hand checks (python3, json/gzip, over the raw events):
//   gpupuzzlers_cudagraph_mwe: 20 cudaGraphLaunch calls; 220 kernels share their correlation ids,
//     11 per launch, durations adding up to 13,656 us. The capture (cudaStreamBeginCapture ..
//     cudaStreamEndCapture, thread 695529) recorded no launch call (the correlation ids of the
//     launches are missing) but 11 aten::matmul -> aten::mm pairs: the 11 leaf ops.
//   tracelens_mi300x_vllm_decode_graph_replay: one hipGraphLaunch, 421 kernels with its
//     correlation id, 10,388,482 ns in all, first start to last end 10,388.90 us; no capture in the
//     file; 48 of the kernels are Inductor triton_poi_ kernels.
//   tracelens_torch_compile_triton: 'Torch-Compiled Region: 0/0' (cpu_op) encloses every launch;
//     its kernels: 4 Triton (triton_red x2 77.074 + 90.653 us, triton_poi x2 527.382 + 140.848 us
//     = 835,957 ns) and 8 others (7 Cijk_ GEMMs from aten::mm, attn_fwd from
//     aten::_flash_attention_forward) = 11,713,064 ns.
//   hta_triton_example: one triton_poi_fused_add_cos_sin_0 (1.76 us) launched by cuLaunchKernel
//     inside 'Torch-Compiled Region: 0/0'.
//   hta_a100_16rank_rank0: 70 cudaGraphLaunch calls; 135 kernels share their correlation ids,
//     105,115 us in all; 81 kernels named by an older Inductor ('triton__0d1d2d...', no kind prefix).
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>

#include <string>

#include "engine/analysis/summary.hpp"
#include "engine/pipeline/load.hpp"
#include "tests/support/realdata.hpp"

namespace proflint {
namespace {

int64_t count(Store& s, const std::string& sql) { return s.db().execAndGet(sql).getInt64(); }
std::string text(Store& s, const std::string& sql) { return s.db().execAndGet(sql).getString(); }

TEST(GraphsRealdata, PuzzlersReplaysAreAttributedToTheCapturedMms) {
  REALDATA_OR_SKIP(path, "kineto/gpupuzzlers_cudagraph_mwe.json.gz");
  Store s = load_inputs({path}, LoadOptions{});
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM cuda_graph"), 1);
  EXPECT_EQ(count(s, "SELECT replays FROM cuda_graph"), 20);
  EXPECT_EQ(count(s, "SELECT kernels_per_replay FROM cuda_graph"), 11);
  EXPECT_EQ(count(s, "SELECT gpu_time_ns FROM cuda_graph"), 13'656'000);
  EXPECT_EQ(count(s, "SELECT gpu_time_per_replay_ns FROM cuda_graph"), 682'800);
  EXPECT_EQ(count(s, "SELECT captured_ops FROM cuda_graph"), 11);
  EXPECT_EQ(text(s, "SELECT top_captured_op FROM cuda_graph"), "aten::mm");
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM graph_kernel g JOIN op o ON o.id = g.captured_op_id WHERE o.name = 'aten::mm'"), 220);
  // Every node is a different aten::mm of the capture, the same one in every replay.
  EXPECT_EQ(count(s, "SELECT COUNT(DISTINCT captured_op_id) FROM graph_kernel"), 11);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM (SELECT node FROM graph_kernel GROUP BY node HAVING COUNT(DISTINCT captured_op_id) = 1)"), 11);
}

TEST(GraphsRealdata, VllmReplayWithoutCaptureIsGraphAndNode) {
  REALDATA_OR_SKIP(path, "kineto/tracelens_mi300x_vllm_decode_graph_replay.json.gz");
  Store s = load_inputs({path}, LoadOptions{});
  EXPECT_EQ(count(s, "SELECT replays FROM cuda_graph"), 1);
  EXPECT_EQ(count(s, "SELECT kernels_per_replay FROM cuda_graph"), 421);
  EXPECT_EQ(count(s, "SELECT gpu_time_ns FROM cuda_graph"), 10'388'482);
  EXPECT_NEAR(static_cast<double>(count(s, "SELECT span_per_replay_ns FROM cuda_graph")), 10'388'901.0, 2.0);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM cuda_graph WHERE capture_start_ns IS NULL"), 1);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM graph_kernel WHERE captured_op_id IS NULL"), 421);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM kernel_compiled WHERE triton_kind = 'pointwise' AND region_range_id IS NULL"), 48);
  auto sum = summarize(s).at(0);
  ASSERT_EQ(sum.graphs.size(), 1u);
  EXPECT_FALSE(sum.graphs[0].capture_in_trace);
}

TEST(GraphsRealdata, TracelensCompiledRegionSplitsTritonFromFallbacks) {
  REALDATA_OR_SKIP(path, "kineto/tracelens_torch_compile_triton.json.gz");
  Store s = load_inputs({path}, LoadOptions{});
  EXPECT_EQ(text(s, "SELECT name FROM compiled_region"), "Torch-Compiled Region: 0/0");
  EXPECT_EQ(count(s, "SELECT triton_kernels FROM compiled_region"), 4);
  EXPECT_EQ(count(s, "SELECT triton_time_ns FROM compiled_region"), 835'957);
  EXPECT_EQ(count(s, "SELECT other_kernels FROM compiled_region"), 8);
  EXPECT_EQ(count(s, "SELECT other_time_ns FROM compiled_region"), 11'713'064);
  EXPECT_EQ(count(s, "SELECT fallback_ops FROM compiled_region"), 8);  // 7 aten::mm + aten::_flash_attention_forward
  EXPECT_EQ(count(s, "SELECT graph_break_before FROM compiled_region"), 0);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM kernel_compiled WHERE triton_kind = 'reduction'"), 2);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM kernel_compiled WHERE triton_kind = 'pointwise'"), 2);
}

TEST(GraphsRealdata, HtaTritonKernelBelongsToItsRegion) {
  REALDATA_OR_SKIP(path, "kineto/hta_triton_example.json.gz");
  Store s = load_inputs({path}, LoadOptions{});
  EXPECT_EQ(text(s, "SELECT r.name || '|' || c.triton_kind || '|' || k.dur_ns FROM kernel_compiled c "
                    "JOIN compiled_region r ON r.range_id = c.region_range_id JOIN kernel k ON k.id = c.kernel_id"),
            "Torch-Compiled Region: 0/0|pointwise|1760");
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM cuda_graph"), 0);
}

TEST(GraphsRealdata, Hta16RankReplaysFourteenGraphsFiveTimesEach) {
  REALDATA_OR_SKIP(path, "kineto/hta_a100_16rank_rank0.json.gz");
  Store s = load_inputs({path}, LoadOptions{});
  EXPECT_EQ(count(s, "SELECT SUM(replays) FROM cuda_graph"), 70);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM graph_kernel"), 135);
  EXPECT_EQ(count(s, "SELECT SUM(gpu_time_ns) FROM cuda_graph"), 105'115'000);
  // Graphs are told apart by the kernel sequence they replay: 14 of them, each once per step.
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM cuda_graph"), 14);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM cuda_graph WHERE replays = 5"), 14);
  EXPECT_EQ(count(s, "SELECT COUNT(*) FROM kernel_compiled WHERE triton_kind = 'triton'"), 81);
}

}  // namespace
}  // namespace proflint
