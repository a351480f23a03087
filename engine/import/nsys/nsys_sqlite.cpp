// engine/import/nsys/nsys_sqlite.cpp — read-only access to a user's Nsight Systems export.
#include "engine/import/nsys/nsys_sqlite.hpp"

#include <algorithm>

#include "engine/import/nsys/nsys_decode.hpp"

namespace proflint::nsys {

std::string quote_identifier(std::string_view name) {
  std::string q = "\"";
  for (char c : name) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

ExportFile::ExportFile(const std::string& path) {
  // immutable=1: SQLite takes no lock and never creates a journal, -wal or -shm file, so the
  // export (and the folder it sits in) stays byte-for-byte as the user left it.
  std::string uri = immutable_sqlite_uri(path);
  int rc = sqlite3_open_v2(uri.c_str(), &db_, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw ReadError("", 0, "cannot open: " + message);
  }
  // Reads only; a malformed file must not make SQLite retry or block.
  sqlite3_exec(db_, "PRAGMA query_only = 1", nullptr, nullptr, nullptr);
  sqlite3_stmt* st = nullptr;
  rc = sqlite3_prepare_v2(db_, "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &st, nullptr);
  while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    const auto* name = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    if (name) tables_.insert(name);
    rc = SQLITE_OK;
  }
  std::string message = sqlite3_errmsg(db_);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw ReadError("", 0, "cannot read the SQLite schema: " + message);
  }
}

ExportFile::~ExportFile() { sqlite3_close(db_); }

std::vector<std::string> ExportFile::columns(const std::string& table) const {
  std::vector<std::string> names;
  if (!has_table(table)) return names;
  std::string sql = "PRAGMA table_info(" + quote_identifier(table) + ")";
  sqlite3_stmt* st = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr);
  while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    const auto* name = reinterpret_cast<const char*>(sqlite3_column_text(st, 1));
    if (name) names.emplace_back(name);
    rc = SQLITE_OK;
  }
  std::string message = sqlite3_errmsg(db_);
  sqlite3_finalize(st);
  if (rc != SQLITE_DONE) throw ReadError(table, 0, "cannot read the columns: " + message);
  return names;
}

Rows::Rows(const ExportFile& file, const std::string& table, const std::vector<std::string_view>& wanted,
           const std::string& where)
    : db_(file.handle()), table_(table) {
  std::vector<std::string> columns = file.columns(table);
  std::string sql = "SELECT ";
  for (size_t i = 0; i < wanted.size(); ++i) {
    bool present = std::find(columns.begin(), columns.end(), wanted[i]) != columns.end();
    present_.push_back(present);
    if (i) sql += ", ";
    sql += present ? quote_identifier(wanted[i]) : std::string("NULL");
  }
  sql += " FROM " + quote_identifier(table);
  if (!where.empty()) sql += " " + where;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) {
    std::string message = sqlite3_errmsg(db_);
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
    throw ReadError(table_, 0, message);
  }
}

Rows::~Rows() { sqlite3_finalize(stmt_); }

bool Rows::next() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) {
    ++row_;
    return true;
  }
  if (rc == SQLITE_DONE) return false;
  throw ReadError(table_, row_ + 1, sqlite3_errmsg(db_));
}

}  // namespace proflint::nsys
