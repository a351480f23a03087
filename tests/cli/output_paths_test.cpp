// tests/cli/output_paths_test.cpp — what -o, --db and report files do with what is at the path
// (issue 20, defects 1, 2 and 5): special files are streamed into, links are never replaced,
// planted temporary names are ignored, concurrent writers end with one complete store, and a
// command that fails leaves none of its outputs.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "engine/common/output_file.hpp"
#include "tests/support/run.hpp"

namespace fs = std::filesystem;
using proflint::testing::run_proflint;
using proflint::testing::shell_quote;
using proflint::testing::slurp;

namespace {

// One kernel whose name tells the two concurrent writers' stores apart.
std::string trace_with_kernel(const std::string& kernel) {
  return R"({"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 100, "dur": 50, "args": {"External id": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 110, "dur": 5, "args": {"correlation": 7, "External id": 1}},
  {"ph": "X", "cat": "kernel", "name": ")" + kernel + R"(", "pid": 0, "tid": 7, "ts": 120, "dur": 30, "args": {"device": 0, "stream": 7, "correlation": 7, "External id": 1}}
]})";
}

class OutputPaths : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("proflint_output_paths_" + std::to_string(getpid()));
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
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path dir_;
  std::string trace_;
};

bool is_char_device(const char* p) {
  struct stat st {};
  return ::lstat(p, &st) == 0 && S_ISCHR(st.st_mode);
}

}  // namespace

TEST_F(OutputPaths, DbDevNullStaysACharacterDevice) {
  ASSERT_TRUE(is_char_device("/dev/null"));
  // The CLI's --db goes through OutputFile: make sure it streams there before pointing it at the
  // real /dev/null (run as root, the old code replaced it with a regular file).
  ASSERT_TRUE(proflint::OutputFile("/dev/null", "--db").streams());
  auto ingest = run_proflint("ingest " + shell_quote(trace_) + " --db /dev/null");
  EXPECT_EQ(ingest.exit_code, 0) << ingest.err;
  auto analyze = run_proflint("analyze " + shell_quote(trace_) + " --db /dev/null -o /dev/null");
  EXPECT_EQ(analyze.exit_code, 0) << analyze.err;
  EXPECT_TRUE(is_char_device("/dev/null")) << "/dev/null was replaced";
}

TEST_F(OutputPaths, OutputIntoFifoIsStreamedAndTheFifoStays) {
  auto fifo = path("findings.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto got = path("got.txt");
  // The reader gives up after 60 s, so a proflint that never opens the FIFO fails the test
  // instead of hanging it.
  std::string cmd = "timeout 60 cat " + shell_quote(fifo) + " > " + shell_quote(got) + " & reader=$!; NO_COLOR=1 " +
                    shell_quote(proflint::testing::proflint_binary()) + " summary " + shell_quote(trace_) + " -o " +
                    shell_quote(fifo) + " 2>/dev/null; rc=$?; wait $reader; exit $rc";
  int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  auto direct = run_proflint("summary " + shell_quote(trace_));
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  EXPECT_EQ(slurp(got), direct.out);
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced by a regular file";
}

TEST_F(OutputPaths, SymlinkPlantedAtTheOldTemporaryNameIsNotFollowed) {
  // proflint used to write <out>.tmp-proflint, following a link planted there.
  auto victim = write("victim.txt", "precious");
  auto db = path("out.db");
  fs::create_symlink(victim, db + ".tmp-proflint");
  auto out = path("findings.txt");
  fs::create_symlink(victim, out + ".tmp-proflint");
  auto r = run_proflint("analyze " + shell_quote(trace_) + " --db " + shell_quote(db) + " -o " + shell_quote(out));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_TRUE(fs::is_symlink(db + ".tmp-proflint"));
  EXPECT_TRUE(fs::is_regular_file(db));
  EXPECT_NE(slurp(out).find("problem(s) found"), std::string::npos) << slurp(out);
}

TEST_F(OutputPaths, SymlinkAtTheTargetIsKeptAndItsFileWritten) {
  auto real = write("real.db", "");
  auto link = path("link.db");
  fs::create_symlink(real, link);
  auto r = run_proflint("ingest " + shell_quote(trace_) + " --db " + shell_quote(link));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(link));
  auto q = run_proflint("query " + shell_quote(real) + " " + shell_quote("SELECT name FROM kernel"));
  EXPECT_EQ(q.out, "name\nampere_sgemm_128x64_nn\n") << q.err;
}

TEST_F(OutputPaths, DirectoryTargetIsRefusedBeforeTheImport) {
  fs::create_directories(path("somedir"));
  auto r = run_proflint("ingest " + shell_quote(path("missing.json")) + " --db " + shell_quote(path("somedir")));
  EXPECT_EQ(r.exit_code, 2);
  // The target is checked first: the message is about --db, not about the missing input.
  EXPECT_NE(r.err.find("--db: is a directory"), std::string::npos) << r.err;
  auto o = run_proflint("summary " + shell_quote(trace_) + " -o " + shell_quote(path("somedir")));
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("is a directory"), std::string::npos) << o.err;
  EXPECT_TRUE(fs::is_directory(path("somedir")));
}

TEST_F(OutputPaths, ConcurrentWritersToOneDbEndWithOneCompleteStore) {
  // Two writers used to share <db>.tmp-proflint: one could exit 2 with its data in place, or exit
  // 0 without, or both fail ("...into place: Success").
  auto a = write("a.json", trace_with_kernel("kernel_from_writer_a"));
  auto b = write("b.json", trace_with_kernel("kernel_from_writer_b"));
  auto db = path("shared.db");
  std::string bin = shell_quote(proflint::testing::proflint_binary());
  for (int round = 0; round < 3; ++round) {
    std::string cmd = bin + " ingest " + shell_quote(a) + " --db " + shell_quote(db) + " 2>/dev/null & pa=$!; " + bin +
                      " ingest " + shell_quote(b) + " --db " + shell_quote(db) +
                      " 2>/dev/null & pb=$!; wait $pa; ra=$?; wait $pb; rb=$?; exit $((ra * 10 + rb))";
    int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "round " << round << ": writer a*10 + writer b exit codes";
    auto q = run_proflint("query " + shell_quote(db) + " " + shell_quote("SELECT name FROM kernel"));
    ASSERT_EQ(q.exit_code, 0) << q.err;
    EXPECT_TRUE(q.out == "name\nkernel_from_writer_a\n" || q.out == "name\nkernel_from_writer_b\n") << q.out;
    EXPECT_EQ(listing(), (std::vector<std::string>{"a.json", "b.json", "shared.db", "trace.json"}));
  }
}

TEST_F(OutputPaths, AnalyzeThatFailsAfterTheImportLeavesNeitherDbNorOutput) {
  // --only with an unknown id fails in the analysis, after the import: the store used to be saved
  // already.
  auto db = path("out.db");
  auto out = path("findings.json");
  auto r = run_proflint("analyze " + shell_quote(trace_) + " --db " + shell_quote(db) + " -o " + shell_quote(out) +
                        " --format json --only no-such-detector");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("no-such-detector"), std::string::npos) << r.err;
  EXPECT_EQ(listing(), std::vector<std::string>{"trace.json"});
}

TEST_F(OutputPaths, AnalyzeWritesDbAndOutputTogether) {
  auto db = path("out.db");
  auto out = path("findings.json");
  auto r = run_proflint("analyze " + shell_quote(trace_) + " --db " + shell_quote(db) + " -o " + shell_quote(out) +
                        " --format json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(listing(), (std::vector<std::string>{"findings.json", "out.db", "trace.json"}));
  EXPECT_EQ(slurp(out).substr(0, 1), "{");
}
