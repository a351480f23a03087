// engine/analysis/job_summary.cpp — see job_summary.hpp; formulas in docs/multi-rank.md.
#include "engine/analysis/job_summary.hpp"

#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <map>
#include <set>

namespace proflint {

namespace {

// One rank's time in one step (or the whole window), from the breakdown of its device.
struct RankTime {
  int64_t useful = 0;  // compute kernels; CPU-only ranks: host work outside collectives
  int64_t comm = 0;    // exposed communication + copies (GPU); collective time (CPU-only)
  int64_t comm_collective = 0;  // the part of comm that is collectives (split into wait/transfer)
  int64_t other = 0;   // host-bound, data loading, idle
  int64_t total() const { return useful + comm + other; }
};

struct WaitTransfer {
  int64_t wait = 0, transfer = 0;
};

EfficiencyRow efficiency(const std::vector<int64_t>& ranks, const std::vector<RankTime>& times,
                         const std::vector<WaitTransfer>& waits) {
  EfficiencyRow e;
  int64_t elapsed = 0, max_useful = -1, sum_useful = 0;
  size_t star = 0;
  for (size_t k = 0; k < times.size(); ++k) {
    elapsed = std::max(elapsed, times[k].total());
    sum_useful += times[k].useful;
    if (times[k].useful > max_useful) {
      max_useful = times[k].useful;
      star = k;
    }
  }
  e.elapsed_ns = elapsed;
  e.max_useful_ns = std::max<int64_t>(0, max_useful);
  e.mean_useful_ns = times.empty() ? 0 : sum_useful / static_cast<int64_t>(times.size());
  e.most_loaded_rank = ranks.empty() ? 0 : ranks[star];
  if (elapsed <= 0 || times.empty()) return e;
  double mean = static_cast<double>(sum_useful) / static_cast<double>(times.size());
  double max = static_cast<double>(e.max_useful_ns);
  double t = static_cast<double>(elapsed);
  double k_star = static_cast<double>(times[star].comm);
  e.load_balance = max > 0 ? mean / max : 1.0;
  e.communication = (t - k_star) / t;
  e.orchestration = t - k_star > 0 ? max / (t - k_star) : 1.0;
  e.parallel = mean / t;
  const WaitTransfer& w = waits[star];
  double collective = static_cast<double>(times[star].comm_collective);
  double wait_part = w.wait + w.transfer > 0 ? collective * static_cast<double>(w.wait) / static_cast<double>(w.wait + w.transfer) : 0.0;
  e.wait_share = wait_part / t;
  e.transfer_share = (k_star - wait_part) / t;
  double mean_wait = 0;
  for (size_t k = 0; k < times.size(); ++k) {
    double c = static_cast<double>(times[k].comm_collective);
    const WaitTransfer& wk = waits[k];
    if (wk.wait + wk.transfer > 0) mean_wait += c * static_cast<double>(wk.wait) / static_cast<double>(wk.wait + wk.transfer);
  }
  e.mean_wait_share = mean_wait / static_cast<double>(times.size()) / t;
  return e;
}

// Breakdown of one rank's device, by iteration (-1 = whole window), as RankTime.
std::map<int64_t, RankTime> rank_times(SQLite::Database& db, const JobRankSummary& r,
                                       const std::map<int64_t, WaitTransfer>& collective_by_iteration) {
  std::map<int64_t, std::map<std::string, int64_t>> cats;
  SQLite::Statement q(db, "SELECT iteration, category, time_ns FROM breakdown WHERE trace_id = ? AND device_id = ?");
  q.bind(1, r.trace_id);
  q.bind(2, r.device_id.value_or(-1));
  while (q.executeStep()) cats[q.getColumn(0).getInt64()][q.getColumn(1).getString()] += q.getColumn(2).getInt64();
  std::map<int64_t, RankTime> out;
  for (auto& [iteration, c] : cats) {
    RankTime t;
    if (r.device_id) {
      t.useful = c["kernel_tc"] + c["kernel_other"];
      t.comm_collective = c["communication"];
      t.comm = c["communication"] + c["memcpy"] + c["memset"];
      t.other = c["runtime"] + c["dataloader"] + c["cpu"] + c["idle"];
    } else {
      // No GPU: the collectives are host ops (gloo) inside the 'cpu' time.
      int64_t host = c["cpu"] + c["runtime"];
      int64_t coll = 0;
      if (iteration >= 0) {
        auto it = collective_by_iteration.find(iteration);
        if (it != collective_by_iteration.end()) coll = it->second.wait + it->second.transfer;
      } else {
        for (const auto& [i, wt] : collective_by_iteration) coll += wt.wait + wt.transfer;
      }
      coll = std::min(coll, host);
      t.useful = host - coll;
      t.comm = t.comm_collective = coll;
      t.other = c["dataloader"] + c["idle"] + c["kernel_tc"] + c["kernel_other"] + c["communication"] + c["memcpy"] + c["memset"];
    }
    out.emplace(iteration, t);
  }
  return out;
}

void fill_efficiency(SQLite::Database& db, JobSummary& job) {
  size_t n = job.ranks.size();
  // Wait and transfer per rank and iteration ordinal.
  std::vector<std::map<int64_t, WaitTransfer>> waits(n);
  std::map<int64_t, size_t> index;
  for (size_t k = 0; k < n; ++k) index[job.ranks[k].rank] = k;
  {
    SQLite::Statement q(db, "SELECT rank, COALESCE(iteration, -1), SUM(wait_ns), SUM(transfer_ns) FROM collective_participation "
                            "WHERE job_id = ? GROUP BY rank, COALESCE(iteration, -1)");
    q.bind(1, job.job_id);
    while (q.executeStep()) {
      auto it = index.find(q.getColumn(0).getInt64());
      if (it == index.end()) continue;
      waits[it->second][q.getColumn(1).getInt64()] = {q.getColumn(2).getInt64(), q.getColumn(3).getInt64()};
    }
  }
  std::vector<std::map<int64_t, RankTime>> times(n);
  for (size_t k = 0; k < n; ++k) times[k] = rank_times(db, job.ranks[k], waits[k]);
  // Steps common to all ranks: by step number when every rank numbers its steps, else by ordinal.
  std::vector<std::map<int64_t, int64_t>> step_to_iteration(n);  // step key -> iteration ordinal
  bool numbered = true;
  for (size_t k = 0; k < n; ++k) {
    SQLite::Statement q(db, "SELECT iteration, number FROM iteration WHERE trace_id = ? ORDER BY iteration");
    q.bind(1, job.ranks[k].trace_id);
    while (q.executeStep()) {
      if (q.getColumn(1).isNull()) numbered = false;
      step_to_iteration[k][q.getColumn(1).isNull() ? -1 : q.getColumn(1).getInt64()] = q.getColumn(0).getInt64();
    }
  }
  if (!numbered) {
    for (size_t k = 0; k < n; ++k) {
      std::map<int64_t, int64_t> by_ordinal;
      for (const auto& [step, it] : step_to_iteration[k]) by_ordinal[it] = it;
      step_to_iteration[k] = by_ordinal;
    }
  }
  std::set<int64_t> common;
  if (n > 0)
    for (const auto& [step, it] : step_to_iteration[0]) {
      bool everywhere = true;
      for (size_t k = 0; k < n && everywhere; ++k)
        everywhere = step_to_iteration[k].count(step) && times[k].count(step_to_iteration[k][step]);
      if (everywhere) common.insert(step);
    }
  std::vector<int64_t> rank_ids;
  for (const auto& r : job.ranks) rank_ids.push_back(r.rank);
  std::vector<RankTime> job_times(n);
  std::vector<WaitTransfer> job_waits(n);
  int64_t job_elapsed = 0;
  for (int64_t step : common) {
    std::vector<RankTime> st(n);
    std::vector<WaitTransfer> sw(n);
    int64_t elapsed = 0;
    for (size_t k = 0; k < n; ++k) {
      int64_t it = step_to_iteration[k][step];
      st[k] = times[k][it];
      auto w = waits[k].find(it);
      if (w != waits[k].end()) sw[k] = w->second;
      elapsed = std::max(elapsed, st[k].total());
    }
    for (size_t k = 0; k < n; ++k) {
      st[k].other += elapsed - st[k].total();  // a shorter step waits for the slowest rank's
      job_times[k].useful += st[k].useful;
      job_times[k].comm += st[k].comm;
      job_times[k].comm_collective += st[k].comm_collective;
      job_times[k].other += st[k].other;
      job_waits[k].wait += sw[k].wait;
      job_waits[k].transfer += sw[k].transfer;
    }
    job_elapsed += elapsed;
    EfficiencyRow row = efficiency(rank_ids, st, sw);
    row.step = step;
    job.step_efficiency.push_back(row);
  }
  if (common.empty()) {
    // No common steps: the whole capture window of each rank.
    bool all = true;
    for (size_t k = 0; k < n; ++k) {
      auto it = times[k].find(-1);
      if (it == times[k].end()) {
        all = false;
        break;
      }
      job_times[k] = it->second;
      for (const auto& [i, w] : waits[k]) {
        job_waits[k].wait += w.wait;
        job_waits[k].transfer += w.transfer;
      }
      job_elapsed = std::max(job_elapsed, job_times[k].total());
    }
    if (!all) return;
    for (auto& t : job_times) t.other += job_elapsed - t.total();
  }
  job.job_efficiency = efficiency(rank_ids, job_times, job_waits);
}

}  // namespace

std::vector<JobSummary> summarize_jobs(Store& store) {
  auto& db = store.db();
  std::vector<JobSummary> out;
  {
    SQLite::Statement q(db, "SELECT job_id, source, world_size, ranks_present, aligned, residual_ns, COALESCE(alignment_note, ''), "
                            "(SELECT COUNT(*) FROM collective_instance i WHERE i.job_id = j.job_id) "
                            "FROM job j WHERE ranks_present >= 2 ORDER BY job_id");
    while (q.executeStep()) {
      JobSummary j;
      j.job_id = q.getColumn(0).getInt64();
      j.source = q.getColumn(1).getString();
      if (!q.getColumn(2).isNull()) j.world_size = q.getColumn(2).getInt64();
      j.ranks_present = q.getColumn(3).getInt64();
      j.aligned = q.getColumn(4).getInt64() != 0;
      if (!q.getColumn(5).isNull()) j.residual_ns = q.getColumn(5).getInt64();
      j.alignment_note = q.getColumn(6).getString();
      j.instances = q.getColumn(7).getInt64();
      out.push_back(std::move(j));
    }
  }
  for (auto& j : out) {
    SQLite::Statement q(db, "SELECT r.rank, r.trace_id, t.path, r.pid, r.device_id, r.clock_offset_ns, r.offset_residual_ns "
                            "FROM job_rank r JOIN trace t USING (trace_id) WHERE r.job_id = ? ORDER BY r.rank");
    q.bind(1, j.job_id);
    while (q.executeStep()) {
      JobRankSummary r;
      r.rank = q.getColumn(0).getInt64();
      r.trace_id = q.getColumn(1).getInt64();
      r.path = q.getColumn(2).getString();
      if (!q.getColumn(3).isNull()) r.pid = q.getColumn(3).getInt64();
      if (!q.getColumn(4).isNull()) r.device_id = q.getColumn(4).getInt64();
      r.clock_offset_ns = q.getColumn(5).getInt64();
      if (!q.getColumn(6).isNull()) r.offset_residual_ns = q.getColumn(6).getInt64();
      j.ranks.push_back(std::move(r));
    }
    SQLite::Statement c(db, "SELECT rank, instances, total_wait_ns, mean_wait_ns, arrived_last, arrived_first, total_collective_ns, "
                            "total_transfer_ns FROM collective_rank_summary WHERE job_id = ? "
                            "ORDER BY arrived_last DESC, total_wait_ns ASC, rank");
    c.bind(1, j.job_id);
    while (c.executeStep()) {
      RankCollectiveRow r;
      r.rank = c.getColumn(0).getInt64();
      r.instances = c.getColumn(1).getInt64();
      r.total_wait_ns = c.getColumn(2).getInt64();
      r.mean_wait_ns = c.getColumn(3).getInt64();
      r.arrived_last = c.getColumn(4).getInt64();
      r.arrived_first = c.getColumn(5).getInt64();
      r.total_collective_ns = c.getColumn(6).getInt64();
      r.total_transfer_ns = c.getColumn(7).getInt64();
      if (r.instances > 0) {
        r.arrived_last_share = static_cast<double>(r.arrived_last) / static_cast<double>(r.instances);
        r.arrived_first_share = static_cast<double>(r.arrived_first) / static_cast<double>(r.instances);
      }
      j.collectives.push_back(r);
    }
    if (j.aligned) fill_efficiency(db, j);
  }
  return out;
}

}  // namespace proflint
