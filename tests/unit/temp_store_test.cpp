// tests/unit/temp_store_test.cpp — a store too big for a shared in-memory database is written to
// a temporary file that analysis reads on several connections: same findings, several readers,
// and the file is gone afterwards, whether the run ends well, throws, or is stopped by a signal.
//
// PROFLINT_SHARED_STORE_BUDGET (bytes, test-only) brings the 1.2 GB budget down so that a fixture
// takes that path; TMPDIR points at a folder of the test's own, so "gone" means the folder is empty.
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

#include "engine/analysis/facts.hpp"
#include "engine/common/error.hpp"
#include "engine/pipeline/analyze.hpp"
#include "engine/pipeline/load.hpp"
#include "tests/support/all_checks.hpp"
#include "tests/support/realdata.hpp"
#include "tests/support/run.hpp"
#include "tests/support/scoped_env.hpp"

using namespace proflint;
using proflint::testing::ScopedEnv;
namespace fs = std::filesystem;

namespace {

std::string fixture(const char* name) { return (proflint::testing::source_dir() / "fixtures" / name).string(); }

// A fresh, empty folder for TMPDIR, removed at the end.
class TempStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("proflint_temp_store_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  bool empty_dir() const { return fs::is_empty(dir_); }
  std::string listing() const {
    std::string out;
    for (const auto& e : fs::directory_iterator(dir_)) out += e.path().filename().string() + " ";
    return out;
  }
  fs::path dir_;
};

AnalysisResult analyze(Store& store, unsigned jobs) { return proflint::testing::analyze_all(store, jobs); }
using proflint::testing::rendered;

}  // namespace

TEST_F(TempStoreTest, OverBudgetStoreIsATempFileReadBySeveralConnectionsWithTheSameFindings) {
  const std::vector<std::string> paths = {fixture("sample_train.json.gz"), fixture("ddp2_rank0.json.gz")};
  std::string expected;
  {
    Store memory = load_inputs(paths, LoadOptions{});
    ASSERT_TRUE(memory.temp_path().empty()) << "a fixture fits the shared in-memory store";
    expected = rendered(analyze(memory, 3));
  }
  ASSERT_NE(expected.find("\"id\""), std::string::npos) << "the fixtures must give findings to compare";
  {
    ScopedEnv tmp("TMPDIR", dir_.string());
    ScopedEnv budget("PROFLINT_SHARED_STORE_BUDGET", "1");
    Store store = load_inputs(paths, LoadOptions{});
    ASSERT_FALSE(store.temp_path().empty()) << "over the budget, the store must be a temporary file";
    EXPECT_EQ(fs::path(store.temp_path()).parent_path(), dir_) << "the file goes to $TMPDIR";
    EXPECT_TRUE(fs::exists(store.temp_path()));
    EXPECT_EQ(store.readers_opened(), 0);
    // 3 jobs: the calling thread on the store's connection and two readers, and one more reader
    // for the summary's op-table parts (summarize).
    EXPECT_EQ(rendered(analyze(store, 3)), expected);
    EXPECT_EQ(store.readers_opened(), 2 + 1) << "analysis must have run on more than one connection";
    EXPECT_EQ(rendered(analyze(store, 1)), expected) << "one thread gives the same";
  }
  EXPECT_TRUE(empty_dir()) << "left behind: " << listing();
}

TEST_F(TempStoreTest, TempFileIsRemovedWhenAnalysisThrows) {
  ScopedEnv tmp("TMPDIR", dir_.string());
  ScopedEnv budget("PROFLINT_SHARED_STORE_BUDGET", "1");
  std::string seen;
  auto run = [&] {
    Store store = load_inputs({fixture("sample_train.json.gz")}, LoadOptions{});
    seen = store.temp_path();
    ASSERT_TRUE(fs::exists(seen));
    Facts facts(store, summarize(store));
    std::vector<AnalysisTask> tasks(4);
    for (auto& t : tasks) {
      t.label = "detector:throws";
      // Not a std::exception of a detector's own (those become findings): it ends the run.
      t.run = [](const Facts&, int64_t, FindingSink&) { throw std::runtime_error("task failed"); };
    }
    run_tasks(store, facts, tasks, 2);
  };
  EXPECT_THROW(run(), std::runtime_error);
  EXPECT_FALSE(seen.empty());
  EXPECT_FALSE(fs::exists(seen));
  EXPECT_TRUE(empty_dir()) << "left behind: " << listing();
}

TEST_F(TempStoreTest, TempFileIsRemovedWhenTheProcessIsStoppedBySigterm) {
  ScopedEnv tmp("TMPDIR", dir_.string());
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child makes a temporary store and is killed while it holds it: no destructor runs.
    Store store = Store::create_in_memory(Store::Sharing::temp_file);
    store.db().exec("INSERT INTO string(id, value) VALUES (1, 'x')");
    if (!fs::exists(store.temp_path())) ::_exit(3);
    ::kill(::getpid(), SIGTERM);
    ::_exit(4);  // not reached when the signal ends the process
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  EXPECT_EQ(WTERMSIG(status), SIGTERM) << "the process must still end by the signal it was sent";
  EXPECT_TRUE(empty_dir()) << "left behind: " << listing();
}

// The disk filling up while the store is written: a file size limit (RLIMIT_FSIZE, with SIGXFSZ
// ignored, so a write past it fails with EFBIG) just above the empty schema stands in for a full
// disk. In a child process, whose limit goes with it.
TEST_F(TempStoreTest, DiskFullWhileWritingIsAClearErrorAndLeavesNoFile) {
  ScopedEnv tmp("TMPDIR", dir_.string());
  ScopedEnv budget("PROFLINT_SHARED_STORE_BUDGET", "1");
  uintmax_t schema_bytes = 0;
  {
    Store empty = Store::create_in_memory(Store::Sharing::temp_file);
    schema_bytes = fs::file_size(empty.temp_path());
  }
  ASSERT_GT(schema_bytes, 0u);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit {};
    limit.rlim_cur = limit.rlim_max = schema_bytes + 64 * 1024;  // the fixture's store is ~1.5 MB
    ::setrlimit(RLIMIT_FSIZE, &limit);
    int code = 10;
    try {
      load_inputs({fixture("sample_train.json.gz")}, LoadOptions{});
      code = 11;  // no error: the limit did not bite
    } catch (const Error& e) {
      std::string what = e.what();
      bool named = what.find("writing the fact store to the temporary folder " + dir_.string() + " failed") !=
                       std::string::npos &&
                   what.find("TMPDIR") != std::string::npos;
      code = named ? (fs::is_empty(dir_) ? 0 : 13) : 12;
    } catch (...) {
      code = 14;  // not turned into a clear error
    }
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  // 11: loaded anyway, 12: message without the folder, 13: file left behind, 14: not an Error.
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(empty_dir()) << "left behind: " << listing();
}

TEST_F(TempStoreTest, SavedStoreOverBudgetIsCopiedIntoATempFile) {
  std::string saved = (dir_ / "saved.pfdb").string();
  std::string expected;
  {
    Store memory = load_inputs({fixture("sample_train.json.gz")}, LoadOptions{});
    memory.save_as(saved);
    expected = rendered(analyze(memory, 2));
  }
  fs::path tmpdir = dir_ / "tmp";
  fs::create_directories(tmpdir);
  {
    ScopedEnv tmp("TMPDIR", tmpdir.string());
    ScopedEnv budget("PROFLINT_SHARED_STORE_BUDGET", "1");
    Store store = load_inputs({saved}, LoadOptions{});
    ASSERT_FALSE(store.temp_path().empty());
    EXPECT_EQ(rendered(analyze(store, 2)), expected);
    EXPECT_EQ(store.readers_opened(), 1 + 1 + 1);  // the load's value check's reader, the analysis's and the summary's
  }
  EXPECT_TRUE(fs::is_empty(tmpdir));
}

TEST_F(TempStoreTest, TempFolderWithoutRoomOrMissingIsAClearError) {
  {
    ScopedEnv tmp("TMPDIR", dir_.string());
    try {
      Store::require_temp_room(1e18);  // an exabyte
      ADD_FAILURE() << "expected an error";
    } catch (const Error& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("not enough room in the temporary folder " + dir_.string()), std::string::npos) << what;
      EXPECT_NE(what.find("TMPDIR"), std::string::npos) << what;
    }
    EXPECT_NO_THROW(Store::require_temp_room(1000));
  }
  std::string missing = (dir_ / "no-such-folder").string();
  ScopedEnv tmp("TMPDIR", missing);
  ScopedEnv budget("PROFLINT_SHARED_STORE_BUDGET", "1");
  try {
    load_inputs({fixture("sample_train.json.gz")}, LoadOptions{});
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
}

// The command line: byte-identical `analyze --format json` output through the temporary file, and
// exit 2 with the folder named when it cannot be used.
TEST_F(TempStoreTest, AnalyzeJsonIsTheSameThroughATempFile) {
  using proflint::testing::run_proflint;
  using proflint::testing::shell_quote;
  std::string args = "analyze " + shell_quote(fixture("ddp2_rank0.json.gz")) + " --format json";
  auto normal = run_proflint(args);
  ASSERT_EQ(normal.exit_code, 0) << normal.err;
  ASSERT_NE(normal.out.find("\"findings\""), std::string::npos);
  {
    ScopedEnv tmp("TMPDIR", dir_.string());
    ScopedEnv budget("PROFLINT_SHARED_STORE_BUDGET", "1");
    auto through_file = run_proflint(args);
    EXPECT_EQ(through_file.exit_code, 0) << through_file.err;
    EXPECT_TRUE(through_file.out == normal.out) << "outputs differ";
    EXPECT_TRUE(empty_dir()) << "left behind: " << listing();
  }
  // Run by hand: run_proflint keeps its captured output under TMPDIR, which is missing here.
  std::string missing = (dir_ / "gone").string();
  std::string out = (dir_ / "out").string(), err = (dir_ / "err").string();
  std::string cmd = "TMPDIR=" + shell_quote(missing) + " PROFLINT_SHARED_STORE_BUDGET=1 " +
                    shell_quote(proflint::testing::proflint_binary()) + " " + args + " >" + shell_quote(out) + " 2>" +
                    shell_quote(err);
  int status = std::system(cmd.c_str());
  proflint::testing::RunResult failed;
  failed.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  failed.out = proflint::testing::slurp(out);
  failed.err = proflint::testing::slurp(err);
  EXPECT_EQ(failed.exit_code, 2) << failed.err;
  EXPECT_NE(failed.err.find("temporary folder " + missing), std::string::npos) << failed.err;
  EXPECT_NE(failed.err.find("TMPDIR"), std::string::npos) << failed.err;
  EXPECT_EQ(std::count(failed.err.begin(), failed.err.end(), '\n'), 1) << failed.err;
  EXPECT_TRUE(failed.out.empty()) << failed.out;
}
