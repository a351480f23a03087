// engine/common/import_issue_kinds.hpp — every kind of import issue, in one list.
//
// Importers and the store writer count per-event problems into the import_issue table under a kind
// code; the import-issues detector explains each kind; docs/detectors/import-issues.md lists them
// (generated from this list: scripts/import_issue_kinds.py, checked by ctest). Emit a kind through
// its constant (import_issue::bad_duration), never a string literal, so that a misspelt kind fails
// to compile. A new kind: add one X(...) line here, then `scripts/import_issue_kinds.py --write`.
//
//   X(code, effect, meaning)
//     effect:  skipped      the event was dropped
//              approximated the event was kept with a value approximated or left unknown
//     meaning: what the kind costs the analysis, in one line (shown in the finding's text)
#pragma once

#include <string_view>

// clang-format off
#define PROFLINT_IMPORT_ISSUES(X) \
  X(invalid_event_json, skipped, \
    "malformed events were skipped: times and counts are computed without them") \
  X(event_not_an_object, skipped, \
    "non-event entries in traceEvents were skipped") \
  X(event_without_ph, skipped, \
    "events without a phase were skipped") \
  X(unknown_phase, skipped, \
    "events of an unknown phase were skipped") \
  X(unsupported_phase, skipped, \
    "events of a Chrome-trace phase Kineto does not write (B/E, async) were skipped") \
  X(unexpected_phase, skipped, \
    "events with a phase their category never has were skipped") \
  X(event_without_ts, skipped, \
    "events without a timestamp were skipped") \
  X(bad_timestamp, skipped, \
    "events with an unreadable timestamp were skipped") \
  X(event_without_dur, skipped, \
    "complete events without a duration were skipped") \
  X(bad_duration, skipped, \
    "events with an unreadable or overflowing duration were skipped") \
  X(negative_duration, skipped, \
    "events with a negative duration were skipped (clock or export problem)") \
  X(missing_timestamp, skipped, \
    "rows without start or end were skipped") \
  X(unknown_category, skipped, \
    "events of an unknown category were skipped: if they are GPU work, utilization is understated") \
  X(event_without_category, skipped, \
    "events without a category were skipped") \
  X(flow_without_id, skipped, \
    "flow arrows without an id were skipped: some CPU->GPU or forward->backward links are missing") \
  X(oversized_event, skipped, \
    "events larger than the reader's limit were skipped") \
  X(oversized_top_level_value, skipped, \
    "a top-level value larger than the reader's limit was skipped (metadata may be missing)") \
  X(invalid_top_level_value, skipped, \
    "an unreadable top-level value was skipped (metadata may be missing)") \
  X(data_after_json, skipped, \
    "data after the trace's JSON value was ignored (a second JSON value, or a file appended to the trace): events in it are missing") \
  X(table_unreadable, skipped, \
    "a table of the export could not be read: everything it holds is missing") \
  X(kernel_without_name, skipped, \
    "kernels without a name were skipped: kernel time is understated") \
  X(api_call_without_name, skipped, \
    "API calls without a name were skipped: launches and syncs may be missing") \
  X(nvtx_event_without_type, skipped, \
    "NVTX rows without an event type were skipped") \
  X(nvtx_mark_skipped, skipped, \
    "NVTX marks (instants) were skipped; they carry no duration, so nothing is lost for timing") \
  X(nvtx_unsupported_event_type, skipped, \
    "NVTX rows of an unsupported type were skipped") \
  X(nvtx_range_without_end, skipped, \
    "NVTX ranges that never ended (capture stopped inside them) were skipped") \
  X(nvtx_range_without_text, skipped, \
    "NVTX ranges without a name were skipped") \
  X(memory_event_incomplete, skipped, \
    "incomplete memory events were skipped: the memory curve has gaps") \
  X(unknown_memory_operation, skipped, \
    "memory events of an unknown operation were skipped") \
  X(gpu_metric_incomplete, skipped, \
    "incomplete GPU metric samples were skipped") \
  X(gpu_metric_without_name, skipped, \
    "GPU metric samples without a metric name were skipped") \
  X(missing_string_id, approximated, \
    "names that point to no string were left unknown") \
  X(pid_mismatch, approximated, \
    "process ids disagree between columns; the decoded globalPid was used") \
  X(stream_without_device, approximated, \
    "streams with no known device were kept without one") \
  X(unknown_memcpy_kind, approximated, \
    "copies of an unknown direction were kept as 'unknown': they are not checked for pageable memory") \
  X(unknown_memory_kind, approximated, \
    "copies/memsets with an unknown memory kind were kept as 'unknown': they are not checked for pageable memory") \
  X(unknown_sync_type, approximated, \
    "synchronizations of an unknown type were kept as 'unknown'") \
  X(nvtx_unknown_domain, approximated, \
    "NVTX ranges of an undeclared domain were kept without a domain name") \
  X(key_node_not_found, approximated, \
    "--key-node matched no op or annotation: iterations come from the next source (ProfilerStep#N, NVTX ranges, a repeating period), or there are none") \
  X(kernel_name_truncated, approximated, \
    "kernel names over 64 KiB were cut to 64 KiB: names that differ only after that point count as one") \
  X(api_call_name_truncated, approximated, \
    "API call names over 64 KiB were cut to 64 KiB") \
  X(range_name_truncated, approximated, \
    "op/annotation/NVTX names over 64 KiB were cut to 64 KiB: names that differ only after that point count as one") \
  X(counter_name_truncated, approximated, \
    "counter names over 64 KiB were cut to 64 KiB") \
  X(sample_series_name_truncated, approximated, \
    "sampled metric names over 64 KiB were cut to 64 KiB") \
  X(timestamp_out_of_range, skipped, \
    "events more than 73 years (2^61 ns) from the clock's zero were skipped: no capture holds them (corrupt or edited file)") \
  X(duration_total_out_of_range, skipped, \
    "events whose durations would add up past 2.3 years (2^56 ns) in one trace were skipped (corrupt or edited file)") \
  X(kernel_time_out_of_range, skipped, \
    "kernels beyond +-2^61 ns were skipped (corrupt or edited file)") \
  X(memcpy_time_out_of_range, skipped, \
    "copies beyond +-2^61 ns were skipped (corrupt or edited file)") \
  X(memset_time_out_of_range, skipped, \
    "memsets beyond +-2^61 ns were skipped (corrupt or edited file)") \
  X(api_call_time_out_of_range, skipped, \
    "API calls beyond +-2^61 ns were skipped (corrupt or edited file)") \
  X(range_time_out_of_range, skipped, \
    "op/annotation/NVTX ranges beyond +-2^61 ns were skipped (corrupt or edited file)") \
  X(sync_event_time_out_of_range, skipped, \
    "synchronizations beyond +-2^61 ns were skipped (corrupt or edited file)") \
  X(memory_sample_time_out_of_range, skipped, \
    "memory samples beyond +-2^61 ns were skipped (corrupt or edited file)") \
  X(value_out_of_range, approximated, \
    "byte counts beyond 2^50, shared-memory sizes beyond 2^40 or compute capabilities beyond 999 were left unknown (corrupt or edited file)") \
  X(memcpy_bytes_out_of_range, approximated, \
    "copy sizes beyond 2^50 bytes were left unknown (corrupt or edited file)") \
  X(memset_bytes_out_of_range, approximated, \
    "memset sizes beyond 2^50 bytes were left unknown (corrupt or edited file)") \
  X(device_not_in_gpu_table, approximated, \
    "a device used by the trace is not described: its name, memory and compute capability are unknown") \
  X(device_inferred_from_kernel_names, approximated, \
    "the export does not describe the GPU: device properties were inferred or left unknown, so rules that need the compute capability or memory size may be skipped") \
  X(device_shared_by_processes, approximated, \
    "several processes ran work on one device id and the export does not say which physical GPU each meant: they were counted as one GPU (if each process had its own GPU, per-GPU figures mix them)") \
  X(os_call_time_out_of_range, skipped, \
    "OS runtime calls beyond +-2^61 ns were skipped (corrupt or edited file)") \
  X(cpu_sample_time_out_of_range, skipped, \
    "CPU samples beyond +-2^61 ns were skipped (corrupt or edited file)") \
  X(os_call_name_truncated, approximated, \
    "OS runtime call names over 64 KiB were cut to 64 KiB") \
  X(cpu_frame_name_truncated, approximated, \
    "function or module names of sampled call stacks over 64 KiB were cut to 64 KiB") \
  X(host_table_columns_missing, skipped, \
    "an OS runtime (OSRT_API) or CPU sampling (COMPOSITE_EVENTS, SAMPLING_CALLCHAINS) table lacks a column proflint needs to read it: the table was not read, and io-bound-input / cpu-hotspot-idle have less to go on") \
  X(os_call_without_thread, skipped, \
    "OS runtime calls or CPU samples without a thread (globalTid NULL) were skipped: they cannot be tied to the thread that launches GPU work") \
  X(cpu_sample_without_callchain, approximated, \
    "CPU samples whose call chain is missing from SAMPLING_CALLCHAINS were kept without frames: they count as samples but name no function") \
  X(sample_time_out_of_range, skipped, \
    "samples beyond +-2^61 ns were skipped (corrupt or edited file)") \
  X(sample_value_not_finite, skipped, \
    "samples whose value is NaN or infinite were skipped") \
  X(sample_cell_unreadable, skipped, \
    "cells of a sampling log that are not numbers were skipped: the averages are over the samples that could be read") \
  X(sample_row_unreadable, skipped, \
    "rows of a sampling log with a missing or unreadable time or too few cells were skipped") \
  X(sample_gpu_by_position, approximated, \
    "the log has no GPU index column: GPUs were numbered by their position in each burst of rows, as nvidia-smi prints them") \
  X(sample_burst_incomplete, approximated, \
    "a burst of rows had fewer GPUs than the others: its rows were numbered from GPU 0 again") \
  X(sample_times_assumed, approximated, \
    "the log records no time of day: samples were placed one interval apart from 0 and cannot be aligned with a trace without --sample-offset") \
  X(samples_time_zone_assumed, approximated, \
    "the log's clock times are local time: they were placed on the trace's clock with the whole-quarter-hour offset that makes them overlap the trace (give --sample-offset to set it)") \
  X(samples_not_aligned, approximated, \
    "the sampling log does not overlap the trace in time with any plausible offset: its samples are kept on their own clock and are not compared with the trace's events (give --sample-offset)") \
  X(operator_log_line_unreadable, skipped, \
    "lines of an operator log that name a timing key but do not end in ': <milliseconds>' were skipped") \
  X(graph_node_event_unusable, skipped, \
    "CUDA graph node creation rows (nsys CUDA_GRAPH_EVENTS) without a usable node id, time or name were skipped: kernels of those nodes are attributed to captured ops by their position in the replay instead") \
  X(graph_node_event_time_out_of_range, skipped, \
    "CUDA graph node creation rows beyond +-2^61 ns were skipped (corrupt or edited file)") \
  X(graph_node_event_name_truncated, approximated, \
    "names of the calls that created CUDA graph nodes over 64 KiB were cut to 64 KiB") \
  X(graph_table_columns_missing, skipped, \
    "the CUDA graph node table (nsys CUDA_GRAPH_EVENTS) lacks a column proflint needs: it was not read, and replayed kernels are attributed to captured ops by position")
// clang-format on

namespace proflint::import_issue {

enum class Effect { skipped, approximated };

struct Kind {
  std::string_view code;
  Effect effect;
  std::string_view meaning;
};

// One constant per kind, named as its code: import_issue::bad_duration == "bad_duration".
#define PROFLINT_IMPORT_ISSUE_CODE(code, effect, meaning) inline constexpr std::string_view code = #code;
PROFLINT_IMPORT_ISSUES(PROFLINT_IMPORT_ISSUE_CODE)
#undef PROFLINT_IMPORT_ISSUE_CODE

// All kinds, in the order of the list.
inline constexpr Kind kAll[] = {
#define PROFLINT_IMPORT_ISSUE_KIND(code, effect, meaning) Kind{#code, Effect::effect, meaning},
    PROFLINT_IMPORT_ISSUES(PROFLINT_IMPORT_ISSUE_KIND)
#undef PROFLINT_IMPORT_ISSUE_KIND
};

// The kind with this code, or nullptr (a store written by another version may hold others).
constexpr const Kind* find(std::string_view code) {
  for (const Kind& k : kAll)
    if (k.code == code) return &k;
  return nullptr;
}

}  // namespace proflint::import_issue
