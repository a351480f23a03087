// engine/analysis/ranking.cpp — see ranking.hpp.
#include "engine/analysis/ranking.hpp"

#include <algorithm>
#include <tuple>

namespace proflint {

void rank_findings(std::vector<Finding>& findings, const std::map<int64_t, int64_t>& wall_ns_by_trace,
                   const SeverityThresholds& thresholds) {
  for (auto& f : findings) {
    int64_t wall = 0;
    if (f.scope.trace_id) {
      auto it = wall_ns_by_trace.find(*f.scope.trace_id);
      if (it != wall_ns_by_trace.end()) wall = it->second;
    } else {
      for (const auto& [id, w] : wall_ns_by_trace) wall = std::max(wall, w);
    }
    // Amdahl: a fix cannot recover more than the whole run.
    f.estimated_savings_ns = std::clamp<int64_t>(f.estimated_savings_ns, 0, wall > 0 ? wall : f.estimated_savings_ns);
    f.savings_share = wall > 0 ? static_cast<double>(f.estimated_savings_ns) / static_cast<double>(wall) : 0.0;
    if (f.diagnostic) {
      f.effective_severity = Severity::info;
    } else if (f.severity) {
      f.effective_severity = *f.severity;
    } else if (f.savings_share >= thresholds.high) {
      f.effective_severity = Severity::high;
    } else if (f.savings_share >= thresholds.medium) {
      f.effective_severity = Severity::medium;
    } else {
      f.effective_severity = Severity::low;
    }
  }
  auto key = [](const Finding& f) {
    return std::make_tuple(f.diagnostic, -f.estimated_savings_ns, -static_cast<int>(f.effective_severity), f.id,
                           f.scope.trace_id.value_or(-1), f.scope.device_id.value_or(-1), f.problem);
  };
  std::stable_sort(findings.begin(), findings.end(), [&](const Finding& a, const Finding& b) { return key(a) < key(b); });
}

}  // namespace proflint
