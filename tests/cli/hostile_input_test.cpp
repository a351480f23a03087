// tests/cli/hostile_input_test.cpp — inputs built to break proflint (issue 20, defects 9 and 10):
// each failure names the file, what was expected and where; nothing blocks, nothing reaches the
// terminal raw, and `query` stays read-only. Every reproducer is generated here.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <SQLiteCpp/Database.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "tests/support/run.hpp"

namespace fs = std::filesystem;
using proflint::testing::run_proflint;
using proflint::testing::shell_quote;
using proflint::testing::slurp;

namespace {

std::string trace_with_kernel(const std::string& kernel) {
  return R"({"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 100, "dur": 50, "args": {"External id": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 110, "dur": 5, "args": {"correlation": 7, "External id": 1}},
  {"ph": "X", "cat": "kernel", "name": ")" + kernel + R"(", "pid": 0, "tid": 7, "ts": 120, "dur": 30, "args": {"device": 0, "stream": 7, "correlation": 7, "External id": 1}}
]})";
}

// `proflint summary PATH` under `timeout`, so a proflint that blocks fails (exit 124) instead of
// hanging the suite.
proflint::testing::RunResult run_proflint_timeout(const std::string& input) {
  std::string err = ::testing::TempDir() + "proflint_timeout_" + std::to_string(getpid()) + ".err";
  std::string cmd = "timeout 30 " + shell_quote(proflint::testing::proflint_binary()) + " summary " + shell_quote(input) +
                    " >/dev/null 2>" + shell_quote(err);
  int status = std::system(cmd.c_str());
  proflint::testing::RunResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = slurp(err);
  std::remove(err.c_str());
  return r;
}

class HostileInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("proflint_hostile_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    trace_ = write("trace.json", trace_with_kernel("ampere_sgemm_128x64_nn"));
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string write(const std::string& name, const std::string& content) {
    std::ofstream(path(name), std::ios::binary) << content;
    return path(name);
  }
  std::string ingest(const std::string& name) {
    auto db = path(name);
    auto r = run_proflint("ingest " + shell_quote(trace_) + " --db " + shell_quote(db));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return db;
  }
  // Exit 2 with one line naming the file and containing every one of `words`.
  static void expect_named_failure(const proflint::testing::RunResult& r, const std::string& file,
                                   std::initializer_list<const char*> words) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err.rfind("proflint: error: " + file + ": ", 0), 0u) << r.err;
    for (const char* w : words) EXPECT_NE(r.err.find(w), std::string::npos) << "missing '" << w << "' in: " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  fs::path dir_;
  std::string trace_;
};

}  // namespace

// --- defect 9: errors that named no file or said the wrong thing -------------------------------

TEST_F(HostileInput, StoreWithADroppedTableNamesTheFileAndWhatWasExpected) {
  auto db = ingest("dropped.db");
  { SQLite::Database(db, SQLite::OPEN_READWRITE).exec("DROP TABLE _kernel"); }
  auto r = run_proflint("summary " + shell_quote(db));
  // Was the bare "no such table: main._kernel".
  expect_named_failure(r, db, {"table _kernel: damaged proflint store: missing table _kernel", "schema version"});
}

TEST_F(HostileInput, StoreWithTamperedApplicationIdIsNotCalledAnNsysExport) {
  auto db = ingest("tampered.db");
  {
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(68);
    f.write("XXXX", 4);  // application_id, big-endian, header offset 68
  }
  auto r = run_proflint("summary " + shell_quote(db));
  expect_named_failure(r, db, {"proflint store tables", "application id"});
}

TEST_F(HostileInput, StoreWithMalformedPagesNamesTheFile) {
  auto db = ingest("malformed.db");
  auto bytes = slurp(db);
  ASSERT_GT(bytes.size(), 8192u);
  // Overwrite everything after the first page (the header stays: it is still sniffed as a store).
  std::string damaged = bytes.substr(0, 4096) + std::string(bytes.size() - 4096, '\x5a');
  std::ofstream(db, std::ios::binary | std::ios::trunc) << damaged;
  auto r = run_proflint("summary " + shell_quote(db));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("proflint: error: " + db + ": ", 0), 0u) << r.err;
}

TEST_F(HostileInput, OldSchemaVersionDoesNotSuggestAnOptionThatDoesNotExist) {
  auto db = ingest("old.db");
  { SQLite::Database(db, SQLite::OPEN_READWRITE).exec("PRAGMA user_version = 0"); }
  auto r = run_proflint("summary " + shell_quote(db));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.find("writable"), std::string::npos) << r.err;  // "open it writable to upgrade": no such option
  EXPECT_NE(r.err.find(db), std::string::npos) << r.err;
}

// Damaged SQLite files, as a fuzzer or a bad copy leaves them: each says what is wrong in
// proflint's words, with the place, instead of SQLite's ("attempt to write a readonly database",
// "database disk image is malformed", "malformed database schema (x)").

// `bytes` with the first `from` replaced by `to` (same length: the pages keep their layout).
// Every occurrence: an SQLite page can keep a stale copy of a record in its free space (the schema
// table's CREATE text of an index, after a migration rewrote that page), and editing only the first
// copy would leave the live one intact.
std::string replaced(std::string bytes, const std::string& from, const std::string& to) {
  EXPECT_NE(bytes.find(from), std::string::npos) << from;
  EXPECT_EQ(from.size(), to.size());
  for (size_t at = bytes.find(from); at != std::string::npos; at = bytes.find(from, at + to.size()))
    bytes.replace(at, from.size(), to);
  return bytes;
}

TEST_F(HostileInput, StoreWithAWriteVersionAbove2IsNotCalledAReadonlyDatabase) {
  auto db = ingest("write_version.db");
  auto bytes = slurp(db);
  bytes[18] = 3;  // file format write version: above 2 SQLite opens the file, and its copies, read-only
  write("write_version.db", bytes);
  auto r = run_proflint("summary " + shell_quote(db));
  expect_named_failure(r, db, {"SQLite header byte 18: file format write version 3, expected 1 (rollback journal) or 2"});
  EXPECT_EQ(r.err.find("readonly"), std::string::npos) << r.err;
}

TEST_F(HostileInput, StoreWithAnotherPageSizeLoads) {
  // A store vacuumed to 512-byte pages (as scripts/fuzz_seeds.py shrinks its seeds) is a valid
  // store: it failed with "attempt to write a readonly database", since SQLite refuses to back up
  // into an in-memory database of another page size (which also kept the store fuzzer from
  // getting past the copy).
  auto db = ingest("small_pages.db");
  auto before = run_proflint("summary --format json " + shell_quote(db));
  ASSERT_EQ(before.exit_code, 0) << before.err;
  {
    SQLite::Database edit(db, SQLite::OPEN_READWRITE);
    edit.exec("PRAGMA page_size = 512");
    edit.exec("VACUUM");
    ASSERT_EQ(edit.execAndGet("PRAGMA page_size").getInt(), 512);
  }
  auto after = run_proflint("summary --format json " + shell_quote(db));
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, before.out);
}

TEST_F(HostileInput, TruncatedStoreAndExportSayWhereTheyEnd) {
  auto db = ingest("cut.db");
  auto nsys = write("cut.sqlite", slurp((proflint::testing::source_dir() / "fixtures/sample_train.nsys.sqlite").string()));
  for (const auto& file : {db, nsys}) {
    auto bytes = slurp(file);
    const uint32_t page_size = static_cast<unsigned char>(bytes[16]) << 8 | static_cast<unsigned char>(bytes[17]);
    const uint32_t pages = static_cast<unsigned char>(bytes[28]) << 24 | static_cast<unsigned char>(bytes[29]) << 16 |
                           static_cast<unsigned char>(bytes[30]) << 8 | static_cast<unsigned char>(bytes[31]);
    ASSERT_EQ(bytes.size(), uint64_t{page_size} * pages) << file;  // the header's count is the file's
    size_t cut = bytes.size() / 2 + 100;                             // mid-page
    write(fs::path(file).filename().string(), bytes.substr(0, cut));
    auto r = run_proflint("summary " + shell_quote(file));
    expect_named_failure(r, file,
                         {("byte " + std::to_string(cut) + ": the file ends early (truncated): its SQLite header says " +
                           std::to_string(pages) + " pages of " + std::to_string(page_size) + " bytes")
                              .c_str()});
    EXPECT_EQ(r.err.find("malformed"), std::string::npos) << r.err;
  }
}

TEST_F(HostileInput, DamagedSchemaEntryIsNamedInProflintsWords) {
  // One flipped word in the CREATE statement that sqlite_master keeps for an index of the store
  // and for a table of an nsys export.
  auto db = ingest("schema.db");
  write("schema.db", replaced(slurp(db), "CREATE INDEX kernel_by_name", "CREATE XXXXX kernel_by_name"));
  auto r = run_proflint("summary " + shell_quote(db));
  // Was "table _api_call: damaged proflint store: malformed database schema (kernel_by_name) - ...".
  expect_named_failure(r, db, {"schema entry kernel_by_name: damaged proflint store: the file's schema table "
                               "(sqlite_master) is damaged: the definition of 'kernel_by_name' does not compile"});
  EXPECT_EQ(r.err.find("malformed database schema"), std::string::npos) << r.err;

  auto nsys = write("schema.sqlite", replaced(slurp((proflint::testing::source_dir() / "fixtures/sample_train.nsys.sqlite").string()),
                                              "CREATE TABLE StringIds", "CREATE XXXXX StringIds"));
  auto n = run_proflint("summary " + shell_quote(nsys));
  expect_named_failure(n, nsys, {"the definition of 'StringIds' does not compile", "edited or damaged"});
  EXPECT_EQ(n.err.find("malformed database schema"), std::string::npos) << n.err;
}

TEST_F(HostileInput, StoreWithATableNamedLikeTheWritersFeedIsRefused) {
  // The store's writer reads its rows from the eponymous virtual table proflint_feed; a table or
  // view of that name in an edited store took its place when the store was derived again
  // (`--key-node`): "internal: cannot prepare store statement: no such column: c2", or, with the
  // right columns, its rows instead of the trace's.
  for (const char* edit : {"CREATE TABLE proflint_feed(c0, c1)", "CREATE VIEW Proflint_Feed AS SELECT 1 AS c0"}) {
    SCOPED_TRACE(edit);
    auto db = ingest("feed.db");
    {
      SQLite::Database store(db, SQLite::OPEN_READWRITE);
      store.exec(edit);
    }
    for (const char* args : {"analyze --key-node ProfilerStep ", "summary "}) {
      auto r = run_proflint(std::string(args) + shell_quote(db));
      expect_named_failure(r, db, {"schema entry proflint_feed: damaged proflint store", "named proflint_feed"});
      EXPECT_EQ(r.err.find("internal"), std::string::npos) << r.err;
    }
  }
}

TEST_F(HostileInput, OversizedEventIsNotReportedAsAnEmptyTrace) {
  // One event larger than the 64 MiB a single event may take: it is skipped, and the trace was
  // reported as "traceEvents has no events".
  std::string name(65u << 20, 'K');
  auto big = write("big.json", R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": ")" + name +
                                   R"(", "pid": 0, "tid": 7, "ts": 1, "dur": 1}]})");
  name.clear();
  name.shrink_to_fit();
  auto r = run_proflint("summary " + shell_quote(big));
  expect_named_failure(r, big, {"byte 17", "exceed the size limit"});  // the event starts after {"traceEvents": [
  EXPECT_EQ(r.err.find("has no events"), std::string::npos) << r.err;
}

TEST_F(HostileInput, DurationsNearInt64MaxAreDroppedAtImportNotOverflowedLater) {
  // Kernels with durations within int64 one by one but not together: two of 4.6e18 ns (ts + dur
  // just below INT64_MAX) made a detector's SQL SUM raise "integer overflow" (exit 2). Now rows
  // beyond +-2^61 ns are dropped at import (`timestamp_out_of_range`), and so is a row that
  // would bring the trace's summed durations past 2^56 ns (`duration_total_out_of_range`): of
  // three kernels of 3e16 ns the third (9e16 > 7.2e16) goes. Every command then exits 0.
  std::string events = R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 100, "dur": 50, "args": {"External id": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 110, "dur": 5, "args": {"correlation": 7, "External id": 1}},
  {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": 120, "dur": 30, "args": {"device": 0, "stream": 7, "correlation": 7, "External id": 1}})";
  for (int i = 0; i < 2; ++i)  // ends ~1.8 µs short of INT64_MAX ns
    events += R"(, {"ph": "X", "cat": "kernel", "name": "k_max", "pid": 0, "tid": 7, "ts": )" + std::to_string(200 + i) +
              R"(, "dur": )" + std::to_string(9223372036854775LL - 201) + R"(, "args": {"device": 0, "stream": 7}})";
  for (int i = 0; i < 3; ++i)
    events += R"J(, {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 7, "ts": )J" +
              std::to_string(300 + i) + R"(, "dur": 30000000000000, "args": {"device": 0, "stream": 7, "bytes": 4096}})";
  auto huge = write("huge.json", "{\"traceEvents\": [" + events + "]}");
  const std::string report = "report --reports all --output-path " + shell_quote(path("reports")) + " ";
  for (const std::string& cmd : {std::string("summary "), std::string("analyze "), std::string("analyze --format json "), report}) {
    auto r = run_proflint(cmd + shell_quote(huge));
    EXPECT_EQ(r.exit_code, 0) << cmd << r.err;
  }
  auto q = run_proflint("query " + shell_quote(huge) + " " +
                        shell_quote("SELECT kind, count FROM import_issue ORDER BY kind"));
  ASSERT_EQ(q.exit_code, 0) << q.err;
  EXPECT_EQ(q.out, "kind,count\nduration_total_out_of_range,1\ntimestamp_out_of_range,2\n");
  auto sums = run_proflint("query " + shell_quote(huge) + " " +
                           shell_quote("SELECT (SELECT sum(dur_ns) FROM kernel), (SELECT sum(dur_ns) FROM memcpy)"));
  EXPECT_EQ(sums.out, "(SELECT sum(dur_ns) FROM kernel),(SELECT sum(dur_ns) FROM memcpy)\n30000,60000000000000000\n");
}

TEST_F(HostileInput, StoreEditedBeyondTheImportLimitsNamesTheRow) {
  // Importers hold rows to FactSink's limits, and detectors and the summary add and subtract in
  // int64 because of that. A saved store edited past them (found by mutating stores under UBSan:
  // nine signed overflows in detectors and the summary) is refused at load, naming table, row and
  // column. 2^61 = 2305843009213693952.
  struct Case {
    const char* edit;
    std::vector<const char*> words;
  };
  const std::vector<Case> cases = {
      {"UPDATE _kernel SET start_ns = 3000000000000000000",
       {"table _kernel row 1, column start_ns", "start_ns = 3000000000000000000", "beyond +-2^61"}},
      {"UPDATE _api_call SET dur_ns = 1e300", {"table _api_call row 1, column dur_ns", "dur_ns = 1.0e+300", "beyond 2^61"}},
      {"UPDATE _range SET dur_ns = -9223372036854775808", {"table _range row 1, column dur_ns", "= -9223372036854775808"}},
      // Two kernels of 1.5e18 ns: each within 2^61, together not.
      {"INSERT INTO _kernel (trace_id, device_id, stream_id, start_ns, dur_ns, name_id) "
       "SELECT trace_id, device_id, stream_id, start_ns, dur_ns, name_id FROM _kernel; "
       "UPDATE _kernel SET dur_ns = 1500000000000000000",
       {"table _kernel row 1, column dur_ns", "add up to 3e+18 in magnitude"}},
      {"UPDATE device SET compute_major = 2147483648", {"column compute_major", "= 2147483648", "outside 0..999"}},
      // An op its own parent: walking up the op tree never ended (a stack overflow in analyze).
      {"UPDATE _op SET parent_id = id", {"table _op row 1, column parent_id", "parent_id = 1", "following parents must end"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.edit);
    auto db = ingest("edited.db");
    { SQLite::Database(db, SQLite::OPEN_READWRITE).exec(c.edit); }
    auto r = run_proflint("analyze " + shell_quote(db));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err.rfind("proflint: error: " + db + ": table ", 0), 0u) << r.err;
    for (const char* w : c.words) EXPECT_NE(r.err.find(w), std::string::npos) << "missing '" << w << "' in: " << r.err;
    EXPECT_NE(r.err.find("damaged proflint store"), std::string::npos) << r.err;
    fs::remove(db);
  }
  // Within the limits an edit is the user's business: a kernel of 10^18 ns loads and is analysed.
  auto db = ingest("long.db");
  { SQLite::Database(db, SQLite::OPEN_READWRITE).exec("UPDATE _kernel SET dur_ns = 1000000000000000000"); }
  for (const std::string& cmd : {std::string("summary "), std::string("analyze --format json ")}) {
    auto r = run_proflint(cmd + shell_quote(db));
    EXPECT_EQ(r.exit_code, 0) << cmd << r.err;
  }
}

TEST_F(HostileInput, StoreRowNamingAMissingTextIsADamagedStoreWhenDerivedAgain) {
  // Deriving a saved store again (an option such as --iter-start asks for it) reads its rows back
  // into models; a row naming a text or trace the store lacks said "internal: ..." without the file.
  for (const char* edit : {"UPDATE _kernel SET name_id = 1000000000", "UPDATE _api_call SET trace_id = 77"}) {
    SCOPED_TRACE(edit);
    auto db = ingest("links.db");
    { SQLite::Database(db, SQLite::OPEN_READWRITE).exec(edit); }
    auto r = run_proflint("analyze --iter-start 1 " + shell_quote(db));
    expect_named_failure(r, db, {"damaged proflint store: a row names", "re-create the store"});
    EXPECT_EQ(r.err.find("internal"), std::string::npos) << r.err;
    fs::remove(db);
  }
}

// --- defect 10 ---------------------------------------------------------------------------------

TEST_F(HostileInput, FifoAsInputIsRefusedInsteadOfBlocking) {
  auto fifo = path("trace.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // `timeout` turns the old hang into exit 124.
  auto r = run_proflint_timeout(fifo);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(fifo + ": is a FIFO (named pipe), expected a regular profile file"), std::string::npos) << r.err;
}

TEST_F(HostileInput, SecondTraceAfterTheFirstIsAnImportIssue) {
  std::string first = trace_with_kernel("k_first");
  auto two = write("two.json", first + "\n" + trace_with_kernel("k_second"));
  auto q = run_proflint("query " + shell_quote(two) + " " +
                        shell_quote("SELECT kind, location FROM import_issue WHERE kind = 'data_after_json'"));
  ASSERT_EQ(q.exit_code, 0) << q.err;
  // The second trace starts right after the first and its newline.
  EXPECT_EQ(q.out, "kind,location\ndata_after_json,byte " + std::to_string(first.size() + 1) + "\n");
  auto k = run_proflint("query " + shell_quote(two) + " " + shell_quote("SELECT name FROM kernel"));
  EXPECT_EQ(k.out, "name\nk_first\n");
  // Newlines and NUL padding after the trace are not data.
  auto padded = write("padded.json", first + "\n\n" + std::string(16, '\0'));
  auto p = run_proflint("query " + shell_quote(padded) + " " + shell_quote("SELECT count(*) FROM import_issue"));
  EXPECT_EQ(p.out, "count(*)\n0\n") << p.err;
}

TEST_F(HostileInput, EscapeSequencesInNamesNeverReachTheTerminalRaw) {
  // OSC title change, "clear screen" and a C1 CSI, as JSON escapes in a kernel name; a raw
  // "clear screen" in the file name.
  auto trace = write("evil\x1b[2J.json", trace_with_kernel("k\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m"));
  auto q = run_proflint("query " + shell_quote(trace) + " " + shell_quote("SELECT name FROM kernel"));
  ASSERT_EQ(q.exit_code, 0) << q.err;
  EXPECT_EQ(q.out, "name\nk\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\n");
  auto s = run_proflint("summary " + shell_quote(trace));
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(s.out.find('\x1b'), std::string::npos);
  EXPECT_NE(s.out.find("evil\\u001b[2J.json"), std::string::npos) << s.out;
  auto report_dir = path("reports");
  auto r = run_proflint("report " + shell_quote(trace) + " --reports kernel --output-path " + shell_quote(report_dir));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto csv = slurp(report_dir + "/proflint_kernel.csv");
  EXPECT_EQ(csv.find('\x1b'), std::string::npos);
  EXPECT_NE(csv.find("k\\u001b]0;pwned"), std::string::npos) << csv;
}

TEST_F(HostileInput, QueryRefusesAttachAndWritableSchema) {
  auto db = ingest("q.db");
  for (const std::string& sql : {"ATTACH DATABASE '" + path("other.db") + "' AS other", std::string("PRAGMA writable_schema = ON"),
                                std::string("SELECT hex(fts3_tokenizer('simple'))")}) {
    auto r = run_proflint("query " + shell_quote(db) + " " + shell_quote(sql));
    EXPECT_EQ(r.exit_code, 2) << sql << ": " << r.out;
    EXPECT_NE(r.err.find("read-only"), std::string::npos) << sql << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(path("other.db")));  // ATTACH would have created it
}
