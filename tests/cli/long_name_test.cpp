// tests/cli/long_name_test.cpp — issue 20, defect 3: a kernel name of ~30,000 characters crashed
// every command (stack overflow in std::regex_search on the Tensor Core patterns), Kineto and nsys
// alike. These tests generate the reproducers themselves — a Kineto trace and an nsys export (the
// repository's fixture with one kernel name replaced) carrying names of 3*10^4 and 10^6 characters —
// and require `analyze` to exit 0, the long names to keep their Tensor Core verdict, and names over
// 64 KiB to be cut with a counted import issue.
#include <gtest/gtest.h>

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "tests/support/run.hpp"

namespace fs = std::filesystem;
using proflint::testing::run_proflint;
using proflint::testing::shell_quote;

namespace {

class LongNames : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("proflint_long_names_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // One aten::mm launching one kernel with the given name, and a second, ordinary kernel.
  std::string kineto_trace(const std::string& file, const std::string& kernel_name) {
    nlohmann::json events = nlohmann::json::array();
    events.push_back({{"ph", "X"}, {"cat", "cpu_op"}, {"name", "aten::mm"}, {"pid", 1}, {"tid", 1}, {"ts", 100}, {"dur", 50},
                      {"args", {{"External id", 1}}}});
    events.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"pid", 1}, {"tid", 1}, {"ts", 110},
                      {"dur", 5}, {"args", {{"correlation", 7}, {"External id", 1}}}});
    events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", kernel_name}, {"pid", 0}, {"tid", 7}, {"ts", 120}, {"dur", 30},
                      {"args", {{"device", 0}, {"stream", 7}, {"correlation", 7}, {"External id", 1}}}});
    events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "ampere_sgemm_128x64_nn"}, {"pid", 0}, {"tid", 7}, {"ts", 160},
                      {"dur", 10}, {"args", {{"device", 0}, {"stream", 7}}}});
    nlohmann::json trace = {{"schemaVersion", 1}, {"traceEvents", events}};
    auto path = (dir_ / file).string();
    std::ofstream(path, std::ios::binary) << trace.dump();
    return path;
  }

  // The nsys fixture with the name of its most frequent kernel replaced by `kernel_name`.
  std::string nsys_export(const std::string& file, const std::string& kernel_name) {
    auto path = dir_ / file;
    fs::copy_file(proflint::testing::source_dir() / "fixtures" / "sample_train.nsys.sqlite", path,
                  fs::copy_options::overwrite_existing);
    SQLite::Database db(path.string(), SQLite::OPEN_READWRITE);
    int64_t id = db.execAndGet("SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY demangledName "
                               "ORDER BY count(*) DESC LIMIT 1")
                     .getInt64();
    SQLite::Statement up(db, "UPDATE StringIds SET value = ? WHERE id = ?");
    up.bind(1, kernel_name);
    up.bind(2, id);
    EXPECT_EQ(up.exec(), 1);
    db.exec("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET shortName = demangledName WHERE demangledName = " + std::to_string(id));
    return path.string();
  }

  // Kernel names (length, is_tensor_core) and import issues (kind, count) of a saved store.
  struct Saved {
    std::vector<std::pair<int64_t, int>> kernels;  // longest name first
    int64_t longest_rows = 0;                      // kernel rows carrying the longest name
    std::map<std::string, int64_t> issues;
  };
  Saved read_store(const std::string& db_path) {
    SQLite::Database db(db_path);
    Saved s;
    SQLite::Statement k(db, "SELECT length(name), max(is_tensor_core), count(*) FROM kernel GROUP BY name "
                            "ORDER BY length(name) DESC");
    while (k.executeStep()) {
      if (s.kernels.empty()) s.longest_rows = k.getColumn(2).getInt64();
      s.kernels.emplace_back(k.getColumn(0).getInt64(), k.getColumn(1).getInt());
    }
    SQLite::Statement i(db, "SELECT kind, count FROM import_issue");
    while (i.executeStep()) s.issues[i.getColumn(0).getString()] = i.getColumn(1).getInt64();
    return s;
  }

  fs::path dir_;
};

// A name made of text that nearly matches many Tensor Core rows, ending in a marker that decides.
std::string long_name(size_t length, const std::string& tail) {
  std::string s = "void ";
  while (s.size() + tail.size() < length) s += "Cijk_MI1x_sgem_conver_flash_e4m_";
  s.resize(length - tail.size());
  return s + tail;
}

TEST_F(LongNames, KinetoTraceWithHugeKernelNamesAnalyzes) {
  for (size_t length : {size_t{30000}, size_t{1000000}}) {
    SCOPED_TRACE(length);
    auto trace = kineto_trace("long_" + std::to_string(length) + ".json", long_name(length, "_wgmma_kernel"));
    auto db = (dir_ / ("long_" + std::to_string(length) + ".db")).string();
    auto r = run_proflint("analyze " + shell_quote(trace) + " --db " + shell_quote(db) + " --format json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto saved = read_store(db);
    ASSERT_EQ(saved.kernels.size(), 2u);
    if (length <= 65536) {
      // Kept whole; the marker at its very end is found, so it counts as Tensor Core.
      EXPECT_EQ(saved.kernels[0], (std::pair<int64_t, int>{static_cast<int64_t>(length), 1}));
      EXPECT_EQ(saved.issues.count("kernel_name_truncated"), 0u);
    } else {
      // Cut to 64 KiB (the name is ASCII, so exactly 65536 bytes); the marker is gone with the rest.
      EXPECT_EQ(saved.kernels[0], (std::pair<int64_t, int>{65536, 0}));
      EXPECT_EQ(saved.issues["kernel_name_truncated"], 1);
    }
    EXPECT_EQ(saved.kernels[1], (std::pair<int64_t, int>{22, 0}));  // ampere_sgemm_128x64_nn
    // Every command works on it: summary and report read the same saved store.
    EXPECT_EQ(run_proflint("summary " + shell_quote(db) + " --format json").exit_code, 0);
  }
}

TEST_F(LongNames, NsysExportWithHugeKernelNamesAnalyzes) {
  for (size_t length : {size_t{30000}, size_t{1000000}}) {
    SCOPED_TRACE(length);
    auto exported = nsys_export("long_" + std::to_string(length) + ".sqlite", long_name(length, "_hmma_kernel"));
    auto db = (dir_ / ("long_nsys_" + std::to_string(length) + ".db")).string();
    auto r = run_proflint("analyze " + shell_quote(exported) + " --db " + shell_quote(db) + " --format json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto saved = read_store(db);
    ASSERT_FALSE(saved.kernels.empty());
    int64_t kept = std::min<int64_t>(static_cast<int64_t>(length), 65536);
    EXPECT_EQ(saved.kernels[0].first, kept);
    EXPECT_EQ(saved.kernels[0].second, length <= 65536 ? 1 : 0);
    // One issue kind, counted once per kernel row whose name was cut.
    if (length <= 65536)
      EXPECT_EQ(saved.issues.count("kernel_name_truncated"), 0u);
    else
      EXPECT_EQ(saved.issues["kernel_name_truncated"], saved.longest_rows);
    EXPECT_GT(saved.longest_rows, 1);
  }
}

}  // namespace
