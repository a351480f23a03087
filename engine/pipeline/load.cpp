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
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
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
#include "engine/store/value_bounds.hpp"

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
void derive_model(const std::string& path, TraceModel& model, const DeriveOptions& options,
                  const std::function<void()>& ranges_derived = {}) {
  try {
    derive_trace(model, options, ranges_derived);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw input_error(path, "derivation", e.what());
  }
}

// How many of `files` files to work on side by side: one file's import already keeps two or
// three threads busy (inflate, parse, sink), so on fewer than four cores files side by side would
// only compete and go one after the other unless asked (LoadOptions::jobs, PROFLINT_JOBS).
unsigned files_side_by_side(size_t files, const LoadOptions& options) {
  unsigned jobs = available_jobs(options.jobs);
  if (options.jobs == 0 && !std::getenv("PROFLINT_JOBS") && std::thread::hardware_concurrency() < 4) jobs = 1;
  return std::min<unsigned>(jobs, static_cast<unsigned>(files));
}

// Runs work(i) for every i < n, on up to `jobs` threads taking the next i; the failure of each i
// is kept in its place (the callers report the first in file order, as a sequential run would).
std::vector<std::exception_ptr> for_each_file(size_t n, unsigned jobs, const std::function<void(size_t)>& work) {
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  auto take = [&] {
    for (size_t i = next++; i < n; i = next++) {
      try {
        work(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  try {
    for (unsigned j = 1; j < jobs; ++j) threads.emplace_back(take);
  } catch (const std::system_error&) {
    // No more threads to be had: the ones started take the other files.
  }
  take();
  for (auto& t : threads) t.join();
  return errors;
}

// Imports every file into its model. A failed import leaves its model empty (its memory goes at
// once) and its error in its place.
std::vector<std::exception_ptr> import_all(const std::vector<std::string>& paths, std::vector<TraceModel>& models,
                                           const LoadOptions& options) {
  ImportOptions quiet = options.import;
  quiet.progress = false;  // only the first file draws progress
  return for_each_file(paths.size(), files_side_by_side(paths.size(), options), [&](size_t i) {
    StageTimer timer("import");
    try {
      import_file(paths[i], models[i], i == 0 ? options.import : quiet);
    } catch (...) {
      models[i] = TraceModel{};
      throw;
    }
  });
}

// Derives every model (files side by side as for import); ranges_derived(i) as derive_trace's
// for model i, from the thread deriving it. Throws the first failure in file order.
void derive_models(const std::vector<std::string>& paths, std::vector<TraceModel>& models, const LoadOptions& options,
                   const std::function<void(size_t)>& ranges_derived) {
  auto errors = for_each_file(models.size(), files_side_by_side(models.size(), options), [&](size_t i) {
    StageTimer timer("derive");
    derive_model(paths[i], models[i], options.derive, [&] {
      if (ranges_derived) ranges_derived(i);
    });
  });
  for (auto& error : errors)
    if (error) std::rethrow_exception(error);
}

// Sampling logs given beside profiles (nvidia-smi CSV, dmon, memory timeline, ...) become part of
// the profile's trace they overlap best, on its clock; logs given alone stay traces of their own.
// Run between import and derivation (which reads none of what moves: sample series, operator
// timings, import issues); `paths` loses the logs' entries with `models`.
void attach_sampling_logs(std::vector<TraceModel>& models, std::vector<std::string>& paths, std::optional<int64_t> offset_ns) {
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
  for (auto it = logs.rbegin(); it != logs.rend(); ++it) {
    models.erase(models.begin() + static_cast<std::ptrdiff_t>(*it));
    paths.erase(paths.begin() + static_cast<std::ptrdiff_t>(*it));
  }
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

// Which models' ranges derivation has published (derive_trace's ranges_derived), for the thread
// writing beside it; cancel() releases that thread when derivation fails.
class RangesReady {
 public:
  explicit RangesReady(size_t models) : ready_(models, false) {}
  void publish(size_t model) {
    {
      std::lock_guard lock(mutex_);
      ready_[model] = true;
    }
    changed_.notify_all();
  }
  void cancel() {
    {
      std::lock_guard lock(mutex_);
      cancelled_ = true;
    }
    changed_.notify_all();
  }
  // True once model's ranges are published, false when cancelled first.
  bool wait(size_t model) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return ready_[model] || cancelled_; });
    return ready_[model] && !cancelled_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<bool> ready_;
  bool cancelled_ = false;
};

// Imports and derives the files and writes them into the fresh `store` in one go, then the indexes
// readers of the store need. While the models are derived, a second thread writes what is final
// already: the tables derivation does not touch, then each model's ranges as soon as derivation
// has nested and classified them (in file order), then the index on ranges by thread; the rest is
// written once every model and the jobs across them are derived (ModelWrite). On two cores this
// puts the range table's write and index beside derivation (docs/benchmarks.md: the x20 tiled
// trace 3.55 -> 3.05 s). The index's sort then runs while derivation holds the most memory (x20:
// peak 390 -> 419 MiB; the 10^6-row nsys export 418 -> 450 MiB, where the thread beside finishes
// with derivation and the index gains no time).
// The models are given back table by table as their rows go in and `models` is left empty: the
// models and the store both whole in memory were the peak of a run (the x20 tiled trace: 541
// MiB). A store that runs out of room while it is written therefore cannot be written again from
// them: load_inputs reads the files again for that. `store_failed` tells whether what was thrown
// came from the store (it may have run out of room) rather than from a file.
void load_into(std::vector<std::string> paths, std::vector<TraceModel>& models, const LoadOptions& options, Store& store,
               bool& store_failed) {
  auto import_errors = import_all(paths, models, options);
  auto failed = std::find_if(import_errors.begin(), import_errors.end(), [](const auto& e) { return e != nullptr; });
  if (failed != import_errors.end()) {
    // As a sequential run would: a derivation failure of an earlier file comes first.
    auto k = static_cast<size_t>(failed - import_errors.begin());
    models.resize(k);
    paths.resize(k);
    derive_models(paths, models, options, {});
    std::rethrow_exception(*failed);
  }
  attach_sampling_logs(models, paths, options.sample_offset_ns);
  std::vector<TraceModel*> all = pointers_to(models);
  store_failed = true;
  ModelWrite write(store, all, /*release=*/true);
  store_failed = false;
  RangesReady ranges(models.size());
  std::exception_ptr beside_error;
  double beside_ms = 0;
  auto beside = [&] {
    auto start = std::chrono::steady_clock::now();
    try {
      write.write_imported();
      for (size_t i = 0; i < models.size(); ++i) {
        if (!ranges.wait(i)) return;
        write.write_ranges(i);
      }
      // A split store builds it after derivation, as soon as its side database is written
      // (ModelWrite::finish): beside derivation the sort raised the peak memory.
      if (!store.is_split()) store.create_range_thread_index();
    } catch (...) {
      beside_error = std::current_exception();
    }
    beside_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  std::thread writer;
  try {
    writer = std::thread(beside);
  } catch (const std::system_error&) {
    // No thread to be had: the write follows derivation (finish() writes what is left).
  }
  JobFacts jobs;
  try {
    derive_models(paths, models, options, [&](size_t i) { ranges.publish(i); });
    StepClock clock;
    jobs = jobs_of(all, options.derive);
    clock.lap("jobs");
  } catch (...) {
    ranges.cancel();
    if (writer.joinable()) writer.join();
    throw;
  }
  StageTimer timer("derive");  // the write after derivation belongs to derivation's figure
  StepClock clock;
  if (writer.joinable()) writer.join();
  clock.lap("write_wait");
  if (timings_enabled()) std::fprintf(stderr, "timing derive:write_beside %.3f ms (beside derivation)\n", beside_ms);
  store_failed = true;
  if (beside_error) std::rethrow_exception(beside_error);
  write.finish(&jobs, /*index=*/true);  // a split store's databases each indexed as soon as written
  std::vector<TraceModel>().swap(models);
  clock.lap("write");
  store.end_bulk_load();
  clock.lap("indexes");
  store_failed = false;
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

// Detectors, rules and the summary add and subtract a store's times, durations and counts in int64,
// which is safe for what an import writes (FactSink's limits): a number beyond them was written by
// someone else, and a sum of it would overflow. Exit 2 names the row instead.
void verify_store_values(const std::string& path, Store& store) {
  StageTimer timer("load:check_values");
  auto problem = find_value_out_of_bounds(store);
  if (!problem) return;
  throw input_error(path, "table " + problem->table + " row " + std::to_string(problem->rowid) + ", column " + problem->column,
                    "damaged proflint store: " + problem->column + " = " + problem->value + ", " + problem->violation +
                        " (re-create the store from the profile)");
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
      verify_store_values(paths[0], store);
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
  // A shared store in memory holds ~2 GiB at most; a run that would not fit writes a temporary
  // file instead, which analysis's threads read as well (through mmap). Decided from the input
  // sizes and, when the estimate was wrong, after the shared store filled up (the files are then
  // read and derived again: the models were given back as they were written).
  double estimate = 0;
  for (const auto& path : paths) estimate += estimated_store_bytes(path);
  if (estimate <= shared_store_budget()) {
    {
      Store store = Store::create_in_memory(Store::Sharing::shared);
      if (options.split_store) store.split_side();
      bool store_failed = false;
      try {
        std::vector<TraceModel> models(paths.size());
        load_into(paths, models, options, store, store_failed);
        return store;
      } catch (...) {
        if (!store_failed || !ran_out_of_room(store, std::current_exception())) throw;
        if (timings_enabled()) std::cerr << "timing note: shared store full, loading again into a temporary file\n";
      }
    }  // the full store goes before the files are read again
  }
  Store store = create_temp_store(estimate);
  bool store_failed = true;
  try {
    if (options.split_store) store.split_side();
    store_failed = false;
    std::vector<TraceModel> models(paths.size());
    load_into(paths, models, options, store, store_failed);
  } catch (...) {
    if (!store_failed) throw;
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
