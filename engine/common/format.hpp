// engine/common/format.hpp — human formatting of durations, sizes and shares (pure functions).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace proflint {

// 1234 -> "1.23 µs", 1500000 -> "1.50 ms", 2500000000 -> "2.50 s" (3 significant digits).
std::string format_ns(int64_t ns);
// 1536 -> "1.5 KiB", 52428800 -> "50.0 MiB".
std::string format_bytes(int64_t bytes);
// A byte count measured as a number (a sampled value): NaN prints as 0, values beyond +-2^62
// saturate there instead of overflowing the conversion.
std::string format_bytes_of(double bytes);
// 0.4567 -> "45.7%".
std::string format_percent(double fraction);

// Every control character except line feed and tab (C0, DEL, and C1 as UTF-8 U+0080-U+009F)
// written as the visible text \u00XX, so a kernel name or rule text carrying an escape sequence
// cannot rewrite the user's terminal. In JSON output the same text is the JSON escape of that
// character, so JSON keeps its meaning. With `keep_color`, proflint's own colour codes (ESC '['
// digits/';' 'm', nothing else) are kept.
std::string escape_controls(std::string_view text, bool keep_color = false);

}  // namespace proflint
