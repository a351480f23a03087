// engine/gate/metrics.cpp — see metrics.hpp.
#include "engine/gate/metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "engine/gate/stats.hpp"

namespace proflint::gate {

std::string_view unit_name(Unit u) {
  switch (u) {
    case Unit::ns:
      return "ns";
    case Unit::share:
      return "share";
    case Unit::bytes:
      return "bytes";
    case Unit::rate:
      return "samples_per_s";
  }
  return "ns";
}

std::string_view polarity_name(Polarity p) {
  return p == Polarity::lower_is_better ? "lower_is_better" : "higher_is_better";
}

std::optional<int64_t> leading_dimension(std::string_view dims) {
  // The first input's shape is the first inner list: "[[32,3,224,224],...]" -> 32. A scalar or
  // an empty list ("[[],[1]]") has no leading dimension; neither has a 1-D input ([[5]]), since
  // the first dimension of a vector is its length, not a batch.
  size_t open = dims.find('[');
  if (open == std::string_view::npos) return std::nullopt;
  size_t inner = dims.find_first_not_of(' ', open + 1);
  if (inner == std::string_view::npos || dims[inner] != '[') return std::nullopt;
  size_t close = dims.find(']', inner);
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view shape = dims.substr(inner + 1, close - inner - 1);
  size_t comma = shape.find(',');
  if (comma == std::string_view::npos) return std::nullopt;
  int64_t v = 0;
  bool any = false;
  for (char c : shape.substr(0, comma)) {
    if (c == ' ') continue;
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
    any = true;
    if (v > (int64_t{1} << 40)) return std::nullopt;
  }
  if (!any) return std::nullopt;
  return v;
}

size_t warmup_count(const std::vector<int64_t>& durations_ns, double tolerance) {
  if (durations_ns.size() < 3) return 0;
  std::vector<double> values(durations_ns.begin(), durations_ns.end());
  double limit = median(values) * (1 + tolerance);
  size_t n = 0;
  while (n < durations_ns.size() / 2 && static_cast<double>(durations_ns[n]) > limit) ++n;
  return n;
}

namespace {

using Key = std::pair<std::string, std::string>;  // (name, scope)

struct TraceData {
  const TraceSummary* summary = nullptr;
  std::vector<int64_t> kept_ns;  // iteration durations kept, in order
  std::map<Key, Metric> metrics;
};

std::string device_scope(const TraceSummary& s, int64_t device_id, bool with_rank) {
  if (with_rank && s.rank) return fmt::format("rank {} GPU {}", *s.rank, device_id);
  return fmt::format("GPU {}", device_id);
}

void put(TraceData& t, const std::string& name, const std::string& scope, Unit unit, Polarity polarity,
         bool per_iteration, double value) {
  Metric m;
  m.name = name;
  m.scope = scope;
  m.unit = unit;
  m.polarity = polarity;
  m.per_iteration = per_iteration;
  m.value = value;
  t.metrics[{name, scope}] = std::move(m);
}

void read_trace(SQLite::Database& db, const TraceSummary& s, const ExtractOptions& options, bool with_rank,
                TraceData& t, std::vector<std::string>& notes) {
  t.summary = &s;
  // Iterations the derivation aggregated (iteration.selected: --iter-start/--iter-stop), minus warm-up.
  std::vector<std::pair<int64_t, int64_t>> iterations;  // (ordinal, dur_ns)
  {
    SQLite::Statement q(db, "SELECT iteration, dur_ns FROM iteration WHERE trace_id = ? AND selected = 1 ORDER BY iteration");
    q.bind(1, s.trace_id);
    while (q.executeStep()) iterations.emplace_back(q.getColumn(0).getInt64(), q.getColumn(1).getInt64());
  }
  if (options.keep_step) {
    std::vector<std::pair<int64_t, int64_t>> kept;
    for (size_t i = 0; i < iterations.size(); ++i)
      if (options.keep_step(i, iterations.size())) kept.push_back(iterations[i]);
    iterations = std::move(kept);
  }
  size_t drop = 0;
  if (!options.user_range && !iterations.empty()) {
    if (options.warmup == "auto") {
      std::vector<int64_t> d;
      for (const auto& it : iterations) d.push_back(it.second);
      drop = warmup_count(d, options.warmup_tolerance);
    } else {
      drop = std::min<size_t>(iterations.size(), static_cast<size_t>(std::stoll(options.warmup)));
    }
  }
  if (drop > 0) {
    notes.push_back(fmt::format(
        "{}: dropped {} leading warm-up iteration(s) ({}: {:.3f} ms){}", s.path, drop,
        options.warmup == "auto" ? "longer than the median by more than the warm-up tolerance" : "[gate] warmup",
        static_cast<double>(iterations.front().second) / 1e6, drop > 1 ? " and following" : ""));
    iterations.erase(iterations.begin(), iterations.begin() + static_cast<std::ptrdiff_t>(drop));
  }
  for (const auto& it : iterations) t.kept_ns.push_back(it.second);
  const size_t k = iterations.size();
  const int64_t lo = k ? iterations.front().first : 0, hi = k ? iterations.back().first : -1;
  const bool per_iter = k > 0;
  // Position of each kept iteration among the kept ones: rows of other iterations (dropped
  // warm-up, the other half of a split) are ignored.
  std::map<int64_t, size_t> position;
  for (size_t i = 0; i < k; ++i) position[iterations[i].first] = i;
  const auto lower = Polarity::lower_is_better, higher = Polarity::higher_is_better;
  // One value per kept iteration, 0 where a component did not occur.
  std::map<std::string, std::vector<double>> series;
  auto add = [&](const std::string& name, int64_t iteration, double v) {
    auto p = position.find(iteration);
    if (p == position.end()) return;
    auto& s = series[name];
    if (s.empty()) s.assign(k, 0.0);
    s[p->second] += v;
  };

  put(t, "wall_time", "", Unit::ns, lower, false, static_cast<double>(s.wall_ns));

  // Devices: utilization and Tensor Core share per device and for the job.
  std::vector<int64_t> active;
  double util_sum = 0;
  int64_t tc_ns = 0, kernel_ns = 0;
  for (const auto& d : s.devices) {
    if (d.device_id < 0 || d.kernel_count == 0) continue;
    active.push_back(d.device_id);
    util_sum += d.gpu_utilization;
    tc_ns += d.tensor_core_time_ns;
    kernel_ns += d.kernel_time_ns;
    std::string scope = device_scope(s, d.device_id, with_rank);
    put(t, "gpu_utilization", scope, Unit::share, higher, false, d.gpu_utilization);
    if (d.kernel_time_ns > 0) put(t, "tensor_core_share", scope, Unit::share, higher, false, d.tensor_core_share);
  }
  if (!active.empty()) {
    put(t, "gpu_utilization", "", Unit::share, higher, false, util_sum / static_cast<double>(active.size()));
    if (kernel_ns > 0)
      put(t, "tensor_core_share", "", Unit::share, higher, false,
          static_cast<double>(tc_ns) / static_cast<double>(kernel_ns));
  }
  if (active.empty()) return;  // no GPU work: nothing per GPU to compare

  if (per_iter) {
    // Kernel-side metrics per iteration the kernels were launched in.
    auto per_iteration_rows = [&](const std::string& sql, const std::string& prefix) {
      SQLite::Statement q(db, sql);
      q.bind(1, s.trace_id);
      q.bind(2, lo);
      q.bind(3, hi);
      while (q.executeStep())
        add(prefix + q.getColumn(1).getString(), q.getColumn(0).getInt64(),
            static_cast<double>(q.getColumn(2).getInt64()));
    };
    per_iteration_rows(
        // op.tc_eligible marks only the outermost eligible op of a sub-tree (schema 4); a kernel
        // finds it through kernel.tc_eligible_op_id.
        "SELECT k.iteration, '', COALESCE(sum(k.dur_ns), 0) FROM _kernel k "
        "WHERE k.trace_id = ? AND k.iteration BETWEEN ? AND ? AND k.tc_eligible_op_id IS NOT NULL AND k.is_tensor_core = 0 "
        "AND k.category IN ('gemm', 'conv', 'attention') GROUP BY k.iteration",
        "tc_eligible_not_tc_time");
    // GPU time per op type and per kernel name: grouped on ids first, names joined per group.
    per_iteration_rows(
        "SELECT g.iteration, COALESCE(g.op_type, s.value), sum(g.ns) FROM (SELECT k.iteration, o.op_type, "
        "o.name_id, sum(k.dur_ns) AS ns FROM _kernel k JOIN _op o ON o.id = k.op_id WHERE k.trace_id = ? "
        "AND k.iteration BETWEEN ? AND ? GROUP BY k.iteration, o.op_type, o.name_id) g "
        "JOIN string s ON s.id = g.name_id GROUP BY 1, 2",
        "op_type.");
    per_iteration_rows(
        "SELECT g.iteration, s.value, g.ns FROM (SELECT k.iteration, k.name_id, sum(k.dur_ns) AS ns FROM _kernel k "
        "WHERE k.trace_id = ? AND k.iteration BETWEEN ? AND ? GROUP BY k.iteration, k.name_id) g "
        "JOIN string s ON s.id = g.name_id",
        "kernel.");
    if (!series.count("tc_eligible_not_tc_time")) series["tc_eligible_not_tc_time"].assign(k, 0.0);
    // Breakdown per iteration, averaged over the active GPUs: "time a GPU spends on it per step".
    // 'kernel' = kernel_tc + kernel_other: the GPU compute time, whichever units did it. Moving
    // work onto Tensor Cores grows kernel_tc and is no regression; the sum is what matters.
    SQLite::Statement q(db,
                        "SELECT iteration, category, sum(time_ns) FROM breakdown WHERE trace_id = ? AND device_id >= 0 "
                        "AND iteration BETWEEN ? AND ? GROUP BY iteration, category");
    q.bind(1, s.trace_id);
    q.bind(2, lo);
    q.bind(3, hi);
    const double gpus = static_cast<double>(active.size());
    while (q.executeStep()) {
      std::string category = q.getColumn(1).getString();
      int64_t iteration = q.getColumn(0).getInt64();
      double v = static_cast<double>(q.getColumn(2).getInt64()) / gpus;
      add("breakdown." + category, iteration, v);
      if (category == "kernel_tc" || category == "kernel_other") add("breakdown.kernel", iteration, v);
    }
    for (auto& [name, values] : series) {
      Metric m;
      m.name = name;
      m.unit = Unit::ns;
      m.polarity = lower;
      m.per_iteration = true;
      m.samples = std::move(values);
      m.value = median(m.samples);
      t.metrics[{name, ""}] = std::move(m);
    }
  } else {
    // No iterations: window totals say nothing about work done, so kernels are compared per
    // launch (a unit of work that holds across windows) and the breakdown as shares of the window
    // (shown, never gating).
    std::map<std::string, std::vector<double>> launches;
    std::map<std::string, size_t> seen;
    SQLite::Statement q(db,
                        "SELECT s.value, k.dur_ns FROM _kernel k JOIN string s ON s.id = k.name_id "
                        "WHERE k.trace_id = ? ORDER BY k.start_ns");
    q.bind(1, s.trace_id);
    std::map<std::string, double> total;
    while (q.executeStep()) {
      std::string name = q.getColumn(0).getString();
      double d = static_cast<double>(q.getColumn(1).getInt64());
      total[name] += d;
      size_t n = ++seen[name];
      auto& v = launches[name];
      // Reservoir-free thinning: keep every launch up to the cap, then every 2nd, 4th, ... so the
      // kept launches still span the whole window.
      if (v.size() < options.max_launch_samples) {
        v.push_back(d);
      } else if (n % 2 == 0) {
        for (size_t i = 0; i < v.size() / 2; ++i) v[i] = v[2 * i + 1];
        v.resize(v.size() / 2);
        v.push_back(d);
      }
    }
    for (auto& [name, values] : launches) {
      Metric m;
      m.name = "kernel_launch." + name;
      m.unit = Unit::ns;
      m.polarity = lower;
      m.samples = std::move(values);
      m.value = median(m.samples);
      m.run_values = {total[name]};  // GPU time in the window: ranks kernels for `top`
      t.metrics[{m.name, ""}] = std::move(m);
    }
    SQLite::Statement b(db,
                        "SELECT category, sum(time_ns) FROM breakdown WHERE trace_id = ? AND device_id >= 0 "
                        "AND iteration = -1 GROUP BY category");
    b.bind(1, s.trace_id);
    const double gpus = static_cast<double>(active.size());
    double kernels = 0;
    bool any_kernel = false;
    while (b.executeStep()) {
      std::string category = b.getColumn(0).getString();
      double total_ns = static_cast<double>(b.getColumn(1).getInt64()) / gpus;
      if (s.wall_ns > 0)
        put(t, "breakdown." + category, "", Unit::share, lower, false, total_ns / static_cast<double>(s.wall_ns));
      if (category == "kernel_tc" || category == "kernel_other") {
        kernels += total_ns;
        any_kernel = true;
      }
    }
    if (any_kernel && s.wall_ns > 0)
      put(t, "breakdown.kernel", "", Unit::share, lower, false, kernels / static_cast<double>(s.wall_ns));
  }
  // Peak memory: the allocator's running total when the trace records it; older traces only
  // carry per-event deltas, whose running sum gives the peak growth above the capture start
  // (a different quantity, so a different metric name).
  {
    SQLite::Statement q(db,
                        "SELECT device_id, max(allocated_bytes), count(allocated_bytes) FROM memory_sample "
                        "WHERE trace_id = ? AND device_id >= 0 GROUP BY device_id ORDER BY device_id");
    q.bind(1, s.trace_id);
    std::vector<int64_t> delta_only;
    double peak = -1;
    while (q.executeStep()) {
      int64_t device = q.getColumn(0).getInt64();
      if (q.getColumn(2).getInt64() == 0) {
        delta_only.push_back(device);
        continue;
      }
      double v = static_cast<double>(q.getColumn(1).getInt64());
      peak = std::max(peak, v);
      put(t, "peak_memory", device_scope(s, device, with_rank), Unit::bytes, lower, false, v);
    }
    if (peak >= 0) put(t, "peak_memory", "", Unit::bytes, lower, false, peak);
    double growth = -1;
    for (int64_t device : delta_only) {
      SQLite::Statement g(db,
                          "SELECT max(running) FROM (SELECT sum(delta_bytes) OVER (ORDER BY ts_ns ROWS UNBOUNDED "
                          "PRECEDING) AS running FROM memory_sample WHERE trace_id = ? AND device_id = ? "
                          "AND delta_bytes IS NOT NULL)");
      g.bind(1, s.trace_id);
      g.bind(2, device);
      if (!g.executeStep() || g.isColumnNull(0)) continue;
      double v = std::max(0.0, static_cast<double>(g.getColumn(0).getInt64()));
      growth = std::max(growth, v);
      put(t, "peak_memory_growth", device_scope(s, device, with_rank), Unit::bytes, lower, false, v);
    }
    if (growth >= 0) put(t, "peak_memory_growth", "", Unit::bytes, lower, false, growth);
  }
}

std::optional<int64_t> batch_of(SQLite::Database& db) {
  // Forward ops' first inputs: in a training step most of them carry the batch dimension first.
  SQLite::Statement q(db,
                      "SELECT d.value FROM _op o JOIN _range r ON r.id = o.range_id "
                      "JOIN string d ON d.id = r.input_dims_id WHERE o.pass = 'fwd' LIMIT 100000");
  std::map<int64_t, int64_t> counts;
  while (q.executeStep())
    if (auto v = leading_dimension(q.getColumn(0).getString())) ++counts[*v];
  if (counts.empty()) return std::nullopt;
  auto best =
      std::max_element(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  return best->first;
}

template <typename T>
std::vector<T> sorted_unique(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

}  // namespace

Side extract_side(Store& store, const ExtractOptions& options) {
  Side side;
  side.summaries = summarize(store);
  auto& db = store.db();
  std::set<int64_t> ranks;
  bool all_ranked = true;
  for (const auto& s : side.summaries) {
    side.paths.push_back(s.path);
    if (s.rank)
      ranks.insert(*s.rank);
    else
      all_ranked = false;
  }
  // Distinct ranks make one job; anything else (same rank twice, ranks unknown) are repeated runs.
  side.combined_ranks = side.summaries.size() > 1 && all_ranked && ranks.size() == side.summaries.size();
  std::vector<TraceData> traces(side.summaries.size());
  for (size_t i = 0; i < side.summaries.size(); ++i)
    read_trace(db, side.summaries[i], options, side.combined_ranks, traces[i], side.notes);

  // Iteration time.
  Metric it;
  it.name = "iteration_time";
  it.unit = Unit::ns;
  it.per_iteration = true;
  if (side.combined_ranks) {
    size_t steps = SIZE_MAX;
    for (const auto& t : traces) steps = std::min(steps, t.kept_ns.size());
    for (size_t i = 0; i < steps; ++i) {
      int64_t slowest = 0;
      for (const auto& t : traces) slowest = std::max(slowest, t.kept_ns[i]);
      it.samples.push_back(static_cast<double>(slowest));
    }
    side.notes.push_back(fmt::format("{} ranks form one job: a step takes as long as its slowest rank ({} steps)",
                                     traces.size(), it.samples.size()));
  } else {
    for (const auto& t : traces)
      for (auto d : t.kept_ns) it.samples.push_back(static_cast<double>(d));
    if (traces.size() > 1)
      side.notes.push_back(fmt::format("{} traces taken as repeated runs: their {} iterations are pooled",
                                       traces.size(), it.samples.size()));
  }
  it.value = median(it.samples);
  if (!it.samples.empty()) side.metrics.push_back(it);

  side.runs = side.combined_ranks ? 1 : traces.size();
  if (!side.combined_ranks && traces.size() > 1)
    for (const auto& t : traces)
      if (!t.kept_ns.empty()) side.metrics.back().run_values.push_back(median({t.kept_ns.begin(), t.kept_ns.end()}));

  // Every other metric. Per-iteration ones: repeated runs pool their iterations (ranks of one job
  // average per step); a run without the component contributes zeros. Scalars: the mean over the
  // traces, job-wide ones missing from a trace counting as zero; peak memory: the largest.
  std::map<Key, std::vector<const Metric*>> by_key;
  for (const auto& t : traces)
    for (const auto& [key, m] : t.metrics) by_key[key].push_back(&m);
  std::set<std::string> device_scopes;
  for (const auto& [key, list] : by_key)
    if (!key.second.empty()) device_scopes.insert(key.second);
  for (const auto& [key, list] : by_key) {
    if (!key.second.empty() && device_scopes.size() < 2) continue;  // one GPU: the job-wide value says it all
    Metric m = *list.front();
    if (m.per_iteration) {
      m.samples.clear();
      m.run_values.clear();
      const auto& metric_key = key;  // clang before 16 cannot capture a structured binding
      auto of = [&](const TraceData& t) -> std::vector<double> {
        auto it = t.metrics.find(metric_key);
        if (it != t.metrics.end() && it->second.per_iteration) return it->second.samples;
        return std::vector<double>(t.kept_ns.size(), 0.0);
      };
      if (side.combined_ranks) {
        size_t steps = SIZE_MAX;
        for (const auto& t : traces) steps = std::min(steps, t.kept_ns.size());
        m.samples.assign(steps, 0.0);
        for (const auto& t : traces) {
          auto v = of(t);
          for (size_t i = 0; i < steps; ++i) m.samples[i] += v[i] / static_cast<double>(traces.size());
        }
      } else {
        for (const auto& t : traces) {
          auto v = of(t);
          if (traces.size() > 1 && !v.empty()) m.run_values.push_back(median(v));
          m.samples.insert(m.samples.end(), v.begin(), v.end());
        }
      }
      m.value = median(m.samples);
      side.metrics.push_back(std::move(m));
      continue;
    }
    if (key.first.rfind("kernel_launch.", 0) == 0) {
      m.samples.clear();
      double total = 0;
      for (const auto* x : list) {
        m.samples.insert(m.samples.end(), x->samples.begin(), x->samples.end());
        total += x->run_values.empty() ? 0 : x->run_values.front();
      }
      m.value = median(m.samples);
      m.run_values = {total};
      side.metrics.push_back(std::move(m));
      continue;
    }
    double sum = 0, peak = 0;
    for (const auto* x : list) {
      sum += x->value;
      peak = std::max(peak, x->value);
    }
    bool job_wide = key.second.empty() && key.first != "wall_time" && key.first != "gpu_utilization" &&
                    key.first != "tensor_core_share";
    double count = static_cast<double>(job_wide ? traces.size() : list.size());
    m.value = key.first.rfind("peak_memory", 0) == 0 ? peak : sum / count;
    side.metrics.push_back(std::move(m));
  }

  // Fingerprint.
  Fingerprint& f = side.fingerprint;
  double kept_total = 0;
  for (size_t i = 0; i < traces.size(); ++i) {
    const auto& s = side.summaries[i];
    kept_total += static_cast<double>(traces[i].kept_ns.size());
    std::map<std::string, int> gpus;
    for (const auto& d : s.devices)
      if (d.device_id >= 0 && d.kernel_count > 0) {
        std::string name = d.name.empty() ? "GPU (model not recorded)" : d.name;
        if (d.compute_major) name += fmt::format(" (cc {}.{})", *d.compute_major, d.compute_minor.value_or(0));
        ++gpus[name];
      }
    std::string setup;
    for (const auto& [name, n] : gpus) setup += (setup.empty() ? "" : " + ") + fmt::format("{} x {}", n, name);
    f.gpu_setups.push_back(setup.empty() ? "no GPU activity" : setup);
    int64_t count = 0;
    for (const auto& [name, n] : gpus) count += n;
    f.gpu_counts.push_back(count);
    f.formats.push_back(s.format);
    if (s.framework) f.frameworks.push_back(*s.framework);
    if (s.vendor) f.vendors.push_back(*s.vendor);
  }
  f.gpu_setups = sorted_unique(f.gpu_setups);
  f.gpu_counts = sorted_unique(f.gpu_counts);
  f.formats = sorted_unique(f.formats);
  f.frameworks = sorted_unique(f.frameworks);
  f.vendors = sorted_unique(f.vendors);
  f.ranks.assign(ranks.begin(), ranks.end());
  f.iterations_per_trace = traces.empty() ? 0 : kept_total / static_cast<double>(traces.size());
  f.batch = batch_of(db);
  return side;
}

}  // namespace proflint::gate
