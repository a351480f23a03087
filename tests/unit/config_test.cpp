// tests/unit/config_test.cpp — proflint.toml parsing: values, and errors naming file:line:column.
#include <gtest/gtest.h>

#include "engine/common/error.hpp"
#include "engine/config/config.hpp"

using namespace proflint;

TEST(Config, ReadsTensorCorePatternsAndKeyNode) {
  auto c = parse_config("[tensor_cores]\nuses = [\"my_hmma_kernel\"]\nnot = [\"my_fp32\"]\n[iterations]\nkey_node = \"train_step\"\n", "p.toml");
  ASSERT_EQ(c.tensor_core_patterns.size(), 2u);
  EXPECT_EQ(c.tensor_core_patterns[0].substring, "my_fp32");
  EXPECT_FALSE(c.tensor_core_patterns[0].uses_tensor_cores);
  EXPECT_EQ(c.tensor_core_patterns[1].substring, "my_hmma_kernel");
  EXPECT_TRUE(c.tensor_core_patterns[1].uses_tensor_cores);
  EXPECT_EQ(c.key_node.value_or(""), "train_step");
}

TEST(Config, UnknownKeyNamesFileLineColumn) {
  try {
    parse_config("[tensor_cores]\nuses = []\nusess = [\"x\"]\n", "proj/proflint.toml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "proj/proflint.toml:3:1: unknown key 'tensor_cores.usess' (known: not, uses)");
  }
}

TEST(Config, BadValueNamesPlace) {
  try {
    parse_config("[iterations]\nkey_node = 3\n", "c.toml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("c.toml:2:"), std::string::npos) << e.what();
  }
}

TEST(Config, SyntaxErrorNamesPlace) {
  try {
    parse_config("[tensor_cores\n", "s.toml");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("s.toml:1:", 0), 0u) << e.what();
  }
}

TEST(Config, DumpRoundTrips) {
  auto c = parse_config("[tensor_cores]\nuses = [\"a\\\"b\"]\n", "x.toml");
  auto again = parse_config(dump_config(c), "dump");
  ASSERT_EQ(again.tensor_core_patterns.size(), 1u);
  EXPECT_EQ(again.tensor_core_patterns[0].substring, "a\"b");
}
