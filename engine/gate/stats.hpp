// engine/gate/stats.hpp — the statistics behind `proflint compare`.
//
// Pure functions on samples, tested against published values (tests/gate/stats_test.cpp). The
// decision rule follows the benchmark gates in ../shared/reference/regression_gating.md: a
// rank test for "is there a difference at all" plus an effect size with a confidence interval
// for "is it big enough to matter".
#pragma once

#include <cstddef>
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

// Median absolute deviation from the median (unscaled; x 1.4826 estimates a normal sigma).
double mad(const std::vector<double>& values);

// Holm-Bonferroni step-down adjusted p-values, in the order given: the k-th smallest of m raw
// values becomes max over j <= k of min(1, (m - j + 1) p_(j)). A hypothesis is rejected at alpha
// when its adjusted value is below alpha; the chance of rejecting any true one stays <= alpha.
std::vector<double> holm_adjust(const std::vector<double>& p_values);

// Benjamini-Hochberg adjusted p-values (q-values), in the order given: the k-th smallest of m
// becomes min over j >= k of min(1, m p_(j) / j). Rejecting those below alpha keeps the expected
// share of false rejections among all rejections <= alpha.
std::vector<double> bh_adjust(const std::vector<double>& p_values);

// Quantile of the standard normal distribution (bisection on erfc; |error| < 1e-12).
double normal_quantile(double p);

// Smallest two-sided p-value the exact Mann-Whitney test can reach with sizes (m, n):
// 2 / C(m+n, m), capped at 1 (both samples completely separated).
double min_mann_whitney_p(size_t m, size_t n);

// Two-sided Welch t-test of the means of `a` and `b` (each at least 2 values); p = 1 otherwise
// or when both variances are 0. The t distribution's tail comes from the regularized incomplete
// beta function (continued fraction).
double welch_t_p(const std::vector<double>& a, const std::vector<double>& b);

// What a rank test on samples of these sizes and this noise can tell from noise.
struct Detectable {
  double noise = 0;              // robust relative spread: 1.4826 x MAD / median, pooled over both samples
  double relative = 0;           // smallest relative change of the median detected with `power` at `alpha`
  bool possible = true;          // false: the exact test cannot reach p < alpha with these sizes at all
  int64_t steps_for_budget = 0;  // steps per side for the budget to be detectable (0: no budget given)
};
// Normal-theory size of the smallest detectable shift, (z(1-alpha/2) + z(power)) x sigma x
// sqrt(1/m + 1/n), inflated by sqrt(pi/3) for the rank test's efficiency against the t-test
// (3/pi for normal data); `budget_relative` > 0 also gives the steps per side it needs.
Detectable minimal_detectable_change(const std::vector<double>& a, const std::vector<double>& b, double alpha,
                                     double power, double budget_relative);

}  // namespace proflint::gate
