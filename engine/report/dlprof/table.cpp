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

std::string render_csv(const Report& report) {
  std::string out;
  if (report.tables.size() == 1) {
    const Table& t = report.tables.front();
    csv_row(out, t.columns);
    std::vector<std::string> fields;
    for (const auto& row : t.rows) {
      fields.clear();
      for (const auto& c : row) fields.push_back(cell_text(c));
      csv_row(out, fields);
    }
    return out;
  }
  csv_row(out, {"Table", "Row", "Column", "Value"});
  for (const auto& t : report.tables) {
    for (const auto& row : t.rows) {
      std::string row_name = row.empty() ? "" : cell_text(row.front());
      for (size_t c = 1; c < t.columns.size() && c < row.size(); ++c)
        csv_row(out, {t.name, row_name, t.columns[c], cell_text(row[c])});
    }
  }
  return out;
}

std::string render_json(const Report& report) {
  nlohmann::ordered_json j;
  j["report"] = report.name;
  j["domain"] = report.domain;
  j["tables"] = nlohmann::ordered_json::array();
  for (const auto& t : report.tables) {
    nlohmann::ordered_json jt;
    jt["name"] = t.name;
    jt["columns"] = t.columns;
    jt["rows"] = nlohmann::ordered_json::array();
    for (const auto& row : t.rows) {
      nlohmann::ordered_json jr = nlohmann::ordered_json::object();
      for (size_t c = 0; c < t.columns.size() && c < row.size(); ++c) jr[t.columns[c]] = cell_json(row[c]);
      jt["rows"].push_back(std::move(jr));
    }
    j["tables"].push_back(std::move(jt));
  }
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace proflint::dlprof
