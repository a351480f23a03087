// engine/common/memory.hpp — the process's resident memory, for PROFLINT_TIMINGS lines.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace proflint {

struct ResidentMemory {
  double peak_mib = 0;     // VmHWM: the most resident so far
  double current_mib = 0;  // VmRSS
};

// From /proc/self/status; zeros where there is no /proc.
inline ResidentMemory resident_memory() {
  ResidentMemory m;
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return m;
  char line[256];
  while (std::fgets(line, sizeof line, f)) {
    if (!std::strncmp(line, "VmHWM:", 6)) m.peak_mib = std::atof(line + 6) / 1024;
    if (!std::strncmp(line, "VmRSS:", 6)) m.current_mib = std::atof(line + 6) / 1024;
  }
  std::fclose(f);
  return m;
}

}  // namespace proflint
