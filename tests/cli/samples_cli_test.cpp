// tests/cli/samples_cli_test.cpp — sampling logs through the binary (issue 17): bad input in each
// format ends in one line naming the file and line, exit 2; a log beside the trace of the same
// job is shifted onto the trace's clock.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tests/support/run.hpp"

namespace fs = std::filesystem;
using proflint::testing::fixture_path;
using proflint::testing::run_proflint;
using proflint::testing::shell_quote;

namespace {

class SamplesCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("proflint_samples_cli_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& content) {
    auto p = dir_ / name;
    std::ofstream(p, std::ios::binary) << content;
    return p.string();
  }
  void expect_failure_at(const std::string& content, const std::string& name, const std::string& place,
                         const std::string& what) {
    std::string path = write(name, content);
    auto r = run_proflint("summary " + shell_quote(path));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(path + ": " + place), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  fs::path dir_;
};

}  // namespace

TEST_F(SamplesCli, BadInputInEachFormatNamesFileAndLine) {
  expect_failure_at("timestamp, index, utilization.gpu [%]\n2025/01/01 00:00:00.000, 0\n", "a.csv", "line 2",
                    "expected 3 cells as in the header, found 2");
  expect_failure_at("2025/01/01 00:00:00.000, 0, 5 %\n", "b.csv", "line 1", "without a header line");
  expect_failure_at("# gpu pwr sm\n# Idx W %\n  zero 70 50\n", "c.txt", "line 3", "unreadable GPU id");
  expect_failure_at("#Entity GPUTL\nID\nGPU x 5\n", "d.txt", "line 3", "unreadable GPU id");
  expect_failure_at("[[1, 2, 3, 4], [5, 9, 3, 4]]", "e.raw.json", "line 1 (byte", "action 9 is not 1..4");
}

TEST_F(SamplesCli, LogBesideTraceIsShiftedByTheTimeZone) {
  // The log was written by scripts/genprof/make_sample_fixtures.sh in local time UTC+02:00,
  // starting 5 s before the first event of samples/epoch_mlp_trace.json.gz (epoch clock): shifted by exactly -7200 s, its
  // first sample lands 5 s (to the millisecond it was printed with) before the trace's start.
  std::string trace = fixture_path("samples/epoch_mlp_trace.json.gz").string();
  std::string log = fixture_path("samples/nvsmi_epoch_mlp_utc+2.csv").string();
  std::string db = (dir_ / "s.db").string();
  auto r = run_proflint("ingest " + shell_quote(trace) + " " + shell_quote(log) + " --db " + shell_quote(db));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_proflint("query " + shell_quote(db) +
                   " \"SELECT (SELECT COUNT(*) FROM trace), MIN(s.offset_ns), MAX(s.offset_ns), "
                   "MIN(p.ts_ns) - (SELECT start_ns FROM trace) FROM sample_series s JOIN sample_point p "
                   "USING (series_id)\"");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // CSV: a header line, then the row.
  std::string row = r.out.substr(r.out.find('\n') + 1);
  std::vector<int64_t> v;
  size_t pos = 0;
  while (pos < row.size() && row[pos] != '\n') {
    size_t end = row.find_first_of(",\n", pos);
    v.push_back(std::stoll(row.substr(pos, end - pos)));
    pos = end + (row[end] == ',' ? 1 : 0);
  }
  ASSERT_EQ(v.size(), 4u) << r.out;
  EXPECT_EQ(v[0], 1);  // one trace: the log is part of it
  EXPECT_EQ(v[1], -7'200'000'000'000);
  EXPECT_EQ(v[2], -7'200'000'000'000);
  EXPECT_NEAR(static_cast<double>(v[3]) / 1e9, -5.0, 0.002);
  // The same with --sample-offset: the given shift is used as is.
  std::string db2 = (dir_ / "s2.db").string();
  r = run_proflint("ingest " + shell_quote(trace) + " " + shell_quote(log) + " --sample-offset -7201.5 --db " +
                   shell_quote(db2));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_proflint("query " + shell_quote(db2) + " \"SELECT MIN(offset_ns), MAX(offset_ns) FROM sample_series\"");
  EXPECT_NE(r.out.find("-7201500000000,-7201500000000"), std::string::npos) << r.out;
}

// The bundled sample trace (Kineto, monotonic clock + baseTimeNanoseconds) and its nsys twin
// (session clock + TARGET_INFO_SESSION_START_TIME) both run 2026-01-17 13:41:53.6-54.9 UTC
// (python3: baseTimeNanoseconds + min ts; utcEpochNs + first kernel start - systemClockNs). A
// 10 Hz nvidia-smi log written in UTC over 13:41:53.0-56.0 lands on each trace's clock with no
// option and no time-zone assumption.
TEST_F(SamplesCli, LogBesideAMonotonicOrSessionClockTraceIsPlacedByItsRecordedStart) {
  std::string csv = "timestamp, index, utilization.gpu [%], memory.used [MiB]\n";
  for (int i = 0; i <= 30; ++i)
    csv += fmt::format("2026/01/17 13:41:{:02}.{}00, 0, {} %, 1000 MiB\n", 53 + i / 10, i % 10, 50 + i);
  std::string log = write("utc.csv", csv);
  struct Case {
    std::string trace;
    int64_t epoch_of_zero;  // the trace's recorded anchor
  };
  for (const Case& c : {Case{"sample_train.json.gz", 1'768'655'859'837'835'786},
                        Case{"sample_train.nsys.sqlite", 1'768'657'309'687'783'150 - 1'449'849'947'364}}) {
    SCOPED_TRACE(c.trace);
    std::string db = (dir_ / (c.trace + ".db")).string();
    auto r = run_proflint("ingest " + shell_quote(fixture_path(c.trace).string()) + " " + shell_quote(log) + " --db " +
                          shell_quote(db));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_proflint("query " + shell_quote(db) +
                     " --format json \"SELECT (SELECT count(*) FROM trace) AS traces, min(s.offset_ns) AS off, "
                     "min(p.ts_ns) AS first, (SELECT count(*) FROM import_issue WHERE kind IN ('samples_not_aligned', "
                     "'samples_time_zone_assumed')) AS issues FROM sample_series s JOIN sample_point p USING (series_id)\"");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto row = nlohmann::json::parse(r.out)["rows"][0];
    EXPECT_EQ(row[0], 1);  // the log joined the trace
    EXPECT_EQ(row[1].get<int64_t>(), -c.epoch_of_zero);
    // 13:41:53.000 UTC = 1768657313 s since the epoch, on the trace's clock.
    EXPECT_EQ(row[2].get<int64_t>(), 1'768'657'313'000'000'000 - c.epoch_of_zero);
    EXPECT_EQ(row[3], 0);
  }
}

TEST_F(SamplesCli, LogThatOverlapsNothingSaysSo) {
  // A log of another day than the trace: kept on its own clock, with the diagnostic.
  std::string trace = fixture_path("samples/epoch_mlp_trace.json.gz").string();
  std::string log = write("other_day.csv",
                          "timestamp, index, utilization.gpu [%]\n2001/01/01 00:00:00.000, 0, 5 %\n"
                          "2001/01/01 00:00:01.000, 0, 7 %\n");
  std::string db = (dir_ / "o.db").string();
  auto r = run_proflint("ingest " + shell_quote(trace) + " " + shell_quote(log) + " --db " + shell_quote(db));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_proflint("query " + shell_quote(db) +
                   " \"SELECT kind, location FROM import_issue WHERE kind = 'samples_not_aligned'\"");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("samples_not_aligned"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("other_day.csv"), std::string::npos) << r.out;
}
