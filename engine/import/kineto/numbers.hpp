// engine/import/kineto/numbers.hpp — exact conversions of Kineto number text (µs timestamps, ids).
//
// Kineto writes `ts`/`dur` in microseconds, as ints in old traces and as floats with three
// fraction digits (ns) in new ones. Epoch-scale values (1.6e15 µs) have 19 significant digits at
// ns precision, more than a double holds, so timestamps are converted from their TEXT, never
// through a double.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace proflint::kineto {

// "1419247333430.849" -> 1419247333430849 (ns). Accepts a JSON number, optionally quoted and
// surrounded by spaces: sign, integer part, up to any number of fraction digits (rounded half away
// from zero beyond the third) and an exponent. Returns nullopt for anything else (NaN, Infinity,
// empty text) and for values outside int64 nanoseconds.
std::optional<int64_t> us_text_to_ns(std::string_view text);

// A whole number as JSON text ("42", "-1", " 7 "; also "4.0" and "1e3" when they are integral).
// nullopt for text that is not a number or does not fit int64.
std::optional<int64_t> int_from_text(std::string_view text);

// Kineto ids that may be strings: "25738" -> 25738, "stream 7" -> 7, "stream 7 " -> 7. Text with
// no trailing number ("Spans", "PyTorch Profiler") gives nullopt.
std::optional<int64_t> id_from_text(std::string_view text);

}  // namespace proflint::kineto
