// engine/common/jobs.hpp — how many threads a stage may use.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace proflint {

// `requested` when not 0; else PROFLINT_JOBS when it is a positive number (1 = everything on the
// calling thread); else the machine's cores, at most 8.
inline unsigned available_jobs(unsigned requested = 0) {
  if (requested > 0) return requested;
  if (const char* env = std::getenv("PROFLINT_JOBS")) {
    char* end = nullptr;
    long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n >= 1) return static_cast<unsigned>(std::min(n, 64L));
  }
  return std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
}

}  // namespace proflint
