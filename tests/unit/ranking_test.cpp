// tests/unit/ranking_test.cpp — ranking by estimated savings, severity from share, diagnostics last.
#include <gtest/gtest.h>

#include "engine/analysis/ranking.hpp"

using namespace proflint;

namespace {
Finding make(std::string id, int64_t savings, bool diagnostic = false) {
  Finding f;
  f.id = std::move(id);
  f.estimated_savings_ns = savings;
  f.diagnostic = diagnostic;
  f.scope.trace_id = 1;
  return f;
}
}  // namespace

TEST(Ranking, OrdersBySavingsThenIdWithDiagnosticsLast) {
  std::vector<Finding> v = {make("b-small", 10), make("no-iterations", 0, true), make("a-big", 500), make("c-big", 500)};
  rank_findings(v, {{1, 1000}});
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].id, "a-big");
  EXPECT_EQ(v[1].id, "c-big");
  EXPECT_EQ(v[2].id, "b-small");
  EXPECT_EQ(v[3].id, "no-iterations");
  EXPECT_DOUBLE_EQ(v[0].savings_share, 0.5);
  EXPECT_EQ(v[0].effective_severity, Severity::high);
  EXPECT_EQ(v[2].effective_severity, Severity::low);  // 1% share
  EXPECT_EQ(v[3].effective_severity, Severity::info);
}

TEST(Ranking, SavingsNeverExceedWallTime) {
  std::vector<Finding> v = {make("x", 5000)};
  rank_findings(v, {{1, 1000}});
  EXPECT_EQ(v[0].estimated_savings_ns, 1000);
  EXPECT_DOUBLE_EQ(v[0].savings_share, 1.0);
}

TEST(Ranking, FixedSeverityWins) {
  std::vector<Finding> v = {make("x", 1)};
  v[0].severity = Severity::high;
  rank_findings(v, {{1, 1000}});
  EXPECT_EQ(v[0].effective_severity, Severity::high);
}

TEST(Ranking, MediumBand) {
  std::vector<Finding> v = {make("x", 50)};
  rank_findings(v, {{1, 1000}});
  EXPECT_EQ(v[0].effective_severity, Severity::medium);
}
