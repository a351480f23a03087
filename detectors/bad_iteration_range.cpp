// detectors/bad_iteration_range.cpp — bad-iteration-range
// Flags captures whose iterations are not comparable: warm-up steps at the start, a cut-off or
// abnormal step at the end, outliers in between. Averages over such a range describe neither the
// warm-up nor the steady state, so it recommends the longest stable window (--iter-start/--iter-stop)
// and a profiler schedule that records only steady-state steps. A profile diagnostic (DLProf's
// "Bad Iteration Range"). Docs: docs/detectors/bad-iteration-range.md
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/analysis/detector.hpp"
#include "engine/common/format.hpp"

namespace proflint {

namespace {

struct Iter {
  int64_t ordinal = 0;
  std::optional<int64_t> number;
  std::string name;
  int64_t start = 0, end = 0;
  std::optional<int64_t> gpu_end;
  int64_t window_ns = 0;  // wall time of the step as the breakdown counts it
};

int64_t median_of(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int64_t mean_of(const std::vector<int64_t>& v) {
  if (v.empty()) return 0;
  long double s = 0;
  for (auto x : v) s += static_cast<long double>(x);
  return static_cast<int64_t>(s / static_cast<long double>(v.size()));
}

class BadIterationRange final : public Detector {
 public:
  explicit BadIterationRange(const OptionValues& o)
      : min_iterations_(o.integer("min_iterations")),
        slow_ratio_(o.number("slow_ratio")),
        fast_ratio_(o.number("fast_ratio")) {}

  std::string_view id() const override { return "bad-iteration-range"; }
  std::string_view title() const override { return "Iteration times are uneven: aggregate over a stable window"; }
  std::vector<std::string> needs() const override { return {"iterations"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* summary = facts.summary(trace_id);
    auto& db = facts.db();
    std::vector<Iter> all;
    {
      SQLite::Statement q(db,
                          "SELECT iteration, number, COALESCE(name, ''), start_ns, end_ns, gpu_end_ns FROM iteration "
                          "WHERE trace_id = ? ORDER BY iteration");
      q.bind(1, trace_id);
      while (q.executeStep()) {
        Iter it;
        it.ordinal = q.getColumn(0).getInt64();
        if (!q.isColumnNull(1)) it.number = q.getColumn(1).getInt64();
        it.name = q.getColumn(2).getString();
        it.start = q.getColumn(3).getInt64();
        it.end = q.getColumn(4).getInt64();
        if (!q.isColumnNull(5)) it.gpu_end = q.getColumn(5).getInt64();
        all.push_back(std::move(it));
      }
    }
    // The breakdown's windows: iteration k runs from max(start_k, end of window k-1) to
    // max(end_k, gpu_end_k), so it keeps the GPU tail of the work it launched.
    int64_t prev_end = INT64_MIN;
    for (auto& it : all) {
      int64_t s = std::max(it.start, prev_end);
      int64_t e = std::max({it.end, it.gpu_end.value_or(it.end), s});
      it.window_ns = e - s;
      prev_end = e;
    }
    // Judge what is aggregated: with --iter-start/--iter-stop only the selected iterations have
    // breakdown rows, and a user who already chose a stable window gets no finding.
    std::set<int64_t> selected;
    {
      SQLite::Statement q(db, "SELECT DISTINCT iteration FROM breakdown WHERE trace_id = ? AND iteration >= 0");
      q.bind(1, trace_id);
      while (q.executeStep()) selected.insert(q.getColumn(0).getInt64());
    }
    std::vector<Iter> iters;
    for (const auto& it : all)
      if (selected.empty() || selected.contains(it.ordinal)) iters.push_back(it);
    size_t n = iters.size();
    if (static_cast<int64_t>(n) < std::max<int64_t>(min_iterations_, 3)) return;

    std::vector<int64_t> durs;
    for (const auto& it : iters) durs.push_back(it.window_ns);
    int64_t med = median_of(durs);
    if (med <= 0) return;
    auto ratio = [&](size_t k) { return static_cast<double>(iters[k].window_ns) / static_cast<double>(med); };
    std::vector<bool> outlier(n);
    for (size_t k = 0; k < n; ++k) outlier[k] = ratio(k) > slow_ratio_ || ratio(k) < fast_ratio_;
    if (std::none_of(outlier.begin(), outlier.end(), [](bool b) { return b; })) return;

    size_t leading = 0, trailing = 0;
    while (leading < n && outlier[leading]) ++leading;
    while (trailing < n - leading && outlier[n - 1 - trailing]) ++trailing;
    std::vector<size_t> interior;
    for (size_t k = leading; k + trailing < n; ++k)
      if (outlier[k]) interior.push_back(k);
    // Longest run of non-outliers (the earliest on ties).
    size_t best_a = 0, best_len = 0;
    for (size_t k = 0; k < n;) {
      if (outlier[k]) {
        ++k;
        continue;
      }
      size_t j = k;
      while (j < n && !outlier[j]) ++j;
      if (j - k > best_len) {
        best_a = k;
        best_len = j - k;
      }
      k = j;
    }

    bool numbered = (summary->iterations.source == "profiler_step" || summary->iterations.source == "key_node" ||
                     summary->iterations.source == "nvtx");
    auto label = [&](const Iter& it) {
      if (numbered && !it.name.empty()) return fmt::format("{} (iteration {})", it.name, it.ordinal);
      return fmt::format("iteration {}", it.ordinal);
    };
    auto describe = [&](size_t k) {
      return fmt::format("{}: {}, {:.2f}x the median", label(iters[k]), format_ns(iters[k].window_ns), ratio(k));
    };
    auto list = [&](const std::vector<size_t>& ks, size_t max_items) {
      std::string s;
      for (size_t i = 0; i < ks.size() && i < max_items; ++i) s += (s.empty() ? "" : "; ") + describe(ks[i]);
      if (ks.size() > max_items) s += fmt::format("; and {} more", ks.size() - max_items);
      return s;
    };
    std::vector<size_t> lead_idx, trail_idx;
    for (size_t k = 0; k < leading; ++k) lead_idx.push_back(k);
    for (size_t k = n - trailing; k < n; ++k) trail_idx.push_back(k);

    const std::string source_text = summary->iterations.source == "profiler_step" ? "ProfilerStep markers"
                                    : summary->iterations.source == "key_node"    ? "the --key-node"
                                    : summary->iterations.source == "nvtx"        ? "NVTX/annotation step ranges"
                                                                                  : "the repeating op/kernel period";
    std::string problem = fmt::format(
        "The {} iterations found from {} ({} … {}) are not alike: the median step takes {} (wall time of the step "
        "including the GPU work it launched), but ",
        n, source_text, label(iters.front()), label(iters.back()), format_ns(med));
    std::vector<std::string> parts;
    auto steps = [](size_t count, const char* which) {
      return count == 1 ? fmt::format("the {} step is", which) : fmt::format("the {} {} steps are", which, count);
    };
    bool leading_slow = std::all_of(lead_idx.begin(), lead_idx.end(), [&](size_t k) { return ratio(k) > 1; });
    if (leading > 0)
      parts.push_back(
          fmt::format("{} {} ({})", steps(leading, "first"), leading_slow ? "slow" : "out of line", list(lead_idx, 3)));
    if (trailing > 0) parts.push_back(fmt::format("{} out of line ({})", steps(trailing, "last"), list(trail_idx, 3)));
    if (!interior.empty())
      parts.push_back(fmt::format("{} step{} inside the run {} out of line ({})", interior.size(),
                                  interior.size() == 1 ? "" : "s", interior.size() == 1 ? "is" : "are",
                                  list(interior, 3)));
    for (size_t i = 0; i < parts.size(); ++i)
      problem += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
    problem += ".";
    // Whatever recommends itself must exclude warm-up and tear-down; interior outliers are the
    // job's own behaviour, excluded only from the clean window.
    std::vector<int64_t> stable_durs;
    for (size_t k = best_a; k < best_a + best_len; ++k) stable_durs.push_back(iters[k].window_ns);
    int64_t mean_all = mean_of(durs);
    int64_t mean_stable = mean_of(stable_durs);
    if (best_len > 0)
      problem += fmt::format(" Averaged over all of them a step takes {}; over the stable window {} … {} it takes {}.",
                             format_ns(mean_all), label(iters[best_a]), label(iters[best_a + best_len - 1]),
                             format_ns(mean_stable));

    // Why the first outlier is slow: the breakdown category that grew most against the median of
    // the stable steps, and GPU work that was launched before the capture started.
    std::string why;
    nlohmann::ordered_json why_json = nlohmann::ordered_json::object();
    size_t worst = 0;
    for (size_t k = 0; k < n; ++k)
      if (outlier[k] && (!outlier[worst] || std::abs(ratio(k) - 1) > std::abs(ratio(worst) - 1))) worst = k;
    if (best_len > 0) explain(facts, trace_id, iters, worst, best_a, best_len, why, why_json);
    if (leading > 0) {
      SQLite::Statement q(db,
                          "SELECT count(*) FROM kernel WHERE trace_id = ? AND iteration = ? AND api_call_id IS NULL");
      q.bind(1, trace_id);
      q.bind(2, iters[0].ordinal);
      int64_t orphans = q.executeStep() ? q.getColumn(0).getInt64() : 0;
      bool has_api = summary->api_call_count > 0;
      if (orphans > 0 && has_api) {
        why += fmt::format(
            " {} kernels that run in {} have no launch call in the trace: they were queued before the "
            "capture started, so the GPU was still working off earlier steps.",
            orphans, label(iters[0]));
        why_json["kernels_launched_before_capture"] = orphans;
      }
    }
    problem += why;

    std::string rec;
    if (best_len >= 2) {
      rec = fmt::format("Aggregate over the stable window: `proflint analyze --iter-start {} --iter-stop {} {}`",
                        iters[best_a].ordinal, iters[best_a + best_len - 1].ordinal, summary->path);
      if (numbered && iters[best_a].number && iters[best_a + best_len - 1].number)
        rec += fmt::format(" ({} … {})", iters[best_a].name, iters[best_a + best_len - 1].name);
      rec += ". ";
      size_t trim_a = leading, trim_b = n - 1 - trailing;
      if (!interior.empty() && (leading > 0 || trailing > 0) && trim_b > trim_a &&
          (trim_a != best_a || trim_b != best_a + best_len - 1))
        rec += fmt::format(
            "To keep the out-of-line steps inside the run and drop only the warm-up and tear-down, use "
            "`--iter-start {} --iter-stop {}`. ",
            iters[trim_a].ordinal, iters[trim_b].ordinal);
    } else {
      rec = "No two consecutive steps are alike: capture more steps (at least 5 after the warm-up). ";
    }
    bool pytorch = summary->framework && *summary->framework == "pytorch";
    if (leading > 0 && pytorch) {
      int64_t first_number = iters[0].number.value_or(-1);
      int64_t active = std::max<int64_t>(5, static_cast<int64_t>(best_len));
      if (summary->iterations.source == "profiler_step" && first_number >= 0) {
        // ProfilerStep#N counts prof.step() calls: the first active step is wait + warmup.
        rec += fmt::format(
            "For the next capture, start recording {} step{} later: "
            "`torch.profiler.profile(schedule=torch.profiler.schedule(wait={}, warmup=1, active={}), ...)` "
            "with `prof.step()` at the end of every step (the first recorded step becomes ProfilerStep#{}). ",
            leading, leading == 1 ? "" : "s", first_number + static_cast<int64_t>(leading) - 1, active,
            first_number + static_cast<int64_t>(leading));
      } else {
        rec += fmt::format(
            "For the next capture, record only steady-state steps: "
            "`torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup={}, active={}), ...)` "
            "with `prof.step()` at the end of every step",
            std::max<size_t>(leading, 1), active);
        if (summary->format == "nsys")
          rec +=
              ", or under Nsight Systems run a few steps first and start the capture with "
              "`torch.cuda.cudart().cudaProfilerStart()` and `nsys profile --capture-range=cudaProfilerApi`";
        rec += ". ";
      }
    } else if (leading > 0) {
      rec +=
          "For the next capture, run a few warm-up iterations before recording (e.g. start the capture after them with "
          "`cudaProfilerStart()` and `nsys profile --capture-range=cudaProfilerApi`). ";
    }
    if (leading > 0 && leading_slow)
      rec += pytorch ? "Warm-up steps pay one-off costs (CUDA context and module loading, cuDNN autotuning with "
                       "`torch.backends.cudnn.benchmark = True`, caching-allocator growth, torch.compile) or drain a "
                       "queue of work launched before the capture. "
                     : "Warm-up steps pay one-off costs (CUDA context and module loading, JIT compilation, memory-pool "
                       "growth) or drain a queue of work launched before the capture. ";
    if (trailing > 0)
      rec += pytorch ? "The last step is often the one running when the profiler stopped; end the capture on a step "
                       "boundary (a fixed `active=` count) instead of stopping mid-step. "
                     : "The last step is often the one running when the capture stopped; end the capture on a step "
                       "boundary. ";
    if (!interior.empty())
      rec +=
          "The out-of-line steps inside the run are the job's own behaviour (a DataLoader worker falling behind, "
          "garbage collection, checkpointing, a host sync), not a measurement artefact: look at what they wait on "
          "before excluding them.";
    while (!rec.empty() && rec.back() == ' ') rec.pop_back();

    Finding f = make_diagnostic(FindingScope::of_trace(trace_id)
                                    .of_rank(summary->rank)
                                    .over_iterations(iters.front().ordinal, iters.back().ordinal));
    f.problem = std::move(problem);
    f.recommendation = std::move(rec);
    f.estimated_savings_ns = 0;
    f.savings_method =
        "none: this is about measurement quality; the outliers add excess_ns to the capture but fixing "
        "the range changes the numbers, not the job";
    f.confidence = (leading > 0 || trailing > 0) ? 0.8 : 0.6;
    if (summary->iterations.source == "auto_period") f.confidence -= 0.2;
    int64_t excess = 0;
    for (size_t k = 0; k < n; ++k)
      if (outlier[k]) excess += std::max<int64_t>(0, iters[k].window_ns - med);
    f.evidence["iteration_source"] = summary->iterations.source;
    f.evidence["iterations"] = n;
    f.evidence["median_ns"] = med;
    f.evidence["mean_ns"] = mean_all;
    f.evidence["step_ns"] = durs;
    f.evidence["leading_outliers"] = leading;
    f.evidence["trailing_outliers"] = trailing;
    nlohmann::ordered_json interior_json = nlohmann::ordered_json::array();
    for (size_t k : interior) interior_json.push_back(iters[k].ordinal);
    f.evidence["interior_outliers"] = interior_json;
    f.evidence["excess_ns"] = excess;
    if (best_len > 0) {
      f.evidence["stable_first"] = iters[best_a].ordinal;
      f.evidence["stable_last"] = iters[best_a + best_len - 1].ordinal;
      f.evidence["stable_mean_ns"] = mean_stable;
    }
    for (auto& [k, v] : why_json.items()) f.evidence[k] = v;
    sink.report(std::move(f));
  }

 private:
  // Names the breakdown category that grew most in iteration `k` against the median of the stable
  // window, on the device with the most kernel time.
  static void explain(const Facts& facts, int64_t trace_id, const std::vector<Iter>& iters, size_t k, size_t a,
                      size_t len, std::string& why, nlohmann::ordered_json& json) {
    const TraceSummary* s = facts.summary(trace_id);
    int64_t device = -1, best = -1;
    for (const auto& d : s->devices)
      if (d.kernel_time_ns > best) {
        best = d.kernel_time_ns;
        device = d.device_id;
      }
    std::map<int64_t, std::map<std::string, int64_t>> rows;  // iteration -> category -> ns
    SQLite::Statement q(facts.db(),
                        "SELECT iteration, category, time_ns FROM breakdown WHERE trace_id = ? AND device_id = ? "
                        "AND iteration >= 0");
    q.bind(1, trace_id);
    q.bind(2, device);
    while (q.executeStep()) rows[q.getColumn(0).getInt64()][q.getColumn(1).getString()] = q.getColumn(2).getInt64();
    auto target = rows.find(iters[k].ordinal);
    if (target == rows.end()) return;
    std::string best_cat;
    int64_t best_delta = 0;
    for (const auto& [cat, ns] : target->second) {
      std::vector<int64_t> base;
      for (size_t j = a; j < a + len; ++j) {
        auto r = rows.find(iters[j].ordinal);
        if (r != rows.end() && r->second.contains(cat)) base.push_back(r->second.at(cat));
      }
      int64_t delta = ns - median_of(base);
      if (std::abs(delta) > std::abs(best_delta)) {
        best_delta = delta;
        best_cat = cat;
      }
    }
    if (best_cat.empty() || best_delta == 0) return;
    static const std::map<std::string, std::string> names = {{"kernel_tc", "Tensor Core kernels"},
                                                             {"kernel_other", "other kernels"},
                                                             {"communication", "communication kernels"},
                                                             {"memcpy", "memory copies"},
                                                             {"memset", "memsets"},
                                                             {"runtime", "CUDA runtime/driver calls"},
                                                             {"dataloader", "the DataLoader"},
                                                             {"cpu", "CPU ops"},
                                                             {"idle", "idle time (nothing recorded)"}};
    auto it = names.find(best_cat);
    bool numbered =
        s->iterations.source == "profiler_step" || s->iterations.source == "key_node" || s->iterations.source == "nvtx";
    std::string who =
        numbered && !iters[k].name.empty() ? iters[k].name : fmt::format("iteration {}", iters[k].ordinal);
    why = fmt::format(" Against the stable steps, {} spends {} {} in {}.", who, format_ns(std::abs(best_delta)),
                      best_delta > 0 ? "more" : "less", it == names.end() ? best_cat : it->second);
    json["outlier_explained"] = iters[k].ordinal;
    json["outlier_category"] = best_cat;
    json["outlier_category_delta_ns"] = best_delta;
  }

  int64_t min_iterations_;
  double slow_ratio_;
  double fast_ratio_;
};

}  // namespace

DetectorInfo bad_iteration_range_info() {
  return {"bad-iteration-range",
          {{"min_iterations", 3, "judge only captures with at least this many iterations"},
           {"slow_ratio", 1.25, "a step is an outlier when its wall time exceeds this multiple of the median step"},
           {"fast_ratio", 0.5,
            "a step is an outlier (cut off or empty) when it is shorter than this multiple of the median"}},
          [](const OptionValues& o) { return std::make_unique<BadIterationRange>(o); }};
}

}  // namespace proflint
