// tests/report/report_support.hpp — building DLProf-style reports in-process for tests.
#pragma once

#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "engine/pipeline/load.hpp"
#include "engine/report/dlprof/reports.hpp"

namespace proflint::testing {

struct Built {
  Store store;
  dlprof::Model model;
};

inline Built load_for_reports(const std::string& path, DeriveOptions derive = {}) {
  LoadOptions lo;
  lo.derive = std::move(derive);
  lo.rederive = true;
  Store store = load_inputs({path}, lo);
  dlprof::Model model = dlprof::load_model(store);
  return Built{std::move(store), std::move(model)};
}

inline dlprof::Report report_of(Built& b, const std::string& name, const std::string& domain = "") {
  dlprof::ReportInput in{&b.store, &b.model, nullptr};
  return dlprof::build_report(name, in, domain);
}

inline size_t column_index(const dlprof::Table& t, const std::string& column) {
  for (size_t i = 0; i < t.columns.size(); ++i)
    if (t.columns[i] == column) return i;
  ADD_FAILURE() << "no column '" << column << "' in " << t.name;
  return 0;
}

inline int64_t int_cell(const dlprof::Cell& c) {
  return std::holds_alternative<int64_t>(c) ? std::get<int64_t>(c) : INT64_MIN;
}
inline double num_cell(const dlprof::Cell& c) {
  if (std::holds_alternative<double>(c)) return std::get<double>(c);
  if (std::holds_alternative<int64_t>(c)) return static_cast<double>(std::get<int64_t>(c));
  return -1e300;
}
inline std::string text_cell(const dlprof::Cell& c) {
  return std::holds_alternative<std::string>(c) ? std::get<std::string>(c) : "";
}

// Sum of an integer column.
inline int64_t column_sum(const dlprof::Table& t, const std::string& column) {
  size_t i = column_index(t, column);
  int64_t s = 0;
  for (const auto& r : t.rows) s += int_cell(r[i]);
  return s;
}

// A key/value table of the summary: the value of the row named `row`.
inline dlprof::Cell summary_value(const dlprof::Report& r, const std::string& table, const std::string& row,
                                  const std::string& column = "Value") {
  for (const auto& t : r.tables) {
    if (t.name != table) continue;
    size_t c = column_index(t, column);
    for (const auto& x : t.rows)
      if (text_cell(x[0]) == row) return x[c];
  }
  ADD_FAILURE() << "no row '" << row << "' in summary table " << table;
  return {};
}

inline int64_t sql_int(Store& s, const std::string& sql) {
  SQLite::Statement q(s.db(), sql);
  if (!q.executeStep() || q.isColumnNull(0)) return 0;
  return q.getColumn(0).getInt64();
}

}  // namespace proflint::testing
