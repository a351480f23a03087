// engine/import/kineto/trace_scanner.cpp — the streaming top-level scanner of Chrome-trace JSON.
#include "engine/import/kineto/trace_scanner.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "engine/common/error.hpp"

namespace proflint::kineto {

namespace {

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// First '"' or '\\' in [p, e), or e. Most bytes of an event are inside strings, so this is the
// scanner's hot loop.
inline const char* find_quote_or_backslash(const char* p, const char* e) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  while (e - p >= 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    int m = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
    if (m) return p + __builtin_ctz(static_cast<unsigned>(m));
    p += 16;
  }
#endif
  while (p < e && *p != '"' && *p != '\\') ++p;
  return p;
}

// First '"', '{', '}', '[' or ']' in [p, e), or e. (c | 0x20) folds '[' onto '{' and ']' onto '}'.
inline const char* find_structural(const char* p, const char* e) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i open = _mm_set1_epi8('{');
  const __m128i close = _mm_set1_epi8('}');
  const __m128i fold = _mm_set1_epi8(0x20);
  while (e - p >= 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    __m128i f = _mm_or_si128(v, fold);
    __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_or_si128(_mm_cmpeq_epi8(f, open), _mm_cmpeq_epi8(f, close)));
    int m = _mm_movemask_epi8(hit);
    if (m) return p + __builtin_ctz(static_cast<unsigned>(m));
    p += 16;
  }
#endif
  while (p < e) {
    char c = *p;
    char f = static_cast<char>(c | 0x20);
    if (c == '"' || f == '{' || f == '}') return p;
    ++p;
  }
  return p;
}

// Newlines in [p, e): the line of a parse error is counted as bytes leave the buffer.
inline uint64_t count_newlines(const char* p, const char* e) {
  uint64_t n = 0;
#if defined(__SSE2__)
  // Each byte lane counts its newlines (a match is -1: subtracting it adds 1) for at most 255
  // blocks, then the lanes are summed. A popcount of the match mask would be a libgcc call
  // without -mpopcnt (the build targets plain x86-64): 1.3% of the tiled trace's time.
  const __m128i newline = _mm_set1_epi8('\n');
  const __m128i zero = _mm_setzero_si128();
  while (e - p >= 16) {
    __m128i lanes = zero;
    for (int blocks = 0; blocks < 255 && e - p >= 16; ++blocks, p += 16)
      lanes = _mm_sub_epi8(lanes, _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), newline));
    __m128i sums = _mm_sad_epu8(lanes, zero);  // two 64-bit sums of eight lanes each
    n += static_cast<uint64_t>(_mm_cvtsi128_si64(sums)) + static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums)));
  }
#endif
  for (; p < e; ++p) n += *p == '\n';
  return n;
}

// ---- 64-byte block classification, after simdjson's stage 1 ----
// Events are small objects full of short strings; finding their end one string at a time costs
// a call per key. Classifying 64 bytes at once (quotes, backslashes, brackets) and walking only
// the few brackets outside strings is several times faster.

struct BlockMasks {
  uint64_t quote = 0, backslash = 0, open = 0, close = 0;
};

inline BlockMasks classify_block(const char* p) {
  BlockMasks m;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i open = _mm_set1_epi8('{');
  const __m128i close = _mm_set1_epi8('}');
  const __m128i fold = _mm_set1_epi8(0x20);
  for (int i = 0; i < 4; ++i) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
    __m128i f = _mm_or_si128(v, fold);  // '[' -> '{', ']' -> '}'
    const int shift = 16 * i;
    m.quote |= static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)))) << shift;
    m.backslash |= static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, backslash)))) << shift;
    m.open |= static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(f, open)))) << shift;
    m.close |= static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(f, close)))) << shift;
  }
#else
  for (int i = 0; i < 64; ++i) {
    char c = p[i];
    char f = static_cast<char>(c | 0x20);
    uint64_t bit = uint64_t{1} << i;
    if (c == '"') m.quote |= bit;
    if (c == '\\') m.backslash |= bit;
    if (f == '{') m.open |= bit;
    if (f == '}') m.close |= bit;
  }
#endif
  return m;
}

// Bits of characters escaped by a backslash; `prev_escaped` carries a trailing odd run of
// backslashes into the next block (simdjson's branchless odd-run trick).
inline uint64_t escaped_chars(uint64_t backslash, uint64_t& prev_escaped) {
  backslash &= ~prev_escaped;
  uint64_t follows_escape = backslash << 1 | prev_escaped;
  const uint64_t even_bits = 0x5555555555555555ull;
  uint64_t odd_sequence_starts = backslash & ~even_bits & ~follows_escape;
  uint64_t sequences_starting_on_even_bits = 0;
  prev_escaped = __builtin_add_overflow(odd_sequence_starts, backslash, &sequences_starting_on_even_bits) ? 1 : 0;
  uint64_t invert_mask = sequences_starting_on_even_bits << 1;
  return (even_bits ^ invert_mask) & follows_escape;
}

// Inclusive prefix XOR: bit i = xor of bits 0..i (marks the inside of strings from quotes).
inline uint64_t prefix_xor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

class Scanner {
 public:
  Scanner(ByteSource& source, const std::string& path, ScanHandler& handler, ScanLimits limits)
      : source_(source), path_(path), handler_(handler), limits_(limits) {
    cap_ = std::max<size_t>(limits_.initial_buffer, 4096);
    buf_.resize(cap_ + kEventPadding);
  }

  ScanResult run() {
    skip_bom();
    if (!skip_ws()) fail("no JSON found: expected a Chrome trace object {\"traceEvents\": [...]} or an array of events");
    char c = buf_[pos_];
    if (c == '[') {
      result_.shape = TopShape::array;
      ++pos_;
      scan_events("the top-level array");
    } else if (c == '{') {
      result_.shape = TopShape::object;
      ++pos_;
      scan_object();
    } else {
      fail("not JSON: expected '{' or '[' at the start of a Chrome trace");
    }
    result_.bytes = base_ + pos_;
    // Whitespace and NUL padding after the closing bracket are tolerated (some tools append
    // them); anything else (a second concatenated trace, garbage) is reported, not read.
    for (;;) {
      if (pos_ == end_ && !more()) break;
      if (is_space(buf_[pos_]) || buf_[pos_] == '\0') {
        ++pos_;
        continue;
      }
      result_.trailing_data_at = base_ + pos_;
      break;
    }
    return result_;
  }

 private:
  [[noreturn]] void fail(const std::string& what) { throw input_error(path_, place(), what); }
  [[noreturn]] void truncated(const char* inside) {
    throw input_error(path_, place(), std::string("file ends inside ") + inside + " (truncated?): expected the rest of the JSON");
  }
  // "byte N (line L, column C)" of pos_ (of the decompressed text for gzip). Lines and columns
  // count from 1, columns in bytes.
  std::string place() const {
    const char* b = buf_.data();
    uint64_t line = lines_dropped_ + count_newlines(b, b + pos_) + 1;
    uint64_t line_start = line_start_dropped_;
    for (size_t i = pos_; i > 0; --i)
      if (b[i - 1] == '\n') {
        line_start = base_ + i;
        break;
      }
    return "byte " + std::to_string(base_ + pos_) + " (line " + std::to_string(line) + ", column " +
           std::to_string(base_ + pos_ - line_start + 1) + ")";
  }

  // Makes at least one more byte available at pos_; false at the end of the input.
  bool more() { return pos_ < end_ || fill(); }

  // Makes at least `n` bytes available at pos_; false when the input ends first.
  bool more_bytes(size_t n) {
    while (end_ - pos_ < n)
      if (!fill()) return false;
    return true;
  }

  // Reads more input after end_. Bytes before pos_ are dropped, or before mark_ while an event
  // or wanted value is being captured; a capture that outgrows the buffer doubles it up to the
  // limit, then is abandoned (capture_overflow_) and the scan goes on without buffering it.
  bool fill() {
    if (eof_) return false;
    if (capturing_ && end_ - mark_ >= cap_ / 2) {
      if (cap_ >= limits_.max_value + 4096) {
        capture_overflow_ = true;
        capturing_ = false;
      } else {
        cap_ *= 2;
        buf_.resize(cap_ + kEventPadding);
      }
    }
    size_t keep = capturing_ ? mark_ : pos_;
    if (keep > 0) {
      if (uint64_t n = count_newlines(buf_.data(), buf_.data() + keep)) {
        lines_dropped_ += n;
        const void* last = memrchr(buf_.data(), '\n', keep);
        line_start_dropped_ = base_ + static_cast<uint64_t>(static_cast<const char*>(last) - buf_.data()) + 1;
      }
      std::memmove(buf_.data(), buf_.data() + keep, end_ - keep);
      base_ += keep;
      end_ -= keep;
      pos_ -= keep;
      if (capturing_) mark_ -= keep;
    }
    size_t n = source_.read(buf_.data() + end_, cap_ - end_);
    if (n == 0) {
      eof_ = true;
      return false;
    }
    end_ += n;
    handler_.on_source_position(source_.file_bytes_read());
    return true;
  }

  void skip_bom() {
    more_bytes(3);
    if (end_ - pos_ >= 3 && static_cast<unsigned char>(buf_[pos_]) == 0xEF && static_cast<unsigned char>(buf_[pos_ + 1]) == 0xBB &&
        static_cast<unsigned char>(buf_[pos_ + 2]) == 0xBF)
      pos_ += 3;
  }

  // Skips whitespace; false at the end of the input.
  bool skip_ws() {
    for (;;) {
      if (pos_ == end_ && !more()) return false;
      while (pos_ < end_ && is_space(buf_[pos_])) ++pos_;
      if (pos_ < end_) return true;
    }
  }

  // pos_ just after an opening quote; moves past the closing quote. false at end of input.
  bool skip_string_body() {
    for (;;) {
      if (pos_ == end_ && !more()) return false;
      const char* b = buf_.data();
      const char* p = find_quote_or_backslash(b + pos_, b + end_);
      pos_ = static_cast<size_t>(p - b);
      if (pos_ == end_) continue;
      if (*p == '"') {
        ++pos_;
        return true;
      }
      ++pos_;  // the backslash; the escaped byte follows, possibly after a refill
      if (pos_ == end_ && !more()) return false;
      ++pos_;
    }
  }

  // pos_ at '{' or '['; moves past the matching close. Bracket kinds are not matched against
  // each other: the event parser validates events, and a mismatch elsewhere cannot hurt.
  bool skip_composite() {
    uint64_t depth = 0;
    uint64_t prev_escaped = 0, prev_in_string = 0;  // carried from block to block
    alignas(16) char tail[64];
    for (;;) {
      // A full block when possible; at the very end of the input, a space-padded copy.
      if (end_ - pos_ < 64 && !more_bytes(64)) {
        if (pos_ == end_) return false;
        std::memset(tail, ' ', sizeof tail);
        std::memcpy(tail, buf_.data() + pos_, end_ - pos_);
        if (walk_block(tail, depth, prev_escaped, prev_in_string)) return true;
        pos_ = end_;
        return false;
      }
      if (walk_block(buf_.data() + pos_, depth, prev_escaped, prev_in_string)) return true;
      pos_ += 64;
    }
  }

  // Classifies the 64 bytes at `p` (which start at pos_); true, with pos_ just past it, when the
  // bracket closing depth 0 is inside.
  bool walk_block(const char* p, uint64_t& depth, uint64_t& prev_escaped, uint64_t& prev_in_string) {
    BlockMasks m = classify_block(p);
    uint64_t escaped = escaped_chars(m.backslash, prev_escaped);
    uint64_t quotes = m.quote & ~escaped;
    uint64_t in_string = prefix_xor(quotes) ^ prev_in_string;
    prev_in_string = static_cast<uint64_t>(static_cast<int64_t>(in_string) >> 63);
    uint64_t brackets = (m.open | m.close) & ~in_string;
    while (brackets) {
      int i = __builtin_ctzll(brackets);
      brackets &= brackets - 1;
      if ((m.open >> i) & 1) {
        ++depth;
      } else if (--depth == 0) {
        pos_ += static_cast<size_t>(i) + 1;
        return true;
      }
    }
    return false;
  }

  // A number, true, false, null (or any other bare word): up to a delimiter.
  bool skip_scalar() {
    for (;;) {
      if (pos_ == end_ && !more()) return true;  // a scalar may end the input
      while (pos_ < end_) {
        char c = buf_[pos_];
        if (c == ',' || c == '}' || c == ']' || is_space(c)) return true;
        ++pos_;
      }
    }
  }

  // Skips one value at pos_. false when the input ends inside it.
  bool skip_value() {
    char c = buf_[pos_];
    if (c == '{' || c == '[') return skip_composite();
    if (c == '"') {
      ++pos_;
      return skip_string_body();
    }
    size_t before = base_ + pos_;
    skip_scalar();
    if (base_ + pos_ == before) fail(std::string("expected a JSON value, found '") + c + "'");
    return true;
  }

  void begin_capture() {
    capturing_ = true;
    capture_overflow_ = false;
    mark_ = pos_;
  }

  // Reads a top-level key (pos_ at its opening quote) into key_, truncated at 256 bytes.
  void read_key() {
    key_.clear();
    ++pos_;
    for (;;) {
      if (pos_ == end_ && !more()) truncated("a key of the top-level object");
      char c = buf_[pos_++];
      if (c == '"') return;
      if (c == '\\') {
        if (pos_ == end_ && !more()) truncated("a key of the top-level object");
        c = buf_[pos_++];
      }
      if (key_.size() < 256) key_.push_back(c);
    }
  }

  void scan_object() {
    if (!skip_ws()) truncated("the top-level object");
    if (buf_[pos_] == '}') {
      ++pos_;
      return;
    }
    for (;;) {
      if (buf_[pos_] != '"') fail("expected a key (a string) in the top-level object");
      read_key();
      if (!skip_ws()) truncated("the top-level object");
      if (buf_[pos_] != ':') fail("expected ':' after the key \"" + key_ + "\"");
      ++pos_;
      if (!skip_ws()) truncated("the top-level object");
      if (key_ == "traceEvents") {
        if (buf_[pos_] != '[') fail("traceEvents is not an array: expected '['");
        ++pos_;
        result_.has_trace_events = true;
        scan_events("traceEvents");
      } else if (handler_.wants_top_level(key_)) {
        uint64_t offset = base_ + pos_;
        begin_capture();
        if (!skip_value()) truncated(("the top-level value \"" + key_ + "\"").c_str());
        capturing_ = false;
        if (capture_overflow_)
          handler_.on_oversized(key_, offset, base_ + pos_ - offset);
        else
          handler_.on_top_level(key_, std::string_view(buf_.data() + mark_, pos_ - mark_), offset);
      } else {
        if (!skip_value()) truncated(("the top-level value \"" + key_ + "\"").c_str());
      }
      if (!skip_ws()) truncated("the top-level object");
      char c = buf_[pos_];
      if (c == '}') {
        ++pos_;
        return;
      }
      if (c != ',') fail("expected ',' or '}' in the top-level object");
      ++pos_;
      if (!skip_ws()) truncated("the top-level object");
    }
  }

  void scan_events(const char* where) {
    if (!skip_ws()) truncated(where);
    if (buf_[pos_] == ']') {
      ++pos_;
      return;
    }
    for (;;) {
      uint64_t offset = base_ + pos_;
      char c = buf_[pos_];
      if (c == ',' || c == ']' || c == '}' || c == ':') fail(std::string("expected an event, found '") + c + "'");
      begin_capture();
      if (!skip_value()) truncated(where);
      capturing_ = false;
      ++result_.elements;
      if (capture_overflow_)
        handler_.on_oversized("event", offset, base_ + pos_ - offset);
      else
        handler_.on_event(buf_.data() + mark_, pos_ - mark_, offset);
      if (!skip_ws()) truncated(where);
      c = buf_[pos_];
      if (c == ']') {
        ++pos_;
        return;
      }
      if (c != ',') fail(std::string("expected ',' or ']' after an event in ") + where);
      ++pos_;
      if (!skip_ws()) truncated(where);
      if (buf_[pos_] == ']') {  // trailing comma: tolerated
        ++pos_;
        return;
      }
    }
  }

  ByteSource& source_;
  const std::string& path_;
  ScanHandler& handler_;
  ScanLimits limits_;
  std::vector<char> buf_;
  size_t cap_ = 0;
  size_t pos_ = 0, end_ = 0, mark_ = 0;
  uint64_t base_ = 0;  // input offset of buf_[0]
  uint64_t lines_dropped_ = 0;       // newlines in the input before buf_[0]
  uint64_t line_start_dropped_ = 0;  // input offset just after the last of them (0: none)
  bool eof_ = false;
  bool capturing_ = false, capture_overflow_ = false;
  std::string key_;
  ScanResult result_;
};

}  // namespace

ScanResult scan_trace(ByteSource& source, const std::string& path, ScanHandler& handler, ScanLimits limits) {
  Scanner scanner(source, path, handler, limits);
  return scanner.run();
}

}  // namespace proflint::kineto
