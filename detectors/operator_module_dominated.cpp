// detectors/operator_module_dominated.cpp — operator-module-dominated
// Clara-style pipelines: one module takes most of an operator's run time (operator_timing, from
// the operator's own log), and by its name it is not GPU work (reading input, writing output,
// decoding ...): the GPU waits while the operator does I/O. Docs: docs/detectors/operator-module-dominated.md
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/system_view.hpp"
#include "engine/common/format.hpp"

namespace proflint {

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class OperatorModuleDominated final : public Detector {
 public:
  explicit OperatorModuleDominated(const OptionValues& o) : min_share_(o.number("min_share")) {
    for (const auto& k : o.raw("host_keywords")) keywords_.push_back(lower(k.get<std::string>()));
  }

  std::string_view id() const override { return "operator-module-dominated"; }
  std::string_view title() const override { return "One non-GPU module dominates an operator's run time"; }
  std::vector<std::string> needs() const override { return {}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* s = facts.summary(trace_id);
    if (!s || s->system_view.operators.empty()) return;
    // Per operator: its total (or, without one, the sum of its modules) and its modules.
    std::map<std::string, std::pair<int64_t, std::vector<const OperatorTime*>>> ops;
    for (const auto& o : s->system_view.operators) {
      auto& e = ops[o.operator_name];
      if (o.module.empty()) e.first = o.time_ns;
      else e.second.push_back(&o);
    }
    for (auto& [name, entry] : ops) {
      auto& [total, modules] = entry;
      if (modules.empty()) continue;
      int64_t module_sum = 0;
      for (const auto* m : modules) module_sum += m->time_ns;
      const int64_t base = std::max(total, module_sum);
      if (base <= 0) continue;
      const OperatorTime* top = *std::max_element(modules.begin(), modules.end(), [](const auto* a, const auto* b) {
        return a->time_ns < b->time_ns;
      });
      const double share = static_cast<double>(top->time_ns) / static_cast<double>(base);
      std::string keyword;
      for (const auto& k : keywords_)
        if (lower(top->module).find(k) != std::string::npos) {
          keyword = k;
          break;
        }
      if (share < min_share_ || keyword.empty()) {
        sink.below_threshold(checked_below(*this, trace_id, std::nullopt,
                                           "largest non-GPU module's share of operator " + name,
                                           keyword.empty() ? 0.0 : share, min_share_, "share"));
        continue;
      }
      std::string rest;
      std::vector<const OperatorTime*> sorted = modules;
      std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->time_ns > b->time_ns; });
      for (size_t i = 1; i < sorted.size() && i < 4; ++i)
        rest += fmt::format("{}{} {}", rest.empty() ? "" : ", ", sorted[i]->module, format_ns(sorted[i]->time_ns));
      Finding f = make_finding(FindingScope::of_trace(trace_id).of_rank(s->rank));
      f.problem = fmt::format("Operator {}: module {} takes {} of its {} {} ({}{}); by its name ('{}') it is I/O or host "
                              "work, not GPU work.",
                              name, top->module, format_ns(top->time_ns), format_ns(base),
                              total > 0 ? "run time" : "summed module time", format_percent(share),
                              top->count > 1 ? fmt::format(", {} log lines summed", top->count) : "", keyword);
      if (!rest.empty()) f.problem += " Next: " + rest + ".";
      f.recommendation =
          "Overlap the module with GPU work or make it cheaper: read and decode inputs in background threads or a "
          "DataLoader with workers (prefetch the next dataset while this one computes), keep data in a fast format "
          "(uncompressed or GPU-decodable, e.g. nvImageCodec/DALI), write outputs asynchronously, and stage files on "
          "local storage rather than a network mount.";
      // Without the operator's timeline the overlap possible is unknown: half the module's time.
      f.estimated_savings_ns = std::min<int64_t>(top->time_ns / 2, std::max<int64_t>(s->steady_wall_ns, 0));
      f.savings_method = "half the dominant module's time, capped by the trace's window (0 for an operator log alone)";
      f.confidence = 0.4;
      f.evidence["operator"] = name;
      f.evidence["module"] = top->module;
      f.evidence["module_time_ns"] = top->time_ns;
      f.evidence["operator_time_ns"] = base;
      f.evidence["share"] = share;
      sink.report(std::move(f));
    }
  }

 private:
  double min_share_;
  std::vector<std::string> keywords_;
};

}  // namespace

DetectorInfo operator_module_dominated_info() {
  return {"operator-module-dominated",
          {{"min_share", 0.4, "report when one non-GPU module takes this share of its operator's time"},
           {"host_keywords",
            nlohmann::json::array({"read", "load", "input", "output", "write", "save", "publish", "decode", "encode", "parse",
                                   "download", "upload", "fetch", "copy", "io"}),
            "words that mark a module as I/O or host work (case-insensitive, anywhere in its keyword)"}},
          [](const OptionValues& o) { return std::make_unique<OperatorModuleDominated>(o); }};
}

}  // namespace proflint
