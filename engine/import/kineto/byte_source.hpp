// engine/import/kineto/byte_source.hpp — the bytes of a trace, plain or gunzipped, in chunks.
//
// The scanner pulls bytes through this interface so that memory stays bounded whatever the file
// size, and so that tests can feed it text without files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace proflint::kineto {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Up to `cap` bytes into `dst`; 0 only at the end of the data. Throws proflint::Error naming
  // the file when the data cannot be read (corrupt or truncated gzip).
  virtual size_t read(char* dst, size_t cap) = 0;
  // Bytes of the file consumed so far (compressed bytes for gzip): drives the progress display.
  virtual uint64_t file_bytes_read() const = 0;
  // Whether the bytes are inflated from gzip (which takes a core's share of its own).
  virtual bool inflates() const { return false; }
};

// In-memory text (tests, small values).
class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string text) : text_(std::move(text)) {}
  size_t read(char* dst, size_t cap) override;
  uint64_t file_bytes_read() const override { return pos_; }

 private:
  std::string text_;
  size_t pos_ = 0;
};

// Which library inflates gzip: `best` is ISA-L's igzip when the build has it (CMake option
// PROFLINT_WITH_ISAL), else zlib; `zlib` forces zlib (the benchmark's and the tests' reference).
enum class Inflater { best, zlib };
// The library `inflater` resolves to in this build: "isa-l igzip" or "zlib".
const char* inflater_name(Inflater inflater = Inflater::best);

// Opens `path`; gzip (by its magic bytes, not the name) is inflated on the fly, including files
// made of several concatenated gzip members. Throws proflint::Error naming the file.
std::unique_ptr<ByteSource> open_byte_source(const std::string& path, Inflater inflater = Inflater::best);

}  // namespace proflint::kineto
