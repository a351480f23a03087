// tests/fuzz/fuzz_support.hpp — what every libFuzzer target of proflint shares (docs/fuzzing.md).
//
// The oracle: a target passes an input when proflint either accepts it or refuses it with an
// exception, as the CLI does (it prints the message and exits 2). Crashes, hangs, leaks and
// sanitizer reports are what libFuzzer and ASan/UBSan catch. PROFLINT_FUZZ_STRICT=1 narrows the
// oracle for long runs: only proflint::Error (a message naming the file and the place) counts as
// a clean refusal, and any other exception aborts with its message, so library messages that
// leak to the user (issue 20, defect 9) become findings too.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>

#include <sqlite3.h>

#include <vector>

#include "engine/common/error.hpp"
#include "engine/store/store.hpp"

namespace proflint::fuzz {

inline bool strict() {
  static const bool on = [] {
    const char* v = std::getenv("PROFLINT_FUZZ_STRICT");
    return v && *v && std::string_view(v) != "0";
  }();
  return on;
}

// Runs `body`; exceptions are refusals (see above), except in strict mode.
template <class Body>
void refusals_allowed(Body&& body) {
  try {
    body();
  } catch (const proflint::Error&) {
  } catch (const std::exception& e) {
    if (!strict()) return;
    std::fprintf(stderr, "fuzz: strict mode: exception other than proflint::Error: %s\n", e.what());
    std::abort();
  }
}

// The importers and the store loader read paths, not memory: each input is written to one file
// per process (in /dev/shm when it exists, so no disk is touched), rewritten for every input.
class InputFile {
 public:
  explicit InputFile(std::string_view suffix) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path dir = fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm") : fs::temp_directory_path();
    path_ = (dir / ("proflint-fuzz-" + std::to_string(::getpid()) + std::string(suffix))).string();
  }
  ~InputFile() { std::remove(path_.c_str()); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& write(const uint8_t* data, size_t size) {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (!f) {
      std::perror(path_.c_str());
      std::abort();  // the harness itself is broken, not proflint
    }
    if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
    std::fclose(f);
    return path_;
  }

 private:
  std::string path_;
};

// One empty store per process, emptied again after every input: creating a store (running the
// schema's migrations) cost more than importing a small trace, and kept the importer targets far
// below 1,000 inputs per second. Emptying is skipped when the input changed nothing (most inputs
// are refused before a row is written); its statements (one DELETE per table) are prepared once,
// since compiling them again for every input was a tenth of the kineto target's time.
class ReusedStore {
 public:
  ReusedStore() : store_(Store::create_in_memory(Store::Sharing::none)) {
    sqlite3* db = store_.db().getHandle();
    std::vector<std::string> sql{"BEGIN"};
    sqlite3_stmt* list = nullptr;
    sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &list, nullptr);
    while (sqlite3_step(list) == SQLITE_ROW)
      sql.push_back("DELETE FROM \"" + std::string(reinterpret_cast<const char*>(sqlite3_column_text(list, 0))) + "\"");
    sqlite3_finalize(list);
    sql.push_back("COMMIT");
    for (const auto& text : sql) {
      sqlite3_stmt* st = nullptr;
      if (sqlite3_prepare_v2(db, text.c_str(), -1, &st, nullptr) != SQLITE_OK) fail(text);
      empty_all_.push_back(st);
    }
    changes_ = sqlite3_total_changes64(db);
  }
  ~ReusedStore() {
    for (sqlite3_stmt* st : empty_all_) sqlite3_finalize(st);
  }
  ReusedStore(const ReusedStore&) = delete;
  ReusedStore& operator=(const ReusedStore&) = delete;

  Store& get() { return store_; }

  // Back to the state of a new store: every row of every table gone.
  void reset() {
    sqlite3* db = store_.db().getHandle();
    if (!sqlite3_get_autocommit(db)) sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    if (sqlite3_total_changes64(db) == changes_) return;  // nothing was written
    for (sqlite3_stmt* st : empty_all_) {
      int rc = sqlite3_step(st);
      sqlite3_reset(st);
      if (rc != SQLITE_DONE) fail(sqlite3_sql(st));
    }
    changes_ = sqlite3_total_changes64(db);
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "fuzz: cannot empty the store (%s): %s\n", what.c_str(), sqlite3_errmsg(store_.db().getHandle()));
    std::abort();  // the harness is broken, not proflint
  }
  Store store_;
  std::vector<sqlite3_stmt*> empty_all_;  // BEGIN, DELETE FROM each table, COMMIT
  sqlite3_int64 changes_ = 0;
};

}  // namespace proflint::fuzz
