// engine/pipeline/analyze.cpp — see analyze.hpp.
#include "engine/pipeline/analyze.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <functional>

#include "engine/analysis/facts.hpp"
#include "engine/common/error.hpp"
#include "engine/common/suggest.hpp"
#include "engine/common/timing.hpp"

namespace proflint {

namespace {

// `rule_ids`: ids of the Lua rules that loaded; when some rule file failed to load (its id is
// unknown), ids that match nothing are tolerated with a note instead of stopping the run.
void check_configured_ids(const AnalysisOptions& options, const std::vector<DetectorInfo>& detectors,
                          const std::vector<std::string>& rule_ids, bool rules_complete, std::vector<std::string>& notes) {
  std::vector<std::string> ids;
  for (const auto& info : detectors) ids.emplace_back(info.id);
  auto known = [&](const std::vector<std::string>& list, const std::string& id) {
    return std::find(list.begin(), list.end(), id) != list.end();
  };
  for (const auto& [id, dc] : options.detectors)
    if (!known(ids, id)) throw Error(dc.where.at("") + ": unknown detector '" + id + "'" + did_you_mean(id, ids));
  for (const auto& [id, rc] : options.rules) {
    if (known(rule_ids, id)) continue;
    if (!rules_complete) {
      notes.push_back("[rules." + id + "] matches no rule that loaded");
      continue;
    }
    std::string hint =
        known(ids, id) ? " (it is a built-in detector: use [detectors." + id + "])" : did_you_mean(id, rule_ids);
    throw Error(rc.where.at("") + ": unknown rule '" + id + "'" + hint);
  }
  std::vector<std::string> all = ids;
  all.insert(all.end(), rule_ids.begin(), rule_ids.end());
  all.push_back("rule-error");
  for (const auto* set : {&options.only, &options.skip})
    for (const auto& id : *set)
      if (!known(all, id)) {
        if (!rules_complete) {
          notes.push_back("'" + id + "' in --only/--skip matches no detector or rule that loaded");
          continue;
        }
        throw Error("unknown detector or rule id '" + id + "' in --only/--skip" + did_you_mean(id, all));
      }
}

// One built-in detector on one trace. A fresh instance per task: tasks of one detector may run at
// the same time on two traces.
void run_detector(const DetectorInfo& info, const OptionValues& values, const TraceSummary& summary, const Facts& facts,
                  int64_t trace_id, FindingSink& sink) {
  try {
    info.make(values)->run(facts, trace_id, sink);
  } catch (const std::exception& e) {
    // One broken detector must not hide the others' findings.
    Finding f;
    f.id = "detector-error";
    f.title = "A built-in detector failed";
    f.diagnostic = true;
    f.problem = std::string(info.id) + " failed on " + summary.path + ": " + e.what();
    f.recommendation = "Report this with the profile; the other detectors' findings are unaffected.";
    f.scope.trace_id = summary.trace_id;
    sink.report(std::move(f));
  }
}

// One task of the check `id` per trace it can run on (once per job, on its first rank, when it
// needs "job"); a note for each trace that lacks something it needs. `make_run` gives the task's
// function for one trace.
void add_tasks(const std::string& id, const std::string& label, const std::vector<std::string>& needs,
               const Facts& facts, AnalysisResult& result, std::vector<AnalysisTask>& tasks,
               const std::function<decltype(AnalysisTask::run)(const TraceSummary&)>& make_run) {
  bool per_job = std::find(needs.begin(), needs.end(), "job") != needs.end();
  for (const auto& summary : result.summaries) {
    if (per_job && !facts.is_job_head(summary.trace_id)) continue;
    std::string missing;
    for (const auto& need : needs)
      if (!facts.has(need, summary.trace_id)) missing += (missing.empty() ? "" : ", ") + need;
    if (!missing.empty()) {
      result.notes.push_back(id + " skipped on " + summary.path + ": needs " + missing);
      continue;
    }
    AnalysisTask task;
    task.label = label;
    task.trace_id = summary.trace_id;
    task.run = make_run(summary);
    tasks.push_back(std::move(task));
  }
}

}  // namespace

AnalysisResult run_analysis(Store& store, const AnalysisOptions& options, const std::vector<DetectorInfo>& detectors) {
  AnalysisResult result;
  // Lua rules are loaded first (no facts needed) so their ids can be checked with the others'.
  struct LoadedRule {
    const lua::RuleFile* file;
    lua::RuleInfo info;
    std::string duplicate_of;
  };
  std::vector<LoadedRule> rules;
  std::vector<std::string> rule_ids;
  bool rules_complete = true;
  for (const auto& file : options.rule_files) {
    LoadedRule r{&file, lua::load_rule(file, options.rule_limits), ""};
    if (r.info.ok()) {
      bool builtin = std::any_of(detectors.begin(), detectors.end(),
                                 [&](const DetectorInfo& d) { return d.id == r.info.id; });
      if (builtin) r.duplicate_of = "the built-in detector '" + r.info.id + "'";
      for (const auto& other : rules)
        if (other.info.ok() && other.duplicate_of.empty() && other.info.id == r.info.id)
          r.duplicate_of = other.file->path;
      if (r.duplicate_of.empty()) rule_ids.push_back(r.info.id);
    } else {
      rules_complete = false;
    }
    rules.push_back(std::move(r));
  }
  check_configured_ids(options, detectors, rule_ids, rules_complete, result.notes);
  StageClock summary_clock;
  result.summaries = summarize(store, options.jobs);
  summary_clock.report("summary");
  Facts facts(store, result.summaries);
  // First, in order and on this thread, decide what runs (options, needs, configuration errors);
  // then run the detectors and rules, several at once on their own connections; then gather their
  // findings in the order of the tasks, so the output does not depend on which finished first.
  std::vector<AnalysisTask> tasks;
  {
    ReadOnlyGuard guard(store.db());
    for (const auto& info : detectors) {
      std::string id(info.id);
      if (!options.only.empty() && !options.only.count(id)) continue;
      if (options.skip.count(id)) continue;
      auto configured = options.detectors.find(id);
      if (configured != options.detectors.end() && configured->second.enabled == false && !options.only.count(id)) {
        result.notes.push_back(id + " disabled in the configuration");
        continue;
      }
      OptionValues values;
      std::unique_ptr<Detector> detector;
      try {
        auto overrides = configured != options.detectors.end() ? configured->second.options : nlohmann::json::object();
        values = OptionValues(info.options, overrides);
        detector = info.make(values);
      } catch (const Error& e) {
        std::string where = configured != options.detectors.end() ? configured->second.where.at("") + ": " : "";
        throw Error(where + "[detectors." + id + "]: " + e.what());
      }
      add_tasks(id, "detector:" + id, detector->needs(), facts, result, tasks, [&info, values](const TraceSummary& summary) {
        return [&info, values, &summary](const Facts& facts, int64_t trace_id, FindingSink& sink) {
          run_detector(info, values, summary, facts, trace_id, sink);
        };
      });
    }
    bool errors_wanted =
        (options.only.empty() || options.only.count("rule-error")) && !options.skip.count("rule-error");
    for (const auto& r : rules) {
      const std::string& id = r.info.id;
      if (!r.info.ok() || !r.duplicate_of.empty()) {
        if (!errors_wanted) continue;
        std::string msg = r.info.ok() ? r.file->path + ":1: rule id '" + id + "' is already used by " + r.duplicate_of
                                      : r.info.problems.front();
        if (r.info.problems.size() > 1) msg += fmt::format(" (and {} more problem(s))", r.info.problems.size() - 1);
        AnalysisTask task;
        task.findings.push_back(lua::rule_error(r.file->path, msg));
        tasks.push_back(std::move(task));
        continue;
      }
      if (!options.only.empty() && !options.only.count(id)) continue;
      if (options.skip.count(id)) continue;
      auto configured = options.rules.find(id);
      if (configured != options.rules.end() && configured->second.enabled == false && !options.only.count(id)) {
        result.notes.push_back(id + " (" + r.file->path + ") disabled in the configuration");
        continue;
      }
      nlohmann::json merged;
      if (configured != options.rules.end()) {
        std::vector<std::string> names;
        for (const auto& o : r.info.options) names.push_back(o.name);
        for (const auto& [key, value] : configured->second.options.items()) {
          if (std::find(names.begin(), names.end(), key) != names.end()) continue;
          auto at = configured->second.where.find(key);
          throw Error((at != configured->second.where.end() ? at->second : configured->second.where.at("")) +
                      ": unknown option '" + key + "' for rule " + id + did_you_mean(key, names));
        }
      }
      try {
        auto overrides = configured != options.rules.end() ? configured->second.options : nlohmann::json::object();
        merged = OptionValues(r.info.options, overrides).all();
      } catch (const Error& e) {
        std::string opts;
        for (const auto& o : r.info.options) opts += (opts.empty() ? "" : ", ") + o.name;
        throw Error(configured->second.where.at("") + ": [rules." + id + "]: " + e.what() +
                    (opts.empty() ? " (the rule has no options)" : " (options: " + opts + ")"));
      }
      add_tasks(id, "rule:" + id, r.info.needs, facts, result, tasks, [&r, merged, &options](const TraceSummary&) {
        return [&r, merged, limits = &options.rule_limits](const Facts& facts, int64_t trace_id, FindingSink& sink) {
          lua::run_rule(r.info, *r.file, merged, facts, trace_id, *limits, sink);
        };
      });
    }
  }
  {
    auto wall = std::chrono::steady_clock::now();
    std::clock_t cpu = std::clock();
    int readers = store.readers_opened();
    run_tasks(store, facts, tasks, options.jobs);
    // CPU time of all threads: cpu ÷ wall is how many cores the detectors and rules kept busy;
    // readers: the connections opened beside the store's own (0: everything ran on this thread).
    if (timings_enabled())
      std::fprintf(stderr, "timing analysis:all-tasks %.3f ms cpu %.3f ms readers %d\n",
                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall).count(),
                   1000.0 * static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC, store.readers_opened() - readers);
  }
  finish_analysis(store, tasks, options.suppressions, result);
  return result;
}

}  // namespace proflint
