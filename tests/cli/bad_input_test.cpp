// tests/cli/bad_input_test.cpp — bad input ends in one clear line naming the file and exit 2,
// never a crash and never a partial output or --db file.
#include <gtest/gtest.h>
#include <zlib.h>

#include <SQLiteCpp/Database.h>

#include <filesystem>
#include <fstream>

#include "tests/support/run.hpp"

namespace fs = std::filesystem;
using proflint::testing::run_proflint;
using proflint::testing::shell_quote;

namespace {

const char* kSmallTrace = R"({"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 100, "dur": 50, "args": {"External id": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 110, "dur": 5, "args": {"correlation": 7, "External id": 1}},
  {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": 120, "dur": 30, "args": {"device": 0, "stream": 7, "correlation": 7, "External id": 1}}
]})";

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("proflint_bad_input_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& content) {
    auto p = dir_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }
  std::string gzip(const std::string& name, const std::string& content) {
    auto p = (dir_ / name).string();
    gzFile gz = gzopen(p.c_str(), "wb");
    gzwrite(gz, content.data(), static_cast<unsigned>(content.size()));
    gzclose(gz);
    return p;
  }
  // The message is one line, names the file, and the exit code is 2.
  void expect_clean_failure(const proflint::testing::RunResult& r, const std::string& path, const std::string& what) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  fs::path dir_;
};

}  // namespace

TEST_F(BadInput, MissingFile) {
  auto path = (dir_ / "nope.json").string();
  expect_clean_failure(run_proflint("summary " + shell_quote(path)), path, "no such file");
}

TEST_F(BadInput, Directory) {
  expect_clean_failure(run_proflint("summary " + shell_quote(dir_.string())), dir_.string(), "directory");
}

TEST_F(BadInput, EmptyFile) {
  auto path = write("empty.json", "");
  expect_clean_failure(run_proflint("summary " + shell_quote(path)), path, "empty");
}

TEST_F(BadInput, NotAProfile) {
  auto path = write("notes.txt", "hello, this is not a profile\n");
  expect_clean_failure(run_proflint("summary " + shell_quote(path)), path, "not a recognised profile");
}

TEST_F(BadInput, JsonThatIsNotATrace) {
  auto path = write("config.json", R"({"learning_rate": 0.1, "layers": [1, 2, 3]})");
  auto r = run_proflint("summary " + shell_quote(path));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
}

TEST_F(BadInput, EmptyTrace) {
  auto path = write("empty_trace.json", R"({"schemaVersion": 1, "traceEvents": []})");
  auto r = run_proflint("summary " + shell_quote(path));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("empty"), std::string::npos) << r.err;
}

TEST_F(BadInput, TruncatedJson) {
  std::string text = kSmallTrace;
  auto path = write("cut.json", text.substr(0, text.size() / 2));
  auto r = run_proflint("summary " + shell_quote(path));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("byte"), std::string::npos) << "the message should say where: " << r.err;
}

TEST_F(BadInput, TruncatedGzip) {
  auto full = gzip("full.json.gz", std::string(kSmallTrace));
  std::string bytes = proflint::testing::slurp(full);
  auto path = write("cut.json.gz", bytes.substr(0, bytes.size() * 2 / 3));
  auto r = run_proflint("summary " + shell_quote(path));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
}

TEST_F(BadInput, SqliteThatIsNotAnNsysExport) {
  auto path = (dir_ / "other.sqlite").string();
  { SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE); db.exec("CREATE TABLE users(name TEXT)"); }
  auto r = run_proflint("summary " + shell_quote(path));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Nsight Systems"), std::string::npos) << r.err;
}

TEST_F(BadInput, IngestOfBadInputLeavesNoDbFile) {
  auto bad = write("bad.json", "{\"traceEvents\": [ {\"ph\": \"X\", ");
  auto db = (dir_ / "out.db").string();
  auto r = run_proflint("ingest " + shell_quote(bad) + " --db " + shell_quote(db));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_FALSE(fs::exists(db));
  EXPECT_FALSE(fs::exists(db + ".tmp-proflint"));
}

TEST_F(BadInput, IngestThenQueryTheSavedStore) {
  auto good = write("good.json", kSmallTrace);
  auto db = (dir_ / "good.db").string();
  auto r = run_proflint("ingest " + shell_quote(good) + " --db " + shell_quote(db));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto q = run_proflint("query " + shell_quote(db) + " " + shell_quote("SELECT name, dur_ns FROM kernel"));
  EXPECT_EQ(q.exit_code, 0) << q.err;
  EXPECT_EQ(q.out, "name,dur_ns\nampere_sgemm_128x64_nn,30000\n");
  auto w = run_proflint("query " + shell_quote(db) + " " + shell_quote("DELETE FROM _kernel"));
  EXPECT_EQ(w.exit_code, 2);
  EXPECT_NE(w.err.find("read-only"), std::string::npos) << w.err;
}

TEST_F(BadInput, UnknownSubcommandIsUsageError) {
  auto r = run_proflint("frobnicate");
  EXPECT_EQ(r.exit_code, 2);
}

TEST_F(BadInput, OutputFileNotLeftHalfWritten) {
  auto bad = write("bad2.json", "[{\"ph\": \"X\", \"ts\": 1");
  auto out = (dir_ / "summary.json").string();
  auto r = run_proflint("summary " + shell_quote(bad) + " --format json -o " + shell_quote(out));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(fs::exists(out));
}
