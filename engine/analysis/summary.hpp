// engine/analysis/summary.hpp — the headline metrics a performance engineer reads first.
//
// Computed from derived facts only (never from a file format). The same figures back
// `proflint summary`, the analyze report header and ctx.summary for Lua rules.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/system_view.hpp"
#include "engine/store/store.hpp"

namespace proflint {

struct DeviceSummary {
  int64_t device_id = -1;
  std::string name;                      // empty when unknown
  std::optional<int> compute_major, compute_minor;
  int64_t window_ns = 0;                 // capture window used for the shares below
  int64_t kernel_count = 0;
  int64_t kernel_time_ns = 0;            // summed kernel durations (accumulate)
  int64_t kernel_busy_ns = 0;            // union of kernel intervals (flatten)
  int64_t gpu_busy_ns = 0;               // union of kernels, memcpys and memsets
  int64_t memcpy_count = 0;
  int64_t memcpy_time_ns = 0;
  int64_t memcpy_bytes = 0;
  int64_t memset_time_ns = 0;
  int64_t communication_time_ns = 0;     // summed durations of communication kernels
  int64_t tensor_core_time_ns = 0;       // summed durations of Tensor Core kernels
  int64_t tc_eligible_not_used_ns = 0;   // GEMM/conv/attention kernels in eligible ops that do not use Tensor Cores
  double gpu_utilization = 0;            // kernel_busy_ns / window_ns
  double tensor_core_share = 0;          // tensor_core_time_ns / kernel_time_ns
  std::map<std::string, int64_t> breakdown_ns;  // whole-trace breakdown (category -> ns), sums to window_ns
  // Steady state (table steady_state): the window after start-up. Equal to the window when no
  // start-up was found (startup_ns = 0).
  int64_t startup_ns = 0;
  std::string startup_cause, startup_evidence;  // empty when no start-up was found
  int64_t steady_start_ns = 0, steady_end_ns = 0;
  int64_t steady_window_ns = 0;
  int64_t steady_kernel_busy_ns = 0, steady_gpu_busy_ns = 0;
  double steady_gpu_utilization = 0;                   // steady_kernel_busy_ns / steady_window_ns
  std::map<std::string, int64_t> steady_breakdown_ns;  // sums to steady_window_ns
};

struct IterationSummary {
  std::string source;   // 'profiler_step', 'key_node', 'nvtx', 'auto_period', 'none'
  int64_t count = 0;
  double mean_ns = 0, stddev_ns = 0;
  int64_t min_ns = 0, max_ns = 0, median_ns = 0;
  std::vector<int64_t> durations_ns;   // in iteration order
};

struct ImportIssueSummary {
  std::string kind, example, location;
  int64_t count = 0;
};

// GPU time under one nn.Module path (schema/0008_source.sql, source.module_path): the kernels of
// the ops recorded inside the module, its sub-modules included; each kernel counts once per path.
struct ModuleSummary {
  std::string path;               // 'Net_0/Encoder_0/Block_2'
  int64_t kernel_count = 0;
  int64_t gpu_time_ns = 0;        // summed kernel durations, sub-modules included
  int64_t self_gpu_time_ns = 0;   // the part in ops directly inside it (not in a sub-module)
  int64_t tensor_core_time_ns = 0;
  double share_of_kernel_time = 0;  // gpu_time_ns / the trace's kernel time
  double tensor_core_share = 0;     // tensor_core_time_ns / gpu_time_ns
};

// One CUDA graph replayed in the trace (table cuda_graph).
struct GraphSummary {
  int64_t graph_id = 0;
  std::string id_source;  // 'recorded' or 'kernel_sequence'
  std::optional<int64_t> device_id;
  int64_t replays = 0, kernels_per_replay = 0, gpu_time_ns = 0, gpu_time_per_replay_ns = 0, span_per_replay_ns = 0;
  bool capture_in_trace = false;
  int64_t captured_ops = 0;     // nodes matched to a captured op
  std::string top_captured_op;  // empty when none
};

// torch.compile regions of one name (tables compiled_region, kernel_compiled).
struct CompiledRegionSummary {
  std::string name, pass;
  int64_t instances = 0, triton_kernels = 0, triton_time_ns = 0, other_kernels = 0, other_time_ns = 0, fallback_ops = 0;
  int64_t graph_breaks = 0;  // instances preceded by a graph break (compiled_region.graph_break_before)
};
struct CompiledSummary {
  int64_t regions = 0;          // region instances
  int64_t graph_breaks = 0;     // forward regions preceded by a graph break (eager ops or only Python between)
  int64_t graph_breaks_python_only = 0;  // of them, those with only Python between (graph_break_cause 'python_only')
  int64_t iterations_with_regions = 0;
  int64_t triton_kernels = 0, triton_time_ns = 0;              // all Triton kernels, inside regions or not
  int64_t other_kernels = 0, other_time_ns = 0, fallback_ops = 0;  // non-Triton kernels inside regions
  std::map<std::string, int64_t> triton_time_by_kind_ns;       // 'pointwise', 'reduction', ...
  std::vector<CompiledRegionSummary> by_name;                  // by GPU time, largest first
};

// What the host threads that launch a GPU's work did while it idled in its steady window (nsys
// OS runtime calls and CPU samples, schema/0007_host_activity.sql): the figures io-bound-input
// and cpu-hotspot-idle judge (engine/analysis/host_activity.hpp), shown whether they fire or not.
struct HostOsCallSummary {
  std::string name, category;  // os_call.name; 'io', 'wait' or 'sleep'
  int64_t calls = 0;           // calls that overlapped GPU-idle time
  int64_t gpu_idle_ns = 0;     // GPU-idle time inside them, outside the thread's CUDA calls
  int64_t longest_ns = 0;      // the most such time in one call
};
struct HostHotspotSummary {
  std::string function, module;  // innermost frame; module: file name of its library ('' when not recorded)
  int64_t samples = 0;           // launching threads' samples in GPU-idle time with this innermost function
};
struct HostActivityDevice {
  int64_t device_id = 0;
  int64_t steady_window_ns = 0, gpu_idle_ns = 0;  // the device's steady window and its idle part
  int64_t launching_threads = 0;
  int64_t blocked_ns = 0;  // GPU-idle time with a launching thread in a blocking OS call (union over threads and calls)
  std::map<std::string, int64_t> blocked_by_category_ns;  // 'io', 'wait', 'sleep' (each a union; they may overlap)
  std::vector<HostOsCallSummary> os_calls;                // most GPU-idle time first (at most kHostActivityRows)
  int64_t os_call_names = 0;                              // names with GPU-idle time, listed or not
  int64_t cpu_samples_in_window = 0, cpu_samples_while_idle = 0, cpu_sample_period_ns = 0;
  std::vector<HostHotspotSummary> hotspots;  // most samples first (at most kHostActivityRows)
  int64_t hotspot_functions = 0;             // functions sampled in GPU-idle time, listed or not
};
struct HostActivitySummary {
  int64_t os_calls_recorded = 0, cpu_samples_recorded = 0;  // rows of the trace in os_call / cpu_sample
  std::vector<HostActivityDevice> devices;                  // one per device that ran work
  bool empty() const { return os_calls_recorded == 0 && cpu_samples_recorded == 0; }
};
inline constexpr size_t kHostActivityRows = 20;

struct TraceSummary {
  int64_t trace_id = 0;
  std::string path, format;
  std::optional<std::string> format_version, tool_version, framework, vendor, comm_backend;
  std::optional<int64_t> rank, world_size;
  int64_t wall_ns = 0;                 // capture window length
  int64_t startup_ns = 0;              // start-up at the head of the window (smallest over devices)
  int64_t steady_wall_ns = 0;          // wall_ns - startup_ns: the base of savings shares
  std::optional<std::string> workload; // trace.workload: 'training', 'inference', 'non_framework'
  int64_t event_count = 0;
  int64_t kernel_count = 0, memcpy_count = 0, memset_count = 0, api_call_count = 0, op_count = 0;
  bool has_gpu_work = false;
  std::vector<DeviceSummary> devices;  // devices that ran kernels, copies or memsets
  int64_t devices_listed = 0;          // devices described by the trace, used or not
  // Devices the trace lists (the host's visible GPUs) on which nothing ran: only device_id, name and
  // compute capability are set. Never averaged into utilization.
  std::vector<DeviceSummary> idle_devices;
  // Tensor-Core-eligible ops, each counted once at the outermost eligible op of its sub-tree (its GPU
  // time = the sub-tree's kernel time), grouped into op nodes like the DLProf-style reports
  // (op_node_key): the same figures as the report summary and the tensor report.
  int64_t tc_eligible_ops = 0;           // eligible op nodes
  int64_t tc_eligible_gpu_ns = 0;        // kernel time under them, each kernel once
  int64_t tc_eligible_tc_ns = 0;         // part of it in Tensor Core kernels
  int64_t tc_eligible_ops_no_tc = 0;     // eligible op nodes with no Tensor Core kernel in any instance
  int64_t tc_eligible_no_tc_gpu_ns = 0;  // their kernel time
  IterationSummary iterations;
  std::vector<ImportIssueSummary> issues;
  // The module view (profiles recorded with_modules=True): every module path, sub-modules after
  // their parent, siblings by GPU time. Empty when no module was recorded.
  std::vector<ModuleSummary> modules;
  std::vector<GraphSummary> graphs;  // by GPU time, largest first; empty when no graph was replayed
  CompiledSummary compiled;          // regions = 0 and triton_kernels = 0 when torch.compile left no trace
  // Sampling logs and operator logs of this trace (engine/analysis/system_view.hpp); empty when none.
  SystemView system_view;
  // Host threads during GPU idle time; empty when the trace has no OS call or CPU sample rows.
  HostActivitySummary host_activity;
};

// The module view of one trace (TraceSummary::modules), from the kernels' ops and their source rows.
std::vector<ModuleSummary> summarize_modules(SQLite::Database& db, int64_t trace_id);

// An op node, as the DLProf-style reports aggregate op instances: the op path without the
// iteration marker prefix ("/ProfilerStep#5/aten::conv2d" -> "/aten::conv2d"), the pass and the op type.
std::string op_node_name(const std::string& path, const std::string& iteration_name);
std::string op_node_key(const std::string& node_name, const std::string& pass, const std::string& op_type);

// One summary per trace in the store, in trace_id order. With more than one job (available_jobs),
// the op-table parts (Tensor Core eligibility, modules) are computed on a second connection of
// the store beside the rest; the result is the same.
std::vector<TraceSummary> summarize(Store& store, unsigned jobs = 0);

}  // namespace proflint
