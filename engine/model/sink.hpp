// engine/model/sink.hpp — how importers put facts into the model.
//
// Importers fill plain row structs (rows.hpp) and hand them to a FactSink; they never see how the
// facts are kept or stored. The sink interns text, keeps the rows in a TraceModel in the order
// given, drops rows whose times or sizes no profile can mean, and counts per-event problems as
// import issues. Derived facts are not reachable from here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/model/model.hpp"
#include "engine/model/rows.hpp"

namespace proflint {

class FactSink {
 public:
  // Starts a new trace in `model` (which must be empty) described by `info`.
  FactSink(TraceModel& model, const TraceInfo& info);
  FactSink(const FactSink&) = delete;
  FactSink& operator=(const FactSink&) = delete;

  // The trace's id once it has one in a store (0 while only in memory).
  int64_t trace_id() const { return model_.trace_id; }

  void add_device(const DeviceRow& row);
  void add_process(int64_t pid, std::string_view name);  // a null view: no name (NULL)
  void add_thread(int64_t pid, int64_t tid, std::string_view name);
  void add_stream(int64_t device_id, int64_t stream_id, std::optional<std::string_view> name);
  // The add_* of timed rows drop a row whose times leave what a profile can mean (limits below)
  // with an import issue, and return false; importers may ignore the result.
  bool add_kernel(const KernelRow& row);
  // A kernel with the CUDA graph ids its profiler recorded (ids of 0 or absent are no id).
  bool add_graph_kernel(const KernelRow& row, const KernelGraphIds& ids);
  // The creation of a CUDA graph node. It does not move the capture window (nodes are made by
  // host calls that are in the trace anyway). A node id of 0 or below names no node: the row is
  // dropped with the import issue graph_node_event_unusable; an original id of 0 or below is kept
  // as none (the node is an original).
  bool add_graph_node_event(const GraphNodeEventRow& row);
  bool add_memcpy(const MemcpyRow& row);
  bool add_memset(const MemsetRow& row);
  bool add_api_call(const ApiCallRow& row);
  bool add_range(const RangeRow& row);
  void add_flow(const FlowRow& row);
  void add_memory_sample(const MemorySampleRow& row);
  void add_counter(const CounterRow& row);
  bool add_sync_event(const SyncEventRow& row);
  // Host activity (schema/0007_host_activity.sql). Neither moves the capture window: OS runtime
  // tracing and CPU sampling cover the whole process, not the window the GPU trace describes.
  bool add_os_call(const OsCallRow& row);
  bool add_cpu_sample(const CpuSampleRow& row);
  // A sampled series of this file (source = the trace's path); returns its index for add_sample.
  size_t add_sample_series(const SampleSeriesRow& row);
  // One sample of series `series`; a time beyond +-2^61 ns or a value that is not finite is
  // dropped with an import issue (false).
  bool add_sample(size_t series, int64_t ts_ns, double value);
  void add_operator_timing(const OperatorTimingRow& row);

  // Counts one unreadable or suspicious event; the first example and location are kept.
  void add_issue(std::string_view kind, std::string_view example, std::string_view location);
  // Events read from the file (kept or not).
  void count_event(int64_t n = 1) { model_.event_count += n; }
  // Metadata learned while reading (Kineto keeps distributedInfo after traceEvents, etc.).
  void set_rank(opt_i64 rank, opt_i64 world_size, std::optional<std::string> backend);
  void set_metadata(std::string_view column, std::string_view value);  // format_version, tool_version, framework, vendor, host_name, clock
  // TraceInfo::epoch_base_ns (Kineto baseTimeNanoseconds, read wherever it sits in the file).
  void set_epoch_base(int64_t epoch_ns) { model_.info.epoch_base_ns = epoch_ns; }

  // Rows added so far (kernels + memcpys + memsets + api calls + ranges + samples ...).
  int64_t rows_written() const { return rows_; }
  int64_t issue_count() const;

  // Closes the trace: records the capture window (first start .. last end of the rows kept).
  void commit();

  int64_t intern(std::string_view text) { return model_.strings.intern(text); }
  // A hint: about `n` more texts follow, most of them new (an nsys export's NVTX events carry a
  // text each). Growing the lookup table step by step re-hashed every text several times.
  void expect_texts(size_t n) { model_.strings.reserve_more(n); }

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
  // widens_window: the row counts towards the capture window (host activity rows do not).
  bool admit_interval(int64_t start, int64_t dur, std::string_view table, bool widens_window = true);
  opt_i64 bounded_bytes(opt_i64 bytes, std::string_view table);
  int32_t label(std::string_view text) { return static_cast<int32_t>(model_.labels.intern(text)); }
  int32_t label(const std::optional<std::string>& text) { return text ? label(std::string_view(*text)) : 0; }
  int64_t opt_intern(const std::optional<std::string>& text) { return text ? intern(*text) : kNone; }

  TraceModel& model_;
  int64_t rows_ = 0;
  int64_t min_ts_ = INT64_MAX, max_ts_ = INT64_MIN;
  int64_t summed_dur_ = 0;  // durations of the rows kept so far, added up (<= kMaxSummedDurationNs)
};

}  // namespace proflint
