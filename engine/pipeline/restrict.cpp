// engine/pipeline/restrict.cpp — see restrict.hpp.
#include "engine/pipeline/restrict.hpp"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <string>
#include <vector>

#include "engine/common/error.hpp"

namespace proflint {

namespace {

// Traces with a recorded range (the others are never cut).
std::vector<int64_t> restricted_traces(SQLite::Database& db) {
  SQLite::Statement q(db, "SELECT trace_id FROM trace WHERE iter_start IS NOT NULL OR iter_stop IS NOT NULL ORDER BY trace_id");
  std::vector<int64_t> out;
  while (q.executeStep()) out.push_back(q.getColumn(0).getInt64());
  return out;
}

// The check of require_selected_iterations over the given restricted traces.
void require_selected(SQLite::Database& db, const std::vector<int64_t>& traces) {
  for (int64_t trace_id : traces) {
    SQLite::Statement q(db,
                        "SELECT t.path, (SELECT COUNT(*) FROM iteration i WHERE i.trace_id = t.trace_id), "
                        "(SELECT COUNT(*) FROM iteration i WHERE i.trace_id = t.trace_id AND i.selected = 1) "
                        "FROM trace t WHERE t.trace_id = ?");
    q.bind(1, trace_id);
    if (!q.executeStep() || q.getColumn(2).getInt64() > 0) continue;
    std::string path = q.getColumn(0).getString();
    int64_t n = q.getColumn(1).getInt64();
    throw input_error(path, "",
                      n == 0 ? "no iterations were found, so --iter-start/--iter-stop select nothing (try --key-node)"
                             : "--iter-start/--iter-stop select none of its " + std::to_string(n) + " iterations (0-" +
                                   std::to_string(n - 1) + ")");
  }
}

}  // namespace

void require_selected_iterations(Store& store) { require_selected(store.db(), restricted_traces(store.db())); }

void restrict_to_selection(Store& store) {
  auto& db = store.db();
  std::vector<int64_t> traces = restricted_traces(db);
  if (traces.empty()) return;
  require_selected(db, traces);
  SQLite::Transaction tx(db);
  for (int64_t trace_id : traces) {
    // The selected ordinals (contiguous: derivation selects a range of them) and the span of their
    // windows, host start to the end of the GPU work they launched.
    SQLite::Statement span(db,
                           "SELECT MIN(iteration), MAX(iteration), MIN(start_ns), "
                           "MAX(MAX(end_ns, COALESCE(gpu_end_ns, end_ns))) FROM iteration "
                           "WHERE trace_id = ? AND selected = 1");
    span.bind(1, trace_id);
    span.executeStep();
    const int64_t lo = span.getColumn(0).getInt64(), hi = span.getColumn(1).getInt64();
    const int64_t lo_ns = span.getColumn(2).getInt64(), hi_ns = span.getColumn(3).getInt64();
    for (const char* table : {"_kernel", "_memcpy", "_memset", "_api_call", "sync_event", "_op"}) {
      SQLite::Statement del(db, std::string("DELETE FROM ") + table +
                                    " WHERE trace_id = ? AND (iteration IS NULL OR iteration NOT BETWEEN ? AND ?)");
      del.bind(1, trace_id);
      del.bind(2, lo);
      del.bind(3, hi);
      del.exec();
    }
    {
      // The rank's side of each collective outside its selected iterations (iteration: the rank's
      // own ordinal, as for the other tables).
      SQLite::Statement del(db, "DELETE FROM collective_participation WHERE trace_id = ? AND (iteration IS NULL OR iteration NOT BETWEEN ? AND ?)");
      del.bind(1, trace_id);
      del.bind(2, lo);
      del.bind(3, hi);
      del.exec();
    }
    for (const char* sql : {"DELETE FROM _range WHERE trace_id = ? AND (start_ns + dur_ns <= ? OR start_ns >= ?)",
                            "DELETE FROM flow WHERE trace_id = ? AND (src_ts_ns < ? OR src_ts_ns >= ?)",
                            "DELETE FROM memory_sample WHERE trace_id = ? AND (ts_ns < ? OR ts_ns >= ?)",
                            "DELETE FROM _counter WHERE trace_id = ? AND (ts_ns < ? OR ts_ns >= ?)",
                            "DELETE FROM _os_call WHERE trace_id = ? AND (start_ns + dur_ns <= ? OR start_ns >= ?)",
                            "DELETE FROM _cpu_frame WHERE sample_id IN (SELECT id FROM _cpu_sample WHERE trace_id = ?1 AND "
                            "(ts_ns < ?2 OR ts_ns >= ?3))",
                            "DELETE FROM _cpu_sample WHERE trace_id = ? AND (ts_ns < ? OR ts_ns >= ?)",
                            "UPDATE trace SET start_ns = ?2, end_ns = ?3 WHERE trace_id = ?1"}) {
      SQLite::Statement q(db, sql);
      q.bind(1, trace_id);
      q.bind(2, lo_ns);
      q.bind(3, hi_ns);
      q.exec();
    }
  }
  // A collective is kept only with all of its participants: one whose rank-side rows fell outside
  // some rank's selection goes entirely, so arrival order and waits are never judged on part of
  // the ranks (rank-straggler, gpu-imbalance and the job summary read these tables).
  db.exec(
      "DELETE FROM collective_instance WHERE ranks > (SELECT COUNT(*) FROM collective_participation p "
      "WHERE p.job_id = collective_instance.job_id AND p.instance_id = collective_instance.instance_id)");
  db.exec(
      "DELETE FROM collective_participation WHERE NOT EXISTS (SELECT 1 FROM collective_instance i "
      "WHERE i.job_id = collective_participation.job_id AND i.instance_id = collective_participation.instance_id)");
  tx.commit();
}

}  // namespace proflint
