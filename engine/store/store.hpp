// engine/store/store.hpp — the fact store: an SQLite database with the schema of schema/*.sql.
#pragma once

#include <SQLiteCpp/Database.h>

#include <memory>
#include <string>
#include <vector>

namespace proflint {

class OutputFile;

// Latest schema version this binary knows (number of migrations in schema/).
int latest_schema_version();

class Store {
 public:
  // Where a working store lives and how it can be read: `shared` (SQLite's memdb, any number of
  // connections and threads, at most ~2 GiB), `none` (a plain ":memory:" database: one connection,
  // no size limit but memory), or `temp_file` (a temporary SQLite file under a unique name in
  // $TMPDIR, else /tmp: any number of connections, which read it through mmap, no size limit but
  // the disk; removed when the Store is destroyed, or when the process is stopped by SIGINT,
  // SIGTERM, SIGHUP or SIGQUIT; only SIGKILL or a crash can leave it behind).
  enum class Sharing { shared, none, temp_file };
  // A new, empty working store with all migrations applied (in memory unless `temp_file`).
  static Store create_in_memory(Sharing sharing = Sharing::shared);
  // A new in-memory store with no schema and pages of `page_size` bytes, for the SQLite backup
  // API to copy a saved store of that page size into: SQLite refuses to back up into an
  // in-memory database of another page size ("attempt to write a readonly database"), and a
  // schema would only be replaced whole by the copy.
  static Store create_in_memory_copy_target(Sharing sharing, int page_size);
  // True when this is a shared store grown past half its limit: an import or derivation that
  // failed here most likely ran out of room, and is redone in a Sharing::temp_file store.
  bool near_shared_limit() const;
  // The folder temp_file stores go to: $TMPDIR when set and not empty, else /tmp.
  static std::string temp_folder();
  // Throws Error (exit 2) naming temp_folder() when its file system has less than `bytes` free
  // for a temp_file store of that size (or cannot be examined).
  static void require_temp_room(double bytes);
  // The temporary file of a temp_file store; empty for other stores.
  const std::string& temp_path() const { return temp_.path; }
  // How many connections open_reader() has opened on this store so far (tests and timings: the
  // proof that analysis ran on several connections).
  int readers_opened() const { return readers_opened_; }
  // A new store at `path` (must not exist yet) with all migrations applied.
  static Store create_file(const std::string& path);
  // Opens an existing proflint store; refuses files that are not stores and stores made by a
  // newer proflint; upgrades older stores in place unless read_only.
  static Store open_existing(const std::string& path, bool read_only);
  // True when the file starts with the SQLite header and carries proflint's application id.
  static bool is_store_file(const std::string& path);

  // Puts the op and range tables (kSideTables in store.cpp) into a second database with a
  // connection of its own, so that two threads can write the store at once (ModelWrite,
  // engine/store/model_io.hpp): SQLite has one writer per database. The store's connection and
  // every reader attach it as proflint_side, and the views that name its tables (op, range; a
  // view naming one of those would follow) become TEMP views of each connection (a view can only
  // read its own database's tables), so every query reads the same tables and views as before. A Sharing::shared store gets a second memdb
  // database, a Sharing::temp_file store a second temporary file; other stores are left as they
  // are. Only for a new, empty store that is never saved: stage_into refuses a split store
  // (VACUUM INTO copies one database), so `analyze --db` and the commands that save keep one.
  void split_side();
  bool is_split() const { return side_ != nullptr; }
  // The side database's own connection (split_side), or the store's connection when not split:
  // where the side tables are written and indexed.
  SQLite::Database& side_db() { return side_ ? *side_ : *db_; }

  SQLite::Database& db() { return *db_; }
  // A second, read-only connection to the same database, for a thread of its own (analysis runs
  // detectors and rules on several). Sees what the store's connection has committed. Throws for
  // a Sharing::none store; callers then stay on one thread. Not thread-safe: open readers from
  // one thread, then hand them out.
  std::unique_ptr<SQLite::Database> open_reader();
  int schema_version();

  // Indexes used by derivation, detectors and rules; created after bulk import (faster load):
  // create_main_indexes, then create_side_indexes (the load of a split store builds the two at
  // once instead, each as soon as its database is written: ModelWrite::finish).
  void create_indexes();
  // Those of the tables other than the side tables (kernels, API calls, sample points).
  void create_main_indexes();
  // Those of the side tables (split_side), on side_db(): range_by_thread, and range_by_name when
  // the store holds several traces (store.cpp says why not for one). The load of a split store
  // builds them as soon as the side database is committed (ModelWrite::finish), while the store's
  // connection still writes.
  void create_side_indexes(bool several_traces);
  // range_by_thread alone: the load of a store in one database writes the ranges beside
  // derivation and indexes them there too (engine/pipeline/load.cpp).
  void create_range_thread_index();
  // The indexes only reports, exports and saved stores use (op_by_range, op_by_name, and
  // range_by_name in a one-trace store), built when one of those first needs them: `analyze` would sort
  // the tables for nothing. Does nothing on a read-only store (one saved by proflint has them).
  void create_report_indexes();

  // Ends a bulk load: a file store's connection gives back its large write cache (256 MiB: the
  // store is read through mmap from now on, and kept pages would be counted twice in memory).
  void end_bulk_load();

  // Copies this store into `out`'s staged file (VACUUM INTO); nothing is at the target before
  // out.commit(). A command stages its store early and commits with its other outputs.
  void stage_into(OutputFile& out);
  // stage_into and commit at once.
  void save_as(const std::string& path);

 private:
  Store(std::unique_ptr<SQLite::Database> db, std::string name, const char* vfs)
      : db_(std::move(db)), name_(std::move(name)), vfs_(vfs) {}
  void migrate();
  // Owns a temporary file: removes it when destroyed (after the connection, declared after it,
  // has closed) and forgets it when moved from.
  struct TempFile {
    std::string path;
    TempFile() = default;
    explicit TempFile(std::string p) : path(std::move(p)) {}
    TempFile(TempFile&& other) noexcept : path(std::move(other.path)) { other.path.clear(); }
    TempFile& operator=(TempFile&& other) noexcept;
    ~TempFile();
  };
  TempFile temp_;  // before db_: members are destroyed in reverse order, so the file outlives its connection
  TempFile side_temp_;  // split_side's file for a temp_file store, likewise
  int readers_opened_ = 0;
  std::unique_ptr<SQLite::Database> db_;
  std::unique_ptr<SQLite::Database> side_;  // split_side's database, attached to db_ and to every reader
  std::string side_uri_;                    // what a connection attaches as proflint_side
  std::vector<std::string> temp_views_;     // CREATE TEMP VIEW statements every connection runs
  void attach_side(SQLite::Database& db);
  std::string name_;           // what open_reader() opens: a file path or a shared memdb name
  const char* vfs_ = nullptr;  // "memdb" for in-memory stores, else the default VFS
};

}  // namespace proflint
