// engine/report/output.cpp — see output.hpp.
#include "engine/report/output.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "engine/common/error.hpp"

namespace proflint {

void write_output(const std::string& path, const std::string& content) {
  if (path == "-" || path.empty()) {
    std::cout << content;
    std::cout.flush();
    return;
  }
  namespace fs = std::filesystem;
  std::string tmp = path + ".tmp-proflint";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw input_error(path, "", "cannot open for writing");
    out << content;
    out.flush();
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw input_error(path, "", "write failed");
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw input_error(path, "", "cannot move the finished file into place: " + ec.message());
  }
}

}  // namespace proflint
