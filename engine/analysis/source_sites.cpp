// engine/analysis/source_sites.cpp — see source_sites.hpp.
#include "engine/analysis/source_sites.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/common/format.hpp"

namespace proflint {

namespace {
std::string text_or_empty(const SQLite::Column& c) { return c.isNull() ? std::string() : c.getString(); }
}  // namespace

// Columns 0-3 of a row of the source view: file, line, function, module_path.
SourceSites::Key SourceSites::key_of(SQLite::Statement& q) {
  return Key{text_or_empty(q.getColumn(0)), q.getColumn(1).isNull() ? 0 : q.getColumn(1).getInt64(),
             text_or_empty(q.getColumn(2)), text_or_empty(q.getColumn(3))};
}

SourceSites::SourceSites(const Facts& facts, int64_t trace_id, std::string time_label)
    : facts_(facts), trace_id_(trace_id), label_(std::move(time_label)) {
  try {
    SQLite::Statement q(facts_.db(), "SELECT 1 FROM _source WHERE trace_id = ? LIMIT 1");
    q.bind(1, trace_id_);
    available_ = q.executeStep();
  } catch (const SQLite::Exception&) {
    available_ = false;  // a store older than schema 0008 records no attribution
  }
  if (const TraceSummary* s = facts_.summary(trace_id_)) iterations_ = s->iterations.count;
}

SQLite::Statement& SourceSites::statement(std::unique_ptr<SQLite::Statement>& slot, const std::string& sql) {
  if (!slot) slot = std::make_unique<SQLite::Statement>(facts_.db(), sql);
  slot->reset();
  slot->clearBindings();
  return *slot;
}

SourceSites::Found SourceSites::of_op(int64_t op_id) {
  if (auto it = op_cache_.find(op_id); it != op_cache_.end()) return it->second;
  Found f;
  std::optional<int64_t> parent;
  {
    SQLite::Statement& q = statement(op_q_,
                                     "SELECT s.file, s.line, s.function, s.module_path, o.name, o.parent_id, fn.value FROM op o "
                                     "JOIN source s ON s.op_id = o.id LEFT JOIN _op fo ON fo.id = s.forward_op_id "
                                     "LEFT JOIN string fn ON fn.id = fo.name_id WHERE o.id = ?");
    q.bind(1, op_id);
    if (q.executeStep() && !(q.getColumn(0).isNull() && q.getColumn(3).isNull())) {
      f.ok = true;
      f.key = key_of(q);
      // A backward op placed at its forward op's line is named after that op (schema/0012).
      f.backward = !q.getColumn(6).isNull();
      f.what = f.backward ? "backward of " + q.getColumn(6).getString() : q.getColumn(4).getString();
      f.unit = "op:" + std::to_string(op_id);
      if (!q.getColumn(5).isNull()) parent = q.getColumn(5).getInt64();
    }
  }
  // Name the call the user made: the outermost op at the same place (aten::item, not the
  // aten::_local_scalar_dense inside it).
  if (f.ok && parent) {
    Found up = of_op(*parent);
    if (up.ok && up.key == f.key && up.backward == f.backward) {
      f.what = up.what;
      f.unit = up.unit;
    }
  }
  op_cache_.emplace(op_id, f);
  return f;
}

SourceSites::Found SourceSites::of_row(const char* table, int64_t id) {
  SQLite::Statement& q = statement(row_q_[table], fmt::format("SELECT op_id, api_call_id FROM {} WHERE id = ?", table));
  q.bind(1, id);
  if (!q.executeStep()) return {};
  if (!q.getColumn(0).isNull()) {
    Found f = of_op(q.getColumn(0).getInt64());
    if (f.ok) return f;
  }
  if (q.getColumn(1).isNull()) return {};
  return of_api_call(q.getColumn(1).getInt64());
}

SourceSites::Found SourceSites::of_api_call(int64_t api_call_id) {
  SQLite::Statement& s = statement(api_q_,
                                   "SELECT s.file, s.line, s.function, s.module_path, a.name FROM api_call a "
                                   "JOIN source s ON s.api_call_id = a.id WHERE a.id = ?");
  s.bind(1, api_call_id);
  if (!s.executeStep() || (s.getColumn(0).isNull() && s.getColumn(3).isNull())) return {};
  Found f;
  f.ok = true;
  f.key = key_of(s);
  f.what = s.getColumn(4).getString();
  f.unit = "api:" + std::to_string(api_call_id);
  return f;
}

void SourceSites::add(const Found& f, int64_t time_ns) {
  if (!f.ok) return;
  Site& s = sites_[{f.key, f.backward}];
  s.units.insert(f.unit);
  s.time_ns += time_ns;
  ++s.what[f.what];
}

void SourceSites::add_op(int64_t op_id, int64_t time_ns) {
  if (available_) add(of_op(op_id), time_ns);
}

void SourceSites::add_api_call(int64_t api_call_id, int64_t time_ns) {
  if (!available_) return;
  SQLite::Statement& q = statement(api_op_q_, "SELECT op_id FROM _api_call WHERE id = ?");
  q.bind(1, api_call_id);
  if (!q.executeStep()) return;
  if (!q.getColumn(0).isNull()) {
    Found f = of_op(q.getColumn(0).getInt64());
    if (f.ok) {
      add(f, time_ns);
      return;
    }
  }
  add(of_api_call(api_call_id), time_ns);  // outside any op: its own row (e.g. torch.cuda.synchronize())
}

void SourceSites::add_kernel(int64_t kernel_id, int64_t time_ns) {
  if (available_) add(of_row("_kernel", kernel_id), time_ns);
}
void SourceSites::add_memcpy(int64_t memcpy_id, int64_t time_ns) {
  if (available_) add(of_row("_memcpy", memcpy_id), time_ns);
}
void SourceSites::add_memset(int64_t memset_id, int64_t time_ns) {
  if (available_) add(of_row("_memset", memset_id), time_ns);
}

void SourceSites::add_range(int64_t range_id, int64_t time_ns) {
  if (!available_) return;
  SQLite::Statement& q = statement(range_q_,
                                   "SELECT s.file, s.line, s.function, s.module_path, r.name FROM range r "
                                   "JOIN source s ON s.range_id = r.id WHERE r.id = ?");
  q.bind(1, range_id);
  if (!q.executeStep() || (q.getColumn(0).isNull() && q.getColumn(3).isNull())) return;
  Found f;
  f.ok = true;
  f.key = key_of(q);
  f.what = q.getColumn(4).getString();
  f.unit = "range:" + std::to_string(range_id);
  add(f, time_ns);
}

std::vector<SourceLocation> SourceSites::top(size_t k) const {
  std::vector<SourceLocation> out;
  for (const auto& [place, site] : sites_) {
    SourceLocation l;
    std::tie(l.file, l.line, l.function, l.module_path) = place.first;
    l.count = static_cast<int64_t>(site.units.size());
    l.time_ns = site.time_ns;
    l.time_label = label_;
    l.iterations = iterations_;
    // The name seen most (ties: the first in name order).
    int64_t best = -1;
    for (const auto& [name, n] : site.what)
      if (n > best) {
        best = n;
        l.what = name;
      }
    out.push_back(std::move(l));
  }
  std::sort(out.begin(), out.end(), [](const SourceLocation& a, const SourceLocation& b) {
    if (a.time_ns != b.time_ns) return a.time_ns > b.time_ns;
    if (a.count != b.count) return a.count > b.count;
    return std::tie(a.file, a.line, a.function, a.module_path, a.what) < std::tie(b.file, b.line, b.function, b.module_path, b.what);
  });
  if (out.size() > k) out.resize(k);
  return out;
}

std::string location_text(const SourceLocation& l) {
  std::string out = l.what;
  if (!l.file.empty()) {
    out += fmt::format("{}at {}:{} in {}", out.empty() ? "" : " ", l.file, l.line, l.function);
    if (!l.module_path.empty()) out += fmt::format(" (module {})", l.module_path);
  } else if (!l.module_path.empty()) {
    out += fmt::format("{}in module {}", out.empty() ? "" : " ", l.module_path);
  }
  if (l.iterations > 0) {
    double per = static_cast<double>(l.count) / static_cast<double>(l.iterations);
    std::string times = std::fabs(per - std::round(per)) < 0.05 ? fmt::format("{:.0f}", per) : fmt::format("{:.1f}", per);
    out += fmt::format(", {}× per step", times);
    if (l.time_ns > 0 && !l.time_label.empty())
      out += fmt::format(", {} {} per step", l.time_label, format_ns(l.time_ns / l.iterations));
  } else {
    out += fmt::format(", {}×", l.count);
    if (l.time_ns > 0 && !l.time_label.empty()) out += fmt::format(", {} {}", l.time_label, format_ns(l.time_ns));
  }
  return out;
}

void attach_locations(Finding& f, std::vector<SourceLocation> locations, size_t in_problem) {
  if (locations.empty()) return;
  std::string where;
  for (size_t i = 0; i < locations.size() && i < in_problem; ++i) where += (i ? "; " : "") + location_text(locations[i]);
  if (locations.size() > in_problem) where += fmt::format("; {} more place(s)", locations.size() - in_problem);
  if (!f.problem.empty() && f.problem.back() != ' ') f.problem += ' ';
  f.problem += "Where: " + where + ".";
  f.locations = std::move(locations);
}

}  // namespace proflint
