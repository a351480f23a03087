// engine/store/writer.cpp — batched inserts with the sqlite3 C API (the hot path of import).
#include "engine/store/writer.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <vector>

#include "engine/common/error.hpp"

namespace proflint {

namespace {

// A prepared INSERT reused for every row; binds are 1-based in column order.
class Insert {
 public:
  Insert(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr) != SQLITE_OK)
      throw Error(std::string("internal: cannot prepare insert: ") + sqlite3_errmsg(db));
  }
  ~Insert() { sqlite3_finalize(stmt_); }
  Insert(const Insert&) = delete;
  Insert& operator=(const Insert&) = delete;

  Insert& i64(int64_t v) { sqlite3_bind_int64(stmt_, ++col_, v); return *this; }
  Insert& i64(const opt_i64& v) {
    ++col_;
    if (v) sqlite3_bind_int64(stmt_, col_, *v); else sqlite3_bind_null(stmt_, col_);
    return *this;
  }
  Insert& real(double v) { sqlite3_bind_double(stmt_, ++col_, v); return *this; }
  Insert& text(std::string_view v) {
    sqlite3_bind_text(stmt_, ++col_, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Insert& text(const std::string& v) { return text(std::string_view(v)); }
  Insert& text(const char* v) { return text(std::string_view(v)); }
  Insert& text(const std::optional<std::string>& v) {
    if (v) return text(std::string_view(*v));
    sqlite3_bind_null(stmt_, ++col_);
    return *this;
  }
  Insert& null() { sqlite3_bind_null(stmt_, ++col_); return *this; }
  void run() {
    int rc = sqlite3_step(stmt_);
    sqlite3_reset(stmt_);
    col_ = 0;
    if (rc != SQLITE_DONE) throw Error(std::string("internal: insert failed: ") + sqlite3_errmsg(db_));
  }

 private:
  sqlite3* db_;
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
        flow_ins(h, "INSERT INTO flow(trace_id, kind, flow_id, src_pid, src_tid, src_ts_ns, dst_pid, dst_tid, dst_ts_ns) VALUES (?,?,?,?,?,?,?,?,?)"),
        memory_ins(h, "INSERT INTO memory_sample(trace_id, device_id, ts_ns, allocated_bytes, reserved_bytes, delta_bytes) VALUES (?,?,?,?,?,?)"),
        counter_ins(h, "INSERT INTO _counter(trace_id, device_id, ts_ns, name_id, value) VALUES (?,?,?,?,?)"),
        sync_ins(h, "INSERT INTO sync_event(trace_id, pid, tid, device_id, stream_id, start_ns, dur_ns, kind, correlation_id) VALUES (?,?,?,?,?,?,?,?,?)") {}

  sqlite3* db;
  Insert string_ins, device_ins, process_ins, thread_ins, stream_ins, kernel_ins, memcpy_ins, memset_ins, api_ins,
      range_ins, flow_ins, memory_ins, counter_ins, sync_ins;
  std::unordered_map<std::string, int64_t, SvHash, std::equal_to<>> strings;
  int64_t next_string_id = 1;
  std::map<std::string, Issue, std::less<>> issues;
  TraceInfo info;
  bool committed = false;
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
}

StoreWriter::~StoreWriter() {
  if (impl_ && !impl_->committed) sqlite3_exec(impl_->db, "ROLLBACK", nullptr, nullptr, nullptr);
}

int64_t StoreWriter::intern(std::string_view text) {
  auto it = impl_->strings.find(text);
  if (it != impl_->strings.end()) return it->second;
  int64_t id = impl_->next_string_id++;
  impl_->strings.emplace(std::string(text), id);
  impl_->string_ins.i64(id).text(text).run();
  return id;
}

void StoreWriter::see_interval(int64_t start, int64_t dur) {
  min_ts_ = std::min(min_ts_, start);
  max_ts_ = std::max(max_ts_, start + std::max<int64_t>(dur, 0));
}

void StoreWriter::add_device(const DeviceRow& r) {
  impl_->device_ins.i64(trace_id_).i64(r.device_id).text(r.name).text(r.vendor).i64(r.compute_major).i64(r.compute_minor)
      .i64(r.sm_count).i64(r.memory_bytes).run();
}

void StoreWriter::add_process(int64_t pid, std::string_view name) {
  impl_->process_ins.i64(trace_id_).i64(pid).text(name).run();
}

void StoreWriter::add_thread(int64_t pid, int64_t tid, std::string_view name) {
  impl_->thread_ins.i64(trace_id_).i64(pid).i64(tid).text(name).run();
}

void StoreWriter::add_stream(int64_t device_id, int64_t stream_id, std::optional<std::string_view> name) {
  auto& ins = impl_->stream_ins.i64(trace_id_).i64(device_id).i64(stream_id);
  if (name) ins.text(*name); else ins.null();
  ins.run();
}

void StoreWriter::add_kernel(const KernelRow& r) {
  see_interval(r.start_ns, r.dur_ns);
  ++rows_;
  impl_->kernel_ins.i64(trace_id_).i64(r.device_id).i64(r.stream_id).i64(r.pid).i64(r.start_ns).i64(r.dur_ns)
      .i64(intern(r.name)).i64(r.correlation_id).i64(r.external_id).i64(r.grid_x).i64(r.grid_y).i64(r.grid_z)
      .i64(r.block_x).i64(r.block_y).i64(r.block_z).i64(r.registers_per_thread).i64(r.shared_memory_bytes).run();
}

void StoreWriter::add_memcpy(const MemcpyRow& r) {
  see_interval(r.start_ns, r.dur_ns);
  ++rows_;
  impl_->memcpy_ins.i64(trace_id_).i64(r.device_id).i64(r.stream_id).i64(r.pid).i64(r.start_ns).i64(r.dur_ns).i64(r.bytes)
      .text(r.kind).text(r.src_kind).text(r.dst_kind).i64(r.correlation_id).i64(r.external_id).run();
}

void StoreWriter::add_memset(const MemsetRow& r) {
  see_interval(r.start_ns, r.dur_ns);
  ++rows_;
  impl_->memset_ins.i64(trace_id_).i64(r.device_id).i64(r.stream_id).i64(r.pid).i64(r.start_ns).i64(r.dur_ns).i64(r.bytes)
      .text(r.mem_kind).i64(r.correlation_id).i64(r.external_id).run();
}

void StoreWriter::add_api_call(const ApiCallRow& r) {
  see_interval(r.start_ns, r.dur_ns);
  ++rows_;
  impl_->api_ins.i64(trace_id_).i64(r.pid).i64(r.tid).i64(r.start_ns).i64(r.dur_ns).i64(intern(r.name)).text(r.kind)
      .i64(r.correlation_id).i64(r.external_id).run();
}

void StoreWriter::add_range(const RangeRow& r) {
  see_interval(r.start_ns, r.dur_ns);
  ++rows_;
  auto opt_intern = [&](const std::optional<std::string>& s) -> opt_i64 {
    if (!s) return std::nullopt;
    return intern(*s);
  };
  impl_->range_ins.i64(trace_id_).i64(r.pid).i64(r.tid).i64(r.start_ns).i64(r.dur_ns).i64(intern(r.name)).text(r.kind)
      .text(r.domain).i64(r.device_id).i64(r.external_id).i64(r.sequence_number).i64(r.fwd_thread_id)
      .i64(opt_intern(r.input_dims)).i64(opt_intern(r.input_types)).i64(opt_intern(r.call_stack)).i64(opt_intern(r.module))
      .run();
}

void StoreWriter::add_flow(const FlowRow& r) {
  ++rows_;
  impl_->flow_ins.i64(trace_id_).text(r.kind).i64(r.flow_id).i64(r.src_pid).i64(r.src_tid).i64(r.src_ts_ns).i64(r.dst_pid)
      .i64(r.dst_tid).i64(r.dst_ts_ns).run();
}

void StoreWriter::add_memory_sample(const MemorySampleRow& r) {
  see_interval(r.ts_ns, 0);
  ++rows_;
  impl_->memory_ins.i64(trace_id_).i64(r.device_id).i64(r.ts_ns).i64(r.allocated_bytes).i64(r.reserved_bytes).i64(r.delta_bytes).run();
}

void StoreWriter::add_counter(const CounterRow& r) {
  ++rows_;
  impl_->counter_ins.i64(trace_id_).i64(r.device_id).i64(r.ts_ns).i64(intern(r.name)).real(r.value).run();
}

void StoreWriter::add_sync_event(const SyncEventRow& r) {
  see_interval(r.start_ns, r.dur_ns);
  ++rows_;
  impl_->sync_ins.i64(trace_id_).i64(r.pid).i64(r.tid).i64(r.device_id).i64(r.stream_id).i64(r.start_ns).i64(r.dur_ns)
      .text(r.kind).i64(r.correlation_id).run();
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
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(impl_->db, "UPDATE trace SET rank=COALESCE(?, rank), world_size=COALESCE(?, world_size), "
                                "comm_backend=COALESCE(?, comm_backend) WHERE trace_id=?", -1, &st, nullptr);
  if (rank) sqlite3_bind_int64(st, 1, *rank);
  if (world_size) sqlite3_bind_int64(st, 2, *world_size);
  if (backend) sqlite3_bind_text(st, 3, backend->c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 4, trace_id_);
  sqlite3_step(st);
  sqlite3_finalize(st);
}

void StoreWriter::set_metadata(std::string_view column, std::string_view value) {
  static const char* const allowed[] = {"format_version", "tool_version", "framework", "vendor", "host_name", "clock"};
  if (std::none_of(std::begin(allowed), std::end(allowed), [&](const char* a) { return column == a; }))
    throw Error("internal: set_metadata on unknown trace column " + std::string(column));
  std::string sql = "UPDATE trace SET " + std::string(column) + "=? WHERE trace_id=?";
  sqlite3_stmt* st = nullptr;
  sqlite3_prepare_v2(impl_->db, sql.c_str(), -1, &st, nullptr);
  sqlite3_bind_text(st, 1, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  sqlite3_bind_int64(st, 2, trace_id_);
  sqlite3_step(st);
  sqlite3_finalize(st);
}

void StoreWriter::commit() {
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
