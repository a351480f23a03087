// engine/analysis/facts.hpp — the read-only view of the fact store that detectors and Lua rules get.
//
// Detectors know only this: SQL over the documented schema (the same queries a Lua rule can
// run), the headline summaries, and which kinds of facts a trace has ("needs").
#pragma once

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/analysis/summary.hpp"
#include "engine/store/store.hpp"

namespace proflint {

// Names a detector or rule can list in needs(); each is checked per trace.
//   kernels         GPU kernels were recorded
//   gpu_activity    kernels, memcpys or memsets
//   memcpy          memory copies
//   api_calls       CUDA/HIP runtime or driver calls
//   ops             framework ops (CPU ops or emit_nvtx ranges)
//   op_shapes       ops with recorded input shapes (record_shapes=True)
//   op_dtypes       ops with recorded input dtypes
//   iterations      iteration boundaries were found
//   memory          allocator samples (profile_memory=True)
//   device_info     device name and compute capability
//   multi_device    activity on two or more devices, or several rank files
//   nvtx            NVTX ranges
//   sync_events     synchronization records
//   job             run once per job (schema/0005_jobs.sql), on the trace of the job's lowest rank,
//                   instead of once per trace; always available
//   collectives     the trace's job has two or more ranks and collective instances matched across them
const std::vector<std::string_view>& known_needs();

class Facts {
 public:
  Facts(Store& store, std::vector<TraceSummary> summaries);
  // The same facts read through another connection to the store (Store::open_reader), for a
  // detector or rule running on a thread of its own.
  Facts(SQLite::Database& db, std::vector<TraceSummary> summaries);

  SQLite::Database& db() const { return db_; }
  const std::vector<TraceSummary>& summaries() const { return summaries_; }
  const TraceSummary* summary(int64_t trace_id) const;
  // True when the trace has the facts named by `need` (see known_needs()).
  bool has(std::string_view need, int64_t trace_id) const;
  // True when the trace is its job's lowest rank: where a detector that needs "job" runs.
  bool is_job_head(int64_t trace_id) const;

 private:
  SQLite::Database& db_;
  std::vector<TraceSummary> summaries_;
};

// A nullable INTEGER column as detectors keep it: nullopt for NULL.
inline std::optional<int64_t> nullable_int(const SQLite::Column& c) {
  return c.isNull() ? std::nullopt : std::optional<int64_t>(c.getInt64());
}

// While alive, the store's connection refuses every statement that is not a read (writes,
// ATTACH, PRAGMA changes, load_extension): detectors and rules cannot change the facts.
class ReadOnlyGuard {
 public:
  explicit ReadOnlyGuard(SQLite::Database& db);
  ~ReadOnlyGuard();
  ReadOnlyGuard(const ReadOnlyGuard&) = delete;
  ReadOnlyGuard& operator=(const ReadOnlyGuard&) = delete;

 private:
  SQLite::Database& db_;
};

}  // namespace proflint
