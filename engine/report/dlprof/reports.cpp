// engine/report/dlprof/reports.cpp — the DLProf-style report builders (reports.hpp, docs/reports.md).
//
// Flatten vs accumulate, as the DLProf guide defines them: per-instance statistics of an op node,
// a kernel or an op type are *accumulated* (total/avg/min/max over instances); global figures
// (summary percentages, GPU idle) and the sub-tree statistics of group nodes are *flattened*
// (union of intervals, overlaps counted once).
#include "engine/report/dlprof/reports.hpp"

#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "engine/analysis/finding.hpp"
#include "engine/common/error.hpp"
#include "engine/common/suggest.hpp"

namespace proflint::dlprof {

namespace {

// Accumulate: total/avg/min/max over instances.
struct Acc {
  int64_t n = 0, total = 0, mn = 0, mx = 0;
  void add(int64_t v) {
    mn = n ? std::min(mn, v) : v;
    mx = n ? std::max(mx, v) : v;
    ++n;
    total += v;
  }
  int64_t avg() const {
    return n ? static_cast<int64_t>(std::llround(static_cast<double>(total) / static_cast<double>(n))) : 0;
  }
  void put(std::vector<Cell>& row) const {
    row.emplace_back(total);
    row.emplace_back(avg());
    row.emplace_back(mn);
    row.emplace_back(mx);
  }
};

void stat_columns(std::vector<std::string>& cols, const std::string& what) {
  for (const char* p : {"Total ", "Avg. ", "Min ", "Max "}) cols.push_back(p + what + " (ns)");
}

// Per-instance figures of one op execution (its sub-tree included).
struct InstanceTimes {
  int64_t cpu = 0, gpu = 0, overhead = 0, idle = 0;
};

int64_t span_length(const std::vector<Span>& spans) {
  if (spans.empty()) return 0;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const auto& [s, e] : spans) {
    lo = std::min(lo, s);
    hi = std::max(hi, e);
  }
  return hi - lo;
}

InstanceTimes times_of(const OpInstance& o) {
  InstanceTimes t;
  t.cpu = o.dur_ns;
  t.gpu = o.gpu_ns;
  auto api = o.api_spans;
  t.overhead = std::max<int64_t>(0, o.dur_ns - union_length(api));
  auto k = o.kernel_spans;
  t.idle = span_length(k) - union_length(k);
  return t;
}

bool counted(const OpInstance& o, const std::string& domain) { return o.selected && in_domain(o, domain); }

// One row per op node (name, direction, type), in first-seen order.
struct NodeAgg {
  const OpInstance* first = nullptr;
  int64_t calls = 0;
  bool eligible = false, using_tc = false;
  Acc cpu, gpu, overhead, idle;
};

std::vector<NodeAgg> aggregate_nodes(const Model& m, const std::string& domain) {
  std::vector<NodeAgg> nodes;
  std::unordered_map<std::string, size_t> index;
  for (const auto& o : m.ops) {
    if (!counted(o, domain)) continue;
    auto [it, fresh] = index.emplace(o.key, nodes.size());
    if (fresh) {
      nodes.emplace_back();
      nodes.back().first = &o;
    }
    auto& n = nodes[it->second];
    auto t = times_of(o);
    n.calls += 1;
    n.eligible = n.eligible || o.tc_eligible;
    n.using_tc = n.using_tc || o.tc_ns > 0;
    n.cpu.add(t.cpu);
    n.gpu.add(t.gpu);
    n.overhead.add(t.overhead);
    n.idle.add(t.idle);
  }
  return nodes;
}

template <class T, class Key>
void sort_rows(std::vector<T>& rows, Key key) {
  std::stable_sort(rows.begin(), rows.end(), [&](const T& a, const T& b) { return key(a) < key(b); });
}

Cell opt_cell(const std::optional<int64_t>& v) { return v ? Cell{*v} : Cell{}; }
Cell text_cell(const std::string& s) { return s.empty() ? Cell{} : Cell{s}; }

std::string join(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : "; ") + n;
  return out;
}

double pct(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

const std::vector<std::string>& report_names() {
  static const std::vector<std::string> names = {"summary", "detail",  "iteration",  "kernel",
                                                 "tensor",  "op_type", "group_node", "expert_systems",
                                                 "collectives", "graphs"};
  return names;
}

Report build_report(const std::string& name, const ReportInput& in, const std::string& domain) {
  if (name == "summary") return build_summary(in, domain);
  if (name == "detail") return build_detail(in, domain);
  if (name == "iteration") return build_iteration(in, domain);
  if (name == "kernel") return build_kernel(in, domain);
  if (name == "tensor") return build_tensor(in, domain);
  if (name == "op_type") return build_op_type(in, domain);
  if (name == "group_node") return build_group_node(in, domain);
  if (name == "expert_systems") return build_expert_systems(in, domain);
  if (name == "collectives") return build_collectives(in, domain);
  if (name == "graphs") return build_graphs(in, domain);
  throw Error("unknown report '" + name + "'" + did_you_mean(name, report_names()));
}

Report build_detail(const ReportInput& in, const std::string& domain) {
  Report r{"detail", domain, {}};
  Table t{"detail", {"Op ID", "Op Name", "Direction", "Op Type", "No. Calls", "TC Eligibility", "Using TC"}, {}};
  stat_columns(t.columns, "CPU Time");
  stat_columns(t.columns, "GPU Time");
  stat_columns(t.columns, "CPU Overhead Time");
  stat_columns(t.columns, "GPU Idle Time");
  for (const char* c : {"Data Type", "Input Shapes", "Stack Trace"}) t.columns.push_back(c);
  auto nodes = aggregate_nodes(*in.model, domain);
  sort_rows(nodes, [](const NodeAgg& n) {
    return std::make_tuple(-n.gpu.total, -n.cpu.total, n.first->name, n.first->direction, n.first->op_type);
  });
  for (const auto& n : nodes) {
    const auto& o = *n.first;
    std::vector<Cell> row{o.op_id, o.name, o.direction, o.op_type, n.calls, n.eligible, n.using_tc};
    n.cpu.put(row);
    n.gpu.put(row);
    n.overhead.put(row);
    n.idle.put(row);
    row.push_back(text_cell(o.data_type));
    row.push_back(text_cell(o.input_shapes));
    row.push_back(text_cell(o.stack));
    t.rows.push_back(std::move(row));
  }
  r.tables.push_back(std::move(t));
  return r;
}

Report build_iteration(const ReportInput& in, const std::string& domain) {
  const Model& m = *in.model;
  Report r{"iteration", domain, {}};
  Table t{"iteration",
          {"Iteration",
           "Op ID",
           "Op Name",
           "Direction",
           "Op Type",
           "Kernel Name",
           "Device ID",
           "GPU Start Time (ns)",
           "GPU Time (ns)",
           "API Call Start (ns)",
           "API Call Time (ns)",
           "Uses TC",
           "Grid X",
           "Grid Y",
           "Grid Z",
           "Block X",
           "Block Y",
           "Block Z",
           "Data Type",
           "Input Shapes",
           "Parameters",
           "Output Shapes",
           "Long Kernel Name",
           "Trace ID"},
          {}};
  for (const auto& g : m.kernels) {
    if (!g.selected || !in_domain(m, g, domain)) continue;
    const OpInstance* o = g.op >= 0 ? &m.ops[static_cast<size_t>(g.op)] : nullptr;
    std::vector<Cell> row{opt_cell(g.iteration)};
    if (o) {
      row.insert(row.end(), {o->op_id, o->name, o->direction, o->op_type});
    } else {
      row.insert(row.end(), {Cell{}, Cell{}, Cell{}, Cell{}});
    }
    row.insert(row.end(), {g.name, opt_cell(g.device_id), g.start_ns, g.dur_ns, opt_cell(g.api_start_ns),
                           opt_cell(g.api_dur_ns), g.tensor_core});
    for (const auto& v : g.grid) row.push_back(opt_cell(v));
    for (const auto& v : g.block) row.push_back(opt_cell(v));
    row.push_back(o ? text_cell(o->data_type) : Cell{});
    row.push_back(o ? text_cell(o->input_shapes) : Cell{});
    row.insert(row.end(), {Cell{}, Cell{}, g.name, g.trace_id});
    t.rows.push_back(std::move(row));
  }
  r.tables.push_back(std::move(t));
  return r;
}

Report build_kernel(const ReportInput& in, const std::string& domain) {
  const Model& m = *in.model;
  Report r{"kernel", domain, {}};
  Table t{"kernel", {"Kernel Name", "Op ID", "Op Name", "Direction", "Uses TC", "No. Calls"}, {}};
  stat_columns(t.columns, "GPU Time");
  stat_columns(t.columns, "API Time");
  struct Agg {
    const GpuInstance* first = nullptr;
    bool tc = false;
    Acc gpu, api;
  };
  std::vector<Agg> rows;
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (const auto& g : m.kernels) {
    if (!g.selected || !in_domain(m, g, domain)) continue;
    std::string op_key = g.op >= 0 ? m.ops[static_cast<size_t>(g.op)].key : "";
    auto [it, fresh] = index.emplace(std::make_pair(g.name, op_key), rows.size());
    if (fresh) {
      rows.emplace_back();
      rows.back().first = &g;
    }
    auto& a = rows[it->second];
    a.tc = a.tc || g.tensor_core;
    a.gpu.add(g.dur_ns);
    if (g.api_dur_ns) a.api.add(*g.api_dur_ns);
  }
  sort_rows(rows, [&](const Agg& a) {
    const OpInstance* o = a.first->op >= 0 ? &m.ops[static_cast<size_t>(a.first->op)] : nullptr;
    return std::make_tuple(-a.gpu.total, a.first->name, o ? o->key : std::string());
  });
  for (const auto& a : rows) {
    const OpInstance* o = a.first->op >= 0 ? &m.ops[static_cast<size_t>(a.first->op)] : nullptr;
    std::vector<Cell> row{a.first->name};
    if (o)
      row.insert(row.end(), {o->op_id, o->name, o->direction});
    else
      row.insert(row.end(), {Cell{}, Cell{}, Cell{}});
    row.insert(row.end(), {a.tc, a.gpu.n});
    a.gpu.put(row);
    a.api.put(row);
    t.rows.push_back(std::move(row));
  }
  r.tables.push_back(std::move(t));
  return r;
}

Report build_tensor(const ReportInput& in, const std::string& domain) {
  const Model& m = *in.model;
  Report r{"tensor", domain, {}};
  Table t{"tensor",
          {"Op ID", "Op Name", "Direction", "Op Type", "Uses TC", "Total GPU Time (ns)", "TC GPU Time (ns)",
           "Non-TC GPU Time (ns)", "TC Utilization (%)", "Total Kernel Count", "TC Kernel Count", "TC Kernel Names",
           "Non-TC Kernel Count", "Non-TC Kernel Names"},
          {}};
  struct Agg {
    const OpInstance* first = nullptr;
    int64_t gpu = 0, tc = 0;
    std::set<std::string> tc_names, other_names;
  };
  std::vector<Agg> rows;
  std::unordered_map<std::string, size_t> index;
  for (const auto& o : m.ops) {
    if (!counted(o, domain) || !o.tc_eligible) continue;
    auto [it, fresh] = index.emplace(o.key, rows.size());
    if (fresh) {
      rows.emplace_back();
      rows.back().first = &o;
    }
    rows[it->second].gpu += o.gpu_ns;
    rows[it->second].tc += o.tc_ns;
  }
  for (const auto& g : m.kernels) {
    if (!g.selected) continue;
    for (int i = g.op; i >= 0; i = m.ops[static_cast<size_t>(i)].parent) {
      const auto& o = m.ops[static_cast<size_t>(i)];
      if (!o.tc_eligible || !counted(o, domain)) continue;
      auto& a = rows[index.at(o.key)];
      (g.tensor_core ? a.tc_names : a.other_names).insert(g.name);
    }
  }
  sort_rows(rows,
            [](const Agg& a) { return std::make_tuple(-a.gpu, a.first->name, a.first->direction, a.first->op_type); });
  for (const auto& a : rows) {
    const auto& o = *a.first;
    t.rows.push_back({o.op_id, o.name, o.direction, o.op_type, a.tc > 0, a.gpu, a.tc, a.gpu - a.tc, pct(a.tc, a.gpu),
                      static_cast<int64_t>(a.tc_names.size() + a.other_names.size()),
                      static_cast<int64_t>(a.tc_names.size()), text_cell(join(a.tc_names)),
                      static_cast<int64_t>(a.other_names.size()), text_cell(join(a.other_names))});
  }
  r.tables.push_back(std::move(t));
  return r;
}

Report build_op_type(const ReportInput& in, const std::string& domain) {
  const Model& m = *in.model;
  Report r{"op_type", domain, {}};
  Table t{"op_type", {"Op Name", "No. Nodes", "No. Calls", "TC Eligibility", "Using TC"}, {}};
  stat_columns(t.columns, "CPU Time");
  stat_columns(t.columns, "GPU Time");
  stat_columns(t.columns, "CPU Overhead Time");
  stat_columns(t.columns, "GPU Idle Time");
  struct Agg {
    std::string type;
    std::set<std::string> nodes;
    int64_t calls = 0;
    bool eligible = false, using_tc = false;
    Acc cpu, gpu, overhead, idle;
  };
  std::vector<Agg> rows;
  std::unordered_map<std::string, size_t> index;
  for (const auto& o : m.ops) {
    if (!counted(o, domain)) continue;
    auto [it, fresh] = index.emplace(o.op_type, rows.size());
    if (fresh) {
      rows.emplace_back();
      rows.back().type = o.op_type;
    }
    auto& a = rows[it->second];
    a.nodes.insert(o.key);
    a.eligible = a.eligible || o.tc_eligible;
    a.using_tc = a.using_tc || o.tc_ns > 0;
    // Flatten: an instance nested in another instance of the same type is already inside it.
    bool nested = false;
    for (int p = o.parent; p >= 0 && !nested; p = m.ops[static_cast<size_t>(p)].parent)
      nested = m.ops[static_cast<size_t>(p)].op_type == o.op_type;
    if (nested) continue;
    auto tm = times_of(o);
    a.calls += 1;
    a.cpu.add(tm.cpu);
    a.gpu.add(tm.gpu);
    a.overhead.add(tm.overhead);
    a.idle.add(tm.idle);
  }
  sort_rows(rows, [](const Agg& a) { return std::make_tuple(-a.gpu.total, -a.cpu.total, a.type); });
  for (const auto& a : rows) {
    std::vector<Cell> row{a.type, static_cast<int64_t>(a.nodes.size()), a.calls, a.eligible, a.using_tc};
    a.cpu.put(row);
    a.gpu.put(row);
    a.overhead.put(row);
    a.idle.put(row);
    t.rows.push_back(std::move(row));
  }
  r.tables.push_back(std::move(t));
  return r;
}

Report build_group_node(const ReportInput& in, const std::string& domain) {
  const Model& m = *in.model;
  Report r{"group_node", domain, {}};
  Table t{"group_node", {"Name", "No. Calls Aggregated", "No. TC Eligibility Ops", "No. Node Ops Using TC"}, {}};
  stat_columns(t.columns, "CPU Time");
  stat_columns(t.columns, "GPU Time");
  stat_columns(t.columns, "CPU Overhead Time");
  stat_columns(t.columns, "GPU Idle Time");
  struct Bucket {
    std::vector<Span> cpu, gpu, api;
  };
  struct Agg {
    std::string name;
    int64_t leaf_calls = 0;
    std::set<std::string> eligible_ops, tc_ops;  // distinct op nodes (see below)
    std::map<std::pair<int64_t, int64_t>, Bucket> per_iteration;  // (trace, iteration or -1)
  };
  std::vector<Agg> rows;
  std::unordered_map<std::string, size_t> index;
  for (const auto& o : m.ops) {
    if (!counted(o, domain) || !o.has_children) continue;
    auto [it, fresh] = index.emplace(o.name, rows.size());
    if (fresh) {
      rows.emplace_back();
      rows.back().name = o.name;
    }
    auto& b = rows[it->second].per_iteration[{o.trace_id, o.iteration.value_or(-1)}];
    b.cpu.emplace_back(o.start_ns, o.start_ns + o.dur_ns);
    b.gpu.insert(b.gpu.end(), o.kernel_spans.begin(), o.kernel_spans.end());
    b.api.insert(b.api.end(), o.api_spans.begin(), o.api_spans.end());
  }
  // Leaves give the call count. Eligibility follows the counted-once rule of the summary and tensor
  // reports: the eligible ops under a group node are its outermost eligible ops (not also the
  // convolution/_convolution/cudnn_convolution nodes inside each), and one of them uses Tensor
  // Cores when a Tensor Core kernel runs anywhere under it; an op outside any eligible op uses
  // them when a kernel of its own does.
  for (const auto& o : m.ops) {
    if (!counted(o, domain)) continue;
    bool leaf = !o.has_children;
    bool eligible = o.tc_eligible;
    bool absorbed = false;
    for (int p = o.parent; p >= 0 && !absorbed; p = m.ops[static_cast<size_t>(p)].parent)
      absorbed = m.ops[static_cast<size_t>(p)].tc_eligible;
    bool uses_tc = !absorbed && (eligible ? o.tc_ns > 0 : o.own_tc);
    if (!leaf && !eligible && !uses_tc) continue;
    std::set<size_t> seen;  // an op counts once per group node even when the name repeats up the chain
    // From the op itself when it is a group node (an eligible aten::conv2d counts on its own row,
    // not only on the rows of the modules above it), then up its ancestors.
    int self = static_cast<int>(&o - m.ops.data());
    for (int p = leaf ? o.parent : self; p >= 0; p = m.ops[static_cast<size_t>(p)].parent) {
      const auto& g = m.ops[static_cast<size_t>(p)];
      if (!counted(g, domain)) continue;
      size_t k = index.at(g.name);
      if (!seen.insert(k).second) continue;
      auto& a = rows[k];
      if (leaf) a.leaf_calls += 1;
      if (eligible) a.eligible_ops.insert(o.key);
      if (uses_tc) a.tc_ops.insert(o.key);
    }
  }
  struct Out {
    const Agg* agg = nullptr;
    Acc cpu, gpu, overhead, idle;
  };
  std::vector<Out> outs;
  for (auto& a : rows) {
    Out o;
    o.agg = &a;
    for (auto& [key, b] : a.per_iteration) {
      int64_t cpu = union_length(b.cpu), gpu = union_length(b.gpu), api = union_length(b.api);
      o.cpu.add(cpu);
      o.gpu.add(gpu);
      o.overhead.add(std::max<int64_t>(0, cpu - api));
      o.idle.add(span_length(b.gpu) - gpu);
    }
    outs.push_back(std::move(o));
  }
  sort_rows(outs, [](const Out& o) { return std::make_tuple(-o.gpu.total, -o.cpu.total, o.agg->name); });
  for (const auto& o : outs) {
    std::vector<Cell> row{o.agg->name, o.agg->leaf_calls, static_cast<int64_t>(o.agg->eligible_ops.size()),
                          static_cast<int64_t>(o.agg->tc_ops.size())};
    o.cpu.put(row);
    o.gpu.put(row);
    o.overhead.put(row);
    o.idle.put(row);
    t.rows.push_back(std::move(row));
  }
  r.tables.push_back(std::move(t));
  return r;
}

Report build_expert_systems(const ReportInput& in, const std::string& domain) {
  Report r{"expert_systems", domain, {}};
  Table t{"expert_systems",
          {"Problem", "Recommendation", "Rank", "ID", "Title", "Severity", "Estimated Savings (ns)",
           "Savings Share (%)", "Diagnostic"},
          {}};
  if (in.analysis) {
    int64_t rank = 0;
    for (const auto& f : in.analysis->findings) {
      t.rows.push_back({f.problem, f.recommendation, ++rank, f.id, f.title,
                        std::string(severity_name(f.effective_severity)), f.estimated_savings_ns,
                        100.0 * f.savings_share, f.diagnostic});
    }
  }
  r.tables.push_back(std::move(t));
  return r;
}

Report build_summary(const ReportInput& in, const std::string& domain) {
  const Model& m = *in.model;
  auto& db = in.store->db();
  Report r{"summary", domain, {}};

  // System config.
  Table sys{"System Config", {"Name", "Value"}, {}};
  std::set<std::string> gpu_names, frameworks, formats;
  int64_t gpu_count = 0;
  {
    SQLite::Statement q(db, "SELECT COALESCE(name, '') FROM device ORDER BY trace_id, device_id");
    while (q.executeStep()) {
      ++gpu_count;
      if (!q.getColumn(0).getString().empty()) gpu_names.insert(q.getColumn(0).getString());
    }
  }
  for (const auto& tr : m.traces) {
    if (tr.framework) frameworks.insert(*tr.framework);
    formats.insert(tr.format + (tr.tool_version ? " " + *tr.tool_version : ""));
  }
  size_t gpu_count_row = sys.rows.size();
  sys.rows.push_back({std::string("GPU Count"), gpu_count});
  size_t gpus_used_row = sys.rows.size();
  sys.rows.push_back({std::string("GPUs Used"), int64_t{0}});
  size_t unused_row = sys.rows.size();
  sys.rows.push_back({std::string("Unused Visible GPUs"), Cell{}});
  sys.rows.push_back({std::string("GPU Name(s)"), text_cell(join(gpu_names))});
  sys.rows.push_back({std::string("Framework"), text_cell(join(frameworks))});
  sys.rows.push_back({std::string("Profile Format"), text_cell(join(formats))});
  sys.rows.push_back({std::string("proflint Version"), std::string(PROFLINT_VERSION)});

  // Breakdown averaged over the GPUs that ran work (kernels, copies or memsets): a GPU the process
  // only saw (the other GPUs of the host, listed by the profiler) would count as 100% idle and
  // divide the utilization by the number of GPUs on the machine. Those are listed separately.
  // Wall clock = longest trace window.
  std::map<std::pair<int64_t, int64_t>, std::map<std::string, int64_t>> per_device;
  {
    SQLite::Statement q(db, "SELECT trace_id, device_id, category, time_ns FROM breakdown WHERE iteration = -1");
    while (q.executeStep())
      per_device[{q.getColumn(0).getInt64(), q.getColumn(1).getInt64()}][q.getColumn(2).getString()] =
          q.getColumn(3).getInt64();
  }
  // device.has_activity (derived: a kernel, memcpy or memset ran on it) decides "used".
  std::map<std::pair<int64_t, int64_t>, std::string> device_names;
  std::set<std::pair<int64_t, int64_t>> active;
  {
    SQLite::Statement q(db, "SELECT trace_id, device_id, COALESCE(name, ''), COALESCE(has_activity, 0) FROM device");
    while (q.executeStep()) {
      std::pair<int64_t, int64_t> k{q.getColumn(0).getInt64(), q.getColumn(1).getInt64()};
      device_names[k] = q.getColumn(2).getString();
      if (q.getColumn(3).getInt() == 1) active.insert(k);
    }
  }
  // Several traces of one job (one per rank) each list the node's GPUs: a listed GPU that ran
  // nothing is unused only when no trace ran work on a GPU with that id on that host (host unknown =
  // the same host), so the ranks of a 2-GPU DDP job give 2 GPUs, not 4.
  std::map<int64_t, std::string> host_of;
  {
    SQLite::Statement q(db, "SELECT trace_id, COALESCE(host_name, '') FROM trace");
    while (q.executeStep()) host_of[q.getColumn(0).getInt64()] = q.getColumn(1).getString();
  }
  std::set<std::pair<std::string, int64_t>> used_on_host;
  for (const auto& k : active) used_on_host.insert({host_of[k.first], k.second});
  std::set<std::pair<std::string, int64_t>> unused_on_host;
  std::vector<std::string> unused_names;
  for (const auto& [k, name] : device_names) {
    if (k.second < 0 || active.count(k)) continue;
    std::pair<std::string, int64_t> hk{host_of[k.first], k.second};
    if (used_on_host.count(hk) || !unused_on_host.insert(hk).second) continue;
    unused_names.push_back("GPU " + std::to_string(k.second) + (name.empty() ? "" : " (" + name + ")") +
                           (hk.first.empty() || host_of.size() < 2 ? "" : " on " + hk.first));
  }
  std::set<int64_t> traces_with_gpu;
  for (const auto& k : active)
    if (k.second >= 0) traces_with_gpu.insert(k.first);
  int64_t wall = 0;
  double tc = 0, nontc = 0, mem = 0, cpu = 0, other = 0, util = 0;
  int64_t n_devices = 0;
  for (const auto& [k, cats] : per_device) {
    // A GPU trace averages its used GPUs; a trace without GPU work contributes its host-only row.
    if (k.second < 0 ? traces_with_gpu.count(k.first) > 0 : active.count(k) == 0) continue;
    int64_t window = 0;
    for (const auto& [c, ns] : cats) window += ns;
    wall = std::max(wall, window);
    ++n_devices;
    // Through a plain reference: lambdas cannot capture structured bindings before clang 16.
    auto get = [&device_cats = cats](const char* c) {
      auto it = device_cats.find(c);
      return it == device_cats.end() ? int64_t{0} : it->second;
    };
    if (window == 0) {
      other += 100.0;
      continue;
    }
    tc += pct(get("kernel_tc"), window);
    nontc += pct(get("kernel_other") + get("communication"), window);
    mem += pct(get("memcpy") + get("memset"), window);
    cpu += pct(get("runtime") + get("dataloader") + get("cpu"), window);
    other += pct(get("idle"), window);
    util += pct(get("kernel_tc") + get("kernel_other") + get("communication"), window);
  }
  std::set<std::pair<std::string, int64_t>> gpus_used;
  for (const auto& k : active)
    if (k.second >= 0) gpus_used.insert({host_of[k.first], k.second});
  sys.rows[gpu_count_row][1] = static_cast<int64_t>(gpus_used.size() + unused_on_host.size());
  sys.rows[gpus_used_row][1] = static_cast<int64_t>(gpus_used.size());
  {
    std::string list;
    for (const auto& n : unused_names) list += (list.empty() ? "" : "; ") + n;
    sys.rows[unused_row][1] = text_cell(list);
  }
  auto avg = [&](double v) { return n_devices ? v / static_cast<double>(n_devices) : 0.0; };
  // Tensor Core kernel utilization: TC kernel time over the kernel time of TC-eligible nodes.
  int64_t eligible_ns = 0, eligible_tc_ns = 0;
  for (const auto& g : m.kernels) {
    if (!g.selected || !in_domain(m, g, domain)) continue;
    bool eligible = false;
    for (int i = g.op; i >= 0 && !eligible; i = m.ops[static_cast<size_t>(i)].parent)
      eligible = m.ops[static_cast<size_t>(i)].tc_eligible;
    if (!eligible) continue;
    eligible_ns += g.dur_ns;
    if (g.tensor_core) eligible_tc_ns += g.dur_ns;
  }
  Table sum{"Summary", {"Name", "Value"}, {}};
  sum.rows.push_back({std::string("Wall Clock Time (ns)"), wall});
  sum.rows.push_back({std::string("Tensor Core Kernel Utilization %"), pct(eligible_tc_ns, eligible_ns)});
  sum.rows.push_back({std::string("GPU Utilization %"), avg(util)});
  sum.rows.push_back({std::string("Tensor Core Kernel Duration %"), avg(tc)});
  sum.rows.push_back({std::string("Non-Tensor Core Kernel Duration %"), avg(nontc)});
  sum.rows.push_back({std::string("Memory Duration %"), avg(mem)});
  sum.rows.push_back({std::string("CPU Duration %"), avg(cpu)});
  sum.rows.push_back({std::string("Other Duration %"), avg(other)});

  // Iterations (the trace with the most iterations when several are loaded).
  Table its{"Iterations", {"Name", "Value"}, {}};
  const TraceInfo* best = nullptr;
  for (const auto& tr : m.traces)
    if (!best || tr.iterations.size() > best->iterations.size()) best = &tr;
  int64_t total_its = best ? static_cast<int64_t>(best->iterations.size()) : 0;
  std::vector<int64_t> durs;
  std::optional<int64_t> first, last;
  if (best) {
    for (const auto& it : best->iterations) {
      if (!it.selected) continue;
      durs.push_back(it.dur_ns);
      if (!first) first = it.iteration;
      last = it.iteration;
    }
  }
  double mean = 0, sd = 0;
  for (auto d : durs) mean += static_cast<double>(d);
  if (!durs.empty()) mean /= static_cast<double>(durs.size());
  for (auto d : durs) sd += (static_cast<double>(d) - mean) * (static_cast<double>(d) - mean);
  sd = durs.size() > 1 ? std::sqrt(sd / static_cast<double>(durs.size() - 1)) : 0.0;
  SQLite::Statement src(db, "SELECT COALESCE(iteration_source, 'none') FROM trace ORDER BY trace_id LIMIT 1");
  std::string source = src.executeStep() ? src.getColumn(0).getString() : "none";
  if (best) {
    SQLite::Statement q(db, "SELECT COALESCE(iteration_source, 'none') FROM trace WHERE trace_id = ?");
    q.bind(1, best->trace_id);
    if (q.executeStep()) source = q.getColumn(0).getString();
  }
  its.rows.push_back({std::string("Total Iterations"), total_its});
  its.rows.push_back({std::string("Aggregated Iterations"), static_cast<int64_t>(durs.size())});
  its.rows.push_back({std::string("Start Iteration"), opt_cell(first)});
  its.rows.push_back({std::string("Stop Iteration"), opt_cell(last)});
  its.rows.push_back({std::string("Average Iteration Time (ns)"), static_cast<int64_t>(std::llround(mean))});
  its.rows.push_back({std::string("Iteration Time Standard Deviation (ns)"), static_cast<int64_t>(std::llround(sd))});
  its.rows.push_back({std::string("Iteration Source"), source});

  // All ops, each node once. An eligible op is counted once, at the outermost eligible op of its
  // sub-tree (op.tc_eligible is set there only): it carries the sub-tree's GPU and CPU time and is
  // "using TC" when a Tensor Core kernel runs anywhere under it; the ops nested inside it are part
  // of it and not counted again. Every other op carries its own time (kernels attributed to it,
  // host time outside its child ops) and uses TC when one of its own kernels does. So the three
  // classes add up to the first row without counting nested work twice.
  struct Class {
    int64_t gpu = 0, cpu = 0;
    std::set<std::string> nodes;
  };
  auto inside_eligible = [&](const OpInstance& o) {
    for (int p = o.parent; p >= 0; p = m.ops[static_cast<size_t>(p)].parent)
      if (m.ops[static_cast<size_t>(p)].tc_eligible) return true;
    return false;
  };
  std::map<std::string, bool> node_tc, node_eligible;
  std::vector<char> absorbed(m.ops.size(), 0);
  for (size_t i = 0; i < m.ops.size(); ++i) {
    const auto& o = m.ops[i];
    if (!counted(o, domain)) continue;
    absorbed[i] = inside_eligible(o) ? 1 : 0;
    if (absorbed[i]) continue;
    node_tc[o.key] = node_tc[o.key] || (o.tc_eligible ? o.tc_ns > 0 : o.own_tc);
    node_eligible[o.key] = node_eligible[o.key] || o.tc_eligible;
  }
  Class all, using_tc, eligible_not, rest;
  for (size_t i = 0; i < m.ops.size(); ++i) {
    const auto& o = m.ops[i];
    if (!counted(o, domain) || absorbed[i]) continue;
    Class& c = node_tc[o.key] ? using_tc : node_eligible[o.key] ? eligible_not : rest;
    int64_t gpu = o.tc_eligible ? o.gpu_ns : o.self_gpu_ns;
    int64_t cpu_ns = o.tc_eligible ? o.dur_ns : std::max<int64_t>(0, o.dur_ns - o.child_dur_ns);
    for (Class* x : {&all, &c}) {
      x->gpu += gpu;
      x->cpu += cpu_ns;
      x->nodes.insert(o.key);
    }
  }
  Table ops{"All Ops", {"Name", "GPU Time (ns)", "CPU Time (ns)", "# Ops"}, {}};
  for (const auto& [name, c] :
       std::vector<std::pair<std::string, const Class*>>{{"All Op", &all},
                                                         {"Ops Using TC", &using_tc},
                                                         {"Op eligible for TC but not using", &eligible_not},
                                                         {"All other ops", &rest}})
    ops.rows.push_back({name, c->gpu, c->cpu, static_cast<int64_t>(c->nodes.size())});

  Class kall, ktc, kmem, krest;
  auto add_gpu = [&](const GpuInstance& g) {
    if (!g.selected || !in_domain(m, g, domain)) return;
    Class& c = g.tensor_core ? ktc : (g.is_memory_op || g.category == "memory") ? kmem : krest;
    for (Class* x : {&kall, &c}) {
      x->gpu += g.dur_ns;
      x->cpu += g.api_dur_ns.value_or(0);
      x->nodes.insert(g.name);
    }
  };
  for (const auto& g : m.kernels) add_gpu(g);
  for (const auto& g : m.copies) add_gpu(g);
  Table ks{"All Kernels", {"Name", "GPU Time (ns)", "CPU Time (ns)", "# Kernels"}, {}};
  for (const auto& [name, c] : std::vector<std::pair<std::string, const Class*>>{
           {"All Kernels", &kall}, {"Kernels Using TC", &ktc}, {"Memory", &kmem}, {"All other kernels", &krest}})
    ks.rows.push_back({name, c->gpu, c->cpu, static_cast<int64_t>(c->nodes.size())});

  r.tables = {std::move(sys), std::move(sum), std::move(its), std::move(ops), std::move(ks)};
  return r;
}

}  // namespace proflint::dlprof
