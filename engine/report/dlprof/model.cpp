// engine/report/dlprof/model.cpp — loading the report model from the derived store (model.hpp).
#include "engine/report/dlprof/model.hpp"

#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "engine/analysis/summary.hpp"

namespace proflint::dlprof {

namespace {

std::optional<int64_t> opt_int(SQLite::Statement& q, int col) {
  if (q.isColumnNull(col)) return std::nullopt;
  return q.getColumn(col).getInt64();
}

std::string text(SQLite::Statement& q, int col) { return q.isColumnNull(col) ? "" : q.getColumn(col).getString(); }

std::string direction_of(const std::string& pass) {
  if (pass == "fwd") return "fprop";
  if (pass == "bwd") return "bprop";
  return pass.empty() ? "other" : pass;
}

// First tensor dtype of Kineto's 'Input type' JSON (["float","float",""] -> "float").
std::string first_dtype(const std::string& types) {
  if (types.empty()) return "";
  auto j = nlohmann::json::parse(types, nullptr, false);
  if (!j.is_array()) return "";
  for (const auto& v : j)
    if (v.is_string() && !v.get<std::string>().empty()) return v.get<std::string>();
  return "";
}

}  // namespace

bool TraceInfo::selects(const std::optional<int64_t>& iteration) const {
  if (!iter_start && !iter_stop) return true;
  if (!iteration) return false;
  auto it = std::lower_bound(iterations.begin(), iterations.end(), *iteration,
                             [](const IterationRow& r, int64_t k) { return r.iteration < k; });
  return it != iterations.end() && it->iteration == *iteration && it->selected;
}

bool in_domain(const Model& m, const GpuInstance& g, const std::string& domain) {
  if (domain.empty()) return true;
  return g.op >= 0 && m.ops[static_cast<size_t>(g.op)].domain == domain;
}

int64_t union_length(std::vector<Span>& spans) {
  std::sort(spans.begin(), spans.end());
  int64_t total = 0, cur_s = 0, cur_e = 0;
  bool open = false;
  for (const auto& [s, e] : spans) {
    if (!open || s > cur_e) {
      if (open) total += cur_e - cur_s;
      cur_s = s;
      cur_e = e;
      open = true;
    } else {
      cur_e = std::max(cur_e, e);
    }
  }
  if (open) total += cur_e - cur_s;
  return total;
}

std::string short_id(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return fmt::format("{:012x}", h & 0xffffffffffffULL);
}

Model load_model(Store& store) {
  store.create_report_indexes();  // op_by_name: the detail report's op list
  auto& db = store.db();
  Model m;
  std::unordered_map<int64_t, size_t> trace_index;
  {
    SQLite::Statement q(
        db,
        "SELECT trace_id, path, format, framework, tool_version, iter_start, iter_stop FROM trace ORDER BY trace_id");
    while (q.executeStep()) {
      TraceInfo t;
      t.trace_id = q.getColumn(0).getInt64();
      t.path = text(q, 1);
      t.format = text(q, 2);
      if (!q.isColumnNull(3)) t.framework = q.getColumn(3).getString();
      if (!q.isColumnNull(4)) t.tool_version = q.getColumn(4).getString();
      t.iter_start = opt_int(q, 5);
      t.iter_stop = opt_int(q, 6);
      trace_index[t.trace_id] = m.traces.size();
      m.traces.push_back(std::move(t));
    }
  }
  std::unordered_map<int64_t, std::unordered_map<int64_t, std::string>> iteration_names;
  {
    SQLite::Statement q(
        db, "SELECT trace_id, iteration, dur_ns, COALESCE(name, ''), selected FROM iteration ORDER BY trace_id, iteration");
    while (q.executeStep()) {
      auto& t = m.traces[trace_index.at(q.getColumn(0).getInt64())];
      IterationRow r{q.getColumn(1).getInt64(), q.getColumn(2).getInt64(), q.getColumn(4).getInt64() != 0};
      t.iterations.push_back(r);
      iteration_names[t.trace_id][r.iteration] = q.getColumn(3).getString();
    }
  }
  auto selects = [&](int64_t trace_id, const std::optional<int64_t>& it) {
    return m.traces[trace_index.at(trace_id)].selects(it);
  };

  // Named NVTX domains, and for each range the nearest domain on its enclosing chain.
  {
    SQLite::Statement q(db,
                        "SELECT DISTINCT domain FROM _range WHERE kind = 'nvtx' AND domain IS NOT NULL AND domain <> "
                        "'' ORDER BY domain");
    while (q.executeStep()) m.domains.push_back(q.getColumn(0).getString());
  }
  std::unordered_map<int64_t, std::string> range_domain;
  if (!m.domains.empty()) {
    std::unordered_map<int64_t, std::pair<int64_t, std::string>> ranges;  // id -> (parent, own domain)
    SQLite::Statement q(db,
                        "SELECT id, COALESCE(parent_id, -1), CASE WHEN kind = 'nvtx' THEN COALESCE(domain, '') ELSE '' "
                        "END FROM _range");
    while (q.executeStep()) ranges[q.getColumn(0).getInt64()] = {q.getColumn(1).getInt64(), q.getColumn(2).getString()};
    for (const auto& [id, pr] : ranges) {
      int64_t r = id;
      std::string d;
      for (int guard = 0; r >= 0 && guard < 4096; ++guard) {
        auto it = ranges.find(r);
        if (it == ranges.end()) break;
        if (!it->second.second.empty()) {
          d = it->second.second;
          break;
        }
        r = it->second.first;
      }
      if (!d.empty()) range_domain[id] = d;
    }
  }

  std::unordered_map<int64_t, int> op_index;
  {
    SQLite::Statement q(
        db,
        "SELECT id, trace_id, parent_id, COALESCE(path, '/' || name), op_type, pass, start_ns, dur_ns, iteration, "
        "tc_eligible, input_types, input_dims, call_stack, range_id FROM op ORDER BY trace_id, start_ns, id");
    std::vector<int64_t> parent_ids;
    while (q.executeStep()) {
      OpInstance o;
      o.id = q.getColumn(0).getInt64();
      o.trace_id = q.getColumn(1).getInt64();
      parent_ids.push_back(q.isColumnNull(2) ? -1 : q.getColumn(2).getInt64());
      o.name = text(q, 3);
      o.op_type = text(q, 4);
      o.direction = direction_of(text(q, 5));
      o.start_ns = q.isColumnNull(6) ? 0 : q.getColumn(6).getInt64();
      o.dur_ns = q.isColumnNull(7) ? 0 : q.getColumn(7).getInt64();
      o.iteration = opt_int(q, 8);
      o.tc_eligible = !q.isColumnNull(9) && q.getColumn(9).getInt() == 1;
      o.data_type = first_dtype(text(q, 10));
      o.input_shapes = text(q, 11);
      o.stack = text(q, 12);
      if (!q.isColumnNull(13)) {
        auto d = range_domain.find(q.getColumn(13).getInt64());
        if (d != range_domain.end()) o.domain = d->second;
      }
      // ProfilerStep#5/... and ProfilerStep#6/... are the same node in two iterations: drop the
      // iteration marker so an op keeps one name across iterations (DLProf's key-node model).
      // (op_node_name: the summary groups eligible ops into the same nodes.)
      if (o.iteration) {
        auto names = iteration_names.find(o.trace_id);
        if (names != iteration_names.end()) {
          auto n = names->second.find(*o.iteration);
          if (n != names->second.end()) o.name = op_node_name(o.name, n->second);
        }
      }
      o.key = o.name + '\x1f' + o.direction + '\x1f' + o.op_type;
      o.op_id = short_id(o.key);
      o.selected = selects(o.trace_id, o.iteration);
      op_index[o.id] = static_cast<int>(m.ops.size());
      m.ops.push_back(std::move(o));
    }
    for (size_t i = 0; i < m.ops.size(); ++i) {
      if (parent_ids[i] < 0) continue;
      auto p = op_index.find(parent_ids[i]);
      if (p == op_index.end()) continue;
      m.ops[i].parent = p->second;
      auto& parent = m.ops[static_cast<size_t>(p->second)];
      parent.has_children = true;
      parent.child_dur_ns += m.ops[i].dur_ns;
    }
  }

  auto op_of = [&](SQLite::Statement& q, int col) {
    if (q.isColumnNull(col)) return -1;
    auto it = op_index.find(q.getColumn(col).getInt64());
    return it == op_index.end() ? -1 : it->second;
  };
  {
    SQLite::Statement q(
        db,
        "SELECT k.id, k.trace_id, k.device_id, k.start_ns, k.dur_ns, k.name, k.op_id, k.iteration, "
        "COALESCE(k.is_tensor_core, 0), COALESCE(k.category, 'other'), a.start_ns, a.dur_ns, "
        "k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z "
        "FROM kernel k LEFT JOIN _api_call a ON a.id = k.api_call_id ORDER BY k.trace_id, k.start_ns, k.id");
    while (q.executeStep()) {
      GpuInstance g;
      g.id = q.getColumn(0).getInt64();
      g.trace_id = q.getColumn(1).getInt64();
      g.device_id = opt_int(q, 2);
      g.start_ns = q.getColumn(3).getInt64();
      g.dur_ns = q.getColumn(4).getInt64();
      g.name = q.getColumn(5).getString();
      g.op = op_of(q, 6);
      g.iteration = opt_int(q, 7);
      g.tensor_core = q.getColumn(8).getInt() == 1;
      g.category = q.getColumn(9).getString();
      g.api_start_ns = opt_int(q, 10);
      g.api_dur_ns = opt_int(q, 11);
      for (int d = 0; d < 3; ++d) {
        g.grid[d] = opt_int(q, 12 + d);
        g.block[d] = opt_int(q, 15 + d);
      }
      g.selected = selects(g.trace_id, g.iteration);
      m.kernels.push_back(std::move(g));
    }
  }
  for (const char* sql :
       {"SELECT m.id, m.trace_id, m.device_id, m.start_ns, m.dur_ns, 'memcpy ' || m.kind, m.op_id, m.iteration, "
        "a.start_ns, a.dur_ns FROM _memcpy m LEFT JOIN _api_call a ON a.id = m.api_call_id ORDER BY m.trace_id, "
        "m.start_ns, m.id",
        "SELECT m.id, m.trace_id, m.device_id, m.start_ns, m.dur_ns, 'memset', m.op_id, m.iteration, "
        "a.start_ns, a.dur_ns FROM _memset m LEFT JOIN _api_call a ON a.id = m.api_call_id ORDER BY m.trace_id, "
        "m.start_ns, m.id"}) {
    SQLite::Statement q(db, sql);
    while (q.executeStep()) {
      GpuInstance g;
      g.id = q.getColumn(0).getInt64();
      g.trace_id = q.getColumn(1).getInt64();
      g.device_id = opt_int(q, 2);
      g.start_ns = q.getColumn(3).getInt64();
      g.dur_ns = q.getColumn(4).getInt64();
      g.name = q.getColumn(5).getString();
      g.op = op_of(q, 6);
      g.iteration = opt_int(q, 7);
      g.category = "memory";
      g.is_memory_op = true;
      g.api_start_ns = opt_int(q, 8);
      g.api_dur_ns = opt_int(q, 9);
      g.selected = selects(g.trace_id, g.iteration);
      m.copies.push_back(std::move(g));
    }
  }

  // Accumulate kernels and API calls into their op and every ancestor (inclusive, like op.gpu_time_ns).
  for (const auto& g : m.kernels) {
    if (!g.selected || g.op < 0) continue;
    auto& own = m.ops[static_cast<size_t>(g.op)];
    own.self_gpu_ns += g.dur_ns;
    if (g.tensor_core) own.own_tc = true;
    for (int i = g.op; i >= 0; i = m.ops[static_cast<size_t>(i)].parent) {
      auto& o = m.ops[static_cast<size_t>(i)];
      o.gpu_ns += g.dur_ns;
      if (g.tensor_core) o.tc_ns += g.dur_ns;
      o.kernel_spans.emplace_back(g.start_ns, g.start_ns + g.dur_ns);
    }
  }
  {
    SQLite::Statement q(db,
                        "SELECT trace_id, op_id, start_ns, dur_ns, iteration FROM _api_call WHERE op_id IS NOT NULL");
    while (q.executeStep()) {
      if (!selects(q.getColumn(0).getInt64(), opt_int(q, 4))) continue;
      int op = op_of(q, 1);
      int64_t s = q.getColumn(2).getInt64(), d = q.getColumn(3).getInt64();
      for (int i = op; i >= 0; i = m.ops[static_cast<size_t>(i)].parent) {
        auto& o = m.ops[static_cast<size_t>(i)];
        o.api_ns += d;
        o.api_spans.emplace_back(s, s + d);
      }
    }
  }
  return m;
}

}  // namespace proflint::dlprof
