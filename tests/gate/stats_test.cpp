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

// Holm by hand (python3): raw p [0.01, 0.04, 0.03, 0.005], m = 4. Sorted: 0.005 x 4 = 0.02,
// 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 = 0.04 -> max(0.06, 0.04) = 0.06.
TEST(GateStats, HolmAdjustmentByHand) {
  auto adj = holm_adjust({0.01, 0.04, 0.03, 0.005});
  ASSERT_EQ(adj.size(), 4u);
  EXPECT_NEAR(adj[0], 0.03, 1e-15);
  EXPECT_NEAR(adj[1], 0.06, 1e-15);
  EXPECT_NEAR(adj[2], 0.06, 1e-15);
  EXPECT_NEAR(adj[3], 0.02, 1e-15);
  EXPECT_DOUBLE_EQ(holm_adjust({0.7})[0], 0.7);
  EXPECT_DOUBLE_EQ(holm_adjust({0.6, 0.9})[0], 1.0);  // capped
  EXPECT_TRUE(holm_adjust({}).empty());
}

// Welch with two values per side and equal variances has df = 2 exactly, where the two-sided tail
// is 1 - |t| / sqrt(t^2 + 2): a = {1, 3}, b = {5, 7}: t = 4 / sqrt(2), p = 0.105572809000084
// (python3, closed form).
TEST(GateStats, WelchTTestByHand) {
  EXPECT_NEAR(welch_t_p({1, 3}, {5, 7}), 0.10557280900008414, 1e-12);
  EXPECT_NEAR(welch_t_p({5, 7}, {1, 3}), 0.10557280900008414, 1e-12);
  EXPECT_DOUBLE_EQ(welch_t_p({1}, {5, 7}), 1.0);            // one run: nothing to test
  EXPECT_DOUBLE_EQ(welch_t_p({2, 2, 2}, {2, 2}), 1.0);      // no spread, no difference
}

TEST(GateStats, NormalQuantileAndSmallestExactP) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-9);
  EXPECT_NEAR(normal_quantile(0.8), 0.8416212335729143, 1e-9);
  EXPECT_NEAR(normal_quantile(0.5), 0.0, 1e-12);
  // 2 / C(m+n, m): 3 vs 3 can never reach 0.05; 4 vs 4 can.
  EXPECT_NEAR(min_mann_whitney_p(3, 3), 0.1, 1e-15);
  EXPECT_NEAR(min_mann_whitney_p(4, 4), 2.0 / 70, 1e-15);
  EXPECT_NEAR(min_mann_whitney_p(5, 6), 2.0 / 462, 1e-15);
  // The exact test's own extreme agrees: complete separation of 4 vs 4.
  EXPECT_NEAR(mann_whitney_u({1, 2, 3, 4}, {5, 6, 7, 8}).p_value, min_mann_whitney_p(4, 4), 1e-12);
}

// The detectable change by hand (python3): a = {97,100,103,99,101} has median 100 and MAD 1,
// b = {98,100,102,97,103,100} median 100 and MAD 2; pooled robust noise
// sqrt((0.014826^2 x 5 + 0.029652^2 x 6) / 11) = 0.0240728; (1.959964 + 0.841621) x sqrt(pi/3)
// x 0.0240728 x sqrt(1/5 + 1/6) = 0.0417908.
TEST(GateStats, MinimalDetectableChangeByHand) {
  auto d = minimal_detectable_change({97, 100, 103, 99, 101}, {98, 100, 102, 97, 103, 100}, 0.05, 0.8, 0.02);
  EXPECT_NEAR(d.noise, 0.024072802465551334, 1e-9);
  EXPECT_NEAR(d.relative, 0.041790783521061886, 1e-8);
  EXPECT_TRUE(d.possible);
  // Steps per side for a 2% budget: 2 x (2.801585 x 1.023327 x 0.0240728 / 0.02)^2 = 23.8 -> 24.
  EXPECT_EQ(d.steps_for_budget, 24);
  auto three = minimal_detectable_change({1, 2, 3}, {4, 5, 6}, 0.05, 0.8, 0);
  EXPECT_FALSE(three.possible);  // 3 vs 3 can never reach p < 0.05
}

// BH by hand (python3): raw p [0.01, 0.04, 0.03, 0.005], m = 4. Sorted with rank k: 0.005 x 4/1 =
// 0.02, 0.01 x 4/2 = 0.02, 0.03 x 4/3 = 0.04, 0.04 x 4/4 = 0.04; running minimum from the top.
TEST(GateStats, BenjaminiHochbergByHand) {
  auto adj = bh_adjust({0.01, 0.04, 0.03, 0.005});
  ASSERT_EQ(adj.size(), 4u);
  EXPECT_NEAR(adj[0], 0.02, 1e-15);
  EXPECT_NEAR(adj[1], 0.04, 1e-15);
  EXPECT_NEAR(adj[2], 0.04, 1e-15);
  EXPECT_NEAR(adj[3], 0.02, 1e-15);
  // Never larger than Holm's.
  auto holm = holm_adjust({0.01, 0.04, 0.03, 0.005});
  for (size_t i = 0; i < 4; ++i) EXPECT_LE(adj[i], holm[i]);
}
