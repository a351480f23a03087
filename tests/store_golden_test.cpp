// tests/store_golden_test.cpp — golden tests of the fact store, one query each under
// tests/store_golden/ (as Perfetto's diff tests): a change to import or derivation shows up as a
// diff of the CSV a query prints, not only as a changed finding.
//
// <name>.sql holds header comments, then one SELECT:
//   -- fixture: fixtures/a.json.gz [fixtures/b.json.gz ...]   (required; paths from the repo root)
//   -- args: --key-node ProfilerStep                            (optional, passed to ingest/query)
//   -- any other comment: what the query covers and which values were checked by hand
// One fixture is queried directly (`proflint query FIXTURE SQL`, read-only); several are first
// ingested together into a temporary store (`proflint ingest ... --db`), as the ranks of a job.
// <name>.csv is the expected output. PROFLINT_UPDATE_GOLDENS=1 rewrites it: read the diff.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/run.hpp"

namespace fs = std::filesystem;
using namespace proflint::testing;

namespace {

std::vector<std::string> query_names() {
  std::vector<std::string> names;
  const auto dir = source_dir() / "tests" / "store_golden";
  if (!fs::exists(dir)) return names;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".sql") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

struct GoldenQuery {
  std::vector<std::string> fixtures;
  std::string args;
  std::string sql;  // without the comment lines
};

GoldenQuery parse(const std::string& text) {
  GoldenQuery q;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("-- fixture:", 0) == 0) {
      std::istringstream words(line.substr(11));
      for (std::string w; words >> w;) q.fixtures.push_back(w);
    } else if (line.rfind("-- args:", 0) == 0) {
      q.args = line.substr(8);
    } else if (line.rfind("--", 0) != 0) {
      q.sql += line + "\n";
    }
  }
  while (!q.sql.empty() && (q.sql.back() == '\n' || q.sql.back() == ' ' || q.sql.back() == ';')) q.sql.pop_back();
  return q;
}

class StoreGolden : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST_P(StoreGolden, QueryMatchesExpectedCsv) {
  const auto dir = source_dir() / "tests" / "store_golden";
  const GoldenQuery q = parse(slurp((dir / (GetParam() + ".sql")).string()));
  ASSERT_FALSE(q.fixtures.empty()) << GetParam() << ".sql needs a `-- fixture:` line";
  ASSERT_FALSE(q.sql.empty()) << GetParam() << ".sql holds no query";
  for (const auto& f : q.fixtures) ASSERT_TRUE(fs::exists(source_dir() / f)) << "missing fixture " << f;

  std::string store = q.fixtures.front();
  const std::string tmp_db =
      ::testing::TempDir() + "store_golden_" + std::to_string(getpid()) + "_" + GetParam() + ".db";
  if (q.fixtures.size() > 1) {
    std::string files;
    for (const auto& f : q.fixtures) files += " " + shell_quote(f);
    fs::remove(tmp_db);
    auto ingest =
        run_proflint_in(source_dir().string(), "ingest" + files + " " + q.args + " --db " + shell_quote(tmp_db));
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    store = tmp_db;
  }
  auto r = run_proflint_in(source_dir().string(), "query " + shell_quote(store) + " " +
                                                      (q.fixtures.size() > 1 ? std::string() : q.args + " ") +
                                                      shell_quote(q.sql));
  fs::remove(tmp_db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto expected = dir / (GetParam() + ".csv");
  if (std::getenv("PROFLINT_UPDATE_GOLDENS")) {
    std::ofstream(expected, std::ios::binary) << r.out;
    GTEST_SKIP() << "rewrote " << expected;
  }
  ASSERT_TRUE(fs::exists(expected)) << "missing " << expected << "; run with PROFLINT_UPDATE_GOLDENS=1";
  EXPECT_EQ(slurp(expected.string()), r.out) << "the fact store changed under tests/store_golden/" << GetParam()
                                             << ".sql; review the diff, then PROFLINT_UPDATE_GOLDENS=1 to accept";
}

INSTANTIATE_TEST_SUITE_P(Queries, StoreGolden, ::testing::ValuesIn(query_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(StoreGolden, EnoughQueries) { EXPECT_GE(query_names().size(), 10u) << "tests/store_golden/ lost its queries"; }
