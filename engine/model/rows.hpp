// engine/model/rows.hpp — the rows importers hand to their sink (engine/model/sink.hpp).
//
// Plain structs, one per fact table of schema/0001_init.sql; importers fill them and never see
// how they are kept. Texts are views into the importer's buffers: the sink interns or copies them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace proflint {

using opt_i64 = std::optional<int64_t>;

struct TraceInfo {
  std::string path;
  std::string format;  // 'kineto' | 'nsys'
  std::optional<std::string> format_version, tool_version, framework, vendor, comm_backend, host_name;
  std::string clock = "epoch";
  opt_i64 rank, world_size, file_bytes;
  // Where the trace's clock sits on the Unix epoch, when the file says so: the epoch ns of the
  // clock's zero (Kineto `baseTimeNanoseconds` beside monotonic timestamps; nsys
  // TARGET_INFO_SESSION_START_TIME), and the capture machine's local time minus UTC (nsys
  // localTime - utcTime). Used to place sampling logs (docs/samples.md); not stored.
  opt_i64 epoch_base_ns, utc_offset_ns;
};

struct DeviceRow {
  int64_t device_id = 0;
  std::optional<std::string> name, vendor;
  opt_i64 compute_major, compute_minor, sm_count, memory_bytes;
};

struct KernelRow {
  opt_i64 device_id, stream_id, pid;
  int64_t start_ns = 0, dur_ns = 0;
  std::string_view name;
  opt_i64 correlation_id, external_id;
  opt_i64 grid_x, grid_y, grid_z, block_x, block_y, block_z, registers_per_thread, shared_memory_bytes;
};

struct MemcpyRow {
  opt_i64 device_id, stream_id, pid;
  int64_t start_ns = 0, dur_ns = 0;
  opt_i64 bytes;
  std::string kind = "unknown";           // htod dtoh dtod htoh ptop unknown ...
  std::optional<std::string> src_kind, dst_kind;  // pageable pinned device managed array unknown
  opt_i64 correlation_id, external_id;
};

struct MemsetRow {
  opt_i64 device_id, stream_id, pid;
  int64_t start_ns = 0, dur_ns = 0;
  opt_i64 bytes;
  std::optional<std::string> mem_kind;
  opt_i64 correlation_id, external_id;
};

struct ApiCallRow {
  opt_i64 pid, tid;
  int64_t start_ns = 0, dur_ns = 0;
  std::string_view name;     // already stripped of _vNNNNN
  std::string kind = "runtime";  // runtime | driver | other
  opt_i64 correlation_id, external_id;
};

// Arguments of a collective call recorded on its host range (schema/0005_jobs.sql, collective_arg).
struct CollectiveArgs {
  std::optional<std::string> collective_name, process_group, pg_desc, dtype, group_ranks;
  opt_i64 seq, in_nelems, out_nelems, group_size;
};

struct RangeRow {
  opt_i64 pid, tid;
  int64_t start_ns = 0, dur_ns = 0;
  std::string_view name;
  std::string kind = "cpu_op";  // cpu_op user_annotation gpu_user_annotation python_function nvtx other
  std::optional<std::string> domain;
  opt_i64 device_id, external_id, sequence_number, fwd_thread_id;
  std::optional<std::string> input_dims, input_types, call_stack, module;  // JSON / text as recorded
  std::optional<CollectiveArgs> collective;  // written to collective_arg, linked by the range's id
};

struct FlowRow {
  std::string kind;
  int64_t flow_id = 0;
  opt_i64 src_pid, src_tid, src_ts_ns, dst_pid, dst_tid, dst_ts_ns;
};

struct MemorySampleRow {
  int64_t device_id = -1;  // -1 = host
  int64_t ts_ns = 0;
  opt_i64 allocated_bytes, reserved_bytes, delta_bytes;
};

struct CounterRow {
  opt_i64 device_id;
  int64_t ts_ns = 0;
  std::string_view name;
  double value = 0;
};

struct SyncEventRow {
  opt_i64 pid, tid, device_id, stream_id;
  int64_t start_ns = 0, dur_ns = 0;
  std::string kind = "unknown";  // event_sync stream_sync context_sync stream_wait_event unknown
  opt_i64 correlation_id;
};

// An OS runtime library call on a host thread (schema/0007_host_activity.sql, os_call).
struct OsCallRow {
  opt_i64 pid, tid;
  int64_t start_ns = 0, dur_ns = 0;
  std::string_view name;  // 'read', 'pthread_cond_timedwait', ...
  opt_i64 return_value, nesting_level;
  std::string_view caller;  // nearest calling function outside the C runtime libraries; empty: no backtrace
};

// One frame of a sampled call chain; the sink copies the texts.
struct CpuFrameRow {
  std::string_view name;    // function; an unresolved address as '0x...'
  std::string_view module;  // library or executable; empty: not recorded
};

// One CPU sample with its call chain, innermost frame first (cpu_sample, cpu_frame).
struct CpuSampleRow {
  opt_i64 pid, tid, cpu;
  int64_t ts_ns = 0;
  const CpuFrameRow* frames = nullptr;
  size_t frame_count = 0;
};

// CUDA graph ids a profiler recorded for one kernel (schema/0009_graphs_compiled.sql,
// kernel_graph_node): nsys graphId/graphNodeId, Kineto 'graph id'/'graph node id'. 0 means none.
struct KernelGraphIds {
  opt_i64 graph_id, graph_node_id;
};

// The creation of one CUDA graph node (schema/0011_graph_node_events.sql; nsys CUDA_GRAPH_EVENTS):
// the host call that made it, its thread and time, the node's id and, for a node cloned when its
// graph was instantiated, the id of the node it was cloned from.
struct GraphNodeEventRow {
  opt_i64 pid, tid;
  int64_t start_ns = 0, dur_ns = 0;
  std::string name;
  opt_i64 event_class;
  int64_t graph_node_id = 0;
  opt_i64 original_graph_node_id;
};

// One sampled series (schema/0006_samples.sql, sample_series): one metric of one device (or
// process) from a sampling log. Samples are added by the index add_sample_series returned.
struct SampleSeriesRow {
  opt_i64 device_id, pid;
  std::string metric, unit, format;
};

// Operator or module time read from an operator log (operator_timing).
struct OperatorTimingRow {
  std::string operator_name;
  std::optional<std::string> module;  // nullopt: the operator's total
  int64_t time_ns = 0, count = 0;
  opt_i64 first_line;
};

}  // namespace proflint
