// engine/analysis/runner.hpp — running analysis tasks over the derived store, then ranking.
//
// The generic half of analysis: a task is one check (a built-in detector, a Lua rule) on one
// trace, given as a function; tasks run on several threads, each on its own read-only connection,
// and their findings are gathered in task order, suppressed by configuration and ranked. Which
// tasks exist (the detector list, the Lua rules) is decided by engine/pipeline/analyze.cpp, so
// this stage knows neither the detectors nor Lua.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "engine/analysis/finding.hpp"
#include "engine/analysis/ranking.hpp"
#include "engine/analysis/summary.hpp"
#include "engine/config/config.hpp"
#include "engine/store/store.hpp"

namespace proflint {

class Facts;

struct AnalysisResult {
  std::vector<TraceSummary> summaries;
  std::vector<Finding> findings;   // ranked: problems first, then diagnostics
  // Checks that ran and stayed under a threshold (a detector's own, or a finding held back by
  // ranking's min_savings_ns / min_wall_share), sorted by id, trace and device.
  std::vector<BelowThreshold> below_threshold;
  std::vector<std::string> notes;  // e.g. "gpu-imbalance skipped on trace 1: needs multi_device"
};

// One detector or rule on one trace. `run` reports into the sink; run_tasks keeps what it
// reported in `findings` and `checks`. A task with an empty label runs nothing and only carries
// the findings set beforehand (e.g. a rule that failed to load).
struct AnalysisTask {
  std::string label;  // "detector:ID" or "rule:ID" (PROFLINT_TIMINGS); empty: nothing to run
  int64_t trace_id = 0;
  std::function<void(const Facts& facts, int64_t trace_id, FindingSink& sink)> run;
  std::vector<Finding> findings;
  std::vector<BelowThreshold> checks;
};

// PROFLINT_TIMINGS=1 prints the time of each detector and rule on stderr ("timing ID MS ms"), so
// bench/run_bench.py can tell where analysis time goes. Off by default: output stays deterministic.
class StageClock {
 public:
  StageClock();
  // "timing WHAT W ms cpu C ms": wall time and this thread's CPU time since construction (on a
  // loaded machine the CPU time is the figure to compare).
  void report(const std::string& what) const;

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double cpu_start_ms_ = 0;
};

// Runs the tasks on up to available_jobs(requested_jobs) threads, each with its own read-only
// connection to the store; findings stay in their task, so their order does not depend on which
// thread finished first. Rethrows the first error no task turned into a finding.
void run_tasks(Store& store, const Facts& facts, std::vector<AnalysisTask>& tasks, unsigned requested_jobs);

// Which traces form one job, for ranking's "one finding per job problem".
JobMap job_of_traces(Store& store, const std::vector<TraceSummary>& summaries);

// Gathers the tasks' findings and checks in task order into `result`, drops the suppressed ones
// (with a note each), and ranks the rest against the steady-state wall time of
// result.summaries (already filled).
void finish_analysis(Store& store, std::vector<AnalysisTask>& tasks, const std::vector<Suppression>& suppressions,
                     AnalysisResult& result);

}  // namespace proflint
