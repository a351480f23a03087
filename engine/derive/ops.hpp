// engine/derive/ops.hpp — framework ops: name normalization, marker names, Tensor Core eligibility,
// and building the op table (tree, path, pass, iteration) from nested ranges.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/derive/model.hpp"

namespace proflint {

// 'aten::add_' -> 'add', 'aten::conv2d' -> 'conv2d', 'aten::add.Tensor' -> 'add',
// 'autograd::engine::evaluate_function: AddmmBackward0' -> 'evaluate_function',
// 'AddmmBackward0' -> 'AddmmBackward', 'torch::autograd::AccumulateGrad' -> 'AccumulateGrad'.
std::string normalize_op_type(std::string_view op_name);

// torch.autograd.profiler.emit_nvtx range text -> op name: 'aten::add, op_id = 314359' -> 'aten::add',
// 'aten::conv2d, seq = 12, op_id = 5, sizes = [[1]]' -> 'aten::conv2d'. nullopt when the text is not
// a framework op (user NVTX ranges such as 'saxpy' or 'MPI_Send').
std::optional<std::string> framework_op_from_nvtx(std::string_view text);

// ProfilerStep#N, Optimizer.step#… / Optimizer.zero_grad#… / optimizer.step, enumerate(DataLoader)#….
MarkerKind classify_marker(std::string_view name);
// 'Optimizer.step#SGD.step' or 'optimizer.step' (the end of a training step).
bool is_optimizer_step(std::string_view name);
// ProfilerStep#N -> N.
std::optional<int64_t> profiler_step_number(std::string_view name);
// Autograd backward nodes and their engine wrappers.
bool is_backward_name(std::string_view name);

// GEMM / convolution / attention / RNN-cell op types (after normalize_op_type) that can run on
// Tensor Cores given a suitable dtype; backward nodes of those ops included.
bool is_tc_eligible_type(std::string_view op_type);
// From the Kineto 'Input type' JSON list (e.g. ["float","float",""]): true when the first tensor
// dtype is one Tensor Cores take (float via TF32, half, bfloat16, float8, int8), false for
// double/long/int/bool..., nullopt when no tensor dtype is recorded.
std::optional<bool> dtype_allows_tensor_cores(std::string_view input_types_json);
// Both combined: the type must be eligible; the dtype vetoes only when recorded.
bool is_tc_eligible(std::string_view op_type, std::optional<std::string_view> input_types_json);

// Fills RangeRec::marker, backward_name, op_candidate and op_name_id from names and kinds. Op
// candidates: every 'cpu_op' range that is not a marker; NVTX ranges that are framework ops
// (emit_nvtx); and, in traces with no framework ops at all (plain CUDA apps under nsys), every
// NVTX range, since those are the only structure the user gave.
void classify_ranges(TraceData& trace);

// Sorts trace.ranges by (host/GPU side, pid, tid, start, longest first, id) and sets parent/depth:
// the parent is the innermost earlier range on the same thread that contains the range.
void nest_ranges(TraceData& trace);

// True for the autograd engine's thread among the ranges [begin, end) of one thread: most of its
// top-level ranges are backward nodes and it holds no step markers.
bool is_backward_thread(const TraceData& trace, size_t begin, size_t end);

// Op paths are bounded (kMaxPathLabelBytes, kMaxPathBytes: engine/model/op_paths.hpp) and kept as
// a tree (PathTree), spelled when the store is written.

// Builds trace.ops from the nested ranges and the iterations (after nesting and iteration
// detection): one op per op-candidate range, with parent/depth among ops, DLProf-style path,
// pass, iteration, op_type and tc_eligible/tc_root (set on the outermost eligible op of each eligible
// sub-tree only, so an eligible op is counted once). Also sets RangeRec::op for those ranges.
void build_ops(TraceData& trace);

// Inclusive GPU time per op: every kernel adds its duration (and Tensor Core part) to its op and
// all the op's ancestors. Kernels outside --iter-start/--iter-stop are left out when those are set.
void aggregate_op_gpu_time(TraceData& trace);

}  // namespace proflint
