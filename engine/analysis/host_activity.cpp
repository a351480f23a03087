// engine/analysis/host_activity.cpp — see host_activity.hpp.
#include "engine/analysis/host_activity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace proflint {

DeviceIdle device_idle(const Facts& facts, int64_t trace_id, int64_t device_id, const Interval& steady,
                       const IdleGapKeys& keys) {
  DeviceIdle out;
  out.device_id = device_id;
  out.steady = steady;
  out.idle = subtract_intervals({steady}, keys.busy());
  SQLite::Statement q(facts.db(),
                      "SELECT DISTINCT a.pid, a.tid FROM _api_call a WHERE a.trace_id = ?1 AND a.pid IS NOT NULL AND "
                      "a.tid IS NOT NULL AND a.id IN (SELECT api_call_id FROM _kernel WHERE trace_id = ?1 AND "
                      "coalesce(device_id, 0) = ?2 UNION SELECT api_call_id FROM _memcpy WHERE trace_id = ?1 AND "
                      "coalesce(device_id, 0) = ?2 UNION SELECT api_call_id FROM _memset WHERE trace_id = ?1 AND "
                      "coalesce(device_id, 0) = ?2)");
  q.bind(1, trace_id);
  q.bind(2, device_id);
  while (q.executeStep()) out.launchers.insert({q.getColumn(0).getInt64(), q.getColumn(1).getInt64()});
  return out;
}

std::vector<Interval> api_time_of(const Facts& facts, int64_t trace_id, const HostThread& t) {
  SQLite::Statement q(facts.db(),
                      "SELECT start_ns, start_ns + dur_ns FROM _api_call WHERE trace_id = ? AND pid = ? AND tid = ?");
  q.bind(1, trace_id);
  q.bind(2, t.pid);
  q.bind(3, t.tid);
  std::vector<Interval> out;
  while (q.executeStep()) out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64()});
  return union_intervals(std::move(out));
}

HostWaits host_waits(const Facts& facts, int64_t trace_id, int64_t device_id, const Interval& steady,
                     const IdleGapKeys& keys) {
  HostWaits out;
  out.idle = device_idle(facts, trace_id, device_id, steady, keys);
  std::map<std::string, OsWaitTotal> by_name;
  SQLite::Statement q(facts.db(),
                      "SELECT o.id, o.start_ns, o.end_ns, o.name, o.category, c.caller FROM os_call o LEFT JOIN "
                      "os_call_caller c ON c.id = o.id WHERE o.trace_id = ? AND o.pid = ? AND o.tid = ? AND "
                      "o.category IN ('io', 'wait', 'sleep') AND coalesce(o.nesting_level, 0) = 0 AND o.end_ns > ? AND "
                      "o.start_ns < ? ORDER BY o.start_ns, o.id");
  std::map<std::string, std::map<std::string, int64_t>> caller_ns;  // call name -> caller -> GPU-idle ns
  for (const HostThread& t : out.idle.launchers) {
    auto api = api_time_of(facts, trace_id, t);
    q.reset();
    q.bind(1, trace_id);
    q.bind(2, t.pid);
    q.bind(3, t.tid);
    q.bind(4, steady.start);
    q.bind(5, steady.end);
    while (q.executeStep()) {
      Interval call{q.getColumn(1).getInt64(), q.getColumn(2).getInt64()};
      auto waiting = intersect_intervals(subtract_intervals({call}, api), out.idle.idle);
      int64_t ns = total_length(waiting);
      if (ns <= 0) continue;
      std::string name = q.getColumn(3).getString();
      OsWaitTotal& c = by_name[name];
      c.name = name;
      c.category = q.getColumn(4).getString();
      ++c.calls;
      c.gpu_idle_ns += ns;
      if (ns > c.longest) {
        c.longest = ns;
        c.example = q.getColumn(0).getInt64();
      }
      if (!q.getColumn(5).isNull()) caller_ns[name][q.getColumn(5).getString()] += ns;
      out.blocked.insert(out.blocked.end(), waiting.begin(), waiting.end());
      auto& by_category = out.blocked_by_category[c.category];
      by_category.insert(by_category.end(), waiting.begin(), waiting.end());
      out.blocked_by_thread[t] += ns;
    }
  }
  out.blocked = union_intervals(std::move(out.blocked));
  for (auto& [category, pieces] : out.blocked_by_category) pieces = union_intervals(std::move(pieces));
  for (auto& [name, c] : by_name) {
    // The code that made most of this call's GPU-idle time (ties: the first name).
    int64_t best = 0;
    for (const auto& [caller, ns] : caller_ns[name])
      if (ns > best) {
        best = ns;
        c.caller = caller;
      }
    out.calls.push_back(std::move(c));
  }
  std::sort(out.calls.begin(), out.calls.end(), [](const OsWaitTotal& a, const OsWaitTotal& b) {
    return a.gpu_idle_ns != b.gpu_idle_ns ? a.gpu_idle_ns > b.gpu_idle_ns : a.name < b.name;
  });
  return out;
}

CpuHotspots cpu_hotspots(const Facts& facts, int64_t trace_id, int64_t device_id, const Interval& steady,
                         const IdleGapKeys& keys) {
  CpuHotspots out;
  out.idle = device_idle(facts, trace_id, device_id, steady, keys);
  SQLite::Statement q(facts.db(),
                      "SELECT id, ts_ns, coalesce(leaf, '<no call chain>') FROM cpu_sample WHERE trace_id = ? AND "
                      "pid = ? AND tid = ? AND ts_ns >= ? AND ts_ns < ? ORDER BY ts_ns, id");
  std::vector<int64_t> spacing;
  std::map<std::string, CpuHotspot> by_function;
  for (const HostThread& t : out.idle.launchers) {
    q.reset();
    q.bind(1, trace_id);
    q.bind(2, t.pid);
    q.bind(3, t.tid);
    q.bind(4, steady.start);
    q.bind(5, steady.end);
    int64_t prev = INT64_MIN;
    while (q.executeStep()) {
      int64_t ts = q.getColumn(1).getInt64();
      ++out.samples_in_window;
      // A running thread is sampled at a fixed rate; longer spacings are times it did not run.
      if (prev != INT64_MIN && ts > prev) spacing.push_back(ts - prev);
      prev = ts;
      if (length_within(out.idle.idle, {ts, ts + 1}) == 0) continue;
      ++out.samples_while_idle;
      ++out.idle_samples_by_thread[t];
      std::string f = q.getColumn(2).getString();
      CpuHotspot& h = by_function[f];
      h.function = f;
      ++h.samples;
      h.sample_ids.push_back(q.getColumn(0).getInt64());
      h.sample_ts.push_back(ts);
    }
  }
  if (!spacing.empty()) {
    std::nth_element(spacing.begin(), spacing.begin() + static_cast<std::ptrdiff_t>(spacing.size() / 2), spacing.end());
    out.period_ns = spacing[spacing.size() / 2];
  }
  for (auto& [f, h] : by_function) out.functions.push_back(std::move(h));
  std::sort(out.functions.begin(), out.functions.end(), [](const CpuHotspot& a, const CpuHotspot& b) {
    return a.samples != b.samples ? a.samples > b.samples : a.function < b.function;
  });
  return out;
}

namespace {

int64_t rows_of(SQLite::Database& db, const char* table, int64_t trace_id) {
  try {
    SQLite::Statement q(db, std::string("SELECT COUNT(*) FROM ") + table + " WHERE trace_id = ?");
    q.bind(1, trace_id);
    return q.executeStep() ? q.getColumn(0).getInt64() : 0;
  } catch (const SQLite::Exception&) {
    return 0;  // a store older than schema 0007
  }
}

}  // namespace

HostActivitySummary summarize_host_activity(SQLite::Database& db, const TraceSummary& s) {
  HostActivitySummary out;
  out.os_calls_recorded = rows_of(db, "_os_call", s.trace_id);
  out.cpu_samples_recorded = rows_of(db, "_cpu_sample", s.trace_id);
  if (out.empty()) return out;
  const Facts facts(db, {s});
  for (const DeviceSummary& d : s.devices) {
    HostActivityDevice hd;
    hd.device_id = d.device_id;
    const Interval steady{d.steady_start_ns, d.steady_end_ns};
    hd.steady_window_ns = steady.length();
    const IdleGapKeys keys(facts, s.trace_id, d.device_id);
    if (out.os_calls_recorded > 0) {
      HostWaits w = host_waits(facts, s.trace_id, d.device_id, steady, keys);
      hd.gpu_idle_ns = total_length(w.idle.idle);
      hd.launching_threads = static_cast<int64_t>(w.idle.launchers.size());
      hd.blocked_ns = total_length(w.blocked);
      for (const char* category : {"io", "wait", "sleep"}) {
        auto found = w.blocked_by_category.find(category);
        hd.blocked_by_category_ns[category] = found == w.blocked_by_category.end() ? 0 : total_length(found->second);
      }
      hd.os_call_names = static_cast<int64_t>(w.calls.size());
      for (size_t i = 0; i < w.calls.size() && i < kHostActivityRows; ++i)
        hd.os_calls.push_back({w.calls[i].name, w.calls[i].category, w.calls[i].calls, w.calls[i].gpu_idle_ns, w.calls[i].longest});
    }
    if (out.cpu_samples_recorded > 0) {
      CpuHotspots h = cpu_hotspots(facts, s.trace_id, d.device_id, steady, keys);
      hd.gpu_idle_ns = total_length(h.idle.idle);
      hd.launching_threads = static_cast<int64_t>(h.idle.launchers.size());
      hd.cpu_samples_in_window = h.samples_in_window;
      hd.cpu_samples_while_idle = h.samples_while_idle;
      hd.cpu_sample_period_ns = h.period_ns;
      hd.hotspot_functions = static_cast<int64_t>(h.functions.size());
      // The module of each listed function: its innermost frame's library, file name only, from the
      // first of its samples that records one.
      SQLite::Statement mq(db, "SELECT module FROM cpu_frame WHERE sample_id = ? AND depth = 0 AND module IS NOT NULL");
      for (size_t i = 0; i < h.functions.size() && i < kHostActivityRows; ++i) {
        HostHotspotSummary row{h.functions[i].function, "", h.functions[i].samples};
        for (int64_t id : h.functions[i].sample_ids) {
          mq.reset();
          mq.bind(1, id);
          if (!mq.executeStep()) continue;
          std::string module = mq.getColumn(0).getString();
          row.module = module.substr(module.find_last_of('/') + 1);
          if (!row.module.empty()) break;
        }
        hd.hotspots.push_back(std::move(row));
      }
    }
    out.devices.push_back(std::move(hd));
  }
  return out;
}

std::string thread_label(const Facts& facts, int64_t trace_id, const HostThread& t) {
  SQLite::Statement q(facts.db(), "SELECT name FROM thread WHERE trace_id = ? AND pid = ? AND tid = ? AND name IS NOT NULL");
  q.bind(1, trace_id);
  q.bind(2, t.pid);
  q.bind(3, t.tid);
  if (q.executeStep() && !q.getColumn(0).getString().empty())
    return fmt::format("thread {} '{}' (process {})", t.tid, q.getColumn(0).getString(), t.pid);
  return fmt::format("thread {} (process {})", t.tid, t.pid);
}

}  // namespace proflint
