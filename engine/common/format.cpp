// engine/common/format.cpp — see format.hpp.
#include "engine/common/format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace proflint {

std::string format_ns(int64_t ns) {
  double v = static_cast<double>(ns);
  double a = std::fabs(v);
  auto three = [](double x, const char* unit) {
    double ax = std::fabs(x);
    if (ax >= 100) return fmt::format("{:.0f} {}", x, unit);
    if (ax >= 10) return fmt::format("{:.1f} {}", x, unit);
    return fmt::format("{:.2f} {}", x, unit);
  };
  if (a < 1e3) return fmt::format("{} ns", ns);
  if (a < 1e6) return three(v / 1e3, "µs");
  if (a < 1e9) return three(v / 1e6, "ms");
  return three(v / 1e9, "s");
}

std::string format_bytes_of(double bytes) {
  constexpr double kLimit = 4611686018427387904.0;  // 2^62
  if (std::isnan(bytes)) bytes = 0;
  return format_bytes(static_cast<int64_t>(std::clamp(bytes, -kLimit, kLimit)));
}

std::string format_bytes(int64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (std::fabs(v) >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  if (u == 0) return fmt::format("{} B", bytes);
  return fmt::format("{:.1f} {}", v, units[u]);
}

std::string format_percent(double fraction) { return fmt::format("{:.1f}%", fraction * 100.0); }

std::string escape_controls(std::string_view text, bool keep_color) {
  auto is_control = [](unsigned char c) { return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f; };
  auto is_c1 = [&](size_t i) {
    return static_cast<unsigned char>(text[i]) == 0xC2 && i + 1 < text.size() &&
           static_cast<unsigned char>(text[i + 1]) >= 0x80 && static_cast<unsigned char>(text[i + 1]) <= 0x9F;
  };
  bool clean = true;
  for (size_t i = 0; i < text.size() && clean; ++i) clean = !is_control(static_cast<unsigned char>(text[i])) && !is_c1(i);
  if (clean) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == 0x1b && keep_color && i + 1 < text.size() && text[i + 1] == '[') {
      size_t j = i + 2;
      while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == ';')) ++j;
      if (j < text.size() && text[j] == 'm') {
        out.append(text.substr(i, j + 1 - i));
        i = j;
        continue;
      }
    }
    if (is_control(c)) {
      out += fmt::format("\\u{:04x}", c);
    } else if (is_c1(i)) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[i + 1]));
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace proflint
