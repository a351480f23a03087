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
void rank_findings(std::vector<Finding>& findings, const std::map<int64_t, int64_t>& wall_ns_by_trace,
                   const SeverityThresholds& thresholds = {});

}  // namespace proflint
