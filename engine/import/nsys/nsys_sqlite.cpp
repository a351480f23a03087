// engine/import/nsys/nsys_sqlite.cpp — read-only access to a user's Nsight Systems export.
#include "engine/import/nsys/nsys_sqlite.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "engine/import/nsys/nsys_decode.hpp"

namespace proflint::nsys {

namespace {

// Opens the export immutable and read-only (see ExportFile); nullptr and `message` on failure.
sqlite3* open_export(const std::string& uri, std::string& message) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return nullptr;
  }
  // Reads only; a malformed file must not make SQLite retry or block.
  sqlite3_exec(db, "PRAGMA query_only = 1", nullptr, nullptr, nullptr);
  return db;
}

constexpr size_t kChunkRows = 1024;
constexpr size_t kQueuedChunks = 4;  // per table: bounded memory, whatever the table's size

}  // namespace

struct RowChunk {
  std::vector<RowCell> cells;  // rows * columns
  std::string text;
  size_t rows = 0;
  // After the rows: the statement failed here (message), or reached its end.
  bool failed = false, last = false;
  std::string message;
};

// Steps one SELECT on its own connection and thread, a few chunks ahead of the reader.
class RowStream {
 public:
  RowStream(const std::string& uri, std::string sql, int columns)
      : sql_(std::move(sql)), columns_(columns), worker_([this, uri] { run(uri); }) {}
  ~RowStream() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    worker_.join();
  }
  const std::string& sql() const { return sql_; }

  std::unique_ptr<RowChunk> take() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !queue_.empty(); });
    auto chunk = std::move(queue_.front());
    queue_.pop_front();
    changed_.notify_all();
    return chunk;
  }

 private:
  bool put(std::unique_ptr<RowChunk> chunk) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return queue_.size() < kQueuedChunks || stopping_; });
    if (stopping_) return false;
    queue_.push_back(std::move(chunk));
    changed_.notify_all();
    return true;
  }

  void run(const std::string& uri) {
    std::string message;
    sqlite3* db = open_export(uri, message);
    // One forward scan: a small page cache is enough, and ten of them stay small.
    if (db) sqlite3_exec(db, "PRAGMA cache_size = -512", nullptr, nullptr, nullptr);
    sqlite3_stmt* st = nullptr;
    if (db && sqlite3_prepare_v2(db, sql_.c_str(), -1, &st, nullptr) != SQLITE_OK) message = sqlite3_errmsg(db);
    auto chunk = std::make_unique<RowChunk>();
    if (!st) {
      chunk->failed = chunk->last = true;
      chunk->message = message;
      put(std::move(chunk));
      sqlite3_close(db);
      return;
    }
    const auto n = static_cast<size_t>(columns_);
    for (;;) {
      int rc = sqlite3_step(st);
      if (rc == SQLITE_ROW) {
        for (int c = 0; c < columns_; ++c) {
          RowCell cell;
          cell.type = sqlite3_column_type(st, c);
          switch (cell.type) {
            case SQLITE_INTEGER:
              cell.i = sqlite3_column_int64(st, c);
              cell.d = static_cast<double>(cell.i);  // SQLite's own INTEGER -> REAL conversion
              break;
            case SQLITE_FLOAT:
              cell.d = sqlite3_column_double(st, c);
              cell.i = sqlite3_column_int64(st, c);
              break;
            case SQLITE_TEXT:
            case SQLITE_BLOB: {
              // Bytes first: a later numeric conversion must not invalidate them.
              const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st, c));
              cell.len = static_cast<uint32_t>(sqlite3_column_bytes(st, c));
              cell.off = static_cast<uint32_t>(chunk->text.size());
              if (p) chunk->text.append(p, cell.len);
              cell.i = sqlite3_column_int64(st, c);
              cell.d = sqlite3_column_double(st, c);
              break;
            }
            default:
              break;
          }
          chunk->cells.push_back(cell);
        }
        ++chunk->rows;
        // A chunk's text stays far below 4 GiB (offsets are 32-bit): hand it over at 64 MiB.
        if (chunk->rows == kChunkRows || chunk->text.size() > (size_t{64} << 20)) {
          if (!put(std::move(chunk))) break;
          chunk = std::make_unique<RowChunk>();
          chunk->cells.reserve(kChunkRows * n);
        }
        continue;
      }
      chunk->last = true;
      if (rc != SQLITE_DONE) {
        chunk->failed = true;
        chunk->message = sqlite3_errmsg(db);
      }
      put(std::move(chunk));
      break;
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
  }

  std::string sql_;
  int columns_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<RowChunk>> queue_;
  bool stopping_ = false;
  std::thread worker_;  // last: starts after the members it uses
};


ExportFile::ExportFile(const std::string& path) {
  // immutable=1: SQLite takes no lock and never creates a journal, -wal or -shm file, so the
  // export (and the folder it sits in) stays byte-for-byte as the user left it.
  uri_ = immutable_sqlite_uri(path);
  std::string open_message;
  db_ = open_export(uri_, open_message);
  if (!db_) throw ReadError("", 0, "cannot open: " + open_message);
  sqlite3_stmt* st = nullptr;
  int rc = sqlite3_prepare_v2(db_, "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &st, nullptr);
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

ExportFile::~ExportFile() {
  prefetched_.clear();  // stops and joins the read-ahead threads
  sqlite3_close(db_);
}

void ExportFile::prefetch(const std::string& table, const std::vector<std::string_view>& wanted,
                          const std::string& where) const {
  if (!has_table(table)) return;
  std::vector<bool> present;
  std::string sql = select_sql(*this, table, wanted, where, present);
  if (prefetched_.count(sql)) return;
  prefetched_.emplace(sql, std::make_unique<RowStream>(uri_, sql, static_cast<int>(wanted.size())));
}

std::unique_ptr<RowStream> ExportFile::take_prefetched(const std::string& sql) const {
  auto it = prefetched_.find(sql);
  if (it == prefetched_.end()) return nullptr;
  auto stream = std::move(it->second);
  prefetched_.erase(it);
  return stream;
}

std::string select_sql(const ExportFile& file, const std::string& table, const std::vector<std::string_view>& wanted,
                       const std::string& where, std::vector<bool>& present) {
  std::vector<std::string> columns = file.columns(table);
  std::string sql = "SELECT ";
  present.clear();
  for (size_t i = 0; i < wanted.size(); ++i) {
    bool is_there = std::find(columns.begin(), columns.end(), wanted[i]) != columns.end();
    present.push_back(is_there);
    if (i) sql += ", ";
    sql += is_there ? quote_identifier(wanted[i]) : std::string("NULL");
  }
  sql += " FROM " + quote_identifier(table);
  if (!where.empty()) sql += " " + where;
  return sql;
}

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
  std::string sql = select_sql(file, table, wanted, where, present_);
  // Prepared here even when read ahead: a statement SQLite refuses fails as it always did.
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) {
    std::string message = sqlite3_errmsg(db_);
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
    throw ReadError(table_, 0, message);
  }
  if ((stream_ = file.take_prefetched(sql))) {
    sqlite3_finalize(stmt_);
    stmt_ = nullptr;
    scratch_.resize(wanted.size());
  }
}

Rows::~Rows() {
  stream_.reset();
  sqlite3_finalize(stmt_);
}

bool Rows::next() {
  if (stream_) {
    cells_ = nullptr;
    for (;;) {
      if (chunk_ && next_row_ < chunk_->rows) {
        cells_ = chunk_->cells.data() + next_row_ * present_.size();
        text_base_ = chunk_->text.data();
        ++next_row_;
        ++row_;
        return true;
      }
      if (chunk_ && chunk_->last) {
        if (chunk_->failed) throw ReadError(table_, row_ + 1, chunk_->message);
        return false;
      }
      chunk_ = stream_->take();
      next_row_ = 0;
    }
  }
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) {
    ++row_;
    return true;
  }
  if (rc == SQLITE_DONE) return false;
  throw ReadError(table_, row_ + 1, sqlite3_errmsg(db_));
}

std::string_view Rows::number_text(int i) const {
  std::string& s = scratch_[static_cast<size_t>(i)];
  const RowCell& c = cells_[i];
  if (c.type == SQLITE_INTEGER) {
    s = std::to_string(c.i);  // SQLite writes an INTEGER as %lld
  } else {
    char buf[64];
    sqlite3_snprintf(sizeof buf, buf, "%!.15g", c.d);  // SQLite's own REAL -> TEXT format
    s = buf;
  }
  return s;
}

}  // namespace proflint::nsys
