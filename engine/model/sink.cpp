// engine/model/sink.cpp — see sink.hpp. The limits here are the ones StoreWriter applied when
// importers wrote to SQLite directly; the model keeps exactly the rows the store used to get.
#include "engine/model/sink.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "engine/common/error.hpp"
#include "engine/common/import_issue_kinds.hpp"

namespace proflint {

FactSink::FactSink(TraceModel& model, const TraceInfo& info) : model_(model) { model_.info = info; }

std::string_view FactSink::bounded_name(std::string_view name, std::string_view table) {
  if (name.size() <= kMaxNameBytes) return name;
  size_t cut = kMaxNameBytes;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  add_issue(std::string(table) + "_name_truncated", name.substr(0, 200),
            std::string("a ") + std::string(table) + " name of " + std::to_string(name.size()) + " bytes, kept " +
                std::to_string(cut));
  return name.substr(0, cut);
}

bool FactSink::admit_interval(int64_t start, int64_t dur, std::string_view table, bool widens_window) {
  dur = std::max<int64_t>(dur, 0);
  auto describe = [&] {
    return "a " + std::string(table) + " row starting at " + std::to_string(start) + " ns, lasting " + std::to_string(dur) +
           " ns";
  };
  if (start < -kMaxAbsTimeNs || start > kMaxAbsTimeNs || dur > kMaxAbsTimeNs - start) {
    add_issue(std::string(table) + "_time_out_of_range", describe(),
              "beyond +-2^61 ns (73 years from the clock's zero); row dropped");
    return false;
  }
  if (dur > kMaxSummedDurationNs - summed_dur_) {
    add_issue(import_issue::duration_total_out_of_range, describe(),
              "the durations of this trace's events would add up past 2^56 ns (2.3 years); row dropped");
    return false;
  }
  summed_dur_ += dur;
  if (!widens_window) return true;
  min_ts_ = std::min(min_ts_, start);
  max_ts_ = std::max(max_ts_, start + dur);
  return true;
}

opt_i64 FactSink::bounded_bytes(opt_i64 bytes, std::string_view table) {
  if (!bytes || (*bytes >= 0 && *bytes <= kMaxTransferBytes)) return bytes;
  add_issue(std::string(table) + "_bytes_out_of_range", std::to_string(*bytes) + " bytes",
            "outside 0..2^50 (1 PiB) for one " + std::string(table) + "; byte count dropped");
  return std::nullopt;
}

// Devices, processes and threads keep the last row given for their key, at the end of their table
// (the store's INSERT OR REPLACE did the same); a stream keeps its place and its first name.
void FactSink::add_device(const DeviceRow& r) {
  std::erase_if(model_.devices, [&](const DeviceFact& d) { return d.row.device_id == r.device_id; });
  model_.devices.push_back({r, kNone});
  // A compute capability is a version number (sm_90 = 9.0): one beyond 0..999 is a corrupt or
  // edited file, and left unknown rather than carried into arithmetic on the architecture.
  DeviceRow& row = model_.devices.back().row;
  for (auto* part : {&row.compute_major, &row.compute_minor})
    if (*part && (**part < 0 || **part > 999)) {
      add_issue(import_issue::value_out_of_range, "compute capability " + std::to_string(**part),
                "device " + std::to_string(r.device_id));
      part->reset();
    }
}

void FactSink::add_process(int64_t pid, std::string_view name) {
  std::erase_if(model_.processes, [&](const NamedRow& p) { return p.pid == pid; });
  NamedRow row{pid, 0, std::nullopt};
  if (name.data()) row.name.emplace(name);
  model_.processes.push_back(std::move(row));
}

void FactSink::add_thread(int64_t pid, int64_t tid, std::string_view name) {
  std::erase_if(model_.threads, [&](const NamedRow& t) { return t.pid == pid && t.tid == tid; });
  NamedRow row{pid, tid, std::nullopt};
  if (name.data()) row.name.emplace(name);
  model_.threads.push_back(std::move(row));
}

void FactSink::add_stream(int64_t device_id, int64_t stream_id, std::optional<std::string_view> name) {
  for (auto& s : model_.streams) {
    if (s.device_id != device_id || s.stream_id != stream_id) continue;
    if (name) s.name.emplace(*name);  // COALESCE(excluded.name, name)
    return;
  }
  StreamFact s{device_id, stream_id, std::nullopt};
  if (name) s.name.emplace(*name);
  model_.streams.push_back(std::move(s));
}

bool FactSink::add_graph_kernel(const KernelRow& row, const KernelGraphIds& ids) {
  if (!add_kernel(row)) return false;
  auto id = [](const opt_i64& v) { return v && *v != 0 ? *v : kNone; };
  int64_t graph = id(ids.graph_id), node = id(ids.graph_node_id);
  if (graph != kNone || node != kNone)
    model_.kernel_graph_nodes.push_back({static_cast<int64_t>(model_.kernels.size()) - 1, graph, node});
  return true;
}

bool FactSink::add_graph_node_event(const GraphNodeEventRow& r) {
  if (r.graph_node_id <= 0) {
    add_issue(import_issue::graph_node_event_unusable, "graph node id " + std::to_string(r.graph_node_id),
              "a node id of 0 or below names no node; row dropped");
    return false;
  }
  if (!admit_interval(r.start_ns, r.dur_ns, "graph_node_event", false)) return false;
  ++rows_;
  GraphNodeEventFact e;
  e.pid = or_none(r.pid);
  e.tid = or_none(r.tid);
  e.start_ns = r.start_ns;
  e.dur_ns = std::max<int64_t>(r.dur_ns, 0);
  e.name_id = intern(bounded_name(r.name, "graph_node_event"));
  e.event_class = or_none(r.event_class);
  e.graph_node_id = r.graph_node_id;
  // An original id of 0 (or below) is no original: the node was not cloned.
  e.original_graph_node_id = r.original_graph_node_id && *r.original_graph_node_id > 0 ? *r.original_graph_node_id : kNone;
  model_.graph_node_events.push_back(e);
  return true;
}

bool FactSink::add_kernel(const KernelRow& r) {
  if (!admit_interval(r.start_ns, r.dur_ns, "kernel")) return false;
  ++rows_;
  KernelFact k;
  k.name_id = intern(bounded_name(r.name, "kernel"));
  k.device_id = or_none(r.device_id);
  k.stream_id = or_none(r.stream_id);
  k.pid = or_none(r.pid);
  k.start_ns = r.start_ns;
  k.dur_ns = r.dur_ns;
  k.correlation_id = or_none(r.correlation_id);
  k.external_id = or_none(r.external_id);
  model_.kernels.push_back(k);
  model_.set_launch(model_.kernels.size() - 1,
                    {or_none(r.grid_x), or_none(r.grid_y), or_none(r.grid_z), or_none(r.block_x), or_none(r.block_y),
                     or_none(r.block_z), or_none(r.registers_per_thread), or_none(r.shared_memory_bytes)});
  return true;
}

namespace {

// The fields copies and memsets share (the rows differ only in how they name their kind); `bytes`
// already bounded by the sink.
template <typename Row>
CopyFact copy_fact(const Row& r, opt_i64 bytes) {
  CopyFact c;
  c.device_id = or_none(r.device_id);
  c.stream_id = or_none(r.stream_id);
  c.pid = or_none(r.pid);
  c.start_ns = r.start_ns;
  c.dur_ns = r.dur_ns;
  c.bytes = or_none(bytes);
  c.correlation_id = or_none(r.correlation_id);
  c.external_id = or_none(r.external_id);
  return c;
}

}  // namespace

bool FactSink::add_memcpy(const MemcpyRow& r) {
  if (!admit_interval(r.start_ns, r.dur_ns, "memcpy")) return false;
  ++rows_;
  CopyFact c = copy_fact(r, bounded_bytes(r.bytes, "memcpy"));
  c.kind = label(std::string_view(r.kind));
  c.src_kind = label(r.src_kind);
  c.dst_kind = label(r.dst_kind);
  model_.memcpys.push_back(c);
  return true;
}

bool FactSink::add_memset(const MemsetRow& r) {
  if (!admit_interval(r.start_ns, r.dur_ns, "memset")) return false;
  ++rows_;
  CopyFact c = copy_fact(r, bounded_bytes(r.bytes, "memset"));
  c.kind = label(r.mem_kind);
  model_.memsets.push_back(c);
  return true;
}

bool FactSink::add_api_call(const ApiCallRow& r) {
  if (!admit_interval(r.start_ns, r.dur_ns, "api_call")) return false;
  ++rows_;
  ApiFact a;
  a.name_id = intern(bounded_name(r.name, "api_call"));
  a.pid = or_none(r.pid);
  a.tid = or_none(r.tid);
  a.start_ns = r.start_ns;
  a.dur_ns = r.dur_ns;
  a.kind = label(std::string_view(r.kind));
  a.correlation_id = or_none(r.correlation_id);
  a.external_id = or_none(r.external_id);
  model_.apis.push_back(a);
  return true;
}

bool FactSink::add_range(const RangeRow& r) {
  if (!admit_interval(r.start_ns, r.dur_ns, "range")) return false;
  ++rows_;
  RangeFact f;
  RangeArgs a;
  // Interned in this order (name, dims, types, stack, module): string ids follow first use.
  f.name_id = intern(bounded_name(r.name, "range"));
  a.input_dims_id = opt_intern(r.input_dims);
  a.input_types_id = opt_intern(r.input_types);
  a.call_stack_id = opt_intern(r.call_stack);
  a.module_id = opt_intern(r.module);
  f.pid = or_none(r.pid);
  f.tid = or_none(r.tid);
  f.start_ns = r.start_ns;
  f.dur_ns = r.dur_ns;
  f.kind = label(std::string_view(r.kind));
  f.domain = label(r.domain);
  a.device_id = or_none(r.device_id);
  a.external_id = or_none(r.external_id);
  a.sequence_number = or_none(r.sequence_number);
  a.fwd_thread_id = or_none(r.fwd_thread_id);
  model_.set_args(f, a);
  if (r.collective) {
    f.collective = static_cast<int32_t>(model_.collectives.size());
    model_.collectives.push_back(*r.collective);
  }
  model_.ranges.push_back(f);
  return true;
}

void FactSink::add_flow(const FlowRow& r) {
  ++rows_;
  model_.flows.push_back({label(std::string_view(r.kind)), r.flow_id, or_none(r.src_pid), or_none(r.src_tid),
                          or_none(r.src_ts_ns), or_none(r.dst_pid), or_none(r.dst_tid), or_none(r.dst_ts_ns)});
}

void FactSink::add_memory_sample(const MemorySampleRow& r) {
  if (r.ts_ns < -kMaxAbsTimeNs || r.ts_ns > kMaxAbsTimeNs) {
    add_issue(import_issue::memory_sample_time_out_of_range, "a memory sample at " + std::to_string(r.ts_ns) + " ns",
              "beyond +-2^61 ns (73 years from the clock's zero); sample dropped");
    return;
  }
  min_ts_ = std::min(min_ts_, r.ts_ns);
  max_ts_ = std::max(max_ts_, r.ts_ns);
  ++rows_;
  model_.memory_samples.push_back(r);
}

void FactSink::add_counter(const CounterRow& r) {
  ++rows_;
  model_.counters.push_back({or_none(r.device_id), r.ts_ns, intern(bounded_name(r.name, "counter")), r.value});
}

size_t FactSink::add_sample_series(const SampleSeriesRow& r) {
  SampleSeriesFact f;
  f.device_id = or_none(r.device_id);
  f.pid = or_none(r.pid);
  f.metric = std::string(bounded_name(r.metric, "sample_series"));
  f.unit = r.unit;
  f.format = r.format;
  f.source = model_.info.path;
  model_.sample_series.push_back(std::move(f));
  return model_.sample_series.size() - 1;
}

bool FactSink::add_sample(size_t series, int64_t ts_ns, double value) {
  if (ts_ns < -kMaxAbsTimeNs || ts_ns > kMaxAbsTimeNs) {
    add_issue(import_issue::sample_time_out_of_range, "a sample at " + std::to_string(ts_ns) + " ns",
              "beyond +-2^61 ns (73 years from the clock's zero); sample dropped");
    return false;
  }
  if (!std::isfinite(value)) {
    add_issue(import_issue::sample_value_not_finite, model_.sample_series.at(series).metric, "a NaN or infinite value; sample dropped");
    return false;
  }
  min_ts_ = std::min(min_ts_, ts_ns);
  max_ts_ = std::max(max_ts_, ts_ns);
  ++rows_;
  auto& s = model_.sample_series.at(series);
  s.ts_ns.push_back(ts_ns);
  s.values.push_back(value);
  return true;
}

void FactSink::add_operator_timing(const OperatorTimingRow& r) {
  ++rows_;
  model_.operator_timings.push_back({r, model_.info.path});
}

bool FactSink::add_sync_event(const SyncEventRow& r) {
  if (!admit_interval(r.start_ns, r.dur_ns, "sync_event")) return false;
  ++rows_;
  model_.syncs.push_back({or_none(r.pid), or_none(r.tid), or_none(r.device_id), or_none(r.stream_id), r.start_ns,
                          r.dur_ns, or_none(r.correlation_id), label(std::string_view(r.kind))});
  return true;
}

bool FactSink::add_os_call(const OsCallRow& r) {
  if (!admit_interval(r.start_ns, r.dur_ns, "os_call", false)) return false;
  ++rows_;
  model_.os_calls.push_back({or_none(r.pid), or_none(r.tid), r.start_ns, std::max<int64_t>(r.dur_ns, 0),
                             intern(bounded_name(r.name, "os_call")), or_none(r.return_value),
                             or_none(r.nesting_level),
                             r.caller.empty() ? kNone : intern(bounded_name(r.caller, "os_call"))});
  return true;
}

bool FactSink::add_cpu_sample(const CpuSampleRow& r) {
  if (!admit_interval(r.ts_ns, 0, "cpu_sample", false)) return false;
  ++rows_;
  CpuSampleFact s{or_none(r.pid), or_none(r.tid), r.ts_ns, or_none(r.cpu),
                  static_cast<int64_t>(model_.cpu_frames.size()), static_cast<int32_t>(r.frame_count)};
  for (size_t i = 0; i < r.frame_count; ++i) {
    const CpuFrameRow& f = r.frames[i];
    model_.cpu_frames.push_back(
        {intern(bounded_name(f.name, "cpu_frame")), f.module.empty() ? kNone : intern(bounded_name(f.module, "cpu_frame"))});
  }
  model_.cpu_samples.push_back(s);
  return true;
}

void FactSink::add_issue(std::string_view kind, std::string_view example, std::string_view location) {
  auto it = model_.issues.find(kind);
  if (it == model_.issues.end()) {
    IssueFact issue;
    issue.example = std::string(example.substr(0, 200));
    issue.location = std::string(location);
    it = model_.issues.emplace(std::string(kind), std::move(issue)).first;
  }
  ++it->second.count;
}

int64_t FactSink::issue_count() const {
  int64_t n = 0;
  for (const auto& [kind, issue] : model_.issues) n += issue.count;
  return n;
}

void FactSink::set_rank(opt_i64 rank, opt_i64 world_size, std::optional<std::string> backend) {
  TraceInfo& info = model_.info;
  if (rank) info.rank = rank;
  if (world_size) info.world_size = world_size;
  if (backend) info.comm_backend = std::move(backend);
}

void FactSink::set_metadata(std::string_view column, std::string_view value) {
  TraceInfo& info = model_.info;
  std::string v(value);
  if (column == "format_version") info.format_version = v;
  else if (column == "tool_version") info.tool_version = v;
  else if (column == "framework") info.framework = v;
  else if (column == "vendor") info.vendor = v;
  else if (column == "host_name") info.host_name = v;
  else if (column == "clock") info.clock = v;
  else throw Error("internal: set_metadata on unknown trace column " + std::string(column));
}

void FactSink::commit() {
  if (min_ts_ <= max_ts_) {
    model_.start_ns = min_ts_;
    model_.end_ns = max_ts_;
  }
  model_.imported_strings = model_.strings.size();
}

}  // namespace proflint
