// engine/common/severity.hpp — how serious a finding is, and its name in reports and configuration.
//
// Lives in common/ rather than analysis/ because configuration ([gate] fail_on_new_findings)
// parses severities too, and configuration sits below analysis in the layers.
#pragma once

#include <optional>
#include <string_view>

namespace proflint {

enum class Severity { info = 0, low = 1, medium = 2, high = 3 };

std::string_view severity_name(Severity s);
// "high", "medium", "low", "info"; anything else gives nullopt.
std::optional<Severity> parse_severity(std::string_view name);

}  // namespace proflint
