// engine/import/kineto/kineto_importer.cpp — PyTorch profiler / Kineto trace -> fact rows.
//
// byte_source (plain or gzip) -> trace_scanner (outer JSON, no DOM) -> event_parser (simdjson,
// one event at a time) -> this file, which decides what each event is and hands rows to the
// FactSink as it goes. What must wait for the end of the file is small: flow ends still
// unpaired, process/thread/stream names, the device list and trace metadata.
#include "engine/import/kineto/kineto_importer.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <unordered_set>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/common/import_issue_kinds.hpp"
#include "engine/import/kineto/byte_source.hpp"
#include "engine/import/kineto/event_parser.hpp"
#include "engine/import/kineto/flow_pairer.hpp"
#include "engine/import/kineto/names.hpp"
#include "engine/import/kineto/numbers.hpp"
#include "engine/import/kineto/trace_scanner.hpp"
#include "engine/import/progress.hpp"
#include "engine/model/sink.hpp"

namespace proflint {

namespace {

using kineto::Category;
using kineto::KinetoEvent;

static_assert(kineto::kEventPadding >= kineto::kParserPadding, "scanner padding must cover the parser's read-ahead");

// Kineto's epoch timestamps are ~1.6e15 µs; monotonic clocks (TraceLens, H100 traces with
// baseTimeNanoseconds) are far below 1e15 µs.
constexpr int64_t kEpochThresholdNs = 1'000'000'000'000'000'000;
// The autograd profiler's Chrome export (PyTorch without Kineto) names its only host process so;
// its events get this pid (the export records no OS pid).
constexpr std::string_view kAutogradCpuProcess = "CPU functions";
constexpr int64_t kAutogradCpuPid = 0;

struct PairHash {
  size_t operator()(const std::pair<int64_t, int64_t>& p) const noexcept {
    uint64_t h = static_cast<uint64_t>(p.first) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h ^ (static_cast<uint64_t>(p.second) + 0x7F4A7C159E3779B9ull + (h << 6) + (h >> 2)));
  }
};

struct PendingDevice {
  DeviceRow row;
  bool mtia = false;
};

// The start of a broken event, as printable one-line ASCII (it may hold invalid UTF-8).
std::string excerpt(const char* data, size_t size) {
  std::string s(data, std::min<size_t>(size, 120));
  for (char& c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20) c = ' ';
    else if (u >= 0x7f) c = '?';
  }
  return s;
}

std::string byte_location(uint64_t offset) { return "byte " + std::to_string(offset); }

void set_text(std::optional<std::string>& out, bool present, std::string_view value) {
  if (!present || value.empty()) {
    out.reset();
    return;
  }
  if (!out) out.emplace();
  out->assign(value.data(), value.size());  // keeps the capacity of the reused row
}

opt_i64 json_int(const nlohmann::json& obj, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    auto it = obj.find(k);
    if (it == obj.end()) continue;
    if (it->is_number_integer()) return it->get<int64_t>();
    if (it->is_number_unsigned()) {
      uint64_t u = it->get<uint64_t>();
      if (u <= static_cast<uint64_t>(INT64_MAX)) return static_cast<int64_t>(u);
    }
    if (it->is_number_float()) {
      double d = it->get<double>();
      if (d >= -9.2e18 && d <= 9.2e18) return static_cast<int64_t>(d);
    }
    if (it->is_string()) return kineto::int_from_text(it->get_ref<const std::string&>());
  }
  return std::nullopt;
}

// A scalar as text. Arrays and objects give nullopt: dump() recurses, and a hostile file could
// nest them deeply enough to overflow the stack.
std::optional<std::string> scalar_text(const nlohmann::json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_number() || j.is_boolean()) return j.dump();
  return std::nullopt;
}

std::optional<std::string> json_text(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end()) return std::nullopt;
  return scalar_text(*it);
}

// The parse of each event, ahead of the sink on a thread of its own (kineto::EventStage): a
// parser of its own fills a batch's events, their escaped texts kept in the batch.
class ParseAhead final : public kineto::EventStage {
 public:
  struct Parsed {
    KinetoEvent event;
    kineto::ParseStatus status = kineto::ParseStatus::ok;
  };
  struct Batch final : Slot {
    std::vector<Parsed> events;  // reused batch after batch: events keep their capacity
    std::deque<std::string> kept_texts;
  };
  std::unique_ptr<Slot> make_slot() override { return std::make_unique<Batch>(); }
  void begin(Slot& slot, size_t events) override {
    auto& batch = static_cast<Batch&>(slot);
    if (batch.events.size() < events) batch.events.resize(events);
    batch.kept_texts.clear();
  }
  void prepare(Slot& slot, size_t index, const char* data, size_t size) override {
    auto& batch = static_cast<Batch&>(slot);
    Parsed& p = batch.events[index];
    std::string_view error;
    p.status = parser_.parse(data, size, p.event, error);
    if (p.status == kineto::ParseStatus::ok) p.event.keep_texts(data, size, batch.kept_texts);
  }

 private:
  kineto::EventParser parser_;
};

class KinetoSink final : public kineto::ScanHandler {
 public:
  KinetoSink(const std::string& path, FactSink& writer, const ImportOptions& options, uint64_t file_size)
      : path_(path),
        writer_(writer),
        options_(options),
        file_size_(file_size),
        progress_(options.progress, path, file_size, ProgressBar::Unit::bytes) {}

  bool wants_top_level(std::string_view key) override {
    static constexpr std::string_view wanted[] = {
        "schemaVersion",    "deviceProperties",  "computeProperties",  "distributedInfo",  "displayTimeUnit",
        "host_name",        "hostname",          "cupti_version",      "cuda_runtime_version", "cuda_driver_version",
        "roctracer_version", "hip_runtime_version", "hip_driver_version", "baseTimeNanoseconds",
    };
    return std::find(std::begin(wanted), std::end(wanted), key) != std::end(wanted);
  }

  void on_top_level(std::string_view key, std::string_view value, uint64_t offset) override {
    nlohmann::json j = nlohmann::json::parse(value.begin(), value.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      writer_.add_issue(import_issue::invalid_top_level_value, key, byte_location(offset));
      return;
    }
    if (key == "schemaVersion") {
      if (auto version = scalar_text(j)) writer_.set_metadata("format_version", *version);
    } else if (key == "deviceProperties" || key == "computeProperties") {
      read_devices(j);
    } else if (key == "distributedInfo") {
      if (!j.is_object()) return;
      opt_i64 rank = json_int(j, {"rank"});
      opt_i64 world = json_int(j, {"world_size"});
      std::optional<std::string> backend = json_text(j, "backend");
      writer_.set_rank(rank, world, backend);
    } else if (key == "host_name" || key == "hostname") {
      if (j.is_string()) writer_.set_metadata("host_name", j.get<std::string>());
    } else if (key == "baseTimeNanoseconds") {
      // Recent PyTorch writes ts on a clock whose zero is this epoch instant (ns), so that
      // base + ts is Unix time: it places the trace for logs with wall-clock times.
      if (j.is_number_integer() && j.get<int64_t>() > 0) writer_.set_epoch_base(j.get<int64_t>());
      else if (j.is_number_unsigned() && j.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX))
        writer_.set_epoch_base(static_cast<int64_t>(j.get<uint64_t>()));
    } else if (key == "displayTimeUnit") {
      // Display hint only: ts/dur stay in µs whatever it says ("ns" in some HTA traces).
    } else if (auto version = scalar_text(j)) {
      versions_.emplace_back(std::string(key), *version);
    }
  }

  void on_oversized(std::string_view what, uint64_t offset, uint64_t size) override {
    if (what == "event" && oversized_events_++ == 0)
      first_oversized_ = byte_location(offset) + " (" + std::to_string(size) + " bytes)";
    writer_.add_issue(what == "event" ? import_issue::oversized_event : import_issue::oversized_top_level_value,
                      std::string(what) + " of " + std::to_string(size) + " bytes", byte_location(offset));
  }

  void on_source_position(uint64_t file_bytes) override { file_bytes_read_ = file_bytes; }

  void on_event(const char* data, size_t size, uint64_t offset) override {
    std::string_view error;
    auto status = parser_.parse(data, size, own_ev_, error);
    handle(status, own_ev_, data, size, offset);
  }

  // Events parsed ahead, on the scan's third thread (ParseAhead).
  kineto::EventStage* event_stage() override { return parse_ahead_on_ ? &parse_ahead_ : nullptr; }
  // Whether events are parsed on a thread of their own (event_stage) when the scan has one.
  void set_parse_ahead(bool on) { parse_ahead_on_ = on; }
  void on_prepared_event(kineto::EventStage::Slot& slot, size_t index, const char* data, size_t size,
                         uint64_t offset) override {
    const ParseAhead::Parsed& parsed = static_cast<ParseAhead::Batch&>(slot).events[index];
    handle(parsed.status, parsed.event, data, size, offset);
  }

  // One event, parsed (`status`, `event`) from its text at `data`.
  void handle(kineto::ParseStatus status, const KinetoEvent& event, const char* data, size_t size, uint64_t offset) {
    ev_ = &event;
    writer_.count_event();
    ++events_;
    if (progress_.enabled() && (events_ & 0xFFFF) == 0) progress_.update(file_bytes_read_);
    if (status != kineto::ParseStatus::ok) {
      issue(status == kineto::ParseStatus::not_an_object ? import_issue::event_not_an_object
                                                         : import_issue::invalid_event_json,
            excerpt(data, size), offset);
      return;
    }
    if (ev_->ph.size() != 1) {
      if (ev_->ph.empty())
        issue(import_issue::event_without_ph, excerpt(data, size), offset);
      else
        issue(import_issue::unknown_phase, ev_->ph, offset);
      return;
    }
    switch (ev_->ph[0]) {
      case 'X': complete_event(offset); break;
      case 'i':
      case 'I': instant_event(offset); break;
      case 's':
      case 'f': flow_event(offset); break;
      case 't': ++usable_; break;  // flow steps carry nothing we keep
      case 'M': metadata_event(); break;
      case 'C': counter_event(offset); break;
      case 'B':
      case 'E':
      case 'b':
      case 'e':
      case 'n':
      case 'N':
      case 'O':
      case 'D':
      case 'P':
      case 'R':
        // Valid Chrome-trace phases that Kineto does not write.
        issue(import_issue::unsupported_phase, ev_->ph, offset);
        break;
      default:
        issue(import_issue::unknown_phase, ev_->ph, offset);
    }
  }

  void finish(const kineto::ScanResult& scan) {
    progress_.finish();
    if (scan.trailing_data_at)
      writer_.add_issue(import_issue::data_after_json, "a second JSON value or other data after the trace; ignored",
                        byte_location(*scan.trailing_data_at));
    if (scan.shape == kineto::TopShape::object && !scan.has_trace_events)
      throw input_error(path_, "", "JSON but not a PyTorch profiler trace: no \"traceEvents\" array (expected a Kineto / "
                                   "Chrome trace object or an array of trace events)");
    // An event too large to read (a 1 GB name) is skipped, not absent: say so rather than "empty".
    if (events_ == 0 && oversized_events_ > 0)
      throw input_error(path_, first_oversized_,
                        "no readable trace events: " + std::to_string(oversized_events_) +
                            " event(s) exceed the size limit for one event and were skipped (expected events of at "
                            "most a few MB each)");
    if (events_ == 0) throw input_error(path_, "", "empty trace: traceEvents has no events");
    if (usable_ == 0)
      throw input_error(path_, first_issue_location_,
                        "no readable trace events: all " + std::to_string(events_) +
                            " elements are malformed or not trace events (first problem: " + first_issue_ + ")");
    write_pending_flows();
    write_devices();
    write_names();
    if (saw_cpu_op_) writer_.set_metadata("framework", "pytorch");
    if (auto vendor = trace_vendor()) writer_.set_metadata("vendor", *vendor);
    if (!versions_.empty()) {
      std::string tool;
      for (const auto& [k, v] : versions_) tool += (tool.empty() ? "" : " ") + k + "=" + v;
      writer_.set_metadata("tool_version", tool);
    }
    if (min_ts_ != INT64_MAX) writer_.set_metadata("clock", min_ts_ >= kEpochThresholdNs ? "epoch" : "monotonic");
  }

 private:
  // ---- per-event problems ----
  void issue(std::string_view kind, std::string_view example, uint64_t offset) {
    std::string location = byte_location(offset);
    if (first_issue_.empty()) {
      first_issue_ = std::string(kind) + ": " + std::string(example.substr(0, 80));
      first_issue_location_ = location;
    }
    writer_.add_issue(kind, example, location);
  }

  // Start and duration of an 'X' event, or nullopt after counting why not.
  bool interval(uint64_t offset, int64_t& start, int64_t& dur) {
    if (!ev_->has_ts) {
      issue(import_issue::event_without_ts, ev_->name, offset);
      return false;
    }
    auto ts = kineto::us_text_to_ns(ev_->ts);
    if (!ts) {
      issue(import_issue::bad_timestamp, ev_->ts, offset);
      return false;
    }
    if (!ev_->has_dur) {
      issue(import_issue::event_without_dur, ev_->name, offset);
      return false;
    }
    auto d = kineto::us_text_to_ns(ev_->dur);
    if (!d) {
      issue(import_issue::bad_duration, ev_->dur, offset);
      return false;
    }
    if (*d < 0) {
      issue(import_issue::negative_duration, ev_->dur, offset);
      return false;
    }
    if (*ts > INT64_MAX - *d) {
      issue(import_issue::bad_duration, ev_->dur, offset);
      return false;
    }
    // The writer drops such rows too (FactSink::kMaxAbsTimeNs); here the issue gets the byte offset.
    if (*ts < -FactSink::kMaxAbsTimeNs || *ts + *d > FactSink::kMaxAbsTimeNs) {
      issue(import_issue::timestamp_out_of_range, ev_->has_ts ? ev_->ts : ev_->dur, offset);
      return false;
    }
    start = *ts;
    dur = *d;
    min_ts_ = std::min(min_ts_, start);
    ++usable_;
    return true;
  }

  bool timestamp(uint64_t offset, int64_t& ts) {
    if (!ev_->has_ts) {
      issue(import_issue::event_without_ts, ev_->name, offset);
      return false;
    }
    auto t = kineto::us_text_to_ns(ev_->ts);
    if (!t) {
      issue(import_issue::bad_timestamp, ev_->ts, offset);
      return false;
    }
    ts = *t;
    return true;
  }

  // ---- 'X' events ----
  void complete_event(uint64_t offset) {
    Category c = ev_->has_cat ? kineto::classify_category(ev_->cat) : Category::unknown;
    // PyTorch built without Kineto (e.g. Debian's python3-torch) exports the autograd profiler's
    // own Chrome trace: no "cat", every CPU event under the process "CPU functions", small integer
    // thread ids, µs relative to the profiler start. Those events are CPU ops.
    const bool autograd_cpu = !ev_->has_cat && ev_->pid.text == kAutogradCpuProcess;
    if (autograd_cpu) c = Category::cpu_op;
    if (c == Category::ignored) {
      ++usable_;
      return;
    }
    if (c == Category::unknown) {
      if (ev_->has_cat && kineto::is_mtia_category(ev_->cat)) saw_mtia_ = true;
      issue(ev_->has_cat ? import_issue::unknown_category : import_issue::event_without_category,
            ev_->has_cat ? ev_->cat : ev_->name, offset);
      return;
    }
    int64_t start = 0, dur = 0;
    switch (c) {
      case Category::kernel:
      case Category::device_activity: {
        if (!interval(offset, start, dur)) return;
        if (c == Category::device_activity) saw_mtia_ = true;
        KernelRow& r = kernel_;
        r.device_id = ev_->device ? ev_->device : ev_->pid.number;
        r.stream_id = ev_->stream ? ev_->stream : ev_->tid.number;
        r.pid = std::nullopt;  // Kineto does not record the launching process on GPU events
        r.start_ns = start;
        r.dur_ns = dur;
        r.name = ev_->name;
        r.correlation_id = ev_->correlation;
        r.external_id = ev_->external_id;
        r.grid_x = ev_->grid[0], r.grid_y = ev_->grid[1], r.grid_z = ev_->grid[2];
        r.block_x = ev_->block[0], r.block_y = ev_->block[1], r.block_z = ev_->block[2];
        r.registers_per_thread = ev_->registers_per_thread;
        r.shared_memory_bytes = ev_->shared_memory;
        note_stream(r.device_id, r.stream_id);
        writer_.add_graph_kernel(r, KernelGraphIds{ev_->graph_id, ev_->graph_node_id});
        return;
      }
      case Category::memcpy: {
        if (!interval(offset, start, dur)) return;
        MemcpyRow& r = memcpy_;
        r.device_id = ev_->device ? ev_->device : ev_->pid.number;
        r.stream_id = ev_->stream ? ev_->stream : ev_->tid.number;
        r.start_ns = start;
        r.dur_ns = dur;
        r.bytes = ev_->bytes;
        auto parsed = kineto::parse_memcpy_name(ev_->name);
        r.kind.assign(parsed.kind);
        set_text(r.src_kind, parsed.src_kind.has_value(), parsed.src_kind.value_or(""));
        set_text(r.dst_kind, parsed.dst_kind.has_value(), parsed.dst_kind.value_or(""));
        r.correlation_id = ev_->correlation;
        r.external_id = ev_->external_id;
        note_stream(r.device_id, r.stream_id);
        writer_.add_memcpy(r);
        return;
      }
      case Category::memset: {
        if (!interval(offset, start, dur)) return;
        MemsetRow& r = memset_;
        r.device_id = ev_->device ? ev_->device : ev_->pid.number;
        r.stream_id = ev_->stream ? ev_->stream : ev_->tid.number;
        r.start_ns = start;
        r.dur_ns = dur;
        r.bytes = ev_->bytes;
        auto kind = kineto::parse_memset_kind(ev_->name);
        set_text(r.mem_kind, kind.has_value(), kind.value_or(""));
        r.correlation_id = ev_->correlation;
        r.external_id = ev_->external_id;
        note_stream(r.device_id, r.stream_id);
        writer_.add_memset(r);
        return;
      }
      case Category::runtime:
      case Category::driver:
      case Category::legacy_runtime:
      case Category::other_runtime: {
        if (!interval(offset, start, dur)) return;
        ApiCallRow& r = api_;
        r.pid = ev_->pid.number;
        r.tid = ev_->tid.number;
        r.start_ns = start;
        r.dur_ns = dur;
        r.name = kineto::strip_api_version(ev_->name);
        if (c == Category::runtime) r.kind.assign("runtime");
        else if (c == Category::driver) r.kind.assign("driver");
        else if (c == Category::legacy_runtime) r.kind.assign(kineto::legacy_api_kind(r.name));
        else r.kind.assign("other");
        if (c == Category::other_runtime && kineto::is_mtia_category(ev_->cat)) saw_mtia_ = true;
        if (r.name.substr(0, 3) == "hip") saw_hip_ = true;
        else if (r.name.substr(0, 2) == "cu") saw_cuda_ = true;
        r.correlation_id = ev_->correlation;
        r.external_id = ev_->external_id;
        note_host_thread(r.pid, r.tid);
        writer_.add_api_call(r);
        return;
      }
      case Category::cpu_op:
      case Category::user_annotation:
      case Category::python_function:
      case Category::other_range: {
        if (!interval(offset, start, dur)) return;
        RangeRow& r = range_;
        r.pid = autograd_cpu ? opt_i64{kAutogradCpuPid} : ev_->pid.number;
        r.tid = ev_->tid.number;
        r.start_ns = start;
        r.dur_ns = dur;
        r.name = ev_->name;
        r.device_id = std::nullopt;
        if (c == Category::cpu_op) saw_cpu_op_ = true;
        const bool legacy_op = ev_->cat == "Operator" || autograd_cpu;
        if (c == Category::cpu_op && !(legacy_op && kineto::is_legacy_annotation(ev_->name))) {
          r.kind.assign("cpu_op");
        } else if (c == Category::cpu_op) {
          r.kind.assign("user_annotation");
        } else if (c == Category::user_annotation) {
          r.kind.assign("user_annotation");
        } else if (c == Category::python_function) {
          r.kind.assign("python_function");
        } else {
          r.kind.assign("other");
        }
        set_text(r.domain, c == Category::other_range, ev_->cat);
        r.external_id = ev_->external_id;
        r.sequence_number = ev_->sequence_number;
        r.fwd_thread_id = ev_->fwd_thread_id;
        set_text(r.input_dims, ev_->has_input_dims, ev_->input_dims);
        set_text(r.input_types, ev_->has_input_types, ev_->input_types);
        set_text(r.call_stack, ev_->has_call_stack, ev_->call_stack);
        set_text(r.module, ev_->has_module, ev_->module_hierarchy);
        set_collective(r);
        note_host_thread(r.pid, r.tid);
        writer_.add_range(r);
        return;
      }
      case Category::gpu_user_annotation:
      case Category::profiler_range: {
        if (!interval(offset, start, dur)) return;
        RangeRow& r = range_;
        opt_i64 device = ev_->device ? ev_->device : ev_->pid.number;
        r.pid = std::nullopt;  // the pid of GPU-side events is the device, not a process
        r.tid = ev_->stream ? ev_->stream : ev_->tid.number;
        r.start_ns = start;
        r.dur_ns = dur;
        r.name = ev_->name;
        r.device_id = device;
        r.kind.assign(c == Category::gpu_user_annotation ? "gpu_user_annotation" : "other");
        set_text(r.domain, c == Category::profiler_range, ev_->cat);
        r.external_id = ev_->external_id;
        r.sequence_number = std::nullopt;
        r.fwd_thread_id = std::nullopt;
        r.input_dims.reset();
        r.input_types.reset();
        r.call_stack.reset();
        r.module.reset();
        r.collective.reset();
        note_device(device);
        writer_.add_range(r);
        if (c == Category::profiler_range) {
          // CUPTI range-profiler metrics: one counter per metric, at the range start.
          for (const auto& [metric, value] : ev_->numeric_args) {
            CounterRow counter;
            counter.device_id = device;
            counter.ts_ns = start;
            counter.name = metric;
            counter.value = value;
            writer_.add_counter(counter);
          }
        }
        return;
      }
      case Category::cuda_sync: {
        if (!interval(offset, start, dur)) return;
        SyncEventRow& r = sync_;
        r.pid = std::nullopt;  // recorded on the GPU timeline: pid/tid are device/stream
        r.tid = std::nullopt;
        r.device_id = ev_->device ? ev_->device : ev_->pid.number;
        r.stream_id = ev_->stream ? ev_->stream : ev_->tid.number;
        if (r.stream_id && *r.stream_id < 0) r.stream_id = std::nullopt;  // -1: not tied to a stream
        r.start_ns = start;
        r.dur_ns = dur;
        r.kind.assign(kineto::sync_kind_from_name(ev_->sync_kind.empty() ? ev_->name : ev_->sync_kind));
        r.correlation_id = ev_->correlation;
        note_device(r.device_id);
        writer_.add_sync_event(r);
        return;
      }
      case Category::instant:
      case Category::flow:
        issue(import_issue::unexpected_phase, std::string(ev_->cat) + " with ph X", offset);
        return;
      case Category::ignored:
      case Category::unknown:
        return;
    }
  }

  // Collective arguments (Process Group Name, Seq, In msg nelems, ...) when the op recorded any.
  void set_collective(RangeRow& r) {
    if (!ev_->has_comm) {
      r.collective.reset();
      return;
    }
    CollectiveArgs a;
    auto text = [](std::string_view v) { return v.empty() ? std::nullopt : std::optional<std::string>(v); };
    a.collective_name = text(ev_->comm_name);
    a.process_group = text(ev_->comm_pg_name);
    a.pg_desc = text(ev_->comm_pg_desc);
    a.dtype = text(ev_->comm_dtype);
    a.group_ranks = text(ev_->comm_group_ranks);
    a.seq = ev_->comm_seq;
    a.in_nelems = ev_->comm_in_nelems;
    a.out_nelems = ev_->comm_out_nelems;
    a.group_size = ev_->comm_group_size;
    r.collective = std::move(a);
  }

  // ---- 'i' events: allocator samples; other instants (Iteration Start, Record Window End) are markers ----
  void instant_event(uint64_t offset) {
    if (ev_->name != "[memory]") {
      ++usable_;
      return;
    }
    int64_t ts = 0;
    if (!timestamp(offset, ts)) return;
    ++usable_;
    min_ts_ = std::min(min_ts_, ts);
    MemorySampleRow r;
    // c10::DeviceType: 0 = CPU (host memory, device -1); CUDA (1) and others carry their ordinal.
    if (ev_->device_type && *ev_->device_type == 0) r.device_id = -1;
    else r.device_id = ev_->device_id && *ev_->device_id >= 0 ? *ev_->device_id : -1;
    r.ts_ns = ts;
    r.allocated_bytes = ev_->total_allocated;
    r.reserved_bytes = ev_->total_reserved;
    r.delta_bytes = ev_->mem_bytes;
    if (r.device_id >= 0) note_device(r.device_id);
    writer_.add_memory_sample(r);
  }

  // ---- 's'/'f' flow ends, paired by (kind, id) ----
  void flow_event(uint64_t offset) {
    if (!ev_->has_flow_id || !ev_->flow_id) {
      issue(import_issue::flow_without_id, ev_->name, offset);
      return;
    }
    int64_t ts = 0;
    if (!timestamp(offset, ts)) return;
    ++usable_;
    uint32_t kind = flow_kind_index(kineto::flow_kind(ev_->has_cat ? ev_->cat : std::string_view("flow")));
    kineto::FlowEnd end{ev_->pid.number, ev_->tid.number, ts};
    if (auto pair = flows_.add(kind, *ev_->flow_id, ev_->ph[0] == 's', end)) write_flow(*pair);
  }

  uint32_t flow_kind_index(std::string_view kind) {
    for (size_t i = 0; i < flow_kinds_.size(); ++i)
      if (flow_kinds_[i] == kind) return static_cast<uint32_t>(i);
    flow_kinds_.emplace_back(kind);
    return static_cast<uint32_t>(flow_kinds_.size() - 1);
  }

  void write_flow(const kineto::FlowPair& pair) {
    FlowRow& r = flow_;
    r.kind.assign(flow_kinds_[pair.kind]);
    r.flow_id = pair.id;
    r.src_pid = pair.src ? pair.src->pid : std::nullopt;
    r.src_tid = pair.src ? pair.src->tid : std::nullopt;
    r.src_ts_ns = pair.src ? opt_i64(pair.src->ts_ns) : std::nullopt;
    r.dst_pid = pair.dst ? pair.dst->pid : std::nullopt;
    r.dst_tid = pair.dst ? pair.dst->tid : std::nullopt;
    r.dst_ts_ns = pair.dst ? opt_i64(pair.dst->ts_ns) : std::nullopt;
    writer_.add_flow(r);
  }

  // Ends that never met their other half are kept too, with the missing side NULL.
  void write_pending_flows() {
    for (const auto& pair : flows_.leftovers()) write_flow(pair);
  }

  // ---- 'M' events: names ----
  void metadata_event() {
    ++usable_;
    if (!ev_->pid.number) return;  // "Spans", "Traces": the profiler's own rows
    int64_t pid = *ev_->pid.number;
    if (ev_->name == "process_name" && ev_->has_meta_name) {
      process_names_[pid] = std::string(ev_->meta_name);
    } else if (ev_->name == "process_labels") {
      process_labels_[pid] = std::string(ev_->meta_labels);
    } else if (ev_->name == "thread_name" && ev_->has_meta_name && ev_->tid.number) {
      thread_names_[{pid, *ev_->tid.number}] = std::string(ev_->meta_name);
    }
  }

  // ---- 'C' events: counters, one row per numeric arg ----
  void counter_event(uint64_t offset) {
    int64_t ts = 0;
    if (!timestamp(offset, ts)) return;
    ++usable_;
    for (const auto& [key, value] : ev_->numeric_args) {
      counter_name_.assign(ev_->name);
      if (!counter_name_.empty()) counter_name_ += '.';
      counter_name_.append(key);
      CounterRow r;
      r.device_id = ev_->device;
      r.ts_ns = ts;
      r.name = counter_name_;
      r.value = value;
      writer_.add_counter(r);
    }
  }

  // ---- what is seen, for the rows written at the end ----
  void note_stream(opt_i64 device, opt_i64 stream) {
    if (!device || !stream) return;
    std::pair<int64_t, int64_t> key{*device, *stream};
    if (key == last_stream_) return;
    last_stream_ = key;
    if (streams_.insert(key).second) {
      writer_.add_stream(*device, *stream, std::nullopt);
      note_device(device);
    }
  }
  void note_device(opt_i64 device) {
    if (device && *device >= 0) devices_seen_.insert(*device);
  }
  void note_host_thread(opt_i64 pid, opt_i64 tid) {
    if (!pid || !tid) return;
    std::pair<int64_t, int64_t> key{*pid, *tid};
    if (key == last_thread_) return;
    last_thread_ = key;
    host_threads_.insert(key);
  }

  void read_devices(const nlohmann::json& list) {
    if (!list.is_array()) return;
    for (const auto& d : list) {
      if (!d.is_object()) continue;
      opt_i64 id = json_int(d, {"id"});
      if (!id) continue;
      PendingDevice dev;
      dev.row.device_id = *id;
      dev.row.name = json_text(d, "name");
      dev.row.compute_major = json_int(d, {"computeMajor", "major"});
      dev.row.compute_minor = json_int(d, {"computeMinor", "minor"});
      dev.row.sm_count = json_int(d, {"numSms", "multiProcessorCount"});
      dev.row.memory_bytes = json_int(d, {"totalGlobalMem"});
      // MTIA entries carry runtime versions instead of a compute capability.
      dev.mtia = !dev.row.compute_major && d.contains("runtimeMajorVersion");
      if (dev.mtia) saw_mtia_ = true;
      devices_.push_back(std::move(dev));
    }
  }

  std::optional<std::string> trace_vendor() const {
    if (saw_mtia_) return "mtia";
    if (saw_hip_) return "amd";
    for (const auto& d : devices_)
      if (d.row.name)
        if (auto v = kineto::vendor_from_device_name(*d.row.name); v && *v == "amd") return "amd";
    if (saw_cuda_) return "nvidia";
    for (const auto& d : devices_)
      if (d.row.name)
        if (auto v = kineto::vendor_from_device_name(*d.row.name)) return std::string(*v);
    return std::nullopt;
  }

  void write_devices() {
    std::optional<std::string> vendor = trace_vendor();
    std::set<int64_t> described;
    for (auto& d : devices_) {
      if (d.mtia) d.row.vendor = "mtia";
      else if (d.row.name && kineto::vendor_from_device_name(*d.row.name))
        d.row.vendor = std::string(*kineto::vendor_from_device_name(*d.row.name));
      else d.row.vendor = vendor;  // e.g. AMD traces with an empty device name
      writer_.add_device(d.row);
      described.insert(d.row.device_id);
    }
    // Devices used by events but absent from deviceProperties (older traces list none).
    for (int64_t id : devices_seen_) {
      if (described.count(id)) continue;
      DeviceRow row;
      row.device_id = id;
      row.vendor = vendor;
      writer_.add_device(row);
    }
  }

  void write_names() {
    auto is_device_process = [&](int64_t pid) {
      auto it = process_labels_.find(pid);
      return it != process_labels_.end() && !it->second.empty() && it->second != "CPU";
    };
    std::set<int64_t> pids;
    for (const auto& [pid, tid] : host_threads_) pids.insert(pid);
    for (const auto& [pid, name] : process_names_) pids.insert(pid);
    // An unnamed process or thread is passed a null string_view, which the writer stores as NULL.
    for (int64_t pid : pids) {
      if (is_device_process(pid)) continue;  // "GPU 0" rows of the trace viewer, not processes
      auto it = process_names_.find(pid);
      writer_.add_process(pid, it == process_names_.end() ? std::string_view() : std::string_view(it->second));
    }
    std::set<std::pair<int64_t, int64_t>> threads(host_threads_.begin(), host_threads_.end());
    for (const auto& [key, name] : thread_names_) {
      if (streams_.count(key)) {
        std::string_view n = name;
        while (!n.empty() && n.back() == ' ') n.remove_suffix(1);  // Kineto writes "stream 7 "
        writer_.add_stream(key.first, key.second, n);
      } else if (!is_device_process(key.first)) {
        threads.insert(key);
      }
    }
    for (const auto& key : threads) {
      auto it = thread_names_.find(key);
      writer_.add_thread(key.first, key.second, it == thread_names_.end() ? std::string_view() : std::string_view(it->second));
    }
  }

  const std::string& path_;
  FactSink& writer_;
  const ImportOptions& options_;
  uint64_t file_size_ = 0;
  ProgressBar progress_;  // bytes of the file (compressed bytes for gzip) read so far
  uint64_t file_bytes_read_ = 0;  // as the scanner last said (on_source_position)

  kineto::EventParser parser_;
  KinetoEvent own_ev_;             // what on_event parses into
  const KinetoEvent* ev_ = nullptr;  // the event being handled (own_ev_ or one parsed ahead)
  ParseAhead parse_ahead_;
  bool parse_ahead_on_ = false;
  // Rows reused event after event so their strings keep their capacity.
  KernelRow kernel_;
  MemcpyRow memcpy_;
  MemsetRow memset_;
  ApiCallRow api_;
  RangeRow range_;
  SyncEventRow sync_;
  FlowRow flow_;
  std::string counter_name_;

  uint64_t events_ = 0, usable_ = 0, oversized_events_ = 0;
  std::string first_oversized_;
  std::string first_issue_, first_issue_location_;
  int64_t min_ts_ = INT64_MAX;
  bool saw_cpu_op_ = false, saw_hip_ = false, saw_cuda_ = false, saw_mtia_ = false;

  std::vector<std::string> flow_kinds_;
  kineto::FlowPairer flows_;

  std::vector<PendingDevice> devices_;
  std::set<int64_t> devices_seen_;
  std::unordered_set<std::pair<int64_t, int64_t>, PairHash> streams_, host_threads_;
  std::pair<int64_t, int64_t> last_stream_{INT64_MIN, INT64_MIN}, last_thread_{INT64_MIN, INT64_MIN};
  std::map<int64_t, std::string> process_names_, process_labels_;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names_;
  std::vector<std::pair<std::string, std::string>> versions_;
};

// Whether the scan gets a thread of its own (kineto::scan_trace_on_thread): for files of 1 MiB and
// more on a machine with a second core. Below that the thread would not pay for itself, and the
// fuzz targets' small inputs stay on one thread. PROFLINT_SCAN_THREAD=1 or 0 forces the choice
// (tests of both paths, measurements).
bool scan_on_thread(uint64_t file_size) {
  if (const char* forced = std::getenv("PROFLINT_SCAN_THREAD"); forced && (*forced == '0' || *forced == '1'))
    return *forced == '1';
  return file_size >= (uint64_t{1} << 20) && std::thread::hardware_concurrency() >= 2;
}

// Whether a scan on its own thread parses the events on a third (ParseAhead) before the sink
// gets them: for a plain (not gzipped) file, where the parse and the sink on one thread were the
// import's bottleneck with the second core half idle (the 10^7-event trace's import 4.35 -> 3.6 s,
// docs/benchmarks.md). A gzipped file's inflate thread takes that share already: with a fourth
// thread the x20 tiled trace got no faster. PROFLINT_PARSE_THREAD=0 or 1 forces the choice (tests
// of both paths, measurements).
bool parse_on_thread(const kineto::ByteSource& source) {
  if (const char* forced = std::getenv("PROFLINT_PARSE_THREAD"); forced && (*forced == '0' || *forced == '1'))
    return *forced == '1';
  return !source.inflates();
}

}  // namespace

bool KinetoImporter::sniff(std::string_view head, bool /*gzipped*/) const {
  // Any JSON object or array: TraceLens puts >20 KB of `metadata` before traceEvents, so the
  // head cannot prove a trace. JSON that is not a trace gets the importer's own clear error.
  if (head.substr(0, 3) == "\xEF\xBB\xBF") head.remove_prefix(3);
  size_t i = 0;
  while (i < head.size() && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) ++i;
  return i < head.size() && (head[i] == '{' || head[i] == '[');
}

ImportResult KinetoImporter::import(const std::string& path, TraceModel& model, const ImportOptions& options) const {
  std::error_code ec;
  uint64_t file_size = std::filesystem::file_size(path, ec);
  if (ec) file_size = 0;
  auto source = kineto::open_byte_source(path);

  TraceInfo info;
  info.path = path;
  info.format = "kineto";
  info.clock = "epoch";
  if (file_size > 0) info.file_bytes = static_cast<int64_t>(file_size);
  FactSink writer(model, info);

  KinetoSink sink(path, writer, options, file_size);
  sink.set_parse_ahead(parse_on_thread(*source));
  // The scanner's buffer is zero-filled: 4 MiB for a trace of a few KB made that the main cost of
  // importing it (measured with the fuzz targets). 16x the file covers gzip; the buffer grows for
  // an event larger than half of it anyway.
  kineto::ScanLimits limits;
  if (file_size > 0) limits.initial_buffer = std::min<uint64_t>(limits.initial_buffer, std::max<uint64_t>(file_size * 16, 64 * 1024));
  kineto::ScanResult scan = scan_on_thread(file_size) ? kineto::scan_trace_on_thread(*source, path, sink, limits)
                                                      : kineto::scan_trace(*source, path, sink, limits);
  sink.finish(scan);
  writer.commit();

  ImportResult result;
  result.trace_id = writer.trace_id();
  result.rows = writer.rows_written();
  result.issues = writer.issue_count();
  return result;
}

}  // namespace proflint
