// tests/unit/import_issue_kinds_test.cpp — the one list of import-issue kinds
// (engine/common/import_issue_kinds.hpp) against the place that documents them
// (docs/detectors/import-issues.md, table "Every kind") and against the source that emits them.
#include "engine/common/import_issue_kinds.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>

#include "tests/support/run.hpp"

namespace fs = std::filesystem;
using namespace proflint;
using proflint::testing::slurp;
using proflint::testing::source_dir;

namespace {

struct DocRow {
  std::string effect, meaning;
};

// The rows of the generated table in the doc page: `code` -> effect, meaning.
std::map<std::string, DocRow> documented() {
  const std::string doc = slurp((source_dir() / "docs/detectors/import-issues.md").string());
  std::map<std::string, DocRow> rows;
  const auto begin = doc.find("<!-- import-issue-kinds:");
  const auto end = doc.find("<!-- /import-issue-kinds -->");
  if (begin == std::string::npos || end == std::string::npos) return rows;
  const std::string table = doc.substr(begin, end - begin);
  static const std::regex row(R"(\| `(\w+)` \| (\w+) \| ([^\n]*) \|\n)");
  for (std::sregex_iterator it(table.begin(), table.end(), row), stop; it != stop; ++it)
    rows[(*it)[1]] = {(*it)[2], (*it)[3]};
  return rows;
}

}  // namespace

TEST(ImportIssueKinds, EveryKindIsDocumentedAndEveryDocumentedKindExists) {
  const auto rows = documented();
  ASSERT_FALSE(rows.empty()) << "docs/detectors/import-issues.md lost its generated table";
  for (const auto& k : import_issue::kAll) {
    auto it = rows.find(std::string(k.code));
    ASSERT_NE(it, rows.end()) << k.code << " is not documented: run scripts/import_issue_kinds.py --write";
    EXPECT_EQ(it->second.effect, k.effect == import_issue::Effect::skipped ? "skipped" : "approximated") << k.code;
    EXPECT_EQ(it->second.meaning, std::string(k.meaning)) << k.code;
  }
  for (const auto& [code, row] : rows)
    EXPECT_NE(import_issue::find(code), nullptr) << code << " is documented but not in import_issue_kinds.hpp";
  EXPECT_EQ(rows.size(), std::size(import_issue::kAll));
}

TEST(ImportIssueKinds, CodesAreUniqueAndNamedAsTheirConstant) {
  std::set<std::string_view> seen;
  for (const auto& k : import_issue::kAll) EXPECT_TRUE(seen.insert(k.code).second) << "listed twice: " << k.code;
  static_assert(import_issue::bad_duration == "bad_duration");
  // Run-time checks: GCC's -fsanitize=undefined build (scripts/test.sh) cannot fold a pointer
  // comparison into a member of kAll in a constant expression.
  EXPECT_NE(import_issue::find("data_after_json"), nullptr);
  EXPECT_EQ(import_issue::find("no_such_kind"), nullptr);
}

// No importer or writer spells a kind as a string literal (which a typo would turn into an
// undocumented kind): every add_issue/issue call names its kind through import_issue::. The store
// writer composes per-table kinds (`<table>_time_out_of_range` ...) in three helpers; each table
// name passed to them must make a listed kind.
TEST(ImportIssueKinds, EmittersUseTheConstants) {
  static const std::regex literal_call(R"re(\b(?:add_)?issue\(\s*"(\w+)")re");
  static const std::regex table_arg(R"re(\b(admit_interval|bounded_name|bounded_bytes)\([^;]*?, "(\w+)"\))re");
  const std::map<std::string, std::string> suffix = {
      {"admit_interval", "_time_out_of_range"}, {"bounded_name", "_name_truncated"}, {"bounded_bytes", "_bytes_out_of_range"}};
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(source_dir() / "engine")) {
    if (e.path().extension() != ".cpp") continue;
    ++files;
    const std::string text = slurp(e.path().string());
    for (std::sregex_iterator it(text.begin(), text.end(), literal_call), stop; it != stop; ++it)
      ADD_FAILURE() << e.path() << ": kind \"" << (*it)[1] << "\" as a literal; use import_issue::" << (*it)[1];
    for (std::sregex_iterator it(text.begin(), text.end(), table_arg), stop; it != stop; ++it) {
      const std::string kind = std::string((*it)[2]) + suffix.at((*it)[1]);
      EXPECT_NE(import_issue::find(kind), nullptr)
          << e.path() << ": " << (*it)[0] << " emits " << kind << ", which import_issue_kinds.hpp does not list";
    }
  }
  EXPECT_GT(files, 10);
}
