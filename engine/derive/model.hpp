// engine/derive/model.hpp — the in-memory copy of one trace that the derivation steps work on.
//
// derive.cpp copies one TraceModel's facts into a TraceData (compact rows, sorted where a step needs
// it), each step fills the derived fields, and derive.cpp puts them into the model's DerivedFacts.
// Rows refer to each other by index into these vectors so the sweeps stay cache-friendly; a row's
// `id` is its position in the model's table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/derive/derive.hpp"
#include "engine/model/model.hpp"

namespace proflint {

enum class RangeKind : uint8_t { cpu_op, user_annotation, gpu_user_annotation, python_function, nvtx, other };
enum class GpuKind : uint8_t { kernel, memcpy, memset };

// One range as the sweeps read it (64 bytes). The columns only one step or two read (external id,
// forward thread, sequence number, input types, call stack, module) stay in the model's RangeArgs,
// TraceData::args(r): copying them made this 144 bytes, 30 MB more at derivation's peak on a
// 10^6-row nsys export (533k ranges). Positions and text ids are 32-bit: a model holds fewer than
// 2^31 rows or texts of a kind (one more byte of input per row would make a 2 GiB trace).
struct RangeRec {
  int64_t pid = kNone, tid = kNone;
  int64_t start = 0, end = 0;
  int32_t name_id = 0;
  int32_t op_name_id = 0;  // name of the op it becomes (emit_nvtx text stripped to 'aten::add')
  int32_t id = 0;  // position in the model's ranges
  // derived
  int32_t parent = -1;  // index of the enclosing range on the same thread
  int32_t op = -1;      // index into TraceData::ops when the range is an op
  int32_t depth = 0;
  RangeKind kind = RangeKind::other;
  MarkerKind marker = MarkerKind::none;
  bool backward_name = false;     // autograd backward node or engine wrapper
  bool op_candidate = false;      // becomes an op row unless it turns out to be an iteration marker
  bool iteration_marker = false;  // the range delimits an iteration (ProfilerStep#N, key node, NVTX step)
};

static_assert(sizeof(RangeRec) <= 64);

// A runtime call as the sweeps read it (56 bytes; its correlation and external ids, which only
// correlation reads, stay in the model: TraceData::correlation_id/external_id).
struct ApiRec {
  int64_t pid = kNone, tid = kNone;
  int64_t start = 0, end = 0;
  int64_t name_id = 0;
  int32_t id = 0;
  // derived
  int32_t op = -1;  // index into ops
  int32_t iteration = -1;
  bool launches = false;  // some kernel/memcpy/memset correlates to it
};

// A kernel, memcpy or memset as the sweeps read it (56 bytes; its correlation and external ids, which
// only correlation reads, stay in the model: TraceData::correlation_id/external_id).
struct GpuRec {
  int64_t device_id = kNone, pid = kNone;
  int64_t start = 0, end = 0;
  int32_t name_id = -1;  // kernels only (-1: none)
  int32_t id = 0;
  // derived
  int32_t api = -1;  // index into apis
  int32_t op = -1;   // index into ops
  int32_t iteration = -1;
  GpuKind kind = GpuKind::kernel;
  bool tensor_core = false;   // kernels only
  bool tensor_core_decided = false;  // the name decided tensor_core (else the op fallback may)
  uint8_t category = 0;  // kernels: position in kKernelCategories, as GpuLinks keeps it
  std::string_view category_text() const { return kKernelCategories[category]; }
};

static_assert(sizeof(ApiRec) <= 56);
static_assert(sizeof(GpuRec) <= 56);

struct SyncRec {
  int64_t id = 0;
  int64_t start = 0;
  int32_t iteration = -1;
};

// Ops are built as the model's rows (engine/model/model.hpp): keep_results moves the list into
// DerivedFacts instead of copying 470k rows beside it (x20 tiled trace). Until then `range` is an
// index into TraceData::ranges (-1 for unassociated ops), `parent` and `tc_root` indexes into
// TraceData::ops, and op_type a position in TraceData::op_types.
using OpRec = OpFact;

// Where start-up ends and steady state begins on one device (see startup.hpp).
struct SteadyState {
  int64_t device_id = 0;
  int64_t window_start = 0, window_end = 0;  // the analysed window (breakdown iteration -1)
  int64_t steady_start = 0;                  // == window_start when no start-up was found
  std::string cause;                         // comma-separated causes in time order, '' when none
  std::string evidence;                      // the longest start-up call or range, e.g. 'cudaFree 981.0 ms'
};

struct IterationRec {
  std::optional<int64_t> number;
  std::string name;
  int64_t start = 0, end = 0;  // host side
  int64_t gpu_start = kNone, gpu_end = kNone;
};

struct TraceData {
  int64_t trace_id = 0;
  std::string format;
  std::string framework;  // trace.framework ('' when the trace does not say)
  int64_t start_ns = kNone, end_ns = kNone;
  const DeriveOptions* options = nullptr;

  std::vector<RangeRec> ranges;  // sorted by (pid, tid, start, -end, id)
  std::vector<ApiRec> apis;      // sorted by (pid, tid, start, id)
  std::vector<GpuRec> gpu;       // kernels, memcpys, memsets, sorted by start
  std::vector<SyncRec> syncs;
  std::vector<OpRec> ops;
  std::vector<IterationRec> iterations;  // sorted, non-overlapping
  std::string iteration_source = "none";
  // Set when --key-node was given and marked no iteration: "key node 'X' not found; candidates: …"
  // (stored as the import issue 'key_node_not_found').
  std::string key_node_problem;
  std::vector<int64_t> described_devices;  // device_id rows present in the device table
  struct DeviceInfo {
    std::string vendor, name;
    std::optional<int64_t> compute_major;
  };
  std::unordered_map<int64_t, DeviceInfo> devices;  // by device_id, what the device table says
  // derived: start-up span per active device (startup.hpp) and the kind of workload
  std::vector<SteadyState> steady;
  std::string_view workload;  // 'training', 'inference', 'non_framework' or empty (unknown)

  // The model's texts: name ids are its string ids, and new names (op names derivation makes up)
  // are interned there.
  // Without a model (unit tests of single steps) the TraceData's own table.
  StringTable* names = nullptr;
  StringTable own_names;
  const std::vector<RangeFact>* range_facts = nullptr;  // the model's ranges and their arguments (args())
  const std::vector<RangeArgs>* range_args = nullptr;
  std::vector<RangeFact> own_range_facts;
  std::vector<RangeArgs> own_range_args;
  // The model's runtime calls and GPU activity (ApiRec::id, GpuRec::id are positions in them): the
  // ids correlation reads. Without a model (unit tests of single steps) every id is NULL.
  const std::vector<ApiFact>* api_facts = nullptr;
  const std::vector<KernelFact>* kernel_facts = nullptr;
  const std::vector<CopyFact>* memcpy_facts = nullptr;
  const std::vector<CopyFact>* memset_facts = nullptr;
  // normalize_op_type once per op name (ops repeat names): its position in op_types.
  std::unordered_map<int64_t, int32_t> op_type_of_name;
  std::vector<std::string> op_types;  // OpFact::op_type's texts, moved into DerivedFacts with the ops
  int32_t add_op_type(std::string text) {
    op_types.push_back(std::move(text));
    return static_cast<int32_t>(op_types.size() - 1);
  }
  PathTree op_paths;  // the ops' paths (OpFact::path_node), moved into DerivedFacts with the ops
  std::unordered_map<int64_t, OpSpan> unassociated_spans;  // DerivedFacts::unassociated_spans while derived

  // derived: source and module attribution (source.hpp), in the model's row positions
  std::vector<SourceFact> sources;

  const std::string& text(int64_t id) const { return (names ? *names : own_names).text(id); }
  // The model's arguments of a range (RangeRec::id is its row's position in the model); without a
  // model (unit tests of single steps) own_range_facts and own_range_args, which such a test fills
  // beside its RangeRecs.
  const RangeArgs& args(const RangeRec& r) const {
    const RangeFact& f = (range_facts ? *range_facts : own_range_facts)[static_cast<size_t>(r.id)];
    if (f.args < 0) return kNoRangeArgs;
    return (range_args ? *range_args : own_range_args)[static_cast<size_t>(f.args)];
  }
  int64_t intern(std::string_view value) { return (names ? *names : own_names).intern(value); }

  int64_t correlation_id(const ApiRec& a) const { return api_facts ? api_fact(a).correlation_id : kNone; }
  int64_t external_id(const ApiRec& a) const { return api_facts ? api_fact(a).external_id : kNone; }
  int64_t correlation_id(const GpuRec& g) const { return gpu_ids(g).first; }
  int64_t external_id(const GpuRec& g) const { return gpu_ids(g).second; }

 private:
  const ApiFact& api_fact(const ApiRec& a) const { return (*api_facts)[static_cast<size_t>(a.id)]; }
  // (correlation id, external id) of the model's row behind `g`; NULLs without a model.
  std::pair<int64_t, int64_t> gpu_ids(const GpuRec& g) const {
    auto ids = [&](const auto* rows) {
      if (!rows) return std::pair<int64_t, int64_t>{kNone, kNone};
      const auto& f = (*rows)[static_cast<size_t>(g.id)];
      return std::pair<int64_t, int64_t>{f.correlation_id, f.external_id};
    };
    if (g.kind == GpuKind::kernel) return ids(kernel_facts);
    return ids(g.kind == GpuKind::memcpy ? memcpy_facts : memset_facts);
  }
};

// Ordinal of the iteration containing time t, or -1.
inline int32_t iteration_at(const std::vector<IterationRec>& iterations, int64_t t) {
  size_t lo = 0, hi = iterations.size();
  while (lo < hi) {  // first iteration starting after t
    size_t mid = (lo + hi) / 2;
    if (iterations[mid].start <= t)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0) return -1;
  const auto& it = iterations[lo - 1];
  return t < it.end ? static_cast<int32_t>(lo - 1) : -1;
}

}  // namespace proflint
