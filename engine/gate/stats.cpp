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

double mad(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double m = median(values);
  std::vector<double> dev;
  dev.reserve(values.size());
  for (double v : values) dev.push_back(std::abs(v - m));
  return median(std::move(dev));
}

std::vector<double> holm_adjust(const std::vector<double>& p) {
  const size_t m = p.size();
  std::vector<size_t> order(m);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return p[x] < p[y]; });
  std::vector<double> out(m, 1.0);
  double running = 0;
  for (size_t k = 0; k < m; ++k) {
    double v = std::min(1.0, static_cast<double>(m - k) * p[order[k]]);
    running = std::max(running, v);  // step-down: never smaller than an earlier (smaller) one
    out[order[k]] = running;
  }
  return out;
}

std::vector<double> bh_adjust(const std::vector<double>& p) {
  const size_t m = p.size();
  std::vector<size_t> order(m);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return p[x] < p[y]; });
  std::vector<double> out(m, 1.0);
  double running = 1;
  for (size_t k = m; k-- > 0;) {  // step-up: never larger than a later (larger) one
    double v = std::min(1.0, static_cast<double>(m) * p[order[k]] / static_cast<double>(k + 1));
    running = std::min(running, v);
    out[order[k]] = running;
  }
  return out;
}

double normal_quantile(double p) {
  if (p <= 0) return -INFINITY;
  if (p >= 1) return INFINITY;
  // Phi(x) = erfc(-x / sqrt 2) / 2 is increasing: bisect on [-40, 40].
  double lo = -40, hi = 40;
  for (int i = 0; i < 200 && hi - lo > 1e-13; ++i) {
    double mid = (lo + hi) / 2;
    if (std::erfc(-mid / std::sqrt(2.0)) / 2 < p)
      lo = mid;
    else
      hi = mid;
  }
  return (lo + hi) / 2;
}

double min_mann_whitney_p(size_t m, size_t n) {
  if (m == 0 || n == 0) return 1;
  // C(m+n, m) as a product of ratios: no overflow for any realistic size.
  double c = 1;
  size_t k = std::min(m, n), total = m + n;
  for (size_t i = 1; i <= k; ++i) c = c * static_cast<double>(total - k + i) / static_cast<double>(i);
  return std::min(1.0, 2 / c);
}

namespace {

// Continued fraction of the regularized incomplete beta function (modified Lentz).
double beta_fraction(double a, double b, double x) {
  const double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::abs(d) < tiny) d = tiny;
  d = 1 / d;
  double h = d;
  for (int m = 1; m <= 300; ++m) {
    double dm = m;
    double num = dm * (b - dm) * x / ((a + 2 * dm - 1) * (a + 2 * dm));
    d = 1 + num * d;
    c = 1 + num / c;
    if (std::abs(d) < tiny) d = tiny;
    if (std::abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    num = -(a + dm) * (a + b + dm) * x / ((a + 2 * dm) * (a + 2 * dm + 1));
    d = 1 + num * d;
    c = 1 + num / c;
    if (std::abs(d) < tiny) d = tiny;
    if (std::abs(c) < tiny) c = tiny;
    d = 1 / d;
    double step = d * c;
    h *= step;
    if (std::abs(step - 1) < 1e-15) break;
  }
  return h;
}

double incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_fraction(a, b, x) / a;
  return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

}  // namespace

double welch_t_p(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 2 || b.size() < 2) return 1;
  auto moments = [](const std::vector<double>& v) {
    double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    double ss = 0;
    for (double x : v) ss += (x - mean) * (x - mean);
    return std::make_pair(mean, ss / static_cast<double>(v.size() - 1));
  };
  auto [ma, va] = moments(a);
  auto [mb, vb] = moments(b);
  double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  double se2 = va / na + vb / nb;
  if (se2 <= 0) return ma == mb ? 1.0 : 0.0;
  double t = (mb - ma) / std::sqrt(se2);
  double df = se2 * se2 / ((va / na) * (va / na) / (na - 1) + (vb / nb) * (vb / nb) / (nb - 1));
  // Two-sided tail of Student's t: I_{df / (df + t^2)}(df / 2, 1 / 2).
  return std::min(1.0, incomplete_beta(df / 2, 0.5, df / (df + t * t)));
}

Detectable minimal_detectable_change(const std::vector<double>& a, const std::vector<double>& b, double alpha,
                                     double power, double budget_relative) {
  Detectable d;
  if (a.empty() || b.empty()) {
    d.possible = false;
    return d;
  }
  // Spread of each sample around its own median, relative to it, pooled by size.
  auto relative_spread = [](const std::vector<double>& v) {
    double m = median(v);
    return m > 0 ? 1.4826 * mad(v) / m : 0.0;
  };
  double na = static_cast<double>(a.size()), nb = static_cast<double>(b.size());
  double sa = relative_spread(a), sb = relative_spread(b);
  d.noise = std::sqrt((sa * sa * na + sb * sb * nb) / (na + nb));
  const double z = normal_quantile(1 - alpha / 2) + normal_quantile(power);
  const double efficiency = std::sqrt(M_PI / 3);
  d.relative = z * efficiency * d.noise * std::sqrt(1 / na + 1 / nb);
  bool ties = false;
  {
    std::vector<double> pooled(a);
    pooled.insert(pooled.end(), b.begin(), b.end());
    std::sort(pooled.begin(), pooled.end());
    ties = std::adjacent_find(pooled.begin(), pooled.end()) != pooled.end();
  }
  if (!ties && a.size() + b.size() <= 100 && min_mann_whitney_p(a.size(), b.size()) >= alpha) d.possible = false;
  if (budget_relative > 0) {
    // Equal sizes n: z e sigma sqrt(2/n) <= budget  =>  n >= 2 (z e sigma / budget)^2; and at least
    // enough steps for the exact test to reach alpha at all.
    double need = 2 * std::pow(z * efficiency * d.noise / budget_relative, 2);
    int64_t n = std::max<int64_t>(5, static_cast<int64_t>(std::ceil(need)));
    while (min_mann_whitney_p(static_cast<size_t>(n), static_cast<size_t>(n)) >= alpha) ++n;
    d.steps_for_budget = n;
  }
  return d;
}

}  // namespace proflint::gate
