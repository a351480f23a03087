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
#include "engine/common/timing.hpp"
#include "engine/common/sqlite_file.hpp"
#include "engine/derive/derive_trace.hpp"
#include "engine/derive/jobs.hpp"
#include "engine/derive/sample_alignment.hpp"
#include "engine/import/samples/samples_importers.hpp"
#include "engine/import/importer.hpp"
#include "engine/model/model.hpp"
#include "engine/store/migrations.hpp"
#include "engine/store/model_io.hpp"

namespace proflint {

namespace {

void backup_into(const std::string& path, sqlite3* source, Store& copy) {
  sqlite3* dst = copy.db().getHandle();
  sqlite3_backup* backup = sqlite3_backup_init(dst, "main", source, "main");
  if (!backup) throw input_error(path, "", std::string("cannot read store: ") + sqlite3_errmsg(dst));
  int rc = sqlite3_backup_step(backup, -1);
  sqlite3_backup_finish(backup);
  if ((rc == SQLITE_FULL || (rc & 0xff) == SQLITE_IOERR) && !copy.temp_path().empty())
    throw Error("copying " + path + " into the temporary folder " + Store::temp_folder() + " failed: " +
                sqlite3_errstr(rc) + " (set TMPDIR to a folder with more room)");
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
    if (!timings_enabled()) return;
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

// Above this estimate a run uses a Sharing::temp_file store from the start instead of discovering
// the limit of a shared one halfway through. PROFLINT_SHARED_STORE_BUDGET (bytes, smaller only) is
// for tests: it sends a fixture down the temp_file path.
constexpr double kSharedStoreBudget = 1.2e9;

double shared_store_budget() {
  const char* env = std::getenv("PROFLINT_SHARED_STORE_BUDGET");
  double n = env ? std::atof(env) : 0;
  return n > 0 && n < kSharedStoreBudget ? n : kSharedStoreBudget;
}

// A temp_file store that failed to fill or to be made: SQLite's "database or disk is full" and
// "disk I/O error" there are the temporary folder's disk (full, or a file size limit), and are
// said with the folder's name.
[[noreturn]] void rethrow_temp_store_error(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    std::string_view what = e.what();
    if (what.starts_with("internal: ")) what.remove_prefix(10);  // the writer's wrapping: the disk is not proflint's fault
    if (what.find("disk is full") != std::string_view::npos || what.find("disk I/O error") != std::string_view::npos)
      throw Error("writing the fact store to the temporary folder " + Store::temp_folder() + " failed: " +
                  std::string(what) + " (set TMPDIR to a folder with more room)");
    throw;
  }
}

// A new temp_file store, once its folder has room for `bytes`.
Store create_temp_store(double bytes) {
  Store::require_temp_room(bytes);
  try {
    return Store::create_in_memory(Store::Sharing::temp_file);
  } catch (...) {
    rethrow_temp_store_error(std::current_exception());
  }
}

// Derivation of one model; a failure names the file.
void derive_model(const std::string& path, TraceModel& model, const DeriveOptions& options) {
  try {
    derive_trace(model, options);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw input_error(path, "derivation", e.what());
  }
}

// Imports and derives every file, each into its model. With several files and more than one job,
// files are taken by threads (at most `jobs` at once), each parsing and deriving its own file: the
// models do not depend on the threads. The first failure in file order is the one reported, as
// it would be sequentially.
void import_and_derive_all(const std::vector<std::string>& paths, std::vector<TraceModel>& models,
                           const LoadOptions& options) {
  // One file's import already keeps two or three threads busy (inflate, parse, sink): on fewer
  // than four cores, files side by side would only compete, so unless asked (LoadOptions::jobs,
  // PROFLINT_JOBS) they go one after the other there.
  unsigned jobs = available_jobs(options.jobs);
  if (options.jobs == 0 && !std::getenv("PROFLINT_JOBS") && std::thread::hardware_concurrency() < 4) jobs = 1;
  jobs = std::min<unsigned>(jobs, static_cast<unsigned>(paths.size()));
  auto one = [&](size_t i, const ImportOptions& import) {
    {
      StageTimer timer("import");
      import_file(paths[i], models[i], import);
    }
    StageTimer timer("derive");
    derive_model(paths[i], models[i], options.derive);
  };
  if (jobs <= 1) {
    for (size_t i = 0; i < paths.size(); ++i) one(i, options.import);
    return;
  }
  std::vector<std::exception_ptr> errors(paths.size());
  ImportOptions quiet = options.import;
  quiet.progress = false;  // only the first file draws progress
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < paths.size(); i = next++) {
      try {
        one(i, i == 0 ? options.import : quiet);
      } catch (...) {
        errors[i] = std::current_exception();
        models[i] = TraceModel{};  // its memory goes now
      }
    }
  };
  std::vector<std::thread> threads;
  try {
    for (unsigned j = 1; j < jobs; ++j) threads.emplace_back(work);
  } catch (const std::system_error&) {
    // No more threads to be had: the ones started take the other files.
  }
  work();
  for (auto& t : threads) t.join();
  for (auto& error : errors)
    if (error) std::rethrow_exception(error);
}

// Sampling logs given beside profiles (nvidia-smi CSV, dmon, memory timeline, ...) become part of
// the profile's trace they overlap best, on its clock; logs given alone stay traces of their own.
void attach_sampling_logs(std::vector<TraceModel>& models, std::optional<int64_t> offset_ns) {
  std::vector<size_t> traces, logs;
  for (size_t i = 0; i < models.size(); ++i) (is_sampling_log_format(models[i].info.format) ? logs : traces).push_back(i);
  if (traces.empty() || logs.empty()) return;
  for (size_t l : logs) {
    TraceModel& log = models[l];
    size_t best = traces.front();
    SampleAlignment chosen;
    bool first = true;
    for (size_t t : traces) {
      const TraceModel& trace = models[t];
      SampleAlignment a = align_samples(log.start_ns, log.end_ns, log.info.clock, trace.start_ns, trace.end_ns,
                                        trace.info.clock, offset_ns,
                                        ClockAnchor{trace.info.epoch_base_ns, trace.info.utc_offset_ns});
      if (first || (a.aligned && a.overlap_ns > chosen.overlap_ns)) {
        chosen = a;
        best = t;
        first = false;
      }
    }
    attach_samples(models[best], log, chosen);
  }
  for (auto it = logs.rbegin(); it != logs.rend(); ++it) models.erase(models.begin() + static_cast<std::ptrdiff_t>(*it));
}

std::vector<TraceModel*> pointers_to(std::vector<TraceModel>& models) {
  std::vector<TraceModel*> all;
  for (auto& m : models) all.push_back(&m);
  return all;
}

// The jobs across the derived models (they span traces, so they are derived once all are).
JobFacts jobs_of(const std::vector<TraceModel*>& models, const DeriveOptions& options) {
  std::vector<const TraceModel*> traces(models.begin(), models.end());
  return derive_jobs(traces, options);
}

// Writes the derived models and the jobs across them into the fresh `store` in one go, then the
// indexes readers of the store need. The models are given back table by table as their rows go
// in (write_models' `release`) and `models` is left empty: the models and the store both whole in
// memory were the peak of a run (the x20 tiled trace: 541 MiB). A store that runs out of room
// while it is written therefore cannot be written again from them: load_inputs reads the files
// again for that.
void write_store(std::vector<TraceModel>& models, const JobFacts& jobs, Store& store) {
  StepClock clock;
  {
    write_models(store, pointers_to(models), &jobs, /*release=*/true);
  }
  std::vector<TraceModel>().swap(models);
  clock.lap("write");
  store.create_indexes();
  store.end_bulk_load();
  clock.lap("indexes");
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
  // The store's writer reads its rows from an eponymous virtual table of this name (model_io.cpp):
  // a table or view of the same name would take its place when the store is derived again.
  SQLite::Statement reserved(store.db(), "SELECT type FROM sqlite_master WHERE name = 'proflint_feed' COLLATE NOCASE");
  if (reserved.executeStep())
    throw input_error(path, "schema entry proflint_feed",
                      "damaged proflint store: a " + reserved.getColumn(0).getString() +
                          " named proflint_feed, a name proflint keeps for writing its rows (re-create the store "
                          "from the profile)");
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
  return_large_blocks_when_freed();
  if (paths.size() == 1 && Store::is_store_file(paths[0])) {
    check_sqlite_header(paths[0], /*copied_for_writing=*/true);
    try {
      std::error_code ec;
      auto bytes = static_cast<double>(std::filesystem::file_size(paths[0], ec));
      // A store saved by an older proflint lacks the derived columns added since (and may hold
      // derived values computed by older rules): derive it again.
      bool upgraded = stored_schema_version(paths[0]) < latest_schema_version();
      bool big = bytes * 1.2 > shared_store_budget();
      if (big) Store::require_temp_room(bytes * 1.2);
      Store store = copy_store_into_memory(paths[0], big ? Store::Sharing::temp_file : Store::Sharing::shared);
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
  std::vector<TraceModel> models(paths.size());
  // Imports and derives every file, then the jobs across them (again after a full store).
  JobFacts jobs;
  auto prepare = [&] {
    import_and_derive_all(paths, models, options);
    attach_sampling_logs(models, options.sample_offset_ns);
    StepClock clock;
    jobs = jobs_of(pointers_to(models), options.derive);
    clock.lap("jobs");
  };
  prepare();
  // A shared store in memory holds ~2 GiB at most; a run that would not fit writes a temporary
  // file instead, which analysis's threads read as well (through mmap). Decided from the input
  // sizes and, when the estimate was wrong, after the shared store filled up (the files are then
  // read and derived again: the models were given back as they were written).
  double estimate = 0;
  for (const auto& path : paths) estimate += estimated_store_bytes(path);
  auto sharing = estimate > shared_store_budget() ? Store::Sharing::temp_file : Store::Sharing::shared;
  StageTimer timer("derive");  // the write belongs to derivation's figure, as when it updated the store
  if (sharing == Store::Sharing::shared) {
    {
      Store store = Store::create_in_memory(sharing);
      try {
        write_store(models, jobs, store);
        return store;
      } catch (...) {
        if (!ran_out_of_room(store, std::current_exception())) throw;
        if (timings_enabled()) std::cerr << "timing note: shared store full, loading again into a temporary file\n";
      }
    }  // the full store goes before the files are read again
    models = std::vector<TraceModel>(paths.size());
    prepare();
  }
  Store store = create_temp_store(estimate);
  try {
    write_store(models, jobs, store);
  } catch (...) {
    rethrow_temp_store_error(std::current_exception());
  }
  return store;
}

ImportResult import_file(const std::string& path, Store& store, const ImportOptions& options) {
  TraceModel model;
  ImportResult result = import_file(path, model, options);
  write_models(store, {&model});
  result.trace_id = model.trace_id;
  return result;
}

ImportResult import_into(const Importer& importer, const std::string& path, Store& store, const ImportOptions& options) {
  TraceModel model;
  ImportResult result = importer.import(path, model, options);
  write_models(store, {&model});
  result.trace_id = model.trace_id;
  return result;
}

void derive_all(Store& store, const DeriveOptions& options, bool force) {
  StepClock clock;
  // A saved store loaded as it is (the common case) is not read into models at all: its derived
  // tables, jobs and graph replays included, are those derivation wrote when it was saved.
  bool needed = force || store.db().execAndGet("SELECT COUNT(*) FROM trace WHERE iteration_source IS NULL").getInt64() > 0;
  if (needed) {
    std::vector<TraceModel> models = load_model(store);
    clock.lap("load_model");
    for (auto& m : models) derive_model(m.info.path, m, options);
    clock.lap("passes");
    std::vector<TraceModel*> all = pointers_to(models);
    JobFacts jobs = jobs_of(all, options);
    clock.lap("jobs");
    // Indexes would be updated row by row: dropped, and built again once the rows are in.
    store.db().exec(
        "DROP INDEX IF EXISTS kernel_by_time; DROP INDEX IF EXISTS kernel_by_name; DROP INDEX IF EXISTS api_by_thread; "
        "DROP INDEX IF EXISTS range_by_thread; DROP INDEX IF EXISTS range_by_name; DROP INDEX IF EXISTS kernel_by_op; "
        "DROP INDEX IF EXISTS op_by_range; DROP INDEX IF EXISTS op_by_name; DROP INDEX IF EXISTS sample_point_by_series;");
    clear_store(store);
    write_models(store, all, &jobs, /*release=*/true);  // the models go with this scope anyway
    clock.lap("write");
  }
  store.create_indexes();
  store.end_bulk_load();
  clock.lap("indexes");
}

}  // namespace proflint
