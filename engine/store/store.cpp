// engine/store/store.cpp — opening, creating and migrating the fact store.
#include "engine/store/store.hpp"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <sqlite3.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/common/output_file.hpp"
#include "engine/common/sqlite_file.hpp"
#include "engine/store/migrations.hpp"

namespace proflint {

namespace {
// 'PFLT': marks a SQLite file as a proflint store (PRAGMA application_id).
constexpr int kApplicationId = 0x50464C54;

// Pages of a new store. 16 KiB instead of SQLite's 4 KiB: a fourth as many pages for the writer
// to fill and link, for CREATE INDEX to sort into and for each reader to copy out of memdb (its
// buffer cannot be mapped). Measured with bench/ab.py (5 runs each): the x20 tiled trace 2.91 ->
// 2.82 s, the 10^6-event Kineto JSON 1.81 -> 1.75 s, the 10^6-row nsys export 3.85 -> 3.51 s, peak
// memory within 1%; 8 KiB gained less, 64 KiB lost it again. A saved store keeps its page size
// (VACUUM INTO copies it), and one of another size loads as before.
constexpr int kStorePageSize = 16384;

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
// default cap is 1 GiB). Larger stores go to a temporary file (Store::Sharing::temp_file).
constexpr sqlite3_int64 kMemdbMaxBytes = 0x7ffe0000;

// How much of a file store its connections map into memory: SQLite clamps it to its build's
// SQLITE_MAX_MMAP_SIZE (0x7fff0000 in Debian's build); pages beyond are read with pread.
constexpr long long kMmapBytes = 1LL << 40;

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

// Temporary store files are removed by their Store's destructor, which an exception unwinding
// the stack runs too. A signal that stops the process (Ctrl-C, kill) would skip it and leave a
// file of several GB in /tmp, so their paths are also kept here, where a signal handler can
// unlink them: a fixed table written before a slot is marked ready, read by the handler with
// nothing but unlink() and raise(), both async-signal-safe.
constexpr int kTempSlots = 32;
constexpr size_t kTempPathMax = 4096;
char temp_slot_path[kTempSlots][kTempPathMax];
std::atomic<int> temp_slot_state[kTempSlots];  // 0 free, 1 being written, 2 ready for the handler
constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

extern "C" void remove_temp_stores_and_die(int sig) {
  for (int i = 0; i < kTempSlots; ++i)
    if (temp_slot_state[i].load() == 2) ::unlink(temp_slot_path[i]);
  // SA_RESETHAND restored the default action: the process ends as the signal asked, with its status.
  ::raise(sig);
}

// Installs the handler once, for each signal whose action is still the default one (a program
// embedding proflint that handles a signal itself keeps its handler).
void install_temp_cleanup() {
  static const bool installed = [] {
    for (int sig : kCleanupSignals) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
      struct sigaction action {};
      action.sa_handler = remove_temp_stores_and_die;
      sigemptyset(&action.sa_mask);
      action.sa_flags = SA_RESETHAND;
      ::sigaction(sig, &action, nullptr);
    }
    return true;
  }();
  (void)installed;
}

void register_temp_path(const std::string& path) {
  install_temp_cleanup();
  if (path.size() >= kTempPathMax) return;  // the destructor still removes it
  for (int i = 0; i < kTempSlots; ++i) {
    int expected = 0;
    if (!temp_slot_state[i].compare_exchange_strong(expected, 1)) continue;
    std::memcpy(temp_slot_path[i], path.c_str(), path.size() + 1);
    temp_slot_state[i].store(2);
    return;
  }
}

void unregister_temp_path(const std::string& path) {
  for (int i = 0; i < kTempSlots; ++i) {
    int expected = 2;
    if (!temp_slot_state[i].compare_exchange_strong(expected, 1)) continue;
    bool mine = path == temp_slot_path[i];
    temp_slot_state[i].store(mine ? 0 : 2);
    if (mine) return;
  }
}

// A new, empty file under a unique name in Store::temp_folder() (mkstemp: never a name someone
// could have planted, mode 0600), registered for removal on a signal.
std::string make_temp_store_file() {
  std::string folder = Store::temp_folder();
  std::string pattern = folder + (folder.ends_with('/') ? "" : "/") + "proflint-store-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd < 0) {
    int err = errno;
    throw Error("cannot create a temporary store file in " + folder + ": " + std::strerror(err) +
                " (set TMPDIR to a writable folder with room for the store)");
  }
  ::close(fd);
  std::string path(name.data());
  register_temp_path(path);
  return path;
}
}  // namespace

Store::TempFile& Store::TempFile::operator=(TempFile&& other) noexcept {
  if (this != &other) {
    TempFile gone(std::move(*this));  // removes the file held so far
    path = std::move(other.path);
    other.path.clear();
  }
  return *this;
}

Store::TempFile::~TempFile() {
  if (path.empty()) return;
  ::unlink(path.c_str());
  // SQLite makes no other file in journal_mode=MEMORY, but a failed statement may have left one.
  ::unlink((path + "-journal").c_str());
  unregister_temp_path(path);
}

std::string Store::temp_folder() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

void Store::require_temp_room(double bytes) {
  std::string folder = temp_folder();
  struct statvfs fs {};
  if (::statvfs(folder.c_str(), &fs) != 0) {
    int err = errno;
    throw Error("cannot use the temporary folder " + folder + " for the fact store: " + std::strerror(err) +
                " (set TMPDIR to a writable folder)");
  }
  double free_bytes = static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize);
  if (free_bytes < bytes) {
    auto size = [](double b) {
      char text[64];
      if (b >= 1e9) std::snprintf(text, sizeof text, "%.1f GB", b / 1e9);
      else std::snprintf(text, sizeof text, "%.1f MB", b / 1e6);
      return std::string(text);
    };
    throw Error("not enough room in the temporary folder " + folder + " for the fact store: it needs about " +
                size(bytes) + " and " + size(free_bytes) + " are free (set TMPDIR to a folder with more room)");
  }
}

int latest_schema_version() { return static_cast<int>(migrations().size()); }

// The schema is built once per process, in a store that every new one copies page by page with
// the backup API: running every migration again for each store cost more than importing a small
// trace (40% of the `pipeline` fuzz target's time; tests and parallel imports create many).
Store Store::create_in_memory(Sharing sharing) {
  static std::mutex mutex;  // the schema store's connection is used by one thread at a time
  static Store* schema = [] {
    auto* s = new Store(create_in_memory_copy_target(Sharing::none, kStorePageSize));  // lives as long as the process
    s->migrate();
    return s;
  }();
  Store store = create_in_memory_copy_target(sharing, kStorePageSize);
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
  if (sharing == Sharing::temp_file) {
    TempFile temp(make_temp_store_file());
    auto db = std::make_unique<SQLite::Database>(temp.path, open_flags() & ~SQLite::OPEN_URI);
    set_page_size(*db);
    Store store(std::move(db), temp.path, nullptr);
    store.temp_ = std::move(temp);
    tune_for_bulk_load(store.db(), false);
    // It is also read during analysis (the calling thread's tasks): through mmap, as the readers.
    store.db().exec("PRAGMA mmap_size=" + std::to_string(kMmapBytes));
    return store;
  }
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
    auto bytes = [](SQLite::Database& db) {
      return db.execAndGet("PRAGMA page_count").getInt64() * db.execAndGet("PRAGMA page_size").getInt64();
    };
    return bytes(*db_) > memdb_max_bytes() / 2 || (side_ && bytes(*side_) > memdb_max_bytes() / 2);
  } catch (const std::exception&) {
    return true;  // a store that cannot even answer this is the full one
  }
}

Store Store::create_file(const std::string& path) {
  auto db = std::make_unique<SQLite::Database>(path, open_flags() & ~SQLite::OPEN_URI);
  db->exec("PRAGMA page_size=" + std::to_string(kStorePageSize));  // an existing file keeps its own
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

// The tables split_side moves into the side database. Written after derivation, the op table is
// the store's largest (the x20 tiled trace: _op 62 MB of 194 MB; 3.2M ops and 465 MB of the 10^7-
// event trace) and takes about as long as everything the store's connection writes then (kernels,
// API calls, source places, iterations...): 0.22 s against 0.29 s on x20. The ranges come with it
// because the op view reads them (a view reads one database), and they are written beside
// derivation anyway. Moving the API calls too balanced x20 better (0.27/0.23 s) but not an nsys
// export (0.32/0.13 s against 0.25/0.19 s), nor the 10^7-event trace, whose ops alone outweigh
// its kernels and API calls.
namespace {
constexpr std::string_view kSideTables[] = {"_op", "_range"};

// Whether `sql` names `word` (letters, digits and '_' on neither side).
bool names_word(std::string_view sql, std::string_view word) {
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = sql.find(word); at != std::string_view::npos; at = sql.find(word, at + 1)) {
    bool starts = at == 0 || !is_word(sql[at - 1]);
    bool ends = at + word.size() == sql.size() || !is_word(sql[at + word.size()]);
    if (starts && ends) return true;
  }
  return false;
}
}  // namespace

void Store::attach_side(SQLite::Database& db) {
  db.exec("ATTACH DATABASE '" + side_uri_ + "' AS proflint_side");
  if (!vfs_) db.exec("PRAGMA proflint_side.mmap_size=" + std::to_string(kMmapBytes));  // read as the main file is
  for (const auto& view : temp_views_) db.exec(view);
}

void Store::split_side() {
  const bool memdb = vfs_ && std::string_view(vfs_) == "memdb";
  if (side_ || (!memdb && temp_.path.empty())) return;
  std::unique_ptr<SQLite::Database> side;
  std::string uri;
  if (memdb) {
    std::string side_name = name_ + "-side";
    side = std::make_unique<SQLite::Database>(side_name.c_str(), open_flags(), 0, "memdb");
    side->exec("PRAGMA page_size=" + std::to_string(kStorePageSize));
    set_memdb_size_limit(*side);
    tune_for_bulk_load(*side, true);
    uri = "file:" + side_name + "?vfs=memdb";
  } else {
    side_temp_ = TempFile(make_temp_store_file());
    side = std::make_unique<SQLite::Database>(side_temp_.path, open_flags() & ~SQLite::OPEN_URI);
    side->exec("PRAGMA page_size=" + std::to_string(kStorePageSize));
    tune_for_bulk_load(*side, false);
    uri = file_uri(side_temp_.path);
  }
  std::vector<std::string> tables, indexes, views, drops;
  std::vector<std::string> moved(std::begin(kSideTables), std::end(kSideTables));
  for (std::string_view table : kSideTables) {
    SQLite::Statement q(*db_, "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = ? AND sql IS NOT NULL "
                              "ORDER BY type = 'index'");
    q.bind(1, std::string(table));
    while (q.executeStep()) (q.getColumn(0).getString() == "table" ? tables : indexes).push_back(q.getColumn(2).getString());
    drops.push_back("DROP TABLE " + std::string(table));  // its indexes go with it
  }
  // Views over the side tables, and views over those, become TEMP views.
  for (bool more = true; more;) {
    more = false;
    SQLite::Statement q(*db_, "SELECT name, sql FROM sqlite_master WHERE type = 'view' ORDER BY rowid");
    while (q.executeStep()) {
      std::string name = q.getColumn(0).getString(), sql = q.getColumn(1).getString();
      if (std::find(moved.begin(), moved.end(), name) != moved.end()) continue;
      if (std::none_of(moved.begin(), moved.end(), [&](const std::string& t) { return names_word(sql, t); })) continue;
      const std::string_view create = "CREATE VIEW ";
      if (!sql.starts_with(create)) throw Error("internal: cannot move view " + name + " of the store to TEMP");
      views.push_back("CREATE TEMP VIEW " + sql.substr(create.size()));
      drops.insert(drops.begin(), "DROP VIEW " + name);
      moved.push_back(name);
      more = true;
    }
  }
  for (const auto& sql : tables) side->exec(sql);
  for (const auto& sql : indexes) side->exec(sql);
  SQLite::Transaction tx(*db_);
  for (const auto& sql : drops) db_->exec(sql);
  tx.commit();
  // The two connections write their own databases at once (ModelWrite::finish), but the store's
  // connection also reads the side database's schema now and then (after its own schema changed,
  // SQLite reloads every schema it holds), and a memdb database refuses a reader while its writer
  // is busy: such a read waits for the side's statement to end instead of failing with "database is
  // locked". The side connection never reads the store's database, so neither waits for the other
  // in turn.
  constexpr int kWaitMs = 10 * 60 * 1000;
  sqlite3_busy_timeout(db_->getHandle(), kWaitMs);
  sqlite3_busy_timeout(side->getHandle(), kWaitMs);
  side_uri_ = uri;
  temp_views_ = std::move(views);
  side_ = std::move(side);
  attach_side(*db_);
}

std::unique_ptr<SQLite::Database> Store::open_reader() {
  if (name_.empty()) throw Error("internal: this in-memory store has a single connection");
  auto reader = std::make_unique<SQLite::Database>(
      name_.c_str(), SQLite::OPEN_READONLY | SQLite::OPEN_NOMUTEX | SQLite::OPEN_URI, 0, vfs_);
  reader->exec("PRAGMA temp_store=MEMORY");  // before the TEMP views: changing it drops every TEMP object
  if (side_) attach_side(*reader);
  // A file's pages are read through mmap (as fast as memdb's buffer, with no copy into this
  // connection's page cache); memdb ignores it.
  if (!vfs_) reader->exec("PRAGMA mmap_size=" + std::to_string(kMmapBytes));
  ++readers_opened_;
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
// range_by_name only in a store of several traces (or when a report, an export or a saved store
// asks: create_report_indexes). Every statement that selects ranges by name does it once per trace
// for a set of names ("name_id IN (SELECT id FROM string WHERE ...)"), never row by row, so in a
// one-trace store a scan of the range table serves it: on the x20 tiled trace the index took
// 0.115 s to build and the statement that used it there scans in 0.025 s (docs/benchmarks.md).
// range_by_thread stays: allocation-churn looks up the range around each allocation call by
// thread and time, a scan per call without it. The op indexes likewise wait for a report: no
// statement of `analyze` uses them, and they cost 0.3 s of the x20 tiled trace's 6 s.
// Correlation ids have none: derivation resolves them in memory and writes the links
// (api_call_id, op_id). _kernel(op_id) had an index that no query used (the audit found none).
namespace {
void create_range_name_index(SQLite::Database& db) { db.exec("CREATE INDEX IF NOT EXISTS range_by_name ON _range(name_id)"); }
}  // namespace

namespace {
// CREATE INDEX sorts the table; SQLite can sort with helper threads (the machine's second core).
void sort_with_helpers(SQLite::Database& db) {
  db.exec("PRAGMA threads=" + std::to_string(std::clamp(std::thread::hardware_concurrency(), 1u, 4u) - 1));
}
}  // namespace

void Store::create_main_indexes() {
  sort_with_helpers(*db_);
  db_->exec(R"SQL(
    CREATE INDEX IF NOT EXISTS kernel_by_time ON _kernel(trace_id, device_id, start_ns);
    CREATE INDEX IF NOT EXISTS kernel_by_name ON _kernel(name_id);
    CREATE INDEX IF NOT EXISTS api_by_thread ON _api_call(trace_id, pid, tid, start_ns);
  )SQL");
  // A saved store written by an earlier proflint may hold the unused one.
  db_->exec(R"SQL(
    DROP INDEX IF EXISTS kernel_by_op;
    CREATE INDEX IF NOT EXISTS sample_point_by_series ON sample_point(series_id, ts_ns);
  )SQL");
}

void Store::create_side_indexes(bool several_traces) {
  sort_with_helpers(side_db());
  create_range_thread_index();
  if (several_traces) create_range_name_index(side_db());
}

void Store::create_range_thread_index() {
  side_db().exec("CREATE INDEX IF NOT EXISTS range_by_thread ON _range(trace_id, pid, tid, start_ns)");
}

void Store::create_indexes() {
  create_main_indexes();
  create_side_indexes(db_->execAndGet("SELECT count(*) FROM trace").getInt64() > 1);
}

void Store::create_report_indexes() {
  if (sqlite3_db_readonly(db_->getHandle(), "main") == 1) return;
  create_range_name_index(side_db());
  side_db().exec(R"SQL(
    CREATE INDEX IF NOT EXISTS op_by_range ON _op(range_id);
    CREATE INDEX IF NOT EXISTS op_by_name ON _op(name_id);
  )SQL");
}

void Store::end_bulk_load() {
  if (vfs_ || name_.empty()) return;  // memdb and ":memory:" caches are small, or are the store itself
  for (SQLite::Database* db : {db_.get(), side_.get()}) {
    if (!db) continue;
    db->exec("PRAGMA cache_size=-4096");
    db->exec("PRAGMA shrink_memory");
  }
}

void Store::stage_into(OutputFile& out) {
  if (side_) throw Error("internal: a store split in two databases cannot be saved");
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
