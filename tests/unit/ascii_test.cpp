// ASCII case folding used by derivation's name tests (engine/common/ascii.hpp): the same answers
// as lower-casing a copy with std::tolower in the C locale and searching it, which it replaced.
#include "engine/common/ascii.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <random>
#include <string>

namespace proflint {
namespace {

// The old way: a copy lower-cased through std::tolower.
std::string lowered(std::string_view text) {
  std::string l(text);
  for (auto& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return l;
}

TEST(Ascii, FindsAWordInAnyCase) {
  EXPECT_TRUE(contains_ascii_nocase("Model WarmUp 3", "warmup"));
  EXPECT_TRUE(contains_ascii_nocase("WARM-UP", "warm-up"));
  EXPECT_TRUE(contains_ascii_nocase("train_step#12", "step"));
  EXPECT_FALSE(contains_ascii_nocase("warm start", "warmup"));
  EXPECT_FALSE(contains_ascii_nocase("", "step"));
  EXPECT_TRUE(contains_ascii_nocase("anything", ""));  // as std::string::find("")
  // Bytes outside ASCII are compared as they are: 'É' (UTF-8 C3 89) is not 'é' (C3 A9).
  EXPECT_FALSE(contains_ascii_nocase("\xC3\x89TAPE", "\xC3\xA9tape"));
  EXPECT_EQ(ascii_lower('Q'), 'q');
  EXPECT_EQ(ascii_lower('['), '[');
  EXPECT_EQ(ascii_lower('\xC9'), '\xC9');
}

TEST(Ascii, EqualsAWordInAnyCase) {
  EXPECT_TRUE(equals_ascii_nocase("Optimizer.Zero_Grad", "optimizer.zero_grad"));
  EXPECT_FALSE(equals_ascii_nocase("Optimizer.zero_grad#SGD", "optimizer.zero_grad"));
  EXPECT_FALSE(equals_ascii_nocase("optimizer", "optimizer.zero_grad"));
  EXPECT_TRUE(equals_ascii_nocase("", ""));
  EXPECT_FALSE(equals_ascii_nocase("\xC3\x89", "\xC3\xA9"));
}

TEST(Ascii, AgreesWithLowerCasingACopy) {
  std::mt19937 rng(11);
  const std::string alphabet = "sStTeEpPwWaArRmMuU-_ 09\xC3\x89";
  for (int n = 0; n < 20000; ++n) {
    std::string text(rng() % 14, ' ');
    for (auto& c : text) c = alphabet[rng() % alphabet.size()];
    for (std::string_view word : {"step", "warmup", "warm-up", "iter", "a"}) {
      const std::string l = lowered(text);
      ASSERT_EQ(contains_ascii_nocase(text, word), l.find(word) != std::string::npos) << text << " / " << word;
      ASSERT_EQ(equals_ascii_nocase(text, word), l == word) << text << " / " << word;
    }
  }
}

}  // namespace
}  // namespace proflint
