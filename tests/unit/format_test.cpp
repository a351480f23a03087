// tests/unit/format_test.cpp — human formatting of durations, sizes and shares.
#include <gtest/gtest.h>

#include "engine/common/format.hpp"

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

// Issue 20, defect 10: a terminal escape sequence in a kernel name reached the terminal raw.
TEST(Format, ControlCharactersAreEscapedVisibly) {
  EXPECT_EQ(escape_controls("plain µs text\n\tindented"), "plain µs text\n\tindented");
  EXPECT_EQ(escape_controls("a\x1b]0;title\x07z"), "a\\u001b]0;title\\u0007z");
  EXPECT_EQ(escape_controls("cr\rdel\x7f"), "cr\\u000ddel\\u007f");
  EXPECT_EQ(escape_controls("c1 \xc2\x9b" "2J \xc2\xa0nbsp"), "c1 \\u009b2J \xc2\xa0nbsp");  // U+00A0 is not a control
  EXPECT_EQ(escape_controls(std::string("nul\0x", 5)), "nul\\u0000x");
  // Colour codes survive only when asked for, and only the SGR form.
  EXPECT_EQ(escape_controls("\x1b[1;31mred\x1b[0m", true), "\x1b[1;31mred\x1b[0m");
  EXPECT_EQ(escape_controls("\x1b[1;31mred\x1b[0m", false), "\\u001b[1;31mred\\u001b[0m");
  EXPECT_EQ(escape_controls("\x1b[2J", true), "\\u001b[2J");
}
