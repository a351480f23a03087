// detectors/emit_nvtx_missing.cpp — emit-nvtx-missing
// A profile diagnostic for Nsight Systems captures (DLProf's "Emit NVTX Missing"): kernels ran but
// no NVTX ranges (or only a few coarse ones) tell which framework op launched them, so per-op
// analysis (op time, Tensor Core eligibility, fusion, shapes) is impossible. The advice depends on
// the framework the trace shows. Docs: docs/detectors/emit-nvtx-missing.md
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/analysis/detector.hpp"
#include "engine/common/format.hpp"

namespace proflint {

namespace {

int64_t scalar(SQLite::Database& db, const char* sql, int64_t trace_id) {
  SQLite::Statement q(db, sql);
  for (int i = 1; i <= q.getBindParameterCount(); ++i) q.bind(i, trace_id);
  if (!q.executeStep() || q.isColumnNull(0)) return 0;
  return q.getColumn(0).getInt64();
}

class EmitNvtxMissing final : public Detector {
 public:
  explicit EmitNvtxMissing(const OptionValues& o)
      : min_kernels_(o.integer("min_kernels")),
        min_coverage_(o.number("min_coverage")),
        coarse_kernels_per_range_(o.number("coarse_kernels_per_range")) {}

  std::string_view id() const override { return "emit-nvtx-missing"; }
  std::string_view title() const override { return "Kernels cannot be attributed to framework ops (NVTX missing)"; }
  std::vector<std::string> needs() const override { return {"kernels"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* s = facts.summary(trace_id);
    if (!s || s->format != "nsys") return;  // Kineto traces carry their CPU ops themselves
    auto& db = facts.db();
    int64_t nvtx = scalar(db, "SELECT count(*) FROM _range WHERE trace_id = ? AND kind = 'nvtx'", trace_id);
    // torch.autograd.profiler.emit_nvtx / nsys --pytorch ranges: namespaced op names ('aten::add, op_id = 5').
    // Only whether one exists matters, so the scan stops at the first.
    int64_t op_ranges =
        scalar(db, "SELECT EXISTS (SELECT 1 FROM range WHERE trace_id = ? AND kind = 'nvtx' AND name GLOB '*?::?*')", trace_id);
    if (op_ranges > 0) return;
    int64_t kernels = s->kernel_count;
    int64_t kernel_ns = 0, attributed_ns = 0, attributed_kernels = 0, ranges_with_kernels = 0;
    {
      SQLite::Statement q(db,
                          "SELECT COALESCE(sum(k.dur_ns), 0), "
                          "COALESCE(sum(CASE WHEN o.range_id IS NOT NULL THEN k.dur_ns END), 0), "
                          "count(CASE WHEN o.range_id IS NOT NULL THEN 1 END), "
                          "count(DISTINCT CASE WHEN o.range_id IS NOT NULL THEN o.id END) "
                          "FROM _kernel k LEFT JOIN _op o ON o.id = k.op_id WHERE k.trace_id = ?");
      q.bind(1, trace_id);
      if (q.executeStep()) {
        kernel_ns = q.getColumn(0).getInt64();
        attributed_ns = q.getColumn(1).getInt64();
        attributed_kernels = q.getColumn(2).getInt64();
        ranges_with_kernels = q.getColumn(3).getInt64();
      }
    }
    double coverage = kernel_ns > 0 ? static_cast<double>(attributed_ns) / static_cast<double>(kernel_ns) : 0.0;
    double per_range = ranges_with_kernels > 0
                           ? static_cast<double>(attributed_kernels) / static_cast<double>(ranges_with_kernels)
                           : 0.0;

    std::string problem;
    if (nvtx == 0) {
      problem = fmt::format(
          "{} kernel{} ({} of GPU time) ran, but the capture has no NVTX ranges at all: no kernel can be "
          "attributed to the op or code that launched it, so per-op time, Tensor Core eligibility, fusion "
          "and shape analysis are not possible{}.",
          kernels, kernels == 1 ? "" : "s", format_ns(kernel_ns),
          s->iterations.count == 0                ? " and iterations cannot be found"
          : s->iterations.source == "auto_period" ? ", and iterations rest on the repeating kernel sequence alone"
                                                  : "");
      if (kernels < min_kernels_)
        problem +=
            " (The capture is tiny, so little is lost here, but a real run profiled the same way would be opaque.)";
    } else if (kernels >= min_kernels_ && (coverage < min_coverage_ || per_range >= coarse_kernels_per_range_)) {
      std::vector<std::string> why;
      if (coverage < min_coverage_)
        why.push_back(fmt::format("only {} of the kernel time ({} of {}) runs under one", format_percent(coverage),
                                  format_ns(attributed_ns), format_ns(kernel_ns)));
      if (per_range >= coarse_kernels_per_range_)
        why.push_back(
            fmt::format("the ranges that hold kernels are coarse: {} kernels under {} range{} ({:.0f} per range)",
                        attributed_kernels, ranges_with_kernels, ranges_with_kernels == 1 ? "" : "s", per_range));
      problem = fmt::format(
          "The capture has {} NVTX range{}, none of them framework op ranges; {}{}{}. Kernels cannot be "
          "attributed to the ops or functions that launched them, so per-op time, Tensor Core eligibility, fusion and "
          "shapes are out of reach.",
          nvtx, nvtx == 1 ? "" : "s", why[0], why.size() > 1 ? ", and " : "", why.size() > 1 ? why[1] : "");
    } else {
      return;
    }

    bool framework_pytorch = s->framework && *s->framework == "pytorch";
    bool pytorch = framework_pytorch ||
                   scalar(db,
                          "SELECT EXISTS (SELECT 1 FROM kernel WHERE trace_id = ? AND (name LIKE '%at::native::%' "
                          "OR name LIKE '%c10::%'))",
                          trace_id) != 0;
    std::string rec;
    if (pytorch) {
      problem += framework_pytorch ? " The trace comes from a PyTorch job."
                                   : " The kernels are PyTorch's (at::native / c10 kernel names).";
      rec =
          "Let PyTorch emit op ranges: profile with `nsys profile --trace=cuda,nvtx,osrt "
          "--pytorch=autograd-shapes-nvtx "
          "python train.py`, or wrap the steps in "
          "`with torch.autograd.profiler.emit_nvtx(record_shapes=True):`; mark each iteration with "
          "`torch.cuda.nvtx.range_push(\"step\")` … `torch.cuda.nvtx.range_pop()`. Alternatively profile with "
          "`torch.profiler`, whose trace records every op.";
    } else {
      rec =
          "Annotate the code the kernels come from with NVTX ranges and trace them with `nsys profile "
          "--trace=cuda,nvtx`: in "
          "Python `with nvtx.annotate(\"name\"):` or the `@nvtx.annotate()` decorator (the `nvtx` package), "
          "`cupyx.profiler.time_range(\"name\")` for CuPy (RAPIDS libraries such as cuDF emit their own ranges), "
          "`nvtxRangePushA(\"name\")` / `nvtxRangePop()` from `nvtx3/nvToolsExt.h` in C/C++; name one range per step "
          "(`step 12`) so iterations can be found.";
    }

    Finding f = make_diagnostic(FindingScope::of_trace(trace_id).of_rank(s->rank));
    f.problem = std::move(problem);
    f.recommendation = std::move(rec);
    f.savings_method = kNoSavingsDiagnostic;
    f.confidence = nvtx == 0 ? 0.9 : 0.7;
    f.evidence["kernels"] = kernels;
    f.evidence["kernel_time_ns"] = kernel_ns;
    f.evidence["nvtx_ranges"] = nvtx;
    f.evidence["attributed_kernel_share"] = std::round(coverage * 1000) / 1000;
    f.evidence["ranges_with_kernels"] = ranges_with_kernels;
    f.evidence["pytorch"] = pytorch;
    sink.report(std::move(f));
  }

 private:
  int64_t min_kernels_;
  double min_coverage_;
  double coarse_kernels_per_range_;
};

}  // namespace

DetectorInfo emit_nvtx_missing_info() {
  return {
      "emit-nvtx-missing",
      {{"min_kernels", 20, "with some NVTX ranges, judge coverage only when at least this many kernels ran"},
       {"min_coverage", 0.5, "report when less than this share of kernel time runs under an NVTX range"},
       {"coarse_kernels_per_range", 100, "... or when the ranges that do hold kernels hold this many each on average"}},
      [](const OptionValues& o) { return std::make_unique<EmitNvtxMissing>(o); }};
}

}  // namespace proflint
