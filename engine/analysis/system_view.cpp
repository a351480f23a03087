// engine/analysis/system_view.cpp — see system_view.hpp.
#include "engine/analysis/system_view.hpp"

#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace proflint {

std::vector<std::pair<int64_t, double>> sample_values(SQLite::Database& db, int64_t trace_id, int64_t device_id,
                                                      const std::string& metric) {
  std::vector<std::pair<int64_t, double>> out;
  SQLite::Statement q(db,
                      // The series first: SQLite would otherwise scan every sample for the join.
                      "SELECT p.ts_ns, p.value FROM sample_point p WHERE p.series_id IN (SELECT series_id FROM sample_series "
                      "WHERE trace_id = ? AND device_id = ? AND metric = ? AND pid IS NULL) ORDER BY p.ts_ns, p.rowid");
  q.bind(1, trace_id);
  q.bind(2, device_id);
  q.bind(3, metric);
  while (q.executeStep()) out.emplace_back(q.getColumn(0).getInt64(), q.getColumn(1).getDouble());
  return out;
}

namespace {

std::optional<SampledStat> stat_of(const std::vector<std::pair<int64_t, double>>& v) {
  if (v.empty()) return std::nullopt;
  SampledStat s;
  s.samples = static_cast<int64_t>(v.size());
  s.min = s.max = v.front().second;
  double sum = 0;
  for (const auto& [t, x] : v) {
    sum += x;
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
  }
  s.mean = sum / static_cast<double>(v.size());
  return s;
}

std::vector<double> profile(const std::vector<std::pair<int64_t, double>>& v, int64_t start, int64_t end, double scale) {
  std::vector<double> sum(kProfileSlices, 0), n(kProfileSlices, 0);
  const double span = static_cast<double>(std::max<int64_t>(1, end - start));
  for (const auto& [t, x] : v) {
    auto k = static_cast<int>(static_cast<double>(t - start) / span * kProfileSlices);
    k = std::clamp(k, 0, kProfileSlices - 1);
    sum[static_cast<size_t>(k)] += x * scale;
    n[static_cast<size_t>(k)] += 1;
  }
  std::vector<double> out(kProfileSlices, std::numeric_limits<double>::quiet_NaN());
  for (size_t k = 0; k < out.size(); ++k)
    if (n[k] > 0) out[k] = sum[k] / n[k];
  return out;
}

}  // namespace

SystemView summarize_samples(SQLite::Database& db, int64_t trace_id) {
  SystemView v;
  {
    SQLite::Statement q(db,
                        "SELECT source, format, MIN(p.ts_ns), MAX(p.ts_ns) FROM sample_series s LEFT JOIN sample_point p "
                        "ON p.series_id = s.series_id WHERE s.trace_id = ? GROUP BY source, format ORDER BY MIN(s.series_id)");
    q.bind(1, trace_id);
    bool first = true;
    while (q.executeStep()) {
      v.sources.push_back(q.getColumn(0).getString() + " (" + q.getColumn(1).getString() + ")");
      if (q.isColumnNull(2)) continue;
      int64_t a = q.getColumn(2).getInt64(), b = q.getColumn(3).getInt64();
      v.start_ns = first ? a : std::min(v.start_ns, a);
      v.end_ns = first ? b : std::max(v.end_ns, b);
      first = false;
    }
  }
  {
    SQLite::Statement q(db, "SELECT DISTINCT metric FROM sample_series WHERE trace_id = ? ORDER BY metric");
    q.bind(1, trace_id);
    while (q.executeStep()) v.metrics.push_back(q.getColumn(0).getString());
  }
  std::vector<int64_t> devices;
  {
    SQLite::Statement q(db,
                        "SELECT DISTINCT device_id FROM sample_series WHERE trace_id = ? AND device_id IS NOT NULL AND pid IS NULL "
                        "ORDER BY device_id");
    q.bind(1, trace_id);
    while (q.executeStep()) devices.push_back(q.getColumn(0).getInt64());
  }
  for (int64_t dev : devices) {
    SampledGpu g;
    g.device_id = dev;
    {
      SQLite::Statement q(db, "SELECT COALESCE(name, ''), memory_bytes FROM device WHERE trace_id = ? AND device_id = ?");
      q.bind(1, trace_id);
      q.bind(2, dev);
      if (q.executeStep()) {
        g.name = q.getColumn(0).getString();
        if (!q.isColumnNull(1) && q.getColumn(1).getInt64() > 0) g.memory_total_bytes = static_cast<double>(q.getColumn(1).getInt64());
      }
    }
    {
      SQLite::Statement q(db,
                          "SELECT MIN(p.ts_ns), MAX(p.ts_ns) FROM sample_point p WHERE p.series_id IN (SELECT series_id FROM "
                          "sample_series WHERE trace_id = ? AND device_id = ? AND pid IS NULL)");
      q.bind(1, trace_id);
      q.bind(2, dev);
      if (q.executeStep() && !q.isColumnNull(0)) {
        g.first_ns = q.getColumn(0).getInt64();
        g.last_ns = q.getColumn(1).getInt64();
      }
    }
    auto active = sample_values(db, trace_id, dev, "gpu_active");
    if (active.empty()) active = sample_values(db, trace_id, dev, "graphics_active");
    g.gpu_active = stat_of(active);
    auto used = sample_values(db, trace_id, dev, "memory_used");
    if (used.empty()) used = sample_values(db, trace_id, dev, "memory_allocated");
    g.memory_used = stat_of(used);
    if (auto total = stat_of(sample_values(db, trace_id, dev, "memory_total"))) g.memory_total_bytes = total->max;
    g.power_draw = stat_of(sample_values(db, trace_id, dev, "power_draw"));
    if (auto limit = stat_of(sample_values(db, trace_id, dev, "power_limit"))) g.power_limit_w = limit->max;
    g.temperature = stat_of(sample_values(db, trace_id, dev, "temperature_gpu"));
    auto clock = sample_values(db, trace_id, dev, "clock_sm");
    if (clock.empty()) clock = sample_values(db, trace_id, dev, "clock_graphics");
    g.clock_sm = stat_of(clock);
    auto clock_max = stat_of(sample_values(db, trace_id, dev, "clock_sm_max"));
    if (!clock_max) clock_max = stat_of(sample_values(db, trace_id, dev, "clock_graphics_max"));
    if (clock_max) g.clock_sm_max_mhz = clock_max->max;
    if (!active.empty()) g.activity_profile = profile(active, v.start_ns, v.end_ns, 1.0);
    if (!used.empty() && g.memory_total_bytes && *g.memory_total_bytes > 0)
      g.memory_profile = profile(used, v.start_ns, v.end_ns, 100.0 / *g.memory_total_bytes);
    v.gpus.push_back(std::move(g));
  }
  {
    SQLite::Statement q(db,
                        "SELECT operator, COALESCE(module, ''), SUM(time_ns), SUM(count) FROM operator_timing WHERE trace_id = ? "
                        "GROUP BY operator, module ORDER BY operator, module IS NOT NULL, SUM(time_ns) DESC, module");
    q.bind(1, trace_id);
    while (q.executeStep())
      v.operators.push_back({q.getColumn(0).getString(), q.getColumn(1).getString(), q.getColumn(2).getInt64(),
                             q.getColumn(3).getInt64()});
  }
  return v;
}

std::vector<int64_t> sample_spans(const std::vector<std::pair<int64_t, double>>& samples) {
  std::vector<int64_t> spans;
  if (samples.size() < 2) return spans;
  for (size_t i = 0; i + 1 < samples.size(); ++i) spans.push_back(samples[i + 1].first - samples[i].first);
  std::vector<int64_t> sorted = spans;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
  const int64_t usual = std::max<int64_t>(1, sorted[sorted.size() / 2]);
  for (auto& len : spans) len = std::max<int64_t>(0, std::min(len, 2 * usual));
  spans.push_back(usual);
  return spans;
}

}  // namespace proflint
