// engine/common/utf8.hpp — checking and repairing UTF-8 text.
//
// Every emitter (JSON, SARIF, markdown, text) expects valid UTF-8, and nlohmann::json refuses to
// serialise anything else. Text from outside the program (profile strings, Lua rules, tampered
// stores) is repaired where it enters: each invalid byte becomes U+FFFD.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace proflint {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is invalid (overlong forms,
// surrogates and code points above U+10FFFF are invalid).
inline size_t utf8_sequence(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint32_t cp = 0;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  static const uint32_t min_for_length[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_for_length[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

inline bool is_valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    size_t n = utf8_sequence(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// `text` with each byte that does not start a valid sequence replaced by U+FFFD.
inline std::string sanitize_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t n = utf8_sequence(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

// Repairs `text` in place; true when it changed.
inline bool repair_utf8(std::string& text) {
  if (is_valid_utf8(text)) return false;
  text = sanitize_utf8(text);
  return true;
}

}  // namespace proflint
