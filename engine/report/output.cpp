// engine/report/output.cpp — see output.hpp.
#include "engine/report/output.hpp"

#include "engine/common/format.hpp"
#include "engine/common/output_file.hpp"

namespace proflint {

void write_output(const std::string& path, const std::string& content, bool keep_color) {
  OutputFile out(path, "-o");
  out.stage(escape_controls(content, keep_color));
  out.commit();
}

}  // namespace proflint
