// tests/gate/aa_realdata_test.cpp — the gate must never cry wolf on real captures (issue 13).
//
// A/A on every real profile under ../shared/realdata with at least 6 iterations: one capture is
// split into two sides by the gate's own step filter (ExtractOptions::keep_step) — first half
// against second half, odd steps against even steps — and each pair is compared in both orders.
// The two sides are the same unchanged job, so no pair may be a `regression`. Skipped with a
// message when ../shared/realdata is absent.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "engine/gate/compare.hpp"
#include "engine/pipeline/load.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint;
using namespace proflint::gate;
namespace fs = std::filesystem;

TEST(GateAaRealdata, HalvesAndOddEvenStepsOfEveryRealCaptureNeverRegress) {
  const fs::path root = proflint::testing::realdata_dir();
  if (!fs::exists(root)) GTEST_SKIP() << root << " (../shared/realdata) is absent: A/A on real captures skipped";
  std::vector<fs::path> files;
  for (const char* sub : {"kineto", "nsys"}) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root / sub, ec))
      if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  GateConfig config;  // the defaults a new user gets
  using Split = std::function<bool(size_t, size_t)>;
  const std::vector<std::pair<std::string, std::pair<Split, Split>>> splits = {
      {"first half vs second half",
       {[](size_t i, size_t n) { return i < n / 2; }, [](size_t i, size_t n) { return i >= n / 2; }}},
      {"odd vs even steps", {[](size_t i, size_t) { return i % 2 == 1; }, [](size_t i, size_t) { return i % 2 == 0; }}},
  };
  int pairs = 0, captures = 0;
  std::map<std::string, int> verdicts;
  for (const auto& file : files) {
    std::optional<Store> loaded;
    try {
      loaded.emplace(load_inputs({file.string()}, LoadOptions{}));
    } catch (const std::exception&) {
      continue;  // not a profile this importer reads: not part of the A/A set
    }
    Store& store = *loaded;
    int64_t iterations = 0;
    {
      SQLite::Statement q(store.db(), "SELECT count(*) FROM iteration GROUP BY trace_id ORDER BY 1 LIMIT 1");
      if (q.executeStep()) iterations = q.getColumn(0).getInt64();
    }
    if (iterations < 6) continue;
    ++captures;
    for (const auto& [what, split] : splits) {
      ExtractOptions first, second;
      first.keep_step = split.first;
      second.keep_step = split.second;
      Side a = extract_side(store, first), b = extract_side(store, second);
      for (int order = 0; order < 2; ++order) {
        const Side& base = order == 0 ? a : b;
        const Side& cand = order == 0 ? b : a;
        auto r = compare_sides(base, cand, {}, {}, config, false);
        ++pairs;
        ++verdicts[std::string(verdict_name(r.verdict))];
        EXPECT_NE(r.verdict, Verdict::regression)
            << file.filename() << ", " << what << (order ? " (swapped)" : "") << ": " << r.headline;
        for (const auto& m : r.metrics)
          EXPECT_FALSE(m.status == Status::regression && m.gating)
              << file.filename() << ", " << what << ": " << m.name << " " << m.reason;
      }
    }
  }
  std::string summary;
  for (const auto& [v, n] : verdicts) summary += fmt::format(" {} {}", n, v);
  std::printf("A/A on real captures: %d capture(s) with >= 6 iterations, %d pairs:%s\n", captures, pairs,
              summary.c_str());
  RecordProperty("aa_realdata_pairs", pairs);
  EXPECT_GE(captures, 1) << "no real capture with >= 6 iterations under " << root;
}
