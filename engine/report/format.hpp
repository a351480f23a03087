// engine/report/format.hpp — human formatting of durations, sizes and shares (pure functions).
#pragma once

#include <cstdint>
#include <string>

namespace proflint {

// 1234 -> "1.23 µs", 1500000 -> "1.50 ms", 2500000000 -> "2.50 s" (3 significant digits).
std::string format_ns(int64_t ns);
// 1536 -> "1.5 KiB", 52428800 -> "50.0 MiB".
std::string format_bytes(int64_t bytes);
// 0.4567 -> "45.7%".
std::string format_percent(double fraction);

}  // namespace proflint
