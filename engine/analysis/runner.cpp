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
#include <numeric>
#include <optional>
#include <set>
#include <system_error>
#include <thread>
#include <tuple>

#include "engine/analysis/facts.hpp"
#include "engine/analysis/ranking.hpp"
#include "engine/common/jobs.hpp"
#include "engine/common/timing.hpp"

namespace proflint {

namespace {

// True when the finding mentions `pattern` in its problem text or evidence (empty pattern: always).
bool matches(const Finding& f, const std::string& pattern) {
  if (pattern.empty()) return true;
  return f.problem.find(pattern) != std::string::npos ||
         f.evidence.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).find(pattern) != std::string::npos;
}

// Runs one task; its findings and checks are kept in the task.
void run_task(AnalysisTask& task, const Facts& facts) {
  if (task.label.empty()) return;
  VectorSink sink;
  StageClock clock;
  task.run(facts, task.trace_id, sink);
  clock.report(task.label);
  task.findings = std::move(sink.findings);
  task.checks = std::move(sink.checks);
}

}  // namespace

StageClock::StageClock() : cpu_start_ms_(thread_cpu_ms()) {}

void StageClock::report(const std::string& what) const {
  if (!timings_enabled()) return;
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  std::fprintf(stderr, "timing %s %.3f ms cpu %.3f ms\n", what.c_str(), ms, thread_cpu_ms() - cpu_start_ms_);
}

// Runs the tasks on up to available_jobs() threads, each with its own read-only connection to the
// store (SQLite connections are not shared between threads); the calling thread works on the
// store's own connection. Facts are never written during analysis, so every connection sees the
// same committed store. Falls back to one thread when no second connection can be opened.
void run_tasks(Store& store, const Facts& facts, std::vector<AnalysisTask>& tasks, unsigned requested_jobs) {
  size_t runnable = static_cast<size_t>(
      std::count_if(tasks.begin(), tasks.end(), [](const AnalysisTask& t) { return !t.label.empty(); }));
  unsigned jobs = static_cast<unsigned>(std::min<size_t>(available_jobs(requested_jobs), runnable));
  std::vector<std::unique_ptr<SQLite::Database>> readers;
  try {
    for (unsigned i = 1; i < jobs; ++i) readers.push_back(store.open_reader());
  } catch (const std::exception&) {
    readers.clear();
  }
  // Lua rules start first: they are few and each runs whole-trace SQL aggregations (the two
  // slowest tasks on the x20 tiled trace are rules), so the threads do not end with one of them
  // running alone after the many short detector checks.
  std::vector<size_t> order(tasks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_partition(order.begin(), order.end(), [&](size_t i) { return tasks[i].label.starts_with("rule:"); });
  std::atomic<size_t> next{0};
  std::mutex failed_mutex;
  std::exception_ptr failed;  // the first error no task turned into a finding (e.g. out of memory)
  auto work = [&](const Facts& mine) {
    try {
      for (size_t i = next++; i < tasks.size(); i = next++) run_task(tasks[order[i]], mine);
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

// Which traces form one job, for ranking's "one finding per job problem". The GPUs of one trace
// are always one job. When the store has the job tables (schema 5: job_rank, filled by derive/),
// they decide, and each GPU of a multi-process nsys export gets its rank. Without them, traces
// given together form one job when they record the same world size and communication backend
// and no two claim the same rank; a trace that records no world size is a job of its own.
JobMap job_of_traces(Store& store, const std::vector<TraceSummary>& summaries) {
  JobMap jobs;
  SQLite::Statement has(store.db(), "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'job_rank'");
  if (has.executeStep() && has.getColumn(0).getInt64() > 0) {
    SQLite::Statement q(store.db(), "SELECT job_id, rank, trace_id, device_id FROM job_rank ORDER BY job_id, rank");
    std::map<int64_t, std::vector<std::pair<int64_t, std::optional<int64_t>>>> ranks_of_trace;  // trace -> (rank, device)
    while (q.executeStep()) {
      int64_t trace = q.getColumn(2).getInt64();
      jobs.job_of_trace[trace] = q.getColumn(0).getInt64();
      std::optional<int64_t> device;
      if (!q.getColumn(3).isNull()) device = q.getColumn(3).getInt64();
      ranks_of_trace[trace].emplace_back(q.getColumn(1).getInt64(), device);
    }
    for (const auto& [trace, ranks] : ranks_of_trace) {
      if (ranks.size() == 1) {
        jobs.trace_label[trace] = fmt::format("rank {}", ranks.front().first);
        continue;
      }
      for (const auto& [rank, device] : ranks)  // several ranks in one trace: one per GPU
        if (device) jobs.rank_of_device[{trace, *device}] = rank;
    }
    for (const auto& s : summaries)
      if (!jobs.trace_label.count(s.trace_id)) jobs.trace_label[s.trace_id] = s.rank ? fmt::format("rank {}", *s.rank) : s.path;
    if (!jobs.job_of_trace.empty()) return jobs;
  }
  std::map<std::pair<int64_t, std::string>, std::vector<const TraceSummary*>> by_identity;
  for (const auto& s : summaries) {
    jobs.job_of_trace[s.trace_id] = s.trace_id;
    jobs.trace_label[s.trace_id] = s.rank ? fmt::format("rank {}", *s.rank) : s.path;
    if (s.world_size && *s.world_size > 1)
      by_identity[{*s.world_size, s.comm_backend.value_or("")}].push_back(&s);
  }
  for (const auto& [identity, members] : by_identity) {
    std::set<int64_t> ranks;
    bool distinct = true;
    for (const auto* s : members) distinct = distinct && s->rank && ranks.insert(*s->rank).second;
    if (!distinct || members.size() < 2) continue;
    for (const auto* s : members) jobs.job_of_trace[s->trace_id] = members.front()->trace_id;
  }
  return jobs;
}

void finish_analysis(Store& store, std::vector<AnalysisTask>& tasks, const std::vector<Suppression>& suppressions,
                     AnalysisResult& result) {
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
    for (const auto& sup : suppressions) {
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
  JobMap jobs = job_of_traces(store, result.summaries);
  rank_findings(result.findings, wall, {}, &result.below_threshold, &jobs);
  std::stable_sort(result.below_threshold.begin(), result.below_threshold.end(),
                   [](const BelowThreshold& a, const BelowThreshold& b) {
                     return std::make_tuple(a.id, a.scope.trace_id.value_or(-1), a.scope.device_id.value_or(-1)) <
                            std::make_tuple(b.id, b.scope.trace_id.value_or(-1), b.scope.device_id.value_or(-1));
                   });
}

}  // namespace proflint
