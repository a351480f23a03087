// engine/report/format.cpp — see format.hpp.
#include "engine/report/format.hpp"

#include <fmt/format.h>

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

}  // namespace proflint
