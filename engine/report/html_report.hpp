// engine/report/html_report.hpp — the self-contained HTML report of `analyze` and `compare`.
//
// One file: the page's script and styles, the vendored uPlot charting library
// (third_party/uplot, embedded at build time) and the data as one JSON block. It opens from disk
// with no network access (its Content-Security-Policy forbids any). docs/html-report.md describes
// the page, what it reduces and why uPlot.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "engine/analysis/runner.hpp"
#include "engine/gate/compare.hpp"
#include "engine/gate/metrics.hpp"
#include "engine/store/store.hpp"

namespace proflint {

// What the page keeps, so the file stays small on long captures (the page says what was cut).
struct HtmlLimits {
  size_t timeline_events = 150000;  // events drawn in the timeline, over all iterations shown
  size_t timeline_views = 6;        // iterations (or capture windows) with a timeline
  size_t time_bins = 600;           // bins of the over-time series, per GPU
  size_t table_rows = 1500;         // rows of the kernel and op-type tables
  size_t evidence_rows = 2000;      // fact rows resolved per finding for highlighting
};

// `store` is the store the analysis ran on (its row ids are the ones findings cite).
std::string render_findings_html(Store& store, const AnalysisResult& result, const HtmlLimits& limits = {});

// `baselines`: the baseline side (pair mode) or the past runs (history mode).
std::string render_compare_html(const gate::CompareResult& result, const std::vector<const gate::Side*>& baselines,
                                const gate::Side& candidate);

// Robust outliers of a step-time series: |d - median| > 3 x 1.4826 x MAD and more than 5% off the
// median. Positions in `durations_ns`.
std::vector<size_t> step_outliers(const std::vector<int64_t>& durations_ns);

// JSON text made safe inside a <script> element: every '<' becomes \u003c (still the same JSON).
std::string script_safe_json(const std::string& json_text);

}  // namespace proflint
