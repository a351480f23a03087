// tests/support/job_tables.hpp — fills the job tables of schema 0005 (job, job_rank,
// collective_instance, collective_participation) in a test store from known clock offsets, so
// job-level detectors can be tested apart from proflint's own alignment.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/store/store.hpp"

namespace proflint::testing {

// The job tables of schema 0005 as the contract defines them, filled by matching the i-th
// communication kernel of every rank (the fixtures' ranks run the same collective sequence) and
// shifting each rank by its true clock offset.
inline void fill_job_tables(Store& store, const nlohmann::json& truth) {
  auto& db = store.db();
  db.exec(
      "CREATE TABLE IF NOT EXISTS job (job_id INTEGER PRIMARY KEY, source TEXT NOT NULL, world_size INTEGER, ranks_present INTEGER NOT NULL,"
      " aligned INTEGER NOT NULL, residual_ns INTEGER, alignment_note TEXT);"
      "CREATE TABLE IF NOT EXISTS job_rank (job_id INTEGER NOT NULL, rank INTEGER NOT NULL, trace_id INTEGER NOT NULL, pid INTEGER,"
      " device_id INTEGER, clock_offset_ns INTEGER NOT NULL DEFAULT 0, offset_residual_ns INTEGER, PRIMARY KEY (job_id, rank));"
      "CREATE TABLE IF NOT EXISTS collective_instance (job_id INTEGER NOT NULL, instance_id INTEGER NOT NULL, process_group TEXT, seq INTEGER,"
      " type TEXT NOT NULL, bytes INTEGER, ranks INTEGER NOT NULL, first_rank INTEGER NOT NULL, last_rank INTEGER NOT NULL,"
      " last_arrival_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, PRIMARY KEY (job_id, instance_id));"
      "CREATE TABLE IF NOT EXISTS collective_participation (job_id INTEGER NOT NULL, instance_id INTEGER NOT NULL, rank INTEGER NOT NULL,"
      " trace_id INTEGER NOT NULL, op_id INTEGER, kernel_id INTEGER, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,"
      " wait_ns INTEGER NOT NULL, transfer_ns INTEGER NOT NULL, iteration INTEGER, PRIMARY KEY (job_id, instance_id, rank));"
      "DELETE FROM job; DELETE FROM job_rank; DELETE FROM collective_instance; DELETE FROM collective_participation;");
  const int n = truth["ranks"].get<int>();
  db.exec(fmt::format("INSERT INTO job VALUES (1, 'distributed_info', {0}, {0}, 1, 0, NULL)", n));
  struct K { int64_t id, start, end; std::optional<int64_t> iteration; };
  std::vector<std::vector<K>> per_rank(n);
  std::vector<int64_t> trace_of(n);
  SQLite::Statement t(db, "SELECT trace_id, rank FROM trace");
  while (t.executeStep()) {
    int64_t tid = t.getColumn(0).getInt64();
    int r = t.getColumn(1).getInt();
    int64_t off = truth["clock_offset_ns"][r].get<int64_t>();
    trace_of[r] = tid;
    SQLite::Statement k(db, "SELECT id, start_ns, end_ns, iteration, device_id FROM kernel WHERE trace_id = ? AND category = 'communication' ORDER BY start_ns");
    k.bind(1, tid);
    int64_t dev = -1;
    while (k.executeStep()) {
      std::optional<int64_t> it;
      if (!k.getColumn(3).isNull()) it = k.getColumn(3).getInt64();
      per_rank[r].push_back({k.getColumn(0).getInt64(), k.getColumn(1).getInt64() + off, k.getColumn(2).getInt64() + off, it});
      dev = k.getColumn(4).getInt64();
    }
    db.exec(fmt::format("INSERT INTO job_rank VALUES (1, {}, {}, NULL, {}, {}, 0)", r, tid, dev, off));
  }
  const size_t count = per_rank[0].size();
  for (const auto& v : per_rank) ASSERT_EQ(v.size(), count);
  for (size_t i = 0; i < count; ++i) {
    int64_t last = INT64_MIN, first = INT64_MAX;
    int last_rank = 0, first_rank = 0;
    std::vector<int64_t> ends;
    for (int r = 0; r < n; ++r) {
      const K& k = per_rank[r][i];
      if (k.start > last) last = k.start, last_rank = r;
      if (k.start < first) first = k.start, first_rank = r;
      ends.push_back(k.end);
    }
    std::sort(ends.begin(), ends.end());
    db.exec(fmt::format("INSERT INTO collective_instance VALUES (1, {}, '0', {}, 'all_reduce', NULL, {}, {}, {}, {}, {})", i, i, n,
                        first_rank, last_rank, last, ends[ends.size() / 2]));
    for (int r = 0; r < n; ++r) {
      const K& k = per_rank[r][i];
      int64_t wait = std::clamp<int64_t>(last - k.start, 0, k.end - k.start);
      db.exec(fmt::format("INSERT INTO collective_participation VALUES (1, {}, {}, {}, NULL, {}, {}, {}, {}, {}, {})", i, r, trace_of[r],
                          k.id, k.start, k.end, wait, k.end - k.start - wait,
                          k.iteration ? std::to_string(*k.iteration) : std::string("NULL")));
    }
  }
}

}  // namespace proflint::testing
