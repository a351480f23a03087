// engine/derive/graphs.cpp — CUDA graph replays and torch.compile regions over the written store.
#include "engine/derive/graphs.hpp"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

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

std::optional<int64_t> opt_col(const SQLite::Statement& q, int c) {
  if (q.getColumn(c).isNull()) return std::nullopt;
  return q.getColumn(c).getInt64();
}

void bind_opt(SQLite::Statement& s, int i, std::optional<int64_t> v) {
  if (v) s.bind(i, *v);
  else s.bind(i);
}

// Ids of the texts in the string table for which `keep` holds (names repeat: checked once each).
template <class Pred>
std::unordered_map<int64_t, std::string> strings_where(SQLite::Database& db, const char* like, Pred keep) {
  std::unordered_map<int64_t, std::string> out;
  SQLite::Statement q(db, std::string("SELECT id, value FROM string WHERE ") + like);
  while (q.executeStep()) {
    std::string v = q.getColumn(1).getString();
    if (keep(v)) out.emplace(q.getColumn(0).getInt64(), std::move(v));
  }
  return out;
}

std::string id_list(const std::unordered_map<int64_t, std::string>& ids) {
  std::string out;
  for (const auto& [id, _] : ids) out += (out.empty() ? "" : ",") + std::to_string(id);
  return out;
}

struct OpRow {
  int64_t id = 0, parent = -1, name_id = 0, pid = 0, tid = 0, start = 0, end = 0, kernels = 0;
  std::optional<int64_t> iteration;
};

// ---------------------------------------------------------------- CUDA graphs

struct ReplayKernel {
  int64_t id, start, dur, name_id;
  std::optional<int64_t> device, graph_id, node_id;
};
struct Replay {
  std::optional<int64_t> launch;  // api_call.id
  int64_t launch_start = 0;
  std::vector<ReplayKernel> kernels;  // start order
};

class GraphDeriver {
 public:
  GraphDeriver(SQLite::Database& db, int64_t trace_id) : db_(db), trace_(trace_id) {}

  void run(SQLite::Statement& kernel_ins, SQLite::Statement& graph_ins) {
    auto launch_names = strings_where(db_, "value LIKE '%GraphLaunch%'", [](const std::string& v) { return is_graph_launch_name(v); });
    std::vector<Replay> replays = load_replays(launch_names);
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
      for (size_t r = 0; r < g.replays.size(); ++r) {
        const Replay& rep = replays[g.replays[r]];
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        for (size_t pos = 0; pos < rep.kernels.size(); ++pos) {
          const ReplayKernel& k = rep.kernels[pos];
          std::optional<int64_t> op;
          if (pos < captured.size() && captured[pos] >= 0 && rep.kernels.size() == nodes) op = captured[pos];
          if (op) op_time[*op] += k.dur;
          gpu += k.dur;
          lo = std::min(lo, k.start);
          hi = std::max(hi, k.start + k.dur);
          kernel_ins.bind(1, k.id);
          kernel_ins.bind(2, trace_);
          kernel_ins.bind(3, gid);
          kernel_ins.bind(4, k.node_id ? *k.node_id : static_cast<int64_t>(pos));
          kernel_ins.bind(5, static_cast<int64_t>(r));
          bind_opt(kernel_ins, 6, rep.launch);
          bind_opt(kernel_ins, 7, op);
          kernel_ins.exec();
          kernel_ins.reset();
        }
        if (hi > lo) span += hi - lo;
      }
      const auto n = static_cast<int64_t>(g.replays.size());
      graph_ins.bind(1, trace_);
      graph_ins.bind(2, gid);
      graph_ins.bind(3, g.recorded ? "recorded" : "kernel_sequence");
      bind_opt(graph_ins, 4, first.kernels.front().device);
      graph_ins.bind(5, n);
      graph_ins.bind(6, static_cast<int64_t>(nodes));
      graph_ins.bind(7, gpu);
      graph_ins.bind(8, gpu / n);
      graph_ins.bind(9, span / n);
      bind_opt(graph_ins, 10, capture_start);
      if (capture_start) graph_ins.bind(11, static_cast<int64_t>(std::count_if(captured.begin(), captured.end(), [](int64_t o) { return o >= 0; })));
      else graph_ins.bind(11);
      // The captured op name with the most GPU time (ops of one name added up), ties by name.
      std::map<std::string, int64_t> by_name;
      for (const auto& [op, t] : op_time) by_name[op_name(op)] += t;
      const std::string* top = nullptr;
      int64_t best = -1;
      for (const auto& [name, t] : by_name)
        if (t > best) best = t, top = &name;
      if (top) graph_ins.bind(12, *top);
      else graph_ins.bind(12);
      graph_ins.exec();
      graph_ins.reset();
    }
  }

 private:
  std::vector<Replay> load_replays(const std::unordered_map<int64_t, std::string>& launch_names) {
    std::string launches = id_list(launch_names);
    std::vector<Replay> out;
    if (launches.empty()) {  // no graph launch anywhere: only recorded ids can make replays
      SQLite::Statement any(db_, "SELECT 1 FROM kernel_graph_node WHERE trace_id = ?1 LIMIT 1");
      any.bind(1, trace_);
      if (!any.executeStep()) return out;
    }
    std::string sql =
        "SELECT k.id, k.start_ns, k.dur_ns, k.name_id, k.device_id, g.graph_id, g.graph_node_id, k.api_call_id, a.start_ns, "
        "k.correlation_id FROM _kernel k LEFT JOIN kernel_graph_node g ON g.kernel_id = k.id "
        "LEFT JOIN _api_call a ON a.id = k.api_call_id WHERE k.trace_id = ?1 AND (g.kernel_id IS NOT NULL";
    if (!launches.empty()) sql += " OR a.name_id IN (" + launches + ")";
    sql += ") ORDER BY k.start_ns, k.id";
    SQLite::Statement q(db_, sql);
    q.bind(1, trace_);
    std::map<std::pair<int, int64_t>, size_t> index;  // (by launch 0 / by correlation 1 / by graph 2, key) -> replay
    while (q.executeStep()) {
      ReplayKernel k{q.getColumn(0).getInt64(), q.getColumn(1).getInt64(), q.getColumn(2).getInt64(), q.getColumn(3).getInt64(),
                     opt_col(q, 4), opt_col(q, 5), opt_col(q, 6)};
      auto launch = opt_col(q, 7);
      bool by_launch = launch && !q.getColumn(8).isNull();
      std::pair<int, int64_t> key;
      if (by_launch) key = {0, *launch};
      else if (auto corr = opt_col(q, 9)) key = {1, *corr};  // the launch is outside the window: its correlation id
      else key = {2, k.graph_id.value_or(-1)};
      auto [it, fresh] = index.emplace(key, out.size());
      if (fresh) {
        Replay r;
        if (by_launch) r.launch = launch, r.launch_start = q.getColumn(8).getInt64();
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
    std::map<std::pair<int64_t, int64_t>, std::vector<Call>> by_thread;
    auto names = strings_where(db_, "value LIKE '%Capture%' OR value LIKE '%Launch%'", [](const std::string& v) {
      return v.find("StreamBeginCapture") != std::string::npos || v.find("StreamEndCapture") != std::string::npos ||
             is_kernel_launch_name(v);
    });
    if (names.empty()) return out;
    bool any_begin = false;
    for (const auto& [_, v] : names) any_begin = any_begin || v.find("StreamBeginCapture") != std::string::npos;
    if (!any_begin) return out;
    SQLite::Statement q(db_, "SELECT pid, tid, start_ns, name_id, op_id FROM _api_call WHERE trace_id = ?1 AND name_id IN (" +
                                 id_list(names) + ") ORDER BY start_ns, id");
    q.bind(1, trace_);
    while (q.executeStep()) {
      const std::string& n = names[q.getColumn(3).getInt64()];
      int kind = n.find("StreamBeginCapture") != std::string::npos ? 0 : n.find("StreamEndCapture") != std::string::npos ? 1 : 2;
      by_thread[{q.getColumn(0).getInt64(), q.getColumn(1).getInt64()}].push_back(
          {q.getColumn(2).getInt64(), q.getColumn(4).isNull() ? -1 : q.getColumn(4).getInt64(), kind});
    }
    // Ops of the capturing thread that started inside the capture; a leaf is one no other of them
    // names as parent (its children start inside it, so inside the capture too).
    SQLite::Statement leaves(db_,
                             "SELECT o.id, o.parent_id FROM _op o WHERE o.trace_id = ?1 AND o.pid IS ?2 AND o.tid IS ?3 "
                             "AND o.start_ns >= ?4 AND o.start_ns < ?5 ORDER BY o.start_ns, o.id");
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
        leaves.bind(1, trace_);
        leaves.bind(2, thread.first);
        leaves.bind(3, thread.second);
        leaves.bind(4, w.start_ns);
        leaves.bind(5, w.end_ns);
        std::vector<int64_t> ops;
        std::set<int64_t> parents;
        while (leaves.executeStep()) {
          ops.push_back(leaves.getColumn(0).getInt64());
          if (!leaves.getColumn(1).isNull()) parents.insert(leaves.getColumn(1).getInt64());
        }
        leaves.reset();
        for (int64_t op : ops)
          if (!parents.contains(op)) w.leaf_ops.push_back(op);
        out.push_back(std::move(w));
        i = j;
      }
    }
    std::sort(out.begin(), out.end(), [](const CaptureWindow& a, const CaptureWindow& b) { return a.end_ns < b.end_ns; });
    return out;
  }

  std::string op_name(int64_t op) {
    SQLite::Statement q(db_, "SELECT s.value FROM _op o JOIN string s ON s.id = o.name_id WHERE o.id = ?1");
    q.bind(1, op);
    return q.executeStep() ? q.getColumn(0).getString() : std::string();
  }

  SQLite::Database& db_;
  int64_t trace_;
};

// ---------------------------------------------------------------- torch.compile

class CompiledDeriver {
 public:
  CompiledDeriver(SQLite::Database& db, int64_t trace_id, const std::unordered_map<int64_t, std::string>& region_names,
                  const std::unordered_map<int64_t, std::string>& triton_names)
      : db_(db), trace_(trace_id), region_names_(region_names), triton_names_(triton_names) {}

  void run(SQLite::Statement& region_ins, SQLite::Statement& kernel_ins) {
    bool regions = false;
    if (!region_names_.empty()) {
      SQLite::Statement q(db_, "SELECT 1 FROM _op WHERE trace_id = ?1 AND name_id IN (" + id_list(region_names_) + ") LIMIT 1");
      q.bind(1, trace_);
      regions = q.executeStep();
    }
    if (!regions && triton_names_.empty()) return;
    std::vector<int64_t> region_of;  // per op position: position of its outermost region op, -1 outside
    if (regions) load_ops(region_of);

    struct Totals {
      int64_t triton = 0, triton_ns = 0, other = 0, other_ns = 0;
      std::set<int64_t> fallback_ops;
    };
    std::map<size_t, Totals> totals;  // region op position -> what ran inside
    std::string sql = "SELECT id, op_id, dur_ns, name_id FROM _kernel WHERE trace_id = ?1";
    if (!regions) sql += " AND name_id IN (" + id_list(triton_names_) + ")";
    sql += " ORDER BY id";
    SQLite::Statement q(db_, sql);
    q.bind(1, trace_);
    while (q.executeStep()) {
      int64_t kernel = q.getColumn(0).getInt64(), dur = q.getColumn(2).getInt64();
      std::optional<int64_t> op = opt_col(q, 1);
      auto name = triton_names_.find(q.getColumn(3).getInt64());
      std::string_view kind = name == triton_names_.end() ? std::string_view() : triton_kernel_kind(name->second);
      int64_t region = -1;
      if (regions && op) {
        auto at = position_.find(*op);
        if (at != position_.end()) region = region_of[at->second];
      }
      if (kind.empty() && region < 0) continue;
      if (region >= 0) {
        Totals& t = totals[static_cast<size_t>(region)];
        if (!kind.empty()) {
          ++t.triton;
          t.triton_ns += dur;
        } else {
          ++t.other;
          t.other_ns += dur;
          t.fallback_ops.insert(*op);
        }
      }
      kernel_ins.bind(1, kernel);
      kernel_ins.bind(2, trace_);
      if (region >= 0) kernel_ins.bind(3, ops_[static_cast<size_t>(region)].range);
      else kernel_ins.bind(3);
      if (kind.empty()) kernel_ins.bind(4);
      else kernel_ins.bind(4, std::string(kind));
      kernel_ins.bind(5, kind.empty() && region >= 0 ? 1 : 0);
      kernel_ins.exec();
      kernel_ins.reset();
    }
    if (!regions) return;

    // Regions in time order per thread; a forward region is a graph break when framework ops ran
    // between it and the previous forward region of the same iteration on the same thread.
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
      const std::string& name = region_names_.at(r.name_id);
      const bool backward = name.find("Backward") != std::string::npos;
      bool brk = false;
      if (!backward) {
        if (prev) {
          const Op& p = ops_[*prev];
          if (p.pid == r.pid && p.tid == r.tid && p.iteration == r.iteration) brk = eager_between(p, r, region_of);
        }
        prev = i;
      }
      const Totals& t = totals[i];
      region_ins.bind(1, r.range);
      region_ins.bind(2, trace_);
      region_ins.bind(3, name);
      std::string frame = compiled_region_frame(name);
      if (frame.empty()) region_ins.bind(4);
      else region_ins.bind(4, frame);
      region_ins.bind(5, backward ? "bwd" : "fwd");
      bind_opt(region_ins, 6, r.iteration);
      region_ins.bind(7, r.start);
      region_ins.bind(8, r.end - r.start);
      region_ins.bind(9, t.triton);
      region_ins.bind(10, t.triton_ns);
      region_ins.bind(11, t.other);
      region_ins.bind(12, t.other_ns);
      region_ins.bind(13, static_cast<int64_t>(t.fallback_ops.size()));
      region_ins.bind(14, brk ? 1 : 0);
      region_ins.exec();
      region_ins.reset();
    }
  }

 private:
  struct Op {
    int64_t id = 0, parent = -1, name_id = 0, range = 0, pid = 0, tid = 0, start = 0, end = 0;
    std::optional<int64_t> iteration;
  };

  void load_ops(std::vector<int64_t>& region_of) {
    SQLite::Statement q(db_, "SELECT id, parent_id, name_id, range_id, pid, tid, start_ns, dur_ns, iteration FROM _op "
                             "WHERE trace_id = ?1 AND range_id IS NOT NULL ORDER BY id");
    q.bind(1, trace_);
    while (q.executeStep()) {
      Op o;
      o.id = q.getColumn(0).getInt64();
      o.parent = q.getColumn(1).isNull() ? -1 : q.getColumn(1).getInt64();
      o.name_id = q.getColumn(2).getInt64();
      o.range = q.getColumn(3).getInt64();
      o.pid = q.getColumn(4).isNull() ? -1 : q.getColumn(4).getInt64();
      o.tid = q.getColumn(5).isNull() ? -1 : q.getColumn(5).getInt64();
      o.start = q.getColumn(6).isNull() ? 0 : q.getColumn(6).getInt64();
      o.end = o.start + (q.getColumn(7).isNull() ? 0 : q.getColumn(7).getInt64());
      o.iteration = opt_col(q, 8);
      position_.emplace(o.id, ops_.size());
      ops_.push_back(o);
    }
    // Parents come before their children in id order, so one pass resolves the outermost region.
    region_of.assign(ops_.size(), -1);
    for (size_t i = 0; i < ops_.size(); ++i) {
      int64_t up = -1;
      if (ops_[i].parent >= 0)
        if (auto it = position_.find(ops_[i].parent); it != position_.end() && it->second < i) up = region_of[it->second];
      if (up < 0 && region_names_.contains(ops_[i].name_id)) up = static_cast<int64_t>(i);
      region_of[i] = up;
    }
    by_thread_.clear();
    for (size_t i = 0; i < ops_.size(); ++i) by_thread_[{ops_[i].pid, ops_[i].tid}].push_back(i);
    for (auto& [_, v] : by_thread_)
      std::sort(v.begin(), v.end(), [&](size_t a, size_t b) { return ops_[a].start < ops_[b].start; });
  }

  // Any framework op outside every region (Dynamo's own guard checks aside) that ran wholly
  // between the two regions on their thread.
  bool eager_between(const Op& a, const Op& b, const std::vector<int64_t>& region_of) const {
    auto it = by_thread_.find({a.pid, a.tid});
    if (it == by_thread_.end()) return false;
    const auto& v = it->second;
    auto lo = std::lower_bound(v.begin(), v.end(), a.end, [&](size_t i, int64_t t) { return ops_[i].start < t; });
    for (auto p = lo; p != v.end() && ops_[*p].start < b.start; ++p) {
      const Op& o = ops_[*p];
      if (o.end > b.start || region_of[*p] >= 0) continue;
      if (region_names_.contains(o.name_id)) continue;
      // Dynamo's guard evaluation between compiled frames is not eager model code.
      if (auto n = name_of(o.name_id); n.starts_with("TorchDynamo")) continue;
      return true;
    }
    return false;
  }

  std::string name_of(int64_t name_id) const {
    SQLite::Statement q(db_, "SELECT value FROM string WHERE id = ?1");
    q.bind(1, name_id);
    return q.executeStep() ? q.getColumn(0).getString() : std::string();
  }

  SQLite::Database& db_;
  int64_t trace_;
  const std::unordered_map<int64_t, std::string>& region_names_;
  const std::unordered_map<int64_t, std::string>& triton_names_;
  std::vector<Op> ops_;
  std::unordered_map<int64_t, size_t> position_;
  std::map<std::pair<int64_t, int64_t>, std::vector<size_t>> by_thread_;
};

}  // namespace

void derive_graphs_compiled(Store& store) {
  SQLite::Database& db = store.db();
  std::vector<int64_t> traces;
  {
    SQLite::Statement q(db, "SELECT trace_id FROM trace ORDER BY trace_id");
    while (q.executeStep()) traces.push_back(q.getColumn(0).getInt64());
  }
  auto region_names = strings_where(db, "value LIKE '%Compiled%'", [](const std::string& v) { return is_compiled_region_name(v); });
  auto triton_names = strings_where(db, "value LIKE 'triton%' OR value LIKE 'void triton%'",
                                    [](const std::string& v) { return !triton_kernel_kind(v).empty(); });
  SQLite::Transaction tx(db);
  db.exec("DELETE FROM graph_kernel; DELETE FROM cuda_graph; DELETE FROM compiled_region; DELETE FROM kernel_compiled;");
  SQLite::Statement graph_kernel_ins(db, "INSERT INTO graph_kernel(kernel_id, trace_id, graph_id, node, replay, launch_api_call_id, "
                                         "captured_op_id) VALUES (?,?,?,?,?,?,?)");
  SQLite::Statement graph_ins(db, "INSERT INTO cuda_graph(trace_id, graph_id, id_source, device_id, replays, kernels_per_replay, "
                                  "gpu_time_ns, gpu_time_per_replay_ns, span_per_replay_ns, capture_start_ns, captured_ops, "
                                  "top_captured_op) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
  SQLite::Statement region_ins(db, "INSERT INTO compiled_region(range_id, trace_id, name, frame, pass, iteration, start_ns, dur_ns, "
                                   "triton_kernels, triton_time_ns, other_kernels, other_time_ns, fallback_ops, graph_break_before) "
                                   "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  SQLite::Statement compiled_ins(db, "INSERT INTO kernel_compiled(kernel_id, trace_id, region_range_id, triton_kind, fallback) "
                                     "VALUES (?,?,?,?,?)");
  for (int64_t t : traces) {
    GraphDeriver(db, t).run(graph_kernel_ins, graph_ins);
    CompiledDeriver(db, t, region_names, triton_names).run(region_ins, compiled_ins);
  }
  tx.commit();
}

}  // namespace proflint
