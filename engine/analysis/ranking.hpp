// engine/analysis/ranking.hpp — ordering findings by how much time fixing each would save.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine/analysis/finding.hpp"

namespace proflint {

// Share thresholds turning an estimated saving into a severity when the detector does not fix one.
struct SeverityThresholds {
  double high = 0.10;    // >= 10% of wall time
  double medium = 0.03;  // >= 3%
};

// Which traces (and, for an nsys export of several processes, which GPUs of a trace) ran together
// as one job, and what to call each in text. Built by the runner (job_of_traces in runner.cpp).
struct JobMap {
  std::map<int64_t, int64_t> job_of_trace;  // trace_id -> job id; a trace not listed is a job of its own
  // How to name a trace among the ranks of its job ("rank 1", or its path): used only when the
  // job has several traces.
  std::map<int64_t, std::string> trace_label;
  // Rank of one GPU of a trace, where the job tables give each GPU (process) of one export a rank.
  std::map<std::pair<int64_t, int64_t>, int64_t> rank_of_device;
};

// Fills savings_share (against the wall time of the finding's trace) and effective_severity, then
// sorts: problems first by estimated savings, then severity, then id, then scope; diagnostics
// after them. Stable and deterministic.
//
// Overlaps: problems are visited from the largest estimate down (generic idle-time findings, see
// Finding::generic, after all others); a claim (Finding::claims) on a
// key that a finding visited earlier already claims is subtracted from the later finding's
// estimate (up to the earlier claim), and the later finding lists the earlier one in `overlaps`.
// So the sum of the ranked estimates counts every claimed piece of evidence once.
//
// Thresholds: a problem whose remaining estimate is under its min_savings_ns or min_wall_share is
// removed from `findings` and appended to `below` (when given) with its estimate; its claims then
// count for nobody.
//
// One finding per job problem (a separate step, after overlaps and thresholds): findings with the
// same id, source, title and the same problem and recommendation once their numbers are masked
// (so the same kernels, ops or cause are named), on two or more different ranks or GPUs of one
// job (`jobs`; without it, every trace is a job of its own, so only the GPUs of one trace merge),
// become ONE finding whose `instances` keep the originals. Its estimate is the job-level saving:
// with T_i the steady wall time of instance i's trace and s_i its estimate after overlaps,
//   job saving = max_i T_i - max_i (T_i - s_i)
// (the step is as slow as its slowest rank: what the fix removes from the slowest rank's critical
// path, never the sum over ranks; with equal T_i it is the smallest s_i). Its share is of max_i T_i.
// The merged finding is held back like any other when it falls under a threshold.
void rank_findings(std::vector<Finding>& findings, const std::map<int64_t, int64_t>& wall_ns_by_trace,
                   const SeverityThresholds& thresholds = {}, std::vector<BelowThreshold>* below = nullptr,
                   const JobMap* jobs = nullptr);

// The text of a problem or recommendation with its standalone numbers replaced by '#' ("GPU 0
// spent 940 ms" -> "GPU # spent # ms"); numbers inside names ("sm80_xmma", "aten::conv2d") stay.
// Two findings are the same job problem only when these agree.
std::string mask_numbers(const std::string& text);

}  // namespace proflint
