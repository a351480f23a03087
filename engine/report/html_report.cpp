// engine/report/html_report.cpp — see html_report.hpp. Reads the store the analysis ran on (facts
// and derived tables, like the DLProf-style reports) and the analysis result; writes one page.
#include "engine/report/html_report.hpp"

#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>

#include "engine/analysis/system_view.hpp"
#include "engine/report/compare_report.hpp"
#include "engine/report/findings_report.hpp"
#include "engine/report/html_assets.hpp"
#include "engine/report/summary_report.hpp"

namespace proflint {

using json = nlohmann::ordered_json;

std::vector<size_t> step_outliers(const std::vector<int64_t>& d) {
  std::vector<size_t> out;
  if (d.size() < 4) return out;
  auto median_of = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  };
  std::vector<double> v(d.begin(), d.end());
  double med = median_of(v);
  std::vector<double> dev;
  for (double x : v) dev.push_back(std::fabs(x - med));
  double spread = 1.4826 * median_of(dev);
  for (size_t i = 0; i < v.size(); ++i)
    if (std::fabs(v[i] - med) > 3 * spread && std::fabs(v[i] - med) > 0.05 * med) out.push_back(i);
  return out;
}

std::string script_safe_json(const std::string& text) {
  std::string out;
  out.reserve(text.size() + text.size() / 50);
  for (char c : text) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

namespace {

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// The page: styles, data, the charting library and the page's script, all inline. The policy
// forbids every fetch, so opening the file can never reach the network.
std::string page(const std::string& title, const json& data) {
  std::string out;
  out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
         "style-src 'unsafe-inline'; img-src data:\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<meta name=\"generator\" content=\"proflint " PROFLINT_VERSION "\">\n";
  out += "<title>" + html_escape(title) + "</title>\n<style>\n";
  out += html_assets::uplot_css();
  out += "\n";
  out += html_assets::report_css();
  out += "</style>\n</head>\n<body>\n<div id=\"app\"><noscript>This report needs JavaScript.</noscript></div>\n";
  out += "<script type=\"application/json\" id=\"pf-data\">";
  out += script_safe_json(dump(data));
  out += "</script>\n<script>\n";
  out += html_assets::uplot_js();
  out += "\n</script>\n<script>\n";
  out += html_assets::report_js();
  out += "</script>\n</body>\n</html>\n";
  return out;
}

struct Iteration {
  int64_t ordinal = 0;
  std::optional<int64_t> number;
  int64_t start = 0, end = 0, dur = 0;
  int64_t win_start = 0, win_end = 0;  // host span joined with the GPU span of its work
};

struct TraceInfo {
  int64_t trace_id = 0, start = 0, end = 0;
  std::vector<Iteration> iterations;
  std::vector<int64_t> devices;
};

const Iteration* find_iteration(const TraceInfo& t, int64_t ordinal) {
  for (const auto& i : t.iterations)
    if (i.ordinal == ordinal) return &i;
  return nullptr;
}

TraceInfo load_trace(SQLite::Database& db, int64_t trace_id) {
  TraceInfo t;
  t.trace_id = trace_id;
  SQLite::Statement q(db, "SELECT COALESCE(start_ns, 0), COALESCE(end_ns, 0) FROM trace WHERE trace_id = ?");
  q.bind(1, trace_id);
  if (q.executeStep()) t.start = q.getColumn(0).getInt64(), t.end = q.getColumn(1).getInt64();
  SQLite::Statement it(db,
                       "SELECT iteration, number, start_ns, end_ns, dur_ns, gpu_start_ns, gpu_end_ns FROM iteration "
                       "WHERE trace_id = ? ORDER BY iteration");
  it.bind(1, trace_id);
  while (it.executeStep()) {
    Iteration i;
    i.ordinal = it.getColumn(0).getInt64();
    if (!it.getColumn(1).isNull()) i.number = it.getColumn(1).getInt64();
    i.start = it.getColumn(2).getInt64();
    i.end = it.getColumn(3).getInt64();
    i.dur = it.getColumn(4).getInt64();
    i.win_start = it.getColumn(5).isNull() ? i.start : std::min(i.start, it.getColumn(5).getInt64());
    i.win_end = it.getColumn(6).isNull() ? i.end : std::max(i.end, it.getColumn(6).getInt64());
    t.iterations.push_back(i);
  }
  SQLite::Statement dq(db, "SELECT device_id FROM device WHERE trace_id = ? AND has_activity = 1 ORDER BY device_id");
  dq.bind(1, trace_id);
  while (dq.executeStep()) t.devices.push_back(dq.getColumn(0).getInt64());
  return t;
}

// ---- over-time series ----------------------------------------------------------------------

struct Bins {
  int64_t t0 = 0, width = 1;
  size_t n = 0;
  size_t index(int64_t t) const {
    if (t <= t0) return 0;
    return std::min(n - 1, static_cast<size_t>((t - t0) / width));
  }
  // Adds the overlap of [s, e) with every bin to `acc`.
  void add(std::vector<double>& acc, int64_t s, int64_t e) const {
    if (e <= s) return;
    for (size_t b = index(s); b < n; ++b) {
      int64_t bs = t0 + static_cast<int64_t>(b) * width, be = bs + width;
      if (bs >= e) break;
      acc[b] += static_cast<double>(std::min(e, be) - std::max(s, bs));
    }
  }
};

double round4(double v) { return std::round(v * 10000) / 10000; }

json series_json(SQLite::Database& db, const TraceInfo& t, const HtmlLimits& limits) {
  Bins bins;
  bins.t0 = t.start;
  int64_t span = std::max<int64_t>(1, t.end - t.start);
  bins.n = std::max<size_t>(1, std::min<size_t>(limits.time_bins, static_cast<size_t>(span)));
  bins.width = (span + static_cast<int64_t>(bins.n) - 1) / static_cast<int64_t>(bins.n);
  bins.n = static_cast<size_t>((span + bins.width - 1) / bins.width);
  json devices = json::array();
  for (int64_t dev : t.devices) {
    std::vector<double> busy(bins.n), ktime(bins.n), tc(bins.n);
    SQLite::Statement q(db,
                        "SELECT start_ns, start_ns + dur_ns, COALESCE(is_tensor_core, 0) FROM _kernel "
                        "WHERE trace_id = ? AND device_id = ? ORDER BY start_ns");
    q.bind(1, t.trace_id);
    q.bind(2, dev);
    int64_t cs = 0, ce = -1;
    bool open = false;
    while (q.executeStep()) {
      int64_t s = q.getColumn(0).getInt64(), e = q.getColumn(1).getInt64();
      bins.add(ktime, s, e);
      if (q.getColumn(2).getInt()) bins.add(tc, s, e);
      if (!open || s > ce) {
        if (open) bins.add(busy, cs, ce);
        cs = s, ce = e, open = true;
      } else {
        ce = std::max(ce, e);
      }
    }
    if (open) bins.add(busy, cs, ce);
    json util = json::array(), share = json::array();
    for (size_t b = 0; b < bins.n; ++b) {
      int64_t bs = bins.t0 + static_cast<int64_t>(b) * bins.width;
      int64_t w = std::max<int64_t>(1, std::min(bins.width, t.end - bs));
      util.push_back(round4(std::min(1.0, busy[b] / static_cast<double>(w))));
      if (ktime[b] > 0) share.push_back(round4(tc[b] / ktime[b]));
      else share.push_back(nullptr);
    }
    devices.push_back({{"device_id", dev}, {"utilization", util}, {"tensor_core_share", share}});
  }
  // GPU samples: counters (mean per bin) and allocator memory (peak per bin), when recorded.
  json samples = json::array();
  auto add_sample = [&](const std::string& name, const std::string& unit, std::optional<int64_t> dev,
                        const std::vector<double>& v, const std::vector<int>& count) {
    json vals = json::array();
    for (size_t b = 0; b < bins.n; ++b)
      if (count[b]) vals.push_back(v[b]);
      else vals.push_back(nullptr);
    json s = {{"name", name}, {"unit", unit}, {"values", vals}};
    s["device_id"] = dev ? json(*dev) : json(nullptr);
    samples.push_back(s);
  };
  {
    SQLite::Statement q(db,
                        "SELECT name, device_id, ts_ns, value FROM counter WHERE trace_id = ? AND value IS NOT NULL "
                        "ORDER BY name, device_id, ts_ns");
    q.bind(1, t.trace_id);
    std::string cur_name;
    std::optional<int64_t> cur_dev;
    std::vector<double> sum(bins.n);
    std::vector<int> cnt(bins.n);
    bool any = false;
    size_t kept = 0;
    while (q.executeStep()) {
      std::string name = q.getColumn(0).getString();
      std::optional<int64_t> dev;
      if (!q.getColumn(1).isNull()) dev = q.getColumn(1).getInt64();
      if (any && (name != cur_name || dev != cur_dev)) {
        for (size_t b = 0; b < bins.n; ++b)
          if (cnt[b]) sum[b] /= cnt[b];
        if (kept++ < 16) add_sample(cur_name, "", cur_dev, sum, cnt);
        std::fill(sum.begin(), sum.end(), 0.0);
        std::fill(cnt.begin(), cnt.end(), 0);
      }
      cur_name = name, cur_dev = dev, any = true;
      size_t b = bins.index(q.getColumn(2).getInt64());
      sum[b] += q.getColumn(3).getDouble();
      cnt[b] += 1;
    }
    if (any && kept < 16) {
      for (size_t b = 0; b < bins.n; ++b)
        if (cnt[b]) sum[b] /= cnt[b];
      add_sample(cur_name, "", cur_dev, sum, cnt);
    }
  }
  {
    SQLite::Statement q(db,
                        "SELECT device_id, ts_ns, allocated_bytes FROM memory_sample WHERE trace_id = ? AND device_id >= 0 "
                        "AND allocated_bytes IS NOT NULL ORDER BY device_id, ts_ns");
    q.bind(1, t.trace_id);
    std::optional<int64_t> cur;
    std::vector<double> peak(bins.n);
    std::vector<int> cnt(bins.n);
    while (q.executeStep()) {
      int64_t dev = q.getColumn(0).getInt64();
      if (cur && dev != *cur) {
        add_sample("memory allocated", "bytes", cur, peak, cnt);
        std::fill(peak.begin(), peak.end(), 0.0);
        std::fill(cnt.begin(), cnt.end(), 0);
      }
      cur = dev;
      size_t b = bins.index(q.getColumn(1).getInt64());
      peak[b] = std::max(peak[b], static_cast<double>(q.getColumn(2).getInt64()));
      cnt[b] += 1;
    }
    if (cur) add_sample("memory allocated", "bytes", cur, peak, cnt);
  }
  json boundaries = json::array();
  for (const auto& i : t.iterations) boundaries.push_back(i.start - t.start);
  return {{"bin_ns", bins.width}, {"bins", bins.n}, {"devices", devices}, {"samples", samples},
          {"iteration_starts_ns", boundaries}};
}

// ---- the system view of sampling logs (docs/samples.md) ----------------------------------------

// Per GPU with samples: activity (mean per bin), SM active (mean per bin, DCGM / nsys GPU metrics)
// and memory (peak per bin: % of the device's memory when its size is known, else bytes), over the
// span of the samples, which covers the job rather than the trace's window. Bins: the time-bin
// limit, or fewer when the longest series has fewer samples (no bin is then empty on a regular log).
json system_series_json(SQLite::Database& db, const TraceInfo& t, const SystemView& v, const HtmlLimits& limits) {
  struct Series {
    std::string metric;
    std::vector<std::pair<int64_t, double>> points;
  };
  struct Gpu {
    int64_t device_id = 0;
    std::string name;
    Series active, sm, memory;
    std::optional<double> total;
  };
  std::vector<Gpu> gpus;
  size_t longest = 1;
  auto pick = [&](int64_t dev, std::initializer_list<const char*> metrics) {
    for (const char* m : metrics) {
      auto p = sample_values(db, t.trace_id, dev, m);
      if (!p.empty()) return Series{m, std::move(p)};
    }
    return Series{};
  };
  for (const auto& g : v.gpus) {
    Gpu out;
    out.device_id = g.device_id;
    out.name = g.name;
    out.active = pick(g.device_id, {"gpu_active", "graphics_active"});
    out.sm = pick(g.device_id, {"sm_active"});
    out.memory = pick(g.device_id, {"memory_used", "memory_allocated"});
    out.total = g.memory_total_bytes;
    for (const Series* se : {&out.active, &out.sm, &out.memory}) longest = std::max(longest, se->points.size());
    if (!out.active.points.empty() || !out.sm.points.empty() || !out.memory.points.empty()) gpus.push_back(std::move(out));
  }
  if (gpus.empty()) return nullptr;
  Bins bins;
  bins.t0 = v.start_ns;
  const int64_t span = std::max<int64_t>(1, v.end_ns - v.start_ns + 1);
  bins.n = std::max<size_t>(1, std::min({limits.time_bins, longest, static_cast<size_t>(span)}));
  bins.width = (span + static_cast<int64_t>(bins.n) - 1) / static_cast<int64_t>(bins.n);
  bins.n = static_cast<size_t>((span + bins.width - 1) / bins.width);
  auto binned = [&](const Series& se, bool peak, double scale) {
    if (se.points.empty()) return json(nullptr);
    std::vector<double> acc(bins.n, 0.0);
    std::vector<int> cnt(bins.n, 0);
    for (const auto& [ts, x] : se.points) {
      size_t b = bins.index(ts);
      acc[b] = peak ? (cnt[b] ? std::max(acc[b], x * scale) : x * scale) : acc[b] + x * scale;
      ++cnt[b];
    }
    json vals = json::array();
    for (size_t b = 0; b < bins.n; ++b)
      vals.push_back(cnt[b] ? json(round4(peak ? acc[b] : acc[b] / cnt[b])) : json(nullptr));
    return json{{"metric", se.metric}, {"samples", se.points.size()}, {"values", vals}};
  };
  json list = json::array();
  for (const auto& g : gpus) {
    const bool share = g.total && *g.total > 0;
    json m = binned(g.memory, true, share ? 100.0 / *g.total : 1.0);
    if (!m.is_null()) m["unit"] = share ? "%" : "bytes";
    list.push_back({{"device_id", g.device_id}, {"name", g.name}, {"activity", binned(g.active, false, 1.0)},
                    {"sm_active", binned(g.sm, false, 1.0)}, {"memory", m},
                    {"memory_total_bytes", share ? json(*g.total) : json(nullptr)}});
  }
  // Iteration starts, when the samples are on the trace's clock: they overlap its window and no log
  // was left unaligned (import issue samples_not_aligned, docs/samples.md).
  bool aligned = v.start_ns < t.end && v.end_ns > t.start;
  {
    SQLite::Statement q(db, "SELECT 1 FROM import_issue WHERE trace_id = ? AND kind = 'samples_not_aligned'");
    q.bind(1, t.trace_id);
    if (q.executeStep()) aligned = false;
  }
  json starts = json::array();
  if (aligned)
    for (const auto& i : t.iterations) starts.push_back(i.start - v.start_ns);
  return {{"start_ns", v.start_ns - t.start}, {"bin_ns", bins.width}, {"bins", bins.n}, {"aligned", aligned},
          {"iteration_starts_ns", starts}, {"gpus", list}};
}

// Per CUDA graph whose capture is in the trace: the captured ops its nodes are attributed to, with
// their kernels and GPU time per replay (graph_kernel.captured_op_id), most time first.
json graph_ops_json(SQLite::Database& db, int64_t trace_id) {
  json out = json::object();
  try {
    SQLite::Statement q(db,
                        "SELECT g.graph_id, o.name, COUNT(DISTINCT g.node), SUM(k.dur_ns), c.replays FROM graph_kernel g "
                        "JOIN _kernel k ON k.id = g.kernel_id JOIN op o ON o.id = g.captured_op_id JOIN cuda_graph c ON "
                        "c.trace_id = g.trace_id AND c.graph_id = g.graph_id WHERE g.trace_id = ? GROUP BY g.graph_id, o.name "
                        "ORDER BY g.graph_id, SUM(k.dur_ns) DESC, o.name");
    q.bind(1, trace_id);
    while (q.executeStep()) {
      std::string key = std::to_string(q.getColumn(0).getInt64());
      if (!out.contains(key)) out[key] = json::array();
      if (out[key].size() >= 20) continue;
      int64_t replays = std::max<int64_t>(1, q.getColumn(4).getInt64());
      out[key].push_back({{"op", q.getColumn(1).getString()}, {"nodes", q.getColumn(2).getInt64()},
                          {"gpu_time_per_replay_ns", q.getColumn(3).getInt64() / replays}});
    }
  } catch (const SQLite::Exception&) {
    return json::object();  // a store older than schema 0009
  }
  return out;
}

// ---- per-iteration figures -------------------------------------------------------------------

json iterations_json(SQLite::Database& db, const TraceInfo& t) {
  json ord = json::array(), num = json::array(), dur = json::array(), start = json::array();
  std::vector<int64_t> durations;
  for (const auto& i : t.iterations) {
    ord.push_back(i.ordinal);
    num.push_back(i.number ? json(*i.number) : json(nullptr));
    dur.push_back(i.dur);
    start.push_back(i.start - t.start);
    durations.push_back(i.dur);
  }
  json outliers = json::array();
  for (size_t p : step_outliers(durations)) outliers.push_back(p);
  // Per device and iteration, the breakdown categories (each iteration's add up to its wall time).
  std::map<int64_t, std::map<std::string, std::map<int64_t, int64_t>>> per;  // device -> category -> iteration -> ns
  SQLite::Statement q(db, "SELECT device_id, iteration, category, time_ns FROM breakdown WHERE trace_id = ? AND iteration >= 0");
  q.bind(1, t.trace_id);
  while (q.executeStep())
    per[q.getColumn(0).getInt64()][q.getColumn(2).getString()][q.getColumn(1).getInt64()] = q.getColumn(3).getInt64();
  json breakdown = json::array();
  for (const auto& [dev, cats] : per) {
    json by_cat = json::object();
    for (const auto& [key, label] : breakdown_categories()) {
      auto c = cats.find(key);
      if (c == cats.end()) continue;
      json values = json::array();
      for (const auto& i : t.iterations) {
        auto v = c->second.find(i.ordinal);
        values.push_back(v == c->second.end() ? 0 : v->second);
      }
      by_cat[key] = values;
    }
    breakdown.push_back({{"device_id", dev}, {"categories", by_cat}});
  }
  json out = {{"ordinal", ord},
              {"number", num},
              {"dur_ns", dur},
              {"start_ns", start},
              {"warmup", gate::warmup_count(durations, 0.2)},
              {"outliers", outliers},
              {"breakdown", breakdown}};
  // A trace that is one rank of a job aligned on its collectives: per iteration, its time in
  // collectives before the last rank arrived (wait) and after (transfer), from the job tables.
  SQLite::Statement c(db,
                      "SELECT p.iteration, SUM(p.wait_ns), SUM(p.transfer_ns) FROM collective_participation p "
                      "JOIN job j ON j.job_id = p.job_id WHERE p.trace_id = ?1 AND j.aligned = 1 AND p.iteration IS NOT NULL "
                      "AND (SELECT COUNT(*) FROM job_rank r WHERE r.trace_id = ?1) = 1 GROUP BY p.iteration");
  c.bind(1, t.trace_id);
  std::map<int64_t, std::pair<int64_t, int64_t>> coll;
  while (c.executeStep()) coll[c.getColumn(0).getInt64()] = {c.getColumn(1).getInt64(), c.getColumn(2).getInt64()};
  if (!coll.empty()) {
    json wait = json::array(), transfer = json::array();
    for (const auto& i : t.iterations) {
      auto it = coll.find(i.ordinal);
      wait.push_back(it == coll.end() ? 0 : it->second.first);
      transfer.push_back(it == coll.end() ? 0 : it->second.second);
    }
    out["collective"] = {{"wait_ns", wait}, {"transfer_ns", transfer}};
  }
  return out;
}

// ---- tables ------------------------------------------------------------------------------------

json kernel_table(SQLite::Database& db, const HtmlLimits& limits, int64_t& total) {
  {
    SQLite::Statement c(db, "SELECT COUNT(DISTINCT name_id) FROM _kernel");
    c.executeStep();
    total = c.getColumn(0).getInt64();
  }
  SQLite::Statement q(db,
                      "SELECT s.value, COALESCE(MAX(k.category), ''), MAX(COALESCE(k.is_tensor_core, 0)), COUNT(*), "
                      "SUM(k.dur_ns), MIN(k.dur_ns), MAX(k.dur_ns) FROM _kernel k JOIN string s ON s.id = k.name_id "
                      "GROUP BY k.name_id ORDER BY SUM(k.dur_ns) DESC, s.value LIMIT ?");
  q.bind(1, static_cast<int64_t>(limits.table_rows));
  json rows = json::array();
  while (q.executeStep())
    rows.push_back({q.getColumn(0).getString(), q.getColumn(1).getString(), q.getColumn(2).getInt() != 0,
                    q.getColumn(3).getInt64(), q.getColumn(4).getInt64(), q.getColumn(5).getInt64(),
                    q.getColumn(6).getInt64()});
  return rows;
}

json op_table(SQLite::Database& db, const HtmlLimits& limits, int64_t& total) {
  struct Row {
    int64_t calls = 0, cpu_ns = 0, gpu_ns = 0, tc_ns = 0, kernels = 0;
    bool eligible = false;
  };
  std::map<std::string, Row> rows;
  // Calls and CPU time: every op of the type (inclusive of the ops it calls).
  SQLite::Statement q(db,
                      "SELECT COALESCE(o.op_type, s.value), COUNT(*), SUM(COALESCE(o.dur_ns, 0)), MAX(COALESCE(o.tc_eligible, 0)) "
                      "FROM _op o JOIN string s ON s.id = o.name_id GROUP BY 1");
  while (q.executeStep()) {
    Row& r = rows[q.getColumn(0).getString()];
    r.calls = q.getColumn(1).getInt64();
    r.cpu_ns = q.getColumn(2).getInt64();
    r.eligible = q.getColumn(3).getInt() != 0;
  }
  // GPU time: each kernel once, at the innermost op it is attributed to.
  SQLite::Statement g(db,
                      "SELECT COALESCE(o.op_type, s.value), COUNT(*), SUM(k.dur_ns), "
                      "SUM(CASE WHEN k.is_tensor_core = 1 THEN k.dur_ns ELSE 0 END) "
                      "FROM _kernel k JOIN _op o ON o.id = k.op_id JOIN string s ON s.id = o.name_id GROUP BY 1");
  while (g.executeStep()) {
    Row& r = rows[g.getColumn(0).getString()];
    r.kernels = g.getColumn(1).getInt64();
    r.gpu_ns = g.getColumn(2).getInt64();
    r.tc_ns = g.getColumn(3).getInt64();
  }
  std::vector<std::pair<std::string, Row>> sorted(rows.begin(), rows.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return std::tie(b.second.gpu_ns, b.second.cpu_ns) < std::tie(a.second.gpu_ns, a.second.cpu_ns);
  });
  total = static_cast<int64_t>(sorted.size());
  if (sorted.size() > limits.table_rows) sorted.resize(limits.table_rows);
  json out = json::array();
  for (const auto& [name, r] : sorted)
    out.push_back({name, r.calls, r.cpu_ns, r.kernels, r.gpu_ns, r.tc_ns, r.eligible});
  return out;
}

// ---- timeline ----------------------------------------------------------------------------------

// Event classes, in the order report.js names and colours them.
enum Cls { kTc = 0, kKernel, kComm, kMemcpy, kMemset, kRuntime, kCpuOp, kAnnotation, kNvtx, kPython, kGpuAnnotation };

struct RowRef {
  std::string table;  // kernel, memcpy, memset, api_call, range
  int64_t id = 0;
  bool operator<(const RowRef& o) const { return std::tie(table, id) < std::tie(o.table, o.id); }
};

struct Event {
  int64_t start = 0, dur = 0;
  int name = 0, cls = 0;
  int64_t row = 0;
  RowRef ref;
};

struct Lane {
  std::string key, label;
  int64_t device = -1;  // GPU lanes
  std::vector<Event> events;
};

struct View {
  int64_t trace_id = 0;
  std::optional<int64_t> iteration;
  int64_t t0 = 0, t1 = 0;
  std::vector<Lane> lanes;
  std::map<RowRef, std::pair<size_t, size_t>> where;  // row -> (lane, event index)
  size_t events = 0;
  bool truncated = false;
};

class Names {
 public:
  int id(const std::string& s) {
    auto [it, added] = ids_.emplace(s, static_cast<int>(list_.size()));
    if (added) list_.push_back(s);
    return it->second;
  }
  json to_json() const { return list_; }

 private:
  std::map<std::string, int> ids_;
  std::vector<std::string> list_;
};

// Rows of nested intervals on one lane: an event sits one row below every event that encloses it.
void assign_rows(std::vector<Event>& ev, int max_row) {
  std::sort(ev.begin(), ev.end(), [](const Event& a, const Event& b) {
    return std::tie(a.start, b.dur, a.ref) < std::tie(b.start, a.dur, b.ref);
  });
  std::vector<int64_t> stack;
  for (auto& e : ev) {
    while (!stack.empty() && stack.back() <= e.start) stack.pop_back();
    e.row = std::min<int64_t>(static_cast<int64_t>(stack.size()), max_row);
    stack.push_back(e.start + e.dur);
  }
}

View collect_view(SQLite::Database& db, int64_t trace_id, int64_t t0, int64_t t1, size_t budget, Names& names) {
  View v;
  v.trace_id = trace_id, v.t0 = t0, v.t1 = t1;
  std::map<std::string, Lane> lanes;
  auto lane = [&](const std::string& key, const std::string& label, int64_t device) -> Lane& {
    Lane& l = lanes[key];
    if (l.key.empty()) l.key = key, l.label = label, l.device = device;
    return l;
  };
  // Each source, only what overlaps the window; the events closest to the window start first so
  // a cut keeps a contiguous beginning.
  auto each = [&](const std::string& sql, const auto& take) {
    if (v.events >= budget) {
      v.truncated = true;
      return;
    }
    SQLite::Statement q(db, sql + " LIMIT ?");
    q.bind(1, trace_id);
    q.bind(2, t1);
    q.bind(3, t0);
    q.bind(4, static_cast<int64_t>(budget - v.events + 1));
    while (q.executeStep()) {
      if (v.events >= budget) {
        v.truncated = true;
        break;
      }
      take(q);
      ++v.events;
    }
  };
  auto gpu_label = [](int64_t dev, int64_t stream) {
    return "GPU " + std::to_string(dev) + " · stream " + std::to_string(stream);
  };
  auto key2 = [](const char* p, int64_t a, int64_t b) { return std::string(p) + std::to_string(a) + ":" + std::to_string(b); };
  each("SELECT k.id, COALESCE(k.device_id, -1), COALESCE(k.stream_id, -1), k.start_ns, k.dur_ns, s.value, "
       "COALESCE(k.is_tensor_core, 0), COALESCE(k.category, '') FROM _kernel k JOIN string s ON s.id = k.name_id "
       "WHERE k.trace_id = ? AND k.start_ns < ? AND k.start_ns + k.dur_ns > ? ORDER BY k.start_ns",
       [&](SQLite::Statement& q) {
         int64_t dev = q.getColumn(1).getInt64(), st = q.getColumn(2).getInt64();
         int cls = q.getColumn(7).getString() == "communication" ? kComm : q.getColumn(6).getInt() ? kTc : kKernel;
         lane(key2("g", dev, st), gpu_label(dev, st), dev)
             .events.push_back({q.getColumn(3).getInt64(), q.getColumn(4).getInt64(), names.id(q.getColumn(5).getString()),
                                cls, 0, {"kernel", q.getColumn(0).getInt64()}});
       });
  for (const char* table : {"memcpy", "memset"}) {
    bool cpy = std::string(table) == "memcpy";
    each(std::string("SELECT id, COALESCE(device_id, -1), COALESCE(stream_id, -1), start_ns, dur_ns, ") +
             (cpy ? "kind" : "COALESCE(mem_kind, 'unknown')") + ", COALESCE(bytes, 0) FROM _" + table +
             " WHERE trace_id = ? AND start_ns < ? AND start_ns + dur_ns > ? ORDER BY start_ns",
         [&](SQLite::Statement& q) {
           int64_t dev = q.getColumn(1).getInt64(), st = q.getColumn(2).getInt64();
           std::string name = std::string(cpy ? "Memcpy " : "Memset ") + q.getColumn(5).getString();
           lane(key2("g", dev, st), gpu_label(dev, st), dev)
               .events.push_back({q.getColumn(3).getInt64(), q.getColumn(4).getInt64(), names.id(name), cpy ? kMemcpy : kMemset,
                                  0, {table, q.getColumn(0).getInt64()}});
         });
  }
  each("SELECT r.id, COALESCE(r.pid, -1), COALESCE(r.tid, -1), r.start_ns, r.dur_ns, s.value, r.kind, r.device_id "
       "FROM _range r JOIN string s ON s.id = r.name_id "
       "WHERE r.trace_id = ? AND r.start_ns < ? AND r.start_ns + r.dur_ns > ? ORDER BY r.start_ns",
       [&](SQLite::Statement& q) {
         std::string kind = q.getColumn(6).getString();
         int64_t pid = q.getColumn(1).getInt64(), tid = q.getColumn(2).getInt64();
         Event e{q.getColumn(3).getInt64(), q.getColumn(4).getInt64(), names.id(q.getColumn(5).getString()), kCpuOp, 0,
                 {"range", q.getColumn(0).getInt64()}};
         if (kind == "gpu_user_annotation") {
           int64_t dev = q.getColumn(7).isNull() ? -1 : q.getColumn(7).getInt64();
           e.cls = kGpuAnnotation;
           lane(key2("ga", dev, tid), "GPU " + std::to_string(dev) + " · annotations (stream " + std::to_string(tid) + ")", dev)
               .events.push_back(e);
           return;
         }
         e.cls = kind == "cpu_op" ? kCpuOp : kind == "nvtx" ? kNvtx : kind == "python_function" ? kPython : kAnnotation;
         lane(key2("c", pid, tid), "CPU pid " + std::to_string(pid) + " · thread " + std::to_string(tid), -1).events.push_back(e);
       });
  each("SELECT a.id, COALESCE(a.pid, -1), COALESCE(a.tid, -1), a.start_ns, a.dur_ns, s.value FROM _api_call a "
       "JOIN string s ON s.id = a.name_id WHERE a.trace_id = ? AND a.start_ns < ? AND a.start_ns + a.dur_ns > ? "
       "ORDER BY a.start_ns",
       [&](SQLite::Statement& q) {
         int64_t pid = q.getColumn(1).getInt64(), tid = q.getColumn(2).getInt64();
         lane(key2("c", pid, tid), "CPU pid " + std::to_string(pid) + " · thread " + std::to_string(tid), -1)
             .events.push_back({q.getColumn(3).getInt64(), q.getColumn(4).getInt64(), names.id(q.getColumn(5).getString()),
                                kRuntime, 0, {"api_call", q.getColumn(0).getInt64()}});
       });
  // GPU lanes first (by device and stream), then GPU annotations, then host threads.
  std::vector<std::pair<std::tuple<int, int64_t, int64_t>, Lane*>> order;
  for (auto& [key, l] : lanes) {
    int group = key[0] == 'g' ? (key[1] == 'a' ? 1 : 0) : 2;
    size_t colon = key.find(':');
    int64_t a = std::stoll(key.substr(group == 1 ? 2 : 1, colon)), b = std::stoll(key.substr(colon + 1));
    order.push_back({{group, a, b}, &l});
  }
  std::sort(order.begin(), order.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  for (auto& [k, l] : order) {
    assign_rows(l->events, 7);
    size_t li = v.lanes.size();
    for (size_t i = 0; i < l->events.size(); ++i) v.where[l->events[i].ref] = {li, i};
    v.lanes.push_back(std::move(*l));
  }
  return v;
}

json view_json(const View& v, const std::string& label) {
  json lanes = json::array();
  for (const auto& l : v.lanes) {
    // Starts are deltas from the previous event (first: from the view start); compact numbers.
    json s = json::array(), d = json::array(), n = json::array(), c = json::array(), r = json::array();
    int64_t prev = v.t0, rows = 1;
    for (const auto& e : l.events) {
      s.push_back(e.start - prev);
      prev = e.start;
      d.push_back(e.dur);
      n.push_back(e.name);
      c.push_back(e.cls);
      r.push_back(e.row);
      rows = std::max(rows, e.row + 1);
    }
    json lj = {{"label", l.label}, {"rows", rows}, {"s", s}, {"d", d}, {"n", n}, {"c", c}, {"r", r}};
    lj["device_id"] = l.device >= 0 ? json(l.device) : json(nullptr);
    lanes.push_back(lj);
  }
  json out = {{"trace_id", v.trace_id}, {"label", label}, {"t0_ns", v.t0}, {"t1_ns", v.t1}, {"events", v.events},
              {"truncated", v.truncated}, {"lanes", lanes}};
  out["iteration"] = v.iteration ? json(*v.iteration) : json(nullptr);
  return out;
}

// ---- findings' evidence ------------------------------------------------------------------------

struct Evidence {
  std::vector<RowRef> rows;        // resolved rows, in the order found
  int64_t trace_id = -1;
  std::optional<int64_t> first_start, last_end;
  std::optional<int64_t> iteration;  // of the first row, when it lies in one
  size_t cited = 0;                  // rows the finding cites (before the cap)
};

// Table of a row id cited by an evidence key ("example_kernel_ids", "longest_api_call_id") or a
// claim ("memcpy:12"). Ops are shown through the host range they come from.
std::optional<std::string> table_of_key(const std::string& key) {
  static const std::vector<std::string> tables = {"api_call", "kernel", "memcpy", "memset", "range", "op"};
  bool id_key = key.size() > 3 && (key.ends_with("_id") || key.ends_with("_ids"));
  if (!id_key) return std::nullopt;
  for (const auto& t : tables)
    if (key.find(t + "_id") != std::string::npos) return t;
  return std::nullopt;
}

Evidence resolve_evidence(SQLite::Database& db, const Finding& f, const std::map<int64_t, TraceInfo>& traces,
                          size_t cap) {
  std::vector<RowRef> cited;
  auto add_ids = [&](const std::string& table, const json& v) {
    if (v.is_number_integer()) cited.push_back({table, v.get<int64_t>()});
    else if (v.is_array())
      for (const auto& x : v)
        if (x.is_number_integer()) cited.push_back({table, x.get<int64_t>()});
  };
  // A finding merged across the ranks/GPUs of a job cites its instances' rows.
  std::vector<const Finding*> sources{&f};
  for (const auto& in : f.instances) sources.push_back(&in);
  for (const Finding* src : sources)
    for (const auto& [key, value] : src->evidence.items())
      if (auto table = table_of_key(key)) add_ids(*table, value);
  for (const Finding* src : sources) {
    for (const auto& [claim, ns] : src->claims) {
      size_t colon = claim.find(':');
      if (colon == std::string::npos) continue;
      std::string table = claim.substr(0, colon), id = claim.substr(colon + 1);
      if (table != "kernel" && table != "memcpy" && table != "memset" && table != "api_call" && table != "range") continue;
      if (id.empty() || !std::all_of(id.begin(), id.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        continue;
      try {
        cited.push_back({table, std::stoll(id)});
      } catch (...) {
      }
    }
  }
  Evidence ev;
  ev.cited = cited.size();
  std::set<RowRef> seen;
  for (auto ref : cited) {
    if (ev.rows.size() >= cap) break;
    if (ref.table == "op") {
      SQLite::Statement q(db, "SELECT range_id FROM _op WHERE id = ? AND range_id IS NOT NULL");
      q.bind(1, ref.id);
      if (!q.executeStep()) continue;
      ref = {"range", q.getColumn(0).getInt64()};
    }
    if (!seen.insert(ref).second) continue;
    SQLite::Statement q(db, "SELECT trace_id, start_ns, start_ns + dur_ns FROM _" + ref.table + " WHERE id = ?");
    q.bind(1, ref.id);
    if (!q.executeStep()) continue;
    int64_t trace = q.getColumn(0).getInt64(), s = q.getColumn(1).getInt64(), e = q.getColumn(2).getInt64();
    if (f.scope.trace_id && *f.scope.trace_id != trace) continue;
    if (ev.rows.empty()) {
      ev.trace_id = trace;
      auto t = traces.find(trace);
      if (t != traces.end())
        for (const auto& it : t->second.iterations)
          if (s >= it.win_start && s < it.win_end) {
            ev.iteration = it.ordinal;
            break;
          }
    }
    if (trace != ev.trace_id) continue;
    ev.rows.push_back(ref);
    ev.first_start = ev.first_start ? std::min(*ev.first_start, s) : s;
    ev.last_end = ev.last_end ? std::max(*ev.last_end, e) : e;
  }
  if (ev.trace_id < 0 && f.scope.trace_id) ev.trace_id = *f.scope.trace_id;
  if (!ev.iteration && f.scope.iter_first) ev.iteration = f.scope.iter_first;
  return ev;
}

}  // namespace

std::string render_findings_html(Store& store, const AnalysisResult& result, const HtmlLimits& limits) {
  SQLite::Database& db = store.db();
  json data;
  data["kind"] = "analysis";
  data["version"] = PROFLINT_VERSION;
  data["analysis"] = json::parse(render_findings_json(result));
  data["summary"] = json::parse(render_summary_json(result.summaries));
  std::map<int64_t, TraceInfo> traces;
  for (const auto& s : result.summaries) traces[s.trace_id] = load_trace(db, s.trace_id);
  if (traces.empty()) {
    SQLite::Statement q(db, "SELECT trace_id FROM trace ORDER BY trace_id");
    while (q.executeStep()) traces[q.getColumn(0).getInt64()] = load_trace(db, q.getColumn(0).getInt64());
  }
  json trace_data = json::array();
  for (const auto& [id, t] : traces) {
    json tj = {{"trace_id", id}, {"start_ns", t.start}, {"wall_ns", t.end - t.start}};
    tj["iterations"] = iterations_json(db, t);
    tj["series"] = series_json(db, t, limits);
    // Sections shown only when the trace has them (the page reads the rest from the summary).
    const TraceSummary* sm = nullptr;
    for (const auto& ts : result.summaries)
      if (ts.trace_id == id) sm = &ts;
    if (sm && !sm->system_view.gpus.empty()) {
      json sys = system_series_json(db, t, sm->system_view, limits);
      if (!sys.is_null()) tj["system"] = sys;
    }
    if (sm && !sm->graphs.empty()) tj["graph_ops"] = graph_ops_json(db, id);
    trace_data.push_back(tj);
  }
  data["traces"] = trace_data;
  int64_t kernel_total = 0, op_total = 0;
  data["kernels"] = {{"columns", {"kernel", "category", "tensor_core", "calls", "total_ns", "min_ns", "max_ns"}},
                     {"rows", kernel_table(db, limits, kernel_total)}};
  data["kernels"]["total"] = kernel_total;
  data["op_types"] = {{"columns", {"op_type", "calls", "cpu_ns", "kernels", "gpu_ns", "tc_ns", "tc_eligible"}},
                      {"rows", op_table(db, limits, op_total)}};
  data["op_types"]["total"] = op_total;

  // Evidence of every finding, then the iterations the timeline shows: first those holding the
  // evidence of the highest-ranked findings, then each trace's median and slowest steady steps.
  std::vector<Evidence> evidence;
  for (const auto& f : result.findings) evidence.push_back(resolve_evidence(db, f, traces, limits.evidence_rows));
  std::vector<std::pair<int64_t, std::optional<int64_t>>> wanted;  // (trace, iteration or whole window)
  auto want = [&](int64_t trace, std::optional<int64_t> it) {
    if (!traces.count(trace)) return;
    std::pair<int64_t, std::optional<int64_t>> w{trace, it};
    if (std::find(wanted.begin(), wanted.end(), w) == wanted.end()) wanted.push_back(w);
  };
  for (size_t i = 0; i < evidence.size(); ++i) {
    const auto& ev = evidence[i];
    auto found = traces.find(ev.trace_id);
    if (found == traces.end()) continue;
    const auto& t = found->second;
    if (t.iterations.empty()) want(ev.trace_id, std::nullopt);
    else if (ev.iteration && find_iteration(t, *ev.iteration))
      want(ev.trace_id, ev.iteration);
  }
  for (const auto& [id, t] : traces) {
    if (t.iterations.empty()) {
      want(id, std::nullopt);
      continue;
    }
    std::vector<int64_t> d;
    for (const auto& it : t.iterations) d.push_back(it.dur);
    size_t skip = std::min(gate::warmup_count(d, 0.2), t.iterations.size() - 1);
    std::vector<const Iteration*> steady;
    for (size_t i = skip; i < t.iterations.size(); ++i) steady.push_back(&t.iterations[i]);
    std::vector<const Iteration*> by_dur = steady;
    std::stable_sort(by_dur.begin(), by_dur.end(), [](const auto* a, const auto* b) { return a->dur < b->dur; });
    want(id, by_dur[by_dur.size() / 2]->ordinal);
    want(id, by_dur.back()->ordinal);
  }
  // Views with a trace first in the list keep theirs; each view gets the events left in the budget.
  std::vector<View> views;
  std::vector<std::string> reductions;
  Names names;
  size_t left = limits.timeline_events, dropped = 0;
  for (const auto& [trace, it] : wanted) {
    if (views.size() >= limits.timeline_views || left == 0) {
      ++dropped;
      continue;
    }
    const auto& t = traces[trace];
    int64_t t0 = t.start, t1 = t.end;
    if (it) t0 = find_iteration(t, *it)->win_start, t1 = find_iteration(t, *it)->win_end;
    View v = collect_view(db, trace, t0, std::max(t1, t0 + 1), left, names);
    v.iteration = it;
    left -= std::min(left, v.events);
    views.push_back(std::move(v));
  }
  std::stable_sort(views.begin(), views.end(), [](const View& a, const View& b) {
    return std::tie(a.trace_id, a.t0) < std::tie(b.trace_id, b.t0);
  });
  json view_list = json::array();
  for (const auto& v : views) {
    const auto& t = traces[v.trace_id];
    std::string label = traces.size() > 1 ? "trace " + std::to_string(v.trace_id) + " · " : "";
    if (v.iteration) {
      const auto& it = *find_iteration(t, *v.iteration);
      label += "iteration " + std::to_string(*v.iteration) + (it.number ? " (step " + std::to_string(*it.number) + ")" : "");
    } else {
      label += "whole capture";
    }
    if (v.truncated) {
      label += " — first " + std::to_string(v.events) + " events";
      reductions.push_back(label + ": the event budget of the timeline (" + std::to_string(limits.timeline_events) +
                           " events over all views) cut it");
    }
    view_list.push_back(view_json(v, label));
  }
  if (dropped)
    reductions.push_back(std::to_string(dropped) + " more iteration(s) holding findings' evidence have no timeline (at most " +
                         std::to_string(limits.timeline_views) + " iterations or " + std::to_string(limits.timeline_events) +
                         " events are kept)");
  // Each finding: where it happens, and what to light up in the timeline.
  json highlights = json::array();
  for (size_t i = 0; i < result.findings.size(); ++i) {
    const auto& f = result.findings[i];
    const auto& ev = evidence[i];
    json h;
    h["rows_cited"] = ev.cited;
    h["rows_found"] = ev.rows.size();
    std::optional<size_t> vi;
    for (size_t k = 0; k < views.size() && !vi; ++k)
      for (const auto& r : ev.rows)
        if (views[k].where.count(r)) {
          vi = k;
          break;
        }
    for (size_t k = 0; k < views.size() && !vi; ++k)
      if (views[k].trace_id == ev.trace_id && (!ev.iteration || views[k].iteration == ev.iteration || !views[k].iteration))
        vi = k;
    if (ev.first_start) {
      int64_t base = traces.count(ev.trace_id) ? traces[ev.trace_id].start : 0;
      h["time_ns"] = {*ev.first_start - base, *ev.last_end - base};
    }
    h["trace_id"] = ev.trace_id >= 0 ? json(ev.trace_id) : json(nullptr);
    h["iteration"] = ev.iteration ? json(*ev.iteration) : json(nullptr);
    if (vi) {
      const View& v = views[*vi];
      json events = json::array();
      std::optional<int64_t> in_start, in_end;  // span of the evidence events this window holds
      for (const auto& r : ev.rows) {
        auto w = v.where.find(r);
        if (w == v.where.end()) continue;
        events.push_back({w->second.first, w->second.second});
        const Event& e = v.lanes[w->second.first].events[w->second.second];
        in_start = in_start ? std::min(*in_start, e.start) : e.start;
        in_end = in_end ? std::max(*in_end, e.start + e.dur) : e.start + e.dur;
      }
      json lanes = json::array();
      if (f.scope.device_id)
        for (size_t l = 0; l < v.lanes.size(); ++l)
          if (v.lanes[l].device == *f.scope.device_id) lanes.push_back(l);
      // The band: the span of the evidence events in this view, else the evidence's whole span clipped to
      // the view, else the iterations in scope, else the view.
      int64_t b0 = v.t0, b1 = v.t1;
      if (in_start) {
        b0 = std::max(v.t0, *in_start), b1 = std::min(v.t1, *in_end);
      } else if (ev.first_start && *ev.last_end > v.t0 && *ev.first_start < v.t1) {
        b0 = std::max(v.t0, *ev.first_start), b1 = std::min(v.t1, *ev.last_end);
      } else if (f.scope.iter_first && traces.count(v.trace_id)) {
        const TraceInfo& t = traces[v.trace_id];
        const Iteration* a = find_iteration(t, *f.scope.iter_first);
        const Iteration* b = find_iteration(t, f.scope.iter_last.value_or(*f.scope.iter_first));
        if (a && b) {
          b0 = std::max(v.t0, a->win_start);
          b1 = std::min(v.t1, b->win_end);
          if (b1 <= b0) b0 = v.t0, b1 = v.t1;
        }
      }
      h["view"] = *vi;
      h["band_ns"] = {b0 - v.t0, b1 - v.t0};
      h["events"] = events;
      h["lanes"] = lanes;
    } else {
      h["view"] = nullptr;
    }
    highlights.push_back(h);
  }
  data["timeline"] = {{"names", names.to_json()},
                      {"classes", {"kernel (Tensor Core)", "kernel", "communication", "memcpy", "memset", "runtime API",
                                   "CPU op", "annotation", "NVTX", "Python", "GPU annotation"}},
                      {"views", view_list}};
  data["highlights"] = highlights;
  data["reductions"] = reductions;
  data["limits"] = {{"timeline_events", limits.timeline_events}, {"timeline_views", limits.timeline_views},
                    {"time_bins", limits.time_bins}, {"table_rows", limits.table_rows}};
  std::string title = "proflint report";
  if (!result.summaries.empty()) title += " — " + result.summaries.front().path;
  return page(title, data);
}

std::string render_compare_html(const gate::CompareResult& result, const std::vector<const gate::Side*>& baselines,
                                const gate::Side& candidate) {
  auto steps = [](const gate::Side& s) {
    json out = json::array();
    for (const auto& m : s.metrics)
      if (m.name == "iteration_time" && m.per_iteration && m.scope.empty()) {
        for (double v : m.samples) out.push_back(v);
        break;
      }
    return out;
  };
  json base = json::array();
  for (const auto* b : baselines)
    for (const auto& v : steps(*b)) base.push_back(v);
  json data;
  data["kind"] = "compare";
  data["version"] = PROFLINT_VERSION;
  data["compare"] = json::parse(render_compare_json(result));
  data["sides"] = json::array({{{"label", result.mode == "history" ? "past runs" : "baseline"}, {"steps_ns", base}},
                               {{"label", "candidate"}, {"steps_ns", steps(candidate)}}});
  return page("proflint compare — " + std::string(gate::verdict_name(result.verdict)), data);
}

}  // namespace proflint
