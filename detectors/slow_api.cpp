// detectors/slow_api.cpp — slow-api
// Flags debugging and checking APIs left on during training: autograd anomaly detection, gradcheck,
// CUDA sync debug mode, deterministic algorithms, and floods of tiny record_function annotations.
// Docs: docs/detectors/slow-api.md
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/analysis/detector.hpp"
#include "engine/common/format.hpp"
#include "engine/common/intervals.hpp"

namespace proflint {

namespace {

// A debugging API recognised by the names of the frames/annotations/ops it leaves in a trace.
struct Signature {
  std::string key;                    // evidence key and kind of finding
  std::string what;                   // what the user turned on
  std::vector<std::string> patterns;  // substrings of range names (python frames, annotations, ops)
  std::string fix;
  bool time_is_cost;  // the matched ranges' time is itself the waste (else: not measurable)
};

const std::vector<Signature>& signatures() {
  static const std::vector<Signature> all = {
      {"anomaly_detection",
       "autograd anomaly detection (torch.autograd.set_detect_anomaly / detect_anomaly)",
       {"set_detect_anomaly", "detect_anomaly", "anomaly_mode.py", "AnomalyMode"},
       "Turn anomaly detection off outside a debugging run: remove torch.autograd.set_detect_anomaly(True) / "
       "`with torch.autograd.detect_anomaly():` from the training loop (it records a Python stack for every forward op "
       "and checks every backward output for NaN with a host sync). Catch NaNs cheaply instead with "
       "torch.isfinite(loss) checked every N steps, or GradScaler's inf checks under AMP.",
       true},
      {"gradcheck",
       "numerical gradient checking (torch.autograd.gradcheck / gradgradcheck)",
       {"gradcheck"},
       "Run gradcheck/gradgradcheck in unit tests, not in the training job: each call re-evaluates the function "
       "once per input element in double precision.",
       true},
      {"sync_debug_mode",
       "CUDA sync debug mode (torch.cuda.set_sync_debug_mode)",
       {"set_sync_debug_mode"},
       "Set torch.cuda.set_sync_debug_mode(0) (the default) outside debugging: in \"warn\"/\"error\" mode every "
       "synchronizing call is checked and reported.",
       true},
      {"deterministic_algorithms",
       "deterministic algorithms (torch.use_deterministic_algorithms(True))",
       {"use_deterministic_algorithms"},
       "Enable torch.use_deterministic_algorithms(True) / torch.backends.cudnn.deterministic = True only when bitwise "
       "reproducibility is required: they force slower kernels (no cuDNN autotuning, serialized atomics, sorting-based "
       "index_add/scatter). Keep torch.backends.cudnn.benchmark = True for fixed input shapes.",
       false},
  };
  return all;
}

class SlowApi final : public Detector {
 public:
  explicit SlowApi(const OptionValues& o)
      : min_nan_checks_(o.integer("min_nan_checks")),
        annotation_overhead_ns_(o.integer("annotation_overhead_ns")),
        tiny_annotation_ns_(o.integer("tiny_annotation_ns")),
        min_annotation_share_(o.number("min_annotation_share")) {}

  std::string_view id() const override { return "slow-api"; }
  std::string_view title() const override { return "Debugging API left on during training"; }
  std::vector<std::string> needs() const override { return {}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* summary = facts.summary(trace_id);
    if (!summary || summary->wall_ns <= 0) return;
    auto nan = nan_checks(facts, trace_id);
    auto present = signatures_present(facts);
    for (size_t i = 0; i < signatures().size(); ++i) {
      const auto& sig = signatures()[i];
      check_signature(facts, trace_id, sig, present[i], sig.key == "anomaly_detection" ? &nan : nullptr, sink);
    }
    check_annotation_flood(facts, trace_id, *summary, sink);
  }

 private:
  // Anomaly mode's NaN check: after every backward node the engine runs isnan(output).any().item().
  struct NanChecks {
    int64_t checks = 0, backward_nodes = 0, time = 0, example = -1;
    bool found = false;
  };

  NanChecks nan_checks(const Facts& facts, int64_t trace_id) const {
    NanChecks out;
    SQLite::Statement q(facts.db(),
                        "SELECT count(*), min(c.id) FROM op c JOIN op p ON p.id = c.parent_id "
                        "WHERE c.trace_id = ? AND c.op_type = 'isnan' AND p.pass = 'bwd'");
    q.bind(1, trace_id);
    if (!q.executeStep()) return out;
    out.checks = q.getColumn(0).getInt64();
    if (out.checks < min_nan_checks_) return out;
    out.example = q.getColumn(1).getInt64();
    SQLite::Statement nodes(facts.db(), "SELECT count(*) FROM op WHERE trace_id = ? AND op_type = 'evaluate_function'");
    nodes.bind(1, trace_id);
    nodes.executeStep();
    out.backward_nodes = nodes.getColumn(0).getInt64();
    // Conservative: the checks must cover most backward nodes, as the engine does for every output.
    if (out.backward_nodes > 0 && 2 * out.checks < out.backward_nodes) return out;
    // Host time of the whole check (isnan, any, item and the sync inside item) in those nodes.
    SQLite::Statement cost(facts.db(),
                           "SELECT coalesce(sum(c.dur_ns), 0) FROM op c JOIN op p ON p.id = c.parent_id WHERE "
                           "c.trace_id = ?1 AND p.pass = 'bwd' "
                           "AND c.op_type IN ('isnan', 'any', '_is_any_true', 'item') "
                           "AND p.id IN (SELECT parent_id FROM op WHERE trace_id = ?1 AND op_type = 'isnan')");
    cost.bind(1, trace_id);
    cost.executeStep();
    out.time = cost.getColumn(0).getInt64();
    out.found = true;
    return out;
  }

  // Whether any stored string matches each signature (the same test as check_signature's SQL), in
  // one pass over the string table: SQLite's instr() scanned it once per pattern and signature
  // (~40 ms per pattern on an nsys store with 10^5 distinct range names).
  static std::vector<bool> signatures_present(const Facts& facts) {
    std::vector<bool> out(signatures().size(), false);
    SQLite::Statement q(facts.db(), "SELECT value FROM string");
    while (q.executeStep()) {
      const SQLite::Column c = q.getColumn(0);
      std::string_view v(static_cast<const char*>(c.getBlob()), static_cast<size_t>(c.getBytes()));
      for (size_t i = 0; i < out.size(); ++i) {
        if (out[i]) continue;
        bool any = false;
        for (const auto& p : signatures()[i].patterns) any = any || v.find(p) != std::string_view::npos;
        out[i] = any && v.find("are_deterministic") == std::string_view::npos &&
                 v.find("is_anomaly") == std::string_view::npos &&
                 v.find("_get_deterministic") == std::string_view::npos;
      }
    }
    return out;
  }

  // A signature's frames/annotations; for anomaly detection also (or only) its NaN checks. The
  // range query runs only where some string matches (`may_match`); else it has no rows.
  void check_signature(const Facts& facts, int64_t trace_id, const Signature& sig, bool may_match, const NanChecks* nan,
                       FindingSink& sink) const {
    std::vector<Interval> spans;
    std::map<std::string, int64_t> names;
    int64_t example = -1;
    if (may_match) {
      std::string where;
      for (const auto& p : sig.patterns)
        where += fmt::format("{}instr(value, '{}') > 0", where.empty() ? "" : " OR ", p);
      // Queries about the setting (are_deterministic_algorithms_enabled, …) are not the setting.
      SQLite::Statement q(
          facts.db(),
          "SELECT id, name, start_ns, end_ns FROM range WHERE +trace_id = ? AND kind != 'gpu_user_annotation' AND "
          "name_id IN "
          "(SELECT id FROM string WHERE (" +
              where +
              ") AND instr(value, 'are_deterministic') = 0 AND "
              "instr(value, 'is_anomaly') = 0 AND instr(value, '_get_deterministic') = 0) ORDER BY start_ns, id");
      q.bind(1, trace_id);
      while (q.executeStep()) {
        if (example < 0) example = q.getColumn(0).getInt64();
        ++names[q.getColumn(1).getString()];
        spans.push_back({q.getColumn(2).getInt64(), q.getColumn(3).getInt64()});
      }
    }
    const bool checks = nan && nan->found;
    if (spans.empty() && !checks) return;
    int64_t time = total_length(union_intervals(spans));
    std::string shown;
    size_t n = 0;
    for (const auto& [name, c] : names) {
      if (n++ == 3) break;
      shown += fmt::format("{}`{}` ×{}", shown.empty() ? "" : ", ", name, c);
    }
    Finding f = make_finding(FindingScope::of_trace(trace_id));
    std::vector<std::string> seen;
    if (!spans.empty()) seen.push_back(fmt::format("{} ({} on the host)", shown, format_ns(time)));
    if (checks)
      seen.push_back(
          fmt::format("a NaN check in {} of {} backward nodes (aten::isnan → any → item, each ending in a host sync; "
                      "{} on the host)",
                      nan->checks, nan->backward_nodes, format_ns(nan->time)));
    f.problem = fmt::format("The trace shows {} in use: {}.", sig.what, fmt::join(seen, "; and "));
    f.recommendation = sig.fix;
    f.estimated_savings_ns = sig.time_is_cost ? time + (checks ? nan->time : 0) : 0;
    f.savings_method =
        sig.time_is_cost
            ? "host time inside the recorded frames/annotations of the API plus, for anomaly detection, the "
              "per-node NaN checks in backward (a lower bound: the per-op cost elsewhere is not visible)"
            : "not measurable from the profile: the slower kernels it selects are not labelled as such";
    f.confidence = sig.time_is_cost ? 0.6 : 0.3;
    f.evidence["api"] = sig.key;
    f.evidence["matches"] = static_cast<int64_t>(spans.size());
    if (!spans.empty()) {
      f.evidence["names"] = shown;
      f.evidence["host_time_ns"] = time;
      f.evidence["example_range_id"] = example;
    }
    if (checks) {
      f.evidence["nan_checks"] = nan->checks;
      f.evidence["backward_nodes"] = nan->backward_nodes;
      f.evidence["check_host_time_ns"] = nan->time;
      f.evidence["example_op_id"] = nan->example;
    }
    sink.report(std::move(f));
  }

  // Very many tiny user annotations (record_function in hot code): each costs host time.
  void check_annotation_flood(const Facts& facts, int64_t trace_id, const TraceSummary& summary,
                              FindingSink& sink) const {
    SQLite::Statement q(
        facts.db(),
        "SELECT name, count(*), sum(dur_ns), min(id) FROM range WHERE trace_id = ? AND kind = 'user_annotation' "
        "AND name NOT LIKE 'ProfilerStep#%' AND name NOT LIKE 'Optimizer.%' AND instr(name, 'DataLoader') = 0 "
        "AND name NOT LIKE 'nccl:%' AND name NOT LIKE 'gloo:%' AND name != 'record_param_comms' "
        "AND dur_ns <= ? AND start_ns >= ? GROUP BY name ORDER BY 2 DESC");
    // Judged on the steady state (docs/derivation.md): annotations after the earliest device's start-up.
    int64_t steady_start = INT64_MIN;
    for (const auto& d : summary.devices)
      if (d.startup_ns > 0) steady_start = steady_start == INT64_MIN ? d.steady_start_ns : std::min(steady_start, d.steady_start_ns);
    if (steady_start != INT64_MIN)
      for (const auto& d : summary.devices)
        if (d.startup_ns == 0) steady_start = INT64_MIN;  // a device without start-up: the whole window
    const int64_t wall = steady_start == INT64_MIN ? summary.wall_ns : summary.steady_wall_ns;
    q.bind(1, trace_id);
    q.bind(2, tiny_annotation_ns_);
    q.bind(3, steady_start);
    int64_t count = 0, time = 0, example = -1;
    std::string top;
    int shown = 0;
    while (q.executeStep()) {
      int64_t c = q.getColumn(1).getInt64();
      count += c;
      time += q.getColumn(2).getInt64();
      if (example < 0) example = q.getColumn(3).getInt64();
      if (shown++ < 3) top += fmt::format("{}`{}` ×{}", top.empty() ? "" : ", ", q.getColumn(0).getString(), c);
    }
    int64_t overhead = count * annotation_overhead_ns_;
    if (wall <= 0 || static_cast<double>(overhead) < min_annotation_share_ * static_cast<double>(wall)) return;
    Finding f = make_finding(FindingScope::of_trace(trace_id));
    f.problem = fmt::format(
        "{} tiny user annotations (record_function, each ≤ {}) were recorded in {} ({:.0f} per second): {}. At about "
        "{} "
        "each, their bookkeeping costs ≈ {} of host time ({} of {}).",
        count, format_ns(tiny_annotation_ns_), format_ns(wall), static_cast<double>(count) * 1e9 / static_cast<double>(wall),
        top, format_ns(annotation_overhead_ns_), format_ns(overhead),
        format_percent(static_cast<double>(overhead) / static_cast<double>(wall)),
        wall == summary.wall_ns ? "wall time" : "the steady state after start-up");
    f.recommendation =
        "Remove torch.autograd.profiler.record_function / torch.profiler.record_function (and NVTX push/pop) from hot, "
        "fine-grained code, or guard them with a flag that is off in production; annotate coarse phases (forward, "
        "backward, optimizer, data) instead.";
    f.estimated_savings_ns = overhead;
    f.savings_method = fmt::format("annotations x {} of host overhead each (annotation_overhead_ns)",
                                   format_ns(annotation_overhead_ns_));
    f.confidence = 0.4;
    f.evidence["api"] = "record_function";
    f.evidence["annotations"] = count;
    f.evidence["annotation_time_ns"] = time;
    f.evidence["top"] = top;
    f.evidence["example_range_id"] = example;
    sink.report(std::move(f));
  }

  int64_t min_nan_checks_;
  int64_t annotation_overhead_ns_;
  int64_t tiny_annotation_ns_;
  double min_annotation_share_;
};

}  // namespace

DetectorInfo slow_api_info() {
  return {"slow-api",
          {{"min_nan_checks", 10, "fewest aten::isnan checks under backward nodes that reveal anomaly detection"},
           {"annotation_overhead_ns", 2000, "assumed host cost of one record_function annotation (ns)"},
           {"tiny_annotation_ns", 50000, "annotations at most this long count as tiny (ns)"},
           {"min_annotation_share", 0.01, "report annotation overhead when it reaches this share of wall time"}},
          [](const OptionValues& o) { return std::make_unique<SlowApi>(o); }};
}

}  // namespace proflint
