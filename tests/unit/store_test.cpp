#include <gtest/gtest.h>
#include "engine/store/store.hpp"
TEST(Store, CreatesLatestVersion) {
  auto store = proflint::Store::create_in_memory();
  EXPECT_EQ(store.schema_version(), proflint::latest_schema_version());
}
