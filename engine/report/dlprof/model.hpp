// engine/report/dlprof/model.hpp — the derived facts the DLProf-style reports read, loaded once.
//
// Everything here comes from the fact store's derived tables (op, kernel, api_call, iteration,
// breakdown, trace.iter_start/iter_stop); nothing is re-derived. The iteration selection derive/
// stored (iteration.selected: --iter-start/--iter-stop) decides which rows are `selected`, exactly
// as the breakdown and op aggregates were restricted, so a saved store gives the same reports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/store/store.hpp"

namespace proflint::dlprof {

using Span = std::pair<int64_t, int64_t>;  // [start, end) in ns

// One op execution (a node instance).
struct OpInstance {
  int64_t id = 0, trace_id = 0;
  int parent = -1;  // index into Model::ops
  bool has_children = false;
  std::string name;                // DLProf op name: the op path without the iteration marker prefix
  std::string op_type, direction;  // direction: fprop, bprop, optimizer, dataloader, other
  std::string key;                 // name + direction + op type: one detail-report row
  std::string op_id;               // stable short id of `key` (hex)
  std::string domain;              // NVTX domain of the op or its nearest enclosing range, "" = default
  int64_t start_ns = 0, dur_ns = 0;
  std::optional<int64_t> iteration;
  bool tc_eligible = false;
  bool selected = true;  // inside the aggregation range
  std::string data_type, input_shapes, stack;
  // Accumulated over the selected kernels and API calls of the instance and its descendants:
  int64_t gpu_ns = 0, tc_ns = 0, api_ns = 0;
  int64_t self_gpu_ns = 0;         // kernels attributed to this op itself (not to a child op)
  int64_t child_dur_ns = 0;        // summed durations of direct child ops
  bool own_tc = false;             // a kernel of its own uses Tensor Cores
  std::vector<Span> kernel_spans;  // kernels of the subtree (for flattening)
  std::vector<Span> api_spans;     // API calls of the subtree
};

// One GPU activity instance: a kernel, or a memcpy/memset (is_memory_op).
struct GpuInstance {
  int64_t id = 0, trace_id = 0;
  std::optional<int64_t> device_id;
  int64_t start_ns = 0, dur_ns = 0;
  std::string name, category;
  int op = -1;  // index into Model::ops, -1 when not attributed
  std::optional<int64_t> iteration;
  bool tensor_core = false, is_memory_op = false, selected = true;
  std::optional<int64_t> api_start_ns, api_dur_ns;
  std::optional<int64_t> grid[3], block[3];
};

struct IterationRow {
  int64_t iteration = 0, dur_ns = 0;
  bool selected = true;  // iteration.selected
};

struct TraceInfo {
  int64_t trace_id = 0;
  std::string path, format;
  std::optional<std::string> framework, tool_version;
  std::optional<int64_t> iter_start, iter_stop;  // the recorded aggregation range
  std::vector<IterationRow> iterations;  // in iteration order
  // True for work of a selected iteration, and for all work when no range was given.
  bool selects(const std::optional<int64_t>& iteration) const;
};

struct Model {
  std::vector<TraceInfo> traces;
  std::vector<OpInstance> ops;       // in (trace, start) order
  std::vector<GpuInstance> kernels;  // kernels, in (trace, start) order
  std::vector<GpuInstance> copies;   // memcpy and memset
  std::vector<std::string> domains;  // named NVTX domains present (sorted); the default domain is ""
};

Model load_model(Store& store);

// True when the op belongs to `domain` ("" = default domain = everything).
inline bool in_domain(const OpInstance& op, const std::string& domain) { return domain.empty() || op.domain == domain; }
bool in_domain(const Model& m, const GpuInstance& g, const std::string& domain);

// Length of the union of spans (flatten); sorts `spans`.
int64_t union_length(std::vector<Span>& spans);
// Stable 12-hex-digit id of a text (FNV-1a 64).
std::string short_id(const std::string& text);

}  // namespace proflint::dlprof
