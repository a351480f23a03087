// tests/report/html_report_test.cpp — the HTML report's data (what the page draws) and its limits.
// The page itself is checked in a browser by tests/html/check_html.py (ctest -L html).
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <regex>

#include "engine/pipeline/analyze.hpp"
#include "engine/pipeline/load.hpp"
#include "engine/report/html_report.hpp"
#include "tests/support/run.hpp"

namespace proflint {
namespace {

using testing::fixture_path;
using testing::run_proflint;
using testing::shell_quote;
using testing::slurp;

nlohmann::json data_of(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"pf-data\">";
  size_t a = page.find(open);
  EXPECT_NE(a, std::string::npos);
  a += open.size();
  size_t b = page.find("</script>", a);
  return nlohmann::json::parse(page.substr(a, b - a));
}

TEST(HtmlReport, StepOutliersAreRobust) {
  // median 100, MAD 1 -> spread 1.48: 150 is far out, 102 is not (and within 5% anyway).
  EXPECT_EQ(step_outliers({100, 101, 99, 100, 150, 100, 102}), (std::vector<size_t>{4}));
  EXPECT_TRUE(step_outliers({100, 100, 100, 100, 100}).empty());  // no spread, nothing 5% off
  EXPECT_EQ(step_outliers({100, 100, 100, 100, 120}), (std::vector<size_t>{4}));  // zero MAD, 20% off
  EXPECT_TRUE(step_outliers({1, 1000, 5}).empty());  // too few steps to call one an outlier
}

TEST(HtmlReport, ScriptSafeJsonCannotCloseTheElement) {
  std::string text = nlohmann::json({{"name", "</script><script>alert(1)</script><!--"}}).dump();
  std::string safe = script_safe_json(text);
  EXPECT_EQ(safe.find('<'), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(safe), nlohmann::json::parse(text));
}

class HtmlSample : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    store_ = new Store(load_inputs({fixture_path("sample_train.json.gz").string()}, LoadOptions{}));
    result_ = new AnalysisResult(run_analysis(*store_, AnalysisOptions{}, detector_registry()));
  }
  static void TearDownTestSuite() {
    delete result_;
    delete store_;
  }
  static Store* store_;
  static AnalysisResult* result_;
};
Store* HtmlSample::store_ = nullptr;
AnalysisResult* HtmlSample::result_ = nullptr;

TEST_F(HtmlSample, PageIsSelfContained) {
  std::string page = render_findings_html(*store_, *result_);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("default-src 'none'"), std::string::npos);
  // Nothing the page loads: no script, stylesheet, image or frame by URL.
  EXPECT_FALSE(std::regex_search(page, std::regex(R"(<(script|link|img|iframe)[^>]*\s(src|href)=)")));
  // Deterministic: the same store renders the same bytes.
  EXPECT_EQ(page, render_findings_html(*store_, *result_));
}

TEST_F(HtmlSample, SeriesAgreeWithTheFacts) {
  auto data = data_of(render_findings_html(*store_, *result_));
  const auto& t = data["traces"][0];
  // Iterations: the derived table, in order (6 ProfilerSteps in this fixture).
  SQLite::Statement q(store_->db(), "SELECT dur_ns FROM iteration WHERE trace_id = 1 ORDER BY iteration");
  std::vector<int64_t> durs;
  while (q.executeStep()) durs.push_back(q.getColumn(0).getInt64());
  ASSERT_EQ(durs.size(), 6u);
  EXPECT_EQ(t["iterations"]["dur_ns"].get<std::vector<int64_t>>(), durs);
  // Utilization per bin, weighted by bin width, integrates to summary's kernel_busy / window
  // (58.67%: the union of kernel intervals, computed there independently of the binning).
  const auto& se = t["series"];
  int64_t bin = se["bin_ns"], wall = t["wall_ns"];
  double busy = 0;
  const auto& util = se["devices"][0]["utilization"];
  for (size_t b = 0; b < util.size(); ++b) {
    int64_t width = std::min<int64_t>(bin, wall - static_cast<int64_t>(b) * bin);
    busy += util[b].get<double>() * static_cast<double>(width);
  }
  double expected = result_->summaries[0].devices[0].gpu_utilization;
  EXPECT_NEAR(busy / static_cast<double>(wall), expected, 1e-3);
  EXPECT_NEAR(expected, 0.5867, 1e-4);
  // The kernel table holds every kernel launch once.
  int64_t calls = 0;
  for (const auto& row : data["kernels"]["rows"]) calls += row[3].get<int64_t>();
  EXPECT_EQ(calls, result_->summaries[0].kernel_count);
}

TEST_F(HtmlSample, FindingsPointIntoTheTimeline) {
  auto data = data_of(render_findings_html(*store_, *result_));
  const auto& views = data["timeline"]["views"];
  const auto& hl = data["highlights"];
  ASSERT_EQ(hl.size(), result_->findings.size());
  size_t with_events = 0;
  for (size_t i = 0; i < hl.size(); ++i) {
    if (hl[i]["view"].is_null()) continue;
    const auto& v = views[hl[i]["view"].get<size_t>()];
    for (const auto& e : hl[i]["events"]) {
      // Each highlighted event exists in its lane.
      const auto& lane = v["lanes"][e[0].get<size_t>()];
      ASSERT_LT(e[1].get<size_t>(), lane["s"].size());
    }
    if (!hl[i]["events"].empty()) ++with_events;
  }
  EXPECT_GT(with_events, 0u);
  // pageable-memcpy cites its copies (claims memcpy:<id>): the highlighted events are memcpys
  // (class 3) of that finding's window.
  for (size_t i = 0; i < result_->findings.size(); ++i) {
    if (result_->findings[i].id != "pageable-memcpy") continue;
    const auto& v = views[hl[i]["view"].get<size_t>()];
    ASSERT_FALSE(hl[i]["events"].empty());
    for (const auto& e : hl[i]["events"]) EXPECT_EQ(v["lanes"][e[0].get<size_t>()]["c"][e[1].get<size_t>()], 3);
  }
}

TEST_F(HtmlSample, TimelineKeepsToItsBudgetAndSaysSo) {
  HtmlLimits limits;
  limits.timeline_events = 500;
  auto data = data_of(render_findings_html(*store_, *result_, limits));
  int64_t events = 0;
  bool truncated = false;
  for (const auto& v : data["timeline"]["views"]) {
    events += v["events"].get<int64_t>();
    truncated = truncated || v["truncated"].get<bool>();
    int64_t drawn = 0;
    for (const auto& l : v["lanes"]) drawn += static_cast<int64_t>(l["s"].size());
    EXPECT_EQ(drawn, v["events"].get<int64_t>());
  }
  EXPECT_LE(events, 500);
  EXPECT_TRUE(truncated);
  EXPECT_FALSE(data["reductions"].empty());
}

TEST(HtmlReportCli, AnalyzeAndCompareWriteHtml) {
  std::string out = ::testing::TempDir() + "proflint_html_" + std::to_string(getpid()) + ".html";
  auto r = run_proflint("analyze " + shell_quote(fixture_path("sample_amp.json.gz").string()) + " --format html -o " +
                        shell_quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(data_of(slurp(out))["kind"], "analysis");
  // compare: same exit code as the text gate; both sides' steps (40 each in this pair).
  std::string pair = shell_quote(fixture_path("compare/base.json.gz").string()) + " " +
                     shell_quote(fixture_path("compare/slow3.json.gz").string());
  auto text = run_proflint("compare " + pair);
  auto html = run_proflint("compare " + pair + " --format html -o " + shell_quote(out));
  EXPECT_EQ(html.exit_code, text.exit_code);
  auto data = data_of(slurp(out));
  EXPECT_EQ(data["kind"], "compare");
  EXPECT_EQ(data["sides"][0]["steps_ns"].size(), 40u);
  EXPECT_EQ(data["sides"][1]["steps_ns"].size(), 40u);
  std::remove(out.c_str());
}

}  // namespace
}  // namespace proflint
