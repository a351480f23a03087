// engine/gate/stats.cpp — see stats.hpp.
#include "engine/gate/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace proflint::gate {

namespace {
constexpr size_t kExactLimit = 100;  // see u_frequencies
}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2;
}

namespace {

// Frequencies of U = 0..m*n under the null hypothesis for sizes (m, n): the coefficients of the
// Gaussian binomial [m+n choose m]_q, built one factor (1 - q^(n+i)) / (1 - q^i) at a time
// (Harding 1984). Every intermediate polynomial is itself a Gaussian binomial, but the
// subtraction step cancels: measured against a subtraction-free recursion, the CDF keeps a
// relative error below 1e-15 up to m+n = 120 and degrades beyond 160, so callers stop at 100.
std::vector<long double> u_frequencies(int m, int n) {
  if (m > n) std::swap(m, n);
  std::vector<long double> c(static_cast<size_t>(m) * n + 1, 0.0L);
  c[0] = 1;
  size_t degree = 0;
  for (int i = 1; i <= m; ++i) {
    size_t shift = static_cast<size_t>(n) + i;
    size_t new_degree = degree + n;
    for (size_t k = new_degree + 1; k-- > shift;) c[k] -= c[k - shift];  // * (1 - q^(n+i))
    for (size_t k = i; k <= new_degree; ++k) c[k] += c[k - i];           // / (1 - q^i)
    degree = new_degree;
  }
  return c;
}

}  // namespace

double mann_whitney_cdf(int64_t u, int m, int n) {
  if (u < 0) return 0;
  if (u >= static_cast<int64_t>(m) * n) return 1;
  auto c = u_frequencies(m, n);
  long double below = 0, total = 0;
  for (size_t k = 0; k < c.size(); ++k) {
    total += c[k];
    if (static_cast<int64_t>(k) <= u) below += c[k];
  }
  return static_cast<double>(below / total);
}

MannWhitney mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  MannWhitney r;
  const size_t na = a.size(), nb = b.size();
  if (na == 0 || nb == 0) return r;
  // Midranks of the pooled sample; the tie groups feed the variance correction.
  std::vector<std::pair<double, int>> pooled;
  pooled.reserve(na + nb);
  for (double v : a) pooled.emplace_back(v, 0);
  for (double v : b) pooled.emplace_back(v, 1);
  std::sort(pooled.begin(), pooled.end());
  const double n = static_cast<double>(na + nb);
  double rank_sum_b = 0, tie_term = 0;
  bool ties = false;
  for (size_t i = 0; i < pooled.size();) {
    size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    double t = static_cast<double>(j - i);
    double midrank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k)
      if (pooled[k].second == 1) rank_sum_b += midrank;
    if (t > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    i = j;
  }
  const double dna = static_cast<double>(na), dnb = static_cast<double>(nb);
  r.u = rank_sum_b - dnb * (dnb + 1) / 2;
  const double mean = dna * dnb / 2;
  if (!ties && na + nb <= kExactLimit) {
    r.exact = true;
    auto u = static_cast<int64_t>(std::llround(r.u));
    int64_t mirrored = static_cast<int64_t>(na * nb) - u;
    double tail = mann_whitney_cdf(std::min(u, mirrored), static_cast<int>(na), static_cast<int>(nb));
    r.p_value = std::min(1.0, 2 * tail);
    return r;
  }
  double variance = dna * dnb / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (variance <= 0) return r;  // every value equal: no evidence of a difference
  double z = (std::abs(r.u - mean) - 0.5) / std::sqrt(variance);
  r.p_value = z <= 0 ? 1.0 : std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return r;
}

Interval bootstrap_median_ratio(const std::vector<double>& a, const std::vector<double>& b, double confidence,
                                int resamples, uint64_t seed) {
  Interval out;
  if (a.empty() || b.empty() || resamples <= 0) return out;
  std::mt19937_64 rng(seed);
  // Lemire's multiply-shift maps a 64-bit draw to [0, n) the same way on every platform
  // (std::uniform_int_distribution is implementation-defined).
  auto index = [&](size_t n) { return static_cast<size_t>((static_cast<unsigned __int128>(rng()) * n) >> 64); };
  std::vector<double> ratios;
  ratios.reserve(static_cast<size_t>(resamples));
  std::vector<double> ra(a.size()), rb(b.size());
  for (int r = 0; r < resamples; ++r) {
    for (auto& v : ra) v = a[index(a.size())];
    for (auto& v : rb) v = b[index(b.size())];
    double ma = median(ra);
    if (ma <= 0) continue;
    ratios.push_back(median(rb) / ma);
  }
  if (ratios.empty()) return out;
  std::sort(ratios.begin(), ratios.end());
  auto quantile = [&](double q) {
    double pos = q * static_cast<double>(ratios.size() - 1);
    auto lo = static_cast<size_t>(std::floor(pos));
    size_t hi = std::min(lo + 1, ratios.size() - 1);
    return ratios[lo] + (ratios[hi] - ratios[lo]) * (pos - static_cast<double>(lo));
  };
  double tail = (1 - confidence) / 2;
  out.low = quantile(tail);
  out.high = quantile(1 - tail);
  return out;
}

}  // namespace proflint::gate
