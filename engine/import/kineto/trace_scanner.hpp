// engine/import/kineto/trace_scanner.hpp — walks the outer JSON of a Chrome trace without a DOM.
//
// A Kineto file is one object (or, in Jan-2021 traces, one bare array) whose `traceEvents` array
// can hold tens of millions of small objects. The scanner tracks only strings, escapes and
// nesting depth, byte by byte, and hands each event's raw text to a handler; the other top-level
// values are handed over whole only when the handler asks for them (deviceProperties,
// distributedInfo, ...). Memory is one buffer holding the largest single event, never the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "engine/import/kineto/byte_source.hpp"

namespace proflint::kineto {

// Bytes readable after the end of every event handed to on_event (simdjson reads ahead).
inline constexpr size_t kEventPadding = 64;

// Work on each event's text that may run ahead of the handler on a thread of its own
// (scan_trace_on_thread only; scan_trace ignores it): the JSON parse of an event, which needs
// nothing the handler has seen. A batch of events gets a Slot, made once and reused; prepare()
// fills it for the index-th event of the batch (indexes count events, from 0, in input order),
// and the handler's on_prepared_event gets the same index and slot afterwards. prepare() runs on
// one thread, for one batch at a time, and must touch nothing but the slot; what it throws
// (out of memory) ends the scan with that exception.
class EventStage {
 public:
  struct Slot {
    virtual ~Slot() = default;
  };
  virtual ~EventStage() = default;
  virtual std::unique_ptr<Slot> make_slot() = 0;
  // Before the first prepare() of a batch: how many events it holds.
  virtual void begin(Slot& slot, size_t events) = 0;
  virtual void prepare(Slot& slot, size_t index, const char* data, size_t size) = 0;
};

class ScanHandler {
 public:
  virtual ~ScanHandler() = default;
  // Whether the raw text of the top-level value under `key` is wanted. Others are skipped
  // without being buffered, whatever their size (TraceLens `metadata`, `INFO` logs...).
  virtual bool wants_top_level(std::string_view key) = 0;
  virtual void on_top_level(std::string_view key, std::string_view value, uint64_t offset) = 0;
  // One element of traceEvents (or of a bare top-level array), starting at byte `offset` of the
  // (decompressed) input. At least kEventPadding bytes after data + size are readable.
  virtual void on_event(const char* data, size_t size, uint64_t offset) = 0;
  // An element or wanted value larger than the limit: skipped, never buffered.
  virtual void on_oversized(std::string_view what, uint64_t offset, uint64_t size) = 0;
  // How many bytes of the file (compressed bytes for gzip) had been read when the calls that
  // follow were scanned (ByteSource::file_bytes_read; for progress). Called before the first call
  // and whenever more input was read.
  virtual void on_source_position(uint64_t /*file_bytes*/) {}
  // A stage whose prepare() runs on a thread of its own before the handler's calls (see
  // EventStage), or none. With a stage, scan_trace_on_thread calls on_prepared_event instead of
  // on_event for every event; scan_trace never does.
  virtual EventStage* event_stage() { return nullptr; }
  virtual void on_prepared_event(EventStage::Slot& /*slot*/, size_t /*index*/, const char* data, size_t size,
                                 uint64_t offset) {
    on_event(data, size, offset);
  }
};

enum class TopShape { object, array };

struct ScanResult {
  TopShape shape = TopShape::object;
  bool has_trace_events = false;  // an object with a traceEvents array (always false for a bare array)
  uint64_t elements = 0;          // events handed over (including oversized ones)
  uint64_t bytes = 0;             // decompressed bytes scanned
  // Offset of the first byte after the top-level value that is neither whitespace nor NUL.
  std::optional<uint64_t> trailing_data_at;
};

struct ScanLimits {
  size_t initial_buffer = size_t{4} << 20;
  size_t max_value = size_t{64} << 20;  // largest single event or wanted top-level value kept
};

// Scans the whole input. Throws proflint::Error naming `path` and the byte offset when the input
// is not JSON of the expected shape or ends early (truncated file).
ScanResult scan_trace(ByteSource& source, const std::string& path, ScanHandler& handler, ScanLimits limits = {});

// The same with the scan on a thread of its own, and the handler's EventStage (where it has one)
// on a third: the scanner copies each event (and wanted top-level value) into batches of about a
// megabyte, the stage prepares a batch's events while the handler works through the batch before,
// and the handler gets exactly the calls, in exactly the order and with the offsets, that
// scan_trace would make (on_prepared_event for on_event with a stage), on the calling thread, a
// batch at a time, while the scanner reads on. Only wants_top_level is called on the scanner's
// thread (it must not touch the handler's state). An exception from the handler or the stage stops
// the scanner; a scan error is thrown after the handler got every call made before it, so the
// first failure in input order is the one reported, as with scan_trace.
ScanResult scan_trace_on_thread(ByteSource& source, const std::string& path, ScanHandler& handler, ScanLimits limits = {});

}  // namespace proflint::kineto
