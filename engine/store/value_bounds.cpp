#include "engine/store/value_bounds.hpp"

#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engine/common/sqlite_file.hpp"
#include "engine/model/sink.hpp"

namespace proflint {
namespace {

constexpr double kMaxPoint = static_cast<double>(FactSink::kMaxAbsTimeNs);  // 2^61
constexpr double kMaxAmountTotal = static_cast<double>(int64_t{1} << 61);
constexpr double kMaxOffset = static_cast<double>(int64_t{1} << 62);  // a difference of two points
constexpr double kMaxComputeCapability = 999;

enum class Rule { point, offset, amount, capability };

struct Column {
  std::string name;
  Rule rule;
};

// A rule between columns of one row that code walking the store's links relies on.
struct RowRule {
  const char* table;
  const char* column;  // the column named when the rule is broken
  const char* broken;  // SQL, true for a row that breaks it
  const char* violation;
};

// Ops are written parents first (derivation numbers the op tree in pre-order), so following
// parent_id always ends: source attribution and the detectors that name an op's caller walk up it,
// and an edited store whose op is its own ancestor sent them round for ever (a stack overflow).
constexpr RowRule kRowRules[] = {
    {"_op", "parent_id", "parent_id >= id",
     "a parent not below the op's own id; proflint writes parents first, and following parents must end"},
};

struct TableCheck {
  std::string table;
  std::vector<Column> columns;
  std::vector<const RowRule*> row_rules;
  int64_t size = 0;  // largest rowid: how many rows, about (the biggest tables are checked first)
};

// The rule for an INTEGER column, by its name; nothing for an identifier.
std::optional<Rule> rule_of(const std::string& c) {
  if (c == "id" || c.ends_with("_id") || c == "pid" || c == "tid" || c == "seq" || c == "sequence_number" || c == "rank" ||
      c == "return_value")
    return std::nullopt;
  if (c == "compute_major" || c == "compute_minor") return Rule::capability;
  // Clock offsets between a trace and a log or between ranks (epoch against boot time is ~2^60.6).
  if (c.ends_with("offset_ns") || c.ends_with("residual_ns")) return Rule::offset;
  if (c == "start_ns" || c == "end_ns" || c == "ts_ns" || c == "last_arrival_ns" || c.ends_with("_start_ns") ||
      c.ends_with("_end_ns") || c.ends_with("_ts_ns") || c == "allocated_bytes" || c == "reserved_bytes" ||
      c == "memory_bytes")
    return Rule::point;
  return Rule::amount;
}

std::vector<TableCheck> checks_of(SQLite::Database& db) {
  std::vector<TableCheck> checks;
  SQLite::Statement tables(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name");
  while (tables.executeStep()) checks.push_back({tables.getColumn(0).getString(), {}, {}, 0});
  for (auto& t : checks) {
    // Declared types as the schema writes them: proflint's numeric columns are all INTEGER.
    SQLite::Statement cols(db, "SELECT name, upper(type) FROM pragma_table_info(?)");
    cols.bind(1, t.table);
    while (cols.executeStep()) {
      if (cols.getColumn(1).getString() != "INTEGER") continue;
      std::string name = cols.getColumn(0).getString();
      if (auto rule = rule_of(name)) t.columns.push_back({name, *rule});
    }
    SQLite::Statement rows(db, "SELECT max(rowid) FROM " + quote_identifier(t.table));
    if (rows.executeStep() && !rows.getColumn(0).isNull()) t.size = rows.getColumn(0).getInt64();
  }
  for (auto& t : checks)
    for (const RowRule& r : kRowRules)
      if (t.table == r.table) t.row_rules.push_back(&r);
  std::erase_if(checks, [](const TableCheck& t) { return t.columns.empty() && t.row_rules.empty(); });
  std::stable_sort(checks.begin(), checks.end(), [](const TableCheck& a, const TableCheck& b) { return a.size > b.size; });
  return checks;
}

std::string words(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// The row that breaks `c`'s rule in `table`: for a compute capability, one outside 0..999; else the
// value of largest magnitude (for an amount, the largest of those that add up to `aggregate`).
StoreValueProblem locate(SQLite::Database& db, const std::string& table, const Column& c, double aggregate) {
  std::string col = quote_identifier(c.name);
  std::string magnitude = "abs(" + col + " + 0.0)";
  std::string which = c.rule == Rule::capability ? " WHERE " + col + " + 0.0 < 0 OR " + col + " + 0.0 > 999 LIMIT 1"
                                                 : " WHERE " + col + " IS NOT NULL ORDER BY " + magnitude + " DESC LIMIT 1";
  SQLite::Statement q(db, "SELECT rowid, quote(" + col + "), " + magnitude + " FROM " + quote_identifier(table) + which);
  StoreValueProblem p{table, c.name, 0, "", ""};
  double largest = 0;
  if (q.executeStep()) {
    p.rowid = q.getColumn(0).getInt64();
    p.value = q.getColumn(1).getString();
    largest = q.getColumn(2).getDouble();
  }
  switch (c.rule) {
    case Rule::capability:
      p.violation = "a compute capability number outside 0..999";
      break;
    case Rule::point:
      p.violation = "a time or level beyond +-2^61, which no import writes";
      break;
    case Rule::offset:
      p.violation = "a clock offset beyond +-2^62, which no import writes";
      break;
    case Rule::amount:
      p.violation = largest <= kMaxAmountTotal ? "the largest of values that add up to " + words(aggregate) +
                                                     " in magnitude, beyond the 2^61 an import can write"
                                               : "a duration, count or size beyond 2^61, which no import writes";
      break;
  }
  return p;
}

std::optional<StoreValueProblem> check_table(SQLite::Database& db, const TableCheck& t) {
  // One pass over the table, an aggregate per column, in floating point: abs() of INT64_MIN is an
  // SQLite error, and a text or real value counts as the number SQLite would read it as. (Doubles
  // make the limits exact to within their rounding, 512 at 2^61: far inside the headroom.)
  std::string sql = "SELECT ";
  for (size_t i = 0; i < t.columns.size(); ++i) {
    std::string col = quote_identifier(t.columns[i].name);
    if (i) sql += ", ";
    switch (t.columns[i].rule) {
      case Rule::capability:
        sql += "MIN(" + col + " + 0.0), MAX(" + col + " + 0.0)";
        break;
      case Rule::point:
      case Rule::offset:
        sql += "MAX(abs(" + col + " + 0.0))";
        break;
      case Rule::amount:
        sql += "TOTAL(abs(" + col + " + 0.0))";
        break;
    }
  }
  for (size_t i = 0; i < t.row_rules.size(); ++i)
    sql += std::string(t.columns.empty() && i == 0 ? "" : ", ") + "TOTAL(" + t.row_rules[i]->broken + ")";
  SQLite::Statement q(db, sql + " FROM " + quote_identifier(t.table));
  if (!q.executeStep()) return std::nullopt;
  int at = 0;
  for (const Column& c : t.columns) {
    auto v = q.getColumn(at++);
    bool broken = false;
    switch (c.rule) {
      case Rule::capability: {
        auto hi = q.getColumn(at++);
        broken = !v.isNull() && (v.getDouble() < 0 || hi.getDouble() > kMaxComputeCapability);
        break;
      }
      case Rule::point:
        broken = !v.isNull() && !(v.getDouble() <= kMaxPoint);
        break;
      case Rule::offset:
        broken = !v.isNull() && !(v.getDouble() <= kMaxOffset);
        break;
      case Rule::amount:
        broken = !(v.getDouble() <= kMaxAmountTotal);  // TOTAL is 0.0 over no rows
        break;
    }
    if (broken) return locate(db, t.table, c, v.isNull() ? 0 : v.getDouble());
  }
  for (const RowRule* r : t.row_rules) {
    if (q.getColumn(at++).getDouble() == 0) continue;
    std::string col = quote_identifier(r->column);
    SQLite::Statement row(db, "SELECT rowid, quote(" + col + ") FROM " + quote_identifier(t.table) + " WHERE " + r->broken + " LIMIT 1");
    StoreValueProblem p{t.table, r->column, 0, "", r->violation};
    if (row.executeStep()) {
      p.rowid = row.getColumn(0).getInt64();
      p.value = row.getColumn(1).getString();
    }
    return p;
  }
  return std::nullopt;
}

}  // namespace

std::optional<StoreValueProblem> find_value_out_of_bounds(Store& store) {
  std::vector<TableCheck> checks = checks_of(store.db());
  std::unique_ptr<SQLite::Database> second;
  if (checks.size() > 1) {
    try {
      second = store.open_reader();
    } catch (const std::exception&) {
      // A store only one connection can see is checked on that one.
    }
  }
  std::atomic<size_t> next{0};
  std::vector<std::optional<StoreValueProblem>> found(checks.size());
  std::mutex failure_lock;
  std::exception_ptr failure;
  auto work = [&](SQLite::Database& db) {
    try {
      for (size_t i = next++; i < checks.size(); i = next++) found[i] = check_table(db, checks[i]);
    } catch (...) {
      std::lock_guard lock(failure_lock);
      if (!failure) failure = std::current_exception();
    }
  };
  if (second) {
    std::thread helper(work, std::ref(*second));
    work(store.db());
    helper.join();
  } else {
    work(store.db());
  }
  if (failure) std::rethrow_exception(failure);
  // The first problem in the order of the tables' sizes, whichever thread found it.
  for (auto& f : found)
    if (f) return f;
  return std::nullopt;
}

}  // namespace proflint
