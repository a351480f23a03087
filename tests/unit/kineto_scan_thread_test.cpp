// tests/unit/kineto_scan_thread_test.cpp — the scan on a thread of its own
// (kineto::scan_trace_on_thread) makes exactly the handler calls of the plain scan, in the same
// order, on the caller's thread: for every read size, across many batches, with oversized and
// top-level values, for truncated input and for a handler that gives up halfway; with an
// EventStage, every event is prepared on a third thread into the slot the handler then gets it with.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/import/kineto/byte_source.hpp"
#include "engine/import/kineto/trace_scanner.hpp"
#include "tests/support/trickle_source.hpp"
#include "tests/support/run.hpp"

namespace proflint::kineto {
namespace {

using testing::TrickleSource;

// A stage that copies each event's text into its batch's slot, checking it never runs on the
// handler's thread; throw_at: the event whose prepare() throws.
struct CopyStage final : EventStage {
  struct Batch final : Slot {
    std::vector<std::string> texts;
  };
  std::thread::id handler_thread = std::this_thread::get_id();
  std::atomic<bool> on_handler_thread{false};
  std::atomic<int64_t> prepared{0};
  int64_t throw_at = -1;
  std::unique_ptr<Slot> make_slot() override { return std::make_unique<Batch>(); }
  void begin(Slot& slot, size_t events) override { static_cast<Batch&>(slot).texts.assign(events, "?"); }
  void prepare(Slot& slot, size_t index, const char* data, size_t size) override {
    if (std::this_thread::get_id() == handler_thread) on_handler_thread = true;
    if (prepared++ == throw_at) throw std::runtime_error("stage gave up at event " + std::to_string(throw_at));
    static_cast<Batch&>(slot).texts.at(index) = std::string(data, size);
  }
};

// Every call as one line of text; calls made on another thread than the test's are flagged.
struct Log final : ScanHandler {
  CopyStage* stage = nullptr;
  bool slot_mismatch = false;  // an event handed over with a slot that did not hold its text
  EventStage* event_stage() override { return stage; }
  void on_prepared_event(EventStage::Slot& slot, size_t index, const char* data, size_t size, uint64_t offset) override {
    const auto& texts = static_cast<CopyStage::Batch&>(slot).texts;
    if (index >= texts.size() || texts[index] != std::string(data, size)) slot_mismatch = true;
    on_event(data, size, offset);
  }
  std::string lines;
  std::thread::id owner = std::this_thread::get_id();
  bool foreign_thread = false;
  int64_t events = 0, throw_at = -1;  // throw_at: the event whose call throws
  bool wants_top_level(std::string_view key) override { return key != "metadata"; }
  void on_top_level(std::string_view key, std::string_view value, uint64_t offset) override {
    check();
    lines += "T " + std::string(key) + " @" + std::to_string(offset) + " " + std::string(value) + "\n";
  }
  void on_event(const char* data, size_t size, uint64_t offset) override {
    check();
    if (events++ == throw_at) throw std::runtime_error("handler gave up at event " + std::to_string(throw_at));
    // The parser reads ahead: the padding after each event must be readable (ASan checks it).
    char ahead = 0;
    for (size_t i = 0; i < kEventPadding; ++i) ahead = static_cast<char>(ahead ^ data[size + i]);
    (void)ahead;
    lines += "E @" + std::to_string(offset) + " " + std::string(data, size) + "\n";
  }
  void on_oversized(std::string_view what, uint64_t offset, uint64_t size) override {
    check();
    lines += "O " + std::string(what) + " @" + std::to_string(offset) + " " + std::to_string(size) + "\n";
  }
  void check() { foreign_thread = foreign_thread || std::this_thread::get_id() != owner; }
};

struct Outcome {
  std::string log, error;
  ScanResult result;
  bool foreign_thread = false;
};

Outcome scan(bool on_thread, const std::string& text, size_t step, ScanLimits limits = {}, int64_t throw_at = -1,
             CopyStage* stage = nullptr) {
  TrickleSource source(text, step);
  Log log;
  log.throw_at = throw_at;
  log.stage = stage;
  Outcome out;
  try {
    out.result = on_thread ? scan_trace_on_thread(source, "mem.json", log, limits) : scan_trace(source, "mem.json", log, limits);
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  out.log = std::move(log.lines);
  out.foreign_thread = log.foreign_thread || log.slot_mismatch;
  return out;
}

void expect_same(const std::string& text, size_t step, ScanLimits limits = {}, int64_t throw_at = -1,
                 bool staged = false) {
  Outcome plain = scan(false, text, step, limits, throw_at);
  CopyStage stage;
  Outcome threaded = scan(true, text, step, limits, throw_at, staged ? &stage : nullptr);
  if (staged) {
    EXPECT_FALSE(stage.on_handler_thread) << "the stage ran on the handler's thread";
    if (throw_at < 0 && plain.error.empty()) {
      int64_t events = 0;  // lines "E @..." of the plain scan's log
      for (size_t at = 0; (at = plain.log.find("E @", at)) != std::string::npos; at += 3)
        if (at == 0 || plain.log[at - 1] == '\n') ++events;
      EXPECT_EQ(stage.prepared, events) << "every event prepared once";
    }
  }
  EXPECT_EQ(threaded.log, plain.log) << "step " << step;
  EXPECT_EQ(threaded.error, plain.error) << "step " << step;
  EXPECT_EQ(threaded.result.elements, plain.result.elements);
  EXPECT_EQ(threaded.result.bytes, plain.result.bytes);
  EXPECT_EQ(threaded.result.has_trace_events, plain.result.has_trace_events);
  EXPECT_EQ(threaded.result.trailing_data_at, plain.result.trailing_data_at);
  EXPECT_FALSE(threaded.foreign_thread) << "a handler call came from another thread, or with a slot not its event's";
}

// 30,000 events of ~100 bytes: about 3 MB, so several batches of both limits (1 MiB, 8192 calls).
std::string many_events(int n) {
  std::string t = R"({"schemaVersion": 1, "metadata": {"x": [1, 2]}, "traceEvents": [)";
  for (int i = 0; i < n; ++i) {
    if (i) t += ",\n";
    t += R"({"ph": "X", "cat": "kernel", "name": "k\"[)" + std::to_string(i) + R"(]", "ts": )" + std::to_string(i * 10) +
         R"(, "dur": 5, "args": {"correlation": )" + std::to_string(i) + "}}";
    if (i == n / 2) t += R"(, {"ph": "X", "name": ")" + std::string(50000, 'L') + R"("})";  // oversized below
  }
  t += R"(], "deviceProperties": [{"id": 0}], "distributedInfo": {"rank": 1}})";
  return t;
}

TEST(KinetoScanThread, SameCallsInTheSameOrderWhateverTheReadSize) {
  const std::string small = R"({"schemaVersion": 1, "metadata": {"a": [1, {"traceEvents": "decoy ]}"}]},
    "deviceProperties": [{"id": 0, "name": "GPU \"0\" [x]"}],
    "traceEvents": [{"ph": "X", "name": "a{b}[c]\"d\\"}, {"ph": "i"}, [1, 2], "text", 42],
    "distributedInfo": {"rank": 3}} trailing)";
  for (size_t step : {size_t{1}, size_t{7}, size_t{4096}, size_t{1} << 20}) expect_same(small, step);
  std::string big = many_events(30000);
  ScanLimits limits;
  limits.initial_buffer = 4096;
  limits.max_value = 2048;  // the 50 kB event is oversized
  for (size_t step : {size_t{333}, size_t{65536}}) expect_same(big, step, limits);
  Outcome o = scan(true, big, 65536, limits);
  EXPECT_EQ(o.result.elements, 30001u);
  EXPECT_NE(o.log.find("O event @"), std::string::npos);
  EXPECT_NE(o.log.find("T distributedInfo"), std::string::npos);
  EXPECT_EQ(o.log.find("T metadata"), std::string::npos);
}

TEST(KinetoScanThread, ScanErrorsComeAfterEveryEarlierCall) {
  std::string big = many_events(20000);
  for (size_t cut : {big.size() / 3, big.size() - 30, size_t{40}}) {
    std::string truncated = big.substr(0, cut);
    expect_same(truncated, 65536);
    Outcome o = scan(true, truncated, 65536);
    EXPECT_NE(o.error.find("mem.json"), std::string::npos) << o.error;
  }
  std::string broken = big;
  broken.replace(big.size() / 2, 1, "}");  // structure broken in the middle
  expect_same(broken, 4096);
}

TEST(KinetoScanThread, AHandlerThatGivesUpStopsTheScanner) {
  std::string big = many_events(30000);
  for (int64_t at : {int64_t{0}, int64_t{9000}, int64_t{29999}}) {
    expect_same(big, 65536, {}, at);
    Outcome o = scan(true, big, 65536, {}, at);
    EXPECT_EQ(o.error, "handler gave up at event " + std::to_string(at));
  }
  // The handler's error comes before a later scan error, as without the thread.
  std::string truncated = big.substr(0, big.size() / 2);
  Outcome o = scan(true, truncated, 65536, {}, 100);
  EXPECT_EQ(o.error, "handler gave up at event 100");
}

// A real capture through the real byte source (gzip inflated on its own thread too).
TEST(KinetoScanThread, SameCallsOnAFixture) {
  for (const char* name : {"fixtures/sample_train.json.gz", "fixtures/report_mlp.json.gz"}) {
    std::string path = (testing::source_dir() / name).string();
    auto plain_source = open_byte_source(path);
    auto threaded_source = open_byte_source(path);
    Log plain, threaded;
    ScanResult a = scan_trace(*plain_source, path, plain);
    ScanResult b = scan_trace_on_thread(*threaded_source, path, threaded);
    EXPECT_EQ(threaded.lines, plain.lines) << name;
    EXPECT_EQ(a.elements, b.elements) << name;
    EXPECT_GT(a.elements, 500u) << name;
  }
}

TEST(KinetoScanThread, WithAStageEveryEventIsPreparedOnAThirdThreadIntoItsSlot) {
  const std::string small = R"({"traceEvents": [{"ph": "X", "name": "a\"b"}, {"ph": "i"}, 42], "x": 1})";
  for (size_t step : {size_t{1}, size_t{4096}}) expect_same(small, step, {}, -1, /*staged=*/true);
  std::string big = many_events(30000);
  ScanLimits limits;
  limits.initial_buffer = 4096;
  limits.max_value = 2048;
  for (size_t step : {size_t{333}, size_t{65536}}) expect_same(big, step, limits, -1, /*staged=*/true);
  std::string truncated = big.substr(0, big.size() / 3);
  expect_same(truncated, 65536, {}, -1, /*staged=*/true);
  // The handler giving up stops the stage and the scanner too.
  for (int64_t at : {int64_t{0}, int64_t{29999}}) expect_same(big, 65536, {}, at, /*staged=*/true);
}

TEST(KinetoScanThread, AStageThatFailsEndsTheScanWithItsError) {
  std::string big = many_events(30000);
  for (int64_t at : {int64_t{0}, int64_t{12345}}) {
    CopyStage stage;
    stage.throw_at = at;
    Outcome o = scan(true, big, 65536, {}, -1, &stage);
    EXPECT_EQ(o.error, "stage gave up at event " + std::to_string(at));
    EXPECT_FALSE(o.foreign_thread);
    EXPECT_EQ(o.log.find(R"(k\"[)" + std::to_string(at) + "]"), std::string::npos) << "the failed event reached the handler";
  }
}

}  // namespace
}  // namespace proflint::kineto
