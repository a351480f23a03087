// engine/analysis/summary.cpp — headline metrics from derived facts (see summary.hpp).
#include "engine/analysis/summary.hpp"

#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <future>
#include <memory>

#include "engine/analysis/host_activity.hpp"
#include "engine/common/jobs.hpp"
#include "engine/common/saturate.hpp"

namespace proflint {

namespace {

std::optional<std::string> opt_text(SQLite::Statement& q, int col) {
  if (q.isColumnNull(col)) return std::nullopt;
  return q.getColumn(col).getString();
}

std::optional<int64_t> opt_int(SQLite::Statement& q, int col) {
  if (q.isColumnNull(col)) return std::nullopt;
  return q.getColumn(col).getInt64();
}

int64_t scalar(SQLite::Database& db, const char* sql, int64_t trace_id, std::optional<int64_t> device = std::nullopt) {
  SQLite::Statement q(db, sql);
  q.bind(1, trace_id);
  if (device) q.bind(2, *device);
  if (!q.executeStep() || q.isColumnNull(0)) return 0;
  return q.getColumn(0).getInt64();
}

// Only the iterations the derivation aggregated (iteration.selected: --iter-start/--iter-stop)
// count: the per-iteration figures detectors derive from restricted totals must divide by the same
// steps.
IterationSummary summarize_iterations(SQLite::Database& db, int64_t trace_id, const std::optional<std::string>& source) {
  IterationSummary it;
  it.source = source.value_or("none");
  SQLite::Statement q(db, "SELECT dur_ns FROM iteration WHERE trace_id = ? AND selected = 1 ORDER BY iteration");
  q.bind(1, trace_id);
  while (q.executeStep()) it.durations_ns.push_back(q.getColumn(0).getInt64());
  it.count = static_cast<int64_t>(it.durations_ns.size());
  if (it.count == 0) return it;
  double sum = 0;
  for (auto d : it.durations_ns) sum += static_cast<double>(d);
  it.mean_ns = sum / static_cast<double>(it.count);
  double var = 0;
  for (auto d : it.durations_ns) var += (static_cast<double>(d) - it.mean_ns) * (static_cast<double>(d) - it.mean_ns);
  it.stddev_ns = it.count > 1 ? std::sqrt(var / static_cast<double>(it.count - 1)) : 0.0;
  auto sorted = it.durations_ns;
  std::sort(sorted.begin(), sorted.end());
  it.min_ns = sorted.front();
  it.max_ns = sorted.back();
  it.median_ns = sorted[sorted.size() / 2];
  if (sorted.size() % 2 == 0) it.median_ns = (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  return it;
}

// Name and compute capability of d.device_id, as the trace describes it.
void describe_device(SQLite::Database& db, int64_t trace_id, DeviceSummary& d) {
  SQLite::Statement q(db, "SELECT name, compute_major, compute_minor FROM device WHERE trace_id = ? AND device_id = ?");
  q.bind(1, trace_id);
  q.bind(2, d.device_id);
  if (q.executeStep()) {
    d.name = q.isColumnNull(0) ? "" : q.getColumn(0).getString();
    if (!q.isColumnNull(1)) d.compute_major = q.getColumn(1).getInt();
    if (!q.isColumnNull(2)) d.compute_minor = q.getColumn(2).getInt();
  }
}

// Tensor-Core-eligible ops, each counted once at the outermost eligible op of its sub-tree (the
// only op derivation marks tc_eligible there), grouped into op nodes as the DLProf-style reports
// group them (op_node_key): a node uses Tensor Cores when any instance ran a Tensor Core kernel.
void summarize_tc_eligible(SQLite::Database& db, TraceSummary& s, const std::string& range) {
  struct Node {
    int64_t gpu = 0, tc = 0;
  };
  std::map<std::string, Node> nodes;
  SQLite::Statement q(db,
                      "SELECT COALESCE(o.path, '/' || o.name), COALESCE(o.pass, ''), COALESCE(o.op_type, ''), "
                      "COALESCE(i.name, ''), COALESCE(o.gpu_time_ns, 0), COALESCE(o.tc_time_ns, 0) FROM op o "
                      "LEFT JOIN iteration i ON i.trace_id = o.trace_id AND i.iteration = o.iteration "
                      "WHERE o.trace_id = ? AND o.tc_eligible = 1" +
                          (range.empty() ? std::string() : " AND o." + range.substr(5)));
  q.bind(1, s.trace_id);
  while (q.executeStep()) {
    auto& n = nodes[op_node_key(op_node_name(q.getColumn(0).getString(), q.getColumn(3).getString()),
                                q.getColumn(1).getString(), q.getColumn(2).getString())];
    add_saturating(n.gpu, q.getColumn(4).getInt64());
    add_saturating(n.tc, q.getColumn(5).getInt64());
  }
  for (const auto& [key, n] : nodes) {
    ++s.tc_eligible_ops;
    add_saturating(s.tc_eligible_gpu_ns, n.gpu);
    add_saturating(s.tc_eligible_tc_ns, n.tc);
    if (n.tc == 0) {
      ++s.tc_eligible_ops_no_tc;
      add_saturating(s.tc_eligible_no_tc_gpu_ns, n.gpu);
    }
  }
}

// `range` restricts GPU work to the iterations the derivation aggregated (--iter-start/--iter-stop:
// iteration.selected): the breakdown window is restricted, so the sums beside it must be too. It is
// "" when unrestricted, else " AND iteration IN (<the trace's selected iterations>)".
DeviceSummary summarize_device(SQLite::Database& db, int64_t trace_id, int64_t device_id,
                               const std::string& range = "") {
  DeviceSummary d;
  d.device_id = device_id;
  describe_device(db, trace_id, d);
  {
    SQLite::Statement q(
        db, "SELECT category, time_ns FROM breakdown WHERE trace_id = ? AND device_id = ? AND iteration = -1");
    q.bind(1, trace_id);
    q.bind(2, device_id);
    while (q.executeStep()) d.breakdown_ns[q.getColumn(0).getString()] = q.getColumn(1).getInt64();
  }
  for (const auto& [cat, ns] : d.breakdown_ns) {
    add_saturating(d.window_ns, ns);
    if (cat == "kernel_tc" || cat == "kernel_other" || cat == "communication") add_saturating(d.kernel_busy_ns, ns);
    if (cat == "kernel_tc" || cat == "kernel_other" || cat == "communication" || cat == "memcpy" || cat == "memset")
      add_saturating(d.gpu_busy_ns, ns);
  }
  // One scan of the device's kernels for all kernel figures. A kernel is in an eligible op when
  // derivation linked it to one (tc_eligible_op_id: the outermost eligible op above its own op).
  // Eligible-but-not-used counts only the math kernels of eligible ops: helper kernels of a conv
  // (im2col, transposes) could not have used Tensor Cores anyway.
  SQLite::Statement k(db,
                      "SELECT count(*), COALESCE(sum(dur_ns),0), "
                      "COALESCE(sum(CASE WHEN is_tensor_core = 1 THEN dur_ns END),0), "
                      "COALESCE(sum(CASE WHEN category = 'communication' THEN dur_ns END),0), "
                      "COALESCE(sum(CASE WHEN is_tensor_core = 0 AND category IN ('gemm', 'conv', 'attention') "
                      "AND tc_eligible_op_id IS NOT NULL THEN dur_ns END),0) "
                      "FROM _kernel k WHERE trace_id = ? AND device_id IS ?" +
                          range);
  k.bind(1, trace_id);
  k.bind(2, device_id);
  if (k.executeStep()) {
    d.kernel_count = k.getColumn(0).getInt64();
    d.kernel_time_ns = k.getColumn(1).getInt64();
    d.tensor_core_time_ns = k.getColumn(2).getInt64();
    d.communication_time_ns = k.getColumn(3).getInt64();
    d.tc_eligible_not_used_ns = k.getColumn(4).getInt64();
  }
  SQLite::Statement m(db,
                      "SELECT count(*), COALESCE(sum(dur_ns),0), COALESCE(sum(bytes),0) FROM _memcpy WHERE trace_id = "
                      "? AND device_id IS ?" +
                          range);
  m.bind(1, trace_id);
  m.bind(2, device_id);
  if (m.executeStep()) {
    d.memcpy_count = m.getColumn(0).getInt64();
    d.memcpy_time_ns = m.getColumn(1).getInt64();
    d.memcpy_bytes = m.getColumn(2).getInt64();
  }
  d.memset_time_ns =
      scalar(db, ("SELECT sum(dur_ns) FROM _memset WHERE trace_id = ? AND device_id IS ?" + range).c_str(), trace_id,
             device_id);
  {
    SQLite::Statement q(db,
                        "SELECT start_ns, end_ns, startup_ns, COALESCE(startup_cause, ''), COALESCE(startup_evidence, ''), "
                        "kernel_tc_ns, kernel_other_ns, communication_ns, memcpy_ns, memset_ns, runtime_ns, dataloader_ns, "
                        "cpu_ns, idle_ns FROM steady_state WHERE trace_id = ? AND device_id = ?");
    q.bind(1, trace_id);
    q.bind(2, device_id);
    if (q.executeStep()) {
      d.steady_start_ns = q.getColumn(0).getInt64();
      d.steady_end_ns = q.getColumn(1).getInt64();
      d.startup_ns = q.getColumn(2).getInt64();
      d.startup_cause = q.getColumn(3).getString();
      d.startup_evidence = q.getColumn(4).getString();
      const char* cats[] = {"kernel_tc", "kernel_other", "communication", "memcpy", "memset",
                            "runtime",   "dataloader",   "cpu",           "idle"};
      for (int c = 0; c < 9; ++c) d.steady_breakdown_ns[cats[c]] = q.getColumn(5 + c).getInt64();
    } else {
      d.steady_breakdown_ns = d.breakdown_ns;
    }
  }
  for (const auto& [cat, ns] : d.steady_breakdown_ns) {
    add_saturating(d.steady_window_ns, ns);
    if (cat == "kernel_tc" || cat == "kernel_other" || cat == "communication") add_saturating(d.steady_kernel_busy_ns, ns);
    if (cat == "kernel_tc" || cat == "kernel_other" || cat == "communication" || cat == "memcpy" || cat == "memset")
      add_saturating(d.steady_gpu_busy_ns, ns);
  }
  if (d.steady_window_ns > 0)
    d.steady_gpu_utilization = static_cast<double>(d.steady_kernel_busy_ns) / static_cast<double>(d.steady_window_ns);
  if (d.window_ns > 0) d.gpu_utilization = static_cast<double>(d.kernel_busy_ns) / static_cast<double>(d.window_ns);
  if (d.kernel_time_ns > 0)
    d.tensor_core_share = static_cast<double>(d.tensor_core_time_ns) / static_cast<double>(d.kernel_time_ns);
  return d;
}

}  // namespace

std::string op_node_name(const std::string& path, const std::string& iteration_name) {
  // ProfilerStep#5/... and ProfilerStep#6/... are the same node in two iterations.
  if (iteration_name.empty()) return path;
  std::string prefix = "/" + iteration_name + "/";
  return path.rfind(prefix, 0) == 0 ? path.substr(prefix.size() - 1) : path;
}

std::string op_node_key(const std::string& node_name, const std::string& pass, const std::string& op_type) {
  return node_name + '\x1f' + (pass.empty() ? std::string("other") : pass) + '\x1f' + op_type;
}

namespace {

// CUDA graphs and torch.compile regions (schema/0009_graphs_compiled.sql).
void summarize_graphs_compiled(SQLite::Database& db, TraceSummary& s) {
  SQLite::Statement graphs(db,
                           "SELECT graph_id, id_source, device_id, replays, kernels_per_replay, gpu_time_ns, gpu_time_per_replay_ns, "
                           "span_per_replay_ns, capture_start_ns IS NOT NULL, COALESCE(captured_ops, 0), COALESCE(top_captured_op, '') "
                           "FROM cuda_graph WHERE trace_id = ? ORDER BY gpu_time_ns DESC, graph_id");
  graphs.bind(1, s.trace_id);
  while (graphs.executeStep()) {
    GraphSummary g;
    g.graph_id = graphs.getColumn(0).getInt64();
    g.id_source = graphs.getColumn(1).getString();
    if (!graphs.getColumn(2).isNull()) g.device_id = graphs.getColumn(2).getInt64();
    g.replays = graphs.getColumn(3).getInt64();
    g.kernels_per_replay = graphs.getColumn(4).getInt64();
    g.gpu_time_ns = graphs.getColumn(5).getInt64();
    g.gpu_time_per_replay_ns = graphs.getColumn(6).getInt64();
    g.span_per_replay_ns = graphs.getColumn(7).getInt64();
    g.capture_in_trace = graphs.getColumn(8).getInt64() != 0;
    g.captured_ops = graphs.getColumn(9).getInt64();
    g.top_captured_op = graphs.getColumn(10).getString();
    s.graphs.push_back(std::move(g));
  }
  CompiledSummary& c = s.compiled;
  SQLite::Statement regions(db,
                            "SELECT name, pass, COUNT(*), SUM(triton_kernels), SUM(triton_time_ns), SUM(other_kernels), "
                            "SUM(other_time_ns), SUM(fallback_ops), SUM(graph_break_before) FROM compiled_region WHERE trace_id = ? "
                            "GROUP BY name, pass ORDER BY SUM(triton_time_ns + other_time_ns) DESC, name");
  regions.bind(1, s.trace_id);
  while (regions.executeStep()) {
    CompiledRegionSummary r{regions.getColumn(0).getString(), regions.getColumn(1).getString(), regions.getColumn(2).getInt64(),
                            regions.getColumn(3).getInt64(), regions.getColumn(4).getInt64(), regions.getColumn(5).getInt64(),
                            regions.getColumn(6).getInt64(), regions.getColumn(7).getInt64(), regions.getColumn(8).getInt64()};
    c.regions += r.instances;
    c.other_kernels += r.other_kernels;
    add_saturating(c.other_time_ns, r.other_time_ns);
    c.fallback_ops += r.fallback_ops;
    c.graph_breaks += r.graph_breaks;
    c.by_name.push_back(std::move(r));
  }
  SQLite::Statement python_only(db, "SELECT COUNT(*) FROM compiled_region WHERE trace_id = ? AND graph_break_cause = 'python_only'");
  python_only.bind(1, s.trace_id);
  if (python_only.executeStep()) c.graph_breaks_python_only = python_only.getColumn(0).getInt64();
  SQLite::Statement steps(db, "SELECT COUNT(DISTINCT iteration) FROM compiled_region WHERE trace_id = ? AND iteration IS NOT NULL");
  steps.bind(1, s.trace_id);
  if (steps.executeStep()) c.iterations_with_regions = steps.getColumn(0).getInt64();
  SQLite::Statement kinds(db, "SELECT triton_kind, COUNT(*), SUM(k.dur_ns) FROM kernel_compiled c JOIN _kernel k ON k.id = c.kernel_id "
                              "WHERE c.trace_id = ? AND triton_kind IS NOT NULL GROUP BY triton_kind ORDER BY triton_kind");
  kinds.bind(1, s.trace_id);
  while (kinds.executeStep()) {
    c.triton_kernels += kinds.getColumn(1).getInt64();
    add_saturating(c.triton_time_ns, kinds.getColumn(2).getInt64());
    c.triton_time_by_kind_ns[kinds.getColumn(0).getString()] = kinds.getColumn(2).getInt64();
  }
}

}  // namespace

namespace {

// The iteration restriction of a trace as summarize_device and summarize_tc_eligible take it.
std::string selected_range(SQLite::Database& db, int64_t trace_id) {
  SQLite::Statement r(db, "SELECT 1 FROM trace WHERE trace_id = ? AND (iter_start IS NOT NULL OR iter_stop IS NOT NULL)");
  r.bind(1, trace_id);
  if (!r.executeStep()) return "";
  return " AND iteration IN (SELECT iteration FROM iteration WHERE trace_id = " + std::to_string(trace_id) +
         " AND selected = 1)";
}

// The parts of a trace's summary that scan the op and source tables (Tensor Core eligibility and
// the module view: about half of a summary's time), which summarize computes on a second
// connection while this thread does the rest.
struct OpParts {
  TraceSummary tc;  // only its tc_eligible_* fields are filled
  std::vector<ModuleSummary> modules;
};

OpParts summarize_op_parts(SQLite::Database& db, int64_t trace_id) {
  OpParts p;
  p.tc.trace_id = trace_id;
  summarize_tc_eligible(db, p.tc, selected_range(db, trace_id));
  p.modules = summarize_modules(db, trace_id);
  return p;
}

}  // namespace

std::vector<TraceSummary> summarize(Store& store, unsigned jobs) {
  auto& db = store.db();
  std::vector<TraceSummary> out;
  SQLite::Statement traces(
      db,
      "SELECT trace_id, path, format, format_version, tool_version, framework, vendor, comm_backend, "
      "rank, world_size, COALESCE(end_ns - start_ns, 0), event_count, iteration_source, workload "
      "FROM trace ORDER BY trace_id");
  std::vector<std::optional<std::string>> sources;
  while (traces.executeStep()) {
    TraceSummary t;
    t.trace_id = traces.getColumn(0).getInt64();
    t.path = traces.getColumn(1).getString();
    t.format = traces.getColumn(2).getString();
    t.format_version = opt_text(traces, 3);
    t.tool_version = opt_text(traces, 4);
    t.framework = opt_text(traces, 5);
    t.vendor = opt_text(traces, 6);
    t.comm_backend = opt_text(traces, 7);
    t.rank = opt_int(traces, 8);
    t.world_size = opt_int(traces, 9);
    t.wall_ns = traces.getColumn(10).getInt64();
    t.event_count = traces.getColumn(11).getInt64();
    sources.push_back(opt_text(traces, 12));
    t.workload = opt_text(traces, 13);
    out.push_back(std::move(t));
  }
  // The op parts of every trace, on a reader of the store beside this thread when there is a core
  // for it (a store with a single connection, or one job, computes them here, in the same order).
  std::vector<int64_t> trace_ids;
  for (const auto& s : out) trace_ids.push_back(s.trace_id);
  auto op_parts = [&trace_ids](SQLite::Database& on) {
    std::vector<OpParts> parts;
    for (int64_t id : trace_ids) parts.push_back(summarize_op_parts(on, id));
    return parts;
  };
  std::future<std::vector<OpParts>> beside;
  std::unique_ptr<SQLite::Database> reader;
  if (available_jobs(jobs) > 1 && !out.empty()) {
    try {
      reader = store.open_reader();
      beside = std::async(std::launch::async, [&] { return op_parts(*reader); });
    } catch (const std::exception&) {  // no second connection or thread: all of it here
      reader.reset();
    }
  }
  try {
    for (size_t i = 0; i < out.size(); ++i) {
      auto& s = out[i];
      s.kernel_count = scalar(db, "SELECT count(*) FROM _kernel WHERE trace_id = ?", s.trace_id);
      s.memcpy_count = scalar(db, "SELECT count(*) FROM _memcpy WHERE trace_id = ?", s.trace_id);
      s.memset_count = scalar(db, "SELECT count(*) FROM _memset WHERE trace_id = ?", s.trace_id);
      s.api_call_count = scalar(db, "SELECT count(*) FROM _api_call WHERE trace_id = ?", s.trace_id);
      s.op_count = scalar(db, "SELECT count(*) FROM _op WHERE trace_id = ? AND range_id IS NOT NULL", s.trace_id);
      s.devices_listed = scalar(db, "SELECT count(*) FROM device WHERE trace_id = ?", s.trace_id);
      s.has_gpu_work = s.kernel_count + s.memcpy_count + s.memset_count > 0;
      SQLite::Statement devs(
          db, "SELECT DISTINCT device_id FROM breakdown WHERE trace_id = ? AND device_id >= 0 ORDER BY device_id");
      devs.bind(1, s.trace_id);
      std::string range = selected_range(db, s.trace_id);
      while (devs.executeStep())
        s.devices.push_back(summarize_device(db, s.trace_id, devs.getColumn(0).getInt64(), range));
      {
        // Listed by the trace (the host's visible GPUs) but ran nothing: reported apart, never
        // averaged into utilization.
        SQLite::Statement q(db,
                            "SELECT device_id FROM device WHERE trace_id = ? AND device_id >= 0 AND "
                            "COALESCE(has_activity, 0) = 0 ORDER BY device_id");
        q.bind(1, s.trace_id);
        std::vector<int64_t> ids;
        while (q.executeStep()) ids.push_back(q.getColumn(0).getInt64());
        for (int64_t id : ids) {
          DeviceSummary d;
          d.device_id = id;
          describe_device(db, s.trace_id, d);
          s.idle_devices.push_back(std::move(d));
        }
      }
      s.iterations = summarize_iterations(db, s.trace_id, sources[i]);
      bool first = true;
      for (const auto& d : s.devices) {
        s.startup_ns = first ? d.startup_ns : std::min(s.startup_ns, d.startup_ns);
        first = false;
      }
      s.steady_wall_ns = std::max<int64_t>(0, s.wall_ns - s.startup_ns);
      s.system_view = summarize_samples(db, s.trace_id);
      SQLite::Statement issues(db,
                               "SELECT kind, count, COALESCE(example,''), COALESCE(location,'') FROM import_issue "
                               "WHERE trace_id = ? ORDER BY count DESC, kind");
      issues.bind(1, s.trace_id);
      while (issues.executeStep()) {
        s.issues.push_back({issues.getColumn(0).getString(), issues.getColumn(2).getString(),
                            issues.getColumn(3).getString(), issues.getColumn(1).getInt64()});
      }
      summarize_graphs_compiled(db, s);
      s.host_activity = summarize_host_activity(db, s);
    }
  } catch (...) {
    if (beside.valid()) beside.wait();  // it reads the reader connection: let it finish first
    throw;
  }
  std::vector<OpParts> parts = beside.valid() ? beside.get() : op_parts(db);
  for (size_t i = 0; i < out.size(); ++i) {
    TraceSummary& s = out[i];
    const TraceSummary& tc = parts[i].tc;
    s.tc_eligible_ops = tc.tc_eligible_ops;
    s.tc_eligible_ops_no_tc = tc.tc_eligible_ops_no_tc;
    s.tc_eligible_gpu_ns = tc.tc_eligible_gpu_ns;
    s.tc_eligible_tc_ns = tc.tc_eligible_tc_ns;
    s.tc_eligible_no_tc_gpu_ns = tc.tc_eligible_no_tc_gpu_ns;
    s.modules = std::move(parts[i].modules);
  }
  return out;
}

std::vector<ModuleSummary> summarize_modules(SQLite::Database& db, int64_t trace_id) {
  struct Sums {
    int64_t kernels = 0, ns = 0, self_ns = 0, tc_ns = 0;
  };
  std::map<std::string, Sums> by_path;
  int64_t kernel_time = 0;
  try {
    SQLite::Statement q(db,
                        "SELECT m.value, count(*), sum(k.dur_ns), sum(CASE WHEN k.is_tensor_core = 1 THEN k.dur_ns ELSE 0 "
                        "END) FROM _kernel k JOIN _source s ON s.op_id = k.op_id JOIN string m ON m.id = s.module_path_id "
                        "WHERE k.trace_id = ? GROUP BY s.module_path_id");
    q.bind(1, trace_id);
    while (q.executeStep()) {
      std::string path = q.getColumn(0).getString();
      int64_t n = q.getColumn(1).getInt64(), ns = q.getColumn(2).getInt64(), tc = q.getColumn(3).getInt64();
      add_saturating(by_path[path].self_ns, ns);
      // Inclusive figures: the path and each of its ancestors ('a/b/c' -> 'a/b', 'a').
      for (size_t end = path.size();;) {
        Sums& s = by_path[path.substr(0, end)];
        s.kernels += n;
        add_saturating(s.ns, ns);
        add_saturating(s.tc_ns, tc);
        size_t slash = path.rfind('/', end - 1);
        if (slash == std::string::npos || slash == 0) break;
        end = slash;
      }
    }
  } catch (const SQLite::Exception&) {
    return {};  // a store older than schema 0008
  }
  if (by_path.empty()) return {};
  kernel_time = scalar(db, "SELECT coalesce(sum(dur_ns), 0) FROM _kernel WHERE trace_id = ?", trace_id);
  // Tree order: each module after its parent, siblings by GPU time (then name).
  std::map<std::string, std::vector<std::string>> children;
  for (const auto& [path, s] : by_path) {
    size_t slash = path.rfind('/');
    children[slash == std::string::npos ? std::string() : path.substr(0, slash)].push_back(path);
  }
  for (auto& [parent, list] : children)
    std::sort(list.begin(), list.end(), [&](const std::string& a, const std::string& b) {
      if (by_path[a].ns != by_path[b].ns) return by_path[a].ns > by_path[b].ns;
      return a < b;
    });
  std::vector<ModuleSummary> out;
  std::vector<std::string> stack(children[""].rbegin(), children[""].rend());
  while (!stack.empty()) {
    std::string path = std::move(stack.back());
    stack.pop_back();
    const Sums& s = by_path[path];
    ModuleSummary m;
    m.path = path;
    m.kernel_count = s.kernels;
    m.gpu_time_ns = s.ns;
    m.self_gpu_time_ns = s.self_ns;
    m.tensor_core_time_ns = s.tc_ns;
    m.share_of_kernel_time = kernel_time > 0 ? static_cast<double>(s.ns) / static_cast<double>(kernel_time) : 0.0;
    m.tensor_core_share = s.ns > 0 ? static_cast<double>(s.tc_ns) / static_cast<double>(s.ns) : 0.0;
    out.push_back(std::move(m));
    if (auto it = children.find(path); it != children.end())
      for (auto c = it->second.rbegin(); c != it->second.rend(); ++c) stack.push_back(*c);
  }
  return out;
}

}  // namespace proflint
