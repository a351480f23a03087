// tests/unit/output_file_test.cpp — OutputFile, the one writer of user-named outputs: what it does
// with each kind of file at the target (issue 20, defects 1 and 2).
#include "engine/common/output_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <thread>
#include <fstream>

#include "engine/common/error.hpp"
#include "tests/support/run.hpp"

namespace fs = std::filesystem;
using proflint::OutputFile;

namespace {

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("proflint_output_file_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  // Names in the folder: a staged or committed output leaves no temporary file or folder behind.
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path dir_;
};

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const proflint::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_F(OutputFileTest, DevNullIsStreamedNeverRenamedOver) {
  // As root, `--db /dev/null` used to rename a regular file over the system's /dev/null.
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  ASSERT_TRUE(S_ISCHR(st.st_mode));
  OutputFile out("/dev/null", "--db");
  ASSERT_TRUE(out.streams());  // only now is it safe to write: the path is streamed into
  out.stage("discarded\n");
  out.commit();
  ASSERT_EQ(::lstat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null is no longer a character device";
}

TEST_F(OutputFileTest, RegularFileIsReplacedOnlyAtCommit) {
  auto target = path("out.txt");
  std::ofstream(target) << "old";
  ASSERT_EQ(::chmod(target.c_str(), 0600), 0);
  OutputFile out(target);
  EXPECT_FALSE(out.streams());
  out.stage("new content");
  EXPECT_EQ(proflint::testing::slurp(target), "old");  // staged, not visible yet
  out.commit();
  EXPECT_EQ(proflint::testing::slurp(target), "new content");
  EXPECT_EQ(listing(), std::vector<std::string>{"out.txt"});
  struct stat st {};
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);  // the replaced file's permissions are kept
}

TEST_F(OutputFileTest, UncommittedOutputLeavesNothing) {
  auto target = path("never.db");
  {
    OutputFile out(target);
    out.stage("content of a command that failed later");
  }
  EXPECT_TRUE(listing().empty());
}

TEST_F(OutputFileTest, StagedFileIsInAFolderOnlyThisProcessCanWrite) {
  OutputFile out(path("store.db"));
  std::string seen;
  out.stage_file([&](const std::string& temp) {
    seen = temp;
    std::ofstream(temp) << "store bytes";
  });
  struct stat st {};
  ASSERT_EQ(::stat(fs::path(seen).parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u) << seen;
  EXPECT_EQ(fs::path(seen).parent_path().parent_path(), dir_);  // same folder as the target: rename stays on one file system
  out.commit();
  EXPECT_EQ(proflint::testing::slurp(path("store.db")), "store bytes");
  EXPECT_EQ(listing(), std::vector<std::string>{"store.db"});
}

TEST_F(OutputFileTest, SymlinkToRegularFileKeepsTheLinkAndReplacesItsTarget) {
  auto real = path("real.json");
  std::ofstream(real) << "old";
  fs::create_symlink(real, path("link.json"));
  OutputFile out(path("link.json"));
  out.stage("new");
  out.commit();
  EXPECT_TRUE(fs::is_symlink(path("link.json")));
  EXPECT_EQ(proflint::testing::slurp(real), "new");
}

TEST_F(OutputFileTest, DanglingSymlinkIsRefused) {
  fs::create_symlink(path("missing"), path("dangling"));
  auto m = message_of([&] { OutputFile out(path("dangling"), "-o"); });
  EXPECT_NE(m.find("symbolic link"), std::string::npos) << m;
  EXPECT_NE(m.find(path("dangling")), std::string::npos) << m;
  EXPECT_FALSE(fs::exists(path("missing")));
}

TEST_F(OutputFileTest, DirectoryIsRefused) {
  fs::create_directories(path("sub"));
  auto m = message_of([&] { OutputFile out(path("sub"), "--db"); });
  EXPECT_NE(m.find("is a directory"), std::string::npos) << m;
  EXPECT_NE(m.find("--db"), std::string::npos) << m;
}

TEST_F(OutputFileTest, MissingFolderIsRefusedBeforeAnyWork) {
  auto m = message_of([&] { OutputFile out(path("no/such/folder/out.db")); });
  EXPECT_NE(m.find("does not exist"), std::string::npos) << m;
}

TEST_F(OutputFileTest, FailedRenameReportsItsOwnErrnoNotSuccess) {
  // The old code removed its temporary file before reading the error: "...into place: Success".
  auto target = path("out.db");
  OutputFile out(target);
  out.stage("x");
  fs::create_directories(fs::path(target) / "occupied");  // a non-empty directory cannot be renamed over
  auto m = message_of([&] { out.commit(); });
  EXPECT_NE(m.find("cannot move the finished file into place"), std::string::npos) << m;
  EXPECT_EQ(m.find("Success"), std::string::npos) << m;
  EXPECT_NE(m.find(std::strerror(EISDIR)), std::string::npos) << m;
}

TEST_F(OutputFileTest, FifoIsWrittenIntoNotReplaced) {
  auto fifo = path("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  OutputFile out(fifo);
  ASSERT_TRUE(out.streams());
  std::string got;
  std::thread reader([&] { got = proflint::testing::slurp(fifo); });
  out.stage("through the pipe\n");
  out.commit();
  reader.join();
  EXPECT_EQ(got, "through the pipe\n");
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}
