// engine/analysis/ranking.cpp — see ranking.hpp.
#include "engine/analysis/ranking.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace proflint {

namespace {

auto rank_key(const Finding& f) {
  return std::make_tuple(f.diagnostic, -f.estimated_savings_ns, -static_cast<int>(f.effective_severity), f.id,
                         f.scope.trace_id.value_or(-1), f.scope.device_id.value_or(-1), f.problem);
}

Severity severity_of(const Finding& f, const SeverityThresholds& thresholds) {
  if (f.diagnostic) return Severity::info;
  if (f.severity) return *f.severity;
  if (f.savings_share >= thresholds.high) return Severity::high;
  if (f.savings_share >= thresholds.medium) return Severity::medium;
  return Severity::low;
}

}  // namespace

void rank_findings(std::vector<Finding>& findings, const std::map<int64_t, int64_t>& wall_ns_by_trace,
                   const SeverityThresholds& thresholds, std::vector<BelowThreshold>* below) {
  std::vector<int64_t> walls(findings.size(), 0);
  for (size_t i = 0; i < findings.size(); ++i) {
    Finding& f = findings[i];
    int64_t wall = 0;
    if (f.scope.trace_id) {
      auto it = wall_ns_by_trace.find(*f.scope.trace_id);
      if (it != wall_ns_by_trace.end()) wall = it->second;
    } else {
      for (const auto& [id, w] : wall_ns_by_trace) wall = std::max(wall, w);
    }
    walls[i] = wall;
    // Amdahl: a fix cannot recover more than the whole run.
    f.estimated_savings_ns = std::clamp<int64_t>(f.estimated_savings_ns, 0, wall > 0 ? wall : f.estimated_savings_ns);
    f.gross_savings_ns = f.estimated_savings_ns;
    f.overlaps.clear();
    f.savings_share = wall > 0 ? static_cast<double>(f.estimated_savings_ns) / static_cast<double>(wall) : 0.0;
    f.effective_severity = severity_of(f, thresholds);
  }
  // Visit from the largest gross estimate down, so the finding that explains most keeps the saving;
  // generic idle-time findings after every finding that names a cause (Finding::generic).
  std::vector<size_t> order(findings.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (findings[a].generic != findings[b].generic) return !findings[a].generic;
    return rank_key(findings[a]) < rank_key(findings[b]);
  });
  struct Owner {
    int64_t ns = 0;    // the largest claim on the key so far
    size_t finding = 0;  // the first (largest) finding that claimed it
  };
  std::map<std::string, Owner> claimed;
  std::vector<std::map<size_t, int64_t>> shared(findings.size());  // finding -> (owner -> ns subtracted)
  std::vector<bool> held_back(findings.size(), false);
  for (size_t i : order) {
    Finding& f = findings[i];
    if (f.diagnostic) continue;
    int64_t deduct = 0;
    for (const auto& [key, ns] : f.claims) {
      auto it = claimed.find(key);
      if (it == claimed.end()) continue;
      int64_t take = std::min(std::max<int64_t>(ns, 0), it->second.ns);
      if (take <= 0) continue;
      deduct += take;
      shared[i][it->second.finding] += take;
    }
    f.estimated_savings_ns = std::max<int64_t>(0, f.estimated_savings_ns - deduct);
    const double wall = static_cast<double>(walls[i]);
    f.savings_share = wall > 0 ? static_cast<double>(f.estimated_savings_ns) / wall : 0.0;
    f.effective_severity = severity_of(f, thresholds);
    bool under_ns = f.min_savings_ns > 0 && f.estimated_savings_ns < f.min_savings_ns;
    bool under_share = f.min_wall_share > 0 && wall > 0 && f.savings_share < f.min_wall_share;
    if (under_ns || under_share) {
      held_back[i] = true;
      if (below) {
        BelowThreshold b;
        b.id = f.id;
        b.measured = deduct > 0 ? "estimated saving, after removing what higher-ranked findings already count"
                                : "estimated saving";
        if (under_ns) {
          b.value = static_cast<double>(f.estimated_savings_ns);
          b.threshold = static_cast<double>(f.min_savings_ns);
          b.unit = "ns";
        } else {
          b.value = f.savings_share;
          b.threshold = f.min_wall_share;
          b.unit = "share of wall time";
        }
        b.scope = f.scope;
        b.source = f.source;
        b.detail = f.problem;
        below->push_back(std::move(b));
      }
      continue;  // its claims count for nobody: it is not listed
    }
    for (const auto& [key, ns] : f.claims) {
      auto [it, fresh] = claimed.try_emplace(key, Owner{std::max<int64_t>(ns, 0), i});
      if (!fresh) it->second.ns = std::max(it->second.ns, ns);
    }
  }
  std::vector<size_t> kept;
  for (size_t i = 0; i < findings.size(); ++i)
    if (!held_back[i]) kept.push_back(i);
  std::stable_sort(kept.begin(), kept.end(), [&](size_t a, size_t b) { return rank_key(findings[a]) < rank_key(findings[b]); });
  std::map<size_t, size_t> rank_of;  // index in `findings` -> 1-based rank among problems
  size_t rank = 0;
  for (size_t i : kept)
    if (!findings[i].diagnostic) rank_of[i] = ++rank;
  for (size_t i : kept)
    for (const auto& [owner, ns] : shared[i])
      findings[i].overlaps.push_back({findings[owner].id, rank_of.count(owner) ? rank_of[owner] : 0, ns});
  std::vector<Finding> ranked;
  ranked.reserve(kept.size());
  for (size_t i : kept) ranked.push_back(std::move(findings[i]));
  findings = std::move(ranked);
}

}  // namespace proflint
