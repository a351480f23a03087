// engine/analysis/idle_claims.cpp — see idle_claims.hpp.
#include "engine/analysis/idle_claims.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "engine/analysis/dataloader_ranges.hpp"
#include "engine/analysis/detector.hpp"

namespace proflint {

IdleGapKeys::IdleGapKeys(const Facts& facts, int64_t trace_id, int64_t device_id)
    : trace_id_(trace_id), device_id_(device_id) {
  std::vector<Interval> busy;
  for (const char* table : {"_kernel", "_memcpy", "_memset"}) {
    SQLite::Statement q(facts.db(), fmt::format("SELECT start_ns, start_ns + dur_ns FROM {} WHERE trace_id = ? AND "
                                                "coalesce(device_id, 0) = ?",
                                                table));
    q.bind(1, trace_id);
    q.bind(2, device_id);
    while (q.executeStep()) busy.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64()});
  }
  busy_ = union_intervals(std::move(busy));
  for (const auto& f : dataloader_union(facts, trace_id)) cuts_.insert(cuts_.end(), {f.start, f.end});
}

IdleGapKeys::IdleGapKeys(int64_t trace_id, int64_t device_id, std::vector<Interval> busy,
                         const std::vector<Interval>& fetches)
    : trace_id_(trace_id), device_id_(device_id), busy_(std::move(busy)) {
  for (const auto& f : fetches) cuts_.insert(cuts_.end(), {f.start, f.end});
}

std::map<std::string, int64_t> IdleGapKeys::idle_by_gap(const std::vector<Interval>& pieces) const {
  std::map<std::string, int64_t> out;
  for (const Interval& p : union_intervals(pieces)) {
    // Walk the gaps the piece crosses: the gap before busy_[i] is [busy_[i-1].end, busy_[i].start).
    auto i = static_cast<size_t>(std::lower_bound(busy_.begin(), busy_.end(), p.start,
                                                  [](const Interval& b, int64_t t) { return b.end <= t; }) -
                                 busy_.begin());
    int64_t t = p.start;
    while (t < p.end) {
      if (i < busy_.size() && busy_[i].start <= t) {  // inside busy time: skip it
        t = std::max(t, busy_[i].end);
        ++i;
        continue;
      }
      int64_t gap_end = i < busy_.size() ? busy_[i].start : INT64_MAX;
      auto cut = std::upper_bound(cuts_.begin(), cuts_.end(), t);  // the next fetch boundary
      int64_t piece_end = cut != cuts_.end() ? std::min(gap_end, *cut) : gap_end;
      int64_t e = std::min(p.end, piece_end);
      std::string key = piece_end != INT64_MAX ? fmt::format("gpu-idle:t{}:d{}:{}", trace_id_, device_id_, piece_end)
                                               : fmt::format("gpu-idle:t{}:d{}:end", trace_id_, device_id_);
      out[key] += e - t;
      t = e;
    }
  }
  return out;
}

void add_idle_claims(std::map<std::string, int64_t>& claims, const std::map<std::string, int64_t>& by_gap,
                     int64_t estimate) {
  if (by_gap.empty() || estimate <= 0) return;
  std::vector<int64_t> weights;
  int64_t total = 0;
  for (const auto& [key, ns] : by_gap) {
    weights.push_back(ns);
    total += ns;
  }
  // Never claim more of a gap than it is idle: an estimate above the idle time it came from
  // claims the idle time only.
  auto parts = split_in_proportion(std::min(estimate, total), weights);
  size_t k = 0;
  for (const auto& [key, ns] : by_gap) claims[key] += parts[k++];
}

}  // namespace proflint
