// engine/derive/graphs.cpp — CUDA graph replays and torch.compile regions of one derived trace model.
#include "engine/derive/graphs.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "engine/derive/categories.hpp"

namespace proflint {

bool is_graph_launch_name(std::string_view n) {
  return n.starts_with("cudaGraphLaunch") || n.starts_with("cuGraphLaunch") || n.starts_with("hipGraphLaunch");
}

bool is_kernel_launch_name(std::string_view n) {
  if (is_graph_launch_name(n)) return false;
  return n.starts_with("cudaLaunchKernel") || n.starts_with("cuLaunchKernel") || n.starts_with("cudaLaunchCooperativeKernel") ||
         n.starts_with("cuLaunchCooperativeKernel") || n.starts_with("hipLaunchKernel") || n.starts_with("hipModuleLaunchKernel") ||
         n.starts_with("hipExtModuleLaunchKernel") || n.starts_with("hipExtLaunchKernel");
}

bool is_compiled_region_name(std::string_view n) {
  return n.starts_with("Torch-Compiled Region") || n == "CompiledFunction" || n == "CompiledFunctionBackward" ||
         n.starts_with("## Call CompiledFxGraph");
}

std::string compiled_region_frame(std::string_view n) {
  constexpr std::string_view prefix = "Torch-Compiled Region:";
  if (!n.starts_with(prefix)) return "";
  n.remove_prefix(prefix.size());
  while (!n.empty() && n.front() == ' ') n.remove_prefix(1);
  while (!n.empty() && n.back() == ' ') n.remove_suffix(1);
  return std::string(n);
}

std::vector<int64_t> captured_nodes(const CaptureWindow& capture, size_t kernels) {
  if (kernels == 0) return {};
  if (capture.launch_ops.size() == kernels) return capture.launch_ops;
  if (capture.leaf_ops.size() == kernels) return capture.leaf_ops;
  return {};
}

namespace {

std::optional<int64_t> opt_of(int64_t v) { return v == kNone ? std::nullopt : std::optional<int64_t>(v); }

// Whether a rule holds for the text of a name id of one trace, decided once per distinct name
// (names repeat millions of times).
class NameRule {
 public:
  NameRule(const StringTable& names, bool (*rule)(std::string_view))
      : names_(names), rule_(rule), verdict_(static_cast<size_t>(names.size()) + 1, -1) {}
  bool operator()(int64_t id) {
    if (id < 1 || id > names_.size()) return false;
    int8_t& v = verdict_[static_cast<size_t>(id)];
    if (v < 0) v = rule_(names_.text(id)) ? 1 : 0;
    return v == 1;
  }

 private:
  const StringTable& names_;
  bool (*rule_)(std::string_view);
  std::vector<int8_t> verdict_;
};

bool is_capture_call_name(std::string_view v) {
  return v.find("StreamBeginCapture") != std::string_view::npos || v.find("StreamEndCapture") != std::string_view::npos ||
         is_kernel_launch_name(v);
}
bool is_triton_kernel_name(std::string_view v) { return !triton_kernel_kind(v).empty(); }

// ---------------------------------------------------------------- CUDA graphs

struct ReplayKernel {
  int64_t id, start, dur, name_id;  // id: position in the model's kernels
  std::optional<int64_t> device, graph_id, node_id, pid;
};
struct Replay {
  std::optional<int64_t> launch;  // position in the model's API calls
  int64_t launch_start = 0;
  std::vector<ReplayKernel> kernels;  // start order
};

// Where each recorded graph node came from (nsys CUDA_GRAPH_EVENTS, TraceModel::graph_node_events).
// A replayed kernel carries the id of a node of the instantiated graph; instantiation cloned that
// node from the one the capture created, and names it in originalGraphNodeId. The original's
// creation event gives the thread and time the node was made: during stream capture that is the
// captured launch itself, inside the op whose work the node replays. The op is the innermost op on
// that thread that encloses the creation time.
struct NodeCreation {
  int64_t op = -1;  // position in ops, -1 when no op encloses the creation
  int64_t start_ns = 0;
};

class NodeCreators {
 public:
  explicit NodeCreators(const TraceModel& m) : m_(m), d_(m.derived) {
    const auto& ev = m_.graph_node_events;
    for (size_t i = 0; i < ev.size(); ++i) {
      // The first event of a node id wins: a node is created once.
      by_node_.emplace(std::pair{ev[i].pid, ev[i].graph_node_id}, i);
      auto [it, fresh] = any_pid_.emplace(ev[i].graph_node_id, static_cast<int64_t>(i));
      if (!fresh && m_.graph_node_events[static_cast<size_t>(it->second)].pid != ev[i].pid) it->second = -1;  // ambiguous
    }
  }

  // The creation of the original of node `node` of process `pid` (pid unknown: the one process
  // with that node id), or nullptr when the profile did not record it: no node events, the chain
  // of originals leaves the recorded events (the capture happened before the trace) or loops.
  const NodeCreation* of(std::optional<int64_t> pid, std::optional<int64_t> node) {
    if (!node || m_.graph_node_events.empty()) return nullptr;
    const int64_t p = pid.value_or(kNone);
    auto key = std::pair{p, *node};
    if (auto it = resolved_.find(key); it != resolved_.end()) return it->second ? &*it->second : nullptr;
    std::optional<NodeCreation> out;
    std::optional<size_t> e = find(p, *node);
    std::set<int64_t> seen;
    while (e) {
      const GraphNodeEventFact& f = m_.graph_node_events[*e];
      if (!seen.insert(f.graph_node_id).second) break;  // a loop of originals: no creator
      if (f.original_graph_node_id == kNone) {
        out = NodeCreation{enclosing_op(f.pid, f.tid, f.start_ns), f.start_ns};
        break;
      }
      e = find(f.pid, f.original_graph_node_id);
    }
    auto [it, _] = resolved_.emplace(key, out);
    return it->second ? &*it->second : nullptr;
  }

 private:
  std::optional<size_t> find(int64_t pid, int64_t node) const {
    if (pid != kNone)
      if (auto it = by_node_.find({pid, node}); it != by_node_.end()) return it->second;
    if (auto it = any_pid_.find(node); it != any_pid_.end() && it->second >= 0) return static_cast<size_t>(it->second);
    return std::nullopt;
  }

  // The innermost op of thread (pid, tid) whose time holds `t`: the last op to start at or before
  // t, or the nearest of its ancestors that is still running at t (ops nest on a thread).
  int64_t enclosing_op(int64_t pid, int64_t tid, int64_t t) {
    if (pid == kNone || tid == kNone) return -1;
    if (!ops_by_thread_) {
      ops_by_thread_.emplace();
      for (size_t o = 0; o < d_.ops.size(); ++o) {
        const OpSpan op = m_.op_span(static_cast<int64_t>(o));
        if (op.pid != kNone && op.tid != kNone && op.start != kNone && op.dur != kNone)
          (*ops_by_thread_)[{op.pid, op.tid}].push_back(o);
      }
      for (auto& [_, v] : *ops_by_thread_)
        std::stable_sort(v.begin(), v.end(), [&](size_t a, size_t b) { return start_of(a) < start_of(b); });
    }
    auto it = ops_by_thread_->find({pid, tid});
    if (it == ops_by_thread_->end()) return -1;
    const auto& v = it->second;
    auto up = std::upper_bound(v.begin(), v.end(), t, [&](int64_t x, size_t o) { return x < start_of(o); });
    if (up == v.begin()) return -1;
    int64_t o = static_cast<int64_t>(*std::prev(up));
    for (int guard = 0; o >= 0 && static_cast<size_t>(o) < d_.ops.size() && guard < 4096; ++guard) {
      const OpSpan op = m_.op_span(o);
      if (op.pid == pid && op.tid == tid && op.start != kNone && op.dur != kNone && op.start <= t && t <= op.start + op.dur)
        return o;
      o = d_.ops[static_cast<size_t>(o)].parent;
    }
    return -1;
  }

  const TraceModel& m_;
  const DerivedFacts& d_;
  std::map<std::pair<int64_t, int64_t>, size_t> by_node_;  // (pid, node id) -> event
  std::unordered_map<int64_t, int64_t> any_pid_;           // node id -> event, -1 when several processes have it
  std::map<std::pair<int64_t, int64_t>, std::optional<NodeCreation>> resolved_;
  std::optional<std::map<std::pair<int64_t, int64_t>, std::vector<size_t>>> ops_by_thread_;
  int64_t start_of(size_t op) const { return m_.op_span(static_cast<int64_t>(op)).start; }
};

class GraphDeriver {
 public:
  explicit GraphDeriver(TraceModel& m) : m_(m), d_(m.derived), creators_(m) {}

  void run() {
    std::vector<Replay> replays = load_replays();
    if (replays.empty()) return;
    std::vector<CaptureWindow> captures = load_captures();
    std::vector<bool> used(captures.size(), false);

    // Graph identity: the recorded id when every kernel of the replay carries one, else the
    // sequence of kernel names it replays.
    int64_t next_id = 1;
    for (const auto& r : replays)
      for (const auto& k : r.kernels)
        if (k.graph_id) next_id = std::max(next_id, *k.graph_id + 1);
    std::map<std::vector<int64_t>, int64_t> by_sequence;
    struct Graph {
      int64_t id = 0;
      bool recorded = false;
      std::vector<size_t> replays;
    };
    std::map<int64_t, Graph> graphs;
    std::vector<int64_t> order;  // graph ids in order of first replay
    for (size_t i = 0; i < replays.size(); ++i) {
      const auto& ks = replays[i].kernels;
      bool recorded = std::all_of(ks.begin(), ks.end(), [&](const ReplayKernel& k) { return k.graph_id == ks.front().graph_id; }) &&
                      ks.front().graph_id.has_value();
      int64_t gid;
      if (recorded) {
        gid = *ks.front().graph_id;
      } else {
        std::vector<int64_t> seq;
        for (const auto& k : ks) seq.push_back(k.name_id);
        auto [it, fresh] = by_sequence.emplace(std::move(seq), next_id);
        if (fresh) ++next_id;
        gid = it->second;
      }
      auto [it, fresh] = graphs.emplace(gid, Graph{gid, recorded, {}});
      if (fresh) order.push_back(gid);
      it->second.replays.push_back(i);
    }
    for (int64_t gid : order) {
      const Graph& g = graphs[gid];
      const Replay& first = replays[g.replays.front()];
      const size_t nodes = first.kernels.size();
      // The latest capture not yet taken that ended before the first replay and can name each node.
      std::vector<int64_t> captured;
      std::optional<int64_t> capture_start;
      for (size_t c = captures.size(); c-- > 0;) {
        if (used[c] || captures[c].end_ns > first.launch_start) continue;
        auto ops = captured_nodes(captures[c], nodes);
        if (ops.empty()) continue;
        used[c] = true;
        captured = std::move(ops);
        capture_start = captures[c].start_ns;
        break;
      }
      int64_t gpu = 0, span = 0;
      std::map<int64_t, int64_t> op_time;  // captured op -> kernel time
      int64_t first_matched = 0;           // kernels of the first replay matched to an op
      std::optional<int64_t> first_created;  // earliest creation of a matched node (node events)
      for (size_t r = 0; r < g.replays.size(); ++r) {
        const Replay& rep = replays[g.replays[r]];
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (size_t pos = 0; pos < rep.kernels.size(); ++pos) {
          const ReplayKernel& k = rep.kernels[pos];
          // The op that created the kernel's node when the profile recorded node creation; else
          // the op captured at the kernel's position in the replay.
          std::optional<int64_t> op;
          if (const NodeCreation* c = creators_.of(k.pid, k.node_id); c && c->op >= 0) {
            op = c->op;
            if (r == 0) first_created = std::min(first_created.value_or(c->start_ns), c->start_ns);
          } else if (pos < captured.size() && captured[pos] >= 0 && rep.kernels.size() == nodes) {
            op = captured[pos];
          }
          if (op && r == 0) ++first_matched;
          if (op) op_time[*op] += k.dur;
          gpu += k.dur;
          lo = std::min(lo, k.start);
          hi = std::max(hi, k.start + k.dur);
          d_.graph_kernels.push_back({k.id, gid, k.node_id ? *k.node_id : static_cast<int64_t>(pos), static_cast<int64_t>(r),
                                      rep.launch.value_or(-1), op.value_or(-1)});
        }
        if (hi > lo) span += hi - lo;
      }
      const auto n = static_cast<int64_t>(g.replays.size());
      CudaGraphFact f;
      f.graph_id = gid;
      f.recorded = g.recorded;
      f.device_id = first.kernels.front().device.value_or(kNone);
      f.replays = n;
      f.kernels_per_replay = static_cast<int64_t>(nodes);
      f.gpu_time_ns = gpu;
      f.gpu_time_per_replay_ns = gpu / n;
      f.span_per_replay_ns = span / n;
      // The stream capture it came from, else (nodes matched by their creation only) the first
      // creation of one of its nodes.
      if (!capture_start) capture_start = first_created;
      f.capture_start_ns = capture_start.value_or(kNone);
      if (capture_start) f.captured_ops = first_matched;
      // The captured op name with the most GPU time (ops of one name added up), ties by name.
      std::map<std::string, int64_t> by_name;
      for (const auto& [op, t] : op_time) by_name[op_name(op)] += t;
      const std::string* top = nullptr;
      int64_t best = -1;
      for (const auto& [name, t] : by_name)
        if (t > best) best = t, top = &name;
      if (top) f.top_captured_op = *top;
      d_.cuda_graphs.push_back(std::move(f));
    }
  }

 private:
  // Kernels a graph replayed: those with recorded graph ids and those a graph launch call made,
  // grouped into replays by their launch call (else correlation id, else recorded graph id).
  std::vector<Replay> load_replays() {
    std::vector<Replay> out;
    NameRule graph_launch(m_.strings, is_graph_launch_name);
    std::vector<int64_t> recorded(m_.kernels.size(), -1);  // kernel -> index in kernel_graph_nodes
    for (size_t i = 0; i < m_.kernel_graph_nodes.size(); ++i) {
      int64_t k = m_.kernel_graph_nodes[i].kernel;
      if (k >= 0 && static_cast<size_t>(k) < recorded.size()) recorded[static_cast<size_t>(k)] = static_cast<int64_t>(i);
    }
    std::vector<size_t> kernels;
    for (size_t i = 0; i < m_.kernels.size(); ++i) {
      int64_t api = i < d_.kernels.size() ? d_.kernels[i].api : -1;
      if (recorded[i] >= 0 || (api >= 0 && graph_launch(m_.apis[static_cast<size_t>(api)].name_id))) kernels.push_back(i);
    }
    std::stable_sort(kernels.begin(), kernels.end(),
                     [&](size_t a, size_t b) { return m_.kernels[a].start_ns < m_.kernels[b].start_ns; });
    std::map<std::pair<int, int64_t>, size_t> index;  // (by launch 0 / by correlation 1 / by graph 2, key) -> replay
    for (size_t i : kernels) {
      const KernelFact& kf = m_.kernels[i];
      std::optional<int64_t> graph_id, node_id;
      if (recorded[i] >= 0) {
        const KernelGraphFact& g = m_.kernel_graph_nodes[static_cast<size_t>(recorded[i])];
        graph_id = opt_of(g.graph_id);
        node_id = opt_of(g.graph_node_id);
      }
      ReplayKernel k{static_cast<int64_t>(i), kf.start_ns, kf.dur_ns, kf.name_id, opt_of(kf.device_id), graph_id, node_id,
                     opt_of(kf.pid)};
      int64_t launch = d_.kernels[i].api;
      std::pair<int, int64_t> key;
      if (launch >= 0) key = {0, launch};
      else if (kf.correlation_id != kNone) key = {1, kf.correlation_id};  // the launch is outside the window: its correlation id
      else key = {2, k.graph_id.value_or(-1)};
      auto [it, fresh] = index.emplace(key, out.size());
      if (fresh) {
        Replay r;
        if (launch >= 0) r.launch = launch, r.launch_start = m_.apis[static_cast<size_t>(launch)].start_ns;
        else r.launch_start = k.start;
        out.push_back(std::move(r));
      }
      out[it->second].kernels.push_back(k);
    }
    return out;
  }

  std::vector<CaptureWindow> load_captures() {
    std::vector<CaptureWindow> out;
    struct Call {
      int64_t start, op;
      int kind;  // 0 begin, 1 end, 2 kernel launch
    };
    NameRule capture_call(m_.strings, is_capture_call_name);
    std::vector<size_t> apis;
    bool any_begin = false;
    for (size_t i = 0; i < m_.apis.size(); ++i) {
      if (!capture_call(m_.apis[i].name_id)) continue;
      apis.push_back(i);
      any_begin = any_begin || m_.strings.text(m_.apis[i].name_id).find("StreamBeginCapture") != std::string::npos;
    }
    if (!any_begin) return out;
    std::stable_sort(apis.begin(), apis.end(), [&](size_t a, size_t b) { return m_.apis[a].start_ns < m_.apis[b].start_ns; });
    std::map<std::pair<int64_t, int64_t>, std::vector<Call>> by_thread;
    for (size_t i : apis) {
      const ApiFact& a = m_.apis[i];
      const std::string& n = m_.strings.text(a.name_id);
      int kind = n.find("StreamBeginCapture") != std::string::npos ? 0 : n.find("StreamEndCapture") != std::string::npos ? 1 : 2;
      int64_t op = i < d_.api_op.size() ? d_.api_op[i] : -1;
      by_thread[{a.pid == kNone ? 0 : a.pid, a.tid == kNone ? 0 : a.tid}].push_back({a.start_ns, op, kind});
    }
    for (const auto& [thread, calls] : by_thread) {
      for (size_t i = 0; i < calls.size(); ++i) {
        if (calls[i].kind != 0) continue;
        CaptureWindow w;
        w.start_ns = calls[i].start;
        size_t j = i + 1;
        for (; j < calls.size() && calls[j].kind != 1; ++j)
          if (calls[j].kind == 2) w.launch_ops.push_back(calls[j].op);
        if (j == calls.size()) break;  // the capture did not end inside the window
        w.end_ns = calls[j].start;
        // Ops of the capturing thread that started inside the capture; a leaf is one no other of
        // them names as parent (its children start inside it, so inside the capture too).
        const std::vector<size_t>& ops = ops_of_thread(thread);
        auto lo = std::lower_bound(ops.begin(), ops.end(), w.start_ns,
                                   [&](size_t o, int64_t t) { return start_of(o) < t; });
        std::vector<size_t> inside;
        std::set<int64_t> parents;
        for (auto p = lo; p != ops.end() && start_of(*p) < w.end_ns; ++p) {
          inside.push_back(*p);
          if (d_.ops[*p].parent >= 0) parents.insert(d_.ops[*p].parent);
        }
        for (size_t op : inside)
          if (!parents.contains(static_cast<int64_t>(op))) w.leaf_ops.push_back(static_cast<int64_t>(op));
        out.push_back(std::move(w));
        i = j;
      }
    }
    std::sort(out.begin(), out.end(), [](const CaptureWindow& a, const CaptureWindow& b) { return a.end_ns < b.end_ns; });
    return out;
  }

  // The ops with a recorded thread and start on one (pid, tid), in (start, position) order.
  const std::vector<size_t>& ops_of_thread(std::pair<int64_t, int64_t> thread) {
    if (!ops_by_thread_) {
      ops_by_thread_.emplace();
      for (size_t o = 0; o < d_.ops.size(); ++o) {
        const OpSpan op = m_.op_span(static_cast<int64_t>(o));
        if (op.pid != kNone && op.tid != kNone && op.start != kNone) (*ops_by_thread_)[{op.pid, op.tid}].push_back(o);
      }
      for (auto& [_, v] : *ops_by_thread_)
        std::stable_sort(v.begin(), v.end(), [&](size_t a, size_t b) { return start_of(a) < start_of(b); });
    }
    static const std::vector<size_t> none;
    auto it = ops_by_thread_->find(thread);
    return it == ops_by_thread_->end() ? none : it->second;
  }

  std::string op_name(int64_t op) const {
    if (op < 0 || static_cast<size_t>(op) >= d_.ops.size()) return {};
    return m_.strings.text(d_.ops[static_cast<size_t>(op)].name_id);
  }

  const TraceModel& m_;
  DerivedFacts& d_;
  NodeCreators creators_;
  std::optional<std::map<std::pair<int64_t, int64_t>, std::vector<size_t>>> ops_by_thread_;
  int64_t start_of(size_t op) const { return m_.op_span(static_cast<int64_t>(op)).start; }
};

// ---------------------------------------------------------------- torch.compile

class CompiledDeriver {
 public:
  explicit CompiledDeriver(TraceModel& m)
      : m_(m), d_(m.derived), region_name_(m.strings, is_compiled_region_name), triton_name_(m.strings, is_triton_kernel_name) {}

  void run() {
    bool regions = std::any_of(d_.ops.begin(), d_.ops.end(), [&](const OpFact& o) { return region_name_(o.name_id); });
    std::vector<int64_t> region_of;  // per op of ops_: index in ops_ of its outermost region op, -1 outside
    if (regions) load_ops(region_of);

    struct Totals {
      int64_t triton = 0, triton_ns = 0, other = 0, other_ns = 0;
      std::set<int64_t> fallback_ops;
    };
    std::map<size_t, Totals> totals;  // region op (index in ops_) -> what ran inside
    for (size_t i = 0; i < m_.kernels.size(); ++i) {
      const KernelFact& kf = m_.kernels[i];
      if (!regions && !triton_name_(kf.name_id)) continue;
      int64_t dur = kf.dur_ns;
      int64_t op = i < d_.kernels.size() ? d_.kernels[i].op : -1;
      std::string_view kind = triton_name_(kf.name_id) ? triton_kernel_kind(m_.strings.text(kf.name_id)) : std::string_view();
      int64_t region = -1;
      if (regions && op >= 0 && static_cast<size_t>(op) < position_.size() && position_[static_cast<size_t>(op)] >= 0)
        region = region_of[static_cast<size_t>(position_[static_cast<size_t>(op)])];
      if (kind.empty() && region < 0) continue;
      if (region >= 0) {
        Totals& t = totals[static_cast<size_t>(region)];
        if (!kind.empty()) {
          ++t.triton;
          t.triton_ns += dur;
        } else {
          ++t.other;
          t.other_ns += dur;
          t.fallback_ops.insert(op);
        }
      }
      d_.kernel_compiled.push_back({static_cast<int64_t>(i), region >= 0 ? ops_[static_cast<size_t>(region)].range : -1, kind,
                                    kind.empty() && region >= 0});
    }
    if (!regions) return;

    // Regions in time order per thread; a forward region follows a graph break when it comes after
    // another forward region of the same iteration on the same thread: Dynamo split the code there
    // and ran what it could not trace in Python, with framework ops eagerly ('eager_ops') or with
    // nothing but Python ('python_only': a print, a logging call, a Python side effect).
    std::vector<size_t> tops;
    for (size_t i = 0; i < ops_.size(); ++i)
      if (region_of[i] == static_cast<int64_t>(i)) tops.push_back(i);
    std::sort(tops.begin(), tops.end(), [&](size_t a, size_t b) {
      const auto &x = ops_[a], &y = ops_[b];
      return std::tie(x.pid, x.tid, x.start, x.id) < std::tie(y.pid, y.tid, y.start, y.id);
    });
    std::optional<size_t> prev;
    for (size_t i : tops) {
      const Op& r = ops_[i];
      const std::string& name = m_.strings.text(r.name_id);
      const bool backward = name.find("Backward") != std::string::npos;
      bool brk = false;
      std::string_view cause;
      if (!backward) {
        if (prev) {
          const Op& p = ops_[*prev];
          if (p.pid == r.pid && p.tid == r.tid && p.iteration == r.iteration) {
            if (eager_between(p, r, region_of)) {
              brk = true;
              cause = "eager_ops";
            } else if (resumes(m_.strings.text(p.name_id), name, r.iteration.has_value())) {
              brk = true;
              cause = "python_only";
            }
          }
        }
        prev = i;
      }
      const Totals& t = totals[i];
      CompiledRegionFact f;
      f.range = r.range;
      f.name = name;
      f.frame = compiled_region_frame(name);
      f.backward = backward;
      f.iteration = r.iteration.value_or(kNone);
      f.start_ns = r.start;
      f.dur_ns = r.end - r.start;
      f.triton_kernels = t.triton;
      f.triton_time_ns = t.triton_ns;
      f.other_kernels = t.other;
      f.other_time_ns = t.other_ns;
      f.fallback_ops = static_cast<int64_t>(t.fallback_ops.size());
      f.graph_break_before = brk;
      f.break_cause = cause;
      d_.compiled_regions.push_back(std::move(f));
    }
  }

 private:
  struct Op {
    int64_t id = 0, parent = -1, name_id = 0, range = 0, pid = 0, tid = 0, start = 0, end = 0;  // id: position in ops
    std::optional<int64_t> iteration;
  };

  // The ops made of a range, in position order, and for each its outermost enclosing region op.
  void load_ops(std::vector<int64_t>& region_of) {
    position_.assign(d_.ops.size(), -1);
    for (size_t p = 0; p < d_.ops.size(); ++p) {
      const OpFact& f = d_.ops[p];
      if (f.range < 0) continue;
      Op o;
      o.id = static_cast<int64_t>(p);
      o.parent = f.parent;
      o.name_id = f.name_id;
      o.range = f.range;
      const OpSpan span = m_.op_span(static_cast<int64_t>(p));
      o.pid = span.pid == kNone ? -1 : span.pid;
      o.tid = span.tid == kNone ? -1 : span.tid;
      o.start = span.start == kNone ? 0 : span.start;
      o.end = o.start + (span.dur == kNone ? 0 : span.dur);
      if (f.iteration >= 0) o.iteration = f.iteration;
      position_[p] = static_cast<int64_t>(ops_.size());
      ops_.push_back(o);
    }
    // Parents come before their children in position order, so one pass resolves the outermost region.
    region_of.assign(ops_.size(), -1);
    for (size_t i = 0; i < ops_.size(); ++i) {
      int64_t up = -1;
      int64_t parent = ops_[i].parent;
      if (parent >= 0 && static_cast<size_t>(parent) < position_.size()) {
        int64_t at = position_[static_cast<size_t>(parent)];
        if (at >= 0 && static_cast<size_t>(at) < i) up = region_of[static_cast<size_t>(at)];
      }
      if (up < 0 && region_name_(ops_[i].name_id)) up = static_cast<int64_t>(i);
      region_of[i] = up;
    }
    by_thread_.clear();
    for (size_t i = 0; i < ops_.size(); ++i) by_thread_[{ops_[i].pid, ops_[i].tid}].push_back(i);
    for (auto& [_, v] : by_thread_)
      std::sort(v.begin(), v.end(), [&](size_t a, size_t b) { return ops_[a].start < ops_[b].start; });
  }

  // Whether region `next`, with only Python run since region `prev` on its thread, resumes the
  // frame `prev` broke off. Dynamo numbers frames in the order it first compiles them, and the
  // resume function after a break is compiled after the frame it resumes, so its frame id is
  // larger ('Torch-Compiled Region: 0/0' then '1/0'); a smaller or equal one is a new call of an
  // earlier frame (the next loop turn). Regions without frame ids (CompiledFunction) count only
  // inside one recorded iteration.
  static bool resumes(std::string_view prev, std::string_view next, bool in_iteration) {
    auto frame_id = [](std::string_view n) -> std::optional<int64_t> {
      std::string f = compiled_region_frame(n);
      int64_t v = 0;
      size_t i = 0;
      for (; i < f.size() && f[i] >= '0' && f[i] <= '9' && v < (int64_t{1} << 40); ++i) v = v * 10 + (f[i] - '0');
      if (i == 0) return std::nullopt;
      return v;
    };
    auto a = frame_id(prev), b = frame_id(next);
    if (a && b) return *b > *a;
    return in_iteration;
  }

  // Any framework op outside every region (Dynamo's own guard checks aside) that ran wholly
  // between the two regions on their thread.
  bool eager_between(const Op& a, const Op& b, const std::vector<int64_t>& region_of) {
    auto it = by_thread_.find({a.pid, a.tid});
    if (it == by_thread_.end()) return false;
    const auto& v = it->second;
    auto lo = std::lower_bound(v.begin(), v.end(), a.end, [&](size_t i, int64_t t) { return ops_[i].start < t; });
    for (auto p = lo; p != v.end() && ops_[*p].start < b.start; ++p) {
      const Op& o = ops_[*p];
      if (o.end > b.start || region_of[*p] >= 0) continue;
      if (region_name_(o.name_id)) continue;
      // Dynamo's guard evaluation between compiled frames is not eager model code.
      if (m_.strings.text(o.name_id).starts_with("TorchDynamo")) continue;
      return true;
    }
    return false;
  }

  const TraceModel& m_;
  DerivedFacts& d_;
  NameRule region_name_, triton_name_;
  std::vector<Op> ops_;
  std::vector<int64_t> position_;  // per op position: index in ops_, -1 when not there
  std::map<std::pair<int64_t, int64_t>, std::vector<size_t>> by_thread_;
};

}  // namespace

void derive_graphs_compiled(TraceModel& model) {
  DerivedFacts& d = model.derived;
  d.graph_kernels.clear();
  d.cuda_graphs.clear();
  d.compiled_regions.clear();
  d.kernel_compiled.clear();
  if (!d.done) return;
  GraphDeriver(model).run();
  CompiledDeriver(model).run();
}

}  // namespace proflint
