// tests/unit/wrap_test.cpp — text wrapping for the 80-column report.
#include <gtest/gtest.h>

#include "engine/report/findings_report.hpp"

TEST(WrapText, WrapsAtWidthWithIndent) {
  std::string w = proflint::wrap_text("aaaa bbbb cccc dddd", 14, 4);
  EXPECT_EQ(w, "aaaa bbbb\n    cccc dddd");
}

TEST(WrapText, CountsUtf8AsOneColumn) {
  std::string w = proflint::wrap_text("µs µs µs", 8, 0);
  EXPECT_EQ(w, "µs µs µs");
}

TEST(WrapText, LongWordStaysWhole) {
  EXPECT_EQ(proflint::wrap_text("x averyveryverylongword y", 10, 2), "x\n  averyveryverylongword\n  y");
}
