// tests/unit/value_bounds_test.cpp — the check a saved store passes at load (engine/store/value_bounds.hpp)
// on every kind of store: shared in memory and a temporary file (two connections), a plain
// ":memory:" store (one). What import and derivation write passes; one edited number is found, in
// the right table, row and column, whichever of the two connections reads its table.
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>

#include <string>

#include "engine/pipeline/load.hpp"
#include "engine/store/store.hpp"
#include "engine/store/value_bounds.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint;

namespace {

Store derived_store(Store::Sharing sharing) {
  Store store = Store::create_in_memory(sharing);
  import_file(proflint::testing::fixture_path("sample_train.json.gz").string(), store, {});
  derive_all(store, {});
  return store;
}

int64_t count(Store& store, const std::string& sql) { return store.db().execAndGet(sql).getInt64(); }

}  // namespace

TEST(ValueBounds, FindsAnEditedNumberOnEveryKindOfStore) {
  for (auto sharing : {Store::Sharing::shared, Store::Sharing::temp_file, Store::Sharing::none}) {
    SCOPED_TRACE(static_cast<int>(sharing));
    Store store = derived_store(sharing);
    auto clean = find_value_out_of_bounds(store);
    EXPECT_FALSE(clean) << clean->table << " " << clean->column << " = " << clean->value;

    // The biggest tables go first, one to each connection: a problem in the second-biggest and
    // one in a small table are both found.
    ASSERT_GT(count(store, "SELECT count(*) FROM _range"), 100);
    ASSERT_GT(count(store, "SELECT count(*) FROM _op"), 100);
    store.db().exec("UPDATE iteration SET dur_ns = 9223372036854775807 WHERE rowid = 2");
    auto small = find_value_out_of_bounds(store);
    ASSERT_TRUE(small);
    EXPECT_EQ(small->table, "iteration");
    EXPECT_EQ(small->column, "dur_ns");
    EXPECT_EQ(small->rowid, 2);
    EXPECT_EQ(small->value, "9223372036854775807");
    EXPECT_NE(small->violation.find("beyond 2^61"), std::string::npos) << small->violation;

    // Values within 2^61 one by one that add up past it: the row named is the largest. By hand,
    // 3 * 2^60 = 3.46e18 > 2^61 = 2.31e18.
    store.db().exec("UPDATE iteration SET dur_ns = 1 WHERE rowid = 2");
    store.db().exec("UPDATE _range SET dur_ns = 1152921504606846976 WHERE rowid IN (5, 6); "
                    "UPDATE _range SET dur_ns = 1152921504607895552 WHERE rowid = 7");
    auto sum = find_value_out_of_bounds(store);
    ASSERT_TRUE(sum);
    EXPECT_EQ(sum->table, "_range");
    EXPECT_EQ(sum->column, "dur_ns");
    EXPECT_EQ(sum->rowid, 7);
    EXPECT_NE(sum->violation.find("add up to 3.459e+18"), std::string::npos) << sum->violation;

    // A time point may be anywhere within +-2^61, not beyond (the check compares doubles: the next
    // one past 2^61 is 2^61 + 512).
    store.db().exec("UPDATE _range SET dur_ns = 0 WHERE rowid IN (5, 6, 7)");
    store.db().exec("UPDATE _kernel SET start_ns = -2305843009213693952 WHERE rowid = 1");
    EXPECT_FALSE(find_value_out_of_bounds(store));
    store.db().exec("UPDATE _kernel SET start_ns = -2305843009213694464 WHERE rowid = 1");
    auto point = find_value_out_of_bounds(store);
    ASSERT_TRUE(point);
    EXPECT_EQ(point->table + "." + point->column, "_kernel.start_ns");
    EXPECT_NE(point->violation.find("+-2^61"), std::string::npos) << point->violation;
  }
}

TEST(ValueBounds, IdentifiersAreNotNumbersToCheckButComputeCapabilitiesAre) {
  Store store = derived_store(Store::Sharing::shared);
  // Thread ids of Kineto traces are often beyond 2^32: no code adds ids up, so they may be anything.
  store.db().exec("UPDATE _api_call SET tid = 9223372036854775807, correlation_id = -9223372036854775808");
  EXPECT_FALSE(find_value_out_of_bounds(store));
  store.db().exec("UPDATE device SET compute_minor = 1000");
  auto cc = find_value_out_of_bounds(store);
  ASSERT_TRUE(cc);
  EXPECT_EQ(cc->table + "." + cc->column, "device.compute_minor");
  EXPECT_EQ(cc->value, "1000");
}

TEST(ValueBounds, AnOpThatIsItsOwnAncestorIsFound) {
  Store store = derived_store(Store::Sharing::shared);
  // What derivation writes: every op's parent comes before it (pre-order), so walking up ends.
  ASSERT_GT(count(store, "SELECT count(*) FROM _op WHERE parent_id IS NOT NULL"), 10);
  EXPECT_EQ(count(store, "SELECT count(*) FROM _op WHERE parent_id >= id"), 0);
  // Two ops each other's parent: source attribution recursed until the stack ran out.
  int64_t child = count(store, "SELECT min(id) FROM _op WHERE parent_id IS NOT NULL");
  int64_t parent = count(store, "SELECT parent_id FROM _op WHERE id = " + std::to_string(child));
  store.db().exec("UPDATE _op SET parent_id = " + std::to_string(child) + " WHERE id = " + std::to_string(parent));
  auto cycle = find_value_out_of_bounds(store);
  ASSERT_TRUE(cycle);
  EXPECT_EQ(cycle->table + "." + cycle->column, "_op.parent_id");
  EXPECT_EQ(cycle->rowid, parent);
  EXPECT_EQ(cycle->value, std::to_string(child));
}
