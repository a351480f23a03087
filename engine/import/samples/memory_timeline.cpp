// engine/import/samples/memory_timeline.cpp — the PyTorch memory timeline, as
// torch.profiler's export_memory_timeline writes it for a '.raw.json(.gz)' path: a JSON array of
// [time_ns, action, bytes, category] events (time -1: memory that existed before the capture;
// action 1 preexisting, 2 create, 3 increment version (a -bytes/+bytes pair), 4 destroy; bytes
// negative for what is freed). The events become series of the bytes held after each time
// stamp, in total and per category (parameter, optimizer_state, input, temporary, activation,
// gradient, autograd_detail, unknown), for the one device the export was made for (cuda:0 unless
// the caller chose another: recorded as device 0).
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <filesystem>

#include "engine/common/error.hpp"
#include "engine/common/saturate.hpp"
#include "engine/import/samples/sample_text.hpp"
#include "engine/import/samples/samples_importers.hpp"

namespace proflint {

namespace samples {

namespace {

constexpr std::array<std::string_view, 8> kCategories = {"parameter", "optimizer_state", "input",           "temporary",
                                                          "activation", "gradient",       "autograd_detail", "unknown"};

class Cursor {
 public:
  Cursor(std::string_view text, const std::string& path) : t_(text), path_(path) {}
  void blanks() {
    while (p_ < t_.size() && std::isspace(static_cast<unsigned char>(t_[p_]))) {
      if (t_[p_] == '\n') ++line_;
      ++p_;
    }
  }
  bool peek(char c) {
    blanks();
    return p_ < t_.size() && t_[p_] == c;
  }
  void expect(char c, const char* what) {
    if (!peek(c)) fail(std::string("expected '") + c + "' " + what);
    ++p_;
  }
  int64_t integer(const char* what) {
    blanks();
    int64_t v = 0;
    auto [end, ec] = std::from_chars(t_.data() + p_, t_.data() + t_.size(), v);
    if (ec != std::errc()) {
      // Some writers print whole numbers as floats ("4096.0").
      double d = 0;
      auto [end2, ec2] = std::from_chars(t_.data() + p_, t_.data() + t_.size(), d);
      if (ec2 != std::errc() || !(d > -9.2e18 && d < 9.2e18)) fail(std::string("expected an integer ") + what);
      p_ = static_cast<size_t>(end2 - t_.data());
      return static_cast<int64_t>(d);
    }
    p_ = static_cast<size_t>(end - t_.data());
    return v;
  }
  bool at_end() {
    blanks();
    return p_ >= t_.size();
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw input_error(path_, "line " + std::to_string(line_) + " (byte " + std::to_string(p_) + ")",
                      "PyTorch memory timeline: " + why +
                          " (expected [[time_ns, action, bytes, category], ...] as export_memory_timeline writes to a .raw.json file)");
  }

 private:
  std::string_view t_;
  const std::string& path_;
  size_t p_ = 0;
  int64_t line_ = 1;
};

}  // namespace

void read_memory_timeline(std::string_view text, const std::string& path, FactSink& sink) {
  Cursor c(text, path);
  c.expect('[', "at the start");
  struct Event {
    int64_t t, bytes;
    int category;
  };
  std::vector<Event> events;
  if (!c.peek(']')) {
    while (true) {
      c.expect('[', "at the start of an event");
      int64_t t = c.integer("time");
      c.expect(',', "after the time");
      int64_t action = c.integer("action");
      c.expect(',', "after the action");
      int64_t bytes = c.integer("byte count");
      c.expect(',', "after the byte count");
      int64_t category = c.integer("category");
      c.expect(']', "after the category (4 numbers per event)");
      if (action < 1 || action > 4) c.fail("action " + std::to_string(action) + " is not 1..4");
      if (category < 0 || category >= static_cast<int64_t>(kCategories.size())) category = kCategories.size() - 1;
      sink.count_event();
      events.push_back({t, bytes, static_cast<int>(category)});
      if (c.peek(',')) {
        c.expect(',', "");
        continue;
      }
      break;
    }
  }
  c.expect(']', "at the end of the event list");
  if (!c.at_end()) c.fail("text after the event list");
  if (events.empty()) c.fail("no events");
  int64_t first = INT64_MAX;
  for (const auto& e : events)
    if (e.t >= 0) first = std::min(first, e.t);
  if (first == INT64_MAX) first = 0;
  // Pre-existing memory (time -1) is held from the first event on.
  std::stable_sort(events.begin(), events.end(), [&](const Event& a, const Event& b) {
    return std::max(a.t, first) < std::max(b.t, first);
  });
  SampleSeriesRow total_row;
  total_row.device_id = 0;
  total_row.metric = "memory_allocated";
  total_row.unit = "bytes";
  total_row.format = std::string(kMemoryTimelineFormat);
  size_t total = sink.add_sample_series(total_row);
  std::array<size_t, kCategories.size()> per{};
  std::array<bool, kCategories.size()> used{};
  for (const auto& e : events) used[static_cast<size_t>(e.category)] = true;
  for (size_t k = 0; k < kCategories.size(); ++k) {
    if (!used[k]) continue;
    SampleSeriesRow r = total_row;
    r.metric = "memory_" + std::string(kCategories[k]);
    per[k] = sink.add_sample_series(r);
  }
  std::array<int64_t, kCategories.size()> held{};
  int64_t sum = 0;
  for (size_t i = 0; i < events.size();) {
    int64_t t = std::max(events[i].t, first);
    std::array<bool, kCategories.size()> touched{};
    // Every event at one time first, so that a version bump's -bytes/+bytes pair leaves no dip.
    for (; i < events.size() && std::max(events[i].t, first) == t; ++i) {
      // Byte counts are whatever the file says: the running sums stop at the int64 limits.
      add_saturating(held[static_cast<size_t>(events[i].category)], events[i].bytes);
      add_saturating(sum, events[i].bytes);
      touched[static_cast<size_t>(events[i].category)] = true;
    }
    sink.add_sample(total, t, static_cast<double>(sum));
    for (size_t k = 0; k < kCategories.size(); ++k)
      if (touched[k]) sink.add_sample(per[k], t, static_cast<double>(held[k]));
  }
  DeviceRow d;
  d.device_id = 0;
  sink.add_device(d);
}

}  // namespace samples

bool MemoryTimelineImporter::sniff(std::string_view head, bool) const {
  size_t i = 0;
  auto blanks = [&] {
    while (i < head.size() && std::isspace(static_cast<unsigned char>(head[i]))) ++i;
  };
  blanks();
  if (i >= head.size() || head[i] != '[') return false;
  ++i;
  blanks();
  if (i >= head.size() || head[i] != '[') return false;
  ++i;
  blanks();
  return i < head.size() && (head[i] == '-' || std::isdigit(static_cast<unsigned char>(head[i])));
}

ImportResult MemoryTimelineImporter::import(const std::string& path, TraceModel& model, const ImportOptions&) const {
  TraceInfo info;
  info.path = path;
  info.format = std::string(kMemoryTimelineFormat);
  info.framework = "pytorch";
  info.clock = "epoch";
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (!ec) info.file_bytes = static_cast<int64_t>(size);
  std::string text = samples::read_text(path);
  FactSink sink(model, info);
  samples::read_memory_timeline(text, path, sink);
  sink.commit();
  return {0, sink.rows_written(), sink.issue_count()};
}

}  // namespace proflint
