// detectors/unknown_kernels.cpp — unknown-kernels
// Diagnostic: a large share of GPU time runs in kernels that proflint's name tables do not
// recognise (category 'other'), so Tensor Core use and the per-category figures are uncertain.
// Docs: docs/detectors/unknown-kernels.md
#include <fmt/format.h>

#include "engine/analysis/detector.hpp"
#include "engine/common/format.hpp"

namespace proflint {

namespace {

class UnknownKernels final : public Detector {
 public:
  explicit UnknownKernels(const OptionValues& o) : min_share_(o.number("min_share")), min_time_ns_(o.integer("min_time_ns")) {}
  std::string_view id() const override { return "unknown-kernels"; }
  std::string_view title() const override { return "Much GPU time runs in kernels proflint does not recognise"; }
  std::vector<std::string> needs() const override { return {"kernels"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    SQLite::Statement total(facts.db(), "SELECT COALESCE(sum(dur_ns), 0), COALESCE(sum(CASE WHEN category = 'other' THEN dur_ns END), 0), "
                                        "count(DISTINCT CASE WHEN category = 'other' THEN name_id END) FROM _kernel WHERE trace_id = ?");
    total.bind(1, trace_id);
    if (!total.executeStep()) return;
    int64_t all = total.getColumn(0).getInt64(), other = total.getColumn(1).getInt64(), names = total.getColumn(2).getInt64();
    if (all <= 0 || other < min_time_ns_ || static_cast<double>(other) < min_share_ * static_cast<double>(all)) return;
    SQLite::Statement top(facts.db(), "SELECT name, count(*), sum(dur_ns) FROM kernel WHERE trace_id = ? AND category = 'other' "
                                      "GROUP BY name_id ORDER BY sum(dur_ns) DESC, name LIMIT 5");
    top.bind(1, trace_id);
    std::string list;
    nlohmann::ordered_json top_json = nlohmann::ordered_json::array();
    while (top.executeStep()) {
      std::string name = top.getColumn(0).getString();
      std::string shown = name.size() > 80 ? name.substr(0, 77) + "..." : name;
      list += fmt::format("{}{} ×{} {}", list.empty() ? "" : ", ", shown, top.getColumn(1).getInt64(), format_ns(top.getColumn(2).getInt64()));
      top_json.push_back({{"kernel", name}, {"count", top.getColumn(1).getInt64()}, {"time_ns", top.getColumn(2).getInt64()}});
    }
    Finding f = make_diagnostic(FindingScope::of_trace(trace_id));
    f.confidence = 1.0;
    double share = static_cast<double>(other) / static_cast<double>(all);
    f.problem = fmt::format("{} of kernel time ({} in {} distinct kernel names) is in kernels that match none of proflint's "
                            "name tables (GEMM, convolution, attention, elementwise, reduction, communication, memory), so "
                            "their Tensor Core use is assumed 'no' and category figures undercount. Largest: {}.",
                            format_percent(share), format_ns(other), names, list);
    f.recommendation = "If some of these are matrix-multiply kernels that use Tensor Cores (custom CUDA, Triton or vendor "
                       "kernels), tell proflint in proflint.toml: [tensor_cores] uses = [\"<name substring>\"] (and "
                       "not = [...] for look-alikes), then re-run; please also report the names so the built-in table "
                       "learns them.";
    f.evidence["unrecognised_time_ns"] = other;
    f.evidence["kernel_time_ns"] = all;
    f.evidence["share"] = share;
    f.evidence["distinct_names"] = names;
    f.evidence["top_kernels"] = top_json;
    sink.report(std::move(f));
  }

 private:
  double min_share_;
  int64_t min_time_ns_;
};

}  // namespace

DetectorInfo unknown_kernels_info() {
  return {"unknown-kernels",
          {{"min_share", 0.25, "report when unrecognised kernels take at least this share of kernel time"},
           {"min_time_ns", 1000000, "and at least this much kernel time"}},
          [](const OptionValues& o) { return std::make_unique<UnknownKernels>(o); }};
}

}  // namespace proflint
