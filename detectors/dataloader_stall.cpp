// detectors/dataloader_stall.cpp — dataloader-stall
// Flags steps where the GPU waits on the input pipeline: DataLoader fetches (or, without DataLoader
// annotations, the host time before a step's first GPU work) while the GPU has nothing to run.
// Docs: docs/detectors/dataloader-stall.md
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/analysis/dataloader_ranges.hpp"
#include "engine/analysis/detector.hpp"
#include "engine/analysis/idle_claims.hpp"
#include "engine/analysis/source_sites.hpp"
#include "engine/common/format.hpp"
#include "engine/common/intervals.hpp"

namespace proflint {

namespace {

struct Iter {
  int64_t ordinal = 0;
  std::optional<int64_t> number;
  std::string name;
  int64_t start = 0, end = 0;
  std::optional<int64_t> gpu_start, gpu_end;
};

// Per iteration: GPU-idle time spent waiting for data, and the iteration's window length.
struct StepStall {
  int64_t ordinal = 0;
  int64_t stall_ns = 0;
  int64_t window_ns = 0;
  double share() const { return window_ns > 0 ? static_cast<double>(stall_ns) / static_cast<double>(window_ns) : 0.0; }
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int64_t median_ns(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// emit_nvtx appends ", op_id = N" (and sizes) to the annotation text; group without it.
std::string base_annotation(const std::string& name) {
  size_t p = name.find(", op_id");
  if (p == std::string::npos) p = name.find(", seq =");
  return p == std::string::npos ? name : name.substr(0, p);
}

std::string iteration_label(const Iter& it) {
  if (it.number && !it.name.empty()) return it.name;
  return fmt::format("iteration {}", it.ordinal);
}

std::string range_label(const std::vector<Iter>& iters, int64_t first, int64_t last) {
  if (first == last) return iteration_label(iters[static_cast<size_t>(first)]);
  return fmt::format("{} … {}", iteration_label(iters[static_cast<size_t>(first)]),
                     iteration_label(iters[static_cast<size_t>(last)]));
}

// Same windows as the derived breakdown: iteration k runs from max(start_k, end of window k-1) to
// max(end_k, gpu_end_k), so windows never overlap and keep the GPU tail of their own work.
std::vector<Interval> windows_of(const std::vector<Iter>& iters) {
  std::vector<Interval> out;
  int64_t prev_end = INT64_MIN;
  for (const auto& it : iters) {
    int64_t s = std::max(it.start, prev_end);
    int64_t e = std::max({it.end, it.gpu_end.value_or(it.end), s});
    out.push_back({s, e});
    prev_end = e;
  }
  return out;
}

class DataloaderStall final : public Detector {
 public:
  explicit DataloaderStall(const OptionValues& o)
      : min_share_(o.number("min_share")),
        min_stall_ns_(o.integer("min_stall_ns")),
        min_prestep_share_(o.number("min_prestep_share")),
        min_prestep_iterations_(o.integer("min_prestep_iterations")),
        recoverable_fraction_(o.number("recoverable_fraction")),
        input_bound_share_(o.number("input_bound_share")) {}

  std::string_view id() const override { return "dataloader-stall"; }
  std::string_view title() const override { return "GPU waits on the input pipeline"; }
  // GPU activity is not needed: a trace without GPU work (a CPU-only run of the job, a capture
  // whose GPU was never reached) is judged on the host side alone (report_cpu_only).
  std::vector<std::string> needs() const override { return {}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* summary = facts.summary(trace_id);
    if (!summary || summary->wall_ns <= 0) return;
    auto iters = load_iterations(facts, trace_id);
    auto annotations = load_annotations(facts, trace_id);
    if (!summary->has_gpu_work) {
      if (!annotations.empty() && !iters.empty()) report_cpu_only(facts, trace_id, *summary, iters, annotations, sink);
      return;
    }
    if (!annotations.empty()) {
      report_annotated(facts, trace_id, *summary, iters, annotations, sink);
    } else if (static_cast<int64_t>(iters.size()) >= min_prestep_iterations_ && has_framework_ops(facts, trace_id)) {
      report_prestep(facts, trace_id, *summary, iters, sink);
    }
  }

 private:
  struct Annotation {
    int64_t id, start, dur;
    std::string name;
  };

  static std::vector<Iter> load_iterations(const Facts& facts, int64_t trace_id) {
    SQLite::Statement q(
        facts.db(),
        "SELECT iteration, number, coalesce(name, ''), start_ns, end_ns, gpu_start_ns, gpu_end_ns FROM iteration "
        "WHERE trace_id = ? ORDER BY iteration");
    q.bind(1, trace_id);
    std::vector<Iter> out;
    while (q.executeStep()) {
      Iter it;
      it.ordinal = q.getColumn(0).getInt64();
      if (!q.getColumn(1).isNull()) it.number = q.getColumn(1).getInt64();
      it.name = q.getColumn(2).getString();
      it.start = q.getColumn(3).getInt64();
      it.end = q.getColumn(4).getInt64();
      if (!q.getColumn(5).isNull()) it.gpu_start = q.getColumn(5).getInt64();
      if (!q.getColumn(6).isNull()) it.gpu_end = q.getColumn(6).getInt64();
      out.push_back(std::move(it));
    }
    return out;
  }

  // The host-side DataLoader/DataPipe fetch annotations (engine/analysis/dataloader_ranges.hpp).
  static std::vector<Annotation> load_annotations(const Facts& facts, int64_t trace_id) {
    SQLite::Statement q(facts.db(),
                        "SELECT id, name, start_ns, dur_ns FROM range WHERE trace_id = ? AND " PROFLINT_HOST_DATALOADER_RANGE_SQL
                        " ORDER BY start_ns, id");
    q.bind(1, trace_id);
    std::vector<Annotation> out;
    while (q.executeStep())
      out.push_back({q.getColumn(0).getInt64(), q.getColumn(2).getInt64(), q.getColumn(3).getInt64(),
                     q.getColumn(1).getString()});
    return out;
  }

  static bool has_framework_ops(const Facts& facts, int64_t trace_id) {
    SQLite::Statement q(facts.db(), "SELECT 1 FROM range WHERE trace_id = ? AND kind = 'cpu_op' LIMIT 1");
    q.bind(1, trace_id);
    return q.executeStep();
  }

  // breakdown rows: device -> iteration -> (dataloader ns, window ns).
  static std::map<int64_t, std::map<int64_t, std::pair<int64_t, int64_t>>> load_breakdown(const Facts& facts,
                                                                                          int64_t trace_id) {
    SQLite::Statement q(
        facts.db(),
        "SELECT device_id, iteration, sum(CASE WHEN category = 'dataloader' THEN time_ns ELSE 0 END), sum(time_ns) "
        "FROM breakdown WHERE trace_id = ? AND device_id >= 0 GROUP BY device_id, iteration");
    q.bind(1, trace_id);
    std::map<int64_t, std::map<int64_t, std::pair<int64_t, int64_t>>> out;
    while (q.executeStep())
      out[q.getColumn(0).getInt64()][q.getColumn(1).getInt64()] = {q.getColumn(2).getInt64(),
                                                                   q.getColumn(3).getInt64()};
    return out;
  }

  void report_annotated(const Facts& facts, int64_t trace_id, const TraceSummary& summary,
                        const std::vector<Iter>& iters, const std::vector<Annotation>& annotations,
                        FindingSink& sink) const {
    auto breakdown = load_breakdown(facts, trace_id);
    // The device that waited longest: a fetch stalls every device its process feeds, but the wall
    // time is lost once.
    int64_t device = -1, whole_stall = -1;
    for (const auto& [d, rows] : breakdown) {
      auto it = rows.find(-1);
      if (it != rows.end() && it->second.first > whole_stall) {
        device = d;
        whole_stall = it->second.first;
      }
    }
    if (device < 0 || whole_stall <= 0) {
      sink.below_threshold(checked_below(*this, trace_id, std::nullopt,
                                         "GPU-idle time while the DataLoader fetched batches", 0,
                                         static_cast<double>(min_stall_ns_), "ns"));
      return;
    }
    const auto& rows = breakdown[device];
    std::vector<StepStall> steps;
    for (const auto& it : iters) {
      auto r = rows.find(it.ordinal);
      if (r != rows.end()) steps.push_back({it.ordinal, r->second.first, r->second.second});
    }
    int64_t whole_window = rows.at(-1).second;
    emit(facts, trace_id, summary, iters, steps, device, whole_stall, whole_window, &annotations,
         dataloader_union(facts, trace_id), sink);
  }

  // Where each step's model work begins on the host: the earliest range of the launching process
  // (any thread: DataParallel launches from replica threads inside the main thread's forward; step
  // markers excluded) that started in the step's window and is still open at the first call that
  // launched GPU work in the step. Host time before it is input preparation; host time inside it
  // (a DataParallel scatter, the forward) is not.
  static std::map<int64_t, int64_t> model_work_starts(const Facts& facts, int64_t trace_id,
                                                      const std::vector<Iter>& iters,
                                                      const std::vector<Interval>& windows) {
    SQLite::Statement first(
        facts.db(),
        "SELECT a.iteration, a.pid, min(a.start_ns) FROM api_call a WHERE a.trace_id = ?1 AND a.iteration IS NOT NULL "
        "AND a.id IN (SELECT api_call_id FROM _kernel WHERE trace_id = ?1 UNION SELECT api_call_id FROM _memcpy WHERE "
        "trace_id = ?1 UNION SELECT api_call_id FROM _memset WHERE trace_id = ?1) GROUP BY a.iteration");
    first.bind(1, trace_id);
    SQLite::Statement outer(
        facts.db(),
        "SELECT min(start_ns) FROM range WHERE trace_id = ? AND pid IS ? AND start_ns <= ? AND end_ns >= ? "
        "AND start_ns >= ? AND kind IN ('cpu_op', 'user_annotation', 'nvtx') AND name NOT LIKE 'ProfilerStep#%' AND "
        "name != ?");
    std::map<int64_t, int64_t> out;
    while (first.executeStep()) {
      int64_t k = first.getColumn(0).getInt64();
      if (k < 0 || k >= static_cast<int64_t>(iters.size())) continue;
      int64_t launch = first.getColumn(2).getInt64();
      out[k] = launch;
      outer.reset();
      outer.bind(1, trace_id);
      if (first.getColumn(1).isNull())
        outer.bind(2);
      else
        outer.bind(2, first.getColumn(1).getInt64());
      outer.bind(3, launch);
      outer.bind(4, launch);
      outer.bind(5, windows[static_cast<size_t>(k)].start);
      outer.bind(6, iters[static_cast<size_t>(k)].name);
      if (outer.executeStep() && !outer.getColumn(0).isNull()) out[k] = std::min(launch, outer.getColumn(0).getInt64());
    }
    return out;
  }

  // No DataLoader annotation: the GPU-idle time between the start of each step's window and the
  // start of its model work (at the latest its first GPU work): what the host did before it began
  // the step's real work.
  void report_prestep(const Facts& facts, int64_t trace_id, const TraceSummary& summary, const std::vector<Iter>& iters,
                      FindingSink& sink) const {
    auto windows = windows_of(iters);
    auto model_start = model_work_starts(facts, trace_id, iters, windows);
    SQLite::Statement q(facts.db(),
                        "SELECT device_id, start_ns, end_ns FROM kernel WHERE trace_id = ?1 UNION ALL "
                        "SELECT device_id, start_ns, end_ns FROM memcpy WHERE trace_id = ?1 UNION ALL "
                        "SELECT device_id, start_ns, end_ns FROM memset WHERE trace_id = ?1");
    q.bind(1, trace_id);
    std::map<int64_t, std::vector<Interval>> busy;
    while (q.executeStep()) {
      int64_t d = q.getColumn(0).isNull() ? 0 : q.getColumn(0).getInt64();
      busy[d].push_back({q.getColumn(1).getInt64(), q.getColumn(2).getInt64()});
    }
    int64_t best_device = -1, best_total = 0;
    std::vector<StepStall> best_steps;
    std::vector<Interval> best_pieces;  // the pre-step stretches of the chosen device
    for (auto& [d, list] : busy) {
      auto u = union_intervals(std::move(list));
      std::vector<StepStall> steps;
      std::vector<Interval> pieces;
      int64_t total = 0;
      for (size_t k = 0; k < iters.size(); ++k) {
        const Interval& w = windows[k];
        int64_t stall = 0;
        if (iters[k].gpu_start && *iters[k].gpu_start > w.start) {
          int64_t until = std::min(*iters[k].gpu_start, w.end);
          auto m = model_start.find(iters[k].ordinal);
          if (m != model_start.end()) until = std::min(until, m->second);
          Interval gap{w.start, std::max(w.start, until)};
          stall = gap.length() - length_within(u, gap);
          pieces.push_back(gap);
        }
        steps.push_back({iters[k].ordinal, stall, w.length()});
        total += stall;
      }
      if (total > best_total) {
        best_total = total;
        best_device = d;
        best_steps = std::move(steps);
        best_pieces = std::move(pieces);
      }
    }
    if (best_device < 0) return;
    std::vector<double> shares;
    for (const auto& s : best_steps) shares.push_back(s.share());
    if (median(shares) < min_prestep_share_) {
      sink.below_threshold(checked_below(*this, trace_id, best_device,
                                         "median share of step time the GPU idled before the step's first kernel",
                                         median(shares), min_prestep_share_, "share"));
      return;
    }
    int64_t window_total = 0;
    for (const auto& s : best_steps) window_total += s.window_ns;
    emit(facts, trace_id, summary, iters, best_steps, best_device, best_total, window_total, nullptr, best_pieces, sink);
  }

  // No GPU work recorded: the steps are host time only, and the share of each step spent inside
  // DataLoader fetches says whether the loop is input-bound. Nothing runs on a GPU meanwhile, so
  // no GPU-idle time is claimed: the estimate is host time.
  void report_cpu_only(const Facts& facts, int64_t trace_id, const TraceSummary& summary, const std::vector<Iter>& iters,
                       const std::vector<Annotation>& annotations, FindingSink& sink) const {
    auto fetches = dataloader_union(facts, trace_id);
    std::vector<StepStall> steps;
    int64_t fetch_total = 0, window_total = 0;
    for (const auto& it : iters) {
      Interval w{it.start, it.end};
      int64_t f = length_within(fetches, w);
      steps.push_back({it.ordinal, f, w.length()});
      fetch_total += f;
      window_total += w.length();
    }
    std::vector<double> shares;
    std::vector<int64_t> per_step;
    int64_t first = -1, last = -1, affected = 0;
    for (const auto& st : steps) {
      shares.push_back(st.share());
      per_step.push_back(st.stall_ns);
      if (st.share() >= input_bound_share_) {
        if (first < 0) first = st.ordinal;
        last = st.ordinal;
        ++affected;
      }
    }
    const double median_share = median(shares);
    if (window_total <= 0 || median_share < input_bound_share_ || fetch_total < min_stall_ns_) {
      sink.below_threshold(checked_below(*this, trace_id, std::nullopt,
                                         "median share of a step spent in DataLoader fetches (no GPU work recorded)",
                                         median_share, input_bound_share_, "share"));
      return;
    }
    bool single = false, multi = false;
    std::map<std::string, std::pair<int64_t, int64_t>> by_name;
    int64_t example = -1;
    for (const auto& a : annotations) {
      auto& e = by_name[base_annotation(a.name)];
      ++e.first;
      e.second += a.dur;
      if (example < 0) example = a.id;
      single = single || a.name.find("_SingleProcessDataLoaderIter") != std::string::npos;
      multi = multi || a.name.find("_MultiProcessingDataLoaderIter") != std::string::npos;
    }
    const bool inference = summary.workload.value_or("") == "inference";
    Finding f = make_finding("Input-bound: data loading takes most of each step",
                             FindingScope::of_trace(trace_id).over_iterations_seen(first, last));
    f.problem = fmt::format(
        "The job is input-bound: DataLoader fetches take a median {} of each step ({} per step; {} of the {} in "
        "{} steps), in {} of {} steps ({}). No GPU work was recorded, so the compute the loop exists for gets the "
        "rest; {}.",
        format_percent(median_share), format_ns(median_ns(per_step)), format_ns(fetch_total), format_ns(window_total),
        steps.size(), affected, steps.size(), range_label(iters, first, last),
        single ? "the loader runs in the main process (num_workers=0)"
        : multi ? "the loader's worker processes do not keep up"
                : "the loader's kind is not recorded");
    const std::string loader_fix =
        "DataLoader(dataset, batch_size=…, num_workers=N, pin_memory=True, persistent_workers=True, prefetch_factor=2)";
    f.recommendation = fmt::format(
        "{} so that loading overlaps compute: {}{}. Then make each sample cheaper (cache decoded samples, read "
        "sequential shards) and profile again with the GPU: once the fetch is hidden, the GPU's own figures "
        "matter.{}",
        inference ? "Prepare inputs in background workers or a reader thread ahead of the model"
                  : "Build batches in background worker processes",
        loader_fix,
        multi && !single ? " with a larger N and prefetch_factor=4 (workers exist but do not keep up)" : "",
        inference ? " For serving, batch requests so one fetch feeds more compute." : "");
    int64_t scaled = static_cast<int64_t>(static_cast<double>(fetch_total) * static_cast<double>(summary.wall_ns) /
                                          static_cast<double>(window_total));
    f.estimated_savings_ns =
        static_cast<int64_t>(recoverable_fraction_ * static_cast<double>(std::min(scaled, summary.wall_ns)));
    f.savings_method = fmt::format(
        "host time inside DataLoader fetches per step, summed over the steps and scaled to the wall time, x {:.2f} "
        "(recoverable_fraction): what parallel loading hides when spare CPU cores run the workers",
        recoverable_fraction_);
    f.confidence = single ? 0.6 : 0.5;
    f.evidence["signal"] = "dataloader_share_of_step";
    f.evidence["verdict"] = "input_bound";
    f.evidence["gpu_work"] = false;
    f.evidence["fetch_in_steps_ns"] = fetch_total;
    f.evidence["covered_ns"] = window_total;
    f.evidence["median_step_share"] = median_share;
    f.evidence["median_fetch_per_step_ns"] = median_ns(per_step);
    f.evidence["steps_affected"] = affected;
    f.evidence["steps"] = static_cast<int64_t>(steps.size());
    nlohmann::ordered_json per_share = nlohmann::ordered_json::array();
    for (size_t i = 0; i < steps.size() && i < 64; ++i)
      per_share.push_back(static_cast<double>(static_cast<int64_t>(steps[i].share() * 1000 + 0.5)) / 1000);
    f.evidence["per_step_share"] = per_share;
    f.evidence["loader"] = single ? "single-process (num_workers=0)" : multi ? "multi-process workers" : "unknown";
    nlohmann::ordered_json names = nlohmann::ordered_json::array();
    for (const auto& [name, v] : by_name)
      names.push_back({{"name", name}, {"count", v.first}, {"host_time_ns", v.second}});
    f.evidence["annotations"] = names;
    f.evidence["example_range_id"] = example;
    sink.report(std::move(f));
  }

  // idle_pieces: where the GPU waited for input (the fetch annotations, or the pre-step stretches),
  // busy time not yet removed; claimed gap by gap (engine/analysis/idle_claims.hpp).
  void emit(const Facts& facts, int64_t trace_id, const TraceSummary& summary, const std::vector<Iter>& iters,
            const std::vector<StepStall>& steps, int64_t device, int64_t whole_stall, int64_t whole_window,
            const std::vector<Annotation>* annotations, const std::vector<Interval>& idle_pieces,
            FindingSink& sink) const {
    const bool annotated = annotations != nullptr;
    int64_t step_stall = 0, step_window = 0;
    std::vector<double> shares;
    std::vector<int64_t> stalls;
    int64_t first = -1, last = -1, affected = 0;
    for (const auto& s : steps) {
      step_stall += s.stall_ns;
      step_window += s.window_ns;
      shares.push_back(s.share());
      stalls.push_back(s.stall_ns);
      if (s.share() >= min_share_) {
        if (first < 0) first = s.ordinal;
        last = s.ordinal;
        ++affected;
      }
    }
    const bool have_steps = !steps.empty() && step_window > 0;
    double total_share =
        have_steps ? static_cast<double>(step_stall) / static_cast<double>(step_window)
                   : static_cast<double>(whole_stall) / static_cast<double>(std::max<int64_t>(1, whole_window));
    double median_share = have_steps ? median(shares) : total_share;
    if (std::max(total_share, median_share) < min_share_) {
      sink.below_threshold(checked_below(*this, trace_id, device,
                                         "share of step time the GPU idled waiting for the DataLoader",
                                         std::max(total_share, median_share), min_share_, "share"));
      return;
    }
    if ((have_steps ? step_stall : whole_stall) < min_stall_ns_) {
      sink.below_threshold(checked_below(*this, trace_id, device, "GPU-idle time waiting for the DataLoader",
                                         static_cast<double>(have_steps ? step_stall : whole_stall),
                                         static_cast<double>(min_stall_ns_), "ns"));
      return;
    }

    // Loader flavour, from the annotation names.
    bool single = false, multi = false, datapipe = false;
    std::map<std::string, std::pair<int64_t, int64_t>> by_name;  // name -> (count, host ns)
    int64_t host_time = 0, example = -1;
    if (annotated) {
      for (const auto& a : *annotations) {
        auto& e = by_name[base_annotation(a.name)];
        ++e.first;
        e.second += a.dur;
        host_time += a.dur;
        if (example < 0) example = a.id;
        single = single || a.name.find("_SingleProcessDataLoaderIter") != std::string::npos;
        multi = multi || a.name.find("_MultiProcessingDataLoaderIter") != std::string::npos;
        datapipe = datapipe || a.name.find("DataPipe") != std::string::npos;
      }
    }

    Finding f = make_finding(FindingScope::of_trace(trace_id).on_device(device).over_iterations_seen(first, last));
    // Most of the step waiting for data: the job is input-bound, and faster GPU code would not help.
    // Only with fetch annotations: the pre-step signal does not show that the host was loading data.
    const bool input_bound = annotated && std::max(total_share, median_share) >= input_bound_share_;
    const std::string verdict =
        input_bound ? "The job is input-bound: faster GPU code would not shorten its steps until loading keeps up. "
                    : std::string();
    std::string where;
    if (have_steps && first >= 0) {
      where = fmt::format("in {} of {} steps ({})", affected, steps.size(), range_label(iters, first, last));
    } else if (have_steps) {
      where = fmt::format("over {} steps", steps.size());
    }
    std::string per_step = have_steps ? fmt::format("median {} of step time ({} per step), ",
                                                    format_percent(median_share), format_ns(median_ns(stalls)))
                                      : std::string();
    int64_t shown_stall = have_steps ? step_stall : whole_stall;
    int64_t shown_window = have_steps ? step_window : whole_window;
    if (annotated) {
      std::string names;
      std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> sorted(by_name.begin(), by_name.end());
      std::sort(sorted.begin(), sorted.end(),
                [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
      for (size_t i = 0; i < sorted.size() && i < 2; ++i)
        names += fmt::format("{}`{}` ({}×, {} on the host)", i ? "; " : "", sorted[i].first, sorted[i].second.first,
                             format_ns(sorted[i].second.second));
      f.problem = verdict + fmt::format(
          "GPU {} sat idle waiting for DataLoader fetches {}: {}{} in all ({} of the {} covered). Fetches: {}; the "
          "part "
          "that overlapped GPU work is not counted.",
          device, where.empty() ? "during the capture" : where, per_step, format_ns(shown_stall),
          format_percent(static_cast<double>(shown_stall) / static_cast<double>(std::max<int64_t>(1, shown_window))),
          format_ns(shown_window), names);
    } else {
      f.problem = verdict + fmt::format(
          "GPU {} sat idle at the start of each step before its first GPU work {}: {}{} in all ({} of the {} covered). "
          "No DataLoader annotation was recorded; a gap before the first copy/kernel of every step is the signature of "
          "the host preparing the next batch.",
          device, where, per_step, format_ns(shown_stall),
          format_percent(static_cast<double>(shown_stall) / static_cast<double>(std::max<int64_t>(1, shown_window))),
          format_ns(shown_window));
    }

    const std::string loader_fix =
        "DataLoader(dataset, batch_size=…, num_workers=N, pin_memory=True, persistent_workers=True, prefetch_factor=2)";
    const std::string workers_hint =
        "Choose N from the CPU cores this process may use: start at min(8, len(os.sched_getaffinity(0)) // GPUs per "
        "node) "
        "and raise it (and prefetch_factor) until the DataLoader share in a new profile is a few percent";
    const std::string heavy_hint =
        "If the workers are busy decoding and augmenting (images, audio), move that work to the GPU (NVIDIA DALI, or "
        "torchvision.transforms.v2 applied to GPU tensors) or cache pre-processed samples (decoded, resized tensors in "
        "memory-mapped or WebDataset shards) so each step only reads them";
    const std::string tf_hint =
        "TensorFlow: dataset.map(..., num_parallel_calls=tf.data.AUTOTUNE).cache().prefetch(tf.data.AUTOTUNE)";
    if (multi && !single) {
      f.recommendation = fmt::format(
          "The DataLoader already uses worker processes but they do not keep up. Give it more parallelism and "
          "look-ahead: "
          "{} with a larger N and prefetch_factor=4. {}. {}. {}.",
          loader_fix, workers_hint, heavy_hint, tf_hint);
    } else if (annotated) {
      f.recommendation = fmt::format(
          "Load batches in background worker processes so the next batch is ready when the step starts: {}{}. {}. {}. "
          "{}.",
          loader_fix, single ? summary.workload.value_or("") == "inference"
                     ? " (the profile shows num_workers=0: inputs are built in the inference process)"
                     : " (the profile shows num_workers=0: batches are built in the training process)" : "",
          workers_hint, heavy_hint, tf_hint);
    } else {
      f.recommendation = fmt::format(
          "Find what the host does before each step's first copy or kernel (record_function around the batch fetch "
          "makes "
          "it visible). If it is input loading: {}. {}. {}. {}.",
          loader_fix, workers_hint, heavy_hint, tf_hint);
    }

    // Wall time recovered: the stall inside the covered steps extrapolated to the capture window,
    // never more than the stall measured over the whole capture.
    int64_t scaled = have_steps
                         ? static_cast<int64_t>(static_cast<double>(step_stall) * static_cast<double>(summary.wall_ns) /
                                                static_cast<double>(step_window))
                         : whole_stall;
    int64_t bound = annotated ? std::min(scaled, whole_stall) : std::min(scaled, std::max(whole_stall, step_stall));
    f.estimated_savings_ns =
        static_cast<int64_t>(recoverable_fraction_ * static_cast<double>(std::max<int64_t>(0, bound)));
    add_idle_claims(f.claims, IdleGapKeys(facts, trace_id, device).idle_by_gap(idle_pieces), f.estimated_savings_ns);
    f.savings_method = fmt::format(
        "GPU-idle time overlapped with data loading per step, summed over the steps and scaled to the wall time "
        "(capped "
        "at the idle time measured over the whole capture), x {:.2f} (recoverable_fraction: the share a parallel, "
        "prefetching loader hides)",
        recoverable_fraction_);
    f.confidence = annotated ? (single ? 0.8 : 0.7) : 0.35;

    f.evidence["device_id"] = device;
    f.evidence["signal"] = annotated ? "dataloader_annotation" : "gpu_idle_before_first_gpu_work";
    f.evidence["gpu_idle_waiting_ns"] = shown_stall;
    f.evidence["covered_ns"] = shown_window;
    f.evidence["share"] = total_share;
    if (have_steps) {
      f.evidence["median_step_share"] = median_share;
      f.evidence["median_stall_per_step_ns"] = median_ns(stalls);
      f.evidence["steps_affected"] = affected;
      f.evidence["steps"] = static_cast<int64_t>(steps.size());
      // Compact per-step series (first 64 steps): GPU-idle data wait and its share of the step.
      nlohmann::ordered_json per_stall = nlohmann::ordered_json::array(), per_share = nlohmann::ordered_json::array();
      for (size_t i = 0; i < steps.size() && i < 64; ++i) {
        per_stall.push_back(steps[i].stall_ns);
        per_share.push_back(static_cast<double>(static_cast<int64_t>(steps[i].share() * 1000 + 0.5)) / 1000);
      }
      f.evidence["per_step_stall_ns"] = per_stall;
      f.evidence["per_step_share"] = per_share;
      f.evidence["first_step"] = iteration_label(iters[static_cast<size_t>(steps.front().ordinal)]);
    }
    if (annotated) {
      f.evidence["dataloader_host_time_ns"] = host_time;
      f.evidence["loader"] = single     ? "single-process (num_workers=0)"
                             : multi    ? "multi-process workers"
                             : datapipe ? "DataPipe"
                                        : "unknown";
      nlohmann::ordered_json names = nlohmann::ordered_json::array();
      for (const auto& [name, v] : by_name)
        names.push_back({{"name", name}, {"count", v.first}, {"host_time_ns", v.second}});
      f.evidence["annotations"] = names;
      f.evidence["example_range_id"] = example;
      // Where the loop fetches its batches, when the profile records Python frames.
      SourceSites sites(facts, trace_id, "fetching");
      for (const auto& a : *annotations) sites.add_range(a.id, a.dur);
      attach_locations(f, sites.top(3));
    }
    f.evidence["verdict"] = input_bound ? "input_bound" : "input_stall";
    sink.report(std::move(f));
  }

  double min_share_;
  int64_t min_stall_ns_;
  double min_prestep_share_;
  int64_t min_prestep_iterations_;
  double recoverable_fraction_;
  double input_bound_share_;
};

}  // namespace

DetectorInfo dataloader_stall_info() {
  return {"dataloader-stall",
          {{"min_share", 0.05,
            "report when GPU-idle data loading is at least this share of step time (total or median step); TensorBoard "
            "profiler's DataLoader rule uses 5%"},
           {"min_stall_ns", 1000000, "and at least this much GPU-idle data loading in total (ns)"},
           {"min_prestep_share", 0.10,
            "without DataLoader annotations: median share of a step the GPU idles before the step's first GPU work"},
           {"min_prestep_iterations", 3, "without DataLoader annotations: fewest iterations needed to judge"},
           {"recoverable_fraction", 0.9, "share of the stall a parallel, prefetching loader is assumed to hide"},
           {"input_bound_share", 0.5,
            "the verdict 'input-bound' when waiting for data is at least this share of step time (total or median "
            "step); without GPU work, the median share of a step spent in DataLoader fetches that is reported"}},
          [](const OptionValues& o) { return std::make_unique<DataloaderStall>(o); }};
}

}  // namespace proflint
