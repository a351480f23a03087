// tests/unit/sqlite_file_test.cpp — SQLite files checked before SQLite opens them, and SQLite's
// words for damage said in proflint's (engine/common/sqlite_file.hpp; issue 20, defect 9).
#include "engine/common/sqlite_file.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/common/error.hpp"

namespace fs = std::filesystem;

namespace proflint {
namespace {

class SqliteFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("proflint_sqlite_file_" + std::to_string(getpid()));
    fs::create_directories(dir_);
    // A real SQLite file of a few pages, made by SQLite itself.
    good_ = (dir_ / "good.sqlite").string();
    fs::remove(good_);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(good_.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "CREATE TABLE t(x TEXT); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
                           "WHERE i < 2000) INSERT INTO t SELECT printf('row %d', i) FROM n;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
    std::ifstream in(good_, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    bytes_ = s.str();
    ASSERT_GT(bytes_.size(), 4096u * 3);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The message check_sqlite_header gives for `bytes`, or "" when it accepts them.
  std::string refusal(const std::string& bytes, bool copied_for_writing = false) {
    auto path = (dir_ / "bad.sqlite").string();
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    try {
      check_sqlite_header(path, copied_for_writing);
      return "";
    } catch (const Error& e) {
      std::string what = e.what();
      EXPECT_EQ(what.rfind(path + ": ", 0), 0u) << what;  // names the file first
      return what.substr(path.size() + 2);
    }
  }
  std::string with(size_t at, char byte) const {
    std::string b = bytes_;
    b[at] = byte;
    return b;
  }

  fs::path dir_;
  std::string good_, bytes_;
};

TEST_F(SqliteFile, AcceptsWhatSqliteWroteAndLeavesOtherFilesToTheCaller) {
  EXPECT_EQ(refusal(bytes_), "");
  EXPECT_EQ(refusal(bytes_, true), "");
  EXPECT_EQ(refusal("{\"traceEvents\": []}"), "");  // not SQLite: the importer says what it expected
  EXPECT_EQ(refusal(bytes_ + std::string(100, 'x')), "");  // longer than the pages: not truncated
}

TEST_F(SqliteFile, NamesTheHeaderByteThatIsWrong) {
  EXPECT_EQ(refusal(bytes_.substr(0, 60)),
            "byte 60: the file ends inside the 100-byte SQLite header (truncated): expected a complete SQLite database");
  // Page size 0x0300 = 768: not a power of two.
  EXPECT_EQ(refusal(with(16, 3)).rfind("SQLite header byte 16: page size 768, expected a power of two from 512 to 65536", 0),
            0u);
  EXPECT_EQ(refusal(with(19, 7)).rfind("SQLite header byte 19: file format read version 7, expected 1", 0), 0u);
  EXPECT_EQ(refusal(with(21, 65)).rfind("SQLite header bytes 21-23: payload fractions 65, 32, 32, expected 64, 32, 32", 0),
            0u);
  // A write version above 2 only matters to a copy proflint writes (a store loaded into memory).
  EXPECT_EQ(refusal(with(18, 3)), "");
  EXPECT_EQ(refusal(with(18, 3), true).rfind("SQLite header byte 18: file format write version 3, expected 1", 0), 0u);
}

TEST_F(SqliteFile, TruncationIsMeasuredAgainstTheHeadersPageCount) {
  // The page count (offset 28) is trusted when the change counter (24) matches offset 92, which
  // SQLite keeps so: the file SQLite wrote is exactly that many pages.
  const uint32_t page_size = static_cast<unsigned char>(bytes_[16]) << 8 | static_cast<unsigned char>(bytes_[17]);
  uint32_t pages = 0;
  for (int i = 28; i < 32; ++i) pages = pages << 8 | static_cast<unsigned char>(bytes_[i]);
  ASSERT_EQ(bytes_.size(), size_t{page_size} * pages);
  EXPECT_EQ(refusal(bytes_.substr(0, bytes_.size() - 1)),
            "byte " + std::to_string(bytes_.size() - 1) + ": the file ends early (truncated): its SQLite header says " +
                std::to_string(pages) + " pages of " + std::to_string(page_size) + " bytes, " +
                std::to_string(bytes_.size()) + " bytes in all");
  // With the counters apart (an SQLite older than 3.7.0 wrote the file) the count means nothing.
  std::string old = bytes_.substr(0, bytes_.size() - page_size);
  old[95] = static_cast<char>(old[95] ^ 1);
  EXPECT_EQ(refusal(old), "");
}

TEST(SqliteDamageWords, SaysSqlitesDamagePhrasesInProflintsWords) {
  EXPECT_EQ(sqlite_damage_words("malformed database schema (kernel_by_name) - near \"XXXXX\": syntax error"),
            "the file's schema table (sqlite_master) is damaged: the definition of 'kernel_by_name' does not compile "
            "(near \"XXXXX\": syntax error); the file was edited or damaged after it was written");
  EXPECT_EQ(damaged_schema_entry("malformed database schema (kernel_by_name) - near \"XXXXX\": syntax error"),
            "kernel_by_name");
  EXPECT_EQ(sqlite_damage_words("cannot read the SQLite schema: malformed database schema (t)"),
            "cannot read the SQLite schema: the file's schema table (sqlite_master) is damaged: the definition of 't' "
            "cannot be used; the file was edited or damaged after it was written");
  EXPECT_EQ(sqlite_damage_words("database disk image is malformed"),
            "the file is damaged: its pages do not form a valid SQLite database (truncated, overwritten or edited)");
  EXPECT_EQ(sqlite_damage_words("no such table: _kernel"), "missing table _kernel");
  EXPECT_EQ(sqlite_damage_words("attempt to write a readonly database").find("readonly"), std::string::npos);
  // Anything else is left as it was.
  EXPECT_EQ(sqlite_damage_words("integer overflow"), "integer overflow");
  EXPECT_EQ(damaged_schema_entry("database disk image is malformed"), "");
}

}  // namespace
}  // namespace proflint
