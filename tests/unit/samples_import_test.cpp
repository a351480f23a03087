// tests/unit/samples_import_test.cpp — the sampling-log readers (engine/import/samples) on small
// inline logs, and the time alignment of a log with a trace (engine/derive/sample_alignment).
// Every expected number is read off the inline text by hand.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <string>

#include "engine/common/error.hpp"
#include "engine/derive/sample_alignment.hpp"
#include "engine/import/samples/sample_text.hpp"
#include "engine/import/samples/samples_importers.hpp"
#include "engine/model/sink.hpp"

namespace proflint {
namespace {

TraceInfo info_of(const char* format) {
  TraceInfo info;
  info.path = "log.txt";
  info.format = format;
  return info;
}

const SampleSeriesFact* series(const TraceModel& m, int64_t device, const std::string& metric) {
  for (const auto& s : m.sample_series)
    if (s.device_id == device && s.metric == metric) return &s;
  return nullptr;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SampleText, ClockTimesOfNvidiaSmiAndDmon) {
  // 2025-05-20 22:24:27.466 UTC = 1747779867.466 s since the epoch (python3 datetime).
  EXPECT_EQ(samples::parse_clock_time("2025/05/20 22:24:27.466"), int64_t{1747779867466000000});
  EXPECT_EQ(samples::parse_clock_time("2025-05-20T22:24:27"), int64_t{1747779867000000000});
  EXPECT_EQ(samples::parse_date_and_time("20250520", "22:24:27"), int64_t{1747779867000000000});
  EXPECT_FALSE(samples::parse_clock_time("2025/13/20 22:24:27"));
  EXPECT_FALSE(samples::parse_clock_time("yesterday"));
}

TEST(SampleText, CellsWithUnitsMissingMarkersAndFlags) {
  auto c = samples::parse_cell("18.03 W");
  EXPECT_EQ(c.kind, samples::Cell::number);
  EXPECT_DOUBLE_EQ(c.value, 18.03);
  EXPECT_EQ(c.unit, "W");
  EXPECT_EQ(samples::parse_cell("[N/A]").kind, samples::Cell::missing);
  EXPECT_EQ(samples::parse_cell("[Not Supported]").kind, samples::Cell::missing);
  EXPECT_EQ(samples::parse_cell("-").kind, samples::Cell::missing);
  EXPECT_DOUBLE_EQ(samples::parse_cell("Not Active").value, 0);
  EXPECT_DOUBLE_EQ(samples::parse_cell("0x0000000000000004").value, 4);
  EXPECT_DOUBLE_EQ(samples::parse_cell("P2").value, 2);
  EXPECT_EQ(samples::parse_cell("12 apples!").kind, samples::Cell::text);
  auto m = samples::map_metric("memory.used", "MiB");
  EXPECT_EQ(m.metric, "memory_used");
  EXPECT_EQ(m.unit, "bytes");
  EXPECT_DOUBLE_EQ(m.scale, 1048576.0);
  EXPECT_EQ(samples::map_metric("SMACT", "").unit, "%");
  EXPECT_DOUBLE_EQ(samples::map_metric("SMACT", "").scale, 100.0);  // DCGM ratios -> percent
  EXPECT_EQ(samples::map_metric("index", "").metric, "");
  EXPECT_EQ(samples::map_metric("fan.speed", "%").metric, "fan_speed");
  EXPECT_EQ(samples::map_metric("clocks_throttle_reasons.hw_slowdown", "").metric, "throttle_hw_slowdown");
  EXPECT_EQ(samples::map_metric("Tensor Active [Throughput %]", "").metric, "tensor_active");
}

TEST(NvsmiCsv, AnyColumnOrderUnitsInCellsNotAvailableCells) {
  // nounits header, units in cells anyway on one column, index last, [N/A] and [Not Supported].
  const std::string text =
      "memory.used, utilization.gpu, timestamp, fan.speed, index\n"
      "100 MiB, 50, 2025/01/01 00:00:00.000, [N/A], 1\n"
      "200 MiB, 70, 2025/01/01 00:00:00.000, [Not Supported], 0\n"
      "300 MiB, 90, 2025/01/01 00:00:01.000, [N/A], 1\n";
  TraceModel m;
  FactSink sink(m, info_of("nvidia-smi-csv"));
  samples::read_nvsmi_csv(text, "log.csv", sink);
  sink.commit();
  const auto* u1 = series(m, 1, "gpu_active");
  ASSERT_NE(u1, nullptr);
  ASSERT_EQ(u1->values.size(), 2u);
  EXPECT_DOUBLE_EQ(u1->values[0], 50);
  EXPECT_DOUBLE_EQ(u1->values[1], 90);
  EXPECT_EQ(u1->ts_ns[1] - u1->ts_ns[0], 1'000'000'000);
  const auto* mem0 = series(m, 0, "memory_used");
  ASSERT_NE(mem0, nullptr);
  EXPECT_DOUBLE_EQ(mem0->values[0], 200.0 * 1048576);
  EXPECT_EQ(series(m, 0, "fan_speed"), nullptr);  // every cell unavailable: no series
  EXPECT_EQ(m.info.clock, "local_time");
  EXPECT_TRUE(m.issues.empty());
}

TEST(NvsmiCsv, InterleavedGpusWithoutIndexAreNumberedByPositionInTheBurst) {
  // 3 GPUs per burst; the second burst straddles a timestamp boundary (.100 / .101), so equal
  // timestamps would group it wrongly. GPU 2 is always at 30 %.
  std::string text = "timestamp, utilization.gpu [%]\n";
  for (int k = 0; k < 6; ++k)
    for (int g = 0; g < 3; ++g) {
      int ms = k * 100 + (k == 1 && g > 0 ? 1 : 0);
      text += "2025/01/01 00:00:00." + std::string(ms < 100 ? (ms < 10 ? "00" : "0") : "") + std::to_string(ms) + ", " +
              std::to_string(10 * (g + 1)) + " %\n";
    }
  TraceModel m;
  FactSink sink(m, info_of("nvidia-smi-csv"));
  samples::read_nvsmi_csv(text, "log.csv", sink);
  for (int g = 0; g < 3; ++g) {
    const auto* s = series(m, g, "gpu_active");
    ASSERT_NE(s, nullptr) << g;
    ASSERT_EQ(s->values.size(), 6u);
    for (double v : s->values) EXPECT_DOUBLE_EQ(v, 10.0 * (g + 1));
  }
  ASSERT_TRUE(m.issues.contains("sample_gpu_by_position"));
  EXPECT_EQ(m.issues.at("sample_gpu_by_position").example, "3 GPUs per burst");
}

TEST(NvsmiCsv, GpusPerBurstFromTheTimeBetweenRows) {
  // 2 GPUs 2 ms apart, samples 100 ms apart.
  std::vector<int64_t> t;
  for (int k = 0; k < 10; ++k) {
    t.push_back(k * 100'000'000LL);
    t.push_back(k * 100'000'000LL + 2'000'000);
  }
  EXPECT_EQ(samples::infer_gpus_per_burst(t), 2);
  std::vector<int64_t> one;
  for (int k = 0; k < 10; ++k) one.push_back(k * 1'000'000'000LL);
  EXPECT_EQ(samples::infer_gpus_per_burst(one), 1);
}

TEST(NvsmiCsv, BadInputNamesTheFileAndLine) {
  auto run = [](const std::string& text) {
    return error_of([&] {
      TraceModel m;
      FactSink sink(m, info_of("nvidia-smi-csv"));
      samples::read_nvsmi_csv(text, "gpu.csv", sink);
    });
  };
  EXPECT_EQ(run("2025/01/01 00:00:00.000, 5 %\n").rfind("gpu.csv: line 1: nvidia-smi CSV without a header line", 0), 0u);
  std::string e = run("timestamp, utilization.gpu [%]\n\n2025/01/01 00:00:00.000\n");
  EXPECT_NE(e.find("gpu.csv: line 3: no readable sample rows"), std::string::npos) << e;
  EXPECT_NE(e.find("expected 2 cells as in the header, found 1"), std::string::npos) << e;
  e = run("timestamp, utilization.gpu [%]\nlast tuesday, 5 %\n");
  EXPECT_NE(e.find("gpu.csv: line 2:"), std::string::npos) << e;
  EXPECT_NE(e.find("unreadable timestamp"), std::string::npos) << e;
  // One bad row among good ones is counted, not fatal.
  TraceModel m;
  FactSink sink(m, info_of("nvidia-smi-csv"));
  samples::read_nvsmi_csv("timestamp, index, utilization.gpu [%]\n2025/01/01 00:00:00.000, 0, 5 %\ngarbage\n"
                          "2025/01/01 00:00:01.000, 0, banana\n",
                          "gpu.csv", sink);
  EXPECT_EQ(m.issues.at("sample_row_unreadable").location.rfind("line 3", 0), 0u);
  EXPECT_EQ(m.issues.at("sample_cell_unreadable").location, "line 4 column utilization.gpu");
}

TEST(Dmon, NvidiaSmiDmonWithDateAndTimeAndRepeatedHeader) {
  const std::string text =
      "#Date       Time        gpu    pwr  gtemp  mtemp     sm    mem   mclk   pclk\n"
      "#YYYYMMDD   HH:MM:SS    Idx      W      C      C      %      %    MHz    MHz\n"
      " 20250101   00:00:00      0     70     40      -     55     20   1593   1410\n"
      " 20250101   00:00:00      1     75     41      -     65     22   1593   1410\n"
      "#Date       Time        gpu    pwr  gtemp  mtemp     sm    mem   mclk   pclk\n"
      "#YYYYMMDD   HH:MM:SS    Idx      W      C      C      %      %    MHz    MHz\n"
      " 20250101   00:00:01      0     90     42      -     95     30   1593   1410\n";
  TraceModel m;
  FactSink sink(m, info_of("nvidia-smi-dmon"));
  EXPECT_EQ(samples::read_dmon(text, "d.txt", sink), kDmonFormat);
  const auto* sm0 = series(m, 0, "gpu_active");
  ASSERT_NE(sm0, nullptr);
  ASSERT_EQ(sm0->values.size(), 2u);
  EXPECT_DOUBLE_EQ(sm0->values[1], 95);
  EXPECT_EQ(sm0->ts_ns[1] - sm0->ts_ns[0], 1'000'000'000);
  EXPECT_DOUBLE_EQ(series(m, 1, "power_draw")->values[0], 75);
  EXPECT_EQ(series(m, 0, "temperature_memory"), nullptr);  // '-' everywhere
  EXPECT_DOUBLE_EQ(series(m, 0, "clock_graphics")->values[0], 1410);
  EXPECT_FALSE(m.issues.contains("sample_times_assumed"));
}

TEST(Dmon, PmonPerProcessAndDcgmiWithoutTimes) {
  const std::string pmon =
      "# gpu         pid   type     sm    mem    enc    dec    command\n"
      "# Idx           #    C/G      %      %      %      %    name\n"
      "    0        4100     C     96     43      -      -    python train.py\n"
      "    1           -     -      -      -      -      -    -\n"
      "    0        4100     C     90     40      -      -    python train.py\n";
  TraceModel m;
  FactSink sink(m, info_of("nvidia-smi-dmon"));
  EXPECT_EQ(samples::read_dmon(pmon, "p.txt", sink), kPmonFormat);
  ASSERT_EQ(m.sample_series.size(), 2u);  // sm and mem of pid 4100 on GPU 0
  EXPECT_EQ(m.sample_series[0].pid, 4100);
  EXPECT_EQ(m.sample_series[0].values.size(), 2u);
  EXPECT_EQ(m.processes.at(0).name, "python train.py");
  EXPECT_TRUE(m.issues.contains("sample_times_assumed"));

  const std::string dcgmi =
      "#Entity   GPUTL  SMACT  TENSO  POWER\n"
      "ID                              W\n"
      "GPU 0     80     0.750  0.125  250.5\n"
      "GPU 1     N/A    0.500  0.000  200.0\n"
      "GPU 0     82     0.800  0.150  251.0\n";
  TraceModel d;
  FactSink dsink(d, info_of("dcgmi-dmon"));
  EXPECT_EQ(samples::read_dmon(dcgmi, "g.txt", dsink), kDcgmiFormat);
  const auto* sm = series(d, 0, "sm_active");
  ASSERT_NE(sm, nullptr);
  ASSERT_EQ(sm->values.size(), 2u);
  EXPECT_DOUBLE_EQ(sm->values[0], 75.0);  // ratio -> %
  EXPECT_EQ(sm->ts_ns[1], 1'000'000'000);  // second sample of GPU 0, one second on
  EXPECT_NEAR(series(d, 0, "tensor_active")->values[1], 15.0, 1e-9);
  EXPECT_EQ(series(d, 1, "gpu_active"), nullptr);
  EXPECT_DOUBLE_EQ(series(d, 1, "power_draw")->values[0], 200.0);
}

TEST(Dmon, BadInputNamesTheLine) {
  std::string e = error_of([] {
    TraceModel m;
    FactSink sink(m, info_of("nvidia-smi-dmon"));
    samples::read_dmon("# gpu pwr sm\n# Idx W %\n  x 70 50\n", "d.txt", sink);
  });
  EXPECT_NE(e.find("d.txt: line 3: no readable sample rows"), std::string::npos) << e;
  EXPECT_NE(e.find("unreadable GPU id 'x'"), std::string::npos) << e;
}

// Numbers a fuzzer wrote (fuzz target pipeline): each once overflowed a conversion or a sum, which
// UBSan reports. A memory size beyond 2^50 bytes stays unknown, a process id beyond 32 bits makes
// the row unreadable, and a module's summed time and a memory timeline's running sum stop at
// INT64_MAX.
TEST(SampleText, NumbersBeyondInt64AreRefusedOrHeldAtTheLimit) {
  TraceModel m;
  FactSink sink(m, info_of("nvidia-smi-csv"));
  samples::read_nvsmi_csv("timestamp, index, memory.total [MiB], utilization.gpu [%]\n"
                          "2025/01/01 00:00:00.000, 0, 8.59599e+77 MiB, 5 %\n"
                          "2025/01/01 00:00:01.000, 1, 81559 MiB, 7 %\n",
                          "gpu.csv", sink);
  ASSERT_EQ(m.devices.size(), 2u);
  for (const auto& d : m.devices) {
    if (d.row.device_id == 0) {
      EXPECT_FALSE(d.row.memory_bytes);
    } else {
      EXPECT_EQ(d.row.memory_bytes, int64_t{81559} << 20);
    }
  }
  EXPECT_EQ(m.issues.at("value_out_of_range").location, "line 2 column memory.total: memory size beyond 2^50 bytes");

  TraceModel p;
  FactSink psink(p, info_of("nvidia-smi-dmon"));
  samples::read_dmon("# gpu pid type sm command\n# Idx # C/G % name\n"
                     "    0 1e30 C 96 python\n    0 4100 C 90 python\n",
                     "p.txt", psink);
  ASSERT_EQ(p.sample_series.size(), 1u);
  EXPECT_EQ(p.sample_series[0].pid, 4100);
  EXPECT_EQ(p.sample_series[0].values.size(), 1u);
  EXPECT_NE(p.issues.at("sample_row_unreadable").location.find("unreadable process id '1e30'"), std::string::npos);

  OperatorSpec spec;
  spec.total_key = "ElapsedTotal";
  std::string log;
  for (int i = 0; i < 12; ++i) log += "ElapsedTotal: 999999999999\n";  // 12 x ~1e18 ns
  TraceModel o;
  FactSink osink(o, info_of("operator-log"));
  samples::read_operator_log(log, "op.log", spec, osink);
  ASSERT_EQ(o.operator_timings.size(), 1u);
  EXPECT_EQ(o.operator_timings[0].row.time_ns, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(o.operator_timings[0].row.count, 12);

  TraceModel t;
  FactSink tsink(t, info_of("torch-memory-timeline"));
  samples::read_memory_timeline("[[1, 1, 9000000000000000000, 0], [1, 1, 9000000000000000000, 0]]", "t.raw.json", tsink);
  const auto* total = series(t, 0, "memory_allocated");
  ASSERT_NE(total, nullptr);
  ASSERT_EQ(total->values.size(), 1u);
  EXPECT_DOUBLE_EQ(total->values[0], static_cast<double>(std::numeric_limits<int64_t>::max()));
}

TEST(MemoryTimeline, EventsAtOneTimeAreAppliedTogether) {
  // Pre-existing 100 B (parameter); at t=10 an activation of 50 and a version bump of the
  // parameter (-100/+100); at t=20 the activation is freed.
  const std::string text = "[[-1, 1, 100, 0], [10, 2, 50, 4], [10, 3, -100, 0], [10, 3, 100, 0], [20, 4, -50, 4]]";
  TraceModel m;
  FactSink sink(m, info_of("torch-memory-timeline"));
  samples::read_memory_timeline(text, "t.raw.json", sink);
  const auto* total = series(m, 0, "memory_allocated");
  ASSERT_NE(total, nullptr);
  ASSERT_EQ(total->values.size(), 2u);  // t=10 (with the pre-existing memory) and t=20
  EXPECT_DOUBLE_EQ(total->values[0], 150);
  EXPECT_DOUBLE_EQ(total->values[1], 100);
  EXPECT_DOUBLE_EQ(series(m, 0, "memory_activation")->values[1], 0);
  std::string e = error_of([] {
    TraceModel bad;
    FactSink s(bad, info_of("torch-memory-timeline"));
    samples::read_memory_timeline("[[1, 2, 3, 4],\n [1, 2, 3]]", "t.raw.json", s);
  });
  EXPECT_NE(e.find("t.raw.json: line 2"), std::string::npos) << e;
  EXPECT_NE(e.find("expected ','"), std::string::npos) << e;
}

TEST(OperatorLog, SpecInTomlOrYamlAndRepeatedKeywordsSummed) {
  // The seed's one-line 'profiler:' block, and the same in TOML.
  auto yaml = samples::parse_operator_spec(
      "profiler: totalTimeStr: \"ROIgeneratorElapsedTime\" opModules: [\"Readinginput\", \"filtering\"] cpurun: False",
      "spec.yaml");
  EXPECT_EQ(yaml.total_key, "ROIgeneratorElapsedTime");
  EXPECT_EQ(yaml.modules, (std::vector<std::string>{"Readinginput", "filtering"}));
  auto toml = samples::parse_operator_spec("name = 'roi'\ntotalTimeStr = \"T\"\nopModules = [\n  \"a\",\n  \"b\"]\n", "spec.toml");
  EXPECT_EQ(toml.name, "roi");
  EXPECT_EQ(toml.modules.size(), 2u);
  std::string e = error_of([] { samples::parse_operator_spec("x = 1\nopModules = [1, 2]\n", "bad.toml"); });
  EXPECT_NE(e.find("bad.toml: line 2: opModules must be a list of quoted keywords"), std::string::npos) << e;

  OperatorSpec spec;
  spec.name = "roi";
  spec.total_key = "ElapsedTotal";
  spec.modules = {"Readinginput", "filtering"};
  // 12:00:01 has colons before the key; only the last ': <ms>' counts. Readinginput twice: 100 + 50.5.
  const std::string log =
      "12:00:01 Readinginput took: 100\n"
      "filtering time (ms): 20.25\n"
      "12:00:02 Readinginput again: 50.5\n"
      "Readinginput: not a number\n"
      "ElapsedTotal: 200\n";
  TraceModel m;
  FactSink sink(m, info_of("operator-log"));
  samples::read_operator_log(log, "op.log", spec, sink);
  ASSERT_EQ(m.operator_timings.size(), 3u);
  EXPECT_FALSE(m.operator_timings[0].row.module);
  EXPECT_EQ(m.operator_timings[0].row.time_ns, 200'000'000);
  EXPECT_EQ(*m.operator_timings[1].row.module, "Readinginput");
  EXPECT_EQ(m.operator_timings[1].row.time_ns, 150'500'000);
  EXPECT_EQ(m.operator_timings[1].row.count, 2);
  EXPECT_EQ(m.operator_timings[1].row.first_line, 1);
  EXPECT_EQ(m.operator_timings[2].row.time_ns, 20'250'000);
  EXPECT_EQ(m.issues.at("operator_log_line_unreadable").location.rfind("line 4:", 0), 0u);
  e = error_of([&] {
    TraceModel none;
    FactSink s(none, info_of("operator-log"));
    samples::read_operator_log("nothing here\nElapsedTotal: soon\n", "op.log", spec, s);
  });
  EXPECT_NE(e.find("op.log: line 2: no line with the spec's keys"), std::string::npos) << e;
}

TEST(SampleAlignment, LocalClockTimesAgainstAnEpochTrace) {
  const int64_t s = 1'000'000'000;
  const int64_t trace0 = 1'750'000'000 * s;
  // A log printed in UTC+02:00 covering the trace: its times read as UTC are 2 h late.
  int64_t log0 = trace0 - 10 * s + 2 * 3600 * s;
  auto a = align_samples(log0, log0 + 60 * s, "local_time", trace0, trace0 + 5 * s, "epoch", std::nullopt);
  EXPECT_TRUE(a.aligned);
  EXPECT_TRUE(a.by_time_zone);
  EXPECT_EQ(a.offset_ns, -2 * 3600 * s);
  EXPECT_EQ(a.overlap_ns, 5 * s);
  EXPECT_NE(a.note.find("UTC+02:00"), std::string::npos) << a.note;
  // Overlapping as read: no shift.
  auto same = align_samples(trace0 - s, trace0 + 10 * s, "local_time", trace0, trace0 + 5 * s, "epoch", std::nullopt);
  EXPECT_TRUE(same.aligned);
  EXPECT_EQ(same.offset_ns, 0);
  // A given offset is used as is, and said not to overlap when it does not.
  auto given = align_samples(log0, log0 + 60 * s, "local_time", trace0, trace0 + 5 * s, "epoch", -3600 * s);
  EXPECT_FALSE(given.aligned);
  EXPECT_EQ(given.offset_ns, -3600 * s);
  EXPECT_NE(given.note.find("do not overlap"), std::string::npos);
  // Days apart: nothing overlaps.
  auto far = align_samples(log0 + 86400 * s * 3, log0 + 86400 * s * 3 + 60 * s, "local_time", trace0, trace0 + 5 * s,
                           "epoch", std::nullopt);
  EXPECT_FALSE(far.aligned);
  // A log without clock times cannot be related to an nsys session clock.
  auto rel = align_samples(0, 60 * s, "relative", 0, 5 * s, "session", std::nullopt);
  EXPECT_FALSE(rel.aligned);
  EXPECT_NE(rel.note.find("--sample-offset"), std::string::npos);
}

// A trace on a monotonic (Kineto with baseTimeNanoseconds) or session clock (nsys) that records
// where its zero sits on the epoch: the log is aligned on the epoch and the offset brought back to
// the trace's clock; an nsys export's recorded UTC offset is used before any search.
TEST(SampleAlignment, AnchoredClocksArePlacedOnTheEpoch) {
  const int64_t s = 1'000'000'000;
  const int64_t base = 1'768'655'859'837'835'786;  // epoch ns of the trace clock's zero
  const int64_t trace0 = 1'453'816 * s, trace1 = trace0 + 2 * s;  // monotonic: ~17 days of uptime
  // A log in UTC over the trace's epoch time, from 3 s before to 10 s after.
  const int64_t log0 = base + trace0 - 3 * s;
  auto mono = align_samples(log0, log0 + 13 * s, "local_time", trace0, trace1, "monotonic", std::nullopt,
                            ClockAnchor{base, std::nullopt});
  EXPECT_TRUE(mono.aligned) << mono.note;
  EXPECT_FALSE(mono.by_time_zone);
  EXPECT_EQ(mono.offset_ns, -base);  // log time - base = trace time
  EXPECT_EQ(mono.overlap_ns, 2 * s);
  EXPECT_NE(mono.note.find("monotonic clock placed on UTC"), std::string::npos) << mono.note;
  // The same log printed at UTC-07:00 (times 7 h early): found by the quarter-hour search.
  auto west = align_samples(log0 - 7 * 3600 * s, log0 - 7 * 3600 * s + 13 * s, "local_time", trace0, trace1, "monotonic",
                            std::nullopt, ClockAnchor{base, std::nullopt});
  EXPECT_TRUE(west.aligned);
  EXPECT_TRUE(west.by_time_zone);
  EXPECT_EQ(west.offset_ns, 7 * 3600 * s - base);
  // An nsys export that recorded its local time as UTC-07:00: the same shift, not assumed.
  auto nsys = align_samples(log0 - 7 * 3600 * s, log0 - 7 * 3600 * s + 13 * s, "local_time", trace0, trace1, "session",
                            std::nullopt, ClockAnchor{base, -7 * 3600 * s});
  EXPECT_TRUE(nsys.aligned);
  EXPECT_FALSE(nsys.by_time_zone);
  EXPECT_EQ(nsys.offset_ns, 7 * 3600 * s - base);
  EXPECT_NE(nsys.note.find("capture's local time UTC-07:00"), std::string::npos) << nsys.note;
  // Without an anchor a session clock still needs --sample-offset.
  auto bare = align_samples(log0, log0 + 13 * s, "local_time", trace0, trace1, "session", std::nullopt);
  EXPECT_FALSE(bare.aligned);
  EXPECT_NE(bare.note.find("--sample-offset"), std::string::npos);
  // A given offset wins over the anchor.
  auto given = align_samples(log0, log0 + 13 * s, "local_time", trace0, trace1, "monotonic", -base - s,
                             ClockAnchor{base, std::nullopt});
  EXPECT_EQ(given.offset_ns, -base - s);
}

TEST(SampleAlignment, AttachMovesSeriesAndSaysHow) {
  TraceModel trace, log;
  log.info.path = "gpu.csv";
  SampleSeriesFact f;
  f.metric = "gpu_active";
  f.ts_ns = {100, 200};
  f.values = {1, 2};
  log.sample_series.push_back(f);
  SampleAlignment a;
  a.offset_ns = -50;
  a.aligned = true;
  a.by_time_zone = true;
  a.note = "shifted";
  attach_samples(trace, log, a);
  ASSERT_EQ(trace.sample_series.size(), 1u);
  EXPECT_EQ(trace.sample_series[0].ts_ns[0], 50);
  EXPECT_EQ(trace.sample_series[0].offset_ns, -50);
  EXPECT_EQ(trace.issues.at("samples_time_zone_assumed").location, "gpu.csv");
}

}  // namespace
}  // namespace proflint
