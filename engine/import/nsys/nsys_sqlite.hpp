// engine/import/nsys/nsys_sqlite.hpp — read-only access to a user's Nsight Systems export.
//
// The export is opened immutable through the sqlite3 C API (no locks, no journal, nothing
// written next to it) and read only through Rows: one prepared SELECT per table that names the
// columns it wants, so extra columns added after export are ignored and absent ones read NULL.
//
// Big tables can be read ahead: ExportFile::prefetch starts a thread with a connection of its
// own (also immutable and read-only) that steps the same SELECT and hands its rows over in chunks
// through a short queue; the Rows of that SELECT then read the chunks instead of stepping. Rows
// give the same values either way (SQLite's own conversions included), so the importer keeps one
// order of rows and of writes, and only the SQLite work moves to other cores.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/sqlite_file.hpp"
#include "engine/import/nsys/nsys_decode.hpp"

namespace proflint::nsys {

// A read of the export failed (corrupted or truncated file). Carries the table and row so the
// importer can name the place; never escapes the importer.
class ReadError : public std::runtime_error {
 public:
  // SQLite quotes names from the damaged file in its messages: keep the text valid UTF-8, and
  // say its words for a damaged file in proflint's.
  ReadError(std::string table, int64_t row, const std::string& message)
      : std::runtime_error(sanitize_utf8(sqlite_damage_words(message))), table_(std::move(table)), row_(row) {}
  const std::string& table() const { return table_; }
  int64_t row() const { return row_; }  // 0 = before the first row

 private:
  std::string table_;
  int64_t row_;
};

class RowStream;
struct RowChunk;

// One value of a read-ahead row: its SQLite type and what sqlite3_column_int64 / _double return
// for it; TEXT and BLOB bytes sit in the chunk's text at [off, off + len).
struct RowCell {
  int64_t i = 0;
  double d = 0;
  uint32_t off = 0, len = 0;
  int type = SQLITE_NULL;
};

class ExportFile {
 public:
  explicit ExportFile(const std::string& path);  // throws ReadError (table "") when it cannot open
  ~ExportFile();
  ExportFile(const ExportFile&) = delete;
  ExportFile& operator=(const ExportFile&) = delete;

  sqlite3* handle() const { return db_; }
  const std::set<std::string>& tables() const { return tables_; }
  bool has_table(const std::string& name) const { return tables_.count(name) != 0; }
  // Column names of `table` in declaration order (PRAGMA table_info); empty when absent.
  std::vector<std::string> columns(const std::string& table) const;

  // Starts reading `SELECT wanted FROM table [where]` ahead on a thread and connection of its own,
  // for the next Rows of exactly that table, columns and clause. No-op when the table is absent.
  void prefetch(const std::string& table, const std::vector<std::string_view>& wanted, const std::string& where = "") const;
  // The read-ahead of `sql`, if one was started and not yet taken (Rows only).
  std::unique_ptr<RowStream> take_prefetched(const std::string& sql) const;

 private:
  std::string uri_;
  sqlite3* db_ = nullptr;
  std::set<std::string> tables_;
  mutable std::map<std::string, std::unique_ptr<RowStream>> prefetched_;  // by SELECT text
};

// SELECT text of a Rows over `table` (absent columns read as NULL); `present` says which exist.
std::string select_sql(const ExportFile& file, const std::string& table, const std::vector<std::string_view>& wanted,
                       const std::string& where, std::vector<bool>& present);

// One pass over a table. Column i of the accessors is wanted[i]; a wanted column that the
// table lacks reads as NULL and has(i) is false. Values are what sqlite3_column_* would return,
// whether the rows come from the statement or from a read-ahead (ExportFile::prefetch).
class Rows {
 public:
  Rows(const ExportFile& file, const std::string& table, const std::vector<std::string_view>& wanted,
       const std::string& where = "");
  ~Rows();
  Rows(const Rows&) = delete;
  Rows& operator=(const Rows&) = delete;

  bool next();  // throws ReadError
  int64_t row_number() const { return row_; }
  const std::string& table() const { return table_; }
  bool has(int i) const { return present_[static_cast<size_t>(i)]; }

  bool null(int i) const { return type(i) == SQLITE_NULL; }
  int64_t i64(int i) const { return cells_ ? cells_[i].i : sqlite3_column_int64(stmt_, i); }
  std::optional<int64_t> opt(int i) const {
    if (null(i)) return std::nullopt;
    return i64(i);
  }
  double real(int i) const { return cells_ ? cells_[i].d : sqlite3_column_double(stmt_, i); }
  std::string_view text(int i) const {
    if (cells_) {
      const RowCell& c = cells_[i];
      if (c.type == SQLITE_TEXT || c.type == SQLITE_BLOB) return {text_base_ + c.off, c.len};
      if (c.type == SQLITE_NULL) return {};
      return number_text(i);
    }
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, i));
    if (!p) return {};
    return {p, static_cast<size_t>(sqlite3_column_bytes(stmt_, i))};
  }

 private:
  int type(int i) const { return cells_ ? cells_[i].type : sqlite3_column_type(stmt_, i); }
  std::string_view number_text(int i) const;  // SQLite's text of an INTEGER or REAL cell

  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string table_;
  std::vector<bool> present_;
  int64_t row_ = 0;
  // Read-ahead mode: the current chunk, the next row in it and the current row's cells.
  std::unique_ptr<RowStream> stream_;
  std::unique_ptr<RowChunk> chunk_;
  size_t next_row_ = 0;
  const RowCell* cells_ = nullptr;
  const char* text_base_ = nullptr;
  mutable std::vector<std::string> scratch_;  // number_text() per column
};

}  // namespace proflint::nsys
