// engine/report/compare_report.hpp — rendering a `proflint compare` result.
//
// Text for a terminal (verdict, then a table sorted by significance), JSON (docs/compare.md has
// the schema), markdown for a pull-request comment (verdict first, details collapsed) and JUnit
// XML with one test case per metric so CI systems show the gate natively.
#pragma once

#include <string>

#include "engine/gate/compare.hpp"

namespace proflint {

std::string render_compare_text(const gate::CompareResult& r, bool color);
std::string render_compare_json(const gate::CompareResult& r);
std::string render_compare_markdown(const gate::CompareResult& r);
std::string render_compare_junit(const gate::CompareResult& r);

}  // namespace proflint
