// tests/unit/idle_claims_test.cpp — GPU-idle claim keys: idle time cut at the device's busy
// intervals, named by the start of the next GPU work, scaled to the estimate.
#include <gtest/gtest.h>

#include "engine/analysis/idle_claims.hpp"

using namespace proflint;

TEST(IdleClaims, PiecesAreCutIntoGapsAndBusyTimeIsLeftOut) {
  // Busy [100,200) and [300,400): gaps [200,300) (key ...:300) and after 400 (key ...:end).
  IdleGapKeys keys(7, 2, {{100, 200}, {300, 400}}, {});
  // [150,350): 50 busy, 100 idle in the first gap, 50 busy; [380,450): 20 busy, 50 idle at the end;
  // [250,260) overlaps the first piece and counts once.
  auto by_gap = keys.idle_by_gap({{150, 350}, {380, 450}, {250, 260}});
  ASSERT_EQ(by_gap.size(), 2u);
  EXPECT_EQ(by_gap.at("gpu-idle:t7:d2:300"), 100);
  EXPECT_EQ(by_gap.at("gpu-idle:t7:d2:end"), 50);
  // Before the first busy interval: the gap ends at 100.
  auto before = keys.idle_by_gap({{0, 120}});
  ASSERT_EQ(before.size(), 1u);
  EXPECT_EQ(before.at("gpu-idle:t7:d2:100"), 100);
  EXPECT_TRUE(keys.idle_by_gap({{110, 190}}).empty());  // all busy
}

// A DataLoader fetch [220,250) inside the gap [200,300) cuts it: the wait for input (the fetch,
// dataloader-stall's) and the idle time after it (host-sync's, which leaves fetches out) are
// different keys, so the two findings do not subtract each other.
TEST(IdleClaims, DataLoaderFetchesCutAGapIntoPieces) {
  IdleGapKeys keys(1, 0, {{100, 200}, {300, 400}}, {{220, 250}});
  auto fetch = keys.idle_by_gap({{220, 250}});
  ASSERT_EQ(fetch.size(), 1u);
  EXPECT_EQ(fetch.at("gpu-idle:t1:d0:250"), 30);
  auto after = keys.idle_by_gap({{250, 300}});
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after.at("gpu-idle:t1:d0:300"), 50);
  auto whole = keys.idle_by_gap({{200, 300}});  // gpu-underutilized: all three pieces
  ASSERT_EQ(whole.size(), 3u);
  EXPECT_EQ(whole.at("gpu-idle:t1:d0:220"), 20);
  EXPECT_EQ(whole.at("gpu-idle:t1:d0:250"), 30);
  EXPECT_EQ(whole.at("gpu-idle:t1:d0:300"), 50);
}

TEST(IdleClaims, ClaimsAreScaledToTheEstimateAndNeverExceedTheIdleTime) {
  std::map<std::string, int64_t> by_gap = {{"gpu-idle:t1:d0:300", 300}, {"gpu-idle:t1:d0:end", 100}};
  std::map<std::string, int64_t> claims = {{"memcpy:4", 10}};
  add_idle_claims(claims, by_gap, 200);  // half of the idle time
  EXPECT_EQ(claims.at("gpu-idle:t1:d0:300"), 150);
  EXPECT_EQ(claims.at("gpu-idle:t1:d0:end"), 50);
  EXPECT_EQ(claims.at("memcpy:4"), 10);
  std::map<std::string, int64_t> capped;
  add_idle_claims(capped, by_gap, 1000);  // more than the 400 idle: claims the idle time only
  EXPECT_EQ(capped.at("gpu-idle:t1:d0:300"), 300);
  EXPECT_EQ(capped.at("gpu-idle:t1:d0:end"), 100);
}
