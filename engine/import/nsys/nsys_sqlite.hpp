// engine/import/nsys/nsys_sqlite.hpp — read-only access to a user's Nsight Systems export.
//
// The export is opened immutable through the sqlite3 C API (no locks, no journal, nothing
// written next to it) and read only through Rows: one prepared SELECT per table that names the
// columns it wants, so extra columns added after export are ignored and absent ones read NULL.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/import/nsys/nsys_decode.hpp"

namespace proflint::nsys {

// A read of the export failed (corrupted or truncated file). Carries the table and row so the
// importer can name the place; never escapes the importer.
class ReadError : public std::runtime_error {
 public:
  // SQLite quotes names from the damaged file in its messages: keep the text valid UTF-8.
  ReadError(std::string table, int64_t row, const std::string& message)
      : std::runtime_error(sanitize_utf8(message)), table_(std::move(table)), row_(row) {}
  const std::string& table() const { return table_; }
  int64_t row() const { return row_; }  // 0 = before the first row

 private:
  std::string table_;
  int64_t row_;
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

 private:
  sqlite3* db_ = nullptr;
  std::set<std::string> tables_;
};

// One pass over a table. Column i of the accessors is wanted[i]; a wanted column that the
// table lacks reads as NULL and has(i) is false.
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

  bool null(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }
  int64_t i64(int i) const { return sqlite3_column_int64(stmt_, i); }
  std::optional<int64_t> opt(int i) const {
    if (null(i)) return std::nullopt;
    return sqlite3_column_int64(stmt_, i);
  }
  double real(int i) const { return sqlite3_column_double(stmt_, i); }
  std::string_view text(int i) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, i));
    if (!p) return {};
    return {p, static_cast<size_t>(sqlite3_column_bytes(stmt_, i))};
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string table_;
  std::vector<bool> present_;
  int64_t row_ = 0;
};

// Double-quoted SQL identifier.
std::string quote_identifier(std::string_view name);

}  // namespace proflint::nsys
