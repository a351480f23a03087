// engine/report/dlprof/table.hpp — the one table model every DLProf-style report is built into,
// and its two renderings (CSV and JSON). Builders never format text; renderers never compute.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace proflint::dlprof {

// A cell: empty (not recorded), integer (ns, counts, ids), a percentage/ratio (rendered with two
// decimals), text, or a yes/no flag.
using Cell = std::variant<std::monostate, int64_t, double, std::string, bool>;

struct Table {
  std::string name;                     // e.g. "detail", or "All Ops" inside the summary
  std::vector<std::string> columns;     // DLProf's column names, units in parentheses
  std::vector<std::vector<Cell>> rows;  // each row has columns.size() cells
};

struct Report {
  std::string name;    // summary, detail, iteration, kernel, tensor, op_type, group_node, expert_systems
  std::string domain;  // NVTX domain, "" = the default domain (the whole profile)
  std::vector<Table> tables;
};

// Receives a rendering piece by piece (a row at a time), so that a report of 10^6 rows is never
// held as one text (issue 20, defect 7).
using Sink = std::function<void(std::string_view)>;

// RFC 4180 with LF line ends and a header row. A report of one table is that table; a report of
// several (the summary) is written in long form: Table,Row,Column,Value (Row = first cell).
std::string render_csv(const Report& report);
// {"report", "domain", "tables": [{"name", "columns", "rows": [{column: value}]}]}; empty cells
// are null, flags true/false, percentages numbers rounded to two decimals.
std::string render_json(const Report& report);
// The same texts, handed to `sink` a row at a time.
void write_csv(const Report& report, const Sink& sink);
void write_json(const Report& report, const Sink& sink);

}  // namespace proflint::dlprof
