// engine/analysis/job_summary.hpp — the job-level figures of `proflint summary` and the job report:
// clock alignment, the per-rank collective table (who waits, who arrives last) and the POP
// efficiencies (load balance, communication, orchestration, parallel). Definitions:
// docs/multi-rank.md. Read from the job tables (schema/0005_jobs.sql) and the breakdown only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/store/store.hpp"

namespace proflint {

struct JobRankSummary {
  int64_t rank = 0, trace_id = 0;
  std::string path;
  std::optional<int64_t> pid, device_id;
  int64_t clock_offset_ns = 0;
  std::optional<int64_t> offset_residual_ns;
};

// One row of the straggler table (view collective_rank_summary), TraceLens style.
struct RankCollectiveRow {
  int64_t rank = 0;
  int64_t instances = 0, total_wait_ns = 0, mean_wait_ns = 0, arrived_last = 0, arrived_first = 0;
  int64_t total_collective_ns = 0, total_transfer_ns = 0;
  double arrived_last_share = 0, arrived_first_share = 0;  // of the rank's instances
};

// POP efficiencies over one step (step set) or the whole job (step unset). Each in [0, 1];
// parallel = load_balance * communication * orchestration.
struct EfficiencyRow {
  std::optional<int64_t> step;  // step number (ProfilerStep#N) or iteration ordinal; unset = job
  int64_t elapsed_ns = 0;       // the step's length on the slowest rank (job: summed over steps)
  int64_t max_useful_ns = 0, mean_useful_ns = 0;
  int64_t most_loaded_rank = 0;
  double load_balance = 1, communication = 1, orchestration = 1, parallel = 1;
  double wait_share = 0, transfer_share = 0;  // the most loaded rank's lost communication time, split, as shares of elapsed
  double mean_wait_share = 0;                 // waiting for peers averaged over ranks, share of elapsed
};

struct JobSummary {
  int64_t job_id = 0;
  std::string source;
  std::optional<int64_t> world_size;
  int64_t ranks_present = 0;
  bool aligned = false;
  std::optional<int64_t> residual_ns;
  std::string alignment_note;
  int64_t instances = 0;
  std::vector<JobRankSummary> ranks;
  std::vector<RankCollectiveRow> collectives;  // sorted: most often last first (the straggler on top)
  std::optional<EfficiencyRow> job_efficiency;
  std::vector<EfficiencyRow> step_efficiency;  // per common step, in step order
};

// Jobs with at least two ranks, in job_id order.
std::vector<JobSummary> summarize_jobs(Store& store);

}  // namespace proflint
