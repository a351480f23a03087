// engine/report/findings_report.hpp — rendering `proflint analyze` results.
#pragma once

#include <string>

#include "engine/analysis/runner.hpp"

namespace proflint {

std::string render_findings_text(const AnalysisResult& result, bool color);
// "schema": "proflint.analysis", "version": 1 — documented in docs/output-json.md.
std::string render_findings_json(const AnalysisResult& result);
std::string render_findings_markdown(const AnalysisResult& result);
std::string render_findings_sarif(const AnalysisResult& result);

// Wraps `text` to `width` columns, every line after the first indented by `indent` spaces.
std::string wrap_text(const std::string& text, size_t width, size_t indent);

}  // namespace proflint
