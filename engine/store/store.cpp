// engine/store/store.cpp — opening, creating and migrating the fact store.
#include "engine/store/store.hpp"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string_view>
#include <thread>

#include "engine/common/error.hpp"
#include "engine/common/output_file.hpp"
#include "engine/common/sqlite_file.hpp"
#include "engine/store/migrations.hpp"

namespace proflint {

namespace {
// 'PFLT': marks a SQLite file as a proflint store (PRAGMA application_id).
constexpr int kApplicationId = 0x50464C54;

// Debian's libsqlite3 is built thread-safe with memory statistics on, SECURE_DELETE and no
// lookaside: every malloc then takes a global mutex and every statement step the connection's
// mutex. A store connection is only ever used by one thread, and nothing reads SQLite's memory
// statistics, so both are switched off (memory statistics only take effect before SQLite
// initialises, hence the first store does it).
int open_flags() {
  static const bool configured = [] {
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);  // SQLITE_MISUSE if SQLite is already initialised: harmless
    return true;
  }();
  (void)configured;
  // URIs: save_as names the VFS of the file it writes (see file_uri).
  return SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE | SQLite::OPEN_NOMUTEX | SQLite::OPEN_URI;
}

// PROFLINT_SQL_PROFILE=1 prints every statement that took over a millisecond, with its time, on
// stderr: how one finds the query behind a slow detector (see docs/benchmarks.md).
int profile_statement(unsigned type, void*, void* stmt, void* ns) {
  if (type != SQLITE_TRACE_PROFILE) return 0;
  auto elapsed = *static_cast<sqlite3_int64*>(ns);
  // PROFLINT_SQL_PROFILE=all prints every statement (the index audit of docs/benchmarks.md).
  static const bool all = [] {
    const char* v = std::getenv("PROFLINT_SQL_PROFILE");
    return v && std::string_view(v) == "all";
  }();
  if (elapsed < 1'000'000 && !all) return 0;
  char* sql = sqlite3_expanded_sql(static_cast<sqlite3_stmt*>(stmt));
  std::fprintf(stderr, "sql %.3f ms: %s\n", static_cast<double>(elapsed) / 1e6, sql ? sql : "?");
  sqlite3_free(sql);
  return 0;
}

void tune_for_bulk_load(SQLite::Database& db, bool in_memory) {
  static const bool profile = std::getenv("PROFLINT_SQL_PROFILE") != nullptr;
  if (profile) sqlite3_trace_v2(db.getHandle(), SQLITE_TRACE_PROFILE, profile_statement, nullptr);
  db.exec("PRAGMA secure_delete=OFF");    // no zero-filling of freed pages (DELETE, DROP INDEX)
  db.exec("PRAGMA journal_mode=MEMORY");  // OFF would make ROLLBACK of a failed import undefined
  db.exec("PRAGMA synchronous=OFF");
  db.exec("PRAGMA temp_store=MEMORY");
  // A memdb database already lives in memory; the page cache only holds copies of pages in use,
  // so a small one does (a large one would hold a second copy of the store). Measured: 4 MiB
  // inserts, updates and builds indexes as fast as 16 MiB and as :memory:, with 5-15 MiB less.
  db.exec(in_memory ? "PRAGMA cache_size=-4096" : "PRAGMA cache_size=-262144");
}

// In-memory stores live in SQLite's "memdb" VFS under a process-unique name starting with '/',
// which makes the database shareable: further connections (open_reader) see the same pages, and
// SQLite frees it when the last connection closes. A plain ":memory:" database cannot be opened
// twice, and analysis reads the store from several threads at once.
std::string new_memdb_name() {
  static std::atomic<uint64_t> counter{0};
  return "/proflint-" + std::to_string(static_cast<long long>(getpid())) + "-" + std::to_string(++counter);
}

// VACUUM INTO writes through the source database's VFS, which for an in-memory store is memdb:
// the copy would stay in memory. A URI naming the platform's default VFS puts it on disk.
std::string file_uri(const std::string& path) {
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (std::isalnum(c) || std::strchr("/-_.~", c)) {
      uri += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      uri += hex;
    }
  }
  return uri + "?vfs=" + sqlite3_vfs_find(nullptr)->zName;
}

// memdb grows its one buffer by doubling it through sqlite3_realloc, which refuses 2 GiB or more:
// capping the size just below lets the buffer reach that instead of failing at half of it (the
// default cap is 1 GiB). Larger stores go to a plain in-memory database (Store::Sharing::none).
constexpr sqlite3_int64 kMemdbMaxBytes = 0x7ffe0000;

// PROFLINT_SHARED_STORE_LIMIT (bytes, smaller only) lets tests reach the limit with small inputs.
sqlite3_int64 memdb_max_bytes() {
  const char* env = std::getenv("PROFLINT_SHARED_STORE_LIMIT");
  long long n = env ? std::atoll(env) : 0;
  return n > 0 && n < kMemdbMaxBytes ? static_cast<sqlite3_int64>(n) : kMemdbMaxBytes;
}

void set_memdb_size_limit(SQLite::Database& db) {
  sqlite3_int64 limit = memdb_max_bytes();
  sqlite3_file_control(db.getHandle(), "main", SQLITE_FCNTL_SIZE_LIMIT, &limit);
}
}  // namespace

int latest_schema_version() { return static_cast<int>(migrations().size()); }

// The schema is built once per process, in a store that every new one copies page by page with
// the backup API: running every migration again for each store cost more than importing a small
// trace (40% of the `pipeline` fuzz target's time; tests and parallel imports create many).
Store Store::create_in_memory(Sharing sharing) {
  static std::mutex mutex;  // the schema store's connection is used by one thread at a time
  static Store* schema = [] {
    auto* s = new Store(create_in_memory_copy_target(Sharing::none, 0));  // lives as long as the process
    s->migrate();
    return s;
  }();
  Store store = create_in_memory_copy_target(sharing, 0);
  std::lock_guard lock(mutex);
  sqlite3_backup* backup = sqlite3_backup_init(store.db().getHandle(), "main", schema->db().getHandle(), "main");
  int rc = backup ? sqlite3_backup_step(backup, -1) : sqlite3_errcode(store.db().getHandle());
  sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE) throw Error(std::string("cannot create an in-memory store: ") + sqlite3_errstr(rc));
  return store;
}

Store Store::create_in_memory_copy_target(Sharing sharing, int page_size) {
  // The page size holds only when set before anything is written (0: SQLite's default).
  auto set_page_size = [&](SQLite::Database& db) {
    if (page_size > 0) db.exec("PRAGMA page_size=" + std::to_string(page_size));
  };
  if (sharing == Sharing::none) {
    auto db = std::make_unique<SQLite::Database>(":memory:", open_flags());
    set_page_size(*db);
    Store store(std::move(db), "", nullptr);
    tune_for_bulk_load(store.db(), false);
    return store;
  }
  std::string name = new_memdb_name();
  auto db = std::make_unique<SQLite::Database>(name.c_str(), open_flags(), 0, "memdb");
  set_page_size(*db);
  set_memdb_size_limit(*db);
  Store store(std::move(db), name, "memdb");
  tune_for_bulk_load(store.db(), true);
  return store;
}

bool Store::near_shared_limit() const {
  if (!vfs_ || std::string_view(vfs_) != "memdb") return false;
  try {
    int64_t bytes = db_->execAndGet("PRAGMA page_count").getInt64() * db_->execAndGet("PRAGMA page_size").getInt64();
    return bytes > memdb_max_bytes() / 2;
  } catch (const std::exception&) {
    return true;  // a store that cannot even answer this is the full one
  }
}

Store Store::create_file(const std::string& path) {
  auto db = std::make_unique<SQLite::Database>(path, open_flags() & ~SQLite::OPEN_URI);
  Store store(std::move(db), path, nullptr);
  tune_for_bulk_load(store.db(), false);
  store.migrate();
  return store;
}

bool Store::is_store_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char header[72] = {};
  if (!in.read(header, sizeof header)) return false;
  if (std::string(header, 16) != std::string("SQLite format 3\0", 16)) return false;
  // application_id is the big-endian 32-bit integer at offset 68 of the header.
  auto b = [&](int i) { return static_cast<unsigned>(static_cast<unsigned char>(header[i])); };
  unsigned app = (b(68) << 24) | (b(69) << 16) | (b(70) << 8) | b(71);
  return app == static_cast<unsigned>(kApplicationId);
}

Store Store::open_existing(const std::string& path, bool read_only) {
  if (!is_store_file(path))
    throw input_error(path, "", "not a proflint store (no proflint application id in the SQLite header)");
  std::unique_ptr<SQLite::Database> db;
  try {
    db = std::make_unique<SQLite::Database>(path, read_only ? SQLite::OPEN_READONLY : SQLite::OPEN_READWRITE);
  } catch (const std::exception& e) {
    throw input_error(path, "", "cannot open store: " + sqlite_damage_words(e.what()));
  }
  Store store(std::move(db), path, nullptr);
  int version = store.schema_version();
  if (version > latest_schema_version()) {
    throw input_error(path, "",
                      "store has schema version " + std::to_string(version) + " but this proflint knows only up to " +
                          std::to_string(latest_schema_version()) + "; use a newer proflint");
  }
  if (version < latest_schema_version()) {
    if (read_only)
      throw input_error(path, "",
                        "store has schema version " + std::to_string(version) + " (expected 1 to " +
                            std::to_string(latest_schema_version()) +
                            "; a proflint command upgrades a copy of an older store when given it as input): a damaged "
                            "or edited store; re-create it with proflint ingest");
    store.migrate();
  }
  return store;
}

std::unique_ptr<SQLite::Database> Store::open_reader() const {
  if (name_.empty()) throw Error("internal: this in-memory store has a single connection");
  auto reader =
      std::make_unique<SQLite::Database>(name_.c_str(), SQLite::OPEN_READONLY | SQLite::OPEN_NOMUTEX, 0, vfs_);
  reader->exec("PRAGMA temp_store=MEMORY");
  static const bool profile = std::getenv("PROFLINT_SQL_PROFILE") != nullptr;
  if (profile) sqlite3_trace_v2(reader->getHandle(), SQLITE_TRACE_PROFILE, profile_statement, nullptr);
  return reader;
}

int Store::schema_version() { return db_->execAndGet("PRAGMA user_version").getInt(); }

void Store::migrate() {
  int version = schema_version();
  const auto& all = migrations();
  for (int i = version; i < static_cast<int>(all.size()); ++i) {
    SQLite::Transaction tx(*db_);
    db_->exec(all[i].sql);
    db_->exec("PRAGMA user_version=" + std::to_string(i + 1));
    tx.commit();
  }
  db_->exec("PRAGMA application_id=" + std::to_string(kApplicationId));
}

// Only indexes some query uses. Each is listed with the queries that use it, found by the audit
// of docs/benchmarks.md ("Index audit": every statement of analyze (json, html), report all,
// export, summary and compare over Kineto, nsys and 4-rank inputs, PROFLINT_SQL_PROFILE=all, then
// EXPLAIN QUERY PLAN of each on the saved store):
//   kernel_by_time  (trace_id, device_id, start_ns): per-trace and per-device kernel scans of the
//                   detectors and summaries ("... FROM _kernel WHERE trace_id = ? AND device_id IS ?").
//   kernel_by_name  (name_id): distinct kernel names (report kernel summary's GROUP BY name_id,
//                   "SELECT COUNT(DISTINCT name_id) FROM _kernel", tensor-core name checks).
//   api_by_thread   (trace_id, pid, tid, start_ns): host threads and runtime calls per trace and
//                   window (startup, host-bound and sync detectors, idle claims).
//   range_by_thread (trace_id, pid, tid, start_ns): per-trace range probes and scans (input shapes
//                   present?, optimizer/dataloader ranges).
//   range_by_name   (name_id): ranges by name ("name_id IN (SELECT id FROM string WHERE ...)":
//                   DataLoader, nccl:, ProfilerStep ranges).
//   op_by_range     (range_id): the op of a range (export of ranges).
//   op_by_name      (name_id): the detail report's op list.
// The last two only when a report, an export or a saved store asks (create_report_indexes): no
// statement of `analyze` uses them, and they cost 0.3 s of the x20 tiled trace's 6 s.
// Correlation ids have none: derivation resolves them in memory and writes the links
// (api_call_id, op_id). _kernel(op_id) had an index that no query used (the audit found none).
void Store::create_fact_indexes() {
  // CREATE INDEX sorts the table; SQLite can sort with helper threads (the machine's second core).
  db_->exec("PRAGMA threads=" + std::to_string(std::clamp(std::thread::hardware_concurrency(), 1u, 4u) - 1));
  db_->exec(R"SQL(
    CREATE INDEX IF NOT EXISTS kernel_by_time ON _kernel(trace_id, device_id, start_ns);
    CREATE INDEX IF NOT EXISTS kernel_by_name ON _kernel(name_id);
    CREATE INDEX IF NOT EXISTS api_by_thread ON _api_call(trace_id, pid, tid, start_ns);
    CREATE INDEX IF NOT EXISTS range_by_thread ON _range(trace_id, pid, tid, start_ns);
    CREATE INDEX IF NOT EXISTS range_by_name ON _range(name_id);
  )SQL");
}

void Store::create_indexes() {
  create_fact_indexes();
  // A saved store written by an earlier proflint may hold the unused one.
  db_->exec(R"SQL(
    DROP INDEX IF EXISTS kernel_by_op;
    CREATE INDEX IF NOT EXISTS sample_point_by_series ON sample_point(series_id, ts_ns);
  )SQL");
}

void Store::create_report_indexes() {
  if (sqlite3_db_readonly(db_->getHandle(), "main") == 1) return;
  db_->exec(R"SQL(
    CREATE INDEX IF NOT EXISTS op_by_range ON _op(range_id);
    CREATE INDEX IF NOT EXISTS op_by_name ON _op(name_id);
  )SQL");
}

void Store::stage_into(OutputFile& out) {
  create_report_indexes();  // a saved store has every index
  out.stage_file([&](const std::string& temp) {
    try {
      SQLite::Statement vacuum(*db_, "VACUUM INTO ?");
      vacuum.bind(1, file_uri(temp));
      vacuum.exec();
    } catch (const std::exception& e) {
      throw input_error(out.path(), "", std::string("cannot write the store: ") + e.what());
    }
  });
}

void Store::save_as(const std::string& path) {
  OutputFile out(path, "--db");
  stage_into(out);
  out.commit();
}

}  // namespace proflint
