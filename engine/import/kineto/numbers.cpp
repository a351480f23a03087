// engine/import/kineto/numbers.cpp — exact text-to-integer conversions for Kineto numbers.
#include "engine/import/kineto/numbers.hpp"

#include <charconv>
#include <limits>

namespace proflint::kineto {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string_view trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') {
    s = s.substr(1, s.size() - 2);
    while (!s.empty() && space(s.front())) s.remove_prefix(1);
    while (!s.empty() && space(s.back())) s.remove_suffix(1);
  }
  return s;
}

// The decimal number `text` scaled by 10^scale, rounded half away from zero, as int64.
std::optional<int64_t> scaled_decimal(std::string_view text, int scale) {
  text = trim(text);
  if (text.empty()) return std::nullopt;
  bool negative = false;
  size_t i = 0;
  if (text[i] == '-') {
    negative = true;
    ++i;
  }
  // Digits of the mantissa (integer and fraction parts together) and where the point was.
  size_t int_begin = i;
  while (i < text.size() && is_digit(text[i])) ++i;
  size_t int_end = i;
  size_t frac_begin = i, frac_end = i;
  if (i < text.size() && text[i] == '.') {
    frac_begin = ++i;
    while (i < text.size() && is_digit(text[i])) ++i;
    frac_end = i;
  }
  if (int_begin == int_end && frac_begin == frac_end) return std::nullopt;
  int64_t exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) exp_negative = text[i++] == '-';
    if (i >= text.size() || !is_digit(text[i])) return std::nullopt;
    while (i < text.size() && is_digit(text[i])) {
      // Saturate: anything beyond a few hundred is overflow or zero anyway.
      if (exponent < 100000) exponent = exponent * 10 + (text[i] - '0');
      ++i;
    }
    if (exp_negative) exponent = -exponent;
  }
  if (i != text.size()) return std::nullopt;

  // value = digits × 10^(exponent + scale - fraction_digits)
  const int64_t shift = exponent + scale - static_cast<int64_t>(frac_end - frac_begin);
  auto digit_at = [&](size_t k) -> int {  // k-th mantissa digit, integer part first
    size_t n_int = int_end - int_begin;
    return k < n_int ? text[int_begin + k] - '0' : text[frac_begin + (k - n_int)] - '0';
  };
  const size_t n_digits = (int_end - int_begin) + (frac_end - frac_begin);
  // Digits that land left of the decimal point after shifting.
  const int64_t kept = static_cast<int64_t>(n_digits) + shift;

  unsigned __int128 acc = 0;
  const unsigned __int128 limit = static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max()) + (negative ? 1 : 0);
  int64_t take = std::min<int64_t>(kept, static_cast<int64_t>(n_digits));
  for (int64_t k = 0; k < take; ++k) {
    acc = acc * 10 + static_cast<unsigned>(digit_at(static_cast<size_t>(k)));
    if (acc > limit) return std::nullopt;
  }
  for (int64_t k = static_cast<int64_t>(n_digits); k < kept && acc != 0; ++k) {  // zeros from a positive shift
    acc *= 10;
    if (acc > limit) return std::nullopt;
  }
  // Round on the first dropped digit (half away from zero).
  if (kept >= 0 && kept < static_cast<int64_t>(n_digits) && digit_at(static_cast<size_t>(kept)) >= 5) {
    ++acc;
    if (acc > limit) return std::nullopt;
  }
  if (negative) {
    if (acc == 0) return 0;
    return static_cast<int64_t>(-static_cast<__int128>(acc));
  }
  return static_cast<int64_t>(acc);
}

}  // namespace

std::optional<int64_t> us_text_to_ns(std::string_view text) {
  // Fast path for what Kineto writes: up to 16 integer digits (epoch µs) and up to 3 fraction
  // digits; 19 digits fit a uint64. Everything else takes the general path.
  const char* p = text.data();
  const char* e = p + text.size();
  while (e > p && (e[-1] == ' ' || e[-1] == '\n' || e[-1] == '\r' || e[-1] == '\t')) --e;
  const char* int_begin = p;
  uint64_t v = 0;
  while (p < e && is_digit(*p) && p - int_begin < 17) v = v * 10 + static_cast<uint64_t>(*p++ - '0');
  size_t int_digits = static_cast<size_t>(p - int_begin);
  if (int_digits > 0 && int_digits <= 16) {
    int frac = 0;
    if (p < e && *p == '.') {
      ++p;
      while (p < e && is_digit(*p) && frac < 3) {
        v = v * 10 + static_cast<uint64_t>(*p++ - '0');
        ++frac;
      }
    }
    if (p == e) {
      for (; frac < 3; ++frac) v *= 10;
      if (v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return static_cast<int64_t>(v);
      return std::nullopt;
    }
  }
  return scaled_decimal(text, 3);
}

std::optional<int64_t> int_from_text(std::string_view text) {
  std::string_view t = trim(text);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec == std::errc() && end == t.data() + t.size()) return v;
  // Rare: 4.0 or 1e3 written for an integer. Integral values only.
  auto scaled = scaled_decimal(t, 0);
  if (!scaled) return std::nullopt;
  auto check = scaled_decimal(t, 3);
  if (!check || *check != *scaled * 1000) return std::nullopt;
  return scaled;
}

std::optional<int64_t> id_from_text(std::string_view text) {
  std::string_view t = trim(text);
  if (auto v = int_from_text(t)) return v;
  // "stream 7": take the trailing integer after a space.
  size_t end = t.size();
  size_t begin = end;
  while (begin > 0 && is_digit(t[begin - 1])) --begin;
  if (begin == end) return std::nullopt;
  if (begin > 0 && t[begin - 1] == '-') --begin;
  if (begin > 0 && t[begin - 1] != ' ') return std::nullopt;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(t.data() + begin, t.data() + end, v);
  if (ec != std::errc() || p != t.data() + end) return std::nullopt;
  return v;
}

}  // namespace proflint::kineto
