// StringTable (engine/model/model.hpp): the model's interned texts. Ids are dense and in the order
// texts were first seen, the same text always gets the same id, and views stay valid while the
// lookup table grows: checked against a std::unordered_map on random texts with many repeats.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/model/model.hpp"

namespace proflint {
namespace {

TEST(StringTable, IdsAreDenseInFirstSeenOrder) {
  StringTable t;
  EXPECT_EQ(t.find("a"), 0);
  EXPECT_EQ(t.intern("a"), 1);
  EXPECT_EQ(t.intern(""), 2);  // the empty text is a text like any other
  EXPECT_EQ(t.intern("a"), 1);
  EXPECT_EQ(t.intern("b"), 3);
  EXPECT_EQ(t.find(""), 2);
  EXPECT_EQ(t.find("c"), 0);
  EXPECT_EQ(t.size(), 3);
  EXPECT_EQ(t.text(3), "b");
  EXPECT_EQ(t.text(0), "");  // no id: the empty text
  EXPECT_EQ(t.text(4), "");
}

void agrees_with_a_map(bool reserve) {
  std::mt19937 rng(reserve ? 5 : 7);
  StringTable t;
  if (reserve) t.reserve_more(30000);
  std::unordered_map<std::string, int64_t> want;
  std::vector<std::pair<const std::string*, std::string>> views;  // a text's address stays put
  for (int n = 0; n < 100000; ++n) {
    // About 20,000 distinct texts, short and long (beyond the small-string buffer).
    std::string text = "k" + std::to_string(rng() % 20000);
    if (rng() % 3 == 0) text += std::string(40, 'x');
    int64_t id = t.intern(text);
    auto [it, added] = want.emplace(text, static_cast<int64_t>(want.size()) + 1);
    ASSERT_EQ(id, it->second) << text;
    if (added) views.emplace_back(&t.text(id), text);
  }
  EXPECT_EQ(t.size(), static_cast<int64_t>(want.size()));
  for (const auto& [text, id] : want) ASSERT_EQ(t.find(text), id) << text;
  for (const auto& [address, text] : views) ASSERT_EQ(*address, text);
  EXPECT_EQ(t.find("k20000"), 0);
}

TEST(StringTable, AgreesWithAHashMapWhileGrowing) { agrees_with_a_map(false); }

// The table's size for a number of texts: at most 3/4 full, and finite for any size a damaged file
// could ask for (a reservation is capped at 2^40 texts, so the doubling cannot overflow).
TEST(StringTable, TableSizes) {
  static_assert(StringTable::capacity_for(0) == 16);
  static_assert(StringTable::capacity_for(12) == 16);
  static_assert(StringTable::capacity_for(13) == 32);
  static_assert(StringTable::capacity_for(100, 256) == 256);
  static_assert(StringTable::capacity_for(SIZE_MAX) == size_t{1} << 41);
  StringTable t;
  t.reserve_more(1000);
  EXPECT_EQ(t.intern("a"), 1);
  EXPECT_EQ(t.find("a"), 1);
}

TEST(StringTable, AgreesWithAHashMapAfterReserving) { agrees_with_a_map(true); }

}  // namespace
// Text ids kept in 32 bits (RangeArgs) read back as they were given, NULL (kNone) included, and
// compare with plain ids as the derivation steps compare them.
TEST(TextId, KeepsIdsAndNone) {
  for (int64_t id : {kNone, int64_t{0}, int64_t{1}, int64_t{267101}, int64_t{INT32_MAX}}) {
    TextId kept = id;
    EXPECT_EQ(static_cast<int64_t>(kept), id);
  }
  EXPECT_TRUE(TextId() == kNone);
  RangeArgs a;
  EXPECT_FALSE(a.any());
  a.module_id = 7;
  EXPECT_TRUE(a.any());
  EXPECT_NE(a.module_id, kNone);
  EXPECT_EQ(sizeof(RangeArgs), 48u);
}

}  // namespace proflint
