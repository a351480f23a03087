// detectors/no_iterations.cpp — no-iterations
// A profile diagnostic (DLProf's "No Iteration"): no iteration boundaries could be found, so every
// figure is an average over the whole capture, start-up and tear-down included. Says what was
// looked for, proposes a --key-node from ops/annotations that repeat regularly, and how to add
// step markers. Docs: docs/detectors/no-iterations.md
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/detector.hpp"
#include "engine/common/format.hpp"

namespace proflint {

namespace {

struct Candidate {
  std::string name;
  int64_t count = 0;      // occurrences not nested in another occurrence, on the busiest thread
  int64_t period_ns = 0;  // median start-to-start distance
  double spacing_cv = 0;  // coefficient of variation of the start-to-start distances
  double span_share = 0;  // share of the capture the repeats cover (first start .. last start + period)
};

int64_t scalar(SQLite::Database& db, const std::string& sql, int64_t trace_id) {
  SQLite::Statement q(db, sql);
  for (int i = 1; i <= q.getBindParameterCount(); ++i) q.bind(i, trace_id);
  if (!q.executeStep() || q.isColumnNull(0)) return 0;
  return q.getColumn(0).getInt64();
}

class NoIterations final : public Detector {
 public:
  explicit NoIterations(const OptionValues& o)
      : min_repeats_(o.integer("min_repeats")),
        max_repeats_(o.integer("max_repeats")),
        max_spacing_cv_(o.number("max_spacing_cv")),
        min_span_share_(o.number("min_span_share")),
        max_candidates_(o.integer("max_candidates")) {}

  std::string_view id() const override { return "no-iterations"; }
  std::string_view title() const override { return "No iteration boundaries found"; }
  std::vector<std::string> needs() const override { return {}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* s = facts.summary(trace_id);
    if (!s || s->iterations.count > 0) return;
    // A sampling log alone (docs/samples.md) has no steps to find.
    if (facts.has("samples", trace_id) && !facts.has("trace_events", trace_id)) return;
    bool pytorch = is_pytorch(facts, trace_id);
    // A CPU-only capture of a non-framework program has no training loop to speak of.
    if (!s->has_gpu_work && !pytorch) return;
    auto& db = facts.db();

    // Annotations that are not themselves framework ops (emit_nvtx op ranges are ops).
    int64_t annotations =
        scalar(db,
               "SELECT count(*) FROM _range WHERE trace_id = ? AND kind IN ('nvtx', 'user_annotation') "
               "AND id NOT IN (SELECT range_id FROM _op WHERE trace_id = ? AND range_id IS NOT NULL)",
               trace_id);
    int64_t optimizer_steps = scalar(db,
                                     "SELECT count(*) FROM range WHERE trace_id = ? AND (name LIKE 'Optimizer.step#%' "
                                     "OR name = 'optimizer.step')",
                                     trace_id);
    int64_t top_ops =
        scalar(db, "SELECT count(*) FROM _op WHERE trace_id = ? AND range_id IS NOT NULL AND depth = 0", trace_id);

    auto candidates = find_candidates(facts, trace_id, s->wall_ns);
    // --key-node given but matching nothing (derivation noted it as an import issue).
    std::string key_node = "--key-node (not given)";
    for (const auto& i : s->issues)
      if (i.kind == "key_node_not_found") key_node = "--key-node (" + i.example + ")";

    std::string problem = fmt::format(
        "No iteration boundaries were found, so every figure is an average over the whole {} capture, start-up and "
        "tear-down included, and nothing can be compared step by step. Looked for: ProfilerStep#N markers (none), "
        "{}, NVTX/user-annotation step ranges ({}), optimizer.step ({} found), a repeating sequence of the {} "
        "top-level op{}",
        format_ns(s->wall_ns), key_node,
        annotations == 0 ? std::string("no annotation besides op ranges")
                         : fmt::format("{} annotation{} checked, none named like a step or repeated over the GPU work",
                                       annotations, annotations == 1 ? "" : "s"),
        optimizer_steps, top_ops, top_ops == 1 ? "" : "s");
    if (top_ops == 0)
      problem += fmt::format(" and of the {} kernel{}", s->kernel_count, s->kernel_count == 1 ? "" : "s");
    problem += " (at least 3 repeats covering half of it).";

    std::string rec;
    if (!candidates.empty()) {
      rec = "To analyse this profile per iteration, name an op or annotation that occurs once per step: ";
      for (size_t i = 0; i < candidates.size(); ++i) {
        const auto& c = candidates[i];
        rec += fmt::format("{}`--key-node \"{}\"` ({} times, every {} ± {:.0f}%)", i == 0 ? "" : ", ", c.name, c.count,
                           format_ns(c.period_ns), c.spacing_cv * 100.0);
      }
      rec += ". ";
    } else {
      rec =
          "No op or annotation in this trace repeats regularly enough to stand in for a step marker "
          "(`--key-node NAME` takes one that occurs once per step). ";
    }
    if (pytorch) {
      rec +=
          "Mark the steps when profiling: with the PyTorch profiler use "
          "`torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup=1, active=5), ...)` and call "
          "`prof.step()` at the end of every training step (it records ProfilerStep#N); under Nsight Systems wrap each "
          "step in `torch.cuda.nvtx.range_push(\"step\")` … `torch.cuda.nvtx.range_pop()`.";
    } else {
      rec +=
          "Mark the steps with NVTX ranges named like `step 12` around each iteration: in Python "
          "`with nvtx.annotate(\"step\"):` (the `nvtx` package) or `cupyx.profiler.time_range(\"step\")`, in C/C++ "
          "`nvtxRangePushA(\"step\")` / `nvtxRangePop()`, and profile with `nsys profile --trace=cuda,nvtx`.";
    }

    Finding f = make_diagnostic(FindingScope::of_trace(trace_id).of_rank(s->rank));
    f.problem = std::move(problem);
    f.recommendation = std::move(rec);
    f.savings_method = kNoSavingsDiagnostic;
    f.confidence = 0.9;
    f.evidence["annotations"] = annotations;
    f.evidence["optimizer_steps"] = optimizer_steps;
    f.evidence["top_level_ops"] = top_ops;
    f.evidence["kernels"] = s->kernel_count;
    nlohmann::ordered_json cands = nlohmann::ordered_json::array();
    for (const auto& c : candidates)
      cands.push_back({{"name", c.name},
                       {"count", c.count},
                       {"period_ns", c.period_ns},
                       {"spacing_cv", std::round(c.spacing_cv * 1000) / 1000},
                       {"span_share", std::round(c.span_share * 1000) / 1000}});
    f.evidence["key_node_candidates"] = cands;
    sink.report(std::move(f));
  }

 private:
  static bool is_pytorch(const Facts& facts, int64_t trace_id) {
    const TraceSummary* s = facts.summary(trace_id);
    if (s->framework && *s->framework == "pytorch") return true;
    return scalar(facts.db(),
                  "SELECT EXISTS (SELECT 1 FROM kernel WHERE trace_id = ? AND (name LIKE '%at::native::%' "
                  "OR name LIKE '%c10::%'))",
                  trace_id) != 0;
  }

  // The outermost occurrences of one name, per thread -> a candidate when they qualify.
  std::optional<Candidate> evaluate(SQLite::Database& db, int64_t trace_id, int64_t name_id,
                                    const std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>>& starts,
                                    int64_t wall_ns) const {
    const std::vector<int64_t>* v = nullptr;
    std::pair<int64_t, int64_t> thread{-1, -1};
    size_t total = 0;
    for (const auto& [t, list] : starts) {
      total += list.size();
      if (!v || list.size() > v->size()) {
        v = &list;
        thread = t;
      }
    }
    // A training loop runs on one thread: a name spread over several threads (a server's request
    // handlers) would give overlapping iterations.
    if (!v || static_cast<double>(v->size()) < 0.8 * static_cast<double>(total)) return std::nullopt;
    if (static_cast<int64_t>(v->size()) < min_repeats_ || static_cast<int64_t>(v->size()) > max_repeats_)
      return std::nullopt;
    std::vector<int64_t> gaps;
    for (size_t i = 1; i < v->size(); ++i) gaps.push_back((*v)[i] - (*v)[i - 1]);
    double mean = 0;
    for (auto g : gaps) mean += static_cast<double>(g);
    mean /= static_cast<double>(gaps.size());
    if (mean <= 0) return std::nullopt;
    double var = 0;
    for (auto g : gaps) var += (static_cast<double>(g) - mean) * (static_cast<double>(g) - mean);
    double cv = std::sqrt(var / static_cast<double>(gaps.size())) / mean;
    auto sorted = gaps;
    std::sort(sorted.begin(), sorted.end());
    int64_t period = sorted[sorted.size() / 2];
    double span = static_cast<double>(v->back() - v->front() + period);
    double share = wall_ns > 0 ? std::min(1.0, span / static_cast<double>(wall_ns)) : 0.0;
    if (cv > max_spacing_cv_ || share < min_span_share_) return std::nullopt;
    // Repeats that all sit inside one enclosing range (vLLM's execute_context_…, a user's
    // "## forward ##") are the layers of one step, not steps.
    {
      SQLite::Statement e(db,
                          "SELECT EXISTS (SELECT 1 FROM _range WHERE trace_id = ? AND pid IS ? AND tid IS ? "
                          "AND kind NOT IN ('python_function', 'gpu_user_annotation') AND name_id != ? "
                          "AND start_ns <= ? AND start_ns + dur_ns > ?)");
      e.bind(1, trace_id);
      if (thread.first >= 0) e.bind(2, thread.first);
      if (thread.second >= 0) e.bind(3, thread.second);
      e.bind(4, name_id);
      e.bind(5, v->front());
      e.bind(6, v->back());
      if (e.executeStep() && e.getColumn(0).getInt() != 0) return std::nullopt;
    }
    SQLite::Statement n(db, "SELECT value FROM string WHERE id = ?");
    n.bind(1, name_id);
    if (!n.executeStep()) return std::nullopt;
    return Candidate{n.getColumn(0).getString(), static_cast<int64_t>(v->size()), period, cv, share};
  }

  // Ops (by op name, so emit_nvtx ranges group as 'aten::add') and annotations that repeat
  // min_repeats..max_repeats times on one thread, evenly spaced, over most of the capture.
  std::vector<Candidate> find_candidates(const Facts& facts, int64_t trace_id, int64_t wall_ns) const {
    auto& db = facts.db();
    // One sorted pass per source over the names that occur a plausible number of times; the
    // per-thread counts are checked afterwards, the SQL bound only prunes.
    static const char* kOps =
        "SELECT name_id, pid, tid, start_ns, start_ns + dur_ns FROM _op WHERE trace_id = ?1 AND range_id IS NOT NULL "
        "AND name_id IN (SELECT name_id FROM _op WHERE trace_id = ?1 AND range_id IS NOT NULL GROUP BY name_id "
        "HAVING count(*) BETWEEN ?2 AND ?3) ORDER BY name_id, pid, tid, start_ns";
    static const char* kAnnotations =
        "WITH a AS (SELECT id, name_id, pid, tid, start_ns, dur_ns FROM _range WHERE trace_id = ?1 "
        "AND kind IN ('nvtx', 'user_annotation') AND id NOT IN (SELECT range_id FROM _op WHERE trace_id = ?1 AND "
        "range_id IS NOT NULL)) "
        "SELECT name_id, pid, tid, start_ns, start_ns + dur_ns FROM a WHERE name_id IN (SELECT name_id FROM a GROUP BY "
        "name_id "
        "HAVING count(*) BETWEEN ?2 AND ?3) ORDER BY name_id, pid, tid, start_ns";
    std::map<std::string, Candidate> best;  // by name: an op and an annotation may share one
    for (const char* sql : {kOps, kAnnotations}) {
      SQLite::Statement q(db, sql);
      q.bind(1, trace_id);
      q.bind(2, min_repeats_);
      q.bind(3, max_repeats_ * 64);
      int64_t current = INT64_MIN;
      std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> starts;  // thread -> starts of outermost occurrences
      std::map<std::pair<int64_t, int64_t>, int64_t> last_end;
      auto flush = [&]() {
        if (current == INT64_MIN) return;
        if (auto c = evaluate(db, trace_id, current, starts, wall_ns)) {
          auto it = best.find(c->name);
          if (it == best.end() || c->count < it->second.count) best[c->name] = *c;
        }
        starts.clear();
        last_end.clear();
      };
      while (q.executeStep()) {
        int64_t name_id = q.getColumn(0).getInt64();
        if (name_id != current) {
          flush();
          current = name_id;
        }
        std::pair<int64_t, int64_t> thread{q.isColumnNull(1) ? -1 : q.getColumn(1).getInt64(),
                                           q.isColumnNull(2) ? -1 : q.getColumn(2).getInt64()};
        int64_t st = q.getColumn(3).getInt64(), en = q.getColumn(4).getInt64();
        auto it = last_end.find(thread);
        if (it != last_end.end() && st < it->second) continue;  // nested in (or overlapping) the previous one
        starts[thread].push_back(st);
        last_end[thread] = en;
      }
      flush();
    }
    std::vector<Candidate> out;
    for (auto& [name, c] : best) out.push_back(c);
    // The outermost repeating unit first: fewest repeats (longest period), then the most regular.
    std::sort(out.begin(), out.end(), [](const Candidate& a, const Candidate& b) {
      if (a.count != b.count) return a.count < b.count;
      if (a.spacing_cv != b.spacing_cv) return a.spacing_cv < b.spacing_cv;
      return a.name < b.name;
    });
    if (static_cast<int64_t>(out.size()) > max_candidates_) out.resize(static_cast<size_t>(max_candidates_));
    return out;
  }

  int64_t min_repeats_;
  int64_t max_repeats_;
  double max_spacing_cv_;
  double min_span_share_;
  int64_t max_candidates_;
};

}  // namespace

DetectorInfo no_iterations_info() {
  return {"no-iterations",
          {{"min_repeats", 3, "a --key-node candidate occurs at least this many times on one thread"},
           {"max_repeats", 10000, "... and at most this many times (more is a per-layer op, not a step)"},
           {"max_spacing_cv", 0.3, "... with start-to-start distances whose coefficient of variation is at most this"},
           {"min_span_share", 0.5, "... and its repeats span at least this share of the capture"},
           {"max_candidates", 3, "how many --key-node candidates to suggest"}},
          [](const OptionValues& o) { return std::make_unique<NoIterations>(o); }};
}

}  // namespace proflint
