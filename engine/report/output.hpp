// engine/report/output.hpp — writing one output at once (engine/common/output_file.hpp has the
// rules: stdout, streamed special files, atomic replacement of regular files).
#pragma once

#include <string>

namespace proflint {

// Writes `content` to `path` ("-" is stdout) following OutputFile's rules, now, with control
// characters escaped (escape_controls; `keep_color` keeps proflint's colour codes).
void write_output(const std::string& path, const std::string& content, bool keep_color = false);

}  // namespace proflint
