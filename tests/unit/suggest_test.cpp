// tests/unit/suggest_test.cpp — did-you-mean for mistyped ids.
#include <gtest/gtest.h>

#include "engine/common/suggest.hpp"

using namespace proflint;

TEST(Suggest, EditDistance) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("same", "same"), 0u);
}

TEST(Suggest, ClosestWithinReason) {
  std::vector<std::string> ids = {"amp-not-used", "dataloader-stall", "host-sync"};
  EXPECT_EQ(did_you_mean("dataloder-stall", ids), " (did you mean 'dataloader-stall'?)");
  EXPECT_EQ(did_you_mean("amp-unused", ids), "");  // too far: no guess is better than a wrong one
  EXPECT_EQ(closest_match("host-synk", ids), "host-sync");
}
