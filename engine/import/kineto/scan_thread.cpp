// engine/import/kineto/scan_thread.cpp — scan_trace_on_thread (trace_scanner.hpp): the scanner on
// a thread of its own, the handler's EventStage (the JSON parse of each event) on a second, the
// handler on the caller's, joined by short queues of batches.
//
// Finding where each event ends is a third of a large trace's import on the importing thread
// (the byte walk and the buffer moves), the parse of each event another third, the sink after it
// the rest. With the scan and the parse beside the sink the import keeps two cores busy (the
// threads share them with gzip's inflate thread).
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
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
  size_t events = 0;        // calls of Kind::event
  uint64_t file_bytes = 0;  // ByteSource::file_bytes_read when the batch was sealed
  std::unique_ptr<EventStage::Slot> slot;  // the stage's work on its events (kept for reuse)
  void clear() {
    bytes.clear();
    calls.clear();
    events = 0;
  }
};

// A batch is sealed at this many bytes or calls. With a stage its parsed events (~900 bytes each)
// go from the stage's core to the handler's: smaller batches keep them in the shared cache (1 MiB
// batches of up to 8192 events made the import's CPU time 40% larger).
constexpr size_t kBatchBytes = size_t{1} << 20, kStagedBatchBytes = size_t{1} << 18;
constexpr size_t kBatchCalls = 8192, kStagedBatchCalls = 1024;
constexpr size_t kQueuedBatches = 4;  // at most this many wait in each queue

// Thrown on the scanner's thread when the handler's side gave up: unwinds the scan.
struct Stopped {};

// Batches go from the scanner's thread (the open batch, sealed into scanned_) through the stage's
// thread, where the handler has an EventStage (scanned_ -> prepared_), to the handler's thread,
// and back to free_. One mutex and one condition variable: a batch is a megabyte of events, so
// the hand-overs are a few thousand for the largest traces.
class Pipe final : public ScanHandler {
 public:
  Pipe(ScanHandler& handler, EventStage* stage)
      : handler_(handler),
        stage_(stage),
        batch_bytes_(stage ? kStagedBatchBytes : kBatchBytes),
        batch_calls_(stage ? kStagedBatchCalls : kBatchCalls) {
    size_t pool = stage_ ? 2 * kQueuedBatches + 3 : kQueuedBatches + 2;
    for (size_t i = 0; i < pool; ++i) {
      free_.emplace_back();
      free_.back().bytes.reserve(batch_bytes_ + kEventPadding + 4096);
    }
    open_batch();
  }

  // No thread for the stage: the handler parses every event itself (on_event).
  void drop_stage() { stage_ = nullptr; }

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
    ++open_.events;
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
    changed_.notify_all();
  }

  // ---- the stage's thread ----
  // Prepares every scanned batch in order until the scan is done or the pipe stopped. Never throws.
  void run_stage() noexcept {
    for (;;) {
      Batch batch;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return !scanned_.empty() || scan_done_ || stopped_; });
        if (stopped_) return;
        if (scanned_.empty()) {
          stage_done_ = true;
          changed_.notify_all();
          return;
        }
        batch = std::move(scanned_.front());
        scanned_.pop_front();
        changed_.notify_all();
      }
      try {
        if (!batch.slot) batch.slot = stage_->make_slot();
        stage_->begin(*batch.slot, batch.events);
        const char* base = batch.bytes.data();
        size_t index = 0;
        for (const Call& c : batch.calls)
          if (c.kind == Call::Kind::event) stage_->prepare(*batch.slot, index++, base + c.text_at, c.text_size);
      } catch (...) {
        std::lock_guard lock(mutex_);
        stage_error_ = std::current_exception();
        stopped_ = true;
        changed_.notify_all();
        return;
      }
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return prepared_.size() < kQueuedBatches || stopped_; });
      if (stopped_) return;
      prepared_.push_back(std::move(batch));
      changed_.notify_all();
    }
  }

  // ---- the handler's thread ----
  // Hands every queued call to the handler until the scan is done; returns its result or throws
  // its error. An exception from the handler stops the scanner and is rethrown.
  ScanResult drain() {
    std::deque<Batch>& ready = stage_ ? prepared_ : scanned_;
    for (;;) {
      Batch batch;
      {
        std::unique_lock lock(mutex_);
        const bool& done = stage_ ? stage_done_ : scan_done_;
        changed_.wait(lock, [&] { return !ready.empty() || done || stage_error_; });
        if (ready.empty()) {
          if (stage_error_) std::rethrow_exception(stage_error_);
          if (scan_error_) std::rethrow_exception(scan_error_);
          return result_;
        }
        batch = std::move(ready.front());
        ready.pop_front();
        changed_.notify_all();
      }
      try {
        deliver(batch);
      } catch (...) {
        stop();
        throw;
      }
      batch.clear();
      if (batch.bytes.capacity() > 4 * batch_bytes_) {  // it held a very large event: give that back
        batch.bytes = std::string();
        batch.bytes.reserve(batch_bytes_ + kEventPadding + 4096);
      }
      std::lock_guard lock(mutex_);
      free_.push_back(std::move(batch));
      changed_.notify_all();
    }
  }

  void stop() {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    changed_.notify_all();
  }

 private:
  size_t append(std::string_view text) {
    size_t at = open_.bytes.size();
    open_.bytes.append(text);
    return at;
  }
  void add(const Call& c) {
    open_.calls.push_back(c);
    if (open_.bytes.size() >= batch_bytes_ || open_.calls.size() >= batch_calls_) {
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
    changed_.wait(lock, [&] { return scanned_.size() < kQueuedBatches || stopped_; });
    if (stopped_) throw Stopped{};
    scanned_.push_back(std::move(open_));
    changed_.notify_all();
  }
  void open_batch() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !free_.empty() || stopped_; });
    if (stopped_) throw Stopped{};
    open_ = std::move(free_.back());
    free_.pop_back();
    open_.clear();
  }

  void deliver(Batch& b) {
    handler_.on_source_position(b.file_bytes);
    const char* base = b.bytes.data();
    size_t index = 0;
    for (const Call& c : b.calls) {
      switch (c.kind) {
        case Call::Kind::event:
          if (stage_) handler_.on_prepared_event(*b.slot, index++, base + c.text_at, c.text_size, c.offset);
          else handler_.on_event(base + c.text_at, c.text_size, c.offset);
          break;
        case Call::Kind::top_level:
          handler_.on_top_level(std::string_view(base + c.key_at, c.key_size), std::string_view(base + c.text_at, c.text_size),
                                c.offset);
          break;
        case Call::Kind::oversized: handler_.on_oversized(std::string_view(base + c.key_at, c.key_size), c.offset, c.size); break;
      }
    }
  }

  ScanHandler& handler_;
  EventStage* stage_;        // set before the threads start, then only read
  const size_t batch_bytes_, batch_calls_;
  uint64_t file_bytes_ = 0;  // scanner's thread only
  Batch open_;               // scanner's thread only
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Batch> scanned_, prepared_;
  std::vector<Batch> free_;
  bool stopped_ = false, scan_done_ = false, stage_done_ = false;
  ScanResult result_;
  std::exception_ptr scan_error_, stage_error_;
};

}  // namespace

ScanResult scan_trace_on_thread(ByteSource& source, const std::string& path, ScanHandler& handler, ScanLimits limits) {
  Pipe pipe(handler, handler.event_stage());
  std::thread stage, scanner;
  if (handler.event_stage()) {
    try {
      stage = std::thread([&] { pipe.run_stage(); });
    } catch (const std::system_error&) {
      pipe.drop_stage();  // no thread to be had: the handler parses
    }
  }
  auto join = [&] {
    pipe.stop();
    if (scanner.joinable()) scanner.join();
    if (stage.joinable()) stage.join();
  };
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
    join();
    return scan_trace(source, path, handler, limits);  // no thread to be had: scan here
  }
  try {
    ScanResult result = pipe.drain();
    join();
    return result;
  } catch (...) {
    join();
    throw;
  }
}

}  // namespace proflint::kineto
