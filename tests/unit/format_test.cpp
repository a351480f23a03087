// tests/unit/format_test.cpp — human formatting of durations, sizes and shares.
#include <gtest/gtest.h>

#include "engine/report/format.hpp"

using namespace proflint;

TEST(Format, Durations) {
  EXPECT_EQ(format_ns(0), "0 ns");
  EXPECT_EQ(format_ns(999), "999 ns");
  EXPECT_EQ(format_ns(1234), "1.23 µs");
  EXPECT_EQ(format_ns(12345), "12.3 µs");
  EXPECT_EQ(format_ns(176468000), "176 ms");
  EXPECT_EQ(format_ns(2500000000), "2.50 s");
}

TEST(Format, Bytes) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(52428800), "50.0 MiB");
}

TEST(Format, Percent) {
  EXPECT_EQ(format_percent(0.4567), "45.7%");
  EXPECT_EQ(format_percent(1.0), "100.0%");
}
