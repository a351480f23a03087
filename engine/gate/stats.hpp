// engine/gate/stats.hpp — the statistics behind `proflint compare`.
//
// Pure functions on samples, tested against published values (tests/gate/stats_test.cpp). The
// decision rule follows the benchmark gates in ../shared/reference/regression_gating.md: a
// rank test for "is there a difference at all" plus an effect size with a confidence interval
// for "is it big enough to matter".
#pragma once

#include <cstdint>
#include <vector>

namespace proflint::gate {

// Median of the values (mean of the two middle values for an even count); 0 for no values.
double median(std::vector<double> values);

struct MannWhitney {
  double u = 0;        // U of the second sample: pairs (a, b) with b > a, ties counted 1/2
  double p_value = 1;  // two-sided
  bool exact = false;  // exact null distribution (no ties, small samples) or normal approximation
};

// Two-sided Mann-Whitney U test of `a` against `b`. Exact when there are no ties and
// n_a + n_b <= 100 (Harding's generating-function recursion); otherwise the normal approximation
// with tie correction and continuity correction (the same choices as scipy.stats.mannwhitneyu).
// Either sample empty: p = 1.
MannWhitney mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

// Cumulative null distribution of U for sizes (m, n) without ties: P(U <= u). Accurate for
// m + n <= 100 (see stats.cpp).
double mann_whitney_cdf(int64_t u, int m, int n);

struct Interval {
  double low = 0, high = 0;
};

// Percentile bootstrap confidence interval (`confidence`, e.g. 0.95) of median(b) / median(a):
// both samples are resampled with replacement `resamples` times from a fixed `seed`, so the
// same inputs always give the same interval. Requires non-empty samples and median(a) > 0.
Interval bootstrap_median_ratio(const std::vector<double>& a, const std::vector<double>& b, double confidence,
                                int resamples, uint64_t seed);

}  // namespace proflint::gate
