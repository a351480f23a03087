// engine/store/model_io.cpp — see model_io.hpp. Uses the sqlite3 C API directly: these loops
// touch every fact row once.
#include "engine/store/model_io.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/common/timing.hpp"

namespace proflint {

namespace {

// One value of a row a feeding statement holds (see Stmt). Texts point into the caller's memory.
struct FeedValue {
  union {
    int64_t i;
    double d;
    const char* s;
  };
  int32_t n;     // text length
  uint8_t type;  // SQLITE_INTEGER, SQLITE_FLOAT, SQLITE_TEXT or SQLITE_NULL
};

// The rows the statement being stepped inserts: what the proflint_feed table reads.
struct FeedSlot {
  const FeedValue* values = nullptr;
  int cols = 0;
  int64_t rows = 0;
};

constexpr int kFeedColumns = 32;  // columns proflint_feed declares (c0 .. c31): the widest table's insert fits

// proflint_feed: an eponymous virtual table over the rows of the FeedSlot it was registered with
// (none: no rows). A large table's rows go in with INSERT INTO t(...) SELECT c0, ... FROM
// proflint_feed, thousands per statement step, each value handed to SQLite straight from the
// writer's buffer: no bound parameters and no VALUES list whose every value SQLite copies twice
// before it builds the record (docs/benchmarks.md: the write of the x20 tiled trace).
struct FeedCursor {
  sqlite3_vtab_cursor base;
  const FeedSlot* slot;
  int64_t row;
};

struct FeedTable {
  sqlite3_vtab base;
  const FeedSlot* slot;
};

int feed_connect(sqlite3* db, void* aux, int, const char* const*, sqlite3_vtab** out, char**) {
  std::string sql = "CREATE TABLE x(";
  for (int c = 0; c < kFeedColumns; ++c) sql += (c ? ", c" : "c") + std::to_string(c);
  sql += ")";
  if (int rc = sqlite3_declare_vtab(db, sql.c_str()); rc != SQLITE_OK) return rc;
  auto* t = static_cast<FeedTable*>(sqlite3_malloc(sizeof(FeedTable)));
  if (!t) return SQLITE_NOMEM;
  std::memset(t, 0, sizeof(FeedTable));
  t->slot = static_cast<const FeedSlot*>(aux);
  *out = &t->base;
  return SQLITE_OK;
}
int feed_disconnect(sqlite3_vtab* t) {
  sqlite3_free(t);
  return SQLITE_OK;
}
int feed_best_index(sqlite3_vtab*, sqlite3_index_info* info) {
  info->estimatedCost = 1e6;
  return SQLITE_OK;
}
int feed_open(sqlite3_vtab* t, sqlite3_vtab_cursor** out) {
  auto* c = static_cast<FeedCursor*>(sqlite3_malloc(sizeof(FeedCursor)));
  if (!c) return SQLITE_NOMEM;
  std::memset(c, 0, sizeof(FeedCursor));
  c->slot = reinterpret_cast<FeedTable*>(t)->slot;
  *out = &c->base;
  return SQLITE_OK;
}
int feed_close(sqlite3_vtab_cursor* c) {
  sqlite3_free(c);
  return SQLITE_OK;
}
int feed_filter(sqlite3_vtab_cursor* c, int, const char*, int, sqlite3_value**) {
  reinterpret_cast<FeedCursor*>(c)->row = 0;
  return SQLITE_OK;
}
int feed_next(sqlite3_vtab_cursor* c) {
  ++reinterpret_cast<FeedCursor*>(c)->row;
  return SQLITE_OK;
}
int feed_eof(sqlite3_vtab_cursor* c) {
  auto* f = reinterpret_cast<FeedCursor*>(c);
  return f->row >= f->slot->rows;
}
int feed_column(sqlite3_vtab_cursor* c, sqlite3_context* ctx, int col) {
  auto* f = reinterpret_cast<FeedCursor*>(c);
  if (col >= f->slot->cols) {
    sqlite3_result_null(ctx);
    return SQLITE_OK;
  }
  const FeedValue& v = f->slot->values[f->row * f->slot->cols + col];
  switch (v.type) {
    case SQLITE_INTEGER: sqlite3_result_int64(ctx, v.i); break;
    case SQLITE_FLOAT: sqlite3_result_double(ctx, v.d); break;
    case SQLITE_TEXT: sqlite3_result_text(ctx, v.s, v.n, SQLITE_STATIC); break;
    default: sqlite3_result_null(ctx); break;
  }
  return SQLITE_OK;
}
int feed_rowid(sqlite3_vtab_cursor* c, sqlite3_int64* rowid) {
  *rowid = reinterpret_cast<FeedCursor*>(c)->row;
  return SQLITE_OK;
}

// proflint_feed on one connection for as long as this lives (the writer's): registered with the
// slot it reads, dropped again afterwards, so no other statement (a rule's query) ever sees it.
class Feed {
 public:
  explicit Feed(sqlite3* db) : db_(db) {
    // A table or view of that name (an edited store) would stand in for the feed: the rows would
    // come from it. Names are case-insensitive in SQL.
    {
      sqlite3_stmt* q = nullptr;
      bool taken = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE name = 'proflint_feed' COLLATE NOCASE", -1,
                                      &q, nullptr) == SQLITE_OK &&
                   sqlite3_step(q) == SQLITE_ROW;
      sqlite3_finalize(q);
      if (taken)
        throw Error("the store holds a table or view named proflint_feed, a name proflint keeps for writing its rows: "
                    "a damaged or edited store; re-create it with proflint ingest");
    }
    static const sqlite3_module module = [] {
      sqlite3_module m{};
      m.xCreate = nullptr;  // eponymous only: `FROM proflint_feed` with no CREATE VIRTUAL TABLE
      m.xConnect = feed_connect;
      m.xBestIndex = feed_best_index;
      m.xDisconnect = feed_disconnect;
      m.xDestroy = feed_disconnect;
      m.xOpen = feed_open;
      m.xClose = feed_close;
      m.xFilter = feed_filter;
      m.xNext = feed_next;
      m.xEof = feed_eof;
      m.xColumn = feed_column;
      m.xRowid = feed_rowid;
      return m;
    }();
    if (sqlite3_create_module(db, "proflint_feed", &module, &slot) != SQLITE_OK)
      throw Error(std::string("internal: cannot register the store's row feed: ") + sqlite3_errmsg(db));
  }
  ~Feed() { sqlite3_create_module(db_, "proflint_feed", nullptr, nullptr); }
  Feed(const Feed&) = delete;
  Feed& operator=(const Feed&) = delete;

  FeedSlot slot;

 private:
  sqlite3* db_;
};

// Rows per step of a feeding statement (see Stmt): 256 rows of the widest table (23 values of 16
// bytes) are 94 kB, which stay in the core's cache from the writer filling them to SQLite reading
// them.
constexpr int64_t kFeedRows = 256;

// A prepared statement reused for every row; values are given in column order, kNone is NULL.
// Plain statements bind each row and insert it at run(). Feeding statements (the large fact
// tables: constructed with a Feed) collect kFeedRows rows and insert them with one step of
// INSERT ... SELECT ... FROM proflint_feed (see Feed), which is most of what a row used to cost
// when each was a step of its own. Texts are never copied, so they must outlive the step that
// inserts them (flush() at the latest): the model's strings and static text do.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db), st_(prepare(db, sql)) {}
  Stmt(sqlite3* db, const char* sql, Feed& feed) : db_(db), feed_(&feed) {
    // "INSERT INTO t(a, b) VALUES (?,?)" -> "INSERT INTO t(a, b) SELECT c0, c1 FROM proflint_feed"
    std::string text = sql;
    auto values = text.rfind(" VALUES ");
    if (values == std::string::npos) throw Error(std::string("internal: a feeding statement needs VALUES: ") + sql);
    std::string tuple = text.substr(values + 8);
    cols_ = static_cast<int>(std::count(tuple.begin(), tuple.end(), '?'));
    if (cols_ < 1 || cols_ > kFeedColumns) throw Error(std::string("internal: too many columns to feed: ") + sql);
    text.resize(values);
    text += " SELECT ";
    for (int c = 0; c < cols_; ++c) text += (c ? ", c" : "c") + std::to_string(c);
    text += " FROM proflint_feed";
    st_ = prepare(db, text.c_str());
  }
  ~Stmt() { sqlite3_finalize(st_); }
  sqlite3* handle() const { return db_; }  // the connection it runs on
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& i64(int64_t v) {
    if (v == kNone) return null();
    if (feed_) {
      FeedValue& f = next_value();
      f.i = v;
      f.type = SQLITE_INTEGER;
    } else {
      sqlite3_bind_int64(st_, ++col_, v);
    }
    return *this;
  }
  Stmt& i64(const opt_i64& v) { return i64(or_none(v)); }
  Stmt& real(double v) {
    if (feed_) {
      FeedValue& f = next_value();
      f.d = v;
      f.type = SQLITE_FLOAT;
    } else {
      sqlite3_bind_double(st_, ++col_, v);
    }
    return *this;
  }
  Stmt& text(std::string_view v) {
    if (feed_) {
      FeedValue& f = next_value();
      f.s = v.data();
      f.n = static_cast<int32_t>(v.size());
      f.type = SQLITE_TEXT;
    } else {
      sqlite3_bind_text(st_, ++col_, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
    }
    return *this;
  }
  Stmt& text(const std::string* v) {
    if (v) return text(std::string_view(*v));
    return null();
  }
  Stmt& text(const std::optional<std::string>& v) { return text(v ? &*v : nullptr); }
  Stmt& null() {
    if (feed_) {
      FeedValue& f = next_value();
      f.i = 0;
      f.type = SQLITE_NULL;
    } else {
      sqlite3_bind_null(st_, ++col_);
    }
    return *this;
  }
  void run() {
    if (!feed_) {
      insert();
      return;
    }
    if (used_ != ++row_count_ * cols_)
      throw Error("internal: a row of " + std::to_string(used_ - (row_count_ - 1) * cols_) + " values for " +
                  std::to_string(cols_) + " columns");
    if (row_count_ == kFeedRows) insert();
  }
  // Inserts the rows a feeding statement holds; nothing for a statement that inserts each row at run().
  void flush() {
    if (row_count_ > 0) insert();
  }
  // flush, then give the row buffer back (its texts point into rows about to be freed).
  void flush_and_unbind() {
    flush();
    rows_.reset();
    if (!feed_) sqlite3_clear_bindings(st_);
  }
  // Reading: next row, true while there is one.
  bool step() {
    int rc = sqlite3_step(st_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw Error(std::string("internal: store read failed: ") + sqlite3_errmsg(db_));
  }
  int64_t col(int c) const { return sqlite3_column_type(st_, c) == SQLITE_NULL ? kNone : sqlite3_column_int64(st_, c); }
  opt_i64 opt(int c) const {
    if (sqlite3_column_type(st_, c) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_int64(st_, c);
  }
  double dbl(int c) const { return sqlite3_column_double(st_, c); }
  bool is_null(int c) const { return sqlite3_column_type(st_, c) == SQLITE_NULL; }
  std::string str(int c) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st_, c));
    return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(st_, c))) : std::string();
  }
  std::optional<std::string> opt_str(int c) const {
    if (is_null(c)) return std::nullopt;
    return str(c);
  }

 private:
  void insert() {
    col_ = 0;
    if (feed_) feed_->slot = FeedSlot{rows_.get(), cols_, row_count_};
    int rc = sqlite3_step(st_);
    sqlite3_reset(st_);
    if (feed_) {
      feed_->slot = FeedSlot{};
      used_ = 0;
      row_count_ = 0;
    }
    if (rc != SQLITE_DONE) throw Error(std::string("internal: store write failed: ") + sqlite3_errmsg(db_));
  }
  FeedValue& next_value() {
    if (!rows_) rows_ = std::make_unique<FeedValue[]>(static_cast<size_t>(kFeedRows * cols_));
    if (used_ == kFeedRows * cols_) throw Error("internal: a feeding statement's row has too many values");
    return rows_[static_cast<size_t>(used_++)];
  }
  static sqlite3_stmt* prepare(sqlite3* db, const char* sql) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, nullptr) != SQLITE_OK)
      throw Error(std::string("internal: cannot prepare store statement: ") + sqlite3_errmsg(db));
    return st;
  }

  sqlite3* db_;
  sqlite3_stmt* st_ = nullptr;
  int col_ = 0;
  Feed* feed_ = nullptr;
  int cols_ = 0;
  int64_t row_count_ = 0;              // rows held (feeding statements)
  int64_t used_ = 0;                   // their values, row after row, in rows_
  std::unique_ptr<FeedValue[]> rows_;  // room for kFeedRows rows (allocated with the first value)
};

void exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw Error("internal: " + msg);
  }
}

int64_t max_of(sqlite3* db, const char* sql) {
  Stmt q(db, sql);
  return q.step() ? std::max<int64_t>(0, q.col(0)) : 0;
}

int64_t iteration_col(int32_t k) { return k >= 0 ? static_cast<int64_t>(k) : kNone; }

// The string table of the store, extended as models are written. Ids are given at once; the rows
// go in at insert_pending(). A model's texts are distinct (StringTable), so while every text came
// from the first model written into an empty table no lookup is needed: the table of texts to ids
// is built only when a second model, or a store that already had texts, may repeat one (an nsys
// export's 267k texts: 15 MB of hash table and their hashing saved for the usual one-trace load).
class GlobalStrings {
 public:
  explicit GlobalStrings(sqlite3* db) : ins_(db, "INSERT INTO string(id, value) VALUES (?,?)") {
    Stmt q(db, "SELECT id, value FROM string");
    while (q.step()) {
      int64_t id = q.col(0);
      existing_.push_back(q.str(1));
      ids_.emplace(existing_.back(), id);
      next_ = std::max(next_, id + 1);
    }
    indexed_ = !existing_.empty();
  }
  // Global id of text `local` of `table`, whose texts must stay until insert_pending() (the lookup
  // of a second model's texts views them too, and is not used after). `distinct` (the caller's
  // promise): no text given so far from another model is equal to it.
  int64_t id(const StringTable& table, int64_t local, bool distinct) {
    if (!distinct && !indexed_) {
      for (const Run& run : pending_)
        for (int64_t k = 0; k < run.count; ++k) ids_.emplace(run.table->text(run.first_local + k), run.first_id + k);
      indexed_ = true;
    }
    std::string_view text = table.text(local);
    if (indexed_) {
      auto it = ids_.find(text);
      if (it != ids_.end()) return it->second;
    }
    int64_t id = next_++;
    // A model's texts come in order and take consecutive ids: one run each (not 267k pairs held
    // through derivation, for an nsys export).
    if (!pending_.empty()) {
      Run& last = pending_.back();
      if (last.table == &table && last.first_local + last.count == local && last.first_id + last.count == id) {
        ++last.count;
        if (indexed_) ids_.emplace(text, id);
        return id;
      }
    }
    pending_.push_back({&table, local, id, 1});
    if (indexed_) ids_.emplace(text, id);
    return id;
  }
  // Writes the rows of the texts given ids since the last call.
  void insert_pending() {
    for (const Run& run : pending_)
      for (int64_t k = 0; k < run.count; ++k) ins_.i64(run.first_id + k).text(std::string_view(run.table->text(run.first_local + k))).run();
    pending_.clear();
  }

 private:
  struct Run {  // texts first_local.. of `table`, ids first_id..
    const StringTable* table;
    int64_t first_local, first_id, count;
  };
  Stmt ins_;
  std::deque<std::string> existing_;
  std::unordered_map<std::string_view, int64_t> ids_;
  std::vector<Run> pending_;
  bool indexed_ = false;
  int64_t next_ = 1;
};

// Where one model's rows start in the store's id spaces (the store continues after its largest ids).
struct Bases {
  int64_t trace = 0, kernel = 0, memcpy = 0, memset = 0, api = 0, range = 0, sync = 0, op = 0;
  int64_t os_call = 0, cpu_sample = 0;  // schema/0007_host_activity.sql
  int64_t series = 0;  // sample_series ids
  std::vector<int64_t> string_ids;  // local string id -> global id (index 0 unused)
};


// Writes models into the store. `side_h` is the connection of a split store's side database
// (Store::split_side: _op and _range), else the store's connection `h` too; each connection has
// its own row feed, so that two threads can write at once (ModelWrite::finish).
struct Writer {
  Writer(sqlite3* h, sqlite3* side_h)
      : db(h),
        feed(h),
        side_feed(side_h != h ? std::make_unique<Feed>(side_h) : nullptr),
        trace_ins(h, "INSERT INTO trace(trace_id, path, format, format_version, tool_version, framework, vendor, rank, world_size, "
                     "comm_backend, host_name, clock, start_ns, end_ns, event_count, file_bytes, iteration_source, iter_start, "
                     "iter_stop, workload) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"),
        device_ins(h, "INSERT INTO device(trace_id, device_id, name, vendor, compute_major, compute_minor, sm_count, memory_bytes, "
                      "has_activity) VALUES (?,?,?,?,?,?,?,?,?)"),
        process_ins(h, "INSERT INTO process(trace_id, pid, name) VALUES (?,?,?)"),
        thread_ins(h, "INSERT INTO thread(trace_id, pid, tid, name) VALUES (?,?,?,?)"),
        stream_ins(h, "INSERT INTO stream(trace_id, device_id, stream_id, name) VALUES (?,?,?,?)"),
        kernel_ins(h, "INSERT INTO _kernel(trace_id, device_id, stream_id, pid, start_ns, dur_ns, name_id, correlation_id, "
                      "external_id, grid_x, grid_y, grid_z, block_x, block_y, block_z, registers_per_thread, shared_memory_bytes, "
                      "api_call_id, op_id, iteration, is_tensor_core, category, tc_eligible_op_id) "
                      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", feed),
        memcpy_ins(h, "INSERT INTO _memcpy(trace_id, device_id, stream_id, pid, start_ns, dur_ns, bytes, kind, src_kind, dst_kind, "
                      "correlation_id, external_id, api_call_id, op_id, iteration) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", feed),
        memset_ins(h, "INSERT INTO _memset(trace_id, device_id, stream_id, pid, start_ns, dur_ns, bytes, mem_kind, correlation_id, "
                      "external_id, api_call_id, op_id, iteration) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", feed),
        api_ins(h, "INSERT INTO _api_call(trace_id, pid, tid, start_ns, dur_ns, name_id, kind, correlation_id, external_id, op_id, "
                   "iteration) VALUES (?,?,?,?,?,?,?,?,?,?,?)", feed),
        range_ins(side_h, "INSERT INTO _range(trace_id, pid, tid, start_ns, dur_ns, name_id, kind, domain, device_id, external_id, "
                     "sequence_number, fwd_thread_id, input_dims_id, input_types_id, call_stack_id, module_id, parent_id, depth, "
                     "marker) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", sfeed()),
        collective_ins(h, "INSERT INTO collective_arg(range_id, trace_id, collective_name, process_group, pg_desc, seq, in_nelems, "
                          "out_nelems, dtype, group_size, group_ranks) VALUES (?,?,?,?,?,?,?,?,?,?,?)", feed),
        flow_ins(h, "INSERT INTO flow(trace_id, kind, flow_id, src_pid, src_tid, src_ts_ns, dst_pid, dst_tid, dst_ts_ns) "
                    "VALUES (?,?,?,?,?,?,?,?,?)", feed),
        memory_ins(h, "INSERT INTO memory_sample(trace_id, device_id, ts_ns, allocated_bytes, reserved_bytes, delta_bytes) "
                      "VALUES (?,?,?,?,?,?)", feed),
        counter_ins(h, "INSERT INTO _counter(trace_id, device_id, ts_ns, name_id, value) VALUES (?,?,?,?,?)", feed),
        sync_ins(h, "INSERT INTO sync_event(trace_id, pid, tid, device_id, stream_id, start_ns, dur_ns, kind, correlation_id, "
                    "iteration) VALUES (?,?,?,?,?,?,?,?,?,?)", feed),
        issue_ins(h, "INSERT INTO import_issue(trace_id, kind, count, example, location) VALUES (?,?,?,?,?)"),
        op_ins(side_h, "INSERT INTO _op(trace_id, range_id, pid, tid, start_ns, dur_ns, name_id, op_type, pass, parent_id, depth, path, "
                  "iteration, tc_eligible, gpu_time_ns, kernel_count, tc_time_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", sfeed()),
        iteration_ins(h, "INSERT INTO iteration(trace_id, iteration, number, name, start_ns, end_ns, dur_ns, gpu_start_ns, "
                         "gpu_end_ns, source, selected) VALUES (?,?,?,?,?,?,?,?,?,?,?)"),
        breakdown_ins(h, "INSERT INTO breakdown(trace_id, device_id, iteration, category, time_ns) VALUES (?,?,?,?,?)"),
        steady_ins(h, "INSERT INTO steady_state(trace_id, device_id, window_start_ns, start_ns, end_ns, startup_ns, startup_cause, "
                      "startup_evidence, kernel_tc_ns, kernel_other_ns, communication_ns, memcpy_ns, memset_ns, runtime_ns, "
                      "dataloader_ns, cpu_ns, idle_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"),
        undescribed_ins(h, "INSERT OR IGNORE INTO device(trace_id, device_id, has_activity) VALUES (?, ?, 1)"),
        os_call_ins(h, "INSERT INTO _os_call(trace_id, pid, tid, start_ns, dur_ns, name_id, return_value, nesting_level, "
                       "caller_id) VALUES (?,?,?,?,?,?,?,?,?)", feed),
        cpu_sample_ins(h, "INSERT INTO _cpu_sample(trace_id, pid, tid, ts_ns, cpu, leaf_id) VALUES (?,?,?,?,?,?)", feed),
        cpu_frame_ins(h, "INSERT INTO _cpu_frame(sample_id, trace_id, depth, name_id, module_id) VALUES (?,?,?,?,?)", feed),
        graph_node_ins(h, "INSERT INTO kernel_graph_node(kernel_id, trace_id, graph_id, graph_node_id) VALUES (?,?,?,?)", feed),
        node_event_ins(h, "INSERT INTO _graph_node_event(trace_id, pid, tid, start_ns, dur_ns, name_id, event_class, "
                          "graph_node_id, original_graph_node_id) VALUES (?,?,?,?,?,?,?,?,?)"),
        series_ins(h, "INSERT INTO sample_series(series_id, trace_id, device_id, pid, metric, unit, source, format, offset_ns) "
                      "VALUES (?,?,?,?,?,?,?,?,?)"),
        point_ins(h, "INSERT INTO sample_point(series_id, ts_ns, value) VALUES (?,?,?)", feed),
        operator_ins(h, "INSERT INTO operator_timing(trace_id, source, operator, module, time_ns, count, first_line) "
                        "VALUES (?,?,?,?,?,?,?)"),
        source_ins(h, "INSERT INTO _source(trace_id, op_id, api_call_id, range_id, origin, file_id, line, function_id, "
                      "module_path_id, stack_id, forward_op_id) VALUES (?,?,?,?,?,?,?,?,?,?,?)", feed),
        graph_kernel_ins(h, "INSERT INTO graph_kernel(kernel_id, trace_id, graph_id, node, replay, launch_api_call_id, "
                            "captured_op_id) VALUES (?,?,?,?,?,?,?)", feed),
        cuda_graph_ins(h, "INSERT INTO cuda_graph(trace_id, graph_id, id_source, device_id, replays, kernels_per_replay, "
                          "gpu_time_ns, gpu_time_per_replay_ns, span_per_replay_ns, capture_start_ns, captured_ops, "
                          "top_captured_op) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"),
        region_ins(h, "INSERT INTO compiled_region(range_id, trace_id, name, frame, pass, iteration, start_ns, dur_ns, "
                      "triton_kernels, triton_time_ns, other_kernels, other_time_ns, fallback_ops, graph_break_before, "
                      "graph_break_cause) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"),
        kernel_compiled_ins(h, "INSERT INTO kernel_compiled(kernel_id, trace_id, region_range_id, triton_kind, fallback) "
                               "VALUES (?,?,?,?,?)", feed),
        job_ins(h, "INSERT INTO job(job_id, source, world_size, ranks_present, aligned, residual_ns, alignment_note) "
                   "VALUES (?,?,?,?,?,?,?)"),
        job_rank_ins(h, "INSERT INTO job_rank(job_id, rank, trace_id, pid, device_id, clock_offset_ns, offset_residual_ns) "
                        "VALUES (?,?,?,?,?,?,?)"),
        instance_ins(h, "INSERT INTO collective_instance(job_id, instance_id, process_group, seq, type, bytes, ranks, "
                        "first_rank, last_rank, last_arrival_ns, end_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?)"),
        participation_ins(h, "INSERT INTO collective_participation(job_id, instance_id, rank, trace_id, op_id, kernel_id, "
                             "start_ns, end_ns, wait_ns, transfer_ns, iteration) VALUES (?,?,?,?,?,?,?,?,?,?,?)", feed) {}

  sqlite3* db;
  Feed feed;  // before the statements that read it: they are finalized first
  std::unique_ptr<Feed> side_feed;  // the side database's, when it has a connection of its own
  Feed& sfeed() { return side_feed ? *side_feed : feed; }
  Stmt trace_ins, device_ins, process_ins, thread_ins, stream_ins, kernel_ins, memcpy_ins, memset_ins, api_ins, range_ins,
      collective_ins, flow_ins, memory_ins, counter_ins, sync_ins, issue_ins, op_ins, iteration_ins, breakdown_ins,
      steady_ins, undescribed_ins;
  Stmt os_call_ins, cpu_sample_ins, cpu_frame_ins;      // schema/0007_host_activity.sql
  Stmt graph_node_ins;                                  // schema/0009_graphs_compiled.sql
  Stmt node_event_ins;                                  // schema/0011_graph_node_events.sql
  Stmt series_ins, point_ins, operator_ins;             // schema/0006_samples.sql
  Stmt source_ins;                                      // schema/0008_source.sql
  Stmt graph_kernel_ins, cuda_graph_ins, region_ins, kernel_compiled_ins;  // schema/0009_graphs_compiled.sql
  Stmt job_ins, job_rank_ins, instance_ins, participation_ins;           // schema/0005_jobs.sql

  // The rows the batched statements still hold: before COMMIT.
  void flush() {
    flush_side();
    flush_main();
  }
  // Those of the store's own tables.
  void flush_main() {
    for (Stmt* st : {&kernel_ins, &memcpy_ins, &memset_ins, &api_ins, &collective_ins, &flow_ins, &memory_ins,
                     &counter_ins, &sync_ins, &os_call_ins, &cpu_sample_ins, &cpu_frame_ins, &graph_node_ins,
                     &point_ins, &source_ins, &graph_kernel_ins, &kernel_compiled_ins, &participation_ins})
      st->flush();
  }
  // Those of the side database's tables.
  void flush_side() {
    for (Stmt* st : {&range_ins, &op_ins}) st->flush();
  }

  static int64_t at(int64_t base, int64_t index) { return index >= 0 ? base + index : kNone; }
  static int64_t sid(const Bases& b, int64_t local) {
    return local >= 1 && local < static_cast<int64_t>(b.string_ids.size()) ? b.string_ids[static_cast<size_t>(local)] : kNone;
  }

  // The fact tables' own ids (kernel, memcpy, memset, API call, range, sync, op, OS call, CPU
  // sample) are not bound: SQLite gives a row without one MAX(id) + 1, which is the id Bases gave
  // it and every reference to it was written with. A bound id made SQLite first look it up to
  // check it was unique, a B-tree descent per row (the x20 tiled trace's write: see
  // docs/benchmarks.md). Checked once per table and trace: the table's largest id after the rows.
  void expect_ids(Stmt& st, const char* table, int64_t base, size_t rows) {
    if (rows == 0) return;
    st.flush();
    int64_t want = base + static_cast<int64_t>(rows) - 1;
    int64_t got = max_of(st.handle(), (std::string("SELECT MAX(id) FROM ") + table).c_str());
    if (got != want)
      throw Error(std::string("internal: ") + table + " ids written up to " + std::to_string(got) + ", expected " +
                  std::to_string(want));
  }

  // With `release`, each table's rows (and their derived columns) are given back as soon as they
  // are in the store (write_models' `release`).
  bool release = false;
  template <typename... Vectors>
  void drop(Stmt& st, Vectors&... rows) {
    if (!release) return;
    st.flush_and_unbind();
    (std::remove_reference_t<decltype(rows)>().swap(rows), ...);
  }

  // The rows of an import that derivation neither changes nor adds columns to. Derivation may be
  // running on another thread (ModelWrite): only tables it never reads are given back here (not
  // the CUDA graph nodes and node events, which it reads).
  void imported(TraceModel& m, const Bases& b) {
    const int64_t t = b.trace;
    for (const auto& p : m.processes) process_ins.i64(t).i64(p.pid).text(p.name).run();
    for (const auto& th : m.threads) thread_ins.i64(t).i64(th.pid).i64(th.tid).text(th.name).run();
    for (const auto& s : m.streams) stream_ins.i64(t).i64(s.device_id).i64(s.stream_id).text(s.name).run();
    for (const auto& g : m.kernel_graph_nodes)
      graph_node_ins.i64(b.kernel + g.kernel).i64(t).i64(g.graph_id).i64(g.graph_node_id).run();
    for (const auto& e : m.graph_node_events)
      node_event_ins.i64(t).i64(e.pid).i64(e.tid).i64(e.start_ns).i64(e.dur_ns).i64(sid(b, e.name_id)).i64(e.event_class)
          .i64(e.graph_node_id).i64(e.original_graph_node_id).run();
    for (const auto& f : m.flows)
      flow_ins.i64(t).text(m.label(f.kind)).i64(f.flow_id).i64(f.src_pid).i64(f.src_tid).i64(f.src_ts_ns).i64(f.dst_pid)
          .i64(f.dst_tid).i64(f.dst_ts_ns).run();
    drop(flow_ins, m.flows);
    for (const auto& s : m.memory_samples)
      memory_ins.i64(t).i64(s.device_id).i64(s.ts_ns).i64(s.allocated_bytes).i64(s.reserved_bytes).i64(s.delta_bytes).run();
    drop(memory_ins, m.memory_samples);
    for (const auto& c : m.counters) counter_ins.i64(t).i64(c.device_id).i64(c.ts_ns).i64(sid(b, c.name_id)).real(c.value).run();
    host_activity(m, b);
    for (size_t i = 0; i < m.sample_series.size(); ++i) {
      const SampleSeriesFact& s = m.sample_series[i];
      int64_t id = b.series + static_cast<int64_t>(i);
      series_ins.i64(id).i64(t).i64(s.device_id).i64(s.pid).text(std::string_view(s.metric)).text(std::string_view(s.unit))
          .text(std::string_view(s.source)).text(std::string_view(s.format)).i64(s.offset_ns).run();
      for (size_t k = 0; k < s.ts_ns.size(); ++k) point_ins.i64(id).i64(s.ts_ns[k]).real(s.values[k]).run();
    }
    for (const auto& o : m.operator_timings)
      operator_ins.i64(t).text(std::string_view(o.source)).text(std::string_view(o.row.operator_name)).text(o.row.module)
          .i64(o.row.time_ns).i64(o.row.count).i64(o.row.first_line).run();
    for (const auto& [kind, issue] : m.issues)
      issue_ins.i64(t).text(std::string_view(kind)).i64(issue.count).text(std::string_view(issue.example))
          .text(std::string_view(issue.location)).run();
    // Derivation reads none of these either; while it runs they would be in memory twice, in the
    // model and in the store (an nsys export's OS calls and CPU samples).
    drop(counter_ins, m.counters);
    drop(os_call_ins, m.os_calls);
    drop(cpu_frame_ins, m.cpu_frames);
    drop(cpu_sample_ins, m.cpu_samples);
    drop(point_ins, m.sample_series);
    drop(series_ins);
    drop(operator_ins, m.operator_timings);
  }

  // The ranges with their collective arguments and derived columns (parent, depth, marker), once
  // derivation has decided those (DerivedFacts::range_parent filled; NULL before derivation).
  // Nothing is given back: derivation still reads the ranges.
  void ranges(TraceModel& m, const Bases& b) {
    const DerivedFacts& d = m.derived;
    const bool ranges_derived = !m.ranges.empty() && d.range_parent.size() == m.ranges.size();
    const int64_t t = b.trace;
    for (size_t i = 0; i < m.ranges.size(); ++i) {
      const RangeFact& r = m.ranges[i];
      const RangeArgs& a = m.args_of(r);
      int64_t id = b.range + static_cast<int64_t>(i);
      range_ins.i64(t).i64(r.pid).i64(r.tid).i64(r.start_ns).i64(r.dur_ns).i64(sid(b, r.name_id))
          .text(m.label(r.kind)).text(m.label(r.domain)).i64(a.device_id).i64(a.external_id).i64(a.sequence_number)
          .i64(a.fwd_thread_id).i64(sid(b, a.input_dims_id)).i64(sid(b, a.input_types_id)).i64(sid(b, a.call_stack_id))
          .i64(sid(b, a.module_id));
      if (ranges_derived) {
        range_ins.i64(at(b.range, d.range_parent[i])).i64(int64_t{d.range_depth[i]});
        if (d.range_marker[i] == MarkerKind::none) range_ins.null();
        else range_ins.text(marker_text(d.range_marker[i]));
      } else {
        range_ins.null().null().null();
      }
      range_ins.run();
      if (r.collective >= 0) {
        const CollectiveArgs& a = m.collectives[static_cast<size_t>(r.collective)];
        collective_ins.i64(id).i64(t).text(a.collective_name).text(a.process_group).text(a.pg_desc).i64(a.seq)
            .i64(a.in_nelems).i64(a.out_nelems).text(a.dtype).i64(a.group_size).text(a.group_ranks).run();
      }
    }
    expect_ids(range_ins, "_range", b.range, m.ranges.size());
  }

  // The rows of an import that carry derived columns, once derivation is done, then the ranges
  // are given back too.
  void linked(TraceModel& m, const Bases& b) {
    DerivedFacts& d = m.derived;
    const bool derived = d.done;
    const int64_t t = b.trace;
    const TraceInfo& info = m.info;
    trace_ins.i64(t).text(std::string_view(info.path)).text(std::string_view(info.format)).text(info.format_version)
        .text(info.tool_version).text(info.framework).text(info.vendor).i64(info.rank).i64(info.world_size)
        .text(info.comm_backend).text(info.host_name).text(std::string_view(info.clock)).i64(m.start_ns).i64(m.end_ns)
        .i64(m.event_count).i64(info.file_bytes);
    if (derived) {
      trace_ins.text(std::string_view(d.iteration_source)).i64(or_none(d.iter_start)).i64(or_none(d.iter_stop));
      if (d.workload.empty()) trace_ins.null();
      else trace_ins.text(std::string_view(d.workload));
    } else {
      trace_ins.null().null().null().null();
    }
    trace_ins.run();
    for (const auto& dev : m.devices) {
      const DeviceRow& r = dev.row;
      device_ins.i64(t).i64(r.device_id).text(r.name).text(r.vendor).i64(r.compute_major).i64(r.compute_minor)
          .i64(r.sm_count).i64(r.memory_bytes).i64(dev.has_activity).run();
    }
    for (size_t i = 0; i < m.kernels.size(); ++i) {
      const KernelFact& k = m.kernels[i];
      kernel_ins.i64(t).i64(k.device_id).i64(k.stream_id).i64(k.pid).i64(k.start_ns)
          .i64(k.dur_ns).i64(sid(b, k.name_id)).i64(k.correlation_id).i64(k.external_id);
      for (int64_t v : m.launch_of(i)) kernel_ins.i64(v);
      if (derived) {
        const GpuLinks& g = d.kernels[i];
        kernel_ins.i64(at(b.api, g.api)).i64(at(b.op, g.op)).i64(iteration_col(g.iteration)).i64(int64_t{g.tensor_core})
            .text(g.category_text()).i64(at(b.op, g.tc_op));
      } else {
        kernel_ins.null().null().null().null().null().null();
      }
      kernel_ins.run();
    }
    expect_ids(kernel_ins, "_kernel", b.kernel, m.kernels.size());
    drop(kernel_ins, m.kernels, m.wide_launches, d.kernels);
    auto copies = [&](Stmt& ins, const std::vector<CopyFact>& rows, const std::vector<GpuLinks>& links, bool memcpy) {
      for (size_t i = 0; i < rows.size(); ++i) {
        const CopyFact& c = rows[i];
        ins.i64(t).i64(c.device_id).i64(c.stream_id).i64(c.pid).i64(c.start_ns)
            .i64(c.dur_ns).i64(c.bytes).text(m.label(c.kind));
        if (memcpy) ins.text(m.label(c.src_kind)).text(m.label(c.dst_kind));
        ins.i64(c.correlation_id).i64(c.external_id);
        if (derived) {
          const GpuLinks& g = links[i];
          ins.i64(at(b.api, g.api)).i64(at(b.op, g.op)).i64(iteration_col(g.iteration));
        } else {
          ins.null().null().null();
        }
        ins.run();
      }
    };
    copies(memcpy_ins, m.memcpys, d.memcpys, true);
    expect_ids(memcpy_ins, "_memcpy", b.memcpy, m.memcpys.size());
    drop(memcpy_ins, m.memcpys, d.memcpys);
    copies(memset_ins, m.memsets, d.memsets, false);
    expect_ids(memset_ins, "_memset", b.memset, m.memsets.size());
    drop(memset_ins, m.memsets, d.memsets);
    for (size_t i = 0; i < m.syncs.size(); ++i) {
      const SyncFact& s = m.syncs[i];
      sync_ins.i64(t).i64(s.pid).i64(s.tid).i64(s.device_id).i64(s.stream_id)
          .i64(s.start_ns).i64(s.dur_ns).text(m.label(s.kind)).i64(s.correlation_id)
          .i64(derived ? iteration_col(d.sync_iteration[i]) : kNone).run();
    }
    expect_ids(sync_ins, "sync_event", b.sync, m.syncs.size());
    drop(sync_ins, m.syncs, d.sync_iteration);
  }

  // The runtime API calls with their derived links.
  void api_calls(TraceModel& m, const Bases& b) {
    DerivedFacts& d = m.derived;
    const bool derived = d.done;
    const int64_t t = b.trace;
    for (size_t i = 0; i < m.apis.size(); ++i) {
      const ApiFact& a = m.apis[i];
      api_ins.i64(t).i64(a.pid).i64(a.tid).i64(a.start_ns).i64(a.dur_ns)
          .i64(sid(b, a.name_id)).text(m.label(a.kind)).i64(a.correlation_id).i64(a.external_id);
      if (derived) api_ins.i64(at(b.op, d.api_op[i])).i64(iteration_col(d.api_iteration[i]));
      else api_ins.null().null();
      api_ins.run();
    }
    expect_ids(api_ins, "_api_call", b.api, m.apis.size());
    drop(api_ins, m.apis, d.api_op, d.api_iteration);
  }

  // The ranges' arguments and derived columns, once written and linked (read by nothing after
  // linked()). The ranges themselves stay until the ops are written (release_range_rows): an op's
  // thread and span are its range's (TraceModel::op_span).
  void release_ranges(TraceModel& m) {
    DerivedFacts& d = m.derived;
    // The collectives stay: their texts are bound.
    drop(range_ins, m.range_args, d.range_parent, d.range_depth, d.range_marker);
  }
  void release_range_rows(TraceModel& m) {
    if (release) std::vector<RangeFact>().swap(m.ranges);
  }
  // Once the ranges are in the store: each op's span copied out of its range (op_span), and the
  // ranges given back, before the ops are written. The write of a 10^6-row nsys export held its
  // 533k ranges (30 MB) to the end of the ops for 17 MB of spans.
  void keep_op_spans(TraceModel& m) {
    if (!release || m.ranges.empty() || !m.derived.done) return;
    std::vector<OpSpan> spans(m.derived.ops.size());
    for (size_t i = 0; i < spans.size(); ++i) spans[i] = m.op_span(static_cast<int64_t>(i));
    m.derived.op_spans = std::move(spans);
    release_range_rows(m);
  }
  // The model's texts, once in the store's string table: nothing written later reads them (op
  // paths keep their own labels: PathTree). 35 MB of a 10^6-row nsys export (266k distinct NVTX
  // texts) that the rest of the write and its indexes held.
  void release_texts(TraceModel& m) {
    if (release) m.strings = StringTable();
  }

  // OS runtime calls and CPU samples with their frames (schema/0007_host_activity.sql).
  void host_activity(const TraceModel& m, const Bases& b) {
    const int64_t t = b.trace;
    for (size_t i = 0; i < m.os_calls.size(); ++i) {
      const OsCallFact& o = m.os_calls[i];
      os_call_ins.i64(t).i64(o.pid).i64(o.tid).i64(o.start_ns).i64(o.dur_ns)
          .i64(sid(b, o.name_id)).i64(o.return_value).i64(o.nesting_level).i64(sid(b, o.caller_id)).run();
    }
    expect_ids(os_call_ins, "_os_call", b.os_call, m.os_calls.size());
    for (size_t i = 0; i < m.cpu_samples.size(); ++i) {
      const CpuSampleFact& c = m.cpu_samples[i];
      int64_t id = b.cpu_sample + static_cast<int64_t>(i);
      int64_t leaf = c.frame_count > 0 ? sid(b, m.cpu_frames[static_cast<size_t>(c.first_frame)].name_id) : kNone;
      cpu_sample_ins.i64(t).i64(c.pid).i64(c.tid).i64(c.ts_ns).i64(c.cpu).i64(leaf).run();
      for (int32_t d = 0; d < c.frame_count; ++d) {
        const CpuFrameFact& f = m.cpu_frames[static_cast<size_t>(c.first_frame + d)];
        cpu_frame_ins.i64(id).i64(t).i64(int64_t{d}).i64(sid(b, f.name_id)).i64(sid(b, f.module_id)).run();
      }
    }
    expect_ids(cpu_sample_ins, "_cpu_sample", b.cpu_sample, m.cpu_samples.size());
  }

  // The tables derivation fills: derived_side's in the side database (Store::split_side), the
  // rest in the store's.
  void derived(TraceModel& m, const Bases& b) {
    derived_side(m, b);
    derived_main(m, b);
  }

  // Ops.
  void derived_side(TraceModel& m, const Bases& b) {
    DerivedFacts& d = m.derived;
    if (!d.done) return;
    const int64_t t = b.trace;
    // Paths are spelled here (PathTree), into texts that live until their rows are inserted.
    PathTree::Speller spell(d.op_paths);
    TextArena paths;
    for (size_t i = 0; i < d.ops.size(); ++i) {
      const OpFact& op = d.ops[i];
      if (i % kFeedRows == 0) {
        op_ins.flush();
        paths.clear();
      }
      std::string_view path = op.path_node >= 0 ? paths.add(spell(op.path_node)) : std::string_view("", 0);
      const OpSpan span = m.op_span(static_cast<int64_t>(i));
      op_ins.i64(t).i64(at(b.range, op.range)).i64(span.pid).i64(span.tid).i64(span.start)
          .i64(span.dur).i64(sid(b, op.name_id)).text(op_type_text(op, d.op_types)).text(pass_text(op.pass)).i64(at(b.op, op.parent))
          .i64(int64_t{op.depth}).text(path).i64(iteration_col(op.iteration))
          .i64(int64_t{op.tc_eligible ? 1 : 0}).i64(op.gpu_time_ns).i64(op.kernel_count).i64(op.tc_time_ns).run();
    }
    expect_ids(op_ins, "_op", b.op, d.ops.size());  // flushes: the last paths are in
    drop(op_ins, d.ops, d.op_types, d.op_spans);
    if (release) d.op_paths = PathTree();
  }

  // Source places, iterations, breakdown, steady state, CUDA graphs and compiled regions.
  void derived_main(TraceModel& m, const Bases& b) {
    DerivedFacts& d = m.derived;
    if (!d.done) return;
    const int64_t t = b.trace;
    for (const auto& src : d.sources)
      source_ins.i64(t).i64(at(b.op, src.op)).i64(at(b.api, src.api)).i64(at(b.range, src.range)).text(src.origin).i64(sid(b, src.file_id))
          .i64(src.line).i64(sid(b, src.function_id)).i64(sid(b, src.module_path_id)).i64(sid(b, src.stack_id))
          .i64(at(b.op, src.forward_op)).run();
    drop(source_ins, d.sources);
    for (size_t k = 0; k < d.iterations.size(); ++k) {
      const auto& it = d.iterations[k];
      iteration_ins.i64(t).i64(static_cast<int64_t>(k)).i64(it.number ? *it.number : kNone).text(std::string_view(it.name))
          .i64(it.start).i64(it.end).i64(it.end - it.start).i64(it.gpu_start).i64(it.gpu_end)
          .text(std::string_view(d.iteration_source)).i64(int64_t{it.selected ? 1 : 0}).run();
    }
    for (int64_t dev : d.undescribed_devices) undescribed_ins.i64(t).i64(dev).run();
    std::map<int64_t, std::map<std::string_view, int64_t>> steady_rows;  // device -> category -> ns
    for (const auto& row : d.breakdown) {
      if (row.iteration == kSteadyStateRows) {
        steady_rows[row.device_id][row.category] = row.time_ns;
        continue;
      }
      breakdown_ins.i64(t).i64(row.device_id).i64(row.iteration).text(row.category).i64(row.time_ns).run();
    }
    for (const auto& s : d.steady) {
      steady_ins.i64(t).i64(s.device_id).i64(s.window_start).i64(s.steady_start).i64(s.window_end)
          .i64(s.steady_start - s.window_start);
      if (s.cause.empty()) steady_ins.null().null();
      else steady_ins.text(std::string_view(s.cause)).text(std::string_view(s.evidence));
      for (auto c : kBreakdownCategories) steady_ins.i64(steady_rows[s.device_id][c]);
      steady_ins.run();
    }
    if (!d.key_node_problem.empty())
      issue_ins.i64(t).text(std::string_view("key_node_not_found")).i64(1).text(std::string_view(d.key_node_problem))
          .text(std::string_view("--key-node")).run();
    graphs_compiled(m, b);
  }

  // CUDA graph replays and torch.compile regions (schema/0009_graphs_compiled.sql).
  void graphs_compiled(const TraceModel& m, const Bases& b) {
    const DerivedFacts& d = m.derived;
    const int64_t t = b.trace;
    for (const auto& g : d.graph_kernels)
      graph_kernel_ins.i64(at(b.kernel, g.kernel)).i64(t).i64(g.graph_id).i64(g.node).i64(g.replay).i64(at(b.api, g.launch_api))
          .i64(at(b.op, g.captured_op)).run();
    for (const auto& g : d.cuda_graphs)
      cuda_graph_ins.i64(t).i64(g.graph_id).text(std::string_view(g.recorded ? "recorded" : "kernel_sequence")).i64(g.device_id)
          .i64(g.replays).i64(g.kernels_per_replay).i64(g.gpu_time_ns).i64(g.gpu_time_per_replay_ns).i64(g.span_per_replay_ns)
          .i64(g.capture_start_ns).i64(g.captured_ops).text(g.top_captured_op).run();
    for (const auto& r : d.compiled_regions) {
      region_ins.i64(at(b.range, r.range)).i64(t).text(std::string_view(r.name));
      if (r.frame.empty()) region_ins.null();
      else region_ins.text(std::string_view(r.frame));
      region_ins.text(std::string_view(r.backward ? "bwd" : "fwd")).i64(r.iteration).i64(r.start_ns).i64(r.dur_ns)
          .i64(r.triton_kernels).i64(r.triton_time_ns).i64(r.other_kernels).i64(r.other_time_ns).i64(r.fallback_ops)
          .i64(int64_t{r.graph_break_before ? 1 : 0});
      if (r.break_cause.empty()) region_ins.null();
      else region_ins.text(r.break_cause);
      region_ins.run();
    }
    for (const auto& k : d.kernel_compiled) {
      kernel_compiled_ins.i64(at(b.kernel, k.kernel)).i64(t).i64(at(b.range, k.region_range));
      if (k.triton_kind.empty()) kernel_compiled_ins.null();
      else kernel_compiled_ins.text(k.triton_kind);
      kernel_compiled_ins.i64(int64_t{k.fallback ? 1 : 0}).run();
    }
  }

  // The jobs across the traces just written (bases[i] belongs to the i-th model).
  void jobs(const JobFacts& facts, const std::vector<Bases>& bases) {
    auto base = [&](size_t trace) -> const Bases& {
      if (trace >= bases.size()) throw Error("internal: a job names trace " + std::to_string(trace) + " of " +
                                             std::to_string(bases.size()) + " written");
      return bases[trace];
    };
    for (size_t j = 0; j < facts.jobs.size(); ++j) {
      const JobFact& job = facts.jobs[j];
      const auto job_id = static_cast<int64_t>(j) + 1;
      job_ins.i64(job_id).text(std::string_view(job.source)).i64(job.world_size).i64(job.ranks_present)
          .i64(int64_t{job.aligned ? 1 : 0}).i64(job.residual_ns).text(job.alignment_note).run();
      for (const auto& r : job.ranks)
        job_rank_ins.i64(job_id).i64(r.rank).i64(base(r.trace).trace).i64(r.pid).i64(r.device_id).i64(r.clock_offset_ns)
            .i64(r.offset_residual_ns).run();
      for (size_t i = 0; i < job.instances.size(); ++i) {
        const CollectiveInstanceFact& c = job.instances[i];
        instance_ins.i64(job_id).i64(static_cast<int64_t>(i));
        if (c.process_group.empty()) instance_ins.null();
        else instance_ins.text(std::string_view(c.process_group));
        instance_ins.i64(c.seq).text(std::string_view(c.type)).i64(c.bytes).i64(c.ranks).i64(c.first_rank).i64(c.last_rank)
            .i64(c.last_arrival_ns).i64(c.end_ns).run();
      }
      for (const auto& p : job.participations) {
        const Bases& b = base(p.trace);
        participation_ins.i64(job_id).i64(p.instance).i64(p.rank).i64(b.trace).i64(at(b.op, p.op)).i64(at(b.kernel, p.kernel))
            .i64(p.start_ns).i64(p.end_ns).i64(p.wait_ns).i64(p.transfer_ns).i64(p.iteration).run();
      }
    }
  }
};

}  // namespace

struct ModelWrite::State {
  State(Store& s, sqlite3* handle, sqlite3* side_handle, std::vector<TraceModel*> all)
      : store(s), h(handle), side(side_handle), models(std::move(all)), strings(h), bases(models.size()) {}
  Store& store;
  sqlite3* h;
  sqlite3* side;  // the side database's connection of a split store, else h
  std::vector<TraceModel*> models;
  GlobalStrings strings;
  std::vector<Bases> bases;
  int64_t next_op = 0;
  std::unique_ptr<Writer> w;
  size_t ranges_written = 0;
  bool imported_written = false;
  bool finished = false;
};

ModelWrite::ModelWrite(Store& store, std::vector<TraceModel*> models, bool release) {
  sqlite3* h = store.db().getHandle();
  // A split store's side tables are read and written on their own connection only: a read through
  // the store's connection (which attaches them) would hold a lock on them until its COMMIT, and
  // the side connection could never commit.
  sqlite3* side = store.side_db().getHandle();
  exec(h, "BEGIN");
  if (side != h) {
    try {
      exec(side, "BEGIN");
    } catch (...) {
      sqlite3_exec(h, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }
  try {
    s_ = std::make_unique<State>(store, h, side, std::move(models));
    auto& bases = s_->bases;
    Bases next;
    next.trace = max_of(h, "SELECT MAX(trace_id) FROM trace") + 1;
    next.kernel = max_of(h, "SELECT MAX(id) FROM _kernel") + 1;
    next.memcpy = max_of(h, "SELECT MAX(id) FROM _memcpy") + 1;
    next.memset = max_of(h, "SELECT MAX(id) FROM _memset") + 1;
    next.api = max_of(h, "SELECT MAX(id) FROM _api_call") + 1;
    next.range = max_of(side, "SELECT MAX(id) FROM _range") + 1;
    next.sync = max_of(h, "SELECT MAX(id) FROM sync_event") + 1;
    s_->next_op = max_of(side, "SELECT MAX(id) FROM _op") + 1;
    next.os_call = max_of(h, "SELECT MAX(id) FROM _os_call") + 1;
    next.cpu_sample = max_of(h, "SELECT MAX(id) FROM _cpu_sample") + 1;
    next.series = max_of(h, "SELECT MAX(series_id) FROM sample_series") + 1;
    for (size_t i = 0; i < s_->models.size(); ++i) {
      const TraceModel& m = *s_->models[i];
      Bases& b = bases[i];
      b.trace = next.trace++;
      b.kernel = next.kernel;
      b.memcpy = next.memcpy;
      b.memset = next.memset;
      b.api = next.api;
      b.range = next.range;
      b.sync = next.sync;
      b.os_call = next.os_call;
      b.cpu_sample = next.cpu_sample;
      b.series = next.series;
      next.series += static_cast<int64_t>(m.sample_series.size());
      next.kernel += static_cast<int64_t>(m.kernels.size());
      next.memcpy += static_cast<int64_t>(m.memcpys.size());
      next.memset += static_cast<int64_t>(m.memsets.size());
      next.api += static_cast<int64_t>(m.apis.size());
      next.range += static_cast<int64_t>(m.ranges.size());
      next.sync += static_cast<int64_t>(m.syncs.size());
      next.os_call += static_cast<int64_t>(m.os_calls.size());
      next.cpu_sample += static_cast<int64_t>(m.cpu_samples.size());
    }
    // Texts: every trace's imported texts now, the ones derivation adds (new op names) in
    // finish(), so that ids are those of importing every file and then deriving every trace.
    for (size_t i = 0; i < s_->models.size(); ++i) {
      const TraceModel& m = *s_->models[i];
      int64_t imported = std::min(m.imported_strings, m.strings.size());
      bases[i].string_ids.assign(static_cast<size_t>(imported) + 1, kNone);
      for (int64_t s = 1; s <= imported; ++s)
        bases[i].string_ids[static_cast<size_t>(s)] = s_->strings.id(m.strings, s, /*distinct=*/i == 0);
    }
    s_->w = std::make_unique<Writer>(h, side);
    s_->w->release = release;
  } catch (...) {
    s_.reset();
    if (side != h) sqlite3_exec(side, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_exec(h, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

ModelWrite::~ModelWrite() {
  if (!s_ || s_->finished) return;
  sqlite3* h = s_->h;
  sqlite3* side = s_->side;
  s_.reset();  // the statements go before the transaction does
  if (side != h) sqlite3_exec(side, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_exec(h, "ROLLBACK", nullptr, nullptr, nullptr);
}

void ModelWrite::write_imported() {
  if (s_->imported_written) throw Error("internal: the imported tables were written already");
  for (size_t i = 0; i < s_->models.size(); ++i) s_->w->imported(*s_->models[i], s_->bases[i]);
  s_->imported_written = true;
}

void ModelWrite::write_ranges(size_t model) {
  if (model != s_->ranges_written || model >= s_->models.size())
    throw Error("internal: ranges of model " + std::to_string(model) + " written out of order");
  s_->w->ranges(*s_->models[model], s_->bases[model]);
  ++s_->ranges_written;
}

void ModelWrite::finish(const JobFacts* jobs, bool index) {
  State& st = *s_;
  if (!st.imported_written) write_imported();
  while (st.ranges_written < st.models.size()) write_ranges(st.ranges_written);
  for (size_t i = 0; i < st.models.size(); ++i) {
    st.bases[i].op = st.next_op;
    st.next_op += static_cast<int64_t>(st.models[i]->derived.ops.size());
  }
  for (size_t i = 0; i < st.models.size(); ++i) {
    const TraceModel& m = *st.models[i];
    auto& ids = st.bases[i].string_ids;
    auto imported = static_cast<int64_t>(ids.size()) - 1;
    ids.resize(static_cast<size_t>(m.strings.size()) + 1, kNone);
    // Texts derivation added are new to their model, but may be another model's.
    for (int64_t s = imported + 1; s <= m.strings.size(); ++s)
      ids[static_cast<size_t>(s)] = st.strings.id(m.strings, s, /*distinct=*/st.models.size() == 1);
  }
  Writer& w = *st.w;
  if (st.side == st.h) {  // one database: one writer, then the indexes
    st.strings.insert_pending();
    for (TraceModel* m : st.models) w.release_texts(*m);
    for (size_t i = 0; i < st.models.size(); ++i) {
      w.linked(*st.models[i], st.bases[i]);
      w.api_calls(*st.models[i], st.bases[i]);
      w.release_ranges(*st.models[i]);
    }
    for (size_t i = 0; i < st.models.size(); ++i) {
      w.keep_op_spans(*st.models[i]);
      w.derived(*st.models[i], st.bases[i]);
      w.release_range_rows(*st.models[i]);
    }
    if (jobs) w.jobs(*jobs, st.bases);
    w.flush();
    st.w.reset();
    exec(st.h, "COMMIT");
    st.finished = true;
    if (index) st.store.create_indexes();
  } else {
    // A split store (Store::split_side): the side database's share (the ops) on a thread of its
    // own, each database committed and indexed as soon as its rows are in, on its own connection.
    // Trace ids are consecutive from 1: the last one says whether the store holds several.
    const bool several_traces = !st.bases.empty() && st.bases.back().trace > 1;
    for (TraceModel* m : st.models) w.release_ranges(*m);
    auto side_share = [&] {
      StepClock clock;  // PROFLINT_TIMINGS: each database's write and indexes
      for (size_t i = 0; i < st.models.size(); ++i) {
        w.keep_op_spans(*st.models[i]);
        w.derived_side(*st.models[i], st.bases[i]);
        w.release_range_rows(*st.models[i]);  // the other share reads none (release_ranges)
      }
      w.flush_side();
      exec(st.side, "COMMIT");
      clock.lap("write_side");
      if (index) st.store.create_side_indexes(several_traces);
      clock.lap("indexes_side");
    };
    std::exception_ptr side_error;
    std::thread side_writer;
    try {
      side_writer = std::thread([&] {
        try {
          side_share();
        } catch (...) {
          side_error = std::current_exception();
        }
      });
    } catch (const std::system_error&) {
      side_share();  // no thread to be had: one after the other
    }
    try {
      StepClock clock;
      st.strings.insert_pending();  // the texts' rows (an nsys export's 267k) beside the ops too
      for (TraceModel* m : st.models) w.release_texts(*m);  // the side share reads none
      for (size_t i = 0; i < st.models.size(); ++i) {
        w.linked(*st.models[i], st.bases[i]);
        w.api_calls(*st.models[i], st.bases[i]);
      }
      for (size_t i = 0; i < st.models.size(); ++i) w.derived_main(*st.models[i], st.bases[i]);
      if (jobs) w.jobs(*jobs, st.bases);
      w.flush_main();
      exec(st.h, "COMMIT");
      clock.lap("write_main");
      if (index) st.store.create_main_indexes();
      clock.lap("indexes_main");
    } catch (...) {
      if (side_writer.joinable()) side_writer.join();
      throw;
    }
    if (side_writer.joinable()) side_writer.join();
    if (side_error) std::rethrow_exception(side_error);
    st.w.reset();
    st.finished = true;
  }
  for (size_t i = 0; i < st.models.size(); ++i) st.models[i]->trace_id = st.bases[i].trace;
}

void write_models(Store& store, const std::vector<TraceModel*>& models, const JobFacts* jobs, bool release) {
  ModelWrite write(store, models, release);
  write.write_imported();
  for (size_t i = 0; i < models.size(); ++i) write.write_ranges(i);
  write.finish(jobs);
}

void clear_store(Store& store) {
  sqlite3* h = store.db().getHandle();
  std::vector<std::string> tables;
  {
    // A split store's side tables too (Store::split_side): unqualified names find them.
    std::string sql = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'";
    if (store.is_split())
      sql += " UNION ALL SELECT name FROM proflint_side.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'";
    Stmt q(h, (sql + " ORDER BY name").c_str());
    while (q.step()) tables.push_back(q.str(0));
  }
  exec(h, "BEGIN");
  try {
    for (const auto& name : tables) exec(h, ("DELETE FROM \"" + name + "\"").c_str());
    exec(h, "COMMIT");
  } catch (...) {
    sqlite3_exec(h, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

std::vector<TraceModel> load_model(Store& store, std::vector<bool>* was_derived) {
  sqlite3* h = store.db().getHandle();
  std::vector<TraceModel> models;
  std::unordered_map<int64_t, size_t> by_trace;  // trace_id -> index
  {
    Stmt q(h,
           "SELECT trace_id, path, format, format_version, tool_version, framework, vendor, rank, world_size, comm_backend, "
           "host_name, clock, start_ns, end_ns, event_count, file_bytes, iteration_source FROM trace ORDER BY trace_id");
    while (q.step()) {
      TraceModel& m = models.emplace_back();
      m.trace_id = q.col(0);
      TraceInfo& info = m.info;
      info.path = q.str(1);
      info.format = q.str(2);
      info.format_version = q.opt_str(3);
      info.tool_version = q.opt_str(4);
      info.framework = q.opt_str(5);
      info.vendor = q.opt_str(6);
      info.rank = q.opt(7);
      info.world_size = q.opt(8);
      info.comm_backend = q.opt_str(9);
      info.host_name = q.opt_str(10);
      info.clock = q.str(11);
      m.start_ns = q.col(12);
      m.end_ns = q.col(13);
      m.event_count = q.is_null(14) ? 0 : q.col(14);
      info.file_bytes = q.opt(15);
      if (was_derived) was_derived->push_back(!q.is_null(16));
      by_trace.emplace(m.trace_id, models.size() - 1);
    }
  }
  auto model_of = [&](int64_t trace_id) -> TraceModel& {
    auto it = by_trace.find(trace_id);
    if (it == by_trace.end())
      throw std::runtime_error("a row names trace " + std::to_string(trace_id) + ", which the trace table lacks");
    return models[it->second];
  };
  // Every trace gets the whole string table, in id order: local id = position (the store's ids
  // when they are dense, as proflint writes them), and texts no row uses (op names of an earlier
  // derivation) keep their place when the store is written again.
  std::unordered_map<int64_t, int64_t> local_of;  // store id -> local id
  {
    std::vector<std::string> texts;
    Stmt q(h, "SELECT id, value FROM string ORDER BY id");
    while (q.step()) {
      texts.push_back(q.str(1));
      local_of.emplace(q.col(0), static_cast<int64_t>(texts.size()));
    }
    for (auto& m : models) {
      for (const auto& s : texts) m.strings.intern(s);
      m.imported_strings = m.strings.size();
    }
  }
  auto sid = [&](int64_t id) -> int64_t {
    if (id == kNone) return kNone;
    auto it = local_of.find(id);
    if (it == local_of.end()) throw std::runtime_error("a row names string " + std::to_string(id) + ", which the string table lacks");
    return it->second;
  };
  auto label = [](TraceModel& m, const Stmt& q, int c) -> int32_t {
    return q.is_null(c) ? 0 : static_cast<int32_t>(m.labels.intern(q.str(c)));
  };
  {
    Stmt q(h, "SELECT trace_id, device_id, name, vendor, compute_major, compute_minor, sm_count, memory_bytes FROM device ORDER BY rowid");
    while (q.step()) {
      DeviceRow r;
      r.device_id = q.col(1);
      r.name = q.opt_str(2);
      r.vendor = q.opt_str(3);
      r.compute_major = q.opt(4);
      r.compute_minor = q.opt(5);
      r.sm_count = q.opt(6);
      r.memory_bytes = q.opt(7);
      model_of(q.col(0)).devices.push_back({r, kNone});
    }
  }
  {
    Stmt q(h, "SELECT trace_id, pid, name FROM process ORDER BY rowid");
    while (q.step()) model_of(q.col(0)).processes.push_back({q.col(1), 0, q.opt_str(2)});
  }
  {
    Stmt q(h, "SELECT trace_id, pid, tid, name FROM thread ORDER BY rowid");
    while (q.step()) model_of(q.col(0)).threads.push_back({q.col(1), q.col(2), q.opt_str(3)});
  }
  {
    Stmt q(h, "SELECT trace_id, device_id, stream_id, name FROM stream ORDER BY rowid");
    while (q.step()) model_of(q.col(0)).streams.push_back({q.col(1), q.col(2), q.opt_str(3)});
  }
  {
    Stmt q(h,
           "SELECT trace_id, device_id, stream_id, pid, start_ns, dur_ns, name_id, correlation_id, external_id, grid_x, grid_y, "
           "grid_z, block_x, block_y, block_z, registers_per_thread, shared_memory_bytes, id FROM _kernel ORDER BY id");
    std::unordered_map<int64_t, std::pair<int64_t, int64_t>> graph_ids;  // kernel id -> recorded graph, node
    {
      Stmt g(h, "SELECT kernel_id, graph_id, graph_node_id FROM kernel_graph_node");
      while (g.step()) graph_ids.emplace(g.col(0), std::pair{g.col(1), g.col(2)});
    }
    while (q.step()) {
      KernelFact k{q.col(1), q.col(2), q.col(3), q.col(4), q.col(5), sid(q.col(6)), q.col(7), q.col(8)};
      TraceModel& m = model_of(q.col(0));
      if (auto it = graph_ids.find(q.col(17)); it != graph_ids.end())
        m.kernel_graph_nodes.push_back({static_cast<int64_t>(m.kernels.size()), it->second.first, it->second.second});
      m.kernels.push_back(k);
      m.set_launch(m.kernels.size() - 1,
                   {q.col(9), q.col(10), q.col(11), q.col(12), q.col(13), q.col(14), q.col(15), q.col(16)});
    }
  }
  {
    Stmt q(h,
           "SELECT trace_id, device_id, stream_id, pid, start_ns, dur_ns, bytes, kind, src_kind, dst_kind, correlation_id, "
           "external_id FROM _memcpy ORDER BY id");
    while (q.step()) {
      TraceModel& m = model_of(q.col(0));
      CopyFact c{q.col(1), q.col(2), q.col(3), q.col(4), q.col(5), q.col(6), q.col(10), q.col(11),
                 label(m, q, 7), label(m, q, 8), label(m, q, 9)};
      m.memcpys.push_back(c);
    }
  }
  {
    Stmt q(h,
           "SELECT trace_id, device_id, stream_id, pid, start_ns, dur_ns, bytes, mem_kind, correlation_id, external_id "
           "FROM _memset ORDER BY id");
    while (q.step()) {
      TraceModel& m = model_of(q.col(0));
      CopyFact c{q.col(1), q.col(2), q.col(3), q.col(4), q.col(5), q.col(6), q.col(8), q.col(9), label(m, q, 7), 0, 0};
      m.memsets.push_back(c);
    }
  }
  {
    Stmt q(h,
           "SELECT trace_id, pid, tid, start_ns, dur_ns, name_id, kind, correlation_id, external_id FROM _api_call ORDER BY id");
    while (q.step()) {
      TraceModel& m = model_of(q.col(0));
      m.apis.push_back({q.col(1), q.col(2), q.col(3), q.col(4), sid(q.col(5)), q.col(7), q.col(8), label(m, q, 6)});
    }
  }
  std::unordered_map<int64_t, std::pair<size_t, size_t>> range_at;  // range id -> (model, position), collectives only
  {
    std::set<int64_t> with_args;
    {
      Stmt q(h, "SELECT range_id FROM collective_arg");
      while (q.step()) with_args.insert(q.col(0));
    }
    Stmt q(h,
           "SELECT id, trace_id, pid, tid, start_ns, dur_ns, name_id, kind, domain, device_id, external_id, sequence_number, "
           "fwd_thread_id, input_dims_id, input_types_id, call_stack_id, module_id FROM _range ORDER BY id");
    while (q.step()) {
      int64_t trace_id = q.col(1);
      TraceModel& m = model_of(trace_id);
      RangeFact r;
      r.pid = q.col(2);
      r.tid = q.col(3);
      r.start_ns = q.col(4);
      r.dur_ns = q.col(5);
      r.name_id = sid(q.col(6));
      r.kind = label(m, q, 7);
      r.domain = label(m, q, 8);
      RangeArgs a;
      a.device_id = q.col(9);
      a.external_id = q.col(10);
      a.sequence_number = q.col(11);
      a.fwd_thread_id = q.col(12);
      a.input_dims_id = sid(q.col(13));
      a.input_types_id = sid(q.col(14));
      a.call_stack_id = sid(q.col(15));
      a.module_id = sid(q.col(16));
      m.set_args(r, a);
      if (with_args.contains(q.col(0))) range_at.emplace(q.col(0), std::pair{by_trace.at(trace_id), m.ranges.size()});
      m.ranges.push_back(r);
    }
  }
  {
    Stmt q(h,
           "SELECT range_id, collective_name, process_group, pg_desc, seq, in_nelems, out_nelems, dtype, group_size, "
           "group_ranks FROM collective_arg ORDER BY range_id");
    while (q.step()) {
      auto it = range_at.find(q.col(0));
      if (it == range_at.end()) continue;  // arguments of a range that is gone: nothing to attach them to
      TraceModel& m = models[it->second.first];
      CollectiveArgs a{q.opt_str(1), q.opt_str(2), q.opt_str(3), q.opt_str(7), q.opt_str(9),
                       q.opt(4),     q.opt(5),     q.opt(6),     q.opt(8)};
      m.ranges[it->second.second].collective = static_cast<int32_t>(m.collectives.size());
      m.collectives.push_back(std::move(a));
    }
  }
  {
    Stmt q(h, "SELECT trace_id, kind, flow_id, src_pid, src_tid, src_ts_ns, dst_pid, dst_tid, dst_ts_ns FROM flow ORDER BY rowid");
    while (q.step()) {
      TraceModel& m = model_of(q.col(0));
      m.flows.push_back({label(m, q, 1), q.col(2), q.col(3), q.col(4), q.col(5), q.col(6), q.col(7), q.col(8)});
    }
  }
  {
    Stmt q(h,
           "SELECT trace_id, device_id, ts_ns, allocated_bytes, reserved_bytes, delta_bytes FROM memory_sample ORDER BY rowid");
    while (q.step()) model_of(q.col(0)).memory_samples.push_back({q.col(1), q.col(2), q.opt(3), q.opt(4), q.opt(5)});
  }
  {
    Stmt q(h, "SELECT trace_id, device_id, ts_ns, name_id, value FROM _counter ORDER BY rowid");
    while (q.step()) model_of(q.col(0)).counters.push_back({q.col(1), q.col(2), sid(q.col(3)), q.dbl(4)});
  }
  {
    Stmt q(h,
           "SELECT trace_id, pid, tid, device_id, stream_id, start_ns, dur_ns, kind, correlation_id FROM sync_event ORDER BY id");
    while (q.step()) {
      TraceModel& m = model_of(q.col(0));
      m.syncs.push_back({q.col(1), q.col(2), q.col(3), q.col(4), q.col(5), q.col(6), q.col(8), label(m, q, 7)});
    }
  }
  {
    Stmt q(h,
           "SELECT trace_id, pid, tid, start_ns, dur_ns, name_id, return_value, nesting_level, caller_id FROM _os_call "
           "ORDER BY id");
    while (q.step())
      model_of(q.col(0)).os_calls.push_back(
          {q.col(1), q.col(2), q.col(3), q.col(4), sid(q.col(5)), q.col(6), q.col(7), sid(q.col(8))});
  }
  {
    Stmt q(h,
           "SELECT trace_id, pid, tid, start_ns, dur_ns, name_id, event_class, graph_node_id, original_graph_node_id "
           "FROM _graph_node_event ORDER BY id");
    while (q.step())
      model_of(q.col(0)).graph_node_events.push_back(
          {q.col(1), q.col(2), q.col(3), q.col(4), sid(q.col(5)), q.col(6), q.col(7), q.col(8)});
  }
  {
    // Frames come ordered by sample and depth, so each sample's frames are contiguous.
    Stmt frames(h, "SELECT sample_id, name_id, module_id FROM _cpu_frame ORDER BY sample_id, depth");
    bool more = frames.step();
    Stmt q(h, "SELECT id, trace_id, pid, tid, ts_ns, cpu FROM _cpu_sample ORDER BY id");
    while (q.step()) {
      TraceModel& m = model_of(q.col(1));
      CpuSampleFact c{q.col(2), q.col(3), q.col(4), q.col(5), static_cast<int64_t>(m.cpu_frames.size()), 0};
      while (more && frames.col(0) < q.col(0)) more = frames.step();  // frames of a sample that is gone
      while (more && frames.col(0) == q.col(0)) {
        m.cpu_frames.push_back({sid(frames.col(1)), sid(frames.col(2))});
        ++c.frame_count;
        more = frames.step();
      }
      m.cpu_samples.push_back(c);
    }
  }
  {
    std::unordered_map<int64_t, std::pair<size_t, size_t>> series_at;  // series_id -> (model, position)
    Stmt q(h, "SELECT series_id, trace_id, device_id, pid, metric, unit, source, format, offset_ns FROM sample_series ORDER BY series_id");
    while (q.step()) {
      TraceModel& m = model_of(q.col(1));
      SampleSeriesFact f;
      f.device_id = q.col(2);
      f.pid = q.col(3);
      f.metric = q.str(4);
      f.unit = q.str(5);
      f.source = q.str(6);
      f.format = q.str(7);
      f.offset_ns = q.col(8) == kNone ? 0 : q.col(8);
      series_at.emplace(q.col(0), std::pair{by_trace.at(q.col(1)), m.sample_series.size()});
      m.sample_series.push_back(std::move(f));
    }
    Stmt p(h, "SELECT series_id, ts_ns, value FROM sample_point ORDER BY rowid");
    while (p.step()) {
      auto it = series_at.find(p.col(0));
      if (it == series_at.end())
        throw std::runtime_error("a sample_point row names series " + std::to_string(p.col(0)) + ", which sample_series lacks");
      auto& f = models[it->second.first].sample_series[it->second.second];
      f.ts_ns.push_back(p.col(1));
      f.values.push_back(p.dbl(2));
    }
  }
  {
    Stmt q(h, "SELECT trace_id, source, operator, module, time_ns, count, first_line FROM operator_timing ORDER BY rowid");
    while (q.step()) {
      OperatorTimingFact o;
      o.source = q.str(1);
      o.row.operator_name = q.str(2);
      o.row.module = q.opt_str(3);
      o.row.time_ns = q.col(4);
      o.row.count = q.col(5);
      o.row.first_line = q.opt(6);
      model_of(q.col(0)).operator_timings.push_back(std::move(o));
    }
  }
  {
    // key_node_not_found is derivation's note, written again by the next derivation.
    Stmt q(h, "SELECT trace_id, kind, count, example, location FROM import_issue WHERE kind <> 'key_node_not_found' ORDER BY rowid");
    while (q.step()) model_of(q.col(0)).issues[q.str(1)] = IssueFact{q.col(2), q.str(3), q.str(4)};
  }
  return models;
}

}  // namespace proflint
