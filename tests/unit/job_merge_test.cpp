// tests/unit/job_merge_test.cpp — ranking's "one finding per job problem" step: the same finding
// on several ranks/GPUs of one job becomes one, with the job-level saving max T - max(T - s).
#include <gtest/gtest.h>

#include "engine/analysis/ranking.hpp"
#include "engine/report/findings_report.hpp"

using namespace proflint;

namespace {

// A memcpy-bound-like finding on one GPU: the problem text carries the GPU and its numbers.
Finding on_gpu(int64_t trace, int64_t device, int64_t savings, int64_t exposed_ns, const std::string& cause = "H2D copies") {
  Finding f;
  f.id = "memcpy-bound";
  f.title = "Memory transfers dominate the GPU timeline";
  f.problem = "GPU " + std::to_string(device) + " spent " + std::to_string(exposed_ns / 1000000) + " ms copying (" +
              cause + ").";
  f.recommendation = "Keep data resident on the GPU; overlap copies with compute.";
  f.estimated_savings_ns = savings;
  f.savings_method = "exposed copy time x 0.5";
  f.scope.trace_id = trace;
  f.scope.device_id = device;
  f.evidence["exposed_copy_ns"] = exposed_ns;
  f.evidence["example_memcpy_id"] = 7 + device;  // a row id: never the key measured value
  f.evidence["window_ns"] = 1000000000;
  return f;
}

}  // namespace

TEST(JobMerge, MaskNumbersKeepsNumbersInsideNames) {
  EXPECT_EQ(mask_numbers("GPU 0 spent 940 ms (97.0%, 1,234 copies)"), "GPU # spent # ms (#%, # copies)");
  EXPECT_EQ(mask_numbers("sm80_xmma_gemm_128x64 and aten::conv2d ×216"), "sm80_xmma_gemm_128x64 and aten::conv2d ×#");
}

// Two GPUs of one nsys trace, 300 and 200 ms of saving, 1 s of steady wall each: the step is
// bound by the GPU that gains least, so the job saves min(300, 200) = 200 ms, not 500 ms.
TEST(JobMerge, SameFindingOnTwoGpusOfOneTraceBecomesOneWithTheSpread) {
  std::vector<Finding> v = {on_gpu(1, 0, 300000000, 600000000), on_gpu(1, 1, 200000000, 400000000)};
  rank_findings(v, {{1, 1000000000}});
  ASSERT_EQ(v.size(), 1u);
  const Finding& m = v[0];
  EXPECT_EQ(m.id, "memcpy-bound");
  EXPECT_EQ(m.estimated_savings_ns, 200000000);
  EXPECT_EQ(m.gross_savings_ns, 200000000);
  EXPECT_DOUBLE_EQ(m.savings_share, 0.2);
  EXPECT_EQ(m.effective_severity, Severity::high);
  EXPECT_EQ(m.scope.trace_id.value_or(-1), 1);
  EXPECT_FALSE(m.scope.device_id.has_value());
  ASSERT_EQ(m.instances.size(), 2u);
  EXPECT_EQ(m.instances[0].scope.device_id.value_or(-1), 0);
  EXPECT_EQ(m.instances[0].estimated_savings_ns, 300000000);
  EXPECT_EQ(m.instances[1].scope.device_id.value_or(-1), 1);
  EXPECT_EQ(m.evidence["where"], nlohmann::ordered_json::array({"GPU 0", "GPU 1"}));
  EXPECT_EQ(m.evidence["bounded_by"], "GPU 1");
  const auto& spread = m.evidence["spread"];
  EXPECT_EQ(spread["estimated_savings_ns"]["min"], 200000000);
  EXPECT_EQ(spread["estimated_savings_ns"]["median"], 250000000);
  EXPECT_EQ(spread["estimated_savings_ns"]["max"], 300000000);
  // The key measured value is the first number of the evidence that is not a row id.
  EXPECT_EQ(spread["exposed_copy_ns"]["min"], 400000000);
  EXPECT_EQ(spread["exposed_copy_ns"]["median"], 500000000);
  EXPECT_EQ(spread["exposed_copy_ns"]["max"], 600000000);
  EXPECT_FALSE(spread.contains("example_memcpy_id"));
  EXPECT_NE(m.problem.find("2 GPUs of one job (GPU 0, GPU 1)"), std::string::npos) << m.problem;
  EXPECT_NE(m.problem.find("estimated saving 200 ms / 250 ms / 300 ms"), std::string::npos) << m.problem;
  EXPECT_NE(m.problem.find("exposed copy 400 ms / 500 ms / 600 ms"), std::string::npos) << m.problem;
  EXPECT_NE(m.problem.find("GPU 1 spent 400 ms copying"), std::string::npos) << m.problem;  // the bounding GPU
}

TEST(JobMerge, DifferentCausesOrRecommendationsStaySeparate) {
  Finding other_kernel = on_gpu(1, 1, 200000000, 400000000, "D2D copies");
  Finding other_fix = on_gpu(1, 2, 100000000, 200000000);
  other_fix.recommendation = "Use pinned memory.";
  std::vector<Finding> v = {on_gpu(1, 0, 300000000, 600000000), other_kernel, other_fix};
  rank_findings(v, {{1, 1000000000}});
  ASSERT_EQ(v.size(), 3u);
  for (const auto& f : v) EXPECT_TRUE(f.instances.empty());
}

TEST(JobMerge, TwoFindingsOnOneGpuAreNotSeveralRanks) {
  std::vector<Finding> v = {on_gpu(1, 0, 300000000, 600000000), on_gpu(1, 0, 200000000, 400000000)};
  rank_findings(v, {{1, 1000000000}});
  EXPECT_EQ(v.size(), 2u);
}

// Traces merge only when the job map puts them in one job. With different steady walls the
// slowest rank sets the step: T = 1000 and 800 ms, s = 300 and 200 ms -> after the fix the ranks
// take 700 and 600 ms, so the step shrinks by 1000 - 700 = 300 ms. Then T = 1000 and 950 ms,
// s = 100 and 300 ms -> 900 and 650 ms: 100 ms (the slowest rank gains least).
TEST(JobMerge, RanksOfOneJobMergeWithTheSlowestRankBoundingTheSaving) {
  auto rank_finding = [](int64_t trace, int64_t savings) {
    Finding f = on_gpu(trace, 0, savings, 2 * savings);
    f.problem = "Rank copies for " + std::to_string(savings / 1000000) + " ms.";
    return f;
  };
  {
    std::vector<Finding> v = {rank_finding(1, 300000000), rank_finding(2, 200000000)};
    rank_findings(v, {{1, 1000000000}, {2, 800000000}});
    EXPECT_EQ(v.size(), 2u);  // no job map: each trace is a job of its own
  }
  JobMap jobs;
  jobs.job_of_trace = {{1, 1}, {2, 1}};
  jobs.trace_label = {{1, "rank 0"}, {2, "rank 1"}};
  {
    std::vector<Finding> v = {rank_finding(1, 300000000), rank_finding(2, 200000000)};
    rank_findings(v, {{1, 1000000000}, {2, 800000000}}, {}, nullptr, &jobs);
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].estimated_savings_ns, 300000000);
    EXPECT_DOUBLE_EQ(v[0].savings_share, 0.3);
    EXPECT_FALSE(v[0].scope.trace_id.has_value());
    EXPECT_EQ(v[0].evidence["where"], nlohmann::ordered_json::array({"rank 0 (GPU 0)", "rank 1 (GPU 0)"}));
    EXPECT_NE(v[0].problem.find("2 ranks of one job"), std::string::npos) << v[0].problem;
  }
  {
    std::vector<Finding> v = {rank_finding(1, 100000000), rank_finding(2, 300000000)};
    rank_findings(v, {{1, 1000000000}, {2, 950000000}}, {}, nullptr, &jobs);
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0].estimated_savings_ns, 100000000);
    EXPECT_EQ(v[0].evidence["bounded_by"], "rank 0 (GPU 0)");
  }
}

// Overlaps are subtracted per GPU first; the merged findings then refer to each other by their
// merged positions. pageable (300 per GPU) outranks sync (250 per GPU) which shares 150 of each
// GPU's copies with it: sync keeps 100 per GPU, so the job-level sync saving is 100 of 250 gross.
TEST(JobMerge, OverlapsAreSubtractedPerGpuAndNamedByMergedPosition) {
  std::vector<Finding> v;
  for (int64_t d : {0, 1}) {
    Finding pageable = on_gpu(1, d, 300, 600);
    pageable.id = "pageable-memcpy";
    pageable.claims = {{"memcpy:" + std::to_string(d), 200}};
    Finding sync = on_gpu(1, d, 250, 500);
    sync.id = "sync-memcpy";
    sync.claims = {{"memcpy:" + std::to_string(d), 150}};
    v.push_back(pageable);
    v.push_back(sync);
  }
  rank_findings(v, {{1, 1000}});
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].id, "pageable-memcpy");
  EXPECT_EQ(v[0].estimated_savings_ns, 300);
  EXPECT_EQ(v[1].id, "sync-memcpy");
  EXPECT_EQ(v[1].estimated_savings_ns, 100);
  EXPECT_EQ(v[1].gross_savings_ns, 250);
  ASSERT_EQ(v[1].overlaps.size(), 1u);
  EXPECT_EQ(v[1].overlaps[0].id, "pageable-memcpy");
  EXPECT_EQ(v[1].overlaps[0].rank, 1u);
  EXPECT_EQ(v[1].overlaps[0].shared_ns, 150);
  ASSERT_EQ(v[1].instances.size(), 2u);
  for (const auto& in : v[1].instances) {
    EXPECT_EQ(in.estimated_savings_ns, 100);
    ASSERT_EQ(in.overlaps.size(), 1u);
    EXPECT_EQ(in.overlaps[0].rank, 1u);
    EXPECT_EQ(in.overlaps[0].shared_ns, 150);
  }
}

TEST(JobMerge, JsonKeepsEveryInstanceAndTextListsTheGpus) {
  AnalysisResult r;
  TraceSummary s;
  s.trace_id = 1;
  s.path = "two_gpus.sqlite";
  r.summaries.push_back(s);
  r.findings = {on_gpu(1, 0, 300000000, 600000000), on_gpu(1, 1, 200000000, 400000000)};
  rank_findings(r.findings, {{1, 1000000000}});
  auto j = nlohmann::json::parse(render_findings_json(r));
  ASSERT_EQ(j["findings"].size(), 1u);
  const auto& f = j["findings"][0];
  EXPECT_EQ(f["estimated_savings_ns"], 200000000);
  ASSERT_EQ(f["instances"].size(), 2u);
  EXPECT_EQ(f["instances"][0]["scope"]["device_id"], 0);
  EXPECT_EQ(f["instances"][0]["estimated_savings_ns"], 300000000);
  EXPECT_EQ(f["instances"][0]["evidence"]["exposed_copy_ns"], 600000000);
  EXPECT_EQ(f["instances"][1]["scope"]["device_id"], 1);
  EXPECT_EQ(f["instances"][1]["problem"], "GPU 1 spent 400 ms copying (H2D copies).");
  std::string text = render_findings_text(r, false);
  EXPECT_NE(text.find("1 problem(s) found"), std::string::npos) << text;
  EXPECT_NE(text.find("scope:   2 of one job: GPU 0, GPU 1"), std::string::npos) << text;
  auto sarif = nlohmann::json::parse(render_findings_sarif(r));
  const auto& results = sarif["runs"][0]["results"];
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0]["properties"]["instances"].size(), 2u);
}

namespace {

BelowThreshold below_on(int64_t trace, int64_t device, double value, const std::string& id = "communication-bound") {
  BelowThreshold b;
  b.id = id;
  b.measured = "communication transfer time not overlapped by compute";
  b.value = value;
  b.threshold = 0.10;
  b.unit = "share of the GPU's window";
  b.scope.trace_id = trace;
  b.scope.device_id = device;
  return b;
}

}  // namespace

// The same check under its threshold on the 4 ranks of one job is one entry (an 8-rank job listed
// communication-bound 8 times); the largest value speaks for the job, the others are instances.
// A trace outside the job and another check are left alone.
TEST(JobMerge, BelowThresholdOnEveryRankOfOneJobIsOneEntry) {
  JobMap jobs;
  for (int64_t t = 1; t <= 4; ++t) {
    jobs.job_of_trace[t] = 1;
    jobs.trace_label[t] = "rank " + std::to_string(t - 1);
  }
  std::vector<Finding> none;
  std::vector<BelowThreshold> below = {below_on(1, 0, 0.0152), below_on(2, 1, 0.0153), below_on(3, 2, 0.0151),
                                       below_on(4, 3, 0.0152), below_on(5, 0, 0.02), below_on(1, 0, 0.3, "memcpy-bound")};
  rank_findings(none, {{1, 1000}, {2, 1000}, {3, 1000}, {4, 1000}, {5, 1000}}, {}, &below, &jobs);
  ASSERT_EQ(below.size(), 3u);
  const BelowThreshold& merged = below[0];
  EXPECT_EQ(merged.id, "communication-bound");
  EXPECT_DOUBLE_EQ(merged.value, 0.0153);
  EXPECT_EQ(merged.scope.trace_id.value_or(-1), 2);
  ASSERT_EQ(merged.instances.size(), 4u);
  EXPECT_EQ(merged.instances[1].label, "rank 1 (GPU 1)");
  EXPECT_DOUBLE_EQ(merged.instances[2].value, 0.0151);
  EXPECT_EQ(below[1].scope.trace_id.value_or(-1), 5);  // not a rank of the job: its own entry
  EXPECT_TRUE(below[1].instances.empty());
  EXPECT_EQ(below[2].id, "memcpy-bound");
  AnalysisResult r;
  r.below_threshold = below;
  std::string text;  // the text wrapped at 80 columns, joined back into one line
  for (char c : render_findings_text(r, /*color=*/false))
    if (c == '\n' || c == ' ') {
      if (!text.empty() && text.back() != ' ') text += ' ';
    } else {
      text += c;
    }
  EXPECT_NE(text.find("the largest of 4 instances is on rank 1 (GPU 1), the smallest 1.51%"), std::string::npos) << text;
}
