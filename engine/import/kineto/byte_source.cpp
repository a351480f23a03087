// engine/import/kineto/byte_source.cpp — plain-file and gzip-inflate byte sources.
//
// gzip is inflated by ISA-L's igzip where the build found it (PROFLINT_HAVE_ISAL: ~2-3x zlib's
// speed on x86-64, its kernels picked at run time for the CPU), else by zlib. Both accept the
// same files (one or several concatenated members, zero padding after the last) and refuse the
// same ones (truncated, corrupt, bad CRC), with the same messages.
#include "engine/import/kineto/byte_source.hpp"

#include <zlib.h>
#if PROFLINT_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/common/error.hpp"

namespace proflint::kineto {

size_t MemorySource::read(char* dst, size_t cap) {
  size_t n = std::min(cap, text_.size() - pos_);
  std::memcpy(dst, text_.data() + pos_, n);
  pos_ += n;
  return n;
}

namespace {

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

class FileSource final : public ByteSource {
 public:
  FileSource(std::string path, FilePtr file) : path_(std::move(path)), file_(std::move(file)) {}
  size_t read(char* dst, size_t cap) override {
    size_t n = std::fread(dst, 1, cap, file_.get());
    if (n == 0 && std::ferror(file_.get()))
      throw input_error(path_, "byte " + std::to_string(pos_), std::string("read failed: ") + std::strerror(errno));
    pos_ += n;
    return n;
  }
  uint64_t file_bytes_read() const override { return pos_; }

 private:
  std::string path_;
  FilePtr file_;
  uint64_t pos_ = 0;
};

bool only_zeros(const unsigned char* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != 0) return false;
  return true;
}

std::string truncated_gzip() { return "gzip data ends early (file truncated?): expected the rest of the compressed stream"; }

// Where a gzip stream is broken, in proflint's words: zlib and ISA-L each have their own texts
// for the same faults, naming their internals ("invalid distance too far back").
enum class GzipFault { header, check, data };

std::string corrupt_gzip(GzipFault fault, bool after_member) {
  if (fault == GzipFault::header && after_member)
    return "corrupt gzip data: the bytes after the end of the gzip stream are neither another gzip member nor zero "
           "padding: expected the file to end with the gzip stream";
  switch (fault) {
    case GzipFault::header:
      return "corrupt gzip data: the gzip header is not valid (compression method or flags): expected a gzip stream "
             "as gzip or Python's gzip module write it";
    case GzipFault::check:
      return "corrupt gzip data: the CRC-32 or length at the end of a gzip member does not match the inflated data "
             "(the file was changed after it was compressed): expected the checksum gzip wrote";
    case GzipFault::data:
      break;
  }
  return "corrupt gzip data: the compressed (deflate) data is damaged: expected a valid deflate stream";
}

// zlib's messages for header faults name the header, method, flags or window; its trailer
// faults are "incorrect data check" and "incorrect length check".
GzipFault zlib_fault(const char* msg) {
  std::string_view m = msg ? msg : "";
  if (m == "incorrect data check" || m == "incorrect length check") return GzipFault::check;
  for (std::string_view word : {"header", "method", "flags", "window size"})
    if (m.find(word) != std::string_view::npos) return GzipFault::header;
  return GzipFault::data;
}

// zlib's inflate in chunks (windowBits 15+32: gzip or zlib header, detected by zlib itself).
class GzipSource final : public ByteSource {
 public:
  GzipSource(std::string path, FilePtr file) : path_(std::move(path)), file_(std::move(file)), in_(1 << 20) {
    std::memset(&zs_, 0, sizeof zs_);
    if (inflateInit2(&zs_, 15 + 32) != Z_OK) throw Error("internal: zlib inflateInit2 failed");
  }
  ~GzipSource() override { inflateEnd(&zs_); }

  size_t read(char* dst, size_t cap) override {
    if (done_ || cap == 0) return 0;
    const size_t want = std::min<size_t>(cap, 1u << 30);
    zs_.next_out = reinterpret_cast<Bytef*>(dst);
    zs_.avail_out = static_cast<uInt>(want);
    while (zs_.avail_out > 0) {
      if (zs_.avail_in == 0) {
        size_t n = std::fread(in_.data(), 1, in_.size(), file_.get());
        if (n == 0) {
          if (std::ferror(file_.get()))
            throw input_error(path_, "byte " + std::to_string(consumed()), std::string("read failed: ") + std::strerror(errno));
          if (!member_ended_)
            throw input_error(path_, "byte " + std::to_string(consumed()), truncated_gzip());
          done_ = true;
          break;
        }
        file_pos_ += n;
        zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
        zs_.avail_in = static_cast<uInt>(n);
      }
      if (member_ended_) {
        // Another gzip member follows (concatenated .gz), or trailing garbage we tolerate only
        // when it is zero padding.
        if (only_zeros(zs_.next_in, zs_.avail_in)) {
          zs_.avail_in = 0;
          continue;
        }
        inflateReset(&zs_);
        member_ended_ = false;
        after_member_ = true;
      }
      int rc = inflate(&zs_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        member_ended_ = true;
        continue;
      }
      if (rc == Z_BUF_ERROR && zs_.avail_in == 0) continue;  // needs more input
      if (rc != Z_OK) {
        throw input_error(path_, "byte " + std::to_string(consumed()), corrupt_gzip(zlib_fault(zs_.msg), after_member_));
      }
    }
    return want - zs_.avail_out;
  }
  uint64_t file_bytes_read() const override { return consumed(); }
  bool inflates() const override { return true; }

 private:
  uint64_t consumed() const { return file_pos_ - zs_.avail_in; }

  std::string path_;
  FilePtr file_;
  std::vector<char> in_;
  z_stream zs_;
  uint64_t file_pos_ = 0;
  bool member_ended_ = false;
  bool after_member_ = false;  // a member ended and more bytes followed
  bool done_ = false;
};

#if PROFLINT_HAVE_ISAL
// ISA-L's igzip inflate, with the gzip header and CRC-32/size trailer checked by ISA-L itself
// (ISAL_GZIP). Same chunked protocol, member handling and errors as GzipSource.
class IsalGzipSource final : public ByteSource {
 public:
  IsalGzipSource(std::string path, FilePtr file)
      : path_(std::move(path)), file_(std::move(file)), in_(1 << 20), st_(std::make_unique<inflate_state>()) {
    start_member();
  }

  size_t read(char* dst, size_t cap) override {
    if (done_ || cap == 0) return 0;
    const size_t want = std::min<size_t>(cap, 1u << 30);
    st_->next_out = reinterpret_cast<uint8_t*>(dst);
    st_->avail_out = static_cast<uint32_t>(want);
    while (st_->avail_out > 0) {
      if (st_->avail_in == 0) {
        size_t n = std::fread(in_.data(), 1, in_.size(), file_.get());
        if (n == 0) {
          if (std::ferror(file_.get()))
            throw input_error(path_, "byte " + std::to_string(consumed()), std::string("read failed: ") + std::strerror(errno));
          if (!member_ended_) throw input_error(path_, "byte " + std::to_string(consumed()), truncated_gzip());
          done_ = true;
          break;
        }
        file_pos_ += n;
        st_->next_in = reinterpret_cast<uint8_t*>(in_.data());
        st_->avail_in = static_cast<uint32_t>(n);
      }
      if (member_ended_) {
        if (only_zeros(st_->next_in, st_->avail_in)) {
          st_->avail_in = 0;
          continue;
        }
        // Another member: a fresh state that carries on with the same input and output.
        uint8_t *next_in = st_->next_in, *next_out = st_->next_out;
        uint32_t avail_in = st_->avail_in, avail_out = st_->avail_out;
        start_member();
        after_member_ = true;
        st_->next_in = next_in;
        st_->avail_in = avail_in;
        st_->next_out = next_out;
        st_->avail_out = avail_out;
      }
      const uint32_t in_before = st_->avail_in, out_before = st_->avail_out;
      int rc = isal_inflate(st_.get());
      if (rc < 0) throw input_error(path_, "byte " + std::to_string(consumed()), corrupt_gzip(fault_of(rc), after_member_));
      if (st_->block_state == ISAL_BLOCK_FINISH) {
        member_ended_ = true;
        continue;
      }
      // No progress with input left and room for output cannot happen on valid data; refuse
      // rather than spin.
      if (st_->avail_in == in_before && st_->avail_out == out_before && st_->avail_in > 0)
        throw input_error(path_, "byte " + std::to_string(consumed()), corrupt_gzip(GzipFault::data, after_member_));
    }
    return want - st_->avail_out;
  }
  uint64_t file_bytes_read() const override { return consumed(); }
  bool inflates() const override { return true; }

 private:
  void start_member() {
    isal_inflate_init(st_.get());
    st_->crc_flag = ISAL_GZIP;
    member_ended_ = false;
  }
  uint64_t consumed() const { return file_pos_ - st_->avail_in; }
  static GzipFault fault_of(int rc) {
    switch (rc) {
      case ISAL_INVALID_WRAPPER:
      case ISAL_UNSUPPORTED_METHOD: return GzipFault::header;
      case ISAL_INCORRECT_CHECKSUM: return GzipFault::check;
      default: return GzipFault::data;
    }
  }

  std::string path_;
  FilePtr file_;
  std::vector<char> in_;
  std::unique_ptr<inflate_state> st_;
  uint64_t file_pos_ = 0;
  bool member_ended_ = false;
  bool after_member_ = false;
  bool done_ = false;
};
#endif

// Inflates on a second thread, a few 1 MiB chunks ahead of the reader, so that decompression
// overlaps parsing (gzip is the floor of a .json.gz: ~370 MiB/s of JSON on one core). Errors of the
// inner source reach the reader after the data before them, as they would without the thread.
class ReadAheadSource final : public ByteSource {
 public:
  explicit ReadAheadSource(std::unique_ptr<ByteSource> inner) : inner_(std::move(inner)) {
    worker_ = std::thread([this] { fill(); });
  }
  ~ReadAheadSource() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    worker_.join();
  }

  size_t read(char* dst, size_t cap) override {
    size_t n = 0;
    while (n < cap) {
      if (pos_ == current_.size()) {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return !chunks_.empty() || finished_; });
        if (chunks_.empty()) {
          if (error_ && n == 0) std::rethrow_exception(error_);
          break;  // the end (or an error, raised at the next call, after the data before it)
        }
        current_ = std::move(chunks_.front());
        chunks_.pop_front();
        pos_ = 0;
        changed_.notify_all();
      }
      size_t k = std::min(cap - n, current_.size() - pos_);
      std::memcpy(dst + n, current_.data() + pos_, k);
      n += k;
      pos_ += k;
      if (n > 0 && chunks_ready_hint() == false) break;  // hand over what we have rather than wait
    }
    return n;
  }
  uint64_t file_bytes_read() const override { return file_bytes_.load(std::memory_order_relaxed); }
  bool inflates() const override { return inner_->inflates(); }

 private:
  static constexpr size_t kChunk = size_t{1} << 20;
  static constexpr size_t kMaxChunks = 8;

  bool chunks_ready_hint() {
    if (pos_ < current_.size()) return true;
    std::lock_guard lock(mutex_);
    return !chunks_.empty();
  }

  void fill() {
    try {
      for (;;) {
        std::vector<char> chunk(kChunk);
        size_t got = inner_->read(chunk.data(), chunk.size());
        file_bytes_.store(inner_->file_bytes_read(), std::memory_order_relaxed);
        std::unique_lock lock(mutex_);
        if (got == 0) break;
        chunk.resize(got);
        changed_.wait(lock, [&] { return chunks_.size() < kMaxChunks || stopping_; });
        if (stopping_) return;
        chunks_.push_back(std::move(chunk));
        changed_.notify_all();
      }
    } catch (...) {
      std::lock_guard lock(mutex_);
      error_ = std::current_exception();
    }
    std::lock_guard lock(mutex_);
    finished_ = true;
    changed_.notify_all();
  }

  std::unique_ptr<ByteSource> inner_;
  std::thread worker_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::vector<char>> chunks_;
  std::vector<char> current_;
  size_t pos_ = 0;
  bool finished_ = false, stopping_ = false;
  std::exception_ptr error_;
  std::atomic<uint64_t> file_bytes_{0};
};

}  // namespace

const char* inflater_name(Inflater inflater) {
#if PROFLINT_HAVE_ISAL
  if (inflater != Inflater::zlib) return "isa-l igzip";
#endif
  (void)inflater;
  return "zlib";
}

std::unique_ptr<ByteSource> open_byte_source(const std::string& path, Inflater inflater) {
  FilePtr file(std::fopen(path.c_str(), "rb"));
  if (!file) throw input_error(path, "", std::string("cannot open: ") + std::strerror(errno));
  unsigned char magic[2] = {};
  size_t n = std::fread(magic, 1, 2, file.get());
  std::rewind(file.get());
  if (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
    std::unique_ptr<ByteSource> gz;
#if PROFLINT_HAVE_ISAL
    if (inflater != Inflater::zlib) gz = std::make_unique<IsalGzipSource>(path, std::move(file));
#endif
    if (!gz) gz = std::make_unique<GzipSource>(path, std::move(file));
    if (std::thread::hardware_concurrency() < 2) return gz;
    return std::make_unique<ReadAheadSource>(std::move(gz));
  }
  return std::make_unique<FileSource>(path, std::move(file));
}

}  // namespace proflint::kineto
