// tests/gate/compare_cli_test.cpp — `proflint compare` end to end: the synthetic acceptance pairs
// (a real 3% slowdown under noise, noisy unchanged runs, different GPUs), several files per side,
// folders, saved stores, the real ResNet-50 DataLoader pair, rank-0 vs rank-1, every output
// format, and bad input (exit 2 with a message naming the file).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "tests/support/run.hpp"

namespace fs = std::filesystem;
using namespace proflint::testing;
using json = nlohmann::json;

namespace {

std::string fx(const std::string& name) { return shell_quote(fixture_path("compare/" + name).string()); }

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::path(::testing::TempDir()) / ("proflint_compare_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// A proflint.toml with `body`, returned as a --config argument.
std::string config_with(const std::string& name, const std::string& body) {
  fs::path p = temp_dir(name) / "proflint.toml";
  std::ofstream(p) << body;
  return "--config " + shell_quote(p.string());
}

json compare_json(const std::string& args, int expected_exit) {
  auto r = run_proflint("compare --format json " + args);
  EXPECT_EQ(r.exit_code, expected_exit) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  return json::parse(r.out);
}

const json& metric(const json& j, const std::string& name, const std::string& scope = "") {
  for (const auto& m : j["metrics"])
    if (m["name"] == name && m["scope"] == scope) return m;
  static const json none;
  ADD_FAILURE() << "no metric " << name;
  return none;
}

int significant_metrics(const json& j) {
  int n = 0;
  for (const auto& m : j["metrics"]) n += m["status"] != "unchanged";
  return n;
}

}  // namespace

TEST(CompareCli, ThreePercentSlowdownFailsATwoPercentBudgetAndPassesFive) {
  std::string two = config_with("two", "[gate.budgets]\niteration_time = \"2%\"\n");
  auto failed = compare_json(two + " " + fx("base.json.gz") + " " + fx("slow3.json.gz"), 1);
  EXPECT_EQ(failed["verdict"], "regression");
  const auto& it = metric(failed, "iteration_time");
  EXPECT_EQ(it["status"], "regression");
  EXPECT_NEAR(it["relative"].get<double>(), 0.033, 0.005);
  EXPECT_LT(it["statistics"]["p_value"].get<double>(), 0.001);
  EXPECT_EQ(it["statistics"]["baseline_n"], 40);
  EXPECT_TRUE(it["statistics"]["exact"].get<bool>());
  EXPECT_GT(it["statistics"]["median_ratio_ci"][0].get<double>(), 1.0);

  auto passed = compare_json(fx("base.json.gz") + " " + fx("slow3.json.gz"), 0);  // default budget 5%
  EXPECT_EQ(passed["verdict"], "pass");
  EXPECT_EQ(metric(passed, "iteration_time")["status"], "unchanged");
  EXPECT_NE(metric(passed, "iteration_time")["reason"].get<std::string>().find("within the 5% budget"),
            std::string::npos);
}

TEST(CompareCli, NoisyUnchangedRunsPass) {
  std::string two = config_with("noisy", "[gate]\nmax_regression = \"2%\"\n");
  auto j = compare_json(two + " " + fx("base.json.gz") + " " + fx("noisy_same.json.gz"), 0);
  EXPECT_EQ(j["verdict"], "pass");
  EXPECT_GT(metric(j, "iteration_time")["statistics"]["p_value"].get<double>(), 0.05);
  EXPECT_EQ(significant_metrics(j), 0);
}

TEST(CompareCli, DifferentGpusAreInconclusiveAndStrictFails) {
  auto j = compare_json(fx("base.json.gz") + " " + fx("h100.json.gz"), 0);
  EXPECT_EQ(j["verdict"], "inconclusive");
  EXPECT_FALSE(j["comparable"].get<bool>());
  ASSERT_EQ(j["incomparable"].size(), 1u);
  EXPECT_NE(j["incomparable"][0].get<std::string>().find("different GPUs"), std::string::npos);
  auto strict = run_proflint("compare --strict " + fx("base.json.gz") + " " + fx("h100.json.gz"));
  EXPECT_EQ(strict.exit_code, 1) << strict.err;
  EXPECT_NE(strict.out.find("verdict: inconclusive (exit 1)"), std::string::npos) << strict.out;
}

TEST(CompareCli, RepeatedRunsArePooledAndFoldersWork) {
  std::string two = config_with("runs", "[gate.budgets]\niteration_time = \"2%\"\n");
  auto j = compare_json(two + " --baseline " + fx("base.json.gz") + " " + fx("noisy_same.json.gz") + " --candidate " +
                            fx("slow3.json.gz") + " " + fx("slow3_run2.json.gz"),
                        1);
  const auto& it = metric(j, "iteration_time");
  EXPECT_EQ(it["statistics"]["baseline_n"], 80);
  EXPECT_EQ(it["statistics"]["candidate_n"], 80);
  EXPECT_FALSE(it["statistics"]["exact"].get<bool>());  // 160 samples: normal approximation
  EXPECT_EQ(j["baseline"]["paths"].size(), 2u);

  fs::path base = temp_dir("base_runs"), cand = temp_dir("cand_runs");
  fs::copy_file(fixture_path("compare/base.json.gz"), base / "run1.json.gz");
  fs::copy_file(fixture_path("compare/noisy_same.json.gz"), base / "run2.json.gz");
  std::ofstream(base / "README.txt") << "not a profile: ignored";
  fs::copy_file(fixture_path("compare/slow3.json.gz"), cand / "run1.json.gz");
  fs::copy_file(fixture_path("compare/slow3_run2.json.gz"), cand / "run2.json.gz");
  auto from_dirs = compare_json(two + " " + shell_quote(base.string()) + " " + shell_quote(cand.string()), 1);
  EXPECT_EQ(metric(from_dirs, "iteration_time")["statistics"]["baseline_n"], 80);
  EXPECT_EQ(from_dirs["baseline"]["paths"].size(), 2u);
  EXPECT_EQ(metric(from_dirs, "iteration_time")["statistics"]["p_value"], it["statistics"]["p_value"]);
}

TEST(CompareCli, SavedStoreSideGivesTheSameResultAsTheProfile) {
  fs::path db = temp_dir("store") / "base.db";
  auto ingest = run_proflint("ingest " + fx("base.json.gz") + " --db " + shell_quote(db.string()));
  ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
  auto from_profile = compare_json(fx("base.json.gz") + " " + fx("slow3.json.gz"), 0);
  auto from_store = compare_json(shell_quote(db.string()) + " " + fx("slow3.json.gz"), 0);
  EXPECT_EQ(from_profile["metrics"], from_store["metrics"]);
  EXPECT_EQ(from_profile["verdict"], from_store["verdict"]);
}

TEST(CompareCli, RanksOfOneJobAreCombinedByTheSlowestRank) {
  std::string both =
      fixture_path("ddp2_rank0.json.gz").string() + "' '" + fixture_path("ddp2_rank1_slow30.json.gz").string();
  // Three steps per rank: below the default of 5, so inconclusive; with min_iterations = 2 a pass.
  auto few = compare_json("--baseline '" + both + "' --candidate '" + both + "'", 0);
  EXPECT_EQ(few["verdict"], "inconclusive");
  std::string two = config_with("ranks", "[gate]\nmin_iterations = 2\n");
  auto j = compare_json(two + " --baseline '" + both + "' --candidate '" + both + "'", 0);
  EXPECT_EQ(j["verdict"], "pass");
  EXPECT_EQ(metric(j, "iteration_time")["statistics"]["baseline_n"], 3);
  bool noted = false;
  for (const auto& n : j["notes"]) noted |= n.get<std::string>().find("ranks form one job") != std::string::npos;
  EXPECT_TRUE(noted) << j["notes"].dump();
  // Per-rank GPU metrics exist next to the job-wide ones.
  bool per_rank = false;
  for (const auto& m : j["metrics"]) per_rank |= m["scope"].get<std::string>().rfind("rank 1 GPU", 0) == 0;
  EXPECT_TRUE(per_rank);
}

TEST(CompareCli, ResNet50MoreDataLoaderWorkersIsAnImprovement) {
  REALDATA_OR_SKIP(w0, "kineto/tb_resnet50_v100_workers0.pt.trace.json.gz");
  REALDATA_OR_SKIP(w4, "kineto/tb_resnet50_v100_workers4.pt.trace.json.gz");
  auto j = compare_json(shell_quote(w0) + " " + shell_quote(w4), 0);
  EXPECT_EQ(j["verdict"], "improvement");
  EXPECT_EQ(metric(j, "iteration_time")["status"], "improvement");
  const auto& dl = metric(j, "breakdown.dataloader");
  EXPECT_EQ(dl["status"], "improvement");
  EXPECT_LT(dl["candidate"].get<double>(), 0.05 * dl["baseline"].get<double>());
  bool gone = false;
  for (const auto& f : j["findings"]) gone |= f["id"] == "dataloader-stall" && f["change"] == "gone";
  EXPECT_TRUE(gone);
  // workers4's first step (181.6 ms against a 126.5 ms median) is dropped as warm-up.
  EXPECT_EQ(metric(j, "iteration_time")["statistics"]["candidate_n"], 5);
  // By hand (python3 on the raw ProfilerStep# events): workers0 steps 176.078, 173.992, 176.918,
  // 181.259, 176.468, 164.261 ms -> median 176.273 ms; workers4 after the warm-up step 123.884,
  // 126.824, 126.272, 163.461, 116.146 ms -> median 126.272 ms. The slowest candidate step
  // (163.461) is faster than the fastest baseline step (164.261): complete separation, and the
  // exact two-sided p enumerated over all C(11, 5) = 462 splits is 2/462 = 0.004329.
  const auto& it = metric(j, "iteration_time");
  EXPECT_NEAR(it["baseline"].get<double>(), 176.273e6, 1e3);
  EXPECT_NEAR(it["candidate"].get<double>(), 126.272e6, 1e3);
  EXPECT_NEAR(it["statistics"]["p_value"].get<double>(), 2.0 / 462, 1e-12);
  EXPECT_EQ(it["statistics"]["exact"], true);
  // Improvement is exit 0 and names no regression; the swap is below.
  for (const auto& m : j["metrics"]) EXPECT_FALSE(m["status"] == "regression" && m["gating"].get<bool>()) << m["name"];
}

TEST(CompareCli, IterationRangeAppliesToBothSidesAndTurnsWarmupDetectionOff) {
  REALDATA_OR_SKIP(w0, "kineto/tb_resnet50_v100_workers0.pt.trace.json.gz");
  REALDATA_OR_SKIP(w4, "kineto/tb_resnet50_v100_workers4.pt.trace.json.gz");
  auto j = compare_json("--iter-start 1 --iter-stop 5 " + shell_quote(w0) + " " + shell_quote(w4), 0);
  const auto& it = metric(j, "iteration_time");
  EXPECT_EQ(it["statistics"]["baseline_n"], 5);
  EXPECT_EQ(it["statistics"]["candidate_n"], 5);
  EXPECT_NEAR(it["statistics"]["p_value"].get<double>(), 2.0 / 252, 1e-12);  // complete separation, 5 vs 5
  EXPECT_TRUE(j["notes"].empty()) << j["notes"].dump();
  auto none = run_proflint("compare --iter-start 9 " + shell_quote(w0) + " " + shell_quote(w4));
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("select none of its 6 iterations"), std::string::npos) << none.err;
}

TEST(CompareCli, ResNet50FewerDataLoaderWorkersIsARegression) {
  REALDATA_OR_SKIP(w0, "kineto/tb_resnet50_v100_workers0.pt.trace.json.gz");
  REALDATA_OR_SKIP(w4, "kineto/tb_resnet50_v100_workers4.pt.trace.json.gz");
  auto j = compare_json(shell_quote(w4) + " " + shell_quote(w0), 1);
  EXPECT_EQ(j["verdict"], "regression");
  EXPECT_EQ(j["exit_code"], 1);
  const auto& it = metric(j, "iteration_time");
  EXPECT_EQ(it["status"], "regression");
  EXPECT_LT(it["statistics"]["p_value"].get<double>(), 0.05);
  EXPECT_NEAR(it["relative"].get<double>(), 0.396, 0.01);
  EXPECT_EQ(metric(j, "breakdown.dataloader")["status"], "regression");
  bool added = false;
  for (const auto& f : j["findings"]) added |= f["id"] == "dataloader-stall" && f["change"] == "new";
  EXPECT_TRUE(added);
}

TEST(CompareCli, TraceComparedWithItselfPassesWithNoSignificantChange) {
  REALDATA_OR_SKIP(w0, "kineto/tb_resnet50_v100_workers0.pt.trace.json.gz");
  auto j = compare_json(shell_quote(w0) + " " + shell_quote(w0), 0);
  EXPECT_EQ(j["verdict"], "pass");
  EXPECT_EQ(significant_metrics(j), 0);
  EXPECT_TRUE(j["findings"].empty());
  EXPECT_DOUBLE_EQ(metric(j, "iteration_time")["statistics"]["p_value"].get<double>(), 1.0);
}

TEST(CompareCli, PeakMemoryFromAllocatorTotalsOrFromDeltas) {
  // The sample records the allocator's totals: peak_memory. Kineto traces of 2021 carry only
  // per-event deltas: peak_memory_growth (the running sum's peak above the capture start).
  auto j = compare_json(shell_quote(fixture_path("sample_train.json.gz").string()) + " " +
                            shell_quote(fixture_path("sample_train.json.gz").string()),
                        0);
  EXPECT_EQ(j["verdict"], "pass");
  EXPECT_GT(metric(j, "peak_memory")["baseline"].get<double>(), 1e9);
  EXPECT_EQ(metric(j, "peak_memory")["unit"], "bytes");
  REALDATA_OR_SKIP(w0, "kineto/tb_resnet50_v100_workers0.pt.trace.json.gz");
  REALDATA_OR_SKIP(w4, "kineto/tb_resnet50_v100_workers4.pt.trace.json.gz");
  auto r = compare_json(shell_quote(w0) + " " + shell_quote(w4), 0);
  const auto& growth = metric(r, "peak_memory_growth");
  EXPECT_NEAR(growth["baseline"].get<double>(), 2.6 * 1024 * 1024 * 1024, 0.1 * 1024 * 1024 * 1024);
  EXPECT_EQ(growth["status"], "unchanged");
  for (const auto& m : r["metrics"]) EXPECT_NE(m["name"], "peak_memory");
}

// Regression test: turning AMP on moved 17 ms per step onto Tensor Cores (breakdown.kernel_tc
// 0 -> 17.1 ms) and the gate called the 85% faster candidate a regression.
TEST(CompareCli, EnablingAmpIsAnImprovementNotATensorCoreTimeRegression) {
  auto j = compare_json(shell_quote(fixture_path("sample_train.json.gz").string()) + " " +
                            shell_quote(fixture_path("sample_amp.json.gz").string()),
                        0);
  EXPECT_EQ(j["verdict"], "improvement");
  EXPECT_EQ(metric(j, "iteration_time")["status"], "improvement");
  EXPECT_FALSE(metric(j, "breakdown.kernel_tc")["gating"].get<bool>());
  EXPECT_EQ(metric(j, "breakdown.kernel")["status"], "improvement");  // compute time per step, TC or not
  EXPECT_EQ(metric(j, "tensor_core_share")["status"], "improvement");
  EXPECT_EQ(metric(j, "tc_eligible_not_tc_time")["status"], "improvement");
  bool amp_gone = false;
  for (const auto& f : j["findings"]) amp_gone |= f["id"] == "amp-not-used" && f["change"] == "gone";
  EXPECT_TRUE(amp_gone);
}

TEST(CompareCli, NsysTraceComparedWithItselfPasses) {
  REALDATA_OR_SKIP(p, "nsys/nsys2026_h100_2gpu_1s.sqlite");
  auto j = compare_json(shell_quote(p) + " " + shell_quote(p), 0);
  EXPECT_EQ(j["verdict"], "pass");
  EXPECT_EQ(significant_metrics(j), 0);
  EXPECT_TRUE(j["findings"].empty());
  EXPECT_EQ(metric(j, "gpu_utilization", "GPU 0")["delta"], 0.0);  // two GPUs: per-GPU metrics too
}

TEST(CompareCli, HtaRankZeroAgainstRankOneIsInconclusiveWithTheReason) {
  REALDATA_OR_SKIP(r0, "kineto/hta_sampled_rank-0.json.gz");
  REALDATA_OR_SKIP(r1, "kineto/hta_sampled_rank-1.json.gz");
  auto j = compare_json(shell_quote(r0) + " " + shell_quote(r1), 0);
  EXPECT_EQ(j["verdict"], "inconclusive");
  // Rank 1 computes ~29% more per step than rank 0 (sharded embeddings): a difference between
  // workers of one job, not a change of the code, so the sides are not comparable.
  EXPECT_FALSE(j["comparable"].get<bool>());
  ASSERT_EQ(j["incomparable"].size(), 1u);
  EXPECT_NE(j["incomparable"][0].get<std::string>().find("different ranks (baseline rank 0, candidate rank 1)"),
            std::string::npos);
  const auto& it = metric(j, "iteration_time");
  EXPECT_EQ(it["status"], "inconclusive");
  EXPECT_NE(it["reason"].get<std::string>().find("2 on the baseline, 2 on the candidate"), std::string::npos);
  EXPECT_EQ(metric(j, "gpu_utilization")["status"], "unchanged");  // ~2 pp, within 5 pp
  // 2 steps a side: the components cannot be tested either; they are shown, with the reason.
  const auto& kernel = metric(j, "breakdown.kernel");
  EXPECT_EQ(kernel["status"], "unchanged");
  EXPECT_NE(kernel["reason"].get<std::string>().find("too few iterations to test"), std::string::npos);
  EXPECT_GT(kernel["relative"].get<double>(), 0.2);  // rank 1's +29% GPU compute is still visible
  auto strict = run_proflint("compare --strict " + shell_quote(r0) + " " + shell_quote(r1));
  EXPECT_EQ(strict.exit_code, 1);
}

// Regression test: an MLP profile against a ResNet profile on the same GPU was called a 622%
// iteration-time regression; two different programs are not a before/after pair.
TEST(CompareCli, AnotherModelIsNotComparable) {
  REALDATA_OR_SKIP(mlp, "kineto/param_linear_fp32.json.gz");
  REALDATA_OR_SKIP(resnet, "kineto/param_resnet.json.gz");
  auto j = compare_json(shell_quote(mlp) + " " + shell_quote(resnet), 0);
  EXPECT_EQ(j["verdict"], "inconclusive");
  ASSERT_EQ(j["incomparable"].size(), 1u);
  EXPECT_NE(j["incomparable"][0].get<std::string>().find("different workloads"), std::string::npos);
}

TEST(CompareCli, MarkdownPutsTheVerdictFirstAndCollapsesDetails) {
  auto r = run_proflint("compare --format markdown " + fx("base.json.gz") + " " + fx("h100.json.gz"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("### :grey_question: proflint compare: inconclusive - not comparable: different GPUs", 0), 0u)
      << r.out.substr(0, 200);
  EXPECT_NE(r.out.find("**Not comparable:**"), std::string::npos);
  EXPECT_NE(r.out.find("<details><summary>All "), std::string::npos);
  EXPECT_LT(r.out.find("**Not comparable:**"), r.out.find("<details>"));
}

TEST(CompareCli, JunitHasOneCasePerMetricAndFailuresForRegressions) {
  std::string two = config_with("junit", "[gate.budgets]\niteration_time = \"2%\"\n");
  fs::path out = temp_dir("junit_out") / "gate.xml";
  auto r = run_proflint("compare --format junit -o " + shell_quote(out.string()) + " " + two + " " +
                        fx("base.json.gz") + " " + fx("slow3.json.gz"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::string xml = slurp(out.string());
  auto j = compare_json(two + " " + fx("base.json.gz") + " " + fx("slow3.json.gz"), 1);
  size_t cases = 0;
  for (size_t p = 0; (p = xml.find("<testcase ", p)) != std::string::npos; ++p) ++cases;
  EXPECT_EQ(cases, 1 + j["metrics"].size() + j["findings"].size());
  EXPECT_NE(xml.find("<testsuites name=\"proflint compare: regression - 1 metric(s) regressed: iteration time +3.3%"),
            std::string::npos)
      << xml.substr(0, 300);
  EXPECT_NE(xml.find("\" tests=\"" + std::to_string(cases) + "\" failures=\"1\""), std::string::npos) << xml.substr(0, 300);
  EXPECT_NE(xml.find("<testcase classname=\"proflint.compare.metrics\" name=\"iteration_time\">\n      <failure "),
            std::string::npos);
  EXPECT_EQ(xml.rfind("</testsuites>\n"), xml.size() - 14);
}

TEST(CompareCli, BadInputIsAUsageErrorNamingTheFile) {
  auto missing = run_proflint("compare " + fx("base.json.gz") + " /nonexistent/cand.json");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/nonexistent/cand.json"), std::string::npos) << missing.err;
  auto one = run_proflint("compare " + fx("base.json.gz"));
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_NE(one.err.find("two profiles"), std::string::npos) << one.err;
  auto both =
      run_proflint("compare " + fx("base.json.gz") + " " + fx("slow3.json.gz") + " --baseline " + fx("base.json.gz"));
  EXPECT_EQ(both.exit_code, 2);
  fs::path empty = temp_dir("empty_side");
  auto folder = run_proflint("compare " + shell_quote(empty.string()) + " " + fx("slow3.json.gz"));
  EXPECT_EQ(folder.exit_code, 2);
  EXPECT_NE(folder.err.find("no profile in this baseline folder"), std::string::npos) << folder.err;
  fs::path truncated = temp_dir("trunc") / "cut.json";
  std::ofstream(truncated) << "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"ts\": 1, \"dur\": ";
  auto cut = run_proflint("compare " + fx("base.json.gz") + " " + shell_quote(truncated.string()));
  EXPECT_EQ(cut.exit_code, 2);
  EXPECT_NE(cut.err.find(truncated.string()), std::string::npos) << cut.err;
  EXPECT_TRUE(cut.out.empty());
}

TEST(CompareCli, BadGateConfigNamesTheLine) {
  auto bad_budget = run_proflint(
      "compare " + config_with("bad1", "[gate]\nalpha = 0.05\n[gate.budgets]\nwall_time = \"5 parsecs\"\n") + " " +
      fx("base.json.gz") + " " + fx("slow3.json.gz"));
  EXPECT_EQ(bad_budget.exit_code, 2);
  EXPECT_NE(bad_budget.err.find("proflint.toml:4:13: budget '5 parsecs' not understood"), std::string::npos)
      << bad_budget.err;
  auto wrong_unit = run_proflint("compare " + config_with("bad2", "[gate.budgets]\ngpu_utilization = \"2 ms\"\n") +
                                 " " + fx("base.json.gz") + " " + fx("slow3.json.gz"));
  EXPECT_EQ(wrong_unit.exit_code, 2);
  EXPECT_NE(wrong_unit.err.find("cannot apply to gpu_utilization (a share)"), std::string::npos) << wrong_unit.err;
  auto typo = run_proflint("compare " + config_with("bad3", "[gate]\nalpah = 0.01\n") + " " + fx("base.json.gz") + " " +
                           fx("slow3.json.gz"));
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("unknown key 'gate.alpah' (did you mean 'alpha'?)"), std::string::npos) << typo.err;
  auto range = run_proflint("compare " + config_with("bad4", "[gate]\nalpha = 2\n") + " " + fx("base.json.gz") + " " +
                            fx("slow3.json.gz"));
  EXPECT_EQ(range.exit_code, 2);
  EXPECT_NE(range.err.find("'gate.alpha' must be a number from"), std::string::npos) << range.err;
}

// docs/compare.md documents the JSON schema; every key the command writes must appear there, so
// the documentation cannot drift from the output.
TEST(CompareCli, EveryJsonKeyIsDocumented) {
  std::string doc = slurp((source_dir() / "docs" / "compare.md").string());
  ASSERT_FALSE(doc.empty());
  std::string two =
      config_with("doc", "[gate.budgets]\niteration_time = \"2%\"\n[gate]\nfail_on_new_findings = \"low\"\n");
  // fail_on_new_findings = "low": the candidate's new channels-last-not-used (low) fails the gate.
  auto j = compare_json(two + " " + shell_quote(fixture_path("sample_train.json.gz").string()) + " " +
                            shell_quote(fixture_path("sample_amp.json.gz").string()),
                        1);
  EXPECT_FALSE(j["findings"].empty());
  std::function<void(const json&, const std::string&)> walk = [&](const json& node, const std::string& where) {
    if (node.is_array()) {
      if (!node.empty()) walk(node.front(), where + "[]");
      return;
    }
    if (!node.is_object()) return;
    for (const auto& [key, value] : node.items()) {
      EXPECT_NE(doc.find("\"" + key + "\""), std::string::npos) << where << "." << key << " is not in docs/compare.md";
      walk(value, where + "." + key);
    }
  };
  walk(j, "");
  EXPECT_FALSE(j["metrics"].empty());
}

// A/A on generated fixtures (scripts/gen_profile.py, docs/fixtures.md): two seeds of the same job
// (base, noisy_same) and noisy_same's seed with one step slowed 2.5x at the start, middle or end.
// Every pair, both orders: never a regression.
TEST(CompareCli, GeneratedAaPairsWithOutlierStepsNeverRegress) {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"base.json.gz", "noisy_same.json.gz"},
      {"base.json.gz", "same_outlier_start.json.gz"},
      {"base.json.gz", "same_outlier_middle.json.gz"},
      {"base.json.gz", "same_outlier_end.json.gz"},
      {"noisy_same.json.gz", "same_outlier_start.json.gz"},
      {"noisy_same.json.gz", "same_outlier_middle.json.gz"},
      {"noisy_same.json.gz", "same_outlier_end.json.gz"},
  };
  int runs = 0;
  for (const auto& [x, y] : pairs)
    for (int order = 0; order < 2; ++order) {
      auto r = run_proflint("compare --format json " + (order ? fx(y) + " " + fx(x) : fx(x) + " " + fx(y)));
      ++runs;
      EXPECT_EQ(r.exit_code, 0) << x << " / " << y << " order " << order << "\n" << r.err;
      auto j = json::parse(r.out);
      EXPECT_NE(j["verdict"], "regression") << x << " / " << y << ": " << j["headline"];
      for (const auto& m : j["metrics"])
        EXPECT_FALSE(m["status"] == "regression" && m["gating"].get<bool>()) << m["name"] << ": " << m["reason"];
    }
  EXPECT_EQ(runs, 14);
}

// The outlier step alone must not make a component look slower even when components gate: the
// mean idle per step jumps, the per-step samples' medians and ranks do not.
TEST(CompareCli, OutlierStepDoesNotMakeOptedInComponentsRegress) {
  std::string all = config_with("optin", "[gate]\ngating = [\"*\"]\n");
  for (const char* where : {"start", "middle", "end"}) {
    auto j = compare_json(all + " " + fx("noisy_same.json.gz") + " " + fx(std::string("same_outlier_") + where + ".json.gz"), 0);
    EXPECT_NE(j["verdict"], "regression") << where << ": " << j["headline"];
  }
}

TEST(CompareCli, UniformSlowdownWithAnOutlierStepIsCaught) {
  // slow10_outlier: every duration +10% and one step 2.5x in the middle.
  auto j = compare_json(fx("base.json.gz") + " " + fx("slow10_outlier.json.gz"), 1);
  EXPECT_EQ(j["verdict"], "regression");
  const auto& it = metric(j, "iteration_time");
  EXPECT_EQ(it["status"], "regression");
  EXPECT_GT(it["relative"].get<double>(), 0.05);
  EXPECT_LT(it["statistics"]["p_adjusted"].get<double>(), 0.05);
  // The swap is an improvement.
  EXPECT_EQ(compare_json(fx("slow10_outlier.json.gz") + " " + fx("base.json.gz"), 0)["verdict"], "improvement");
}

TEST(CompareCli, NewTwentyMillisecondOpPerStepIsCaughtAndExplained) {
  // rn18_base: a 57.8 ms step; the candidate adds one op per step whose kernel runs 20 ms.
  auto r = run_proflint("compare " + fx("rn18_base.json.gz") + " " + fx("rn18_extra_op_20ms.json.gz"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("proflint compare: REGRESSION - 1 metric(s) regressed: iteration time +3", 0), 0u) << r.out;
  // The why section names the new op (explains, does not gate by default).
  EXPECT_NE(r.out.find("why (explains the verdict"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  op_type.extra_op: "), std::string::npos) << r.out;
  auto j = compare_json(fx("rn18_base.json.gz") + " " + fx("rn18_extra_op_20ms.json.gz"), 1);
  const auto& op = metric(j, "op_type.extra_op");
  EXPECT_EQ(op["status"], "regression");
  EXPECT_FALSE(op["gating"].get<bool>());
  EXPECT_NEAR(op["delta"].get<double>(), 20e6, 2e6);  // ~20 ms per step (kernel +-4% jitter)
}

// Two fixed windows of the same job without iteration markers, holding 30 and 45 steps: whatever
// the gate compares, never a regression in either order.
TEST(CompareCli, WindowsWithoutMarkersHoldingDifferentWorkNeverRegress) {
  for (int order = 0; order < 2; ++order) {
    std::string a = fx("window_30steps.json.gz"), b = fx("window_45steps.json.gz");
    auto r = run_proflint("compare --format json " + (order ? b + " " + a : a + " " + b));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto j = json::parse(r.out);
    EXPECT_NE(j["verdict"], "regression") << j["headline"];
    for (const auto& m : j["metrics"]) EXPECT_NE(m["name"], "wall_time");
  }
}

TEST(CompareCli, InconclusiveStatesItsReasonFirstInEveryFormat) {
  std::string args = fx("base.json.gz") + " " + fx("h100.json.gz");
  auto text = run_proflint("compare " + args);
  EXPECT_EQ(text.out.rfind("proflint compare: INCONCLUSIVE - not comparable: different GPUs", 0), 0u) << text.out;
  auto md = run_proflint("compare --format markdown " + args);
  EXPECT_EQ(md.out.rfind("### :grey_question: proflint compare: inconclusive - not comparable: different GPUs", 0), 0u)
      << md.out;
  auto junit = run_proflint("compare --format junit " + args);
  auto second_line = junit.out.substr(junit.out.find('\n') + 1);
  EXPECT_EQ(second_line.rfind("<testsuites name=\"proflint compare: inconclusive - not comparable: different GPUs", 0),
            0u)
      << junit.out;
  auto j = compare_json(args, 0);
  EXPECT_EQ(j["headline"].get<std::string>().rfind("not comparable: different GPUs", 0), 0u);
}

TEST(CompareCli, OneRunPerSideSaysRunToRunVarianceIsUnmeasured) {
  auto j = compare_json(fx("base.json.gz") + " " + fx("noisy_same.json.gz"), 0);
  bool said = false;
  for (const auto& c : j["caveats"]) said |= c.get<std::string>().find("run-to-run variance is unmeasured") != std::string::npos;
  EXPECT_TRUE(said) << j["caveats"].dump();
  const auto& stats = metric(j, "iteration_time")["statistics"];
  EXPECT_GT(stats["detectable_change"].get<double>(), 0);
  EXPECT_EQ(stats["baseline_runs"], 1);
  // Two runs per side: the between-run test is reported.
  auto two = compare_json("--baseline " + fx("base.json.gz") + " " + fx("noisy_same.json.gz") + " --candidate " +
                              fx("slow3.json.gz") + " " + fx("slow3_run2.json.gz"),
                          0);
  EXPECT_FALSE(metric(two, "iteration_time")["statistics"]["run_p_value"].is_null());
}

TEST(CompareCli, HistoryBaselineFolderJudgesTheCandidateAgainstPastRuns) {
  fs::path dir = temp_dir("history");
  for (const char* f : {"base.json.gz", "noisy_same.json.gz", "same_outlier_middle.json.gz"})
    fs::copy_file(fixture_path("compare/" + std::string(f)), dir / f);
  auto same = run_proflint("compare --format json --baseline " + shell_quote(dir.string()) + " " +
                           fx("same_outlier_end.json.gz"));
  EXPECT_EQ(same.exit_code, 0) << same.err;
  auto j = json::parse(same.out);
  EXPECT_EQ(j["mode"], "history");
  EXPECT_EQ(j["verdict"], "pass") << j["headline"];
  EXPECT_EQ(metric(j, "iteration_time")["history"]["runs"], 3);
  auto slow = run_proflint("compare --format json --baseline " + shell_quote(dir.string()) + " " +
                           fx("slow10_outlier.json.gz"));
  EXPECT_EQ(slow.exit_code, 1) << slow.err;
  EXPECT_EQ(json::parse(slow.out)["verdict"], "regression");
}

TEST(CompareCli, TextShowsFullKernelNames) {
  auto r = run_proflint("compare " + fx("rn18_base.json.gz") + " " + fx("rn18_extra_op_20ms.json.gz"));
  // The full demangled name with its parameter list, never cut.
  EXPECT_NE(r.out.find("kernel.void proflint_gen::extra_op_kernel<float>(float*, long)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("..."), std::string::npos) << r.out;
}
