// engine/store/writer.hpp — how importers put facts into the store.
//
// Importers fill plain row structs and hand them to StoreWriter; they never write SQL. The
// writer interns text, batches everything in one transaction with prepared statements, and
// counts per-event problems into import_issue. Derived columns are not reachable from here.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "engine/store/store.hpp"

namespace proflint {

using opt_i64 = std::optional<int64_t>;

struct TraceInfo {
  std::string path;
  std::string format;  // 'kineto' | 'nsys'
  std::optional<std::string> format_version, tool_version, framework, vendor, comm_backend, host_name;
  std::string clock = "epoch";
  opt_i64 rank, world_size, file_bytes;
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

class StoreWriter {
 public:
  // Starts a transaction on `store` and a trace row; trace_id() is valid from here on.
  StoreWriter(Store& store, const TraceInfo& info);
  ~StoreWriter();  // rolls back unless commit() ran
  StoreWriter(const StoreWriter&) = delete;
  StoreWriter& operator=(const StoreWriter&) = delete;

  int64_t trace_id() const { return trace_id_; }

  void add_device(const DeviceRow& row);
  void add_process(int64_t pid, std::string_view name);
  void add_thread(int64_t pid, int64_t tid, std::string_view name);
  void add_stream(int64_t device_id, int64_t stream_id, std::optional<std::string_view> name);
  // The add_* of timed rows drop a row whose times leave what a profile can mean (limits below)
  // with an import issue, and return false; importers may ignore the result.
  bool add_kernel(const KernelRow& row);
  bool add_memcpy(const MemcpyRow& row);
  bool add_memset(const MemsetRow& row);
  bool add_api_call(const ApiCallRow& row);
  bool add_range(const RangeRow& row);
  void add_flow(const FlowRow& row);
  void add_memory_sample(const MemorySampleRow& row);
  void add_counter(const CounterRow& row);
  bool add_sync_event(const SyncEventRow& row);

  // Counts one unreadable or suspicious event; the first example and location are kept.
  void add_issue(std::string_view kind, std::string_view example, std::string_view location);
  // Events read from the file (kept or not).
  void count_event(int64_t n = 1) { event_count_ += n; }
  // Metadata learned while reading (Kineto keeps distributedInfo after traceEvents, etc.).
  void set_rank(opt_i64 rank, opt_i64 world_size, std::optional<std::string> backend);
  void set_metadata(std::string_view column, std::string_view value);  // format_version, tool_version, framework, vendor, host_name, clock

  // Rows added so far (kernels + memcpys + memsets + api calls + ranges + samples ...).
  int64_t rows_written() const { return rows_; }
  int64_t issue_count() const;

  // Writes the capture window, counts and issues, and commits.
  void commit();

  int64_t intern(std::string_view text);

  // Kernel, API, range and counter names longer than this are cut to it at import (at a UTF-8
  // character boundary) and counted as an import issue '<table>_name_truncated': real names stay
  // far below (the longest C++ template names seen are ~10 KB), and every later stage then works
  // on bounded text.
  static constexpr size_t kMaxNameBytes = size_t{64} << 10;

  // Limits of time a profile can mean. Every later stage adds durations and differences of
  // timestamps in int64 (SQLite's SUM raises "integer overflow" past 2^63), so values beyond are
  // hostile or corrupt, not measurements: a timed row that starts or ends beyond ±2^61 ns (73 years
  // from the clock's zero; epoch nanoseconds today are ~2^60.6) is dropped with the import issue
  // `<table>_time_out_of_range`, and a row that would bring the durations of one trace's rows,
  // added up, past 2^56 ns (2.3 years of summed time: a day-long capture of 10^7 events a second
  // long each stays 40x below) with `duration_total_out_of_range`. Any sum of durations within
  // a trace then stays below 2^56, and across 128 traces below 2^63.
  static constexpr int64_t kMaxAbsTimeNs = int64_t{1} << 61;
  static constexpr int64_t kMaxSummedDurationNs = int64_t{1} << 56;
  // Byte counts of one copy or memset beyond 2^50 (1 PiB) are dropped (NULL) with the import
  // issue `<table>_bytes_out_of_range`, so that byte sums stay far from overflow as well.
  static constexpr int64_t kMaxTransferBytes = int64_t{1} << 50;

 private:
  std::string_view bounded_name(std::string_view name, std::string_view table);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int64_t trace_id_ = 0;
  int64_t event_count_ = 0;
  int64_t rows_ = 0;
  int64_t min_ts_ = INT64_MAX, max_ts_ = INT64_MIN;
  int64_t summed_dur_ = 0;  // durations of the rows kept so far, added up (<= kMaxSummedDurationNs)
  bool admit_interval(int64_t start, int64_t dur, std::string_view table);
  opt_i64 bounded_bytes(opt_i64 bytes, std::string_view table);
};

}  // namespace proflint
