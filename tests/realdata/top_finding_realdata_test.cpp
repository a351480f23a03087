// tests/realdata/top_finding_realdata_test.cpp — does proflint's first finding name the problem a
// careful expert names, on every real profile in ../shared/realdata?
//
// tests/realdata/expected_main_problem.tsv holds, per file: the finding ids that name the expert's
// main problem (from the "Expert view" and "Corrections" sections of ../shared/realdata/README.md;
// "-" where there is nothing to fix), the top finding proflint gives today (pinned), and why.
// Two checks:
//   * PinnedTopFindingIsWhatProflintSays (one test per file): the top finding, i.e. the first
//     non-info finding with a saving, of `proflint analyze FILE --format json` equals the pinned
//     one, so any change of a file's verdict fails here and is reviewed.
//     PROFLINT_UPDATE_GOLDENS=1 rewrites the pinned column.
//   * AgreementWithTheExpertDoesNotDrop: over the pinned column, how often the top finding agrees
//     with the expert, overall and on the files with a real problem (at least 90% on both; floors at today's level). A "-" file
//     agrees when proflint's top finding claims less than 5% of the steady-state window (or there
//     is none): a small note on a healthy capture does not mislead.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/run.hpp"

namespace proflint::testing {
namespace {

using json = nlohmann::json;

struct Row {
  std::string file, expected, pinned, why;
};

std::filesystem::path table_path() { return source_dir() / "tests" / "realdata" / "expected_main_problem.tsv"; }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, sep)) out.push_back(part);
  return out;
}

std::vector<Row> read_table() {
  std::vector<Row> rows;
  std::ifstream in(table_path());
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto f = split(line, '\t');
    if (f.size() < 4) continue;
    rows.push_back({f[0], f[1], f[2], f[3]});
  }
  return rows;
}

void write_table(const std::vector<Row>& rows) {
  std::ifstream in(table_path());
  std::vector<std::string> header;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] == '#') header.push_back(line);
  in.close();
  std::ofstream out(table_path());
  for (const auto& h : header) out << h << '\n';
  for (const auto& r : rows) out << r.file << '\t' << r.expected << '\t' << r.pinned << '\t' << r.why << '\n';
}

// "id share" of the top finding ("-" when there is none), e.g. "dataloader-stall 0.231".
std::string top_finding(const std::string& path) {
  RunResult r = run_proflint("analyze " + shell_quote(path) + " --format json");
  if (r.exit_code != 0 && r.exit_code != 1) return "exit-" + std::to_string(r.exit_code);
  json doc = json::parse(r.out, nullptr, false);
  if (doc.is_discarded()) return "bad-json";
  for (const auto& f : doc.value("findings", json::array())) {
    if (f.value("severity", "") == "info") continue;
    if (f.value("estimated_savings_ns", int64_t{0}) <= 0) continue;
    char share[32];
    std::snprintf(share, sizeof share, "%.3f", f.value("savings_share", 0.0));
    return f.value("id", std::string("?")) + " " + share;
  }
  return "-";
}

bool agrees(const Row& row) {
  auto parts = split(row.pinned, ' ');
  std::string id = parts.empty() ? "-" : parts[0];
  double share = parts.size() > 1 ? std::atof(parts[1].c_str()) : 0.0;
  for (const auto& want : split(row.expected, ',')) {
    if (want == id) return true;
    if (want == "-" && (id == "-" || share < 0.05)) return true;
  }
  return false;
}

class TopFinding : public ::testing::TestWithParam<Row> {};

TEST_P(TopFinding, PinnedTopFindingIsWhatProflintSays) {
  const Row& row = GetParam();
  REALDATA_OR_SKIP(path, row.file);
  std::string got = top_finding(path);
  if (std::getenv("PROFLINT_UPDATE_GOLDENS")) {
    auto rows = read_table();
    for (auto& r : rows)
      if (r.file == row.file) r.pinned = got;
    write_table(rows);
    return;
  }
  // Compare the id exactly and the share to the pinned 3 decimals (a verdict, not noise).
  EXPECT_EQ(got, row.pinned) << row.file << ": the top finding changed (expected main problem: " << row.expected
                             << "; " << row.why << "). Review, then PROFLINT_UPDATE_GOLDENS=1.";
}

INSTANTIATE_TEST_SUITE_P(RealData, TopFinding, ::testing::ValuesIn(read_table()), [](const auto& info) {
  std::string name = info.param.file.substr(info.param.file.find('/') + 1);
  name = name.substr(0, name.find('.'));
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
});

TEST(TopFindingTable, AgreementWithTheExpertDoesNotDrop) {
  auto rows = read_table();
  ASSERT_GE(rows.size(), 41u) << "every real profile has a row";
  int agree = 0, problems = 0, problems_agree = 0;
  std::string misses;
  for (const auto& r : rows) {
    bool ok = agrees(r);
    agree += ok;
    bool real_problem = r.expected.rfind("-", 0) != 0;
    problems += real_problem;
    problems_agree += real_problem && ok;
    if (!ok) misses += "\n  " + r.file + ": expected " + r.expected + ", proflint says " + r.pinned;
  }
  // Issue 21 asks for 90% on both counts. Measured now: 38 of 41 files (92.7%) and 19 of 21 problem
  // files (90.5%); the misses print below (hta_alexnet_a100_inference, nsys2020_cudf-groupby,
  // nsys2022_saxpy_mpi_all_tables). The floors are today's level, at or above 90% on both counts.
  EXPECT_GE(agree, 38) << agree << " of " << rows.size() << misses;
  EXPECT_GE(problems_agree, 19) << problems_agree << " of " << problems << " problem files" << misses;
  EXPECT_GE(10 * agree, 9 * static_cast<int>(rows.size())) << "below 90% of the files" << misses;
  EXPECT_GE(10 * problems_agree, 9 * problems) << "below 90% of the problem files" << misses;
  std::printf("top finding agrees with the expert on %d of %zu files, %d of %d files with a real problem%s\n", agree,
              rows.size(), problems_agree, problems, misses.c_str());
}

}  // namespace
}  // namespace proflint::testing
