// tests/report/report_table_test.cpp — the table model's CSV and JSON renderings.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string_view>

#include "engine/report/dlprof/table.hpp"

using namespace proflint::dlprof;

TEST(ReportTable, CsvQuotesPerRfc4180WithLfLineEnds) {
  Report r{"kernel", "", {Table{"kernel", {"Kernel Name", "No. Calls", "Uses TC", "Share (%)", "Note"}, {}}}};
  r.tables[0].rows.push_back({std::string("void k<float, 128>(int)"), int64_t{3}, true, 12.345, Cell{}});
  r.tables[0].rows.push_back({std::string("say \"hi\"\nthere"), int64_t{-1}, false, 0.0, std::string("plain")});
  EXPECT_EQ(render_csv(r),
            "Kernel Name,No. Calls,Uses TC,Share (%),Note\n"
            "\"void k<float, 128>(int)\",3,yes,12.35,\n"
            "\"say \"\"hi\"\"\nthere\",-1,no,0.00,plain\n");
}

TEST(ReportTable, SeveralTablesRenderAsLongFormCsv) {
  Report r{"summary",
           "",
           {Table{"Summary", {"Name", "Value"}, {{std::string("Wall Clock Time (ns)"), int64_t{10}}}},
            Table{"All Ops", {"Name", "GPU Time (ns)", "# Ops"}, {{std::string("All Op"), int64_t{5}, int64_t{2}}}}}};
  EXPECT_EQ(render_csv(r),
            "Table,Row,Column,Value\n"
            "Summary,Wall Clock Time (ns),Value,10\n"
            "All Ops,All Op,GPU Time (ns),5\n"
            "All Ops,All Op,# Ops,2\n");
}

TEST(ReportTable, JsonKeepsTypesAndNulls) {
  Report r{
      "detail", "MPI", {Table{"detail", {"Op Name", "No. Calls", "Using TC", "TC Utilization (%)", "Data Type"}, {}}}};
  r.tables[0].rows.push_back({std::string("/a/b(2)"), int64_t{4}, true, 66.666, Cell{}});
  auto j = nlohmann::json::parse(render_json(r));
  EXPECT_EQ(j["report"], "detail");
  EXPECT_EQ(j["domain"], "MPI");
  EXPECT_EQ(j["tables"][0]["columns"].size(), 5u);
  const auto& row = j["tables"][0]["rows"][0];
  EXPECT_EQ(row["Op Name"], "/a/b(2)");
  EXPECT_EQ(row["No. Calls"], 4);
  EXPECT_EQ(row["Using TC"], true);
  EXPECT_DOUBLE_EQ(row["TC Utilization (%)"].get<double>(), 66.67);
  EXPECT_TRUE(row["Data Type"].is_null());
}

// The JSON is written a row at a time (write_json) so that a report of 10^6 rows is never one
// document in memory; its bytes must be what dumping the whole document with nlohmann (the
// renderer before streaming) gives: 2-space indents at every depth, empty tables and arrays as [],
// escaped and invalid UTF-8 text as dump's replace handler writes it.
TEST(ReportTable, StreamedJsonIsByteIdenticalToTheWholeDocumentDump) {
  Report r{"summary", "dom\"ain", {}};
  r.tables.push_back(Table{"Summary", {"Name", "Value"}, {{std::string("Wall"), int64_t{10}}, {std::string("x\ny\x01"), 1.234}}});
  r.tables.push_back(Table{"Empty", {"A"}, {}});
  r.tables.push_back(Table{"No columns", {}, {{}}});
  r.tables.push_back(Table{"Bad UTF-8", {"K\xff", "B"}, {{std::string("\xc3\x28"), true}, {Cell{}, false}}});
  auto whole = [](const Report& rep) {
    nlohmann::ordered_json j;
    j["report"] = rep.name;
    j["domain"] = rep.domain;
    j["tables"] = nlohmann::ordered_json::array();
    for (const auto& t : rep.tables) {
      nlohmann::ordered_json jt;
      jt["name"] = t.name;
      jt["columns"] = t.columns;
      jt["rows"] = nlohmann::ordered_json::array();
      for (const auto& row : t.rows) {
        nlohmann::ordered_json jr = nlohmann::ordered_json::object();
        for (size_t c = 0; c < t.columns.size() && c < row.size(); ++c) {
          const Cell& cell = row[c];
          if (auto* i = std::get_if<int64_t>(&cell)) jr[t.columns[c]] = *i;
          else if (auto* d = std::get_if<double>(&cell)) jr[t.columns[c]] = std::round(*d * 100) / 100;
          else if (auto* s = std::get_if<std::string>(&cell)) jr[t.columns[c]] = *s;
          else if (auto* b = std::get_if<bool>(&cell)) jr[t.columns[c]] = *b;
          else jr[t.columns[c]] = nullptr;
        }
        jt["rows"].push_back(std::move(jr));
      }
      j["tables"].push_back(std::move(jt));
    }
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  };
  EXPECT_EQ(render_json(r), whole(r));
  Report none{"kernel", "", {}};
  EXPECT_EQ(render_json(none), whole(none));
  // Pieces: one per row at most, never the whole table.
  size_t pieces = 0;
  write_json(r, [&](std::string_view) { ++pieces; });
  EXPECT_GE(pieces, 5u);
}
