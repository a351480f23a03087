// engine/common/ascii.hpp — ASCII case folding without allocation or the C locale.
//
// Derivation tests every NVTX range and annotation name for a few words ("warmup", "step"); an
// nsys export may have 10^6 of them, most with a text of their own. Lower-casing a copy of each
// through std::tolower (a libc call per character) cost ~4% of the run on the 10^6-row export.
#pragma once

#include <algorithm>
#include <string_view>

namespace proflint {

constexpr char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// True when `text` contains `lower_word` (given in lower case) in any ASCII case.
constexpr bool contains_ascii_nocase(std::string_view text, std::string_view lower_word) {
  auto same = [](char a, char b) { return ascii_lower(a) == b; };
  return std::search(text.begin(), text.end(), lower_word.begin(), lower_word.end(), same) != text.end();
}

// True when `text` is `lower_word` (given in lower case) in any ASCII case.
constexpr bool equals_ascii_nocase(std::string_view text, std::string_view lower_word) {
  auto same = [](char a, char b) { return ascii_lower(a) == b; };
  return text.size() == lower_word.size() && std::equal(text.begin(), text.end(), lower_word.begin(), same);
}

}  // namespace proflint
