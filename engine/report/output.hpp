// engine/report/output.hpp — writing outputs so that a failure never leaves a half-written file.
#pragma once

#include <string>

namespace proflint {

// Writes `content` to `path` through a temporary file in the same folder and a rename.
// Path "-" writes to stdout.
void write_output(const std::string& path, const std::string& content);

}  // namespace proflint
