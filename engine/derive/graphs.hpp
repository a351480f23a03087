// engine/derive/graphs.hpp — CUDA graph replays and torch.compile regions (schema/0009_graphs_compiled.sql).
//
// The last step of a trace's derivation (it reads the kernel -> API call -> op links and the op
// tree derivation built): fills the model's graph_kernels, cuda_graphs, compiled_regions and
// kernel_compiled, which the store writes into the tables of the same names. The matching rules
// work on plain structs so tests can feed them without a model.
// Rules: docs/derivation.md, "CUDA graphs and torch.compile".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/model.hpp"

namespace proflint {

// A graph launch call's name: cudaGraphLaunch, cuGraphLaunch, hipGraphLaunch (any suffix).
bool is_graph_launch_name(std::string_view api_name);
// A call that launches one kernel (recorded during a capture, it becomes a kernel node).
bool is_kernel_launch_name(std::string_view api_name);
// A torch.compile region: 'Torch-Compiled Region: F/C', 'CompiledFunction', 'CompiledFunctionBackward',
// '## Call CompiledFxGraph <hash> ##'.
bool is_compiled_region_name(std::string_view range_name);
// 'Torch-Compiled Region: 0/1' -> '0/1'; "" when the name carries no frame id.
std::string compiled_region_frame(std::string_view range_name);

// One stream capture seen in the trace, with what may become the nodes of its graph in order.
struct CaptureWindow {
  int64_t start_ns = 0, end_ns = 0;   // cudaStreamBeginCapture start .. cudaStreamEndCapture start
  std::vector<int64_t> launch_ops;    // op (position) of each kernel launch call recorded in it (-1: none), in time order
  std::vector<int64_t> leaf_ops;      // ops without child ops that ran in it on the capturing thread, in time order
};

// The captured op of each of the `kernels` nodes of a graph from `capture`, by position: the
// recorded launch calls when there are exactly as many as nodes, else the leaf ops when there are
// exactly as many, else empty (the capture does not tell which op made which node).
std::vector<int64_t> captured_nodes(const CaptureWindow& capture, size_t kernels);

// Derives one trace's graph replays and compiled regions from its facts and derived op tree and
// links (model.derived must be done), replacing earlier results in model.derived. Pure: reads and
// writes only the model.
void derive_graphs_compiled(TraceModel& model);

}  // namespace proflint
