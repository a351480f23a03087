// engine/import/kineto/scan_thread.cpp — scan_trace_on_thread (trace_scanner.hpp): the scanner on
// a thread of its own, the handler on the caller's, joined by a short queue of batches.
//
// Finding where each event ends is a third of a large trace's import on the importing thread
// (the byte walk and the buffer moves); the parser and the sink after it are the rest. With the
// scan beside them the import keeps two cores busy (three with gzip's inflate thread).
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "engine/import/kineto/trace_scanner.hpp"

namespace proflint::kineto {

namespace {

// One handler call, its text in Batch::bytes.
struct Call {
  enum class Kind : uint8_t { event, top_level, oversized } kind;
  uint64_t offset = 0, size = 0;  // size: of an oversized value (its text is not kept)
  size_t text_at = 0, text_size = 0;
  size_t key_at = 0, key_size = 0;  // top_level and oversized: the key or "event"
};

struct Batch {
  std::string bytes;  // texts back to back, kEventPadding readable bytes after the last
  std::vector<Call> calls;
  uint64_t file_bytes = 0;  // ByteSource::file_bytes_read when the batch was sealed
  void clear() {
    bytes.clear();
    calls.clear();
  }
};

constexpr size_t kBatchBytes = size_t{1} << 20;
constexpr size_t kBatchCalls = 8192;
constexpr size_t kQueuedBatches = 4;

// Thrown on the scanner's thread when the handler's side gave up: unwinds the scan.
struct Stopped {};

class Pipe final : public ScanHandler {
 public:
  explicit Pipe(ScanHandler& handler) : handler_(handler) {
    for (size_t i = 0; i < kQueuedBatches + 2; ++i) {
      free_.emplace_back();
      free_.back().bytes.reserve(kBatchBytes + kEventPadding + 4096);
    }
    open_batch();
  }

  // ---- the scanner's thread ----
  bool wants_top_level(std::string_view key) override { return handler_.wants_top_level(key); }
  void on_top_level(std::string_view key, std::string_view value, uint64_t offset) override {
    Call c{Call::Kind::top_level, offset, 0, 0, 0, 0, 0};
    c.key_at = append(key);
    c.key_size = key.size();
    c.text_at = append(value);
    c.text_size = value.size();
    add(c);
  }
  void on_event(const char* data, size_t size, uint64_t offset) override {
    Call c{Call::Kind::event, offset, 0, 0, 0, 0, 0};
    c.text_at = append(std::string_view(data, size));
    c.text_size = size;
    add(c);
  }
  void on_oversized(std::string_view what, uint64_t offset, uint64_t size) override {
    Call c{Call::Kind::oversized, offset, size, 0, 0, 0, 0};
    c.key_at = append(what);
    c.key_size = what.size();
    add(c);
  }
  void on_source_position(uint64_t file_bytes) override { file_bytes_ = file_bytes; }

  // The scan ended (result) or failed (error): the last batch goes, then the end. Never throws.
  void finish(const ScanResult* result, std::exception_ptr error) noexcept {
    try {
      seal();
    } catch (...) {
      // Stopped (the handler's side gave up) or no memory for the queue: the batch is dropped,
      // and with it nothing the handler's side still waits for.
    }
    std::lock_guard lock(mutex_);
    if (result) result_ = *result;
    scan_error_ = error;
    scan_done_ = true;
    ready_.notify_all();
  }

  // ---- the handler's thread ----
  // Hands every queued call to the handler until the scan is done; returns its result or throws
  // its error. An exception from the handler stops the scanner and is rethrown.
  ScanResult drain() {
    for (;;) {
      Batch batch;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return !full_.empty() || scan_done_; });
        if (full_.empty()) {
          if (scan_error_) std::rethrow_exception(scan_error_);
          return result_;
        }
        batch = std::move(full_.front());
        full_.pop_front();
      }
      space_.notify_all();
      try {
        deliver(batch);
      } catch (...) {
        stop();
        throw;
      }
      batch.clear();
      if (batch.bytes.capacity() > 4 * kBatchBytes) {  // it held a very large event: give that back
        batch.bytes = std::string();
        batch.bytes.reserve(kBatchBytes + kEventPadding + 4096);
      }
      std::lock_guard lock(mutex_);
      free_.push_back(std::move(batch));
      space_.notify_all();
    }
  }

  void stop() {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    space_.notify_all();
  }

 private:
  size_t append(std::string_view text) {
    size_t at = open_.bytes.size();
    open_.bytes.append(text);
    return at;
  }
  void add(const Call& c) {
    open_.calls.push_back(c);
    if (open_.bytes.size() >= kBatchBytes || open_.calls.size() >= kBatchCalls) {
      seal();
      open_batch();
    }
  }
  // Queues the open batch (waiting while the queue is full).
  void seal() {
    if (open_.calls.empty()) return;
    open_.bytes.append(kEventPadding, ' ');  // the parser reads ahead of each event
    open_.file_bytes = file_bytes_;
    std::unique_lock lock(mutex_);
    space_.wait(lock, [&] { return full_.size() < kQueuedBatches || stopped_; });
    if (stopped_) throw Stopped{};
    full_.push_back(std::move(open_));
    ready_.notify_all();
  }
  void open_batch() {
    std::unique_lock lock(mutex_);
    space_.wait(lock, [&] { return !free_.empty() || stopped_; });
    if (stopped_) throw Stopped{};
    open_ = std::move(free_.back());
    free_.pop_back();
    open_.clear();
  }

  void deliver(const Batch& b) {
    handler_.on_source_position(b.file_bytes);
    const char* base = b.bytes.data();
    for (const Call& c : b.calls) {
      switch (c.kind) {
        case Call::Kind::event: handler_.on_event(base + c.text_at, c.text_size, c.offset); break;
        case Call::Kind::top_level:
          handler_.on_top_level(std::string_view(base + c.key_at, c.key_size), std::string_view(base + c.text_at, c.text_size),
                                c.offset);
          break;
        case Call::Kind::oversized: handler_.on_oversized(std::string_view(base + c.key_at, c.key_size), c.offset, c.size); break;
      }
    }
  }

  ScanHandler& handler_;
  uint64_t file_bytes_ = 0;  // scanner's thread only
  Batch open_;               // scanner's thread only
  std::mutex mutex_;
  std::condition_variable ready_, space_;
  std::deque<Batch> full_;
  std::vector<Batch> free_;
  bool stopped_ = false, scan_done_ = false;
  ScanResult result_;
  std::exception_ptr scan_error_;
};

}  // namespace

ScanResult scan_trace_on_thread(ByteSource& source, const std::string& path, ScanHandler& handler, ScanLimits limits) {
  Pipe pipe(handler);
  std::thread scanner;
  try {
    scanner = std::thread([&] {
      try {
        ScanResult result = scan_trace(source, path, pipe, limits);
        pipe.finish(&result, nullptr);
      } catch (const Stopped&) {
        pipe.finish(nullptr, nullptr);  // the handler's side failed and rethrows its own error
      } catch (...) {
        pipe.finish(nullptr, std::current_exception());
      }
    });
  } catch (const std::system_error&) {
    return scan_trace(source, path, handler, limits);  // no thread to be had: scan here
  }
  try {
    ScanResult result = pipe.drain();
    scanner.join();
    return result;
  } catch (...) {
    pipe.stop();
    scanner.join();
    throw;
  }
}

}  // namespace proflint::kineto
