// engine/common/intervals.hpp — pure interval math: union (DLProf "flatten"), intersection, priority sweep.
//
// Everything works on half-open [start, end) nanosecond intervals so that touching intervals do
// not overlap and lengths add up exactly. Empty or inverted intervals are ignored everywhere.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace proflint {

struct Interval {
  int64_t start = 0;
  int64_t end = 0;  // exclusive
  int64_t length() const { return end > start ? end - start : 0; }
  friend bool operator==(const Interval&, const Interval&) = default;
};

// Sorted, disjoint union of `intervals` (touching intervals merge).
inline std::vector<Interval> union_intervals(std::vector<Interval> intervals) {
  std::erase_if(intervals, [](const Interval& i) { return i.end <= i.start; });
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start || (a.start == b.start && a.end < b.end); });
  std::vector<Interval> out;
  for (const auto& i : intervals) {
    if (!out.empty() && i.start <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

// Total length covered by a sorted, disjoint list (the output of union_intervals).
inline int64_t total_length(const std::vector<Interval>& disjoint) {
  int64_t total = 0;
  for (const auto& i : disjoint) total += i.length();
  return total;
}

// Intersection of two sorted, disjoint lists; a single linear merge.
inline std::vector<Interval> intersect_intervals(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t s = std::max(a[i].start, b[j].start);
    int64_t e = std::min(a[i].end, b[j].end);
    if (s < e) out.push_back({s, e});
    if (a[i].end < b[j].end) ++i; else ++j;
  }
  return out;
}

// The parts of sorted, disjoint `a` outside sorted, disjoint `b`; a single linear merge.
inline std::vector<Interval> subtract_intervals(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t j = 0;
  for (const auto& x : a) {
    int64_t t = x.start;
    while (j < b.size() && b[j].end <= t) ++j;
    for (size_t k = j; k < b.size() && b[k].start < x.end; ++k) {
      if (b[k].start > t) out.push_back({t, b[k].start});
      t = std::max(t, b[k].end);
    }
    if (t < x.end) out.push_back({t, x.end});
  }
  return out;
}

// Length of a sorted, disjoint list inside [window.start, window.end).
inline int64_t length_within(const std::vector<Interval>& disjoint, Interval window) {
  int64_t total = 0;
  auto it = std::lower_bound(disjoint.begin(), disjoint.end(), window.start,
                             [](const Interval& i, int64_t t) { return i.end <= t; });
  for (; it != disjoint.end() && it->start < window.end; ++it)
    total += std::max<int64_t>(0, std::min(it->end, window.end) - std::max(it->start, window.start));
  return total;
}

// An interval tagged with a category; lower category numbers win where intervals overlap.
struct CategorizedInterval {
  int64_t start = 0;
  int64_t end = 0;
  int category = 0;
};

// Priority sweep: partitions the time line into segments, each owned by the highest-priority
// (lowest-numbered) category active there, or by `idle_category` where nothing is active. Built
// once in O(n log n); `totals(window)` then answers any window in O(log n + segments inside), and
// the returned per-category times always add up to exactly the window length.
//
// Which category owns an instant depends only on the union of each category's intervals, so the
// intervals are kept per category without their tag and merged before the sweep: a busy device's
// nested CPU ranges and back-to-back kernels shrink to a few spans, and the sweep's edges are
// made from those. Built with a Builder, the intervals need not be collected in a list first (the
// breakdown of a million-event trace held the list and the edges at once: its peak memory).
class PrioritySweep {
 public:
  class Builder {
   public:
    explicit Builder(int category_count) : by_category_(static_cast<size_t>(std::max(category_count, 0))) {}
    // Empty or inverted intervals and categories outside [0, category_count) are ignored.
    // One that overlaps or touches the category's last interval joins it (the union stays the
    // same): intervals added in time order (kernels, a thread's nested ranges) take little room.
    void add(int64_t start, int64_t end, int category) {
      if (end <= start || category < 0 || static_cast<size_t>(category) >= by_category_.size()) return;
      auto& list = by_category_[static_cast<size_t>(category)];
      if (!list.empty() && start <= list.back().end && end >= list.back().start) {
        list.back() = {std::min(start, list.back().start), std::max(end, list.back().end)};
        return;
      }
      list.push_back({start, end});
    }

   private:
    friend class PrioritySweep;
    std::vector<std::vector<Interval>> by_category_;
  };

  PrioritySweep(Builder&& intervals, int idle_category)
      : category_count_(static_cast<int>(intervals.by_category_.size())), idle_(idle_category) {
    sweep(intervals);
  }

  // What totals(w) of a PrioritySweep over `intervals` gives for each window w, from one walk that
  // keeps no segments (they were 12 bytes a boundary: ~11 MB for the breakdown of a 10^6-row nsys
  // export, at derivation's peak memory). Windows may overlap and come in any order.
  static std::vector<std::vector<int64_t>> totals_per_window(Builder&& intervals, int idle_category,
                                                             const std::vector<Interval>& windows) {
    const auto categories = static_cast<size_t>(
        std::max(static_cast<int>(intervals.by_category_.size()), idle_category + 1));
    std::vector<std::vector<int64_t>> out(windows.size(), std::vector<int64_t>(categories, 0));
    std::vector<size_t> order;  // the non-empty windows by start
    for (size_t w = 0; w < windows.size(); ++w)
      if (windows[w].start < windows[w].end) order.push_back(w);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return windows[a].start < windows[b].start; });
    size_t next = 0;             // the first window of `order` not yet active
    std::vector<size_t> active;  // windows that may overlap the segments to come
    // Segment [from, to) belongs to `owner`: into every window it overlaps.
    auto segment = [&](int64_t from, int64_t to, int owner) {
      while (next < order.size() && windows[order[next]].start < to) active.push_back(order[next++]);
      size_t kept = 0;
      for (size_t w : active) {
        const Interval& win = windows[w];
        int64_t lo = std::max(from, win.start), hi = std::min(to, win.end);
        if (hi > lo) out[w][static_cast<size_t>(owner)] += hi - lo;
        if (win.end > to) active[kept++] = w;  // later segments start at `to`
      }
      active.resize(kept);
    };
    int64_t from = INT64_MIN;  // before the first boundary everything is idle
    int owner = idle_category;
    walk(intervals, idle_category, [&](int64_t t, int top) {
      if (top == owner) return;
      segment(from, t, owner);
      from = t;
      owner = top;
    });
    segment(from, INT64_MAX, owner);
    return out;
  }

  PrioritySweep(const std::vector<CategorizedInterval>& intervals, int category_count, int idle_category)
      : category_count_(category_count), idle_(idle_category) {
    Builder b(category_count);
    for (const auto& i : intervals) b.add(i.start, i.end, i.category);
    sweep(b);
  }

  // Time per category (indexed by category) inside [window.start, window.end).
  std::vector<int64_t> totals(Interval window) const {
    std::vector<int64_t> out(static_cast<size_t>(std::max(category_count_, idle_ + 1)), 0);
    if (window.end <= window.start) return out;
    // Segment i covers [starts_[i], starts_[i+1]); before the first start everything is idle.
    auto it = std::upper_bound(starts_.begin(), starts_.end(), window.start);
    size_t i = static_cast<size_t>(it - starts_.begin());  // first segment starting after window.start
    int64_t t = window.start;
    int owner = i == 0 ? idle_ : owners_[i - 1];
    while (t < window.end) {
      int64_t next = i < starts_.size() ? std::min(starts_[i], window.end) : window.end;
      out[static_cast<size_t>(owner)] += next - t;
      t = next;
      if (i < starts_.size()) owner = owners_[i++];
    }
    return out;
  }

 private:
  void sweep(Builder& b) {
    size_t intervals = 0;
    for (const auto& list : b.by_category_) intervals += list.size();
    starts_.reserve(2 * intervals);  // at most two boundaries an interval
    owners_.reserve(2 * intervals);
    walk(b, idle_, [&](int64_t t, int top) {
      if (starts_.empty() || owners_.back() != top) {
        starts_.push_back(t);
        owners_.push_back(top);
      }
    });
  }

  // Each category's intervals become their sorted union (in place), then the unions are walked
  // side by side in time order: at each boundary t the lowest category inside one of its spans
  // owns the time up to the next boundary, and boundary(t, owner) is told. No list of edges
  // beside the unions.
  template <typename Boundary>
  static void walk(Builder& b, int idle, Boundary boundary) {
    auto& lists = b.by_category_;
    for (auto& list : lists) {
      std::sort(list.begin(), list.end(), [](const Interval& x, const Interval& y) { return x.start < y.start; });
      size_t out = 0;
      for (const auto& i : list) {
        if (out > 0 && i.start <= list[out - 1].end) {
          list[out - 1].end = std::max(list[out - 1].end, i.end);
        } else {
          list[out++] = i;
        }
      }
      list.resize(out);
    }
    const size_t n = lists.size();
    std::vector<size_t> next(n, 0);  // per category: the span now open or the next one
    std::vector<bool> inside(n, false);
    for (;;) {
      int64_t t = INT64_MAX;
      bool any = false;
      for (size_t c = 0; c < n; ++c) {
        if (next[c] >= lists[c].size()) continue;
        const Interval& span = lists[c][next[c]];
        t = std::min(t, inside[c] ? span.end : span.start);
        any = true;
      }
      if (!any) break;
      int top = -1;
      for (size_t c = 0; c < n; ++c) {
        if (next[c] < lists[c].size()) {
          const Interval& span = lists[c][next[c]];
          if (inside[c] && span.end == t) {
            inside[c] = false;
            ++next[c];  // spans of a union do not touch: the next one starts after t
          } else if (!inside[c] && span.start == t) {
            inside[c] = true;
          }
        }
        if (inside[c] && top < 0) top = static_cast<int>(c);
      }
      if (top < 0) top = idle;
      boundary(t, top);
    }
  }

  int category_count_;
  int idle_;
  std::vector<int64_t> starts_;
  std::vector<int> owners_;
};

}  // namespace proflint
