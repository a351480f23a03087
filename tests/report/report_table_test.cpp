// tests/report/report_table_test.cpp — the table model's CSV and JSON renderings.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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
