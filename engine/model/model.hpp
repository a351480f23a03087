// engine/model/model.hpp — the in-memory fact model: one trace's facts between import and store.
//
// The hub of the pipeline (docs/architecture.md): an importer fills a TraceModel through a FactSink
// (sink.hpp), derivation (engine/derive) reads its facts and fills its `derived` part, and the store
// (engine/store/model_io.hpp) writes it once, derived columns included; load_model reads a saved
// store back into models for re-derivation. Rows are kept in the order they were added, which is
// the order of their ids in the store: row i of a table is written with id base + i, so derivation
// refers to rows by position and never by database id. NULL is kNone.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/model/op_paths.hpp"
#include "engine/model/rows.hpp"

namespace proflint {

// NULL in the store.
inline constexpr int64_t kNone = INT64_MIN;

inline int64_t or_none(const opt_i64& v) { return v ? *v : kNone; }

// Interned texts with dense ids 1..size() in the order they were first seen (the store's string
// ids are these, shifted when several traces share one table). Views into the texts stay valid.
// The lookup is an open-addressing table of (hash, id) slots probed linearly: one contiguous array
// instead of a node per text, and a text is compared only where the full hash matches (an nsys
// export brings ~10^6 lookups of ~270k distinct NVTX texts; the node-based map was ~4% of the run).
class StringTable {
 public:
  int64_t intern(std::string_view text) {
    uint32_t h = hash(text);
    size_t at = probe(text, h);
    if (slots_[at].id != 0) return slots_[at].id;
    texts_.emplace_back(text);
    auto id = static_cast<uint32_t>(texts_.size());
    slots_[at] = {h, id};
    if (texts_.size() > max_load()) grow(slots_.size() * 2);
    return id;
  }
  // The id of `text`, or 0 when it was never interned.
  int64_t find(std::string_view text) const { return slots_[probe(text, hash(text))].id; }
  const std::string& text(int64_t id) const {
    static const std::string empty;
    return id >= 1 && id <= size() ? texts_[static_cast<size_t>(id - 1)] : empty;
  }
  int64_t size() const { return static_cast<int64_t>(texts_.size()); }
  // Room for `n` more texts without growing the lookup table on the way (callers bound `n` by what
  // the input can hold).
  void reserve_more(size_t n) {
    size_t want = capacity_for(texts_.size() + std::min(n, kMaxReserve), slots_.size());
    if (want != slots_.size()) grow(want);
  }
  // The lookup table's size for `texts` texts: a power of two from `at_least`, at most 3/4 full.
  // Reservations stop at kMaxReserve texts, so that the doubling cannot overflow.
  static constexpr size_t kMaxReserve = size_t{1} << 40;
  static constexpr size_t capacity_for(size_t texts, size_t at_least = 16) {
    size_t want = at_least;
    while (want / 4 * 3 < std::min(texts, kMaxReserve)) want *= 2;
    return want;
  }

 private:
  // 8 bytes: the hash's low 32 bits place a text in tables of up to 2^32 slots, and a table of
  // 2^32 texts would need 128 GiB for the strings alone (16-byte slots were 8 MB on an nsys export
  // with 266k distinct NVTX texts).
  struct Slot {
    uint32_t hash = 0;
    uint32_t id = 0;  // 0: empty
  };
  static uint32_t hash(std::string_view s) { return static_cast<uint32_t>(std::hash<std::string_view>{}(s)); }
  size_t max_load() const { return slots_.size() / 4 * 3; }
  // The slot holding `text`, or the empty slot where it would go.
  size_t probe(std::string_view text, uint32_t h) const {
    size_t mask = slots_.size() - 1;
    for (size_t at = h & mask;; at = (at + 1) & mask) {
      const Slot& s = slots_[at];
      if (s.id == 0 || (s.hash == h && texts_[static_cast<size_t>(s.id - 1)] == text)) return at;
    }
  }
  void grow(size_t capacity) {
    std::vector<Slot> old(capacity);
    old.swap(slots_);
    size_t mask = capacity - 1;
    for (const Slot& s : old) {
      if (s.id == 0) continue;
      size_t at = s.hash & mask;
      while (slots_[at].id != 0) at = (at + 1) & mask;
      slots_[at] = s;
    }
  }
  std::deque<std::string> texts_;
  std::vector<Slot> slots_ = std::vector<Slot>(16);  // a power of two, at most 3/4 full
};

// A kernel's launch configuration as the _kernel table has it: grid x/y/z, block x/y/z, registers
// per thread, shared memory bytes (kNone = NULL).
using LaunchConfig = std::array<int64_t, 8>;

// Fact rows as kept in the model: the importer's rows with texts interned (name ids into
// TraceModel::strings, short enum-like texts as label ids into TraceModel::labels, 0 = NULL).
struct KernelFact {  // 96 bytes
  int64_t device_id = kNone, stream_id = kNone, pid = kNone;
  int64_t start_ns = 0, dur_ns = 0, name_id = 0;
  int64_t correlation_id = kNone, external_id = kNone;
  // The launch configuration in 32 bits a value (TraceModel::launch_of/set_launch): 32 bytes less
  // a kernel (7 MB on a 10^6-row nsys export). kLaunchNull is NULL; a configuration with a value
  // outside 32 bits (a malformed profile's) is kept whole in TraceModel::wide_launches and marked
  // kLaunchWide here.
  static constexpr int32_t kLaunchNull = INT32_MIN, kLaunchWide = INT32_MIN + 1;
  std::array<int32_t, 8> launch = {kLaunchNull, kLaunchNull, kLaunchNull, kLaunchNull,
                                   kLaunchNull, kLaunchNull, kLaunchNull, kLaunchNull};
};
struct CopyFact {  // _memcpy and _memset rows (memsets leave src/dst kinds 0)
  int64_t device_id = kNone, stream_id = kNone, pid = kNone;
  int64_t start_ns = 0, dur_ns = 0, bytes = kNone;
  int64_t correlation_id = kNone, external_id = kNone;
  int32_t kind = 0, src_kind = 0, dst_kind = 0;  // labels; memset: kind = mem_kind
};
struct ApiFact {
  int64_t pid = kNone, tid = kNone, start_ns = 0, dur_ns = 0, name_id = 0;
  int64_t correlation_id = kNone, external_id = kNone;
  int32_t kind = 0;  // label
};
// A text id (TraceModel::strings) kept in 32 bits and read as an int64_t, kNone for none: a model
// holds fewer than 2^31 texts (StringTable's ids are 32-bit).
class TextId {
 public:
  constexpr TextId() = default;
  constexpr TextId(int64_t id) : id_(id == kNone ? -1 : static_cast<int32_t>(id)) {}  // NOLINT(google-explicit-constructor)
  constexpr operator int64_t() const { return id_ < 0 ? kNone : int64_t{id_}; }     // NOLINT(google-explicit-constructor)

 private:
  int32_t id_ = -1;
};

// The columns a framework's op ranges carry and plain NVTX ranges lack, kept apart
// (RangeFact::args) so that a range without any takes 56 bytes instead of 120. (An emit_nvtx
// export has input dims on most ranges: the 10^6-row nsys export saved 7 MB, 145k of 533k ranges.)
struct RangeArgs {
  int64_t device_id = kNone, external_id = kNone;
  int64_t sequence_number = kNone;  // autograd sequence number: a backward op's matches its forward op's
  int64_t fwd_thread_id = kNone;
  // String ids: the 'Call stack' and 'Module Hierarchy' arguments are read by engine/derive/source.hpp.
  // 32-bit (48 bytes a range instead of 64: the 10^6-row nsys export's 421k ranges with input dims
  // hold them from import to the store write).
  TextId input_dims_id, input_types_id, call_stack_id, module_id;

  bool any() const {
    return device_id != kNone || external_id != kNone || sequence_number != kNone || fwd_thread_id != kNone ||
           input_dims_id != kNone || input_types_id != kNone || call_stack_id != kNone || module_id != kNone;
  }
};
inline const RangeArgs kNoRangeArgs{};
struct RangeFact {
  int64_t pid = kNone, tid = kNone, start_ns = 0, dur_ns = 0, name_id = 0;
  int32_t kind = 0, domain = 0;  // labels
  int32_t collective = -1;       // index into TraceModel::collectives
  int32_t args = -1;             // index into TraceModel::range_args; -1: all of them NULL
};
struct FlowFact {
  int32_t kind = 0;  // label
  int64_t flow_id = 0;
  int64_t src_pid = kNone, src_tid = kNone, src_ts_ns = kNone, dst_pid = kNone, dst_tid = kNone, dst_ts_ns = kNone;
};
struct CounterFact {
  int64_t device_id = kNone, ts_ns = 0, name_id = 0;
  double value = 0;
};
// A sampled series as kept in the model: times already on the trace's clock (offset_ns added).
struct SampleSeriesFact {
  int64_t device_id = kNone, pid = kNone;
  std::string metric, unit, source, format;
  int64_t offset_ns = 0;
  std::vector<int64_t> ts_ns;
  std::vector<double> values;
};
struct OperatorTimingFact {
  OperatorTimingRow row;
  std::string source;
};
struct SyncFact {
  int64_t pid = kNone, tid = kNone, device_id = kNone, stream_id = kNone, start_ns = 0, dur_ns = 0;
  int64_t correlation_id = kNone;
  int32_t kind = 0;  // label
};
struct OsCallFact {  // _os_call
  int64_t pid = kNone, tid = kNone, start_ns = 0, dur_ns = 0, name_id = 0;
  int64_t return_value = kNone, nesting_level = kNone;
  int64_t caller_id = kNone;  // string id (schema/0010)
};
struct CpuSampleFact {  // _cpu_sample; its frames are cpu_frames[first_frame, first_frame + frame_count)
  int64_t pid = kNone, tid = kNone, ts_ns = 0, cpu = kNone;
  int64_t first_frame = 0;
  int32_t frame_count = 0;
};
struct CpuFrameFact {  // _cpu_frame (depth = position in its sample's frames)
  int64_t name_id = 0, module_id = kNone;  // string ids
};
struct NamedRow {  // process (tid unused) and thread rows
  int64_t pid = 0, tid = 0;
  std::optional<std::string> name;
};
struct StreamFact {
  int64_t device_id = 0, stream_id = 0;
  std::optional<std::string> name;
};
struct DeviceFact {
  DeviceRow row;
  int64_t has_activity = kNone;  // derived
};
struct KernelGraphFact {  // kernel_graph_node rows: recorded CUDA graph ids of one kernel
  int64_t kernel = 0;      // position in kernels
  int64_t graph_id = kNone, graph_node_id = kNone;
};
struct GraphNodeEventFact {  // _graph_node_event: the creation of one CUDA graph node (schema/0011)
  int64_t pid = kNone, tid = kNone, start_ns = 0, dur_ns = 0, name_id = 0;
  int64_t event_class = kNone, graph_node_id = 0, original_graph_node_id = kNone;
};
struct IssueFact {
  int64_t count = 0;
  std::string example, location;
};

// Framework annotations that are not ops but give paths, passes and iterations their meaning
// (DerivedFacts::range_marker); marker_text is what the store writes ('' = NULL).
enum class MarkerKind : uint8_t { none, profiler_step, optimizer, dataloader };
inline std::string_view marker_text(MarkerKind m) {
  static constexpr std::array<std::string_view, 4> kTexts = {"", "profiler_step", "optimizer", "dataloader"};
  return kTexts[static_cast<size_t>(m)];
}
// The pass an op ran in (op.pass); pass_text is what the store writes.
enum class OpPass : uint8_t { none, fwd, bwd, optimizer, dataloader, other };
inline std::string_view pass_text(OpPass p) {
  static constexpr std::array<std::string_view, 6> kTexts = {"", "fwd", "bwd", "optimizer", "dataloader", "other"};
  return kTexts[static_cast<size_t>(p)];
}

// What derivation adds (engine/derive/derive.hpp). Indexes are positions in the model's tables
// (-1: none); the store turns them into ids when it writes. An op per framework range: 533k in the
// 10^6-row nsys export, held through derivation's peak and the write's. 56 bytes (120 when it
// copied its range's thread and span — op_span below reads them — and held 64-bit positions and
// its type's text view): a model holds fewer than 2^31 rows, texts and kernels of a kind.
struct OpFact {
  int64_t gpu_time_ns = 0, tc_time_ns = 0;
  int32_t name_id = 0;       // TraceModel::strings (derivation may intern new names)
  int32_t op_type = -1;      // position in DerivedFacts::op_types (TraceData::op_types while derived); -1: NULL
  int32_t kernel_count = 0;
  int32_t range = -1;   // position in ranges; -1 for unassociated ops
  int32_t parent = -1;  // position in ops
  // Tensor Core eligibility is counted once per eligible sub-tree: tc_eligible is set only on the
  // outermost eligible op (aten::conv2d, not also its convolution/_convolution/cudnn_convolution
  // children), and tc_root is that op for every op inside the sub-tree (-1 outside any; position
  // in ops, what GpuLinks::tc_op gives a kernel).
  int32_t tc_root = -1;
  int32_t depth = 0;
  int32_t path_node = -1;  // its path: a node of DerivedFacts::op_paths (TraceData::op_paths while derived)
  int32_t iteration = -1;
  OpPass pass = OpPass::none;
  bool tc_eligible = false;
};
// An op's thread and host span (the _op table's pid, tid, start_ns, dur_ns): its range's, the
// duration never negative; for an unassociated op (no range) the span of the runtime calls and GPU
// work it gathers, on no thread.
struct OpSpan {
  int64_t pid = kNone, tid = kNone, start = kNone, dur = kNone;
};
static_assert(sizeof(RangeArgs) <= 48);
static_assert(sizeof(OpFact) <= 56, "an op is held per framework range through the peaks: keep it small");
// The text of an op's type (op_type_text(op, DerivedFacts::op_types)); a null view when it has none.
inline std::string_view op_type_text(const OpFact& op, const std::vector<std::string>& types) {
  return op.op_type < 0 ? std::string_view() : std::string_view(types[static_cast<size_t>(op.op_type)]);
}
// The kernel categories derivation gives (engine/derive/categories.hpp), by GpuLinks::category; 0 is
// none (NULL).
inline constexpr std::array<std::string_view, 9> kKernelCategories = {
    std::string_view(), "communication", "memory", "attention", "conv", "gemm", "reduction", "elementwise", "other"};
// The position of `category` in kKernelCategories; 0 (none) for a text not among them.
inline uint8_t kernel_category_index(std::string_view category) {
  for (size_t i = 1; i < kKernelCategories.size(); ++i)
    if (kKernelCategories[i] == category) return static_cast<uint8_t>(i);
  return 0;
}
// Derived columns of one kernel, memcpy or memset: 20 bytes (48 with 64-bit positions and the
// category's text view; one per kernel from derivation's end to the kernels' write).
struct GpuLinks {
  int32_t api = -1, op = -1;  // positions in apis, ops
  int32_t iteration = -1;
  int32_t tc_op = -1;         // kernels: outermost Tensor-Core-eligible op around its op
  int8_t tensor_core = 0;     // kernels
  uint8_t category = 0;       // kernels: position in kKernelCategories
  std::string_view category_text() const { return kKernelCategories[category]; }
};
static_assert(sizeof(GpuLinks) <= 20);
struct IterationFact {
  std::optional<int64_t> number;
  std::string name;
  int64_t start = 0, end = 0, gpu_start = kNone, gpu_end = kNone;
  bool selected = true;  // inside --iter-start/--iter-stop (iteration.selected)
};
// Breakdown categories in priority order (engine/derive/breakdown.hpp), also steady_state's columns.
inline constexpr std::array<std::string_view, 9> kBreakdownCategories = {
    "kernel_tc", "kernel_other", "communication", "memcpy", "memset", "runtime", "dataloader", "cpu", "idle"};
// BreakdownFact::iteration of the rows covering a device's steady state: they are written to the
// steady_state table, not to breakdown.
inline constexpr int64_t kSteadyStateRows = -2;

struct BreakdownFact {
  int64_t device_id = -1, iteration = -1;
  std::string_view category;  // static text
  int64_t time_ns = 0;
};
struct SteadyFact {
  int64_t device_id = 0, window_start = 0, window_end = 0, steady_start = 0;
  std::string cause, evidence;
};
// Where an op (or an API call outside any op) comes from in the user's Python code
// (schema/0008_source.sql; engine/derive/source.hpp). Text columns are string ids, kNone = NULL.
struct SourceFact {
  int64_t op = -1, api = -1, range = -1;  // position in ops / apis / ranges: exactly one is set
  std::string_view origin;      // 'python_function', 'call_stack' or 'forward_op' (static text)
  int64_t file_id = kNone, line = kNone, function_id = kNone;  // innermost user frame
  int64_t module_path_id = kNone, stack_id = kNone;
  int64_t forward_op = -1;      // origin 'forward_op': the forward op (position in ops) whose place this is
};
// CUDA graph replays and torch.compile regions of one trace (schema/0009_graphs_compiled.sql;
// engine/derive/graphs.hpp). Positions as above; kNone = NULL.
struct GraphKernelFact {  // graph_kernel
  int64_t kernel = 0;       // position in kernels
  int64_t graph_id = 0, node = 0, replay = 0;
  int64_t launch_api = -1;  // position in apis
  int64_t captured_op = -1; // position in DerivedFacts::ops
};
struct CudaGraphFact {  // cuda_graph
  int64_t graph_id = 0;
  bool recorded = false;  // id_source 'recorded', else 'kernel_sequence'
  int64_t device_id = kNone, replays = 0, kernels_per_replay = 0, gpu_time_ns = 0, gpu_time_per_replay_ns = 0;
  int64_t span_per_replay_ns = 0, capture_start_ns = kNone, captured_ops = kNone;
  std::optional<std::string> top_captured_op;
};
struct CompiledRegionFact {  // compiled_region
  int64_t range = 0;  // position in ranges
  std::string name, frame;  // frame '' = NULL
  bool backward = false;
  int64_t iteration = kNone, start_ns = 0, dur_ns = 0;
  int64_t triton_kernels = 0, triton_time_ns = 0, other_kernels = 0, other_time_ns = 0, fallback_ops = 0;
  bool graph_break_before = false;
  std::string_view break_cause;  // 'eager_ops' or 'python_only' when graph_break_before (static text)
};
struct KernelCompiledFact {  // kernel_compiled
  int64_t kernel = 0;         // position in kernels
  int64_t region_range = -1;  // position in ranges
  std::string_view triton_kind;  // static text; empty = NULL
  bool fallback = false;
};

struct DerivedFacts {
  bool done = false;
  // Per range, 9 bytes: 25 with a 64-bit parent and the marker's text view, 8.5 MB more on a
  // 10^6-row nsys export (533k ranges).
  std::vector<int32_t> range_parent;  // per range: position of the enclosing range or -1
  std::vector<int32_t> range_depth;
  std::vector<MarkerKind> range_marker;
  std::vector<int32_t> api_op;  // positions in ops
  std::vector<int32_t> api_iteration;
  std::vector<GpuLinks> kernels, memcpys, memsets;
  std::vector<int32_t> sync_iteration;
  std::vector<OpFact> ops;
  std::unordered_map<int64_t, OpSpan> unassociated_spans;  // by position in ops: ops without a range
  // When not empty, every op's span (TraceModel::op_span reads it instead of the ranges): the store
  // write keeps these 32 bytes an op and gives the 56-byte ranges back before it writes the ops.
  std::vector<OpSpan> op_spans;
  std::vector<std::string> op_types;                  // OpFact::op_type's texts
  PathTree op_paths;                                  // the ops' paths (OpFact::path_node)
  std::vector<IterationFact> iterations;
  std::string iteration_source = "none";
  std::string workload;  // '' = NULL
  std::vector<BreakdownFact> breakdown;
  std::vector<SteadyFact> steady;
  std::vector<int64_t> undescribed_devices;  // ran work without a device row: get one
  std::string key_node_problem;             // import issue 'key_node_not_found' when not empty
  std::optional<int64_t> iter_start, iter_stop;
  std::vector<SourceFact> sources;  // source.hpp
  std::vector<GraphKernelFact> graph_kernels;  // graphs.hpp
  std::vector<CudaGraphFact> cuda_graphs;
  std::vector<CompiledRegionFact> compiled_regions;
  std::vector<KernelCompiledFact> kernel_compiled;
};

// The jobs across the traces of one load (schema/0005_jobs.sql; engine/derive/jobs.hpp): which
// traces are the ranks of one job, the collective instances matched across them and each rank's
// part. Traces are named by their index in the list of models the jobs were derived from (the
// store writes that list's trace ids), ops and kernels by position in that trace's model.
struct JobRankFact {  // job_rank
  int64_t rank = 0;
  size_t trace = 0;
  int64_t pid = kNone, device_id = kNone, clock_offset_ns = 0, offset_residual_ns = kNone;
};
struct CollectiveInstanceFact {  // collective_instance (instance_id = position in its job)
  std::string process_group;  // '' = NULL
  int64_t seq = 0;
  std::string type;
  int64_t bytes = kNone, ranks = 0, first_rank = 0, last_rank = 0, last_arrival_ns = 0, end_ns = 0;
};
struct ParticipationFact {  // collective_participation
  int64_t instance = 0, rank = 0;
  size_t trace = 0;
  int64_t op = -1, kernel = -1;  // positions in that trace's ops / kernels
  int64_t start_ns = 0, end_ns = 0, wait_ns = 0, transfer_ns = 0, iteration = kNone;
};
struct JobFact {  // job (job_id = position + 1)
  std::string source;
  int64_t world_size = kNone, ranks_present = 0;
  bool aligned = false;
  int64_t residual_ns = kNone;
  std::optional<std::string> alignment_note;
  std::vector<JobRankFact> ranks;
  std::vector<CollectiveInstanceFact> instances;
  std::vector<ParticipationFact> participations;
};
struct JobFacts {
  std::vector<JobFact> jobs;
};

struct TraceModel {
  TraceInfo info;
  int64_t start_ns = kNone, end_ns = kNone;  // capture window
  int64_t event_count = 0;
  int64_t trace_id = 0;  // set when written to (or read from) a store

  StringTable strings;  // texts of *_id columns
  StringTable labels;   // short texts of kind/domain columns, stored inline
  int64_t imported_strings = 0;  // strings.size() after import; later ones were added by derivation

  std::vector<DeviceFact> devices;  // in store row order (a replaced device moves to the end)
  std::vector<NamedRow> processes, threads;
  std::vector<StreamFact> streams;
  std::vector<KernelFact> kernels;
  std::unordered_map<size_t, LaunchConfig> wide_launches;  // by kernel position (KernelFact::launch)
  std::vector<CopyFact> memcpys, memsets;
  std::vector<ApiFact> apis;
  std::vector<RangeFact> ranges;
  std::vector<RangeArgs> range_args;  // RangeFact::args
  std::vector<CollectiveArgs> collectives;
  std::vector<FlowFact> flows;
  std::vector<MemorySampleRow> memory_samples;
  std::vector<CounterFact> counters;
  std::vector<SyncFact> syncs;
  std::vector<OsCallFact> os_calls;
  std::vector<CpuSampleFact> cpu_samples;
  std::vector<CpuFrameFact> cpu_frames;
  std::vector<SampleSeriesFact> sample_series;
  std::vector<OperatorTimingFact> operator_timings;
  std::map<std::string, IssueFact, std::less<>> issues;  // by kind
  std::vector<KernelGraphFact> kernel_graph_nodes;       // sorted by kernel position
  std::vector<GraphNodeEventFact> graph_node_events;     // in the order read

  DerivedFacts derived;

  const std::string* label(int32_t id) const { return id > 0 ? &labels.text(id) : nullptr; }
  const RangeArgs& args_of(const RangeFact& r) const {
    return r.args >= 0 ? range_args[static_cast<size_t>(r.args)] : kNoRangeArgs;
  }
  // The launch configuration of kernels[k].
  LaunchConfig launch_of(size_t k) const {
    const auto& packed = kernels[k].launch;
    if (packed[0] == KernelFact::kLaunchWide) return wide_launches.at(k);
    LaunchConfig c;
    for (size_t i = 0; i < c.size(); ++i) c[i] = packed[i] == KernelFact::kLaunchNull ? kNone : packed[i];
    return c;
  }
  // Sets the launch configuration of kernels[k].
  void set_launch(size_t k, const LaunchConfig& c) {
    auto& packed = kernels[k].launch;
    bool narrow = std::all_of(c.begin(), c.end(), [](int64_t v) {
      return v == kNone || (v > KernelFact::kLaunchWide && v <= INT32_MAX);
    });
    if (!narrow) {
      packed.fill(KernelFact::kLaunchNull);
      packed[0] = KernelFact::kLaunchWide;
      wide_launches[k] = c;
      return;
    }
    if (!wide_launches.empty()) wide_launches.erase(k);  // a replaced wide one (loads start empty)
    for (size_t i = 0; i < c.size(); ++i) packed[i] = c[i] == kNone ? KernelFact::kLaunchNull : static_cast<int32_t>(c[i]);
  }
  // The thread and span of derived.ops[op] (OpSpan).
  OpSpan op_span(int64_t op) const {
    if (!derived.op_spans.empty()) return derived.op_spans[static_cast<size_t>(op)];
    const OpFact& o = derived.ops[static_cast<size_t>(op)];
    if (o.range >= 0) {
      const RangeFact& r = ranges[static_cast<size_t>(o.range)];
      return {r.pid, r.tid, r.start_ns, std::max<int64_t>(0, r.dur_ns)};
    }
    auto it = derived.unassociated_spans.find(op);
    return it != derived.unassociated_spans.end() ? it->second : OpSpan{};
  }
  // Keeps `a` as `r`'s arguments when any is set (else r.args stays -1).
  void set_args(RangeFact& r, const RangeArgs& a) {
    if (!a.any()) return;
    r.args = static_cast<int32_t>(range_args.size());
    range_args.push_back(a);
  }
};

}  // namespace proflint
