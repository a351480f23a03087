// engine/report/summary_report.hpp — rendering of `proflint summary` (text and JSON).
#pragma once

#include <string>
#include <vector>

#include "engine/analysis/summary.hpp"

namespace proflint {

// Human text, at most 80 columns wide; `color` adds ANSI emphasis (terminals only).
std::string render_summary_text(const std::vector<TraceSummary>& traces, bool color);
// JSON with "schema": "proflint.summary", "version": 1; times in ns, shares as fractions.
std::string render_summary_json(const std::vector<TraceSummary>& traces);

// Display names of breakdown categories, in the order the report lists them.
const std::vector<std::pair<std::string, std::string>>& breakdown_categories();

}  // namespace proflint
