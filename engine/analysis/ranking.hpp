// engine/analysis/ranking.hpp — ordering findings by how much time fixing each would save.
#pragma once

#include <map>
#include <vector>

#include "engine/analysis/finding.hpp"

namespace proflint {

// Share thresholds turning an estimated saving into a severity when the detector does not fix one.
struct SeverityThresholds {
  double high = 0.10;    // >= 10% of wall time
  double medium = 0.03;  // >= 3%
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
void rank_findings(std::vector<Finding>& findings, const std::map<int64_t, int64_t>& wall_ns_by_trace,
                   const SeverityThresholds& thresholds = {}, std::vector<BelowThreshold>* below = nullptr);

}  // namespace proflint
