// engine/analysis/source_sites.cpp — see source_sites.hpp.
#include "engine/analysis/source_sites.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "engine/analysis/id_list.hpp"
#include "engine/common/format.hpp"

namespace proflint {

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

void SourceSites::add(Kind kind, int64_t id, int64_t time_ns) {
  if (available_) added_.push_back({kind, id, time_ns});
}
void SourceSites::add_op(int64_t op_id, int64_t time_ns) { add(Kind::op, op_id, time_ns); }
void SourceSites::add_api_call(int64_t api_call_id, int64_t time_ns) { add(Kind::api_call, api_call_id, time_ns); }
void SourceSites::add_kernel(int64_t kernel_id, int64_t time_ns) { add(Kind::kernel, kernel_id, time_ns); }
void SourceSites::add_memcpy(int64_t memcpy_id, int64_t time_ns) { add(Kind::memcpy, memcpy_id, time_ns); }
void SourceSites::add_memset(int64_t memset_id, int64_t time_ns) { add(Kind::memset, memset_id, time_ns); }
void SourceSites::add_range(int64_t range_id, int64_t time_ns) { add(Kind::range, range_id, time_ns); }

// Rows of `sql` (columns: id, file_id, line, function_id, module_path_id, name_id[, parent_id[,
// forward op's name_id]]) whose place is known (a file or a module path), by id. Every text (the
// place's and the names) is read afterwards, once per distinct string id not read before: joining
// the string table per row (four times in the source view, twice here before) cost more than the
// rest of the lookup, and the ops of one place repeat the same few texts level after level.
void SourceSites::load_attributed(const char* sql, std::vector<int64_t> ids, std::map<int64_t, Attributed>& into) {
  struct Raw {
    int64_t id;
    std::optional<int64_t> file, function, module_path, name, forward_name, parent;
    int64_t line;
  };
  std::vector<Raw> raw;
  std::vector<int64_t> strings;
  for_rows_with_ids(facts_.db(), sql, std::move(ids), [&](SQLite::Statement& q) {
    Raw r{q.getColumn(0).getInt64(), nullable_int(q.getColumn(1)), nullable_int(q.getColumn(3)),
          nullable_int(q.getColumn(4)), nullable_int(q.getColumn(5)), std::nullopt, std::nullopt,
          q.getColumn(2).isNull() ? 0 : q.getColumn(2).getInt64()};
    if (q.getColumnCount() > 6) r.parent = nullable_int(q.getColumn(6));
    if (q.getColumnCount() > 7) r.forward_name = nullable_int(q.getColumn(7));
    for (const auto& s : {r.file, r.function, r.module_path, r.name, r.forward_name})
      if (s && !texts_.contains(*s)) strings.push_back(*s);
    raw.push_back(r);
  });
  for_rows_with_ids(facts_.db(), "SELECT id, value FROM string WHERE id IN ({ids})", std::move(strings),
                    [&](SQLite::Statement& q) { texts_.emplace(q.getColumn(0).getInt64(), q.getColumn(1).getString()); });
  auto text = [&](const std::optional<int64_t>& id) -> const std::string* {
    if (!id) return nullptr;
    auto it = texts_.find(*id);
    return it == texts_.end() ? nullptr : &it->second;
  };
  for (const Raw& r : raw) {
    const std::string *file = text(r.file), *function = text(r.function), *module_path = text(r.module_path);
    const std::string* name = text(r.name);
    if ((!file && !module_path) || !name) continue;  // no place, or a name the store lacks (as an inner join)
    Attributed a;
    a.parent = r.parent;
    // A backward op placed at its forward op's line is named after that op (schema/0012).
    if (const std::string* forward = text(r.forward_name)) {
      a.backward = true;
      a.name = "backward of " + *forward;
    } else {
      a.name = *name;
    }
    a.site = site_of(Key{file ? *file : std::string(), r.line, function ? *function : std::string(),
                         module_path ? *module_path : std::string()},
                     a.backward);
    into.emplace(r.id, std::move(a));
  }
}

// The source rows of `ids` and, for those with one, of their ancestors (of_op climbs to the
// outermost op at the same place).
void SourceSites::load_ops(std::vector<int64_t> ids) {
  while (!ids.empty()) {
    std::map<int64_t, Attributed> found;
    load_attributed("SELECT o.id, s.file_id, s.line, s.function_id, s.module_path_id, o.name_id, o.parent_id, "
                    "fo.name_id FROM _op o JOIN _source s ON s.op_id = o.id LEFT JOIN _op fo ON fo.id = s.forward_op_id "
                    "WHERE o.id IN ({ids})",
                    ids, found);
    std::vector<int64_t> parents;
    for (int64_t id : ids) {
      auto it = found.find(id);
      if (it == found.end()) {
        ops_.emplace(id, std::nullopt);
        continue;
      }
      if (it->second.parent && !ops_.contains(*it->second.parent)) parents.push_back(*it->second.parent);
      ops_.emplace(id, std::move(it->second));
    }
    std::sort(parents.begin(), parents.end());
    parents.erase(std::unique(parents.begin(), parents.end()), parents.end());
    std::erase_if(parents, [&](int64_t p) { return ops_.contains(p); });
    ids = std::move(parents);
  }
}

void SourceSites::resolve() {
  if (added_.empty()) return;
  auto& db = facts_.db();
  // 1. The op and API call of each kernel, copy and set, and the op of each API call.
  static constexpr const char* kTables[3] = {"_kernel", "_memcpy", "_memset"};
  std::vector<int64_t> rows[3], apis, ranges, ops;
  for (const Added& a : added_) {
    switch (a.kind) {
      case Kind::op: ops.push_back(a.id); break;
      case Kind::api_call: apis.push_back(a.id); break;
      case Kind::kernel: rows[0].push_back(a.id); break;
      case Kind::memcpy: rows[1].push_back(a.id); break;
      case Kind::memset: rows[2].push_back(a.id); break;
      case Kind::range: ranges.push_back(a.id); break;
    }
  }
  for (int t = 0; t < 3; ++t)
    for_rows_with_ids(db, fmt::format("SELECT id, op_id, api_call_id FROM {} WHERE id IN ({{ids}})", kTables[t]),
                      std::move(rows[t]), [&](SQLite::Statement& q) {
                        links_[t].emplace(q.getColumn(0).getInt64(), Links{nullable_int(q.getColumn(1)), nullable_int(q.getColumn(2))});
                      });
  for_rows_with_ids(db, "SELECT id, op_id FROM _api_call WHERE id IN ({ids})", std::move(apis),
                    [&](SQLite::Statement& q) { api_op_.emplace(q.getColumn(0).getInt64(), nullable_int(q.getColumn(1))); });
  // 2. The source rows of those ops (and their ancestors).
  for (const auto& table : links_)
    for (const auto& [id, l] : table)
      if (l.op) ops.push_back(*l.op);
  for (const auto& [id, op] : api_op_)
    if (op) ops.push_back(*op);
  std::sort(ops.begin(), ops.end());
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  load_ops(std::move(ops));
  // 3. The API calls counted at their own place: those outside any op with a source.
  std::vector<int64_t> own;
  auto op_found = [&](const std::optional<int64_t>& op) { return op && of_op(*op).ok; };
  for (const auto& table : links_)
    for (const auto& [id, l] : table)
      if (!op_found(l.op) && l.api_call) own.push_back(*l.api_call);
  for (const auto& [id, op] : api_op_)
    if (!op_found(op)) own.push_back(id);
  load_attributed("SELECT a.id, s.file_id, s.line, s.function_id, s.module_path_id, a.name_id FROM _api_call a "
                  "JOIN _source s ON s.api_call_id = a.id WHERE a.id IN ({ids})",
                  std::move(own), api_calls_);
  load_attributed("SELECT r.id, s.file_id, s.line, s.function_id, s.module_path_id, r.name_id FROM _range r "
                  "JOIN _source s ON s.range_id = r.id WHERE r.id IN ({ids})",
                  std::move(ranges), ranges_);
  // 4. Each added row at its place.
  for (const Added& a : added_) {
    switch (a.kind) {
      case Kind::op: count(of_op(a.id), a.time_ns); break;
      case Kind::api_call: {
        auto it = api_op_.find(a.id);
        if (it == api_op_.end()) break;  // no such call
        Found f = it->second ? of_op(*it->second) : Found{};
        count(f.ok ? f : of_api_call(a.id), a.time_ns);  // outside any op: its own row (torch.cuda.synchronize())
        break;
      }
      case Kind::kernel:
      case Kind::memcpy:
      case Kind::memset: {
        const auto& table = links_[a.kind == Kind::kernel ? 0 : a.kind == Kind::memcpy ? 1 : 2];
        if (auto it = table.find(a.id); it != table.end()) count(of_links(it->second), a.time_ns);
        break;
      }
      case Kind::range: count(of_range(a.id), a.time_ns); break;
    }
  }
  added_.clear();
}

int SourceSites::site_of(Key key, bool backward) {
  auto [it, added] = site_index_.try_emplace({std::move(key), backward}, static_cast<int>(sites_.size()));
  if (added) sites_.emplace_back();
  return it->second;
}

SourceSites::Found SourceSites::of_op(int64_t op_id) {
  if (auto it = op_cache_.find(op_id); it != op_cache_.end()) return it->second;
  Found f;
  auto row = ops_.find(op_id);
  if (row != ops_.end() && row->second) {
    const Attributed& a = *row->second;
    f.ok = true;
    f.site = a.site;
    f.what = &a.name;
    f.unit = {UnitKind::op, op_id};
    // Name the call the user made: the outermost op at the same place (aten::item, not the
    // aten::_local_scalar_dense inside it). One site is one place, forward or backward.
    if (a.parent) {
      Found up = of_op(*a.parent);
      if (up.ok && up.site == f.site) {
        f.what = up.what;
        f.unit = up.unit;
      }
    }
  }
  op_cache_.emplace(op_id, f);
  return f;
}

SourceSites::Found SourceSites::of_links(const Links& l) {
  if (l.op) {
    Found f = of_op(*l.op);
    if (f.ok) return f;
  }
  if (!l.api_call) return {};
  return of_api_call(*l.api_call);
}

SourceSites::Found SourceSites::of_api_call(int64_t api_call_id) {
  auto it = api_calls_.find(api_call_id);
  if (it == api_calls_.end()) return {};
  return Found{true, it->second.site, &it->second.name, {UnitKind::api_call, api_call_id}};
}

SourceSites::Found SourceSites::of_range(int64_t range_id) {
  auto it = ranges_.find(range_id);
  if (it == ranges_.end()) return {};
  return Found{true, it->second.site, &it->second.name, {UnitKind::range, range_id}};
}

void SourceSites::count(const Found& f, int64_t time_ns) {
  if (!f.ok) return;
  Site& s = sites_[f.site];
  s.units.push_back(f.unit);
  s.time_ns += time_ns;
  ++s.what[f.what];
}

std::vector<SourceLocation> SourceSites::top(size_t k) {
  resolve();
  std::vector<SourceLocation> out;
  for (const auto& [place, index] : site_index_) {
    Site& site = sites_[index];
    if (site.units.empty()) continue;  // a place of rows loaded but not counted (an op's parent)
    SourceLocation l;
    std::tie(l.file, l.line, l.function, l.module_path) = place.first;
    std::sort(site.units.begin(), site.units.end());
    site.units.erase(std::unique(site.units.begin(), site.units.end()), site.units.end());
    l.count = static_cast<int64_t>(site.units.size());
    l.time_ns = site.time_ns;
    l.time_label = label_;
    l.iterations = iterations_;
    // The name seen most (ties: the first in name order). Rows of different ops may hold the same
    // name in different places: counted by text here.
    std::map<std::string_view, int64_t> by_name;
    for (const auto& [name, n] : site.what) by_name[*name] += n;
    int64_t best = -1;
    for (const auto& [name, n] : by_name)
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
