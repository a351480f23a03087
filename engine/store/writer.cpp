// engine/store/writer.cpp — batched inserts with the sqlite3 C API (the hot path of import).
//
// The importer's thread parses and interns; a second thread binds and steps the INSERTs. Rows go
// over in batches through a short bounded queue (memory stays a few batches, whatever the file),
// so on two cores parsing and SQLite overlap instead of taking turns. Only the writer thread
// touches the connection until commit(), which waits for it; its errors are rethrown to the
// importer at the next hand-over. An import of less than one batch needs no second thread: its
// rows are written at commit on the importer's thread.
#include "engine/store/writer.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <variant>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/common/import_issue_kinds.hpp"

namespace proflint {

namespace {

// A prepared INSERT reused for every row; binds are 1-based in column order.
class Insert {
 public:
  // Prepared on first use: a small import touches a few of the fourteen tables, and preparing
  // all of them was a large part of importing a trace of a few events (the fuzz targets).
  Insert(sqlite3* db, const char* sql) : db_(db), sql_(sql) {}
  ~Insert() { sqlite3_finalize(stmt_); }
  Insert(const Insert&) = delete;
  Insert& operator=(const Insert&) = delete;

  Insert& i64(int64_t v) { sqlite3_bind_int64(stmt(), ++col_, v); return *this; }
  Insert& i64(const opt_i64& v) {
    ++col_;
    if (v) sqlite3_bind_int64(stmt(), col_, *v); else sqlite3_bind_null(stmt(), col_);
    return *this;
  }
  Insert& real(double v) { sqlite3_bind_double(stmt(), ++col_, v); return *this; }
  Insert& text(std::string_view v) {
    sqlite3_bind_text(stmt(), ++col_, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Insert& text(const std::string& v) { return text(std::string_view(v)); }
  Insert& text(const char* v) { return text(std::string_view(v)); }
  Insert& text(const std::optional<std::string>& v) {
    if (v) return text(std::string_view(*v));
    sqlite3_bind_null(stmt(), ++col_);
    return *this;
  }
  Insert& null() { sqlite3_bind_null(stmt(), ++col_); return *this; }
  void run() {
    int rc = sqlite3_step(stmt());
    sqlite3_reset(stmt_);
    col_ = 0;
    if (rc != SQLITE_DONE) throw Error(std::string("internal: insert failed: ") + sqlite3_errmsg(db_));
  }

 private:
  sqlite3_stmt* stmt() {
    if (!stmt_ && sqlite3_prepare_v3(db_, sql_, -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr) != SQLITE_OK)
      throw Error(std::string("internal: cannot prepare insert: ") + sqlite3_errmsg(db_));
    return stmt_;
  }
  sqlite3* db_;
  const char* sql_;
  sqlite3_stmt* stmt_ = nullptr;
  int col_ = 0;
};

struct Issue {
  int64_t count = 0;
  std::string example, location;
};

// Transparent hashing so lookups by string_view do not allocate.
struct SvHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// What the importer thread hands to the writer thread. Text is interned before (ids only), except
// the short enum-like strings of memcpy/memset/sync rows, copied with the row.
struct StringCmd {
  int64_t id;
  std::string text;
};
struct KernelCmd {
  KernelRow row;
  int64_t name_id;
};
struct ApiCmd {
  ApiCallRow row;
  int64_t name_id;
};
struct RangeCmd {
  RangeRow row;  // its optional texts are moved out into the ids below
  int64_t name_id;
  opt_i64 input_dims_id, input_types_id, call_stack_id, module_id;
  std::shared_ptr<const CollectiveArgs> collective;  // rare: only collective calls carry it
};
struct CounterCmd {
  CounterRow row;
  int64_t name_id;
};
using Closure = std::function<void()>;  // rare statements (devices, threads, metadata)
using Cmd = std::variant<StringCmd, KernelCmd, MemcpyRow, MemsetRow, ApiCmd, RangeCmd, FlowRow, MemorySampleRow, CounterCmd,
                         SyncEventRow, Closure>;

constexpr size_t kBatchRows = 4096;
constexpr size_t kMaxQueuedBatches = 4;

}  // namespace

struct StoreWriter::Impl {
  explicit Impl(sqlite3* h)
      : db(h),
        string_ins(h, "INSERT INTO string(id, value) VALUES (?,?)"),
        device_ins(h, "INSERT OR REPLACE INTO device(trace_id, device_id, name, vendor, compute_major, compute_minor, sm_count, memory_bytes) VALUES (?,?,?,?,?,?,?,?)"),
        process_ins(h, "INSERT OR REPLACE INTO process(trace_id, pid, name) VALUES (?,?,?)"),
        thread_ins(h, "INSERT OR REPLACE INTO thread(trace_id, pid, tid, name) VALUES (?,?,?,?)"),
        stream_ins(h, "INSERT INTO stream(trace_id, device_id, stream_id, name) VALUES (?,?,?,?) "
                      "ON CONFLICT(trace_id, device_id, stream_id) DO UPDATE SET name=COALESCE(excluded.name, name)"),
        kernel_ins(h, "INSERT INTO _kernel(trace_id, device_id, stream_id, pid, start_ns, dur_ns, name_id, correlation_id, external_id, "
                      "grid_x, grid_y, grid_z, block_x, block_y, block_z, registers_per_thread, shared_memory_bytes) "
                      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"),
        memcpy_ins(h, "INSERT INTO _memcpy(trace_id, device_id, stream_id, pid, start_ns, dur_ns, bytes, kind, src_kind, dst_kind, correlation_id, external_id) "
                      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"),
        memset_ins(h, "INSERT INTO _memset(trace_id, device_id, stream_id, pid, start_ns, dur_ns, bytes, mem_kind, correlation_id, external_id) "
                      "VALUES (?,?,?,?,?,?,?,?,?,?)"),
        api_ins(h, "INSERT INTO _api_call(trace_id, pid, tid, start_ns, dur_ns, name_id, kind, correlation_id, external_id) VALUES (?,?,?,?,?,?,?,?,?)"),
        range_ins(h, "INSERT INTO _range(trace_id, pid, tid, start_ns, dur_ns, name_id, kind, domain, device_id, external_id, sequence_number, "
                     "fwd_thread_id, input_dims_id, input_types_id, call_stack_id, module_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"),
        collective_ins(h, "INSERT INTO collective_arg(range_id, trace_id, collective_name, process_group, pg_desc, seq, in_nelems, "
                          "out_nelems, dtype, group_size, group_ranks) VALUES (?,?,?,?,?,?,?,?,?,?,?)"),
        flow_ins(h, "INSERT INTO flow(trace_id, kind, flow_id, src_pid, src_tid, src_ts_ns, dst_pid, dst_tid, dst_ts_ns) VALUES (?,?,?,?,?,?,?,?,?)"),
        memory_ins(h, "INSERT INTO memory_sample(trace_id, device_id, ts_ns, allocated_bytes, reserved_bytes, delta_bytes) VALUES (?,?,?,?,?,?)"),
        counter_ins(h, "INSERT INTO _counter(trace_id, device_id, ts_ns, name_id, value) VALUES (?,?,?,?,?)"),
        sync_ins(h, "INSERT INTO sync_event(trace_id, pid, tid, device_id, stream_id, start_ns, dur_ns, kind, correlation_id) VALUES (?,?,?,?,?,?,?,?,?)") {}

  sqlite3* db;
  Insert string_ins, device_ins, process_ins, thread_ins, stream_ins, kernel_ins, memcpy_ins, memset_ins, api_ins,
      range_ins, collective_ins, flow_ins, memory_ins, counter_ins, sync_ins;
  std::unordered_map<std::string, int64_t, SvHash, std::equal_to<>> strings;
  int64_t next_string_id = 1;
  std::map<std::string, Issue, std::less<>> issues;
  TraceInfo info;
  bool committed = false;

  // ---- the writer thread ----
  std::vector<Cmd> batch;  // filled by the importer thread
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::vector<Cmd>> queue;
  bool busy = false, stopping = false;
  std::exception_ptr error;
  std::thread worker;

  // The writer thread starts with the first full batch: an import of fewer rows writes them on
  // the importer's thread at commit (drain), without a thread or a batch of kBatchRows reserved
  // (~1.6 MB: most of the cost of importing a trace of a few events).
  void start() {}
  void push(Cmd&& cmd) {
    batch.push_back(std::move(cmd));
    if (batch.size() >= kBatchRows) hand_over();
  }
  void hand_over() {
    if (!worker.joinable()) worker = std::thread([this] { work(); });
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return queue.size() < kMaxQueuedBatches || error; });
    if (error) std::rethrow_exception(error);
    queue.push_back(std::move(batch));
    batch = {};
    batch.reserve(kBatchRows);
    changed.notify_all();
  }
  // Everything handed over is written; after this the importer thread may use the connection.
  void drain() {
    if (!worker.joinable()) {  // fewer rows than one batch: no thread was started
      for (auto& cmd : batch) std::visit([this](auto& c) { write(c); }, cmd);
      batch.clear();
      return;
    }
    if (!batch.empty()) hand_over();
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return (queue.empty() && !busy) || error; });
    if (error) std::rethrow_exception(error);
  }
  void stop() {
    if (!worker.joinable()) return;
    {
      std::lock_guard lock(mutex);
      stopping = true;
      changed.notify_all();
    }
    worker.join();
  }
  void work() {
    for (;;) {
      std::vector<Cmd> next;
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return !queue.empty() || stopping; });
        if (queue.empty() || error) return;  // stopping (commit drained first; a rollback discards)
        next = std::move(queue.front());
        queue.pop_front();
        busy = true;
        changed.notify_all();
      }
      try {
        for (auto& cmd : next) std::visit([this](auto& c) { write(c); }, cmd);
      } catch (...) {
        std::lock_guard lock(mutex);
        error = std::current_exception();
      }
      std::lock_guard lock(mutex);
      busy = false;
      changed.notify_all();
    }
  }

  void write(const StringCmd& c) { string_ins.i64(c.id).text(c.text).run(); }
  void write(const KernelCmd& c) {
    const KernelRow& r = c.row;
    kernel_ins.i64(trace_id).i64(r.device_id).i64(r.stream_id).i64(r.pid).i64(r.start_ns).i64(r.dur_ns).i64(c.name_id)
        .i64(r.correlation_id).i64(r.external_id).i64(r.grid_x).i64(r.grid_y).i64(r.grid_z).i64(r.block_x).i64(r.block_y)
        .i64(r.block_z).i64(r.registers_per_thread).i64(r.shared_memory_bytes).run();
  }
  void write(const MemcpyRow& r) {
    memcpy_ins.i64(trace_id).i64(r.device_id).i64(r.stream_id).i64(r.pid).i64(r.start_ns).i64(r.dur_ns).i64(r.bytes)
        .text(r.kind).text(r.src_kind).text(r.dst_kind).i64(r.correlation_id).i64(r.external_id).run();
  }
  void write(const MemsetRow& r) {
    memset_ins.i64(trace_id).i64(r.device_id).i64(r.stream_id).i64(r.pid).i64(r.start_ns).i64(r.dur_ns).i64(r.bytes)
        .text(r.mem_kind).i64(r.correlation_id).i64(r.external_id).run();
  }
  void write(const ApiCmd& c) {
    const ApiCallRow& r = c.row;
    api_ins.i64(trace_id).i64(r.pid).i64(r.tid).i64(r.start_ns).i64(r.dur_ns).i64(c.name_id).text(r.kind)
        .i64(r.correlation_id).i64(r.external_id).run();
  }
  void write(const RangeCmd& c) {
    const RangeRow& r = c.row;
    range_ins.i64(trace_id).i64(r.pid).i64(r.tid).i64(r.start_ns).i64(r.dur_ns).i64(c.name_id).text(r.kind)
        .text(r.domain).i64(r.device_id).i64(r.external_id).i64(r.sequence_number).i64(r.fwd_thread_id)
        .i64(c.input_dims_id).i64(c.input_types_id).i64(c.call_stack_id).i64(c.module_id).run();
    if (c.collective) {
      const CollectiveArgs& a = *c.collective;
      collective_ins.i64(sqlite3_last_insert_rowid(db)).i64(trace_id).text(a.collective_name).text(a.process_group)
          .text(a.pg_desc).i64(a.seq).i64(a.in_nelems).i64(a.out_nelems).text(a.dtype).i64(a.group_size)
          .text(a.group_ranks).run();
    }
  }
  void write(const FlowRow& r) {
    flow_ins.i64(trace_id).text(r.kind).i64(r.flow_id).i64(r.src_pid).i64(r.src_tid).i64(r.src_ts_ns).i64(r.dst_pid)
        .i64(r.dst_tid).i64(r.dst_ts_ns).run();
  }
  void write(const MemorySampleRow& r) {
    memory_ins.i64(trace_id).i64(r.device_id).i64(r.ts_ns).i64(r.allocated_bytes).i64(r.reserved_bytes).i64(r.delta_bytes).run();
  }
  void write(const CounterCmd& c) {
    counter_ins.i64(trace_id).i64(c.row.device_id).i64(c.row.ts_ns).i64(c.name_id).real(c.row.value).run();
  }
  void write(const SyncEventRow& r) {
    sync_ins.i64(trace_id).i64(r.pid).i64(r.tid).i64(r.device_id).i64(r.stream_id).i64(r.start_ns).i64(r.dur_ns)
        .text(r.kind).i64(r.correlation_id).run();
  }
  void write(const Closure& f) { f(); }

  int64_t trace_id = 0;
};

StoreWriter::StoreWriter(Store& store, const TraceInfo& info) {
  sqlite3* h = store.db().getHandle();
  if (sqlite3_exec(h, "BEGIN", nullptr, nullptr, nullptr) != SQLITE_OK)
    throw Error(std::string("internal: cannot begin import transaction: ") + sqlite3_errmsg(h));
  impl_ = std::make_unique<Impl>(h);
  impl_->info = info;
  // Strings may already exist (several traces in one store): continue after the largest id and
  // load the existing texts so interning stays unique.
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(h, "SELECT id, value FROM string", -1, &st, nullptr);
  while (sqlite3_step(st) == SQLITE_ROW) {
    int64_t id = sqlite3_column_int64(st, 0);
    const char* v = reinterpret_cast<const char*>(sqlite3_column_text(st, 1));
    impl_->strings.emplace(std::string(v ? v : "", static_cast<size_t>(sqlite3_column_bytes(st, 1))), id);
    impl_->next_string_id = std::max(impl_->next_string_id, id + 1);
  }
  sqlite3_finalize(st);

  Insert trace_ins(h, "INSERT INTO trace(path, format, format_version, tool_version, framework, vendor, rank, world_size, comm_backend, "
                      "host_name, clock, file_bytes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
  trace_ins.text(info.path).text(info.format).text(info.format_version).text(info.tool_version).text(info.framework)
      .text(info.vendor).i64(info.rank).i64(info.world_size).text(info.comm_backend).text(info.host_name).text(info.clock)
      .i64(info.file_bytes).run();
  trace_id_ = sqlite3_last_insert_rowid(h);
  impl_->trace_id = trace_id_;
  impl_->start();
}

StoreWriter::~StoreWriter() {
  if (!impl_) return;
  impl_->stop();  // rows still queued are dropped: they belong to the rolled-back import
  if (!impl_->committed) sqlite3_exec(impl_->db, "ROLLBACK", nullptr, nullptr, nullptr);
}

int64_t StoreWriter::intern(std::string_view text) {
  auto it = impl_->strings.find(text);
  if (it != impl_->strings.end()) return it->second;
  int64_t id = impl_->next_string_id++;
  impl_->strings.emplace(std::string(text), id);
  impl_->push(StringCmd{id, std::string(text)});
  return id;
}

std::string_view StoreWriter::bounded_name(std::string_view name, std::string_view table) {
  if (name.size() <= kMaxNameBytes) return name;
  size_t cut = kMaxNameBytes;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  add_issue(std::string(table) + "_name_truncated", name.substr(0, 200),
            std::string("a ") + std::string(table) + " name of " + std::to_string(name.size()) + " bytes, kept " +
                std::to_string(cut));
  return name.substr(0, cut);
}

bool StoreWriter::admit_interval(int64_t start, int64_t dur, std::string_view table) {
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
  min_ts_ = std::min(min_ts_, start);
  max_ts_ = std::max(max_ts_, start + dur);
  return true;
}

opt_i64 StoreWriter::bounded_bytes(opt_i64 bytes, std::string_view table) {
  if (!bytes || (*bytes >= 0 && *bytes <= kMaxTransferBytes)) return bytes;
  add_issue(std::string(table) + "_bytes_out_of_range", std::to_string(*bytes) + " bytes",
            "outside 0..2^50 (1 PiB) for one " + std::string(table) + "; byte count dropped");
  return std::nullopt;
}

void StoreWriter::add_device(const DeviceRow& r) {
  impl_->push(Closure([impl = impl_.get(), r] {
    impl->device_ins.i64(impl->trace_id).i64(r.device_id).text(r.name).text(r.vendor).i64(r.compute_major).i64(r.compute_minor)
        .i64(r.sm_count).i64(r.memory_bytes).run();
  }));
}

void StoreWriter::add_process(int64_t pid, std::string_view name) {
  // A null string_view (no name) is stored as NULL, as before.
  std::optional<std::string> n;
  if (name.data()) n.emplace(name);
  impl_->push(Closure([impl = impl_.get(), pid, n = std::move(n)] {
    auto& ins = impl->process_ins.i64(impl->trace_id).i64(pid);
    if (n) ins.text(*n); else ins.null();
    ins.run();
  }));
}

void StoreWriter::add_thread(int64_t pid, int64_t tid, std::string_view name) {
  std::optional<std::string> n;
  if (name.data()) n.emplace(name);
  impl_->push(Closure([impl = impl_.get(), pid, tid, n = std::move(n)] {
    auto& ins = impl->thread_ins.i64(impl->trace_id).i64(pid).i64(tid);
    if (n) ins.text(*n); else ins.null();
    ins.run();
  }));
}

void StoreWriter::add_stream(int64_t device_id, int64_t stream_id, std::optional<std::string_view> name) {
  std::optional<std::string> n;
  if (name) n.emplace(*name);
  impl_->push(Closure([impl = impl_.get(), device_id, stream_id, n = std::move(n)] {
    auto& ins = impl->stream_ins.i64(impl->trace_id).i64(device_id).i64(stream_id);
    if (n) ins.text(*n); else ins.null();
    ins.run();
  }));
}

bool StoreWriter::add_kernel(const KernelRow& r) {
  if (!admit_interval(r.start_ns, r.dur_ns, "kernel")) return false;
  ++rows_;
  int64_t name_id = intern(bounded_name(r.name, "kernel"));
  KernelCmd c{r, name_id};
  c.row.name = {};  // points into the importer's buffers
  impl_->push(std::move(c));
  return true;
}

bool StoreWriter::add_memcpy(const MemcpyRow& r) {
  if (!admit_interval(r.start_ns, r.dur_ns, "memcpy")) return false;
  ++rows_;
  MemcpyRow row = r;
  row.bytes = bounded_bytes(r.bytes, "memcpy");
  impl_->push(std::move(row));
  return true;
}

bool StoreWriter::add_memset(const MemsetRow& r) {
  if (!admit_interval(r.start_ns, r.dur_ns, "memset")) return false;
  ++rows_;
  MemsetRow row = r;
  row.bytes = bounded_bytes(r.bytes, "memset");
  impl_->push(std::move(row));
  return true;
}

bool StoreWriter::add_api_call(const ApiCallRow& r) {
  if (!admit_interval(r.start_ns, r.dur_ns, "api_call")) return false;
  ++rows_;
  int64_t name_id = intern(bounded_name(r.name, "api_call"));
  ApiCmd c{r, name_id};
  c.row.name = {};
  impl_->push(std::move(c));
  return true;
}

bool StoreWriter::add_range(const RangeRow& r) {
  if (!admit_interval(r.start_ns, r.dur_ns, "range")) return false;
  ++rows_;
  auto opt_intern = [&](const std::optional<std::string>& s) -> opt_i64 {
    if (!s) return std::nullopt;
    return intern(*s);
  };
  RangeCmd c;
  c.name_id = intern(bounded_name(r.name, "range"));
  c.input_dims_id = opt_intern(r.input_dims);
  c.input_types_id = opt_intern(r.input_types);
  c.call_stack_id = opt_intern(r.call_stack);
  c.module_id = opt_intern(r.module);
  c.row.pid = r.pid;
  c.row.tid = r.tid;
  c.row.start_ns = r.start_ns;
  c.row.dur_ns = r.dur_ns;
  c.row.kind = r.kind;
  c.row.domain = r.domain;
  c.row.device_id = r.device_id;
  c.row.external_id = r.external_id;
  c.row.sequence_number = r.sequence_number;
  c.row.fwd_thread_id = r.fwd_thread_id;
  if (r.collective) c.collective = std::make_shared<const CollectiveArgs>(*r.collective);
  impl_->push(std::move(c));
  return true;
}

void StoreWriter::add_flow(const FlowRow& r) {
  ++rows_;
  impl_->push(r);
}

void StoreWriter::add_memory_sample(const MemorySampleRow& r) {
  if (r.ts_ns < -kMaxAbsTimeNs || r.ts_ns > kMaxAbsTimeNs) {
    add_issue(import_issue::memory_sample_time_out_of_range, "a memory sample at " + std::to_string(r.ts_ns) + " ns",
              "beyond +-2^61 ns (73 years from the clock's zero); sample dropped");
    return;
  }
  min_ts_ = std::min(min_ts_, r.ts_ns);
  max_ts_ = std::max(max_ts_, r.ts_ns);
  ++rows_;
  impl_->push(r);
}

void StoreWriter::add_counter(const CounterRow& r) {
  ++rows_;
  int64_t name_id = intern(bounded_name(r.name, "counter"));
  CounterCmd c{r, name_id};
  c.row.name = {};
  impl_->push(std::move(c));
}

bool StoreWriter::add_sync_event(const SyncEventRow& r) {
  if (!admit_interval(r.start_ns, r.dur_ns, "sync_event")) return false;
  ++rows_;
  impl_->push(r);
  return true;
}

void StoreWriter::add_issue(std::string_view kind, std::string_view example, std::string_view location) {
  auto it = impl_->issues.find(kind);
  if (it == impl_->issues.end()) {
    Issue issue;
    issue.example = std::string(example.substr(0, 200));
    issue.location = std::string(location);
    it = impl_->issues.emplace(std::string(kind), std::move(issue)).first;
  }
  ++it->second.count;
}

int64_t StoreWriter::issue_count() const {
  int64_t n = 0;
  for (const auto& [kind, issue] : impl_->issues) n += issue.count;
  return n;
}

void StoreWriter::set_rank(opt_i64 rank, opt_i64 world_size, std::optional<std::string> backend) {
  impl_->push(Closure([impl = impl_.get(), rank, world_size, backend = std::move(backend)] {
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(impl->db, "UPDATE trace SET rank=COALESCE(?, rank), world_size=COALESCE(?, world_size), "
                                 "comm_backend=COALESCE(?, comm_backend) WHERE trace_id=?", -1, &st, nullptr);
    if (rank) sqlite3_bind_int64(st, 1, *rank);
    if (world_size) sqlite3_bind_int64(st, 2, *world_size);
    if (backend) sqlite3_bind_text(st, 3, backend->c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 4, impl->trace_id);
    sqlite3_step(st);
    sqlite3_finalize(st);
  }));
}

void StoreWriter::set_metadata(std::string_view column, std::string_view value) {
  static const char* const allowed[] = {"format_version", "tool_version", "framework", "vendor", "host_name", "clock"};
  if (std::none_of(std::begin(allowed), std::end(allowed), [&](const char* a) { return column == a; }))
    throw Error("internal: set_metadata on unknown trace column " + std::string(column));
  std::string sql = "UPDATE trace SET " + std::string(column) + "=? WHERE trace_id=?";
  impl_->push(Closure([impl = impl_.get(), sql = std::move(sql), v = std::string(value)] {
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(impl->db, sql.c_str(), -1, &st, nullptr);
    sqlite3_bind_text(st, 1, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, impl->trace_id);
    sqlite3_step(st);
    sqlite3_finalize(st);
  }));
}

void StoreWriter::commit() {
  impl_->drain();  // rethrows a failed insert
  impl_->stop();
  Insert issue_ins(impl_->db, "INSERT INTO import_issue(trace_id, kind, count, example, location) VALUES (?,?,?,?,?)");
  for (const auto& [kind, issue] : impl_->issues)
    issue_ins.i64(trace_id_).text(kind).i64(issue.count).text(issue.example).text(issue.location).run();
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(impl_->db, "UPDATE trace SET start_ns=?, end_ns=?, event_count=? WHERE trace_id=?", -1, &st, nullptr);
  if (min_ts_ <= max_ts_) {
    sqlite3_bind_int64(st, 1, min_ts_);
    sqlite3_bind_int64(st, 2, max_ts_);
  }
  sqlite3_bind_int64(st, 3, event_count_);
  sqlite3_bind_int64(st, 4, trace_id_);
  sqlite3_step(st);
  sqlite3_finalize(st);
  if (sqlite3_exec(impl_->db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK)
    throw Error(std::string("internal: cannot commit import: ") + sqlite3_errmsg(impl_->db));
  impl_->committed = true;
}

}  // namespace proflint
