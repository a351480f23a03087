// engine/export/ranks.cpp — see ranks.hpp.
#include "engine/export/ranks.hpp"

#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <set>

namespace proflint::exporter {

namespace {

bool has_table(Store& store, const char* name) {
  SQLite::Statement q(store.db(), "SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?");
  q.bind(1, name);
  return q.executeStep();
}

std::optional<int64_t> opt(const SQLite::Column& c) {
  if (c.isNull()) return std::nullopt;
  return c.getInt64();
}

std::string base_name(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  return name.empty() ? path : name;
}

}  // namespace

std::vector<RankView> rank_views(Store& store) {
  std::vector<RankView> out;
  std::set<int64_t> covered;
  if (has_table(store, "job_rank")) {
    SQLite::Statement q(store.db(),
                        "SELECT r.job_id, r.rank, r.trace_id, r.pid, r.device_id, r.clock_offset_ns, t.path "
                        "FROM job_rank r JOIN trace t USING (trace_id) ORDER BY r.job_id, r.rank, r.trace_id");
    while (q.executeStep()) {
      RankView v;
      v.job_id = q.getColumn(0).getInt64();
      v.rank = q.getColumn(1).getInt64();
      v.trace_id = q.getColumn(2).getInt64();
      v.pid = opt(q.getColumn(3));
      v.device_id = v.pid ? opt(q.getColumn(4)) : std::nullopt;
      v.clock_offset_ns = q.getColumn(5).isNull() ? 0 : q.getColumn(5).getInt64();
      v.path = q.getColumn(6).getString();
      covered.insert(v.trace_id);
      out.push_back(std::move(v));
    }
  }
  // Traces the job tables do not list (or no job tables at all): one rank each, in trace order,
  // numbered by distributedInfo.rank when every trace has a distinct one.
  std::vector<RankView> rest;
  std::set<int64_t> ranks;
  bool distinct = true;
  SQLite::Statement q(store.db(), "SELECT trace_id, rank, path FROM trace ORDER BY trace_id");
  while (q.executeStep()) {
    int64_t id = q.getColumn(0).getInt64();
    if (covered.count(id)) continue;
    RankView v;
    v.trace_id = id;
    auto rank = opt(q.getColumn(1));
    if (!rank || !ranks.insert(*rank).second) distinct = false;
    v.rank = rank.value_or(0);
    v.path = q.getColumn(2).getString();
    rest.push_back(std::move(v));
  }
  int64_t next = out.empty() ? 0 : out.back().rank + 1;
  bool renumber = !distinct || !out.empty();
  for (auto& v : rest) {
    if (renumber) v.rank = next++;
    out.push_back(std::move(v));
  }
  // Two jobs in one export would repeat rank numbers: labels say which job.
  std::set<int64_t> jobs;
  for (const auto& v : out)
    if (v.job_id) jobs.insert(*v.job_id);
  for (auto& v : out) {
    v.label = "rank " + std::to_string(v.rank);
    if (jobs.size() > 1 && v.job_id) v.label = "job " + std::to_string(*v.job_id) + " " + v.label;
    v.label += " (" + base_name(v.path) + (v.pid ? ", pid " + std::to_string(*v.pid) : "") + ")";
  }
  return out;
}

// `+trace_id` keeps SQLite off the (trace_id, ...) indexes: the exporters read whole tables in id
// order, which a scan in rowid order gives without sorting millions of rows.
std::string host_filter(const RankView& r, const std::string& alias) {
  std::string f = "+" + alias + ".trace_id = " + std::to_string(r.trace_id);
  if (r.pid) f += " AND " + alias + ".pid = " + std::to_string(*r.pid);
  return f;
}

std::string gpu_filter(const RankView& r, const std::string& alias) {
  std::string f = "+" + alias + ".trace_id = " + std::to_string(r.trace_id);
  if (!r.pid) return f;
  // GPU rows of an nsys export carry the launching process; those without one follow the device.
  f += " AND (" + alias + ".pid = " + std::to_string(*r.pid);
  if (r.device_id) f += " OR (" + alias + ".pid IS NULL AND " + alias + ".device_id = " + std::to_string(*r.device_id) + ")";
  return f + ")";
}

std::vector<TrackKey> host_threads(Store& store, const RankView& r) {
  std::set<TrackKey> keys;
  SQLite::Statement q(store.db(), "SELECT DISTINCT a.pid, a.tid FROM _api_call a WHERE " + host_filter(r, "a") +
                                      " AND a.pid IS NOT NULL AND a.tid IS NOT NULL UNION SELECT DISTINCT a.pid, a.tid FROM _range a WHERE " +
                                      host_filter(r, "a") + " AND a.pid IS NOT NULL AND a.tid IS NOT NULL AND a.device_id IS NULL");
  while (q.executeStep()) keys.emplace(q.getColumn(0).getInt64(), q.getColumn(1).getInt64());
  return {keys.begin(), keys.end()};
}

std::vector<TrackKey> gpu_tracks(Store& store, const RankView& r) {
  std::set<TrackKey> keys;
  std::string sql;
  for (const char* table : {"_kernel", "_memcpy", "_memset", "sync_event"})
    sql += std::string(sql.empty() ? "" : " UNION ") + "SELECT DISTINCT COALESCE(a.device_id, -1), COALESCE(a.stream_id, -1) FROM " +
           table + " a WHERE " + gpu_filter(r, "a");
  // GPU-side annotations: device_id set, pid NULL, the stream in tid.
  sql += " UNION SELECT DISTINCT a.device_id, COALESCE(a.tid, -1) FROM _range a WHERE " + gpu_filter(r, "a") +
         " AND a.device_id IS NOT NULL AND a.pid IS NULL";
  SQLite::Statement q(store.db(), sql);
  while (q.executeStep()) keys.emplace(q.getColumn(0).getInt64(), q.getColumn(1).getInt64());
  return {keys.begin(), keys.end()};
}

std::map<TrackKey, std::string> thread_names(Store& store, const RankView& r) {
  std::map<TrackKey, std::string> names;
  SQLite::Statement q(store.db(), "SELECT a.pid, a.tid, a.name FROM thread a WHERE " + host_filter(r, "a") +
                                      " AND a.name IS NOT NULL AND a.name != ''");
  while (q.executeStep()) names[{q.getColumn(0).getInt64(), q.getColumn(1).getInt64()}] = q.getColumn(2).getString();
  return names;
}

FindingPlacer::FindingPlacer(Store& store, const std::vector<RankView>& views) : views_(views) {
  for (const auto& v : views) {
    Window w;
    SQLite::Statement q(store.db(), "SELECT COALESCE(start_ns, 0), COALESCE(end_ns, 0) FROM trace WHERE trace_id = ?");
    q.bind(1, v.trace_id);
    if (q.executeStep()) {
      w.start_ns = q.getColumn(0).getInt64();
      w.end_ns = q.getColumn(1).getInt64();
    }
    SQLite::Statement iq(store.db(),
                         "SELECT iteration, start_ns, MAX(end_ns, COALESCE(gpu_end_ns, end_ns)) FROM iteration "
                         "WHERE trace_id = ? ORDER BY iteration");
    iq.bind(1, v.trace_id);
    while (iq.executeStep()) w.iterations[iq.getColumn(0).getInt64()] = {iq.getColumn(1).getInt64(), iq.getColumn(2).getInt64()};
    windows_.push_back(std::move(w));
  }
}

std::optional<FindingPlace> FindingPlacer::place(const Finding& f) const {
  if (views_.empty()) return std::nullopt;
  size_t k = 0;
  bool found = false;
  if (f.scope.rank) {
    for (size_t i = 0; i < views_.size() && !found; ++i)
      if (views_[i].rank == *f.scope.rank && (!f.scope.trace_id || views_[i].trace_id == *f.scope.trace_id)) k = i, found = true;
  }
  if (!found && f.scope.trace_id) {
    for (size_t i = 0; i < views_.size() && !found; ++i)
      if (views_[i].trace_id == *f.scope.trace_id) k = i, found = true;
  }
  const RankView& v = views_[k];
  const Window& w = windows_[k];
  FindingPlace out;
  out.rank_index = k;
  if (f.scope.iter_first && !w.iterations.empty()) {
    int64_t first = *f.scope.iter_first, last = f.scope.iter_last.value_or(first);
    auto a = w.iterations.find(first), b = w.iterations.find(last);
    if (a != w.iterations.end() && b != w.iterations.end()) {
      out.start_ns = a->second.first + v.clock_offset_ns;
      out.end_ns = std::max(b->second.second, a->second.first) + v.clock_offset_ns;
      return out;
    }
  }
  if (f.scope.trace_id) {
    out.start_ns = w.start_ns + v.clock_offset_ns;
    out.end_ns = w.end_ns + v.clock_offset_ns;
    return out;
  }
  out.start_ns = INT64_MAX, out.end_ns = INT64_MIN;
  for (size_t i = 0; i < views_.size(); ++i) {
    out.start_ns = std::min(out.start_ns, windows_[i].start_ns + views_[i].clock_offset_ns);
    out.end_ns = std::max(out.end_ns, windows_[i].end_ns + views_[i].clock_offset_ns);
  }
  return out;
}

}  // namespace proflint::exporter
