// engine/analysis/docs.hpp — detector documentation pages, embedded from docs/detectors/*.md.
#pragma once

#include <map>
#include <string>

namespace proflint {

// id -> markdown text of docs/detectors/<id>.md.
const std::map<std::string, std::string>& detector_docs();

}  // namespace proflint
