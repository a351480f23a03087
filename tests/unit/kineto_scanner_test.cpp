// tests/unit/kineto_scanner_test.cpp — the streaming top-level scanner and the flow pairer on
// text, without files: element boundaries across read boundaries, strings full of brackets and
// escapes, values before and after traceEvents, truncation, oversized and hostile input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/import/kineto/byte_source.hpp"
#include "engine/import/kineto/event_parser.hpp"
#include "engine/import/kineto/flow_pairer.hpp"
#include "engine/import/kineto/trace_scanner.hpp"
#include "tests/support/trickle_source.hpp"

namespace proflint::kineto {
namespace {

using testing::TrickleSource;

struct Recorder final : ScanHandler {
  std::vector<std::string> events;
  std::vector<uint64_t> offsets;
  std::map<std::string, std::string> values;
  std::vector<std::string> oversized;
  bool wants_top_level(std::string_view key) override { return key != "metadata"; }
  void on_top_level(std::string_view key, std::string_view value, uint64_t) override { values[std::string(key)] = value; }
  void on_event(const char* data, size_t size, uint64_t offset) override {
    events.emplace_back(data, size);
    offsets.push_back(offset);
  }
  void on_oversized(std::string_view what, uint64_t, uint64_t) override { oversized.emplace_back(what); }
};

ScanResult scan_text(const std::string& text, Recorder& rec, size_t step = 1 << 20, ScanLimits limits = {}) {
  TrickleSource source(text, step);
  return scan_trace(source, "mem.json", rec, limits);
}

const char* kTrace = R"({"schemaVersion": 1, "metadata": {"a": [1, {"traceEvents": "decoy ]}"}]},
  "deviceProperties": [{"id": 0, "name": "GPU \"0\" [x]"}],
  "traceEvents": [
    {"ph": "X", "name": "a{b}[c]\"d\\", "args": {"Input Dims": [[1, 2], []]}},
    {"ph": "i", "name": "\\\\"} ,
    [1, 2],
    "text event",
    42
  ],
  "distributedInfo": {"rank": 3}
})";

TEST(KinetoScanner, FindsEveryEventAndTopLevelValueWhateverTheReadSize) {
  for (size_t step : {size_t{1}, size_t{3}, size_t{7}, size_t{64}, size_t{1} << 20}) {
    Recorder rec;
    ScanResult r = scan_text(kTrace, rec, step);
    ASSERT_EQ(rec.events.size(), 5u) << "step " << step;
    EXPECT_EQ(rec.events[0], R"({"ph": "X", "name": "a{b}[c]\"d\\", "args": {"Input Dims": [[1, 2], []]}})");
    EXPECT_EQ(rec.events[1], R"({"ph": "i", "name": "\\\\"})");
    EXPECT_EQ(rec.events[2], "[1, 2]");
    EXPECT_EQ(rec.events[3], "\"text event\"");
    EXPECT_EQ(rec.events[4], "42");
    EXPECT_EQ(std::string(kTrace).substr(rec.offsets[0], 10), R"({"ph": "X")");
    EXPECT_EQ(rec.values["schemaVersion"], "1");
    EXPECT_EQ(rec.values["deviceProperties"], R"([{"id": 0, "name": "GPU \"0\" [x]"}])");
    EXPECT_EQ(rec.values["distributedInfo"], R"({"rank": 3})");  // after traceEvents
    EXPECT_EQ(rec.values.count("metadata"), 0u);                // not wanted: skipped, not kept
    EXPECT_TRUE(r.has_trace_events);
    EXPECT_EQ(r.shape, TopShape::object);
    EXPECT_EQ(r.elements, 5u);
  }
}

TEST(KinetoScanner, BareArrayAndByteOrderMark) {
  Recorder rec;
  ScanResult r = scan_text("\xEF\xBB\xBF  [ {\"ph\": \"X\"}, {\"ph\": \"M\"} ]\n", rec, 2);
  EXPECT_EQ(r.shape, TopShape::array);
  EXPECT_FALSE(r.has_trace_events);
  ASSERT_EQ(rec.events.size(), 2u);
  EXPECT_EQ(rec.events[1], "{\"ph\": \"M\"}");
}

TEST(KinetoScanner, EventsLargerThanTheBufferGrowIt) {
  std::string big(300000, 'k');
  std::string text = "{\"traceEvents\": [{\"name\": \"" + big + "\"}, {\"name\": \"small\"}]}";
  Recorder rec;
  ScanLimits limits;
  limits.initial_buffer = 4096;
  scan_text(text, rec, 1000, limits);
  ASSERT_EQ(rec.events.size(), 2u);
  EXPECT_EQ(rec.events[0].size(), big.size() + 12);
  EXPECT_EQ(rec.events[1], "{\"name\": \"small\"}");
}

TEST(KinetoScanner, OversizedEventsAreSkippedNotBuffered) {
  std::string big(200000, 'x');
  std::string text = "{\"traceEvents\": [{\"name\": \"" + big + "\"}, {\"name\": \"after\"}]}";
  Recorder rec;
  ScanLimits limits;
  limits.initial_buffer = 4096;
  limits.max_value = 16384;
  scan_text(text, rec, 777, limits);
  ASSERT_EQ(rec.oversized.size(), 1u);
  EXPECT_EQ(rec.oversized[0], "event");
  ASSERT_EQ(rec.events.size(), 1u);
  EXPECT_EQ(rec.events[0], "{\"name\": \"after\"}");
}

TEST(KinetoScanner, DeepNestingNeedsNoRecursion) {
  std::string deep = std::string(200000, '[') + std::string(200000, ']');
  Recorder rec;
  scan_text("{\"traceEvents\": [" + deep + ", {\"ph\": \"X\"}]}", rec, 4096);
  ASSERT_EQ(rec.events.size(), 2u);
  EXPECT_EQ(rec.events[0].size(), deep.size());
}

void expect_scan_error(const std::string& text, const std::string& what) {
  Recorder rec;
  try {
    scan_text(text, rec, 5);
    FAIL() << "no error for: " << text;
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("mem.json"), std::string::npos) << msg;
    EXPECT_NE(msg.find("byte "), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

TEST(KinetoScanner, TruncationAndMalformedStructureAreErrorsWithAnOffset) {
  expect_scan_error(R"({"traceEvents": [{"ph": "X"}, {"ph": "X", "name": "cut)", "traceEvents");
  expect_scan_error(R"({"traceEvents": [{"ph": "X"},)", "traceEvents");
  expect_scan_error(R"({"traceEvents": [{"ph": "X"}], "distributedInfo": {"rank")", "truncated");
  expect_scan_error(R"([{"ph": "X"})", "top-level array");
  expect_scan_error("hello", "expected '{' or '['");
  expect_scan_error("   ", "no JSON");
  expect_scan_error(R"({"traceEvents": 5})", "not an array");
  expect_scan_error(R"({"traceEvents": [{"ph": "X"} {"ph": "X"}]})", "expected ',' or ']'");
  expect_scan_error(R"({"traceEvents": [,]})", "expected an event");
}

TEST(KinetoScanner, ParseErrorsGiveLineAndColumnAsWellAsTheByte) {
  // 300 one-line events, then an event followed by ';' on line 303: byte, line and column counted
  // by hand from the text below (lines before the event: 1 for '{"traceEvents": [', 300 events).
  std::string text = "{\"traceEvents\": [\n";
  for (int i = 0; i < 300; ++i) text += "  {\"ph\": \"X\", \"name\": \"e" + std::to_string(i) + "\"},\n";
  text += "  {\"ph\": \"X\"};\n]}";
  const size_t bad = text.find(';');
  const size_t line_start = text.rfind('\n', bad) + 1;
  ASSERT_EQ(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n'), 301);
  // A small buffer (lines leave it before the error) and one holding everything.
  for (size_t buffer : {size_t{64}, size_t{1} << 20}) {
    Recorder rec;
    ScanLimits limits;
    limits.initial_buffer = buffer;
    try {
      scan_text(text, rec, 7, limits);
      FAIL() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()), "mem.json: byte " + std::to_string(bad) + " (line 302, column " +
                                           std::to_string(bad - line_start + 1) + "): expected ',' or ']' after an event in traceEvents")
          << "buffer " << buffer;
    }
  }
  // On the first line: column = byte + 1.
  Recorder rec;
  try {
    scan_text(R"({"traceEvents": 5})", rec);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("byte 16 (line 1, column 17): traceEvents is not an array"), std::string::npos) << e.what();
  }
}

TEST(KinetoEventParser, ReadsBothKeySpellingsAndStringIds) {
  std::string text =
      R"({"ph": "X", "cat": "Kernel", "name": "k\u0041", "pid": 0, "tid": "stream 7", "ts": 1610366388630527, "dur": 1009,)"
      R"( "args": {"external id": 627, "correlation": 9, "grid": [80, 1, 2], "block": [128, 1, 1], "stream": 7,)"
      R"( "registers per thread": 80, "shared memory": 4096, "Input dims": [[32, 3]]}})";
  text.append(64, ' ');  // the padding the scanner guarantees
  EventParser parser;
  KinetoEvent ev;
  std::string_view error;
  ASSERT_EQ(parser.parse(text.data(), text.size() - 64, ev, error), ParseStatus::ok) << error;
  EXPECT_EQ(ev.ph, "X");
  EXPECT_EQ(ev.cat, "Kernel");
  EXPECT_EQ(ev.name, "kA");  // escapes are decoded
  EXPECT_EQ(ev.tid.number, 7);
  EXPECT_EQ(ev.ts, "1610366388630527");
  EXPECT_EQ(ev.external_id, 627);
  EXPECT_EQ(ev.correlation, 9);
  EXPECT_EQ(ev.grid[0], 80);
  EXPECT_EQ(ev.grid[2], 2);
  EXPECT_EQ(ev.block[0], 128);
  EXPECT_EQ(ev.registers_per_thread, 80);
  EXPECT_EQ(ev.shared_memory, 4096);
  EXPECT_EQ(ev.input_dims, "[[32, 3]]");
}

TEST(KinetoEventParser, RejectsBrokenJsonWithoutCrashing) {
  EventParser parser;
  KinetoEvent ev;
  std::string_view error;
  for (std::string text : {std::string(R"({"ph": "X", "name": "a)"), std::string("[1, 2]"), std::string("{\"name\": \"\xff\xfe\"}"),
                           std::string(5000, '[') + std::string(5000, ']')}) {
    size_t n = text.size();
    text.append(64, ' ');
    EXPECT_NE(parser.parse(text.data(), n, ev, error), ParseStatus::ok) << text.substr(0, 40);
  }
}

TEST(KinetoFlowPairer, PairsEndsInAnyOrderAndKeepsTheRest) {
  FlowPairer pairer;
  EXPECT_FALSE(pairer.add(0, 5, false, FlowEnd{0, 7, 200}));  // 'f' first, as on GPU timelines
  auto p = pairer.add(0, 5, true, FlowEnd{100, 100, 150});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->src->pid, 100);
  EXPECT_EQ(p->src->ts_ns, 150);
  EXPECT_EQ(p->dst->ts_ns, 200);
  EXPECT_FALSE(pairer.add(1, 5, true, FlowEnd{1, 1, 10}));  // same id, other kind: no pair
  EXPECT_FALSE(pairer.add(0, 9, false, FlowEnd{2, 2, 30}));
  // Repeated id: the earliest waiting start is taken.
  EXPECT_FALSE(pairer.add(0, 11, true, FlowEnd{3, 3, 50}));
  EXPECT_FALSE(pairer.add(0, 11, true, FlowEnd{3, 3, 40}));
  auto q = pairer.add(0, 11, false, FlowEnd{0, 7, 60});
  ASSERT_TRUE(q);
  EXPECT_EQ(q->src->ts_ns, 40);
  auto rest = pairer.leftovers();
  ASSERT_EQ(rest.size(), 3u);
  EXPECT_EQ(rest[0].id, 9);
  EXPECT_FALSE(rest[0].src);
  EXPECT_EQ(rest[1].id, 11);
  EXPECT_EQ(rest[1].src->ts_ns, 50);
  EXPECT_EQ(rest[2].kind, 1u);
}

TEST(KinetoFlowPairer, ManyFlowsThroughRehashing) {
  FlowPairer pairer;
  int pairs = 0;
  for (int64_t i = 0; i < 100000; ++i) pairs += pairer.add(0, i, true, FlowEnd{1, 1, i}).has_value();
  for (int64_t i = 0; i < 100000; i += 2) pairs += pairer.add(0, i, false, FlowEnd{0, 7, i + 1}).has_value();
  EXPECT_EQ(pairs, 50000);
  EXPECT_EQ(pairer.waiting(), 50000u);
  EXPECT_EQ(pairer.leftovers().size(), 50000u);
}

}  // namespace
}  // namespace proflint::kineto
