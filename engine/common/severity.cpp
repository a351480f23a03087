// engine/common/severity.cpp — see severity.hpp.
#include "engine/common/severity.hpp"

namespace proflint {

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::high: return "high";
    case Severity::medium: return "medium";
    case Severity::low: return "low";
    case Severity::info: return "info";
  }
  return "info";
}

std::optional<Severity> parse_severity(std::string_view name) {
  if (name == "high") return Severity::high;
  if (name == "medium") return Severity::medium;
  if (name == "low") return Severity::low;
  if (name == "info") return Severity::info;
  return std::nullopt;
}

}  // namespace proflint
