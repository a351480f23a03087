// tests/detectors/import_issues_test.cpp — import-issues lists what the importer skipped or approximated.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/analysis.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint::testing;

namespace {

const char* kId = "import-issues";

// One usable kernel plus three broken events: a negative duration, an unknown category (twice),
// an event without a timestamp.
std::string write_broken(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / "proflint_import_issues_test";
  std::filesystem::create_directories(dir);
  auto path = dir / name;
  std::ofstream(path) << R"({"schemaVersion": 1, "traceEvents": [
{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1000,"dur":10,"args":{"device":0,"stream":7,"correlation":1}},
{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":2000,"dur":-5,"args":{"device":0,"stream":7,"correlation":2}},
{"ph":"X","cat":"mystery","name":"m","pid":1,"tid":1,"ts":3000,"dur":5},
{"ph":"X","cat":"mystery","name":"m","pid":1,"tid":1,"ts":4000,"dur":5},
{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"dur":5}
]}
)";
  return path.string();
}

}  // namespace

TEST(ImportIssues, SilentOnCleanTrace) {
  EXPECT_TRUE(findings_of(analyze_with(fixture_path("sample_train.json.gz").string(), kId), kId).empty());
}

TEST(ImportIssues, ListsKindsCountsAndWhatTheyMean) {
  auto f = findings_of(analyze_with(write_broken("broken.json"), kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_TRUE(f[0].diagnostic);
  EXPECT_EQ(f[0].evidence["issues"], 4);
  EXPECT_EQ(f[0].evidence["skipped"], 4);
  EXPECT_EQ(f[0].evidence["events_read"], 5);
  const auto& kinds = f[0].evidence["kinds"];
  ASSERT_EQ(kinds.size(), 3u);
  EXPECT_EQ(kinds[0]["kind"], "unknown_category");  // most frequent first
  EXPECT_EQ(kinds[0]["count"], 2);
  EXPECT_EQ(kinds[0]["example"], "mystery");
  EXPECT_NE(f[0].problem.find("2 × unknown_category — events of an unknown category were skipped"), std::string::npos)
      << f[0].problem;
  EXPECT_NE(f[0].problem.find("negative_duration"), std::string::npos);
  EXPECT_NE(f[0].problem.find("event_without_ts"), std::string::npos);
}

TEST(ImportIssues, MaxKindsShortensTheTextNotTheEvidence) {
  auto f = findings_of(analyze_with(write_broken("broken_short.json"), kId, {{"max_kinds", 1}}), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["kinds"].size(), 3u);
  EXPECT_NE(f[0].problem.find("and 2 more kinds"), std::string::npos) << f[0].problem;
}

TEST(ImportIssues, H100ExportWithoutGpuTable) {
  REALDATA_OR_SKIP(path, "nsys/nsys2026_h100_2gpu_1s.sqlite");
  auto f = findings_of(analyze_with(path, kId), kId);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].evidence["issues"], 2);
  EXPECT_EQ(f[0].evidence["skipped"], 0);
  EXPECT_EQ(f[0].evidence["kinds"][0]["kind"], "device_inferred_from_kernel_names");
  EXPECT_NE(f[0].recommendation.find("No timing data is missing"), std::string::npos);
}
