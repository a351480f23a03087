// engine/export/json_text.hpp — a growing buffer of JSON text for exporters that stream large
// documents: values are appended as they are read, with no document tree in memory.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "engine/common/utf8.hpp"

namespace proflint::exporter {

class JsonText {
 public:
  JsonText& raw(std::string_view s) {
    buf_.append(s);
    return *this;
  }
  JsonText& num(int64_t v) {
    char tmp[24];
    int n = std::snprintf(tmp, sizeof tmp, "%lld", static_cast<long long>(v));
    buf_.append(tmp, static_cast<size_t>(n));
    return *this;
  }
  // A finite double (NaN and infinities, which JSON cannot hold, become null).
  JsonText& real(double v) {
    if (v != v || v > 1.7e308 || v < -1.7e308) return raw("null");
    char tmp[32];
    int n = std::snprintf(tmp, sizeof tmp, "%.17g", v);
    buf_.append(tmp, static_cast<size_t>(n));
    return *this;
  }
  // Nanoseconds as exact decimal microseconds ("1234.567"), the unit of Chrome trace `ts`/`dur`.
  JsonText& us(int64_t ns) {
    uint64_t mag = ns < 0 ? uint64_t(0) - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
    char tmp[32];
    int n = std::snprintf(tmp, sizeof tmp, "%s%llu", ns < 0 ? "-" : "", static_cast<unsigned long long>(mag / 1000));
    buf_.append(tmp, static_cast<size_t>(n));
    if (uint64_t frac = mag % 1000) {
      n = std::snprintf(tmp, sizeof tmp, ".%03llu", static_cast<unsigned long long>(frac));
      buf_.append(tmp, static_cast<size_t>(n));
    }
    return *this;
  }
  // A JSON string: quotes, backslashes and control characters escaped, invalid UTF-8 repaired
  // (each bad byte becomes U+FFFD), so the file parses whatever the profile held.
  JsonText& str(std::string_view s) {
    buf_.push_back('"');
    for (size_t i = 0; i < s.size();) {
      unsigned char c = static_cast<unsigned char>(s[i]);
      if (c == '"' || c == '\\') {
        buf_.push_back('\\');
        buf_.push_back(static_cast<char>(c));
        ++i;
      } else if (c < 0x20 || c == 0x7f) {
        char tmp[8];
        std::snprintf(tmp, sizeof tmp, "\\u%04x", c);
        buf_.append(tmp);
        ++i;
      } else if (c < 0x80) {
        buf_.push_back(static_cast<char>(c));
        ++i;
      } else if (size_t n = utf8_sequence(s, i)) {
        buf_.append(s.substr(i, n));
        i += n;
      } else {
        buf_.append("\xEF\xBF\xBD");
        ++i;
      }
    }
    buf_.push_back('"');
    return *this;
  }
  size_t size() const { return buf_.size(); }
  const char* data() const { return buf_.data(); }
  void clear() { buf_.clear(); }

 private:
  std::string buf_;
};

}  // namespace proflint::exporter
