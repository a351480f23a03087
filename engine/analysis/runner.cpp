// engine/analysis/runner.cpp — see runner.hpp.
#include "engine/analysis/runner.hpp"

#include <algorithm>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/facts.hpp"
#include "engine/analysis/ranking.hpp"
#include "engine/common/error.hpp"
#include "engine/common/suggest.hpp"

namespace proflint {

namespace {

void check_configured_ids(const AnalysisOptions& options) {
  std::vector<std::string> ids;
  for (const auto& info : detector_registry()) ids.emplace_back(info.id);
  auto known = [&](const std::string& id) { return std::find(ids.begin(), ids.end(), id) != ids.end(); };
  for (const auto& [id, dc] : options.detectors)
    if (!known(id)) throw Error(dc.where.at("") + ": unknown detector '" + id + "'" + did_you_mean(id, ids));
  for (const auto* set : {&options.only, &options.skip})
    for (const auto& id : *set)
      if (!known(id)) throw Error("unknown detector id '" + id + "' in --only/--skip" + did_you_mean(id, ids));
}

// True when the finding mentions `pattern` in its problem text or evidence (empty pattern: always).
bool matches(const Finding& f, const std::string& pattern) {
  if (pattern.empty()) return true;
  return f.problem.find(pattern) != std::string::npos || f.evidence.dump().find(pattern) != std::string::npos;
}

}  // namespace

AnalysisResult run_analysis(Store& store, const AnalysisOptions& options) {
  check_configured_ids(options);
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
      auto configured = options.detectors.find(id);
      if (configured != options.detectors.end() && configured->second.enabled == false && !options.only.count(id)) {
        result.notes.push_back(id + " disabled in the configuration");
        continue;
      }
      std::unique_ptr<Detector> detector;
      try {
        auto overrides = configured != options.detectors.end() ? configured->second.options : nlohmann::json::object();
        detector = info.make(OptionValues(info.options, overrides));
      } catch (const Error& e) {
        std::string where = configured != options.detectors.end() ? configured->second.where.at("") + ": " : "";
        throw Error(where + "[detectors." + id + "]: " + e.what());
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
  for (auto& f : sink.findings) {
    bool hidden = false;
    for (const auto& sup : options.suppressions) {
      if (sup.id == f.id && matches(f, sup.pattern)) {
        result.notes.push_back("suppressed " + f.id + (sup.pattern.empty() ? "" : " matching '" + sup.pattern + "'") +
                               (sup.reason.empty() ? "" : ": " + sup.reason));
        hidden = true;
        break;
      }
    }
    if (!hidden) result.findings.push_back(std::move(f));
  }
  rank_findings(result.findings, wall);
  return result;
}

}  // namespace proflint
