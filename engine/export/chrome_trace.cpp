// engine/export/chrome_trace.cpp — see chrome_trace.hpp. What is mapped how: docs/export.md.
#include "engine/export/chrome_trace.hpp"

#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "engine/common/utf8.hpp"
#include "engine/export/json_text.hpp"
#include "engine/export/ranks.hpp"

namespace proflint::exporter {

namespace {

// Synthetic thread ids of the tracks proflint adds to a rank's process. Real OS thread ids stay
// as they are unless they collide with these or with each other (then they are renumbered from
// kRenumberedTid, and the track name keeps the real id).
constexpr int64_t kIterationTid = 999'999'000;
constexpr int64_t kMemoryTid = 999'999'001;
constexpr int64_t kFindingTid = 999'999'100;  // + finding index
constexpr int64_t kGpuTid = 1'000'000'000;    // + GPU track index
constexpr int64_t kRenumberedTid = 900'000'000;

std::optional<int64_t> opt(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getInt64();
}

const char* memory_kind_text(const std::string& kind) {
  if (kind == "pageable") return "Pageable";
  if (kind == "pinned") return "Pinned";
  if (kind == "device") return "Device";
  if (kind == "managed") return "Managed";
  if (kind == "array") return "Array";
  return "Unknown";
}

// The Kineto spelling of a copy, which the importer parses back into kind and memory kinds.
std::string memcpy_name(const std::string& kind, const std::optional<std::string>& src,
                        const std::optional<std::string>& dst) {
  static const std::map<std::string, std::string> directions = {
      {"htod", "HtoD"}, {"dtoh", "DtoH"}, {"dtod", "DtoD"}, {"htoh", "HtoH"}, {"ptop", "PtoP"},
      {"htoa", "HtoA"}, {"atoh", "AtoH"}, {"atoa", "AtoA"}, {"atod", "AtoD"}, {"dtoa", "DtoA"}};
  auto it = directions.find(kind);
  std::string name = "Memcpy " + (it == directions.end() ? std::string("Unknown") : it->second);
  if (src || dst) name += std::string(" (") + memory_kind_text(src.value_or("")) + " -> " + memory_kind_text(dst.value_or("")) + ")";
  return name;
}

const char* sync_name(const std::string& kind) {
  if (kind == "event_sync") return "Event Sync";
  if (kind == "stream_sync") return "Stream Sync";
  if (kind == "context_sync") return "Context Sync";
  if (kind == "stream_wait_event") return "Stream Wait Event";
  return "Synchronization";
}

const char* api_category(const std::string& kind) {
  if (kind == "driver") return "cuda_driver";
  if (kind == "runtime") return "cuda_runtime";
  return "privateuse1_runtime";  // another vendor's runtime (MTIA, XPU): kept as kind 'other'
}

// One process (rank) of the output: its tracks and where its events go.
struct Process {
  RankView view;
  int64_t pid = 0;  // in the output
  // Added to correlation and External ids: processes of one nsys export (or ranks of a job)
  // number them independently, and the Kineto importer links calls to GPU work by these ids
  // across the whole file, so each process after the first gets its own range.
  int64_t id_base = 0;
  std::map<std::pair<int64_t, int64_t>, int64_t> host;  // (pid, tid) -> output tid
  std::map<std::pair<int64_t, int64_t>, int64_t> gpu;   // (device, stream; -1 = no stream) -> output tid
  std::map<int64_t, std::pair<int64_t, int64_t>> iteration_span;  // iteration -> [start, end) on the trace's clock
};

class Writer {
 public:
  explicit Writer(std::ostream& out) : out_(out) {}
  ~Writer() = default;

  // Starts one event object: `{"ph":"X","cat":...` ; the caller appends fields and calls end().
  JsonText& begin() {
    if (!first_) text_.raw(",\n");
    first_ = false;
    ++events_;
    return text_;
  }
  void end() {
    if (text_.size() >= (1u << 20)) flush();
  }
  JsonText& text() { return text_; }
  void flush() {
    out_.write(text_.data(), static_cast<std::streamsize>(text_.size()));
    text_.clear();
  }
  int64_t events() const { return events_; }

 private:
  std::ostream& out_;
  JsonText text_;
  bool first_ = true;
  int64_t events_ = 0;
};

class ChromeExporter {
 public:
  ChromeExporter(Store& store, const std::vector<Finding>& findings, std::ostream& out)
      : store_(store), findings_(findings), w_(out) {}

  ChromeExportStats run() {
    for (auto& v : rank_views(store_)) {
      Process p;
      p.pid = static_cast<int64_t>(procs_.size());
      p.id_base = p.pid * 1'000'000'000'000;
      p.view = std::move(v);
      procs_.push_back(std::move(p));
    }
    header();
    for (auto& p : procs_) {
      collect_tracks(p);
      metadata(p);
      iterations(p);
      memory(p);
      counters(p);
      ranges(p);
      api_calls(p);
      gpu_work(p, "kernel");
      gpu_work(p, "memcpy");
      gpu_work(p, "memset");
      syncs(p);
    }
    finding_slices();
    w_.text().raw("\n]}\n");
    w_.flush();
    return ChromeExportStats{w_.events(), flows_};
  }

 private:
  int64_t job_ns(const Process& p, int64_t ns) const { return ns + p.view.clock_offset_ns; }

  // Memory samples and counters are per trace, not per process: the first rank of a trace shows them.
  bool first_view_of_trace(const Process& p) const {
    for (const auto& q : procs_)
      if (q.view.trace_id == p.view.trace_id) return &q == &p;
    return false;
  }

  void header() {
    JsonText& t = w_.text();
    t.raw("{\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"producer\":");
    t.str(std::string("proflint ") + PROFLINT_VERSION);
    t.raw(",\"ranks\":[");
    for (size_t i = 0; i < procs_.size(); ++i) {
      if (i) t.raw(",");
      t.raw("{\"pid\":").num(procs_[i].pid).raw(",\"rank\":").num(procs_[i].view.rank).raw(",\"clock_offset_ns\":");
      t.num(procs_[i].view.clock_offset_ns).raw(",\"label\":").str(procs_[i].view.label).raw("}");
    }
    t.raw("]},\n");
    device_properties();
    distributed_info();
    t.raw("\"traceEvents\":[\n");
  }

  // GPU descriptions, so a re-import knows the devices (one entry per id: ranks share ids).
  void device_properties() {
    JsonText& t = w_.text();
    std::set<int64_t> seen;
    bool any = false;
    for (const auto& p : procs_) {
      SQLite::Statement q(store_.db(),
                          "SELECT device_id, name, compute_major, compute_minor, sm_count, memory_bytes FROM device "
                          "WHERE trace_id = ? AND device_id >= 0 ORDER BY device_id");
      q.bind(1, p.view.trace_id);
      while (q.executeStep()) {
        int64_t id = q.getColumn(0).getInt64();
        if (!seen.insert(id).second) continue;
        t.raw(any ? ",\n" : "\"deviceProperties\":[\n");
        any = true;
        t.raw("{\"id\":").num(id);
        if (!q.getColumn(1).isNull()) t.raw(",\"name\":").str(q.getColumn(1).getString());
        if (auto v = opt(q.getColumn(2))) t.raw(",\"computeMajor\":").num(*v);
        if (auto v = opt(q.getColumn(3))) t.raw(",\"computeMinor\":").num(*v);
        if (auto v = opt(q.getColumn(4))) t.raw(",\"numSms\":").num(*v);
        if (auto v = opt(q.getColumn(5))) t.raw(",\"totalGlobalMem\":").num(*v);
        t.raw("}");
      }
    }
    if (any) t.raw("],\n");
  }

  // distributedInfo only for a single rank: a merged file is several ranks, which one object cannot say.
  void distributed_info() {
    if (procs_.size() != 1) return;
    SQLite::Statement q(store_.db(), "SELECT rank, world_size, comm_backend FROM trace WHERE trace_id = ?");
    q.bind(1, procs_[0].view.trace_id);
    if (!q.executeStep() || q.getColumn(0).isNull()) return;
    JsonText& t = w_.text();
    t.raw("\"distributedInfo\":{\"rank\":").num(q.getColumn(0).getInt64());
    if (auto v = opt(q.getColumn(1))) t.raw(",\"world_size\":").num(*v);
    if (!q.getColumn(2).isNull()) t.raw(",\"backend\":").str(q.getColumn(2).getString());
    t.raw("},\n");
  }

  void collect_tracks(Process& p) {
    const RankView& v = p.view;
    std::set<int64_t> used;
    int64_t renumbered = kRenumberedTid;
    for (const auto& key : host_threads(store_, v)) {
      int64_t tid = key.second;
      if (tid >= kRenumberedTid || tid < 0 || used.count(tid)) tid = renumbered++;
      used.insert(tid);
      p.host[key] = tid;
    }
    int64_t k = 0;
    for (const auto& key : gpu_tracks(store_, v)) p.gpu[key] = kGpuTid + k++;
    // Iteration spans, for the iteration track.
    SQLite::Statement iq(store_.db(),
                         "SELECT iteration, start_ns, MAX(end_ns, COALESCE(gpu_end_ns, end_ns)) FROM iteration "
                         "WHERE trace_id = ? ORDER BY iteration");
    iq.bind(1, v.trace_id);
    while (iq.executeStep())
      p.iteration_span[iq.getColumn(0).getInt64()] = {iq.getColumn(1).getInt64(), iq.getColumn(2).getInt64()};
  }

  void meta(const Process& p, std::optional<int64_t> tid, const char* what, const std::string& name, int64_t sort) {
    JsonText& t = w_.begin();
    t.raw("{\"ph\":\"M\",\"pid\":").num(p.pid);
    if (tid) t.raw(",\"tid\":").num(*tid);
    t.raw(",\"name\":\"").raw(what).raw("_name\",\"args\":{\"name\":").str(name).raw("}}");
    w_.end();
    JsonText& s = w_.begin();
    s.raw("{\"ph\":\"M\",\"pid\":").num(p.pid);
    if (tid) s.raw(",\"tid\":").num(*tid);
    s.raw(",\"name\":\"").raw(what).raw("_sort_index\",\"args\":{\"sort_index\":").num(sort).raw("}}");
    w_.end();
  }

  void metadata(const Process& p) {
    meta(p, std::nullopt, "process", p.view.label, p.pid);
    auto names = thread_names(store_, p.view);
    std::set<int64_t> pids;
    for (const auto& [key, tid] : p.host) pids.insert(key.first);
    int64_t sort = 100;
    for (const auto& [key, tid] : p.host) {
      std::string name = (pids.size() > 1 ? "pid " + std::to_string(key.first) + " " : std::string()) + "thread " +
                         std::to_string(key.second);
      // Kineto names threads "thread 123 (python3)" already; a recorded name is shown as it is.
      if (auto it = names.find(key); it != names.end())
        name = (pids.size() > 1 ? "pid " + std::to_string(key.first) + " " : std::string()) + it->second;
      meta(p, tid, "thread", name, sort++);
    }
    std::map<std::pair<int64_t, int64_t>, std::string> stream_names;
    SQLite::Statement sq(store_.db(), "SELECT device_id, stream_id, name FROM stream WHERE trace_id = ? AND name IS NOT NULL AND name != ''");
    sq.bind(1, p.view.trace_id);
    while (sq.executeStep()) stream_names[{sq.getColumn(0).getInt64(), sq.getColumn(1).getInt64()}] = sq.getColumn(2).getString();
    sort = 10'000;
    for (const auto& [key, tid] : p.gpu) {
      std::string name = "GPU " + std::to_string(key.first) + (key.second < 0 ? " (no stream)" : " stream " + std::to_string(key.second));
      if (auto it = stream_names.find(key); it != stream_names.end() && it->second.rfind("stream ", 0) != 0 &&
                                               it->second != std::to_string(key.second))
        name += " (" + it->second + ")";
      meta(p, tid, "thread", name, sort++);
    }
    if (!p.iteration_span.empty()) meta(p, kIterationTid, "thread", "proflint iterations", 0);
  }

  void iterations(const Process& p) {
    if (p.iteration_span.empty()) return;
    SQLite::Statement q(store_.db(),
                        "SELECT iteration, number, name, start_ns, end_ns, gpu_start_ns, gpu_end_ns, source FROM iteration "
                        "WHERE trace_id = ? ORDER BY iteration");
    q.bind(1, p.view.trace_id);
    while (q.executeStep()) {
      int64_t it = q.getColumn(0).getInt64();
      int64_t start = q.getColumn(3).getInt64(), end = q.getColumn(4).getInt64();
      JsonText& t = w_.begin();
      std::string name = "iteration " + std::to_string(it);
      if (!q.getColumn(2).isNull()) name += " (" + q.getColumn(2).getString() + ")";
      t.raw("{\"ph\":\"X\",\"cat\":\"proflint\",\"name\":").str(name);
      t.raw(",\"pid\":").num(p.pid).raw(",\"tid\":").num(kIterationTid);
      t.raw(",\"ts\":").us(job_ns(p, start)).raw(",\"dur\":").us(end - start);
      t.raw(",\"args\":{\"iteration\":").num(it);
      if (auto n = opt(q.getColumn(1))) t.raw(",\"number\":").num(*n);
      t.raw(",\"source\":").str(q.getColumn(7).getString());
      if (auto g = opt(q.getColumn(5))) t.raw(",\"gpu_start_us\":").us(job_ns(p, *g));
      if (auto g = opt(q.getColumn(6))) t.raw(",\"gpu_end_us\":").us(job_ns(p, *g));
      t.raw("}}");
      w_.end();
    }
  }

  // Allocator samples as Kineto writes them ([memory] instants), on a track of their own.
  void memory(const Process& p) {
    if (!first_view_of_trace(p)) return;  // not per process in the store: shown on the trace's first rank
    SQLite::Statement q(store_.db(),
                        "SELECT device_id, ts_ns, allocated_bytes, reserved_bytes, delta_bytes FROM memory_sample "
                        "WHERE trace_id = ? ORDER BY rowid");
    q.bind(1, p.view.trace_id);
    bool named = false;
    while (q.executeStep()) {
      if (!named) {
        meta(p, kMemoryTid, "thread", "memory (allocator)", 1);
        named = true;
      }
      int64_t device = q.getColumn(0).getInt64();
      JsonText& t = w_.begin();
      t.raw("{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\",\"pid\":").num(p.pid);
      t.raw(",\"tid\":").num(kMemoryTid).raw(",\"ts\":").us(job_ns(p, q.getColumn(1).getInt64()));
      t.raw(",\"args\":{\"Device Type\":").num(device < 0 ? 0 : 1).raw(",\"Device Id\":").num(device);
      if (auto v = opt(q.getColumn(2))) t.raw(",\"Total Allocated\":").num(*v);
      if (auto v = opt(q.getColumn(3))) t.raw(",\"Total Reserved\":").num(*v);
      if (auto v = opt(q.getColumn(4))) t.raw(",\"Bytes\":").num(*v);
      t.raw("}}");
      w_.end();
    }
  }

  // Sampled metrics as counter tracks of the rank's process: importer counters, then the export's
  // own GPU metrics (nsys GPU_METRICS, stored as sample series: schema/0010_nsys_samples_callers.sql).
  void counters(const Process& p) {
    if (!first_view_of_trace(p)) return;
    for (const char* sql : {"SELECT c.device_id, c.ts_ns, s.value, c.value FROM _counter c JOIN string s ON s.id = c.name_id "
                            "WHERE c.trace_id = ? AND c.value IS NOT NULL ORDER BY c.rowid",
                            "SELECT device_id, ts_ns, metric, value FROM sample WHERE trace_id = ? AND "
                            "format = 'nsys-gpu-metrics' ORDER BY series_id, ts_ns"})
      counter_rows(p, sql);
  }

  void counter_rows(const Process& p, const char* sql) {
    SQLite::Statement q(store_.db(), sql);
    q.bind(1, p.view.trace_id);
    while (q.executeStep()) {
      JsonText& t = w_.begin();
      std::string name = q.getColumn(2).getString();
      if (auto d = opt(q.getColumn(0))) name = "GPU " + std::to_string(*d) + " " + name;
      t.raw("{\"ph\":\"C\",\"name\":").str(name).raw(",\"pid\":").num(p.pid);
      t.raw(",\"ts\":").us(job_ns(p, q.getColumn(1).getInt64())).raw(",\"args\":{\"value\":").real(q.getColumn(3).getDouble());
      t.raw("}}");
      w_.end();
    }
  }

  void ranges(const Process& p) {
    // NVTX ranges (nsys) that derivation made framework ops are written as cpu_op under the op's
    // name, so a re-import derives the same ops; the others are user annotations.
    std::string sql =
        "SELECT a.id, a.pid, a.tid, a.start_ns, a.dur_ns, s.value, a.kind, a.domain, a.device_id, a.external_id, "
        "a.sequence_number, a.fwd_thread_id, d.value, ty.value, c.value, m.value, "
        "(SELECT os.value FROM _op o JOIN string os ON os.id = o.name_id WHERE o.range_id = a.id AND o.trace_id = a.trace_id LIMIT 1) "
        "FROM _range a JOIN string s ON s.id = a.name_id "
        "LEFT JOIN string d ON d.id = a.input_dims_id LEFT JOIN string ty ON ty.id = a.input_types_id "
        "LEFT JOIN string c ON c.id = a.call_stack_id LEFT JOIN string m ON m.id = a.module_id WHERE (" +
        host_filter(p.view, "a") + ") OR (" + gpu_filter(p.view, "a") + " AND a.pid IS NULL AND a.device_id IS NOT NULL) ORDER BY a.id";
    SQLite::Statement q(store_.db(), sql);
    while (q.executeStep()) {
      auto pid = opt(q.getColumn(1)), tid = opt(q.getColumn(2)), device = opt(q.getColumn(8));
      std::string kind = q.getColumn(6).getString();
      std::string name = q.getColumn(5).getString();
      std::string cat;
      std::optional<int64_t> out_tid;
      bool gpu_side = !pid && device;
      if (gpu_side) {
        auto it = p.gpu.find({*device, tid.value_or(-1)});
        if (it == p.gpu.end()) continue;
        out_tid = it->second;
        cat = kind == "gpu_user_annotation" ? "gpu_user_annotation" : q.getColumn(7).isNull() ? "gpu_user_annotation" : q.getColumn(7).getString();
      } else {
        if (!pid || !tid) continue;
        auto it = p.host.find({*pid, *tid});
        if (it == p.host.end()) continue;
        out_tid = it->second;
        if (kind == "cpu_op") cat = "cpu_op";
        else if (kind == "python_function") cat = "python_function";
        else if (kind == "nvtx" && !q.getColumn(16).isNull()) {
          cat = "cpu_op";
          name = q.getColumn(16).getString();
        } else if (kind == "other" && !q.getColumn(7).isNull()) cat = q.getColumn(7).getString();
        else cat = "user_annotation";
      }
      JsonText& t = w_.begin();
      t.raw("{\"ph\":\"X\",\"cat\":").str(cat).raw(",\"name\":").str(name);
      t.raw(",\"pid\":").num(p.pid).raw(",\"tid\":").num(*out_tid);
      t.raw(",\"ts\":").us(job_ns(p, q.getColumn(3).getInt64())).raw(",\"dur\":").us(q.getColumn(4).getInt64());
      t.raw(",\"args\":{");
      bool first = true;
      auto field = [&](const char* key) -> JsonText& {
        t.raw(first ? "\"" : ",\"").raw(key).raw("\":");
        first = false;
        return t;
      };
      if (gpu_side) {
        field("device").num(*device);
        if (tid) field("stream").num(*tid);
      }
      if (auto v = opt(q.getColumn(9))) field("External id").num(*v + p.id_base);
      if (auto v = opt(q.getColumn(10))) field("Sequence number").num(*v);
      if (auto v = opt(q.getColumn(11))) field("Fwd thread id").num(*v);
      for (auto [col, key] : {std::pair{12, "Input Dims"}, std::pair{13, "Input type"}}) {
        if (q.getColumn(col).isNull()) continue;
        std::string text = q.getColumn(col).getString();
        // Stored as the JSON text of the recorded array: written back as that array when it is one.
        if (!text.empty() && text.front() == '[' && nlohmann::json::accept(text)) field(key).raw(text);
        else field(key).str(text);
      }
      if (!q.getColumn(14).isNull()) field("Call stack").str(q.getColumn(14).getString());
      if (!q.getColumn(15).isNull()) field("Module Hierarchy").str(q.getColumn(15).getString());
      if (kind == "nvtx" && !q.getColumn(7).isNull()) field("domain").str(q.getColumn(7).getString());
      t.raw("}}");
      w_.end();
    }
  }

  void api_calls(const Process& p) {
    std::string sql =
        "SELECT a.pid, a.tid, a.start_ns, a.dur_ns, s.value, a.kind, a.correlation_id, a.external_id "
        "FROM _api_call a JOIN string s ON s.id = a.name_id WHERE " +
        host_filter(p.view, "a") + " ORDER BY a.id";
    SQLite::Statement q(store_.db(), sql);
    while (q.executeStep()) {
      auto pid = opt(q.getColumn(0)), tid = opt(q.getColumn(1));
      if (!pid || !tid) continue;
      auto it = p.host.find({*pid, *tid});
      if (it == p.host.end()) continue;
      JsonText& t = w_.begin();
      t.raw("{\"ph\":\"X\",\"cat\":\"").raw(api_category(q.getColumn(5).getString())).raw("\",\"name\":").str(q.getColumn(4).getString());
      t.raw(",\"pid\":").num(p.pid).raw(",\"tid\":").num(it->second);
      t.raw(",\"ts\":").us(job_ns(p, q.getColumn(2).getInt64())).raw(",\"dur\":").us(q.getColumn(3).getInt64());
      t.raw(",\"args\":{");
      bool first = true;
      if (auto v = opt(q.getColumn(6))) {
        t.raw("\"correlation\":").num(*v + p.id_base);
        first = false;
      }
      if (auto v = opt(q.getColumn(7))) t.raw(first ? "" : ",").raw("\"External id\":").num(*v + p.id_base);
      t.raw("}}");
      w_.end();
    }
  }

  // Kernels, copies and memsets on their stream's track, each with a flow arrow from the call
  // that launched it (the derived api_call_id link).
  void gpu_work(const Process& p, const std::string& what) {
    std::string cols;
    if (what == "kernel")
      cols = "s.value, a.grid_x, a.grid_y, a.grid_z, a.block_x, a.block_y, a.block_z, a.registers_per_thread, "
             "a.shared_memory_bytes, NULL, NULL";
    else if (what == "memcpy")
      cols = "a.kind, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, a.src_kind, a.dst_kind";
    else
      cols = "a.mem_kind, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL";
    std::string sql = "SELECT a.device_id, a.stream_id, a.start_ns, a.dur_ns, a.correlation_id, a.external_id, " +
                      std::string(what == "kernel" ? "NULL" : "a.bytes") + ", api.pid, api.tid, api.start_ns, " + cols +
                      " FROM _" + what + " a " + (what == "kernel" ? "JOIN string s ON s.id = a.name_id " : "") +
                      "LEFT JOIN _api_call api ON api.id = a.api_call_id WHERE " + gpu_filter(p.view, "a") + " ORDER BY a.id";
    SQLite::Statement q(store_.db(), sql);
    const char* cat = what == "kernel" ? "kernel" : what == "memcpy" ? "gpu_memcpy" : "gpu_memset";
    while (q.executeStep()) {
      auto device = opt(q.getColumn(0)), stream = opt(q.getColumn(1));
      auto it = p.gpu.find({device.value_or(-1), stream.value_or(-1)});
      if (it == p.gpu.end()) continue;
      int64_t start = q.getColumn(2).getInt64();
      std::string name;
      if (what == "kernel") name = q.getColumn(10).getString();
      else if (what == "memcpy") {
        auto src = q.getColumn(19).isNull() ? std::nullopt : std::optional<std::string>(q.getColumn(19).getString());
        auto dst = q.getColumn(20).isNull() ? std::nullopt : std::optional<std::string>(q.getColumn(20).getString());
        name = memcpy_name(q.getColumn(10).getString(), src, dst);
      } else {
        name = q.getColumn(10).isNull() ? "Memset" : "Memset (" + std::string(memory_kind_text(q.getColumn(10).getString())) + ")";
      }
      JsonText& t = w_.begin();
      t.raw("{\"ph\":\"X\",\"cat\":\"").raw(cat).raw("\",\"name\":").str(name);
      t.raw(",\"pid\":").num(p.pid).raw(",\"tid\":").num(it->second);
      t.raw(",\"ts\":").us(job_ns(p, start)).raw(",\"dur\":").us(q.getColumn(3).getInt64());
      t.raw(",\"args\":{\"device\":").num(device.value_or(-1));
      if (stream) t.raw(",\"stream\":").num(*stream);
      if (auto v = opt(q.getColumn(4))) t.raw(",\"correlation\":").num(*v + p.id_base);
      if (auto v = opt(q.getColumn(5))) t.raw(",\"External id\":").num(*v + p.id_base);
      if (auto v = opt(q.getColumn(6))) t.raw(",\"bytes\":").num(*v);
      if (what == "kernel") {
        if (!q.getColumn(11).isNull())
          t.raw(",\"grid\":[").num(q.getColumn(11).getInt64()).raw(",").num(q.getColumn(12).getInt64()).raw(",").num(q.getColumn(13).getInt64()).raw("]");
        if (!q.getColumn(14).isNull())
          t.raw(",\"block\":[").num(q.getColumn(14).getInt64()).raw(",").num(q.getColumn(15).getInt64()).raw(",").num(q.getColumn(16).getInt64()).raw("]");
        if (auto v = opt(q.getColumn(17))) t.raw(",\"registers per thread\":").num(*v);
        if (auto v = opt(q.getColumn(18))) t.raw(",\"shared memory\":").num(*v);
      }
      t.raw("}}");
      w_.end();
      auto api_pid = opt(q.getColumn(7)), api_tid = opt(q.getColumn(8)), api_start = opt(q.getColumn(9));
      if (!api_pid || !api_tid || !api_start) continue;
      auto host = p.host.find({*api_pid, *api_tid});
      if (host == p.host.end()) continue;
      int64_t id = ++flows_;
      JsonText& s = w_.begin();
      s.raw("{\"ph\":\"s\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":").num(id).raw(",\"pid\":").num(p.pid);
      s.raw(",\"tid\":").num(host->second).raw(",\"ts\":").us(job_ns(p, *api_start)).raw("}");
      w_.end();
      JsonText& f = w_.begin();
      f.raw("{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":").num(id).raw(",\"pid\":").num(p.pid);
      f.raw(",\"tid\":").num(it->second).raw(",\"ts\":").us(job_ns(p, start)).raw("}");
      w_.end();
    }
  }

  void syncs(const Process& p) {
    SQLite::Statement q(store_.db(), "SELECT a.device_id, a.stream_id, a.start_ns, a.dur_ns, a.kind, a.correlation_id FROM sync_event a WHERE " +
                                         gpu_filter(p.view, "a") + " ORDER BY a.id");
    while (q.executeStep()) {
      auto device = opt(q.getColumn(0)), stream = opt(q.getColumn(1));
      auto it = p.gpu.find({device.value_or(-1), stream.value_or(-1)});
      if (it == p.gpu.end()) continue;
      JsonText& t = w_.begin();
      t.raw("{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"").raw(sync_name(q.getColumn(4).getString())).raw("\"");
      t.raw(",\"pid\":").num(p.pid).raw(",\"tid\":").num(it->second);
      t.raw(",\"ts\":").us(job_ns(p, q.getColumn(2).getInt64())).raw(",\"dur\":").us(q.getColumn(3).getInt64());
      t.raw(",\"args\":{\"device\":").num(device.value_or(-1)).raw(",\"stream\":").num(stream.value_or(-1));
      if (auto v = opt(q.getColumn(5))) t.raw(",\"correlation\":").num(*v + p.id_base);
      t.raw("}}");
      w_.end();
    }
  }

  void finding_slices() {
    std::vector<RankView> views;
    for (const auto& q : procs_) views.push_back(q.view);
    FindingPlacer placer(store_, views);
    int64_t index = 0;
    for (const auto& f : findings_) {
      ++index;
      auto place = placer.place(f);
      if (!place) return;
      const Process* p = &procs_[place->rank_index];
      const int64_t start = place->start_ns, end = place->end_ns;
      int64_t tid = kFindingTid + index;
      meta(*p, tid, "thread", "proflint finding " + std::to_string(index) + ": " + f.id, 1 + index);
      JsonText& t = w_.begin();
      t.raw("{\"ph\":\"X\",\"cat\":\"proflint\",\"name\":").str(f.id);
      t.raw(",\"pid\":").num(p->pid).raw(",\"tid\":").num(tid);
      t.raw(",\"ts\":").us(start).raw(",\"dur\":").us(std::max<int64_t>(end - start, 0));
      t.raw(",\"args\":{\"position\":").num(index).raw(",\"id\":").str(f.id).raw(",\"title\":").str(f.title);
      t.raw(",\"severity\":").str(std::string(severity_name(f.effective_severity)));
      t.raw(",\"estimated_savings_ns\":").num(f.estimated_savings_ns);
      t.raw(",\"savings_share\":").real(f.savings_share);
      t.raw(",\"confidence\":").real(f.confidence);
      t.raw(",\"diagnostic\":").raw(f.diagnostic ? "true" : "false");
      if (f.scope.device_id) t.raw(",\"device\":").num(*f.scope.device_id);
      if (f.scope.iter_first) t.raw(",\"iter_first\":").num(*f.scope.iter_first);
      if (f.scope.iter_last) t.raw(",\"iter_last\":").num(*f.scope.iter_last);
      t.raw(",\"problem\":").str(f.problem).raw(",\"recommendation\":").str(f.recommendation);
      t.raw(",\"evidence\":").raw(f.evidence.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
      t.raw("}}");
      w_.end();
    }
  }

  Store& store_;
  const std::vector<Finding>& findings_;
  Writer w_;
  std::vector<Process> procs_;
  int64_t flows_ = 0;
};

}  // namespace

ChromeExportStats write_chrome_trace(Store& store, const std::vector<Finding>& findings, std::ostream& out) {
  store.create_report_indexes();  // op_by_range: the op of each range
  return ChromeExporter(store, findings, out).run();
}

}  // namespace proflint::exporter
