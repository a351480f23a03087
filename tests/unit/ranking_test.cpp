// tests/unit/ranking_test.cpp — ranking by estimated savings, severity from share, diagnostics last.
#include <gtest/gtest.h>

#include <algorithm>

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

// Overlaps: two findings claiming the same evidence count it once, under the larger one.
TEST(Ranking, SharedClaimIsSubtractedFromTheLowerRankedFinding) {
  Finding pageable = make("pageable-memcpy", 300);
  pageable.claims = {{"memcpy:1", 200}, {"memcpy:2", 100}};
  Finding sync = make("sync-memcpy", 250);
  sync.claims = {{"memcpy:1", 150}, {"memcpy:3", 100}};  // copy 3 is its own
  std::vector<Finding> v = {sync, pageable};
  rank_findings(v, {{1, 1000}});
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].id, "pageable-memcpy");
  EXPECT_EQ(v[0].estimated_savings_ns, 300);
  EXPECT_TRUE(v[0].overlaps.empty());
  // min(150, 200) of copy 1 is already counted: 250 - 150.
  EXPECT_EQ(v[1].estimated_savings_ns, 100);
  EXPECT_EQ(v[1].gross_savings_ns, 250);
  ASSERT_EQ(v[1].overlaps.size(), 1u);
  EXPECT_EQ(v[1].overlaps[0].id, "pageable-memcpy");
  EXPECT_EQ(v[1].overlaps[0].rank, 1u);
  EXPECT_EQ(v[1].overlaps[0].shared_ns, 150);
  EXPECT_DOUBLE_EQ(v[1].savings_share, 0.1);
  // The sum counts copy 1 once, at its larger claim: 200 + 100 + 100 (+ the unclaimed 0).
  EXPECT_EQ(v[0].estimated_savings_ns + v[1].estimated_savings_ns, 400);
}

TEST(Ranking, LargerLaterClaimKeepsOnlyItsExcessAndRanksByWhatIsLeft) {
  Finding a = make("a", 500);
  a.claims = {{"root", 100}};
  Finding b = make("b", 450);
  b.claims = {{"root", 400}};
  Finding c = make("c", 420);
  c.claims = {{"root", 420}};
  std::vector<Finding> v = {c, b, a};
  rank_findings(v, {{1, 1000}});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].id, "a");
  EXPECT_EQ(v[0].estimated_savings_ns, 500);
  // b: 100 of its 400 already counted by a; the key now holds 400.
  EXPECT_EQ(v[1].id, "b");
  EXPECT_EQ(v[1].estimated_savings_ns, 350);
  // c: min(420, 400) counted already -> 20, re-sorted below b.
  EXPECT_EQ(v[2].id, "c");
  EXPECT_EQ(v[2].estimated_savings_ns, 20);
  ASSERT_EQ(v[2].overlaps.size(), 1u);
  EXPECT_EQ(v[2].overlaps[0].id, "a");  // the key's first owner
}

TEST(Ranking, FindingUnderItsThresholdMovesToBelowThresholdWithItsEstimate) {
  Finding amp = make("amp-not-used", 40);
  amp.min_savings_ns = 100;
  amp.problem = "FP32 GEMMs";
  Finding share = make("x", 150);
  share.min_wall_share = 0.2;
  Finding kept = make("kept", 120);
  kept.min_savings_ns = 100;
  std::vector<Finding> v = {amp, share, kept};
  std::vector<BelowThreshold> below;
  rank_findings(v, {{1, 1000}}, {}, &below);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].id, "kept");
  ASSERT_EQ(below.size(), 2u);
  EXPECT_EQ(below[0].id, "x");  // visited first: larger estimate
  EXPECT_DOUBLE_EQ(below[0].value, 0.15);
  EXPECT_DOUBLE_EQ(below[0].threshold, 0.2);
  EXPECT_EQ(below[0].unit, "share of wall time");
  EXPECT_EQ(below[1].id, "amp-not-used");
  EXPECT_DOUBLE_EQ(below[1].value, 40);
  EXPECT_DOUBLE_EQ(below[1].threshold, 100);
  EXPECT_EQ(below[1].unit, "ns");
  EXPECT_EQ(below[1].detail, "FP32 GEMMs");
  EXPECT_EQ(below[1].scope.trace_id.value_or(-1), 1);
}

TEST(Ranking, OverlapCanPushAFindingUnderItsThresholdAndItsClaimsThenCountForNobody) {
  Finding a = make("a", 500);
  a.claims = {{"k", 450}};
  Finding b = make("b", 460);
  b.claims = {{"k", 460}, {"j", 300}};
  b.min_savings_ns = 100;  // 460 - 450 = 10 left: held back
  Finding c = make("c", 200);
  c.claims = {{"j", 200}};  // j was b's, but b is not listed: c keeps it all
  std::vector<Finding> v = {a, b, c};
  std::vector<BelowThreshold> below;
  rank_findings(v, {{1, 1000}}, {}, &below);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1].id, "c");
  EXPECT_EQ(v[1].estimated_savings_ns, 200);
  ASSERT_EQ(below.size(), 1u);
  EXPECT_EQ(below[0].id, "b");
  EXPECT_DOUBLE_EQ(below[0].value, 10);
  EXPECT_NE(below[0].measured.find("after removing"), std::string::npos);
}

TEST(Ranking, DiagnosticsIgnoreClaimsAndThresholds) {
  Finding d = make("no-iterations", 0, true);
  d.min_savings_ns = 100;
  d.claims = {{"k", 10}};
  Finding p = make("p", 50);
  p.claims = {{"k", 50}};
  std::vector<Finding> v = {d, p};
  std::vector<BelowThreshold> below;
  rank_findings(v, {{1, 1000}}, {}, &below);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].estimated_savings_ns, 50);
  EXPECT_TRUE(below.empty());
}

// Generic idle-time findings (gpu-underutilized, gpu-idle-gaps) give way to the finding that
// names the cause of the same idle gap, even when their own estimate is larger: the concrete one
// is visited first and keeps its claim; the generic one keeps what nothing else explains.
TEST(Ranking, GenericFindingGivesTheSharedIdleTimeToTheConcreteCause) {
  Finding idle = make("gpu-idle-gaps", 400);
  idle.generic = true;
  idle.claims = {{"gpu-idle:t1:d0:100", 300}, {"gpu-idle:t1:d0:200", 100}};
  Finding sync = make("host-sync", 250);
  sync.claims = {{"gpu-idle:t1:d0:100", 250}};
  std::vector<Finding> v = {idle, sync};
  rank_findings(v, {{1, 1000}});
  ASSERT_EQ(v.size(), 2u);
  // host-sync keeps its whole 250; gpu-idle-gaps loses the 250 it claimed on the same gap and
  // ranks on the 150 left (50 of that gap + the 100 of the other gap).
  EXPECT_EQ(v[0].id, "host-sync");
  EXPECT_EQ(v[0].estimated_savings_ns, 250);
  EXPECT_TRUE(v[0].overlaps.empty());
  EXPECT_EQ(v[1].id, "gpu-idle-gaps");
  EXPECT_EQ(v[1].gross_savings_ns, 400);
  EXPECT_EQ(v[1].estimated_savings_ns, 150);
  ASSERT_EQ(v[1].overlaps.size(), 1u);
  EXPECT_EQ(v[1].overlaps[0].id, "host-sync");
  EXPECT_EQ(v[1].overlaps[0].rank, 1u);
  EXPECT_EQ(v[1].overlaps[0].shared_ns, 250);
  // Without the generic mark the larger finding keeps the gap (the rule for equals).
  Finding plain = idle;
  plain.generic = false;
  std::vector<Finding> w = {plain, sync};
  rank_findings(w, {{1, 1000}});
  EXPECT_EQ(w[0].id, "gpu-idle-gaps");
  EXPECT_EQ(w[0].estimated_savings_ns, 400);
  EXPECT_EQ(w[1].estimated_savings_ns, 0);
}

// A generic finding whose idle time is mostly unexplained still leads: only the shared part moves.
TEST(Ranking, GenericFindingWithMostlyUnexplainedIdleStillLeads) {
  Finding under = make("gpu-underutilized", 600);
  under.generic = true;
  under.claims = {{"gpu-idle:t1:d0:100", 50}, {"gpu-idle:t1:d0:end", 550}};
  Finding churn = make("allocation-churn", 80);
  churn.claims = {{"gpu-idle:t1:d0:100", 80}};
  std::vector<Finding> v = {churn, under};
  rank_findings(v, {{1, 1000}});
  EXPECT_EQ(v[0].id, "gpu-underutilized");
  EXPECT_EQ(v[0].estimated_savings_ns, 550);  // 600 - min(50, 80)
  EXPECT_EQ(v[1].id, "allocation-churn");
  EXPECT_EQ(v[1].estimated_savings_ns, 80);
}

// Seen on the real cudf nsys export: sync-memcpy's 9.68 ms was claimed by pageable-memcpy but for
// 2 ns of rounding in the per-copy claims, and the report said "saves ~2 ns". A remainder under a
// microsecond after overlaps is nothing; without an overlap a small estimate stays as it is.
TEST(Ranking, ARoundingRemainderAfterOverlapsIsNothing) {
  Finding pageable = make("pageable-memcpy", 9'680'000);
  pageable.claims = {{"memcpy:1", 9'679'998}};
  Finding sync = make("sync-memcpy", 9'680'000);
  sync.claims = {{"memcpy:1", 9'679'998}};
  Finding tiny = make("tiny", 500);  // no overlap: its own 500 ns stays
  std::vector<Finding> v = {sync, pageable, tiny};
  rank_findings(v, {{1, 1'000'000'000}});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].id, "pageable-memcpy");
  EXPECT_EQ(v[0].estimated_savings_ns, 9'680'000);
  const auto sync_it = std::find_if(v.begin(), v.end(), [](const Finding& f) { return f.id == "sync-memcpy"; });
  ASSERT_NE(sync_it, v.end());
  EXPECT_EQ(sync_it->estimated_savings_ns, 0);
  EXPECT_EQ(sync_it->gross_savings_ns, 9'680'000);
  ASSERT_EQ(sync_it->overlaps.size(), 1u);
  const auto tiny_it = std::find_if(v.begin(), v.end(), [](const Finding& f) { return f.id == "tiny"; });
  ASSERT_NE(tiny_it, v.end());
  EXPECT_EQ(tiny_it->estimated_savings_ns, 500);
}
