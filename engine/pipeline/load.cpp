// engine/pipeline/load.cpp — see load.hpp.
#include "engine/pipeline/load.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <new>
#include <optional>
#include <string_view>
#include <system_error>
#include <thread>

#include "engine/common/error.hpp"
#include "engine/common/jobs.hpp"
#include "engine/common/memory.hpp"
#include "engine/common/sqlite_file.hpp"
#include "engine/store/migrations.hpp"

namespace proflint {

namespace {

void backup_into(const std::string& path, sqlite3* source, Store& copy) {
  sqlite3* dst = copy.db().getHandle();
  sqlite3_backup* backup = sqlite3_backup_init(dst, "main", source, "main");
  if (!backup) throw input_error(path, "", std::string("cannot read store: ") + sqlite3_errmsg(dst));
  int rc = sqlite3_backup_step(backup, -1);
  sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE) throw input_error(path, "", std::string("cannot read store: ") + sqlite3_errstr(rc));
}

int stored_schema_version(const std::string& path) {
  try {
    SQLite::Database probe(path, SQLite::OPEN_READONLY);
    return probe.execAndGet("PRAGMA user_version").getInt();
  } catch (const std::exception& e) {
    throw input_error(path, "", "cannot open store: " + sqlite_damage_words(e.what()));
  }
}

// The copy gets the file's page size (else SQLite refuses the backup into memory with "attempt
// to write a readonly database": every store of another page size failed so) and no schema of
// its own, which the backup would replace whole.
Store copy_of(const std::string& path, SQLite::Database& source, Store::Sharing sharing) {
  Store copy = Store::create_in_memory_copy_target(sharing, source.execAndGet("PRAGMA page_size").getInt());
  backup_into(path, source.getHandle(), copy);
  return copy;
}

// Copies a saved store into a fresh in-memory store with the SQLite backup API. A store saved by
// an older proflint is upgraded in the copy (the user's file is never modified).
Store copy_store_into_memory(const std::string& path, Store::Sharing sharing) {
  int version = stored_schema_version(path);
  if (version >= 1 && version < latest_schema_version()) {
    SQLite::Database source(path, SQLite::OPEN_READONLY);
    Store copy = copy_of(path, source, sharing);
    const auto& all = migrations();
    for (size_t i = static_cast<size_t>(version); i < all.size(); ++i) {
      copy.db().exec(all[i].sql);
      copy.db().exec("PRAGMA user_version=" + std::to_string(i + 1));
    }
    return copy;
  }
  Store source = Store::open_existing(path, /*read_only=*/true);
  return copy_of(path, source.db(), sharing);
}

// PROFLINT_TIMINGS=1 prints how long each stage took on stderr (used by bench/ingest_real.sh).
class StageTimer {
 public:
  explicit StageTimer(const char* stage)
      : stage_(stage), start_(std::chrono::steady_clock::now()), cpu_(std::clock()) {}
  ~StageTimer() {
    static const bool enabled = std::getenv("PROFLINT_TIMINGS") != nullptr;
    if (!enabled) return;
    auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
    // CPU time of all threads: cpu ÷ wall is how many cores the stage kept busy.
    double cpu_ms = 1000.0 * static_cast<double>(std::clock() - cpu_) / CLOCKS_PER_SEC;
    std::cerr << "timing " << stage_ << " " << ms << " ms cpu " << cpu_ms << " ms peak-rss "
              << resident_memory().peak_mib << " MiB\n";
  }

 private:
  const char* stage_;
  std::chrono::steady_clock::time_point start_;
  std::clock_t cpu_;
};

// A file did not fit in a shared in-memory store (load_inputs starts over without sharing).
struct SharedStoreFull {};

// True when `error`, raised while filling the shared store `store`, is that store running out of
// room: SQLite's "database or disk is full" (memdb at its size limit; an in-memory store has no
// disk) or "out of memory" (its buffer could not grow), or the store being near its limit.
bool ran_out_of_room(const Store& store, const std::exception_ptr& error) {
  if (store.near_shared_limit()) return true;
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    std::string_view what = e.what();
    return what.find("database or disk is full") != std::string_view::npos ||
           what.find("out of memory") != std::string_view::npos;
  } catch (...) {
  }
  return false;
}

// Bytes of store an input will probably need, from its size and kind (measured on the benchmark
// inputs and real traces: a store holds ~0.3-0.5 bytes per byte of Kineto JSON, 9-14 per byte of
// gzip, ~2.1 per byte of an nsys export), rounded up.
double estimated_store_bytes(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  auto size = static_cast<double>(fs::file_size(path, ec));
  if (ec) return 0;
  char head[16] = {};
  std::ifstream in(path, std::ios::binary);
  in.read(head, sizeof head);
  if (static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b) return size * 16;
  if (std::string_view(head, 15) == "SQLite format 3") return size * 2.5;
  return size * 0.6;
}

// Above this estimate a run uses a Sharing::none store from the start instead of discovering the
// limit of a shared one halfway through.
constexpr double kSharedStoreBudget = 1.2e9;

// Imports the files in the order given. With several files and more than one job, the first is
// imported into `store` on this thread while the others are imported at the same time, each into
// a store of its own on a thread of its own (at most jobs - 1 at once); those are then appended
// in order (Store::append_imported), which gives exactly the store of a sequential import. The
// first failure in file order is the one reported, as it would be sequentially.
void import_all(const std::vector<std::string>& paths, Store& store, const LoadOptions& options, bool side_by_side) {
  // One file's import already keeps two or three threads busy (inflate, parse, SQLite inserts):
  // on fewer than four cores, files side by side would only add the appending, so unless asked
  // (LoadOptions::jobs, PROFLINT_JOBS) they go one after the other there.
  unsigned jobs = available_jobs(options.jobs);
  if (options.jobs == 0 && !std::getenv("PROFLINT_JOBS") && std::thread::hardware_concurrency() < 4) jobs = 1;
  jobs = std::min<unsigned>(jobs, static_cast<unsigned>(paths.size()));
  if (jobs <= 1 || !side_by_side) {
    for (const auto& path : paths) import_file(path, store, options.import);
    return;
  }
  struct Side {
    std::optional<Store> store;
    std::exception_ptr error;
    bool full = false;  // failed in a shared store grown near its limit
  };
  std::vector<Side> sides(paths.size());
  ImportOptions quiet = options.import;
  quiet.progress = false;  // only this thread's file draws progress
  std::atomic<size_t> next{1};
  auto work = [&] {
    for (size_t i = next++; i < paths.size(); i = next++) {
      std::optional<Store> own;
      try {
        own.emplace(Store::create_in_memory());
        import_file(paths[i], *own, quiet);
        sides[i].store = std::move(own);
      } catch (...) {
        sides[i].error = std::current_exception();
        sides[i].full = own && ran_out_of_room(*own, sides[i].error);
      }
    }
  };
  std::vector<std::thread> threads;
  try {
    for (unsigned j = 1; j < jobs; ++j) threads.emplace_back(work);
  } catch (const std::system_error&) {
    // No more threads to be had: the ones started take the other files.
  }
  try {
    import_file(paths[0], store, options.import);
  } catch (...) {
    sides[0].error = std::current_exception();
  }
  work();  // then this thread takes files nobody has started yet
  for (auto& t : threads) t.join();
  for (auto& side : sides) {
    if (side.full) throw SharedStoreFull();
    if (side.error) std::rethrow_exception(side.error);
    if (side.store) {
      StageTimer timer("import:append");
      store.append_imported(*side.store);
      side.store.reset();  // its memory goes before the next one is appended
    }
  }
}

// A store whose tables were dropped or whose views no longer compile (edited after proflint wrote
// it) would fail later with SQLite's bare "no such table: main._kernel": every table and view of
// the current schema must exist and compile. Preparing `SELECT * ... LIMIT 0` reads no rows.
void verify_store_schema(const std::string& path, Store& store) {
  static const std::vector<std::string> expected = [] {
    std::vector<std::string> names;
    Store fresh = Store::create_in_memory(Store::Sharing::none);
    SQLite::Statement q(fresh.db(), "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name");
    while (q.executeStep()) names.push_back(q.getColumn(0).getString());
    return names;
  }();
  for (const auto& name : expected) {
    try {
      SQLite::Statement probe(store.db(), "SELECT * FROM \"" + name + "\" LIMIT 0");
    } catch (const std::exception& e) {
      // SQLite compiles the whole schema for the first statement: a damaged entry fails every
      // table's probe, so the place is that entry, not the table probed.
      std::string entry = damaged_schema_entry(e.what());
      throw input_error(path, entry.empty() ? "table " + name : "schema entry " + entry,
                        "damaged proflint store: " + sqlite_damage_words(e.what()) + " (expected the tables and views of schema version " +
                            std::to_string(latest_schema_version()) + "; re-create the store from the profile)");
    }
  }
}

// Only regular files are read: opening a FIFO blocks until some writer appears, and a device
// may never end. Checked before anything opens the file (the store sniffing reads its header).
void require_regular_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    int err = errno;
    throw input_error(path, "", err == ENOENT ? std::string("no such file") : std::string("cannot read: ") + std::strerror(err));
  }
  if (S_ISREG(st.st_mode)) return;
  if (S_ISDIR(st.st_mode)) throw input_error(path, "", "is a directory, expected a profile file");
  const char* kind = S_ISFIFO(st.st_mode)  ? "a FIFO (named pipe)"
                     : S_ISCHR(st.st_mode) ? "a character device"
                     : S_ISBLK(st.st_mode) ? "a block device"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "not a regular file";
  throw input_error(path, "", std::string("is ") + kind + ", expected a regular profile file (save the data to a file first)");
}

}  // namespace

Store load_inputs(const std::vector<std::string>& paths, const LoadOptions& options) {
  if (paths.empty()) throw Error("no input profile given");
  for (const auto& path : paths) require_regular_file(path);
  if (paths.size() == 1 && Store::is_store_file(paths[0])) {
    check_sqlite_header(paths[0], /*copied_for_writing=*/true);
    try {
      std::error_code ec;
      auto bytes = static_cast<double>(std::filesystem::file_size(paths[0], ec));
      // A store saved by an older proflint lacks the derived columns added since (and may hold
      // derived values computed by older rules): derive it again.
      bool upgraded = stored_schema_version(paths[0]) < latest_schema_version();
      Store store = copy_store_into_memory(
          paths[0], bytes * 1.2 > kSharedStoreBudget ? Store::Sharing::none : Store::Sharing::shared);
      verify_store_schema(paths[0], store);
      StageTimer timer("derive");
      derive_all(store, options.derive, options.rederive || upgraded);
      return store;
    } catch (const Error&) {
      throw;
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      // "no such table: main._kernel", "malformed database schema", "unordered_map::at": a store
      // that was damaged or edited after proflint wrote it.
      throw input_error(paths[0], "",
                        "damaged proflint store: " + sqlite_damage_words(e.what()) + " (expected the tables and rows of schema version " +
                            std::to_string(latest_schema_version()) +
                            " as proflint ingest writes them; re-create the store from the profile)");
    }
  }
  for (const auto& path : paths)
    if (Store::is_store_file(path))
      throw input_error(path, "", "a saved proflint store can only be given alone, not mixed with other inputs");
  // A shared store lets derivation and analysis use several threads but holds ~2 GiB at most; a
  // run that would not fit uses a plain one (one thread there), decided from the input sizes and,
  // when the estimate was wrong, after the shared store filled up.
  double estimate = 0;
  for (const auto& path : paths) estimate += estimated_store_bytes(path);
  auto sharing = estimate > kSharedStoreBudget ? Store::Sharing::none : Store::Sharing::shared;
  for (;;) {
    Store store = Store::create_in_memory(sharing);
    try {
      {
        StageTimer timer("import");
        import_all(paths, store, options, sharing == Store::Sharing::shared);
      }
      StageTimer timer("derive");
      derive_all(store, options.derive, false);
      return store;
    } catch (const SharedStoreFull&) {
      if (sharing == Store::Sharing::none) throw Error("internal: an unshared store reported a shared limit");
      sharing = Store::Sharing::none;
    } catch (...) {
      if (sharing == Store::Sharing::none || !ran_out_of_room(store, std::current_exception())) throw;
      if (std::getenv("PROFLINT_TIMINGS")) std::cerr << "timing note: shared store full, loading again unshared\n";
      sharing = Store::Sharing::none;
    }
  }
}

}  // namespace proflint
