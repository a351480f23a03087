// tests/support/trickle_source.hpp — a Kineto ByteSource over text in memory that hands out at
// most `step` bytes per read, so every element straddles read boundaries (scanner tests).
#pragma once

#include <algorithm>
#include <cstring>
#include <string>

#include "engine/import/kineto/byte_source.hpp"

namespace proflint::testing {

class TrickleSource final : public kineto::ByteSource {
 public:
  TrickleSource(std::string text, size_t step) : text_(std::move(text)), step_(step) {}
  size_t read(char* dst, size_t cap) override {
    size_t n = std::min({cap, step_, text_.size() - pos_});
    std::memcpy(dst, text_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  uint64_t file_bytes_read() const override { return pos_; }

 private:
  std::string text_;
  size_t step_;
  size_t pos_ = 0;
};

}  // namespace proflint::testing
