// tests/unit/pipeline_analyze_test.cpp — run_analysis runs the detectors it is given, not the
// registry: analysis/ no longer knows the built-in detectors (docs/architecture.md, "Layers").
#include <gtest/gtest.h>

#include <stdexcept>

#include "engine/common/error.hpp"
#include "engine/pipeline/analyze.hpp"
#include "engine/pipeline/load.hpp"
#include "tests/support/realdata.hpp"

using namespace proflint;

namespace {

// Reports one diagnostic per trace it runs on, naming the trace, or throws when asked to.
class Probe final : public Detector {
 public:
  explicit Probe(bool fail) : fail_(fail) {}
  std::string_view id() const override { return "probe"; }
  std::string_view title() const override { return "Probe"; }
  std::vector<std::string> needs() const override { return {}; }
  void run(const Facts&, int64_t trace_id, FindingSink& sink) const override {
    if (fail_) throw std::runtime_error("probe broke");
    Finding f;
    f.id = "probe";
    f.title = "Probe";
    f.diagnostic = true;
    f.problem = "probe ran on trace " + std::to_string(trace_id);
    f.scope.trace_id = trace_id;
    sink.report(std::move(f));
  }

 private:
  bool fail_;
};

std::vector<DetectorInfo> probe_list(bool fail) {
  return {{"probe", {{"fail", fail, "throw instead of reporting"}}, [](const OptionValues& v) {
             return std::make_unique<Probe>(v.boolean("fail"));
           }}};
}

Store sample_store() {
  return load_inputs({(proflint::testing::source_dir() / "fixtures" / "legacy_bare_array.json").string()}, LoadOptions{});
}

}  // namespace

TEST(PipelineAnalyze, RunsOnlyTheGivenDetectors) {
  Store store = sample_store();
  AnalysisResult r = run_analysis(store, AnalysisOptions{}, probe_list(false));
  ASSERT_EQ(r.summaries.size(), 1u);
  ASSERT_EQ(r.findings.size(), 1u);  // no built-in detector ran
  EXPECT_EQ(r.findings[0].id, "probe");
  EXPECT_EQ(r.findings[0].problem, "probe ran on trace " + std::to_string(r.summaries[0].trace_id));
  // The same store with the registry gives built-in findings and no probe.
  AnalysisResult builtin = run_analysis(store, AnalysisOptions{}, detector_registry());
  for (const auto& f : builtin.findings) EXPECT_NE(f.id, "probe");
}

TEST(PipelineAnalyze, ConfiguredIdsAreCheckedAgainstTheGivenList) {
  Store store = sample_store();
  AnalysisOptions ao;
  ao.detectors["gpu-idle-gaps"].where[""] = "proflint.toml:3:1";  // built in, but not in this list
  try {
    run_analysis(store, ao, probe_list(false));
    FAIL() << "an id outside the given list was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("proflint.toml:3:1: unknown detector 'gpu-idle-gaps'"), std::string::npos)
        << e.what();
  }
  ao.detectors.clear();
  ao.detectors["probe"].options = {{"fail", true}};
  ao.detectors["probe"].where[""] = "proflint.toml:1:1";
  AnalysisResult r = run_analysis(store, ao, probe_list(false));
  ASSERT_EQ(r.findings.size(), 1u);  // the option reached the detector: it threw, which is reported
  EXPECT_EQ(r.findings[0].id, "detector-error");
  EXPECT_NE(r.findings[0].problem.find("probe failed on "), std::string::npos) << r.findings[0].problem;
  EXPECT_NE(r.findings[0].problem.find("probe broke"), std::string::npos) << r.findings[0].problem;
}
