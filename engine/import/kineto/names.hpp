// engine/import/kineto/names.hpp — what Kineto's category and event names mean, as pure functions.
//
// Category spellings changed over the years (format_variants.md): `Operator` became `cpu_op`,
// `Runtime` became `cuda_runtime` (+ `cuda_driver`), flows `async*` became `ac2g`. Memcpy
// direction and memory kinds are only in the event name ("Memcpy HtoD (Pageable -> Device)").
#pragma once

#include <optional>
#include <string_view>

namespace proflint::kineto {

enum class Category {
  cpu_op,               // cpu_op, Operator
  user_annotation,      // user_annotation (ProfilerStep#N, Optimizer.step#..., record_function)
  gpu_user_annotation,  // gpu_user_annotation
  python_function,      // python_function
  kernel,               // kernel, Kernel
  memcpy,               // gpu_memcpy, Memcpy
  memset,               // gpu_memset, Memset
  runtime,              // cuda_runtime (also hip* on ROCm)
  driver,               // cuda_driver
  legacy_runtime,       // Runtime: runtime or driver decided by the API name
  other_runtime,        // mtia_runtime, xpu_runtime, privateuse1_*, glow_runtime
  device_activity,      // mtia_ccp_events: work on the accelerator, kept as kernels
  cuda_sync,            // cuda_sync
  instant,              // cpu_instant_event
  profiler_range,       // cuda_profiler_range (CUPTI range profiler metrics)
  flow,                 // ac2g, async, async_gpu, async_cpu_to_gpu, fwdbwd
  other_range,          // overhead, collective_comm, mtia_insight: kept as range kind 'other'
  ignored,              // Trace (the capture span), external_correlation, proflint (an export's own tracks): nothing to keep
  unknown,
};

Category classify_category(std::string_view cat);

// True for `mtia_*` categories (vendor evidence even when the category itself is unknown).
bool is_mtia_category(std::string_view cat);

// Names of record_function annotations that pre-2021-06 traces filed as `Operator` and newer
// ones as `user_annotation`: ProfilerStep#N, Optimizer.step#..., Optimizer.zero_grad#...,
// enumerate(DataLoader)#... . Kept as user annotations so iteration detection sees one spelling.
bool is_legacy_annotation(std::string_view name);

// Flow kind stored in flow.kind: 'ac2g' for every spelling of the CPU->GPU launch flow,
// 'fwdbwd', or the category as recorded.
std::string_view flow_kind(std::string_view cat);

struct MemcpyName {
  std::string_view kind = "unknown";        // htod dtoh dtod htoh ptop htoa atoh atoa atod dtoa unknown
  std::optional<std::string_view> src_kind, dst_kind;  // pageable pinned device managed array unknown
};
// "Memcpy HtoD (Pageable -> Device)" -> {htod, pageable, device}.
MemcpyName parse_memcpy_name(std::string_view name);

// "Memset (Device)" -> device; nullopt when the name has no memory kind.
std::optional<std::string_view> parse_memset_kind(std::string_view name);

// 'Event Sync' -> event_sync, 'Stream Sync' -> stream_sync, 'Context Sync' -> context_sync,
// 'Stream Wait Event' -> stream_wait_event, anything else -> unknown.
std::string_view sync_kind_from_name(std::string_view name);

// Legacy `Runtime` events hold both APIs: `cu*` (not `cuda*`) are driver calls.
std::string_view legacy_api_kind(std::string_view api_name);

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel". Only CUPTI-style suffixes (4+ digits) go:
// "cuMemAlloc_v2" is the real name of a driver function.
std::string_view strip_api_version(std::string_view name);

// 'nvidia', 'amd' or nullopt, from a device's marketing name (AMD traces may leave it empty).
std::optional<std::string_view> vendor_from_device_name(std::string_view name);

}  // namespace proflint::kineto
