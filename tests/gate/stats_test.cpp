// tests/gate/stats_test.cpp — the gate's statistics against published values and by-hand counts,
// plus property tests of the decision rule (identical inputs never fail; a uniform 20% slowdown
// over enough iterations always does).
#include "engine/gate/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace proflint::gate;

TEST(GateStats, Median) {
  EXPECT_DOUBLE_EQ(median({}), 0);
  EXPECT_DOUBLE_EQ(median({3}), 3);
  EXPECT_DOUBLE_EQ(median({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
}

TEST(GateStats, NullDistributionCountsByHand) {
  // m = n = 3: 20 arrangements; U frequencies 1,1,2,3,3,3,3,2,1,1.
  EXPECT_NEAR(mann_whitney_cdf(0, 3, 3), 1.0 / 20, 1e-12);
  EXPECT_NEAR(mann_whitney_cdf(2, 3, 3), 4.0 / 20, 1e-12);
  EXPECT_NEAR(mann_whitney_cdf(4, 3, 3), 10.0 / 20, 1e-12);
  EXPECT_NEAR(mann_whitney_cdf(9, 3, 3), 1.0, 1e-12);
  // m = n = 6: P(U <= 6) = 30 / 924 (partitions of 0..6 into at most 6 parts of at most 6).
  EXPECT_NEAR(mann_whitney_cdf(6, 6, 6), 30.0 / 924, 1e-12);
  // m = 5, n = 4: P(U <= 3) = 7 / 126; symmetric in m and n.
  EXPECT_NEAR(mann_whitney_cdf(3, 5, 4), 7.0 / 126, 1e-12);
  EXPECT_NEAR(mann_whitney_cdf(3, 4, 5), 7.0 / 126, 1e-12);
}

namespace {
// P(U <= u) by a subtraction-free recursion over pooled positions (slow, but nothing cancels):
// choose which positions hold the first sample; each pick adds the count of second-sample values
// before it to U.
double reference_cdf(int64_t u_max, int m, int n) {
  int64_t s = static_cast<int64_t>(m) * n;
  std::vector<std::vector<long double>> f(m + 1, std::vector<long double>(s + 1, 0));
  f[0][0] = 1;
  for (int pos = 0; pos < m + n; ++pos)
    for (int k = std::min(pos, m - 1); k >= 0; --k) {
      int add = pos - k;
      if (add > n) continue;
      for (int64_t u = s - add; u >= 0; --u) f[k + 1][u + add] += f[k][u];
    }
  long double below = 0, total = 0;
  for (int64_t u = 0; u <= s; ++u) {
    total += f[m][u];
    if (u <= u_max) below += f[m][u];
  }
  return static_cast<double>(below / total);
}
}  // namespace

TEST(GateStats, ExactDistributionMatchesASubtractionFreeRecursionUpToTheLimit) {
  for (auto [m, n] : {std::pair{50, 50}, std::pair{10, 90}, std::pair{33, 41}})
    for (int64_t u : {int64_t{0}, int64_t{m * n / 10}, int64_t{m * n / 3}, int64_t{m * n / 2}}) {
      double ref = reference_cdf(u, m, n);
      EXPECT_NEAR(mann_whitney_cdf(u, m, n), ref, ref * 1e-12) << m << "x" << n << " u=" << u;
    }
  EXPECT_NEAR(mann_whitney_cdf(50 * 50 / 2 - 1, 50, 50) + mann_whitney_cdf(50 * 50 / 2, 50, 50), 1.0, 1e-12);
}

TEST(GateStats, LargeSamplesUseTheNormalApproximation) {
  std::vector<double> a, b;
  for (int i = 0; i < 80; ++i) {
    a.push_back(i);
    b.push_back(i + 0.5);
  }
  auto r = mann_whitney_u(a, b);
  EXPECT_FALSE(r.exact);
  EXPECT_GT(r.p_value, 0.5);
}

TEST(GateStats, MannWhitneyMatchesScipyDocumentationExample) {
  // scipy.stats.mannwhitneyu documentation: males vs females, U1 = 17, exact two-sided p = 0.1111.
  std::vector<double> males = {19, 22, 16, 29, 24}, females = {20, 11, 17, 12};
  auto r = mann_whitney_u(females, males);  // U of the second sample (males)
  EXPECT_DOUBLE_EQ(r.u, 17);
  EXPECT_TRUE(r.exact);
  EXPECT_NEAR(r.p_value, 0.1111111111111111, 1e-12);
}

TEST(GateStats, MannWhitneyNormalApproximationWithTies) {
  // With a tie the exact distribution does not apply: normal approximation with tie and
  // continuity correction. x = {1,2,3,4,5}, y = {3,6,7,8,9}; ranks by hand:
  // pooled sorted 1,2,3,3,4,5,6,7,8,9 -> y ranks 3.5,7,8,9,10 = 37.5; U = 37.5 - 15 = 22.5.
  std::vector<double> x = {1, 2, 3, 4, 5}, y = {3, 6, 7, 8, 9};
  auto r = mann_whitney_u(x, y);
  EXPECT_DOUBLE_EQ(r.u, 22.5);
  EXPECT_FALSE(r.exact);
  // sigma^2 = 25/12 * (11 - 6/90) = 22.777...; z = (22.5 - 12.5 - 0.5) / sigma = 1.99055; p = 0.04653.
  double sigma = std::sqrt(25.0 / 12 * (11 - 6.0 / 90));
  double z = (22.5 - 12.5 - 0.5) / sigma;
  EXPECT_NEAR(r.p_value, std::erfc(z / std::sqrt(2.0)), 1e-12);
  EXPECT_NEAR(r.p_value, 0.04653, 5e-5);
}

TEST(GateStats, MannWhitneyCompleteSeparation) {
  // Five vs five, fully separated: U = 0, exact p = 2 / C(10,5) = 2/252.
  auto r = mann_whitney_u({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5});
  EXPECT_DOUBLE_EQ(r.u, 0);
  EXPECT_NEAR(r.p_value, 2.0 / 252, 1e-12);
  auto s = mann_whitney_u({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10});
  EXPECT_DOUBLE_EQ(s.u, 25);
  EXPECT_NEAR(s.p_value, 2.0 / 252, 1e-12);
}

TEST(GateStats, MannWhitneyDegenerateInputs) {
  EXPECT_DOUBLE_EQ(mann_whitney_u({}, {1, 2}).p_value, 1);
  EXPECT_DOUBLE_EQ(mann_whitney_u({5, 5, 5}, {5, 5, 5}).p_value, 1);  // all tied: no evidence
}

TEST(GateStats, BootstrapIsDeterministicAndBracketsTheRatio) {
  std::vector<double> a, b;
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(100, 2);
  for (int i = 0; i < 50; ++i) {
    a.push_back(noise(rng));
    b.push_back(noise(rng) * 1.10);
  }
  auto ci = bootstrap_median_ratio(a, b, 0.95, 2000, 1);
  auto again = bootstrap_median_ratio(a, b, 0.95, 2000, 1);
  EXPECT_DOUBLE_EQ(ci.low, again.low);
  EXPECT_DOUBLE_EQ(ci.high, again.high);
  double ratio = median(b) / median(a);
  EXPECT_LT(ci.low, ratio);
  EXPECT_GT(ci.high, ratio);
  EXPECT_GT(ci.low, 1.05);  // a 10% shift with 2% noise: clearly above 1
  EXPECT_LT(ci.high, 1.15);
}

// Property: the same samples on both sides are never significant, whatever they are.
TEST(GateStats, PropertyIdenticalInputsAreNeverSignificant) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    size_t n = 2 + rng() % 60;
    std::lognormal_distribution<double> d(0, 0.5);
    std::vector<double> x;
    for (size_t i = 0; i < n; ++i) x.push_back(std::round(d(rng) * 100));  // rounding makes ties
    auto r = mann_whitney_u(x, x);
    EXPECT_GE(r.p_value, 0.99) << "n=" << n;
    auto ci = bootstrap_median_ratio(x, x, 0.95, 500, trial);
    EXPECT_LE(ci.low, 1.0);
    EXPECT_GE(ci.high, 1.0);
  }
}

// Property: a uniform 20% slowdown under 5% noise is always detected with 30+ iterations.
TEST(GateStats, PropertyTwentyPercentSlowdownIsAlwaysSignificant) {
  std::mt19937_64 rng(13);
  for (int trial = 0; trial < 200; ++trial) {
    size_t n = 30 + rng() % 100;
    std::normal_distribution<double> d(100, 5);
    std::vector<double> base, cand;
    for (size_t i = 0; i < n; ++i) {
      base.push_back(d(rng));
      cand.push_back(d(rng) * 1.2);
    }
    auto r = mann_whitney_u(base, cand);
    EXPECT_LT(r.p_value, 0.001) << "trial " << trial;
    EXPECT_GT(r.u, static_cast<double>(n * n) / 2);
    EXPECT_GT(median(cand) / median(base), 1.1);
  }
}
