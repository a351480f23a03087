// engine/derive/model.hpp — the in-memory copy of one trace that the derivation steps work on.
//
// derive.cpp loads one trace into a TraceData (compact rows, sorted where a step needs it), each
// step fills the derived fields, and derive.cpp writes them back in one transaction. Rows refer to
// each other by index into these vectors (not by database id) so the sweeps stay cache-friendly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/derive/derive.hpp"

namespace proflint {

// NULL in the store.
inline constexpr int64_t kNone = INT64_MIN;

enum class RangeKind : uint8_t { cpu_op, user_annotation, gpu_user_annotation, python_function, nvtx, other };
// Framework annotations that are not ops but give paths, passes and iterations their meaning.
enum class MarkerKind : uint8_t { none, profiler_step, optimizer, dataloader };
enum class GpuKind : uint8_t { kernel, memcpy, memset };

struct RangeRec {
  int64_t id = 0;
  int64_t pid = kNone, tid = kNone;
  int64_t start = 0, end = 0;
  int64_t name_id = 0;
  int64_t external_id = kNone;
  int64_t fwd_thread_id = kNone;
  int64_t input_types_id = kNone;
  int64_t device_id = kNone;
  RangeKind kind = RangeKind::other;
  MarkerKind marker = MarkerKind::none;
  bool backward_name = false;     // autograd backward node or engine wrapper
  bool op_candidate = false;      // becomes an op row unless it turns out to be an iteration marker
  bool iteration_marker = false;  // the range delimits an iteration (ProfilerStep#N, key node, NVTX step)
  int64_t op_name_id = 0;         // name of the op it becomes (emit_nvtx text stripped to 'aten::add')
  // derived
  int64_t parent = -1;  // index of the enclosing range on the same thread
  int32_t depth = 0;
  int64_t op = -1;  // index into TraceData::ops when the range is an op
};

struct ApiRec {
  int64_t id = 0;
  int64_t pid = kNone, tid = kNone;
  int64_t start = 0, end = 0;
  int64_t name_id = 0;
  int64_t correlation_id = kNone, external_id = kNone;
  // derived
  int64_t op = -1;  // index into ops
  int32_t iteration = -1;
  bool launches = false;  // some kernel/memcpy/memset correlates to it
};

struct GpuRec {
  int64_t id = 0;
  GpuKind kind = GpuKind::kernel;
  int64_t device_id = kNone, stream_id = kNone, pid = kNone;
  int64_t start = 0, end = 0;
  int64_t name_id = kNone;  // kernels only
  int64_t correlation_id = kNone, external_id = kNone;
  // derived
  int64_t api = -1;  // index into apis
  int64_t op = -1;   // index into ops
  int32_t iteration = -1;
  bool tensor_core = false;   // kernels only
  bool tensor_core_decided = false;  // the name decided tensor_core (else the op fallback may)
  std::string_view category;  // kernels only (static storage)
};

struct SyncRec {
  int64_t id = 0;
  int64_t start = 0;
  int32_t iteration = -1;
};

struct OpRec {
  int64_t id = 0;            // database id assigned before writing
  int64_t range = -1;        // index into ranges; -1 for unassociated ops
  int64_t name_id = 0;       // may be a provisional (negative) id, see TraceData::intern
  std::string_view op_type;  // static text or TraceData::op_type_of_name
  std::string_view pass;
  int64_t parent = -1;  // index into ops
  int32_t depth = 0;
  std::string path;
  int32_t iteration = -1;
  bool tc_eligible = false;
  int64_t gpu_time_ns = 0, kernel_count = 0, tc_time_ns = 0;
  int64_t pid = kNone, tid = kNone, start = kNone, dur = kNone;
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
  int64_t start_ns = kNone, end_ns = kNone;
  const DeriveOptions* options = nullptr;

  std::vector<RangeRec> ranges;  // sorted by (pid, tid, start, -end, id)
  std::vector<ApiRec> apis;      // sorted by (pid, tid, start, id)
  std::vector<GpuRec> gpu;       // kernels, memcpys, memsets, sorted by start
  std::vector<SyncRec> syncs;
  std::vector<OpRec> ops;
  std::vector<IterationRec> iterations;  // sorted, non-overlapping
  std::string iteration_source = "none";
  std::vector<int64_t> described_devices;  // device_id rows present in the device table
  struct DeviceInfo {
    std::string vendor, name;
    std::optional<int64_t> compute_major;
  };
  std::unordered_map<int64_t, DeviceInfo> devices;  // by device_id, what the device table says

  // Text of every name id loaded with the trace, plus provisional (negative) ids for new text.
  std::unordered_map<int64_t, std::string> strings;
  // normalize_op_type once per op name (ops repeat names; a node map keeps the texts in place).
  std::unordered_map<int64_t, std::string> op_type_of_name;
  std::vector<std::string> new_strings;                 // provisional id -1 - i
  std::unordered_map<std::string, int64_t> string_ids;  // reverse index, built on first intern()

  const std::string& text(int64_t id) const {
    static const std::string empty;
    if (id < 0 && id != kNone) {
      size_t i = static_cast<size_t>(-1 - id);
      return i < new_strings.size() ? new_strings[i] : empty;
    }
    auto it = strings.find(id);
    return it == strings.end() ? empty : it->second;
  }
  // Id of `value`: the loaded one when it exists, else a provisional negative id.
  int64_t intern(std::string_view value) {
    if (string_ids.empty()) {
      for (const auto& [id, s] : strings) string_ids.emplace(s, id);
    }
    auto it = string_ids.find(std::string(value));
    if (it != string_ids.end()) return it->second;
    int64_t id = -1 - static_cast<int64_t>(new_strings.size());
    new_strings.emplace_back(value);
    string_ids.emplace(std::string(value), id);
    return id;
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
