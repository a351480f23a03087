// tests/export/export_test.cpp — `proflint export`: Chrome trace-event JSON read back by proflint's
// own Kineto importer gives the same GPU work, calls and ops; several ranks become one process
// each on the job clock; Paraver output is well formed and matches a reviewed golden.
#include <gtest/gtest.h>

#include <SQLiteCpp/Statement.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "engine/export/chrome_trace.hpp"
#include "engine/export/paraver.hpp"
#include "engine/export/ranks.hpp"
#include "engine/import/kineto/names.hpp"
#include "engine/import/kineto/numbers.hpp"
#include "engine/pipeline/analyze.hpp"
#include "engine/pipeline/load.hpp"
#include "tests/support/realdata.hpp"
#include "tests/support/run.hpp"

namespace proflint {
namespace {

namespace fs = std::filesystem;
using testing::fixture_path;
using testing::realdata_dir;
using testing::source_dir;

using Interval = std::tuple<int64_t, int64_t>;
using NamedInterval = std::tuple<int64_t, int64_t, std::string>;

std::vector<Interval> intervals(Store& s, const std::string& table) {
  std::vector<Interval> out;
  SQLite::Statement q(s.db(), "SELECT start_ns, dur_ns FROM " + table + " ORDER BY start_ns, dur_ns");
  while (q.executeStep()) out.emplace_back(q.getColumn(0).getInt64(), q.getColumn(1).getInt64());
  return out;
}

// Ops with their name; unassociated ops have no time. `skip_markers`: leave out ops named like a
// step marker (Optimizer.step#..., enumerate(DataLoader)#...): nsys derivation makes them ops when
// emit_nvtx marked them, Kineto's rules read such names as annotations (docs/export.md).
std::vector<NamedInterval> ops(Store& s, bool skip_markers) {
  std::vector<NamedInterval> out;
  SQLite::Statement q(s.db(), "SELECT COALESCE(start_ns, -1), COALESCE(dur_ns, -1), name FROM op");
  while (q.executeStep()) {
    std::string name = q.getColumn(2).getString();
    if (skip_markers && kineto::is_legacy_annotation(name)) continue;
    out.emplace_back(q.getColumn(0).getInt64(), q.getColumn(1).getInt64(), name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string temp_path(const std::string& name) { return ::testing::TempDir() + "proflint_export_" + std::to_string(getpid()) + "_" + name; }

std::string write_chrome(Store& store, const std::string& name, const std::vector<Finding>& findings = {}) {
  std::string path = temp_path(name + ".json");
  std::ofstream f(path, std::ios::binary);
  exporter::write_chrome_trace(store, findings, f);
  f.close();
  return path;
}

// The round trip on one profile: everything the Kineto importer keeps of GPU work, calls and ops.
void expect_round_trip(const std::string& input) {
  Store original = load_inputs({input}, LoadOptions{});
  std::string exported = write_chrome(original, fs::path(input).filename().string());
  Store back = load_inputs({exported}, LoadOptions{});
  for (const char* table : {"kernel", "memcpy", "memset", "api_call"}) {
    auto a = intervals(original, table), b = intervals(back, table);
    EXPECT_EQ(a.size(), b.size()) << table << " count of " << input;
    EXPECT_TRUE(a == b) << table << " start/duration differ after the round trip of " << input;
  }
  bool nsys = input.size() > 7 && input.compare(input.size() - 7, 7, ".sqlite") == 0;
  auto a = ops(original, nsys), b = ops(back, nsys);
  EXPECT_EQ(a.size(), b.size()) << "op count of " << input;
  if (a.size() == b.size()) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] == b[i]) continue;
      ADD_FAILURE() << "first op that differs in " << input << ": " << std::get<2>(a[i]) << " at " << std::get<0>(a[i])
                    << " vs " << std::get<2>(b[i]) << " at " << std::get<0>(b[i]);
      break;
    }
  }
  // Copies keep their direction and memory kinds (parsed back from the Kineto-style name).
  auto kinds = [](Store& s) {
    std::vector<std::string> out;
    SQLite::Statement q(s.db(), "SELECT kind || ':' || COALESCE(src_kind, '') || ':' || COALESCE(dst_kind, '') FROM memcpy ORDER BY start_ns, dur_ns, kind");
    while (q.executeStep()) out.push_back(q.getColumn(0).getString());
    return out;
  };
  EXPECT_TRUE(kinds(original) == kinds(back)) << "memcpy kinds of " << input;
  // proflint's own tracks are not read back as profile data.
  SQLite::Statement issues(back.db(), "SELECT COUNT(*) FROM import_issue WHERE kind = 'unknown_category'");
  issues.executeStep();
  EXPECT_EQ(issues.getColumn(0).getInt64(), 0) << input;
  fs::remove(exported);
}

class ChromeRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(ChromeRoundTrip, KinetoImporterReadsBackTheSameWork) {
  std::string rel = GetParam();
  fs::path path = rel.rfind("realdata/", 0) == 0 ? realdata_dir() / rel.substr(9) : fixture_path(rel);
  if (!fs::exists(path)) GTEST_SKIP() << path << " not found (../shared/realdata is absent): skipped";
  expect_round_trip(path.string());
}

// Every profile of the fixtures and of ../shared/realdata (kineto/ and nsys/; other/ holds
// nvidia-smi logs and a memory timeline, not traces).
std::vector<std::string> round_trip_inputs() {
  std::vector<std::string> out;
  auto is_profile = [](const fs::path& p) {
    std::string name = p.filename().string();
    return name.find(".json") != std::string::npos || p.extension() == ".sqlite";
  };
  for (const auto& e : fs::directory_iterator(source_dir() / "fixtures"))
    if (e.is_regular_file() && is_profile(e.path())) out.push_back(e.path().filename().string());
  for (const char* sub : {"kineto", "nsys"}) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(realdata_dir() / sub, ec))
      if (e.is_regular_file()) out.push_back(std::string("realdata/") + sub + "/" + e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllProfiles, ChromeRoundTrip, ::testing::ValuesIn(round_trip_inputs()), [](const auto& info) {
  std::string name = info.param;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
});

TEST(ChromeRoundTrip, RealdataPresentOrSkippedVisibly) {
  if (!fs::exists(realdata_dir() / "kineto"))
    GTEST_SKIP() << "../shared/realdata is absent: the round trip ran on the fixtures only";
  SUCCEED();
}

// ---- the JSON itself ----

nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

// Kernel starts per pid, read from the text: a double cannot hold an epoch time in nanoseconds,
// and the export writes one event per line with `ts` as exact decimal microseconds.
std::map<int64_t, std::vector<int64_t>> kernel_starts(const std::string& path) {
  std::map<int64_t, std::vector<int64_t>> out;
  std::ifstream f(path);
  std::string line;
  while (std::getline(f, line)) {
    if (line.find("\"cat\":\"kernel\"") == std::string::npos) continue;
    if (!line.empty() && line.back() == ',') line.pop_back();
    auto e = nlohmann::json::parse(line);
    size_t at = line.find("\"ts\":") + 5;
    auto ns = kineto::us_text_to_ns(line.substr(at, line.find(',', at) - at));
    EXPECT_TRUE(ns.has_value()) << line;
    out[e["pid"].get<int64_t>()].push_back(ns.value_or(-1));
  }
  return out;
}

// Merging ranks: one process per rank, named, with each rank's kernels at their time plus the
// rank's clock offset (0 until the job tables say otherwise).
void expect_merged(Store& store, const std::vector<std::string>& inputs) {
  auto views = exporter::rank_views(store);
  ASSERT_EQ(views.size(), inputs.size());
  // Both pairs record distributedInfo ranks 0 and 1 (python3: json.load(f)['distributedInfo']).
  for (size_t i = 0; i < views.size(); ++i) EXPECT_EQ(views[i].rank, static_cast<int64_t>(i));
  std::string path = write_chrome(store, "merged");
  auto doc = read_json(path);
  std::map<int64_t, std::string> process_names;
  auto kernel_ts = kernel_starts(path);  // pid -> kernel starts (ns, job clock)
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") process_names[e["pid"].get<int64_t>()] = e["args"]["name"];
  ASSERT_EQ(process_names.size(), inputs.size());
  for (size_t i = 0; i < views.size(); ++i) {
    const auto& v = views[i];
    int64_t pid = static_cast<int64_t>(i);
    EXPECT_NE(process_names[pid].find("rank " + std::to_string(v.rank)), std::string::npos) << process_names[pid];
    EXPECT_NE(process_names[pid].find(fs::path(inputs[i]).filename().string()), std::string::npos) << process_names[pid];
    std::vector<int64_t> expected;
    SQLite::Statement q(store.db(), "SELECT start_ns FROM kernel WHERE trace_id = ? ORDER BY id");
    q.bind(1, v.trace_id);
    while (q.executeStep()) expected.push_back(q.getColumn(0).getInt64() + v.clock_offset_ns);
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(kernel_ts[pid], expected) << "rank " << v.rank;
  }
  fs::remove(path);
}

void expect_merged(const std::vector<std::string>& inputs) {
  Store store = load_inputs(inputs, LoadOptions{});
  expect_merged(store, inputs);
}

TEST(ChromeExport, MergesTwoDdpRanksOneProcessEach) {
  expect_merged({fixture_path("ddp2_rank0.json.gz").string(), fixture_path("ddp2_rank1_slow30.json.gz").string()});
}

TEST(ChromeExport, MergesHtaSampledRanks) {
  REALDATA_OR_SKIP(r0, "kineto/hta_sampled_rank-0.json.gz");
  REALDATA_OR_SKIP(r1, "kineto/hta_sampled_rank-1.json.gz");
  expect_merged({r0, r1});
}

// The clock offsets of the job tables (schema/0005_jobs.sql, job_rank) move each rank's events:
// here rank 1 is said to run 2.5 ms behind, and its kernels must be written 2.5 ms later.
TEST(ChromeExport, AppliesTheJobClockOffsets) {
  std::vector<std::string> inputs = {fixture_path("ddp2_rank0.json.gz").string(),
                                     fixture_path("ddp2_rank1_slow30.json.gz").string()};
  Store store = load_inputs(inputs, LoadOptions{});
  store.db().exec(
      "CREATE TABLE IF NOT EXISTS job_rank (job_id INTEGER NOT NULL, rank INTEGER NOT NULL, trace_id INTEGER NOT NULL, "
      "pid INTEGER, device_id INTEGER, clock_offset_ns INTEGER NOT NULL DEFAULT 0, offset_residual_ns INTEGER, "
      "PRIMARY KEY (job_id, rank))");
  store.db().exec("DELETE FROM job_rank");
  store.db().exec(
      "INSERT INTO job_rank (job_id, rank, trace_id, clock_offset_ns) SELECT 0, ROW_NUMBER() OVER (ORDER BY trace_id) - 1, "
      "trace_id, CASE WHEN trace_id = (SELECT MAX(trace_id) FROM trace) THEN 2500000 ELSE 0 END FROM trace");
  auto views = exporter::rank_views(store);
  ASSERT_EQ(views.size(), 2u);
  EXPECT_EQ(views[0].clock_offset_ns, 0);
  EXPECT_EQ(views[1].clock_offset_ns, 2'500'000);
  expect_merged(store, inputs);
}

// Tracks, flows, iterations and findings on report_mlp (counted with python3 over the raw file:
// 72 kernels, 9 memcpy, all launched by a cuda_runtime call with a matching correlation id, so
// 81 flows; 3 ProfilerStep# annotations (of its 12 user annotations), so 3 iterations).
TEST(ChromeExport, TracksFlowsIterationsAndFindings) {
  Store store = load_inputs({fixture_path("report_mlp.json.gz").string()}, LoadOptions{});
  AnalysisResult analysis = run_analysis(store, AnalysisOptions{}, detector_registry());
  ASSERT_FALSE(analysis.findings.empty());
  std::string path = write_chrome(store, "mlp", analysis.findings);
  auto doc = read_json(path);
  int64_t flow_s = 0, flow_f = 0, iterations = 0, findings = 0, kernels = 0;
  std::set<std::string> thread_names;
  std::set<int64_t> flow_ids;
  for (const auto& e : doc["traceEvents"]) {
    std::string ph = e["ph"], cat = e.value("cat", "");
    if (ph == "M" && e["name"] == "thread_name") thread_names.insert(e["args"]["name"].get<std::string>());
    if (ph == "s") ++flow_s, flow_ids.insert(e["id"].get<int64_t>());
    if (ph == "f") {
      ++flow_f;
      EXPECT_EQ(e["bp"], "e");
      EXPECT_TRUE(flow_ids.count(e["id"].get<int64_t>())) << "a flow end without its start";
    }
    if (ph == "X" && cat == "kernel") ++kernels;
    if (ph == "X" && cat == "proflint" && e["name"].get<std::string>().rfind("iteration ", 0) == 0) ++iterations;
    if (ph == "X" && cat == "proflint" && e["args"].contains("estimated_savings_ns")) {
      ++findings;
      EXPECT_EQ(e["args"]["id"], e["name"]);
      EXPECT_GE(e["dur"].get<double>(), 0);
    }
  }
  EXPECT_EQ(kernels, 72);
  EXPECT_EQ(flow_s, 81);
  EXPECT_EQ(flow_f, 81);
  EXPECT_EQ(iterations, 3);
  EXPECT_EQ(findings, static_cast<int64_t>(analysis.findings.size()));
  EXPECT_TRUE(thread_names.count("proflint iterations"));
  EXPECT_TRUE(std::any_of(thread_names.begin(), thread_names.end(), [](const std::string& n) { return n.rfind("GPU 0 stream ", 0) == 0; }));
  EXPECT_TRUE(thread_names.count("proflint finding 1: " + analysis.findings[0].id));
  // The first finding's savings are written as the analysis computed them.
  int64_t first = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e.value("cat", "") != "proflint" || !e["args"].contains("position") || e["args"]["position"] != 1) continue;
    ++first;
    EXPECT_EQ(e["name"], analysis.findings[0].id);
    EXPECT_EQ(e["args"]["estimated_savings_ns"].get<int64_t>(), analysis.findings[0].estimated_savings_ns);
  }
  EXPECT_EQ(first, 1);
  fs::remove(path);
}

// ---- Paraver ----

struct ParaverText {
  std::string prv, pcf, row;
};

ParaverText paraver_of(const std::vector<std::string>& inputs, std::vector<Finding>* findings = nullptr) {
  Store store = load_inputs(inputs, LoadOptions{});
  std::vector<Finding> none;
  if (findings) *findings = run_analysis(store, AnalysisOptions{}, detector_registry()).findings;
  std::ostringstream prv, pcf, row;
  exporter::write_paraver(store, findings ? *findings : none, prv, pcf, row);
  return {prv.str(), pcf.str(), row.str()};
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  return out;
}

// The structure Paraver relies on: a header whose thread counts match the .row, records in time
// order naming existing tasks and threads, states that do not overlap on a thread, and event
// values of every named type present in the .pcf.
void expect_well_formed(const ParaverText& t, int64_t* kernel_states) {
  auto lines = split(t.prv, '\n');
  ASSERT_FALSE(lines.empty());
  const std::string& header = lines[0];
  ASSERT_EQ(header.rfind("#Paraver (", 0), 0u) << header;
  size_t open = header.rfind('('), close = header.rfind(')');
  std::vector<int64_t> threads_per_task;
  for (const auto& part : split(header.substr(open + 1, close - open - 1), ',')) threads_per_task.push_back(std::stoll(part));
  int64_t total_threads = 0;
  for (auto n : threads_per_task) total_threads += n;
  EXPECT_NE(t.row.find("LEVEL THREAD SIZE " + std::to_string(total_threads) + "\n"), std::string::npos);
  EXPECT_NE(t.row.find("LEVEL TASK SIZE " + std::to_string(threads_per_task.size()) + "\n"), std::string::npos);
  // Values named in the .pcf per event type.
  std::map<int64_t, std::set<int64_t>> named;
  {
    auto pcf = split(t.pcf, '\n');
    int64_t type = 0;
    bool in_type = false, values = false;
    for (const auto& l : pcf) {
      if (l == "EVENT_TYPE") in_type = true, values = false, type = 0;
      else if (l == "VALUES") values = true;
      else if (l.empty()) in_type = values = false;
      else if (in_type && !values && type == 0) type = std::stoll(l.substr(l.find(' ') + 1));
      else if (in_type && values) named[type].insert(std::stoll(l));
    }
  }
  int64_t last_time = 0;
  std::map<std::pair<int64_t, int64_t>, int64_t> state_end;
  *kernel_states = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    auto f = split(lines[i], ':');
    ASSERT_GE(f.size(), 8u) << lines[i];
    int64_t task = std::stoll(f[3]), thread = std::stoll(f[4]), time = std::stoll(f[5]);
    ASSERT_GE(task, 1);
    ASSERT_LE(task, static_cast<int64_t>(threads_per_task.size()));
    ASSERT_GE(thread, 1);
    ASSERT_LE(thread, threads_per_task[static_cast<size_t>(task - 1)]) << lines[i];
    EXPECT_GE(time, last_time) << "records out of time order at line " << i + 1;
    last_time = time;
    if (f[0] == "1") {
      int64_t end = std::stoll(f[6]);
      EXPECT_GT(end, time) << lines[i];
      auto& prev = state_end[{task, thread}];
      EXPECT_GE(time, prev) << "overlapping states at line " << i + 1;
      prev = end;
      if (f[7] == "1") ++*kernel_states;
    } else if (f[0] == "2") {
      for (size_t k = 6; k + 1 < f.size(); k += 2) {
        int64_t type = std::stoll(f[k]), value = std::stoll(f[k + 1]);
        if (named.count(type) && value != 0) {
          EXPECT_TRUE(named[type].count(value)) << "type " << type << " value " << value;
        }
      }
    } else {
      EXPECT_EQ(f[0], "3") << lines[i];
    }
  }
}

TEST(ParaverExport, WellFormedWithOneKernelStatePerKernel) {
  auto t = paraver_of({fixture_path("report_mlp.json.gz").string()});
  int64_t kernel_states = 0;
  expect_well_formed(t, &kernel_states);
  EXPECT_EQ(kernel_states, 72);  // 72 'kernel' events in the file, none overlapping on its stream
  // States: 72 kernels + 9 gpu_memcpy + 90 cuda_runtime calls; communications: the 81 launches
  // whose GPU work derivation linked to a call (every kernel and copy here).
  auto count_lines = [&](const std::string& prefix) {
    int64_t n = 0;
    for (size_t at = t.prv.find("\n" + prefix); at != std::string::npos; at = t.prv.find("\n" + prefix, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count_lines("1:"), 171);
  EXPECT_EQ(count_lines("3:"), 81);
  // One task, with the main thread (and the backward thread) then the GPU streams.
  EXPECT_NE(t.row.find("LEVEL TASK SIZE 1\nrank 0 (report_mlp.json.gz)\n"), std::string::npos) << t.row;
  EXPECT_NE(t.pcf.find("0 63000006 CUDA kernel\n"), std::string::npos);
}

TEST(ParaverExport, MergesRanksIntoTasks) {
  auto t = paraver_of({fixture_path("ddp2_rank0.json.gz").string(), fixture_path("ddp2_rank1_slow30.json.gz").string()});
  int64_t kernel_states = 0;
  expect_well_formed(t, &kernel_states);
  EXPECT_NE(t.row.find("LEVEL TASK SIZE 2\n"), std::string::npos);
  EXPECT_NE(t.prv.find("\n1:0:1:2:"), std::string::npos) << "no state on the second task";
}

TEST(ParaverExport, NsysExportWellFormed) {
  auto t = paraver_of({fixture_path("sample_train.nsys.sqlite").string()});
  int64_t kernel_states = 0;
  expect_well_formed(t, &kernel_states);
  EXPECT_GT(kernel_states, 0);
  EXPECT_NE(t.pcf.find("0 9003 NVTX pushpop ranges\n"), std::string::npos);
}

// Findings in Paraver: one event type each (9300 + position) on their rank's first row, 1 from the
// start of what they cover to its end, named in the .pcf; the same span as the Chrome trace's
// finding slice (both placed by FindingPlacer), here the 4-rank job whose straggler is rank 2.
TEST(ParaverExport, FindingsAreEventTypesOnTheirRanksRow) {
  std::vector<std::string> inputs;
  for (int r = 0; r < 4; ++r) inputs.push_back(fixture_path("jobs/ddp4_dataloader_r2/rank" + std::to_string(r) + ".json.gz").string());
  std::vector<Finding> findings;
  auto t = paraver_of(inputs, &findings);
  int64_t kernel_states = 0;
  expect_well_formed(t, &kernel_states);
  ASSERT_FALSE(findings.empty());
  // Chrome slices of the same analysis, by position: (pid = task - 1, ts, dur) in µs.
  Store store = load_inputs(inputs, LoadOptions{});
  auto doc = read_json(write_chrome(store, "job4", findings));
  std::map<int64_t, std::tuple<int64_t, double, double>> slices;
  for (const auto& e : doc["traceEvents"])
    if (e.value("cat", "") == "proflint" && e["args"].contains("position"))
      slices[e["args"]["position"].get<int64_t>()] = {e["pid"].get<int64_t>(), e["ts"].get<double>(), e["dur"].get<double>()};
  // Paraver times are ns from the earliest record; the Chrome trace's are µs of job time. Compare
  // durations, and the begin of finding 1 against the other findings' begins.
  auto lines = split(t.prv, '\n');
  std::map<int64_t, std::pair<int64_t, int64_t>> begin_end;  // position -> (begin, end) ns
  std::map<int64_t, int64_t> task_of;
  for (size_t i = 1; i < lines.size(); ++i) {
    auto f = split(lines[i], ':');
    if (f[0] != "2") continue;
    for (size_t k = 6; k + 1 < f.size(); k += 2) {
      int64_t type = std::stoll(f[k]), value = std::stoll(f[k + 1]);
      if (type <= exporter::kPrvFinding || type > exporter::kPrvFinding + exporter::kPrvMaxFindings) continue;
      int64_t position = type - exporter::kPrvFinding;
      EXPECT_EQ(f[4], "1") << "a finding event off its task's first row: " << lines[i];
      task_of[position] = std::stoll(f[3]);
      (value == 1 ? begin_end[position].first : begin_end[position].second) = std::stoll(f[5]);
    }
  }
  ASSERT_EQ(begin_end.size(), findings.size());
  for (const auto& [position, be] : begin_end) {
    SCOPED_TRACE("finding " + std::to_string(position) + " " + findings[static_cast<size_t>(position - 1)].id);
    EXPECT_NE(t.pcf.find("0 " + std::to_string(exporter::kPrvFinding + position) + " proflint finding " + std::to_string(position) + ": " +
                         findings[static_cast<size_t>(position - 1)].id),
              std::string::npos);
    ASSERT_TRUE(slices.count(position));
    auto [pid, ts, dur] = slices[position];
    EXPECT_EQ(task_of[position], pid + 1);
    EXPECT_NEAR(static_cast<double>(be.second - be.first) / 1e3, dur, 0.002);
    EXPECT_NEAR(static_cast<double>(be.first - begin_end.begin()->second.first) / 1e3, ts - std::get<1>(slices.begin()->second), 0.002);
  }
}

// The reviewed golden: tests/golden/export/report_mlp.{prv,pcf,row}. PROFLINT_UPDATE_GOLDENS=1
// rewrites it (read the diff).
TEST(ParaverExport, GoldenOnReportMlp) {
  auto t = paraver_of({fixture_path("report_mlp.json.gz").string()});
  fs::path dir = source_dir() / "tests" / "golden" / "export";
  std::map<std::string, const std::string*> files = {{"prv", &t.prv}, {"pcf", &t.pcf}, {"row", &t.row}};
  if (std::getenv("PROFLINT_UPDATE_GOLDENS")) {
    fs::create_directories(dir);
    for (const auto& [ext, text] : files) std::ofstream(dir / ("report_mlp." + ext), std::ios::binary) << *text;
  }
  for (const auto& [ext, text] : files) {
    std::string expected = testing::slurp((dir / ("report_mlp." + ext)).string());
    EXPECT_EQ(*text, expected) << "report_mlp." << ext << " differs from the golden (PROFLINT_UPDATE_GOLDENS=1 rewrites it)";
  }
}

// ---- the command ----

TEST(ExportCommand, WritesChromeAndParaverFiles) {
  std::string dir = temp_path("cli");
  fs::create_directories(dir);
  std::string input = testing::shell_quote(fixture_path("report_mlp.json.gz").string());
  auto r = testing::run_proflint("export " + input + " --format perfetto -o " + testing::shell_quote(dir + "/t.json"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NO_THROW(read_json(dir + "/t.json"));
  r = testing::run_proflint("export " + input + " --format paraver --no-findings -o " + testing::shell_quote(dir + "/t.prv"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* ext : {".prv", ".pcf", ".row"}) EXPECT_TRUE(fs::exists(dir + "/t" + ext)) << ext;
  // Bad format and unusable target: exit 2, nothing written.
  r = testing::run_proflint("export " + input + " --format paraverr -o " + testing::shell_quote(dir + "/u"));
  EXPECT_EQ(r.exit_code, 2);
  r = testing::run_proflint("export " + input + " --format chrome -o " + testing::shell_quote(dir));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is a directory"), std::string::npos) << r.err;
  r = testing::run_proflint("export " + input + " --format paraver -o -");
  EXPECT_EQ(r.exit_code, 2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace proflint
