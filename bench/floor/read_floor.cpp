// bench/floor/read_floor.cpp — the read-only floor of an input: what merely reading it costs.
//
//   proflint_floor inflate FILE   gzip: inflate to nowhere (the build's inflater, ISA-L igzip when
//                                 built with it, on a second thread); plain: read the bytes
//   proflint_floor inflate-zlib FILE   the same with zlib (the reference ISA-L is measured against)
//   proflint_floor parse FILE     Kineto JSON: inflate + the importer's scanner + simdjson parse of
//                                 every event, with no store (the floor proflint's import is held to)
//   proflint_floor import FILE    the import stage alone (any format), into an in-memory fact model:
//                                 what PROFLINT_TIMINGS' "import" measures, without derivation
//   proflint_floor scan FILE      nsys SQLite: read every column of every row of the kernel, runtime,
//                                 memcpy, memset, NVTX, sync and StringIds tables
//
// Prints one line "floor MODE EVENTS SECONDS BYTES" for bench/run_bench.py, and on stderr the
// inflater and the simdjson kernel the parser ran (SIMDJSON_FORCE_IMPLEMENTATION changes the latter). Not a test, not part of
// the library: it exists so the benchmark can state proflint's time as a ratio to these floors.
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/import/importer.hpp"
#include "engine/store/store.hpp"
#include "engine/import/kineto/byte_source.hpp"
#include "engine/import/kineto/event_parser.hpp"
#include "engine/import/kineto/trace_scanner.hpp"

namespace {

using proflint::kineto::ByteSource;

class ParseOnly final : public proflint::kineto::ScanHandler {
 public:
  bool wants_top_level(std::string_view) override { return false; }
  void on_top_level(std::string_view, std::string_view, uint64_t) override {}
  void on_event(const char* data, size_t size, uint64_t) override {
    std::string_view error;
    if (parser_.parse(data, size, ev_, error) == proflint::kineto::ParseStatus::ok) sink_ += ev_.ph.size() + ev_.name.size();
    ++events;
  }
  void on_oversized(std::string_view, uint64_t, uint64_t) override { ++events; }
  uint64_t events = 0;
  uint64_t sink_ = 0;

 private:
  proflint::kineto::EventParser parser_;
  proflint::kineto::KinetoEvent ev_;
};

int scan_sqlite(const std::string& path, uint64_t& rows, uint64_t& bytes) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    std::fprintf(stderr, "cannot open %s\n", path.c_str());
    return 2;
  }
  const char* tables[] = {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMCPY",
                          "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS", "StringIds"};
  for (const char* t : tables) {
    sqlite3_stmt* st = nullptr;
    std::string sql = std::string("SELECT * FROM ") + t;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) continue;  // table absent
    const int n = sqlite3_column_count(st);
    while (sqlite3_step(st) == SQLITE_ROW) {
      for (int c = 0; c < n; ++c) {
        if (sqlite3_column_type(st, c) == SQLITE_TEXT) bytes += static_cast<uint64_t>(sqlite3_column_bytes(st, c));
        else bytes += static_cast<uint64_t>(sqlite3_column_int64(st, c)) & 1;
      }
      if (std::string_view(t) != "StringIds") ++rows;
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: proflint_floor inflate|inflate-zlib|parse|import|scan FILE\n");
    return 2;
  }
  const std::string mode = argv[1], path = argv[2];
  auto t0 = std::chrono::steady_clock::now();
  uint64_t events = 0, bytes = 0;
  try {
    if (mode == "inflate" || mode == "inflate-zlib") {
      auto src = proflint::kineto::open_byte_source(
          path, mode == "inflate" ? proflint::kineto::Inflater::best : proflint::kineto::Inflater::zlib);
      std::vector<char> buf(size_t{1} << 20);
      while (size_t n = src->read(buf.data(), buf.size())) bytes += n;
    } else if (mode == "parse") {
      auto src = proflint::kineto::open_byte_source(path);
      ParseOnly handler;
      auto scan = proflint::kineto::scan_trace(*src, path, handler);
      events = handler.events;
      bytes = scan.bytes;
    } else if (mode == "import") {
      proflint::TraceModel model;  // the import fills the fact model; the store is written later
      events = static_cast<uint64_t>(proflint::import_file(path, model, {}).rows);
    } else if (mode == "scan") {
      if (int rc = scan_sqlite(path, events, bytes)) return rc;
    } else {
      std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
      return 2;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "inflater: %s; JSON parser: %s\n", proflint::kineto::inflater_name(),
               proflint::kineto::json_parser_description().c_str());
  std::printf("floor %s %llu %.4f %llu\n", mode.c_str(), static_cast<unsigned long long>(events), s,
              static_cast<unsigned long long>(bytes));
  return 0;
}
