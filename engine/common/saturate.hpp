// engine/common/saturate.hpp — integer arithmetic on numbers read from files, which may be anything:
// conversions and sums that stop at the int64 limits instead of overflowing (undefined in C++).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace proflint {

// `total += v`, held at INT64_MAX / INT64_MIN where the exact sum would not fit.
inline void add_saturating(int64_t& total, int64_t v) {
  if (__builtin_add_overflow(total, v, &total))
    total = v < 0 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
}

// `v` truncated toward zero; beyond the int64 range it is held at the limit, NaN gives 0.
inline int64_t saturate_to_int64(double v) {
  constexpr double kTwo63 = 9223372036854775808.0;  // 2^63, exact in a double
  if (std::isnan(v)) return 0;
  if (v >= kTwo63) return std::numeric_limits<int64_t>::max();
  if (v < -kTwo63) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

}  // namespace proflint
