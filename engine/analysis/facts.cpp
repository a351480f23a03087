// engine/analysis/facts.cpp — see facts.hpp.
#include "engine/analysis/facts.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

#include "engine/common/error.hpp"

namespace proflint {

const std::vector<std::string_view>& known_needs() {
  static const std::vector<std::string_view> all = {
      "api_calls", "collectives", "cpu_samples", "device_info", "gpu_activity", "iterations", "job",
      "kernels",   "memcpy",      "memory",      "multi_device", "nvtx",         "op_dtypes",  "op_shapes",
      "ops",       "os_calls",    "sync_events"};
  return all;
}

Facts::Facts(Store& store, std::vector<TraceSummary> summaries) : db_(store.db()), summaries_(std::move(summaries)) {}

Facts::Facts(SQLite::Database& db, std::vector<TraceSummary> summaries) : db_(db), summaries_(std::move(summaries)) {}

const TraceSummary* Facts::summary(int64_t trace_id) const {
  for (const auto& s : summaries_)
    if (s.trace_id == trace_id) return &s;
  return nullptr;
}

namespace {

bool exists(SQLite::Database& db, const char* sql, int64_t trace_id) {
  SQLite::Statement q(db, sql);
  q.bind(1, trace_id);
  return q.executeStep();
}

}  // namespace

bool Facts::is_job_head(int64_t trace_id) const {
  // The trace of the job's lowest rank; a trace that is in no job (a store without job rows) is its own head.
  SQLite::Statement q(db_,
                      "SELECT (SELECT r2.trace_id FROM job_rank r2 WHERE r2.job_id = r.job_id ORDER BY r2.rank LIMIT 1) "
                      "FROM job_rank r WHERE r.trace_id = ? LIMIT 1");
  q.bind(1, trace_id);
  if (!q.executeStep()) return true;
  return q.getColumn(0).getInt64() == trace_id;
}

bool Facts::has(std::string_view need, int64_t trace_id) const {
  auto& db = db_;
  const TraceSummary* s = summary(trace_id);
  if (need == "kernels") return s && s->kernel_count > 0;
  if (need == "gpu_activity") return s && s->has_gpu_work;
  if (need == "memcpy") return s && s->memcpy_count > 0;
  if (need == "api_calls") return s && s->api_call_count > 0;
  if (need == "ops") return s && s->op_count > 0;
  if (need == "iterations") return s && s->iterations.count > 0;
  if (need == "op_shapes")
    return exists(db, "SELECT 1 FROM _range WHERE trace_id = ? AND input_dims_id IS NOT NULL LIMIT 1", trace_id);
  if (need == "op_dtypes")
    return exists(db, "SELECT 1 FROM _range WHERE trace_id = ? AND input_types_id IS NOT NULL LIMIT 1", trace_id);
  if (need == "memory") return exists(db, "SELECT 1 FROM memory_sample WHERE trace_id = ? LIMIT 1", trace_id);
  if (need == "device_info")
    return exists(db, "SELECT 1 FROM device WHERE trace_id = ? AND compute_major IS NOT NULL LIMIT 1", trace_id);
  if (need == "nvtx") return exists(db, "SELECT 1 FROM _range WHERE trace_id = ? AND kind = 'nvtx' LIMIT 1", trace_id);
  if (need == "os_calls") return exists(db, "SELECT 1 FROM _os_call WHERE trace_id = ? LIMIT 1", trace_id);
  if (need == "cpu_samples") return exists(db, "SELECT 1 FROM _cpu_sample WHERE trace_id = ? LIMIT 1", trace_id);
  if (need == "sync_events") return exists(db, "SELECT 1 FROM sync_event WHERE trace_id = ? LIMIT 1", trace_id);
  if (need == "multi_device") return summaries_.size() > 1 || (s && s->devices.size() > 1);
  // "job": run once per job (the runner passes the job's first rank's trace), always available.
  if (need == "job") return true;
  if (need == "collectives")
    return exists(db,
                  "SELECT 1 FROM job_rank r JOIN job j USING (job_id) WHERE r.trace_id = ? AND j.ranks_present >= 2 "
                  "AND EXISTS (SELECT 1 FROM collective_instance i WHERE i.job_id = r.job_id) LIMIT 1",
                  trace_id);
  throw Error("internal: unknown need '" + std::string(need) + "'");
}

namespace {

int read_only_authorizer(void*, int action, const char*, const char* arg2, const char*, const char*) {
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    case SQLITE_FUNCTION: {
      // arg2 is the function name. Loading native code is never a read; fts3_tokenizer with one
      // argument returns a function pointer (an address leak), with two it installs one.
      if (!arg2) return SQLITE_OK;
      std::string name(arg2);
      for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      return name == "load_extension" || name == "fts3_tokenizer" ? SQLITE_DENY : SQLITE_OK;
    }
    default:  // writes, DDL, ATTACH/DETACH, PRAGMA, transactions
      return SQLITE_DENY;
  }
}

}  // namespace

ReadOnlyGuard::ReadOnlyGuard(SQLite::Database& db) : db_(db) {
  sqlite3_set_authorizer(db_.getHandle(), read_only_authorizer, nullptr);
}

ReadOnlyGuard::~ReadOnlyGuard() { sqlite3_set_authorizer(db_.getHandle(), nullptr, nullptr); }

}  // namespace proflint
