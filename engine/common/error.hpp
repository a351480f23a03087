// engine/common/error.hpp — the one error type that crosses stage boundaries.
// Library exceptions are caught at a stage boundary and rethrown as proflint::Error with a
// message that names the file and the place; the CLI prints it and exits 2.
#pragma once

#include <stdexcept>
#include <string>

namespace proflint {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// "FILE: message" or "FILE: at PLACE: message" — the shape every input error takes.
inline Error input_error(const std::string& file, const std::string& place, const std::string& what) {
  if (place.empty()) return Error(file + ": " + what);
  return Error(file + ": " + place + ": " + what);
}

}  // namespace proflint
