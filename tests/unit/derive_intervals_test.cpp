// tests/unit/derive_intervals_test.cpp — union, intersection and the priority sweep.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "engine/common/intervals.hpp"

namespace proflint {
namespace {

int64_t sum(const std::vector<int64_t>& v) { return std::accumulate(v.begin(), v.end(), int64_t{0}); }

TEST(DeriveIntervals, UnionMergesOverlappingAndTouchingAndDropsEmpty) {
  auto u = union_intervals({{10, 20}, {0, 5}, {15, 30}, {30, 35}, {40, 40}, {50, 45}, {60, 70}});
  ASSERT_EQ(u.size(), 3u);
  EXPECT_EQ(u[0], (Interval{0, 5}));
  EXPECT_EQ(u[1], (Interval{10, 35}));
  EXPECT_EQ(u[2], (Interval{60, 70}));
  EXPECT_EQ(total_length(u), 5 + 25 + 10);
}

TEST(DeriveIntervals, IntersectionOfTwoUnions) {
  auto a = union_intervals({{0, 10}, {20, 30}});
  auto b = union_intervals({{5, 25}, {28, 40}});
  auto i = intersect_intervals(a, b);
  ASSERT_EQ(i.size(), 3u);
  EXPECT_EQ(i[0], (Interval{5, 10}));
  EXPECT_EQ(i[1], (Interval{20, 25}));
  EXPECT_EQ(i[2], (Interval{28, 30}));
  EXPECT_TRUE(intersect_intervals(a, {}).empty());
}

TEST(DeriveIntervals, LengthWithinAWindowClipsBothEnds) {
  auto u = union_intervals({{0, 10}, {20, 30}, {40, 50}});
  EXPECT_EQ(length_within(u, {5, 45}), 5 + 10 + 5);
  EXPECT_EQ(length_within(u, {10, 20}), 0);
  EXPECT_EQ(length_within(u, {-100, 100}), 30);
}

TEST(DeriveIntervals, PrioritySweepGivesEachInstantToTheHighestPriority) {
  // Categories: 0 beats 1 beats 2; 3 is idle.
  PrioritySweep sweep({{0, 100, 2}, {10, 30, 1}, {20, 40, 0}, {60, 70, 1}}, 3, 3);
  auto t = sweep.totals({0, 100});
  EXPECT_EQ(t[0], 20);       // [20, 40)
  EXPECT_EQ(t[1], 10 + 10);  // [10, 20) and [60, 70)
  EXPECT_EQ(t[2], 100 - 40);
  EXPECT_EQ(t[3], 0);
  EXPECT_EQ(sum(t), 100);
}

TEST(DeriveIntervals, PrioritySweepCountsGapsAndTimeOutsideAllIntervalsAsIdle) {
  PrioritySweep sweep({{10, 20, 0}, {30, 40, 1}}, 2, 2);
  auto t = sweep.totals({0, 50});
  EXPECT_EQ(t[0], 10);
  EXPECT_EQ(t[1], 10);
  EXPECT_EQ(t[2], 30);
  auto before = sweep.totals({-20, 5});
  EXPECT_EQ(before[2], 25);
  auto inside = sweep.totals({15, 35});  // starts inside a segment
  EXPECT_EQ(inside[0], 5);
  EXPECT_EQ(inside[1], 5);
  EXPECT_EQ(inside[2], 10);
}

TEST(DeriveIntervals, PrioritySweepHandlesNestedSameCategoryAndEmptyWindows) {
  PrioritySweep sweep({{0, 100, 1}, {10, 20, 1}, {20, 30, 0}, {25, 25, 0}}, 2, 2);
  auto t = sweep.totals({0, 100});
  EXPECT_EQ(t[0], 10);
  EXPECT_EQ(t[1], 90);
  EXPECT_EQ(sum(sweep.totals({50, 50})), 0);
  PrioritySweep empty({}, 2, 2);
  EXPECT_EQ(empty.totals({0, 7})[2], 7);
}

TEST(DeriveIntervals, PrioritySweepSumsExactlyOverManyRandomWindows) {
  std::vector<CategorizedInterval> v;
  uint64_t x = 12345;
  auto next = [&] { x = x * 6364136223846793005ULL + 1442695040888963407ULL; return static_cast<int64_t>(x >> 40); };
  for (int i = 0; i < 2000; ++i) {
    int64_t s = next() % 100000;
    v.push_back({s, s + next() % 500, static_cast<int>(next() % 8)});
  }
  PrioritySweep sweep(v, 8, 8);
  for (int i = 0; i < 200; ++i) {
    int64_t a = next() % 120000 - 10000, b = a + next() % 20000;
    EXPECT_EQ(sum(sweep.totals({a, b})), b - a);
  }
}

// The sweep merges each category's intervals before sweeping (intervals.hpp); the owner of every
// instant must still be the definition's: the lowest category with an interval covering it, else
// idle. Checked instant by instant against that definition on small random intervals (nested,
// touching and equal ones included), built both ways.
TEST(DeriveIntervals, PrioritySweepMatchesTheOwnerOfEveryInstant) {
  uint64_t x = 777;
  auto next = [&] { x = x * 6364136223846793005ULL + 1442695040888963407ULL; return static_cast<int64_t>(x >> 40); };
  for (int round = 0; round < 20; ++round) {
    std::vector<CategorizedInterval> v;
    for (int i = 0; i < 60; ++i) {
      int64_t s = next() % 200, len = next() % 30 - 3;  // some empty or inverted
      int category = static_cast<int>(next() % 5) - (round % 2);  // some outside [0, 4)
      v.push_back({s, s + len, category});
    }
    // In time order (as kernels and a thread's ranges come), most join the interval before them.
    if (round % 4 < 2)
      std::sort(v.begin(), v.end(), [](const CategorizedInterval& x, const CategorizedInterval& y) { return x.start < y.start; });
    PrioritySweep::Builder b(4);
    for (const auto& i : v) b.add(i.start, i.end, i.category);
    PrioritySweep from_list(v, 4, 4);
    PrioritySweep built(std::move(b), 4);
    for (int64_t t = -5; t < 240; ++t) {
      int want = 4;
      for (const auto& i : v)
        if (i.category >= 0 && i.category < 4 && i.start <= t && t < i.end) want = std::min(want, i.category);
      auto got = from_list.totals({t, t + 1});
      EXPECT_EQ(got[static_cast<size_t>(want)], 1) << "round " << round << " t " << t;
      EXPECT_EQ(built.totals({t, t + 1}), got) << "round " << round << " t " << t;
    }
  }
}

// The breakdown's one walk (totals_per_window) gives for every window what totals() of a stored
// sweep gives: windows overlapping, nested, empty, inverted, in any order, before and after every
// interval; and windows that start inside a segment.
TEST(DeriveIntervals, TotalsPerWindowAreTheStoredSweepsTotals) {
  uint64_t x = 4242;
  auto next = [&] { x = x * 6364136223846793005ULL + 1442695040888963407ULL; return static_cast<int64_t>(x >> 40); };
  for (int round = 0; round < 30; ++round) {
    PrioritySweep::Builder b(5), copy(5);
    std::vector<CategorizedInterval> v;
    for (int i = 0; i < 300; ++i) {
      int64_t s = next() % 5000, len = next() % 200 - 10;
      int category = static_cast<int>(next() % 5);
      v.push_back({s, s + len, category});
      b.add(s, s + len, category);
    }
    std::vector<Interval> windows = {{-100, 6000}, {0, 0}, {300, 200}, {7000, 8000}, {-50, -10}};
    for (int w = 0; w < 40; ++w) {
      int64_t a = next() % 6000 - 500;
      windows.push_back({a, a + next() % 1500});
    }
    PrioritySweep stored(v, 5, 5);
    auto got = PrioritySweep::totals_per_window(std::move(b), 5, windows);
    ASSERT_EQ(got.size(), windows.size());
    int64_t busy = 0;
    for (size_t w = 0; w < windows.size(); ++w) {
      EXPECT_EQ(got[w], stored.totals(windows[w])) << "round " << round << " window " << w;
      if (w == 0) busy = sum(got[w]) - got[w][5];
    }
    EXPECT_GT(busy, 0);  // the intervals were counted, not only idle time
  }
  auto none = PrioritySweep::totals_per_window(PrioritySweep::Builder(2), 2, {{0, 7}});
  EXPECT_EQ(none[0], (std::vector<int64_t>{0, 0, 7}));
}

}  // namespace
}  // namespace proflint

namespace proflint {
TEST(Intervals, SubtractLeavesThePartsOutside) {
  std::vector<Interval> a = {{0, 10}, {20, 30}, {40, 50}};
  std::vector<Interval> b = {{5, 22}, {25, 26}, {45, 60}};
  std::vector<Interval> want = {{0, 5}, {22, 25}, {26, 30}, {40, 45}};
  EXPECT_EQ(subtract_intervals(a, b), want);
  EXPECT_EQ(subtract_intervals(a, {}), a);
  EXPECT_TRUE(subtract_intervals({}, b).empty());
}
}  // namespace proflint
