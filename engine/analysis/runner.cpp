// engine/analysis/runner.cpp — see runner.hpp.
#include "engine/analysis/runner.hpp"

#include <SQLiteCpp/Database.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <tuple>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/facts.hpp"
#include "engine/analysis/ranking.hpp"
#include "engine/common/error.hpp"
#include "engine/common/jobs.hpp"
#include "engine/common/suggest.hpp"

namespace proflint {

namespace {

// PROFLINT_TIMINGS=1 prints the time of each detector and rule on stderr ("timing ID MS ms"), so
// bench/run_bench.py can tell where analysis time goes. Off by default: output stays deterministic.
class StageClock {
 public:
  void report(const std::string& what) const {
    static const bool enabled = std::getenv("PROFLINT_TIMINGS") != nullptr;
    if (!enabled) return;
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
    std::fprintf(stderr, "timing %s %.3f ms\n", what.c_str(), ms);
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// `rule_ids`: ids of the Lua rules that loaded; when some rule file failed to load (its id is
// unknown), ids that match nothing are tolerated with a note instead of stopping the run.
void check_configured_ids(const AnalysisOptions& options, const std::vector<std::string>& rule_ids, bool rules_complete,
                          std::vector<std::string>& notes) {
  std::vector<std::string> ids;
  for (const auto& info : detector_registry()) ids.emplace_back(info.id);
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

// True when the finding mentions `pattern` in its problem text or evidence (empty pattern: always).
bool matches(const Finding& f, const std::string& pattern) {
  if (pattern.empty()) return true;
  return f.problem.find(pattern) != std::string::npos ||
         f.evidence.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).find(pattern) != std::string::npos;
}

// One detector or rule on one trace; `findings` is filled by run_task (or beforehand, for a rule
// that failed to load).
struct AnalysisTask {
  std::string label;  // "detector:ID" or "rule:ID" (PROFLINT_TIMINGS); empty: nothing to run
  const DetectorInfo* detector = nullptr;
  OptionValues detector_options;
  const lua::RuleInfo* rule_info = nullptr;
  const lua::RuleFile* rule_file = nullptr;
  nlohmann::json rule_options;
  const TraceSummary* summary = nullptr;
  std::vector<Finding> findings;
  std::vector<BelowThreshold> checks;
};

void run_task(AnalysisTask& task, const Facts& facts, const RuleLimits& limits) {
  if (task.label.empty()) return;
  VectorSink sink;
  StageClock clock;
  if (task.detector) {
    try {
      // A fresh instance per task: tasks of one detector may run at the same time on two traces.
      task.detector->make(task.detector_options)->run(facts, task.summary->trace_id, sink);
    } catch (const std::exception& e) {
      // One broken detector must not hide the others' findings.
      Finding f;
      f.id = "detector-error";
      f.title = "A built-in detector failed";
      f.diagnostic = true;
      f.problem = std::string(task.detector->id) + " failed on " + task.summary->path + ": " + e.what();
      f.recommendation = "Report this with the profile; the other detectors' findings are unaffected.";
      f.scope.trace_id = task.summary->trace_id;
      sink.report(std::move(f));
    }
  } else {
    lua::run_rule(*task.rule_info, *task.rule_file, task.rule_options, facts, task.summary->trace_id, limits, sink);
  }
  clock.report(task.label);
  task.findings = std::move(sink.findings);
  task.checks = std::move(sink.checks);
}

// Runs the tasks on up to available_jobs() threads, each with its own read-only connection to the
// store (SQLite connections are not shared between threads); the calling thread works on the
// store's own connection. Facts are never written during analysis, so every connection sees the
// same committed store. Falls back to one thread when no second connection can be opened.
void run_tasks(Store& store, const Facts& facts, std::vector<AnalysisTask>& tasks, const RuleLimits& limits,
               unsigned requested_jobs) {
  size_t runnable = static_cast<size_t>(
      std::count_if(tasks.begin(), tasks.end(), [](const AnalysisTask& t) { return !t.label.empty(); }));
  unsigned jobs = static_cast<unsigned>(std::min<size_t>(available_jobs(requested_jobs), runnable));
  std::vector<std::unique_ptr<SQLite::Database>> readers;
  try {
    for (unsigned i = 1; i < jobs; ++i) readers.push_back(store.open_reader());
  } catch (const std::exception&) {
    readers.clear();
  }
  std::atomic<size_t> next{0};
  std::mutex failed_mutex;
  std::exception_ptr failed;  // the first error no task turned into a finding (e.g. out of memory)
  auto work = [&](const Facts& mine) {
    try {
      for (size_t i = next++; i < tasks.size(); i = next++) run_task(tasks[i], mine, limits);
    } catch (...) {
      std::lock_guard lock(failed_mutex);
      if (!failed) failed = std::current_exception();
      next = tasks.size();
    }
  };
  std::vector<std::unique_ptr<Facts>> reader_facts;
  std::vector<std::unique_ptr<ReadOnlyGuard>> guards;
  for (auto& reader : readers) {
    guards.push_back(std::make_unique<ReadOnlyGuard>(*reader));
    reader_facts.push_back(std::make_unique<Facts>(*reader, facts.summaries()));
  }
  ReadOnlyGuard guard(store.db());
  std::vector<std::thread> threads;
  try {
    for (auto& f : reader_facts) threads.emplace_back(work, std::cref(*f));
  } catch (const std::system_error&) {
    // No more threads to be had: the ones started and this one share the tasks.
  }
  work(facts);
  for (auto& t : threads) t.join();
  if (failed) std::rethrow_exception(failed);
}

}  // namespace

AnalysisResult run_analysis(Store& store, const AnalysisOptions& options) {
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
      bool builtin = std::any_of(detector_registry().begin(), detector_registry().end(),
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
  check_configured_ids(options, rule_ids, rules_complete, result.notes);
  StageClock summary_clock;
  result.summaries = summarize(store);
  summary_clock.report("summary");
  Facts facts(store, result.summaries);
  // First, in order and on this thread, decide what runs (options, needs, configuration errors);
  // then run the detectors and rules, several at once on their own connections; then gather their
  // findings in the order of the tasks, so the output does not depend on which finished first.
  std::vector<AnalysisTask> tasks;
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
      auto detector_needs = detector->needs();
      bool per_job = std::find(detector_needs.begin(), detector_needs.end(), "job") != detector_needs.end();
      for (const auto& summary : result.summaries) {
        if (per_job && !facts.is_job_head(summary.trace_id)) continue;  // once per job, on its first rank
        std::string missing;
        for (const auto& need : detector_needs)
          if (!facts.has(need, summary.trace_id)) missing += (missing.empty() ? "" : ", ") + need;
        if (!missing.empty()) {
          result.notes.push_back(id + " skipped on " + summary.path + ": needs " + missing);
          continue;
        }
        AnalysisTask task;
        task.label = "detector:" + id;
        task.detector = &info;
        task.detector_options = values;
        task.summary = &summary;
        tasks.push_back(std::move(task));
      }
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
      bool rule_per_job = std::find(r.info.needs.begin(), r.info.needs.end(), "job") != r.info.needs.end();
      for (const auto& summary : result.summaries) {
        if (rule_per_job && !facts.is_job_head(summary.trace_id)) continue;  // once per job, on its first rank
        std::string missing;
        for (const auto& need : r.info.needs)
          if (!facts.has(need, summary.trace_id)) missing += (missing.empty() ? "" : ", ") + need;
        if (!missing.empty()) {
          result.notes.push_back(id + " skipped on " + summary.path + ": needs " + missing);
          continue;
        }
        AnalysisTask task;
        task.label = "rule:" + id;
        task.rule_info = &r.info;
        task.rule_file = r.file;
        task.rule_options = merged;
        task.summary = &summary;
        tasks.push_back(std::move(task));
      }
    }
  }
  {
    auto wall = std::chrono::steady_clock::now();
    std::clock_t cpu = std::clock();
    run_tasks(store, facts, tasks, options.rule_limits, options.jobs);
    // CPU time of all threads: cpu ÷ wall is how many cores the detectors and rules kept busy.
    if (std::getenv("PROFLINT_TIMINGS"))
      std::fprintf(stderr, "timing analysis:all-tasks %.3f ms cpu %.3f ms\n",
                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall).count(),
                   1000.0 * static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC);
  }
  VectorSink sink;
  for (auto& task : tasks) {
    for (auto& f : task.findings) sink.report(std::move(f));
    for (auto& c : task.checks) sink.below_threshold(std::move(c));
  }
  std::map<int64_t, int64_t> wall;
  // Shares are of the steady state: start-up inside the capture is not time a fix can recover.
  for (const auto& s : result.summaries) wall[s.trace_id] = s.steady_wall_ns;
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
  result.below_threshold = std::move(sink.checks);
  rank_findings(result.findings, wall, {}, &result.below_threshold);
  std::stable_sort(result.below_threshold.begin(), result.below_threshold.end(),
                   [](const BelowThreshold& a, const BelowThreshold& b) {
                     return std::make_tuple(a.id, a.scope.trace_id.value_or(-1), a.scope.device_id.value_or(-1)) <
                            std::make_tuple(b.id, b.scope.trace_id.value_or(-1), b.scope.device_id.value_or(-1));
                   });
  return result;
}

}  // namespace proflint
