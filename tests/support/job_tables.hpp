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
// collective of every rank (the fixtures' ranks run the same collective sequence): GPU
// communication kernels, or with `host` the gloo:all_reduce ops of CPU-only ranks. Rank = the
// trace's distributed rank, else the order the files were given. Each rank is shifted by
// `offsets[rank]` (add to its timestamps to get job time); without offsets they are estimated the
// simple way (median over instances of rank 0's end minus the rank's end).
inline void fill_job_tables(Store& store, std::vector<int64_t> offsets = {}, bool host = false) {
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
  struct K { std::optional<int64_t> kernel; int64_t start, end; std::optional<int64_t> iteration; };
  std::vector<std::vector<K>> per_rank;
  std::vector<int64_t> trace_of;
  std::vector<std::optional<int64_t>> device_of;
  {
    SQLite::Statement t(db, "SELECT trace_id FROM trace ORDER BY coalesce(rank, trace_id)");
    while (t.executeStep()) trace_of.push_back(t.getColumn(0).getInt64());
  }
  const int n = static_cast<int>(trace_of.size());
  for (int r = 0; r < n; ++r) {
    SQLite::Statement k(db, host ? "SELECT NULL, r.start_ns, r.end_ns, (SELECT iteration FROM iteration i WHERE i.trace_id = r.trace_id AND "
                                   "i.start_ns <= r.start_ns AND r.start_ns < i.end_ns), NULL FROM range r WHERE r.trace_id = ? AND "
                                   "r.name = 'gloo:all_reduce' ORDER BY r.start_ns"
                                 : "SELECT id, start_ns, end_ns, iteration, device_id FROM kernel WHERE trace_id = ? AND category = "
                                   "'communication' ORDER BY start_ns");
    k.bind(1, trace_of[r]);
    per_rank.emplace_back();
    device_of.emplace_back();
    while (k.executeStep()) {
      K x;
      if (!k.getColumn(0).isNull()) x.kernel = k.getColumn(0).getInt64();
      x.start = k.getColumn(1).getInt64();
      x.end = k.getColumn(2).getInt64();
      if (!k.getColumn(3).isNull()) x.iteration = k.getColumn(3).getInt64();
      if (!k.getColumn(4).isNull()) device_of[r] = k.getColumn(4).getInt64();
      per_rank[r].push_back(x);
    }
  }
  ASSERT_GE(n, 2);
  const size_t count = per_rank[0].size();
  for (const auto& v : per_rank) ASSERT_EQ(v.size(), count);
  if (offsets.empty()) {
    for (int r = 0; r < n; ++r) {
      std::vector<int64_t> d;
      for (size_t i = 0; i < count; ++i) d.push_back(per_rank[0][i].end - per_rank[r][i].end);
      std::sort(d.begin(), d.end());
      offsets.push_back(d[d.size() / 2]);
    }
  }
  db.exec(fmt::format("INSERT INTO job VALUES (1, 'given_together', {0}, {0}, 1, 0, NULL)", n));
  for (int r = 0; r < n; ++r) {
    db.exec(fmt::format("INSERT INTO job_rank VALUES (1, {}, {}, NULL, {}, {}, 0)", r, trace_of[r],
                        device_of[r] ? std::to_string(*device_of[r]) : std::string("NULL"), offsets[r]));
    for (auto& k : per_rank[r]) k.start += offsets[r], k.end += offsets[r];
  }
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
                          k.kernel ? std::to_string(*k.kernel) : std::string("NULL"), k.start, k.end, wait,
                          k.end - k.start - wait, k.iteration ? std::to_string(*k.iteration) : std::string("NULL")));
    }
  }
}

// The same with the generated fixtures' true offsets (truth.json's clock_offset_ns).
inline void fill_job_tables(Store& store, const nlohmann::json& truth) {
  fill_job_tables(store, truth["clock_offset_ns"].get<std::vector<int64_t>>());
}

}  // namespace proflint::testing
