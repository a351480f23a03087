// engine/analysis/runner.cpp — see runner.hpp.
#include "engine/analysis/runner.hpp"

#include "engine/analysis/detector.hpp"
#include "engine/analysis/facts.hpp"
#include "engine/analysis/ranking.hpp"
#include "engine/common/error.hpp"

namespace proflint {

AnalysisResult run_analysis(Store& store, const AnalysisOptions& options) {
  AnalysisResult result;
  result.summaries = summarize(store);
  Facts facts(store, result.summaries);
  VectorSink sink;
  {
    ReadOnlyGuard guard(store.db());
    for (const auto& info : detector_registry()) {
      std::string id(info.id);
      if (!options.only.empty() && !options.only.count(id)) continue;
      if (options.skip.count(id)) continue;
      auto overrides = options.detector_options.count(id) ? options.detector_options.at(id) : nlohmann::json::object();
      std::unique_ptr<Detector> detector;
      try {
        detector = info.make(OptionValues(info.options, overrides));
      } catch (const Error& e) {
        throw Error("[detectors." + id + "]: " + e.what());
      }
      for (const auto& summary : result.summaries) {
        std::string missing;
        for (const auto& need : detector->needs())
          if (!facts.has(need, summary.trace_id)) missing += (missing.empty() ? "" : ", ") + need;
        if (!missing.empty()) {
          result.notes.push_back(id + " skipped on " + summary.path + ": needs " + missing);
          continue;
        }
        try {
          detector->run(facts, summary.trace_id, sink);
        } catch (const std::exception& e) {
          // One broken detector must not hide the others' findings.
          Finding f;
          f.id = "detector-error";
          f.title = "A built-in detector failed";
          f.diagnostic = true;
          f.problem = id + " failed on " + summary.path + ": " + e.what();
          f.recommendation = "Report this with the profile; the other detectors' findings are unaffected.";
          f.scope.trace_id = summary.trace_id;
          sink.report(std::move(f));
        }
      }
    }
  }
  std::map<int64_t, int64_t> wall;
  for (const auto& s : result.summaries) wall[s.trace_id] = s.wall_ns;
  result.findings = std::move(sink.findings);
  rank_findings(result.findings, wall);
  return result;
}

}  // namespace proflint
