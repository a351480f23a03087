// engine/analysis/restrict.cpp — see restrict.hpp.
#include "engine/analysis/restrict.hpp"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <climits>
#include <string>
#include <vector>

#include "engine/common/error.hpp"

namespace proflint {

void restrict_to_aggregation_range(Store& store) {
  auto& db = store.db();
  struct Range {
    int64_t trace_id, lo, hi;
  };
  std::vector<Range> ranges;
  {
    SQLite::Statement q(db, "SELECT trace_id, COALESCE(iter_start, " + std::to_string(INT64_MIN) +
                                "), COALESCE(iter_stop, " + std::to_string(INT64_MAX) +
                                ") FROM trace WHERE iter_start IS NOT NULL OR iter_stop IS NOT NULL");
    while (q.executeStep())
      ranges.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64(), q.getColumn(2).getInt64()});
  }
  if (ranges.empty()) return;
  SQLite::Transaction tx(db);
  for (const auto& r : ranges) {
    // Span of the selected iteration windows (host start .. end of the GPU work they launched).
    SQLite::Statement span(db,
                           "SELECT MIN(start_ns), MAX(MAX(end_ns, COALESCE(gpu_end_ns, end_ns))) FROM iteration "
                           "WHERE trace_id = ? AND iteration BETWEEN ? AND ?");
    span.bind(1, r.trace_id);
    span.bind(2, r.lo);
    span.bind(3, r.hi);
    int64_t lo_ns = 0, hi_ns = 0;
    if (span.executeStep() && !span.isColumnNull(0)) {
      lo_ns = span.getColumn(0).getInt64();
      hi_ns = span.getColumn(1).getInt64();
    } else {
      // Analysing nothing would only produce misleading findings (no-iterations, no-gpu-activity).
      SQLite::Statement q(db,
                          "SELECT t.path, (SELECT COUNT(*) FROM iteration i WHERE i.trace_id = t.trace_id) FROM trace "
                          "t WHERE t.trace_id = ?");
      q.bind(1, r.trace_id);
      std::string path = "trace";
      int64_t n = 0;
      if (q.executeStep()) {
        path = q.getColumn(0).getString();
        n = q.getColumn(1).getInt64();
      }
      throw input_error(path, "",
                        n == 0 ? "no iterations were found, so --iter-start/--iter-stop select nothing (try --key-node)"
                               : "--iter-start/--iter-stop select none of its " + std::to_string(n) +
                                     " iterations (0-" + std::to_string(n - 1) + ")");
    }
    for (const char* table : {"_kernel", "_memcpy", "_memset", "_api_call", "sync_event", "_op"}) {
      SQLite::Statement del(db, std::string("DELETE FROM ") + table +
                                    " WHERE trace_id = ? AND (iteration IS NULL OR iteration NOT BETWEEN ? AND ?)");
      del.bind(1, r.trace_id);
      del.bind(2, r.lo);
      del.bind(3, r.hi);
      del.exec();
    }
    {
      // The rank's side of each collective outside its selected iterations (iteration: the rank's
      // own ordinal, as for the other tables).
      SQLite::Statement del(db, "DELETE FROM collective_participation WHERE trace_id = ? AND (iteration IS NULL OR iteration NOT BETWEEN ? AND ?)");
      del.bind(1, r.trace_id);
      del.bind(2, r.lo);
      del.bind(3, r.hi);
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
      q.bind(1, r.trace_id);
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
