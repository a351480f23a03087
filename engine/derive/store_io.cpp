// engine/derive/store_io.cpp — bulk reads and prepared-statement writes for one trace.
//
// Uses the sqlite3 C API directly: these loops touch every fact row, and SQLiteCpp's per-column
// objects (shared_ptr copies) cost more than SQLite itself here.
#include "engine/derive/store_io.hpp"

#include <SQLiteCpp/Database.h>
#include <sqlite3.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "engine/common/error.hpp"

namespace proflint {

namespace {

// One prepared statement; binds are 1-based, columns 0-based; kNone <-> NULL.
class Sql {
 public:
  Sql(Store& store, const char* sql) : Sql(store.db().getHandle(), sql) {}
  Sql(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db_, sql, -1, &st_, nullptr) != SQLITE_OK)
      throw Error(std::string("internal: derive cannot prepare SQL: ") + sqlite3_errmsg(db_));
  }
  ~Sql() { sqlite3_finalize(st_); }
  Sql(const Sql&) = delete;
  Sql& operator=(const Sql&) = delete;

  Sql& bind(int i, int64_t v) {
    if (v == kNone)
      sqlite3_bind_null(st_, i);
    else
      sqlite3_bind_int64(st_, i, v);
    return *this;
  }
  Sql& bind(int i, std::string_view v) {
    sqlite3_bind_text(st_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  // Next row: true while there is one.
  bool step() {
    int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw Error(std::string("internal: derive SQL failed: ") + sqlite3_errmsg(db_));
  }
  void run() {
    step();
    sqlite3_reset(st_);
  }
  void reset() { sqlite3_reset(st_); }
  int64_t i64(int col) const {
    return sqlite3_column_type(st_, col) == SQLITE_NULL ? kNone : sqlite3_column_int64(st_, col);
  }
  std::string text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st_, col));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(st_, col))) : std::string();
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* st_ = nullptr;
};

RangeKind parse_kind(const std::string& k) {
  if (k == "cpu_op") return RangeKind::cpu_op;
  if (k == "user_annotation") return RangeKind::user_annotation;
  if (k == "gpu_user_annotation") return RangeKind::gpu_user_annotation;
  if (k == "python_function") return RangeKind::python_function;
  if (k == "nvtx") return RangeKind::nvtx;
  return RangeKind::other;
}

int64_t end_of(int64_t start, int64_t dur) { return start + std::max<int64_t>(0, dur); }

// Gives every provisional string id (new op names) its real id, inserting missing texts.
std::unordered_map<int64_t, int64_t> resolve_new_strings(Store& store, const TraceData& t) {
  std::unordered_map<int64_t, int64_t> out;
  if (t.new_strings.empty()) return out;
  std::unordered_map<std::string, int64_t> wanted;
  for (size_t i = 0; i < t.new_strings.size(); ++i) wanted.emplace(t.new_strings[i], -1 - static_cast<int64_t>(i));
  int64_t max_id = 0;
  Sql scan(store, "SELECT id, value FROM string");
  while (scan.step()) {
    int64_t id = scan.i64(0);
    max_id = std::max(max_id, id);
    if (auto it = wanted.find(scan.text(1)); it != wanted.end()) out.emplace(it->second, id);
  }
  Sql ins(store, "INSERT INTO string(id, value) VALUES (?, ?)");
  for (size_t i = 0; i < t.new_strings.size(); ++i) {
    int64_t provisional = -1 - static_cast<int64_t>(i);
    if (out.contains(provisional)) continue;
    ins.bind(1, ++max_id).bind(2, t.new_strings[i]).run();
    out.emplace(provisional, max_id);
  }
  return out;
}

void load_ranges(sqlite3* store, TraceData& t) {
  int64_t trace_id = t.trace_id;
  {
    Sql q(store,
          "SELECT id, pid, tid, start_ns, dur_ns, name_id, kind, external_id, fwd_thread_id, input_types_id, "
          "device_id FROM _range NOT INDEXED WHERE trace_id = ?");
    q.bind(1, trace_id);
    std::unordered_map<std::string, RangeKind> kinds;  // 'kind' text repeats on every row
    while (q.step()) {
      RangeRec r;
      r.id = q.i64(0);
      r.pid = q.i64(1);
      r.tid = q.i64(2);
      r.start = q.i64(3);
      r.end = end_of(r.start, q.i64(4));
      r.name_id = q.i64(5);
      std::string kind = q.text(6);
      auto it = kinds.find(kind);
      if (it == kinds.end()) it = kinds.emplace(kind, parse_kind(kind)).first;
      r.kind = it->second;
      r.external_id = q.i64(7);
      r.fwd_thread_id = q.i64(8);
      r.input_types_id = q.i64(9);
      r.device_id = q.i64(10);
      t.ranges.push_back(r);
    }
  }
}

// Trace row, devices, API calls, GPU work and sync events.
void load_rest(sqlite3* store, TraceData& t) {
  int64_t trace_id = t.trace_id;
  {
    Sql q(store, "SELECT format, start_ns, end_ns FROM trace WHERE trace_id = ?");
    q.bind(1, trace_id);
    if (q.step()) {
      t.format = q.text(0);
      t.start_ns = q.i64(1);
      t.end_ns = q.i64(2);
    }
  }
  {
    Sql q(store, "SELECT device_id FROM device WHERE trace_id = ? ORDER BY device_id");
    q.bind(1, trace_id);
    while (q.step()) t.described_devices.push_back(q.i64(0));
  }
  {
    Sql q(store, "SELECT device_id, COALESCE(vendor, ''), COALESCE(name, ''), compute_major FROM device WHERE trace_id = ?");
    q.bind(1, trace_id);
    while (q.step()) {
      TraceData::DeviceInfo d{q.text(1), q.text(2), std::nullopt};
      if (q.i64(3) != kNone) d.compute_major = q.i64(3);
      t.devices.emplace(q.i64(0), std::move(d));
    }
  }
  {
    Sql q(store,
          "SELECT id, pid, tid, start_ns, dur_ns, name_id, correlation_id, external_id FROM _api_call NOT INDEXED "
          "WHERE trace_id = ?");
    q.bind(1, trace_id);
    while (q.step()) {
      ApiRec a;
      a.id = q.i64(0);
      a.pid = q.i64(1);
      a.tid = q.i64(2);
      a.start = q.i64(3);
      a.end = end_of(a.start, q.i64(4));
      a.name_id = q.i64(5);
      a.correlation_id = q.i64(6);
      a.external_id = q.i64(7);
      t.apis.push_back(a);
    }
    std::sort(t.apis.begin(), t.apis.end(), [](const ApiRec& a, const ApiRec& b) {
      if (a.pid != b.pid) return a.pid < b.pid;
      if (a.tid != b.tid) return a.tid < b.tid;
      if (a.start != b.start) return a.start < b.start;
      return a.id < b.id;
    });
  }
  auto load_gpu = [&](const char* sql, GpuKind kind) {
    Sql q(store, sql);
    q.bind(1, trace_id);
    while (q.step()) {
      GpuRec g;
      g.kind = kind;
      g.id = q.i64(0);
      g.device_id = q.i64(1);
      g.stream_id = q.i64(2);
      g.pid = q.i64(3);
      g.start = q.i64(4);
      g.end = end_of(g.start, q.i64(5));
      g.correlation_id = q.i64(6);
      g.external_id = q.i64(7);
      if (kind == GpuKind::kernel) g.name_id = q.i64(8);
      t.gpu.push_back(g);
    }
  };
  load_gpu(
      "SELECT id, device_id, stream_id, pid, start_ns, dur_ns, correlation_id, external_id, name_id "
      "FROM _kernel NOT INDEXED WHERE trace_id = ?",
      GpuKind::kernel);
  load_gpu(
      "SELECT id, device_id, stream_id, pid, start_ns, dur_ns, correlation_id, external_id FROM _memcpy NOT INDEXED "
      "WHERE trace_id = ?",
      GpuKind::memcpy);
  load_gpu(
      "SELECT id, device_id, stream_id, pid, start_ns, dur_ns, correlation_id, external_id FROM _memset NOT INDEXED "
      "WHERE trace_id = ?",
      GpuKind::memset);
  // Time order; ties keep the order derivation has always seen (it decides attribution on equal
  // starts): kernels, then memcpys, then memsets; kernels by (device, id), copies and sets by
  // (pid, correlation id, id), NULL first. The rows are read in table order (a sequential scan is
  // several times faster than walking an index), so the tie order is explicit here.
  std::sort(t.gpu.begin(), t.gpu.end(), [](const GpuRec& a, const GpuRec& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.kind != b.kind) return static_cast<int>(a.kind) < static_cast<int>(b.kind);
    if (a.kind == GpuKind::kernel) {
      if (a.device_id != b.device_id) return a.device_id < b.device_id;
    } else {
      if (a.pid != b.pid) return a.pid < b.pid;
      if (a.correlation_id != b.correlation_id) return a.correlation_id < b.correlation_id;
    }
    return a.id < b.id;
  });
  {
    Sql q(store, "SELECT id, start_ns FROM sync_event WHERE trace_id = ?");
    q.bind(1, trace_id);
    while (q.step()) t.syncs.push_back({q.i64(0), q.i64(1), -1});
  }
}

// Reads the text of `ids` (any order, repeats allowed) into `out`. When the ids cover a good part
// of their id range (nsys emit_nvtx names: one string per range) one ordered scan of that range
// beats a B-tree seek per id; otherwise seeks, in id order.
void read_strings(sqlite3* store, std::vector<int64_t> ids, std::unordered_map<int64_t, std::string>& out) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (ids.empty()) return;
  out.reserve(out.size() + ids.size());
  int64_t lo = ids.front(), hi = ids.back();
  if (static_cast<double>(ids.size()) * 4 >= static_cast<double>(hi - lo + 1)) {
    Sql q(store, "SELECT id, value FROM string WHERE id BETWEEN ? AND ?");
    q.bind(1, lo).bind(2, hi);
    auto next = ids.begin();
    while (next != ids.end() && q.step()) {
      int64_t id = q.i64(0);
      while (next != ids.end() && *next < id) ++next;
      if (next != ids.end() && *next == id) out.emplace(id, q.text(1));
    }
    return;
  }
  Sql q(store, "SELECT value FROM string WHERE id = ?");
  for (int64_t id : ids) {
    q.bind(1, id);
    if (q.step()) out.emplace(id, q.text(0));
    q.reset();
  }
}

std::vector<int64_t> range_string_ids(const TraceData& t) {
  std::vector<int64_t> ids;
  ids.reserve(t.ranges.size());
  for (const auto& r : t.ranges) {
    ids.push_back(r.name_id);
    if (r.input_types_id != kNone) ids.push_back(r.input_types_id);
  }
  return ids;
}

std::vector<int64_t> other_string_ids(const TraceData& t) {
  std::vector<int64_t> ids;
  ids.reserve(t.apis.size() + t.gpu.size());
  for (const auto& a : t.apis) ids.push_back(a.name_id);
  for (const auto& g : t.gpu)
    if (g.name_id != kNone) ids.push_back(g.name_id);
  return ids;
}

}  // namespace

TraceData load_trace(Store& store, int64_t trace_id) {
  TraceData t;
  t.trace_id = trace_id;
  // The range table is the largest: it is read on a second connection while this one reads the
  // rest (the two fill different members of t). Without a second connection, one after the other.
  std::unique_ptr<SQLite::Database> reader;
  try {
    reader = store.open_reader();
  } catch (const std::exception&) {
  }
  // Names are read where their rows were: the range names (most of the distinct texts in nsys
  // exports) on the second connection too.
  sqlite3* db = store.db().getHandle();
  if (!reader) {
    load_ranges(db, t);
    load_rest(db, t);
    read_strings(db, range_string_ids(t), t.strings);
    read_strings(db, other_string_ids(t), t.strings);
  } else {
    std::exception_ptr failed;
    std::unordered_map<int64_t, std::string> range_strings;
    std::thread ranges([&] {
      try {
        load_ranges(reader->getHandle(), t);
        read_strings(reader->getHandle(), range_string_ids(t), range_strings);
      } catch (...) {
        failed = std::current_exception();
      }
    });
    try {
      load_rest(db, t);
      read_strings(db, other_string_ids(t), t.strings);
    } catch (...) {
      ranges.join();
      throw;
    }
    ranges.join();
    if (failed) std::rethrow_exception(failed);
    t.strings.merge(range_strings);
  }
  return t;
}

void clear_derived(Store& store, int64_t trace_id) {
  for (const char* sql : {"DELETE FROM _op WHERE trace_id = ?", "DELETE FROM iteration WHERE trace_id = ?",
                          "DELETE FROM breakdown WHERE trace_id = ?"}) {
    Sql st(store, sql);
    st.bind(1, trace_id).run();
  }
}

void write_trace(Store& store, TraceData& t, const std::vector<BreakdownRow>& breakdown) {
  auto real_ids = resolve_new_strings(store, t);
  // Memory: the store grows by the derived rows while they are written, so what is no longer
  // needed is given back first (texts of names, then each op's path once inserted, then the
  // ranges), which keeps the peak of a run near store + derived rows instead of adding all of
  // TraceData on top (nsys exports of emit_nvtx runs: one long text per range).
  std::unordered_map<int64_t, std::string>().swap(t.strings);

  // Op ids continue after the largest one in the store (several traces share the table).
  int64_t next_op_id = 1;
  {
    Sql q(store, "SELECT COALESCE(MAX(id), 0) FROM _op");
    if (q.step()) next_op_id = q.i64(0) + 1;
  }
  for (auto& op : t.ops) {
    op.id = next_op_id++;
    if (auto it = real_ids.find(op.name_id); it != real_ids.end()) op.name_id = it->second;
  }
  auto op_id = [&](int64_t index) { return index >= 0 ? t.ops[static_cast<size_t>(index)].id : kNone; };
  auto api_id = [&](int64_t index) { return index >= 0 ? t.apis[static_cast<size_t>(index)].id : kNone; };
  auto iteration = [](int32_t k) { return k >= 0 ? static_cast<int64_t>(k) : kNone; };

  {
    Sql ins(store,
            "INSERT INTO _op(id, trace_id, range_id, pid, tid, start_ns, dur_ns, name_id, op_type, pass, parent_id, "
            "depth, path, iteration, tc_eligible, gpu_time_ns, kernel_count, tc_time_ns) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    for (auto& op : t.ops) {
      ins.bind(1, op.id)
          .bind(2, t.trace_id)
          .bind(3, op.range >= 0 ? t.ranges[static_cast<size_t>(op.range)].id : kNone)
          .bind(4, op.pid)
          .bind(5, op.tid)
          .bind(6, op.start)
          .bind(7, op.dur)
          .bind(8, op.name_id)
          .bind(9, std::string_view(op.op_type))
          .bind(10, op.pass)
          .bind(11, op_id(op.parent))
          .bind(12, static_cast<int64_t>(op.depth))
          .bind(13, std::string_view(op.path))
          .bind(14, iteration(op.iteration))
          .bind(15, int64_t{op.tc_eligible ? 1 : 0})
          .bind(16, op.gpu_time_ns)
          .bind(17, op.kernel_count)
          .bind(18, op.tc_time_ns)
          .run();
      std::string().swap(op.path);
    }
  }
  {
    // In id order: the B-tree updates then walk the table once instead of jumping between threads.
    std::vector<const RangeRec*> by_id;
    by_id.reserve(t.ranges.size());
    for (const auto& r : t.ranges) by_id.push_back(&r);
    std::sort(by_id.begin(), by_id.end(), [](const RangeRec* a, const RangeRec* b) { return a->id < b->id; });
    Sql up(store, "UPDATE _range SET parent_id = ?, depth = ? WHERE id = ?");
    for (const RangeRec* r : by_id) {
      up.bind(1, r->parent >= 0 ? t.ranges[static_cast<size_t>(r->parent)].id : kNone)
          .bind(2, static_cast<int64_t>(r->depth))
          .bind(3, r->id)
          .run();
    }
  }
  std::vector<RangeRec>().swap(t.ranges);
  {
    std::vector<const ApiRec*> by_id;
    by_id.reserve(t.apis.size());
    for (const auto& a : t.apis) by_id.push_back(&a);
    std::sort(by_id.begin(), by_id.end(), [](const ApiRec* a, const ApiRec* b) { return a->id < b->id; });
    Sql up(store, "UPDATE _api_call SET op_id = ?, iteration = ? WHERE id = ?");
    for (const ApiRec* a : by_id) up.bind(1, op_id(a->op)).bind(2, iteration(a->iteration)).bind(3, a->id).run();
  }
  {
    Sql kernel(
        store,
        "UPDATE _kernel SET api_call_id = ?, op_id = ?, iteration = ?, is_tensor_core = ?, category = ? WHERE id = ?");
    Sql memcpy(store, "UPDATE _memcpy SET api_call_id = ?, op_id = ?, iteration = ? WHERE id = ?");
    Sql memset(store, "UPDATE _memset SET api_call_id = ?, op_id = ?, iteration = ? WHERE id = ?");
    // Table by table in id order: each UPDATE then lands next to the previous one in the B-tree.
    std::vector<const GpuRec*> by_id;
    by_id.reserve(t.gpu.size());
    for (const auto& g : t.gpu) by_id.push_back(&g);
    std::sort(by_id.begin(), by_id.end(),
              [](const GpuRec* a, const GpuRec* b) { return a->kind != b->kind ? a->kind < b->kind : a->id < b->id; });
    for (const GpuRec* gp : by_id) {
      const GpuRec& g = *gp;
      auto& st = g.kind == GpuKind::kernel ? kernel : g.kind == GpuKind::memcpy ? memcpy : memset;
      st.bind(1, api_id(g.api)).bind(2, op_id(g.op)).bind(3, iteration(g.iteration));
      if (g.kind == GpuKind::kernel)
        st.bind(4, int64_t{g.tensor_core ? 1 : 0}).bind(5, g.category).bind(6, g.id);
      else
        st.bind(4, g.id);
      st.run();
    }
  }
  {
    Sql up(store, "UPDATE sync_event SET iteration = ? WHERE id = ?");
    for (const auto& s : t.syncs) up.bind(1, iteration(s.iteration)).bind(2, s.id).run();
  }
  {
    Sql ins(store,
            "INSERT INTO iteration(trace_id, iteration, number, name, start_ns, end_ns, dur_ns, gpu_start_ns, "
            "gpu_end_ns, source) VALUES (?,?,?,?,?,?,?,?,?,?)");
    for (size_t k = 0; k < t.iterations.size(); ++k) {
      const auto& it = t.iterations[k];
      ins.bind(1, t.trace_id)
          .bind(2, static_cast<int64_t>(k))
          .bind(3, it.number ? *it.number : kNone)
          .bind(4, std::string_view(it.name))
          .bind(5, it.start)
          .bind(6, it.end)
          .bind(7, it.end - it.start)
          .bind(8, it.gpu_start)
          .bind(9, it.gpu_end)
          .bind(10, std::string_view(t.iteration_source))
          .run();
    }
  }
  {
    std::set<int64_t> active;
    for (const auto& g : t.gpu) active.insert(g.device_id == kNone ? 0 : g.device_id);
    Sql up(store, "UPDATE device SET has_activity = ? WHERE trace_id = ? AND device_id = ?");
    for (int64_t d : t.described_devices)
      up.bind(1, int64_t{active.contains(d) ? 1 : 0}).bind(2, t.trace_id).bind(3, d).run();
    // Devices that ran work but were not described by the trace (no deviceProperties, nsys
    // 2026.2 container captures) still get a row so that joins on device work.
    Sql ins(store, "INSERT OR IGNORE INTO device(trace_id, device_id, has_activity) VALUES (?, ?, 1)");
    for (int64_t d : active) {
      if (std::find(t.described_devices.begin(), t.described_devices.end(), d) != t.described_devices.end()) continue;
      ins.bind(1, t.trace_id).bind(2, d).run();
    }
  }
  {
    Sql ins(store, "INSERT INTO breakdown(trace_id, device_id, iteration, category, time_ns) VALUES (?,?,?,?,?)");
    for (const auto& row : breakdown)
      ins.bind(1, t.trace_id)
          .bind(2, row.device_id)
          .bind(3, row.iteration)
          .bind(4, row.category)
          .bind(5, row.time_ns)
          .run();
  }
  {
    Sql up(store, "UPDATE trace SET iteration_source = ? WHERE trace_id = ?");
    up.bind(1, std::string_view(t.iteration_source)).bind(2, t.trace_id).run();
  }
}

}  // namespace proflint
