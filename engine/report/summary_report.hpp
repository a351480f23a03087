// engine/report/summary_report.hpp — rendering of `proflint summary` (text and JSON).
#pragma once

#include <string>
#include <vector>

#include "engine/analysis/job_summary.hpp"
#include "engine/analysis/summary.hpp"

namespace proflint {

// Human text, at most 80 columns wide; `color` adds ANSI emphasis (terminals only).
// Jobs of several ranks follow the traces: alignment, the per-rank collective table, efficiencies.
std::string render_summary_text(const std::vector<TraceSummary>& traces, bool color, const std::vector<JobSummary>& jobs = {});
// JSON with "schema": "proflint.summary", "version": 1; times in ns, shares as fractions. A
// "jobs" array is added when the inputs hold a job of several ranks.
std::string render_summary_json(const std::vector<TraceSummary>& traces, const std::vector<JobSummary>& jobs = {});

// Display names of breakdown categories, in the order the report lists them.
const std::vector<std::pair<std::string, std::string>>& breakdown_categories();

}  // namespace proflint
