// engine/report/dlprof/table.cpp — CSV and JSON renderings of a report (see table.hpp).
#include "engine/report/dlprof/table.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace proflint::dlprof {

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

double round2(double v) { return std::round(v * 100.0) / 100.0; }

std::string cell_text(const Cell& c) {
  struct V {
    std::string operator()(std::monostate) const { return ""; }
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return fmt::format("{:.2f}", round2(v) == 0 ? 0.0 : round2(v)); }
    std::string operator()(const std::string& v) const { return v; }
    std::string operator()(bool v) const { return v ? "yes" : "no"; }
  };
  return std::visit(V{}, c);
}

nlohmann::ordered_json cell_json(const Cell& c) {
  struct V {
    nlohmann::ordered_json operator()(std::monostate) const { return nullptr; }
    nlohmann::ordered_json operator()(int64_t v) const { return v; }
    nlohmann::ordered_json operator()(double v) const { return round2(v) == 0 ? 0.0 : round2(v); }
    nlohmann::ordered_json operator()(const std::string& v) const { return v; }
    nlohmann::ordered_json operator()(bool v) const { return v; }
  };
  return std::visit(V{}, c);
}

void csv_row(std::string& out, const std::vector<std::string>& fields) {
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    out += csv_field(fields[i]);
  }
  out += '\n';
}

}  // namespace

void write_csv(const Report& report, const Sink& sink) {
  std::string out;
  if (report.tables.size() == 1) {
    const Table& t = report.tables.front();
    csv_row(out, t.columns);
    sink(out);
    std::vector<std::string> fields;
    for (const auto& row : t.rows) {
      fields.clear();
      for (const auto& c : row) fields.push_back(cell_text(c));
      out.clear();
      csv_row(out, fields);
      sink(out);
    }
    return;
  }
  csv_row(out, {"Table", "Row", "Column", "Value"});
  sink(out);
  for (const auto& t : report.tables) {
    for (const auto& row : t.rows) {
      std::string row_name = row.empty() ? "" : cell_text(row.front());
      for (size_t c = 1; c < t.columns.size() && c < row.size(); ++c) {
        out.clear();
        csv_row(out, {t.name, row_name, t.columns[c], cell_text(row[c])});
        sink(out);
      }
    }
  }
}

namespace {

// `v` as nlohmann's dump with an indent of 2 would write it at nesting `depth` of a larger
// document: lines after the first are indented by 2 * depth more. Writing the document a row at
// a time this way gives the same bytes as dumping it whole.
std::string dump_at(const nlohmann::ordered_json& v, int depth) {
  std::string text = v.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string pad(static_cast<size_t>(2 * depth), ' ');
  std::string out;
  out.reserve(text.size() + 16);
  for (char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

}  // namespace

// {"report", "domain", "tables": [{"name", "columns", "rows": [...]}]} as
// nlohmann::ordered_json::dump(2) writes it, one row at a time.
void write_json(const Report& report, const Sink& sink) {
  sink("{\n  \"report\": " + dump_at(report.name, 1) + ",\n  \"domain\": " + dump_at(report.domain, 1) +
       ",\n  \"tables\": ");
  if (report.tables.empty()) {
    sink("[]\n}\n");
    return;
  }
  sink("[\n");
  for (size_t ti = 0; ti < report.tables.size(); ++ti) {
    const Table& t = report.tables[ti];
    nlohmann::ordered_json columns = t.columns;
    sink(std::string(ti ? ",\n" : "") + "    {\n      \"name\": " + dump_at(t.name, 3) + ",\n      \"columns\": " +
         dump_at(columns, 3) + ",\n      \"rows\": ");
    if (t.rows.empty()) {
      sink("[]\n    }");
      continue;
    }
    sink("[\n");
    for (size_t ri = 0; ri < t.rows.size(); ++ri) {
      const auto& row = t.rows[ri];
      nlohmann::ordered_json jr = nlohmann::ordered_json::object();
      for (size_t c = 0; c < t.columns.size() && c < row.size(); ++c) jr[t.columns[c]] = cell_json(row[c]);
      sink((ri ? ",\n        " : "        ") + dump_at(jr, 4));
    }
    sink("\n      ]\n    }");
  }
  sink("\n  ]\n}\n");
}

std::string render_csv(const Report& report) {
  std::string out;
  write_csv(report, [&](std::string_view piece) { out.append(piece); });
  return out;
}

std::string render_json(const Report& report) {
  std::string out;
  write_json(report, [&](std::string_view piece) { out.append(piece); });
  return out;
}

}  // namespace proflint::dlprof
