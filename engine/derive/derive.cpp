// engine/derive/derive.cpp — derive_trace: runs the derivation steps on one trace's model, in order.
//
// Copy the facts into TraceData -> nest ranges -> classify ranges and kernels -> GPU work to API
// calls -> iterations -> ops -> API calls and GPU work to ops -> iteration assignment -> op
// aggregates -> start-up/steady state and workload -> breakdown -> the results into the model's
// DerivedFacts -> CUDA graph replays and compiled regions (graphs.cpp, on those results). Each
// step's rules live in its own file (see docs/derivation.md). No SQL here: the store writes the
// model afterwards (engine/store/model_io.hpp).
#include "engine/derive/derive_trace.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/common/timing.hpp"
#include "engine/derive/breakdown.hpp"
#include "engine/derive/categories.hpp"
#include "engine/derive/correlation.hpp"
#include "engine/derive/graphs.hpp"
#include "engine/derive/iterations.hpp"
#include "engine/derive/model.hpp"
#include "engine/derive/ops.hpp"
#include "engine/derive/source.hpp"
#include "engine/derive/startup.hpp"
#include "engine/derive/tensor_cores.hpp"

namespace proflint {

namespace {

// Tensor Core use and category once per distinct kernel name (names repeat millions of times).
void classify_kernels(TraceData& t) {
  struct Verdict {
    bool tensor_core, decided;
    uint8_t category;
  };
  std::unordered_map<int64_t, Verdict> by_name;
  std::span<const TensorCorePattern> extra;
  if (t.options) extra = t.options->extra_tensor_core_patterns;
  for (auto& g : t.gpu) {
    if (g.kind != GpuKind::kernel) continue;
    auto it = by_name.find(g.name_id);
    if (it == by_name.end()) {
      const std::string& name = t.text(g.name_id);
      auto verdict = classify_tensor_core(name, extra);
      it = by_name.emplace(g.name_id, Verdict{verdict.uses_tensor_cores, verdict.decided, kernel_category_index(kernel_category(name))}).first;
    }
    g.tensor_core = it->second.tensor_core;
    g.tensor_core_decided = it->second.decided;
    g.category = it->second.category;
  }
}

// The ranges' derived columns into the model (by model position; TraceData is sorted differently).
void keep_range_results(const TraceData& t, TraceModel& m) {
  DerivedFacts& d = m.derived;
  d.range_parent.assign(m.ranges.size(), -1);
  d.range_depth.assign(m.ranges.size(), 0);
  d.range_marker.assign(m.ranges.size(), MarkerKind::none);
  for (const auto& r : t.ranges) {
    auto i = static_cast<size_t>(r.id);
    d.range_parent[i] = r.parent >= 0 ? static_cast<int32_t>(t.ranges[static_cast<size_t>(r.parent)].id) : -1;
    d.range_depth[i] = r.depth;
    d.range_marker[i] = r.marker;
  }
}

void add_activity_facts(TraceData& t, const TraceModel& m);

// The C++ passes over one trace's facts, in order; no SQL. The ranges' results go into the model
// as soon as nesting and classification have decided them (see derive_trace's ranges_derived).
void compute(TraceData& t, std::vector<BreakdownRow>& breakdown, TraceModel& m, const std::function<void()>& ranges_derived) {
  StepClock clock;
  nest_ranges(t);
  classify_ranges(t);
  keep_range_results(t, m);
  if (ranges_derived) ranges_derived();
  add_activity_facts(t, m);
  classify_kernels(t);
  clock.lap("nest_classify");
  correlate_gpu_to_api(t);
  clock.lap("correlate");
  detect_iterations(t);
  clock.lap("iterations");
  build_ops(t);
  clock.lap("ops");
  attribute_api_to_ops(t);
  attribute_gpu_to_ops(t);
  resolve_tensor_cores_by_op(t);  // names the table cannot decide: the launching op's dtypes
  assign_iterations(t);
  aggregate_op_gpu_time(t);
  clock.lap("attribute");
  attribute_sources(t);
  clock.lap("sources");
  t.steady = find_startup(t);
  t.workload = classify_workload(t);
  breakdown = compute_breakdown(t);
  clock.lap("breakdown");
}

RangeKind parse_kind(const std::string* k) {
  if (!k) return RangeKind::other;
  if (*k == "cpu_op") return RangeKind::cpu_op;
  if (*k == "user_annotation") return RangeKind::user_annotation;
  if (*k == "gpu_user_annotation") return RangeKind::gpu_user_annotation;
  if (*k == "python_function") return RangeKind::python_function;
  if (*k == "nvtx") return RangeKind::nvtx;
  return RangeKind::other;
}

int64_t end_of(int64_t start, int64_t dur) { return start + std::max<int64_t>(0, dur); }

// The facts derivation reads, in the orders its sweeps need: the trace, its devices and ranges
// here, the rest in add_activity_facts.
TraceData facts_of(TraceModel& m) {
  TraceData t;
  t.trace_id = m.trace_id;
  t.names = &m.strings;
  t.range_facts = &m.ranges;
  t.api_facts = &m.apis;
  t.kernel_facts = &m.kernels;
  t.memcpy_facts = &m.memcpys;
  t.memset_facts = &m.memsets;
  t.range_args = &m.range_args;
  t.format = m.info.format;
  t.framework = m.info.framework.value_or("");
  t.start_ns = m.start_ns;
  t.end_ns = m.end_ns;
  for (const auto& d : m.devices) {
    t.described_devices.push_back(d.row.device_id);
    TraceData::DeviceInfo info{d.row.vendor.value_or(""), d.row.name.value_or(""), std::nullopt};
    if (d.row.compute_major) info.compute_major = *d.row.compute_major;
    t.devices.emplace(d.row.device_id, std::move(info));
  }
  std::sort(t.described_devices.begin(), t.described_devices.end());
  t.ranges.reserve(m.ranges.size());
  std::vector<RangeKind> kinds(static_cast<size_t>(m.labels.size()) + 1, RangeKind::other);
  for (int64_t l = 1; l <= m.labels.size(); ++l) kinds[static_cast<size_t>(l)] = parse_kind(&m.labels.text(l));
  for (size_t i = 0; i < m.ranges.size(); ++i) {
    const RangeFact& f = m.ranges[i];
    RangeRec r;
    r.id = static_cast<int32_t>(i);
    r.pid = f.pid;
    r.tid = f.tid;
    r.start = f.start_ns;
    r.end = end_of(f.start_ns, f.dur_ns);
    r.name_id = f.name_id;
    r.kind = kinds[static_cast<size_t>(f.kind)];
    t.ranges.push_back(r);
  }
  return t;
}

// The runtime calls, GPU activity and syncs, added once the ranges are nested and classified
// (which read nothing else): the ranges' columns are published that much sooner.
void add_activity_facts(TraceData& t, const TraceModel& m) {
  t.apis.reserve(m.apis.size());
  for (size_t i = 0; i < m.apis.size(); ++i) {
    const ApiFact& f = m.apis[i];
    ApiRec a;
    a.id = static_cast<int32_t>(i);
    a.pid = f.pid;
    a.tid = f.tid;
    a.start = f.start_ns;
    a.end = end_of(f.start_ns, f.dur_ns);
    a.name_id = f.name_id;
    t.apis.push_back(a);
  }
  std::sort(t.apis.begin(), t.apis.end(), [](const ApiRec& a, const ApiRec& b) {
    if (a.pid != b.pid) return a.pid < b.pid;
    if (a.tid != b.tid) return a.tid < b.tid;
    if (a.start != b.start) return a.start < b.start;
    return a.id < b.id;
  });
  t.gpu.reserve(m.kernels.size() + m.memcpys.size() + m.memsets.size());
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const KernelFact& k = m.kernels[i];
    GpuRec g;
    g.kind = GpuKind::kernel;
    g.id = static_cast<int32_t>(i);
    g.device_id = k.device_id;
    g.pid = k.pid;
    g.start = k.start_ns;
    g.end = end_of(k.start_ns, k.dur_ns);
    g.name_id = k.name_id;
    t.gpu.push_back(g);
  }
  auto copies = [&](const std::vector<CopyFact>& rows, GpuKind kind) {
    for (size_t i = 0; i < rows.size(); ++i) {
      const CopyFact& c = rows[i];
      GpuRec g;
      g.kind = kind;
      g.id = static_cast<int32_t>(i);
      g.device_id = c.device_id;
      g.pid = c.pid;
      g.start = c.start_ns;
      g.end = end_of(c.start_ns, c.dur_ns);
      t.gpu.push_back(g);
    }
  };
  copies(m.memcpys, GpuKind::memcpy);
  copies(m.memsets, GpuKind::memset);
  // Time order; ties keep the order derivation has always seen (it decides attribution on equal
  // starts): kernels, then memcpys, then memsets; kernels by (device, id), copies and sets by
  // (pid, correlation id, id), NULL first.
  std::sort(t.gpu.begin(), t.gpu.end(), [&t](const GpuRec& a, const GpuRec& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.kind != b.kind) return static_cast<int>(a.kind) < static_cast<int>(b.kind);
    if (a.kind == GpuKind::kernel) {
      if (a.device_id != b.device_id) return a.device_id < b.device_id;
    } else {
      if (a.pid != b.pid) return a.pid < b.pid;
      int64_t ca = t.correlation_id(a), cb = t.correlation_id(b);
      if (ca != cb) return ca < cb;
    }
    return a.id < b.id;
  });
  t.syncs.reserve(m.syncs.size());
  for (size_t i = 0; i < m.syncs.size(); ++i) t.syncs.push_back({static_cast<int64_t>(i), m.syncs[i].start_ns, -1});
}

template <typename T>
void release(std::vector<T>& v) {
  std::vector<T>().swap(v);
}

// What the passes found, into the model (by model position; TraceData is sorted differently).
// Consumes the TraceData.
// The ranges' columns are there already (keep_range_results) and are neither moved nor written
// here: another thread may be reading them.
void keep_results(TraceData& t, std::vector<BreakdownRow>& breakdown, TraceModel& m, const DeriveOptions& options) {
  DerivedFacts& d = m.derived;
  // TraceData's rows go as soon as their results are copied: the model, TraceData and the derived
  // facts are all in memory here, the peak of a whole run (the x20 tiled trace: ~115 MB less).
  for (auto& op : t.ops) op.range = op.range >= 0 ? static_cast<int32_t>(t.ranges[static_cast<size_t>(op.range)].id) : -1;
  release(t.ranges);
  d.api_op.assign(m.apis.size(), -1);
  d.api_iteration.assign(m.apis.size(), -1);
  for (const auto& a : t.apis) {
    d.api_op[static_cast<size_t>(a.id)] = a.op;
    d.api_iteration[static_cast<size_t>(a.id)] = a.iteration;
  }
  d.kernels.resize(m.kernels.size());
  d.memcpys.resize(m.memcpys.size());
  d.memsets.resize(m.memsets.size());
  std::set<int64_t> active;
  for (const auto& g : t.gpu) {
    active.insert(g.device_id == kNone ? 0 : g.device_id);
    auto& table = g.kind == GpuKind::kernel ? d.kernels : g.kind == GpuKind::memcpy ? d.memcpys : d.memsets;
    GpuLinks& l = table[static_cast<size_t>(g.id)];
    l.api = g.api >= 0 ? t.apis[static_cast<size_t>(g.api)].id : -1;
    l.op = g.op;
    l.iteration = g.iteration;
    if (g.kind == GpuKind::kernel) {
      l.tensor_core = g.tensor_core ? 1 : 0;
      l.category = g.category;
      l.tc_op = g.op >= 0 ? t.ops[static_cast<size_t>(g.op)].tc_root : -1;
    }
  }
  release(t.gpu);
  release(t.apis);
  d.sync_iteration.assign(m.syncs.size(), -1);
  for (const auto& s : t.syncs) d.sync_iteration[static_cast<size_t>(s.id)] = s.iteration;
  d.ops = std::move(t.ops);  // op.range is already the range's model position (above)
  d.unassociated_spans = std::move(t.unassociated_spans);
  d.op_types = std::move(t.op_types);
  d.op_paths = std::move(t.op_paths);          // kept texts move with the tree: label views stay valid
  for (size_t k = 0; k < t.iterations.size(); ++k) {
    auto& it = t.iterations[k];
    d.iterations.push_back({it.number, std::move(it.name), it.start, it.end, it.gpu_start, it.gpu_end,
                            iteration_selected(&options, static_cast<int64_t>(k))});
  }
  d.iteration_source = t.iteration_source;
  d.workload = std::string(t.workload);
  for (const auto& row : breakdown) d.breakdown.push_back({row.device_id, row.iteration, row.category, row.time_ns});
  for (auto& s : t.steady)
    d.steady.push_back({s.device_id, s.window_start, s.window_end, s.steady_start, std::move(s.cause), std::move(s.evidence)});
  // Devices that ran work get has_activity 1, the other described ones 0; devices that ran work
  // but were not described by the trace (no deviceProperties, nsys 2026.2 container captures)
  // still get a row so that joins on device work.
  for (auto& dev : m.devices) dev.has_activity = active.contains(dev.row.device_id) ? 1 : 0;
  for (int64_t dev : active)
    if (!std::binary_search(t.described_devices.begin(), t.described_devices.end(), dev)) d.undescribed_devices.push_back(dev);
  d.key_node_problem = t.key_node_problem;
  d.iter_start = options.iter_start;
  d.iter_stop = options.iter_stop;
  d.sources = std::move(t.sources);
  d.done = true;
}

}  // namespace

void derive_trace(TraceModel& model, const DeriveOptions& options, const std::function<void()>& ranges_derived) {
  StepClock clock;
  model.derived = DerivedFacts{};
  TraceData t = facts_of(model);
  t.options = &options;
  clock.lap("facts");
  std::vector<BreakdownRow> breakdown;
  compute(t, breakdown, model, ranges_derived);
  keep_results(t, breakdown, model, options);
  clock.lap("results");
  // Graph replays and compiled regions read the op tree and the kernel -> API call -> op links
  // just kept in the model.
  derive_graphs_compiled(model);
  clock.lap("graphs");
}

}  // namespace proflint
