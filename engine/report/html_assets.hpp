// engine/report/html_assets.hpp — the files the HTML report inlines, embedded at build time by
// CMakeLists.txt (like docs/detectors/*.md) so the binary writes complete pages from any folder:
// uPlot (third_party/uplot, MIT) and the page's own script and styles (engine/report/html/).
#pragma once

#include <string_view>

namespace proflint::html_assets {

std::string_view uplot_js();
std::string_view uplot_css();
std::string_view report_js();
std::string_view report_css();

}  // namespace proflint::html_assets
