// engine/common/memory.hpp — the process's resident memory, for PROFLINT_TIMINGS lines.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

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

// glibc raises its mmap threshold to the size of each large block freed (up to 32 MiB), after
// which blocks of that size come from the heap, where freed ones stay resident. A run allocates
// and frees many such blocks (a step's working vectors, a sweep's edges, import buffers) while the
// model is whole: they stayed resident beside it and added ~40 MiB to the peak of the x20 tiled
// trace. With the threshold fixed at 4 MiB, blocks above it are mappings of their own that go
// back to the system when freed. (1 MiB kept 10 MiB less resident but mapped the import's
// buffers afresh each time: +0.3 s of system time on the x20 trace.) Once per process, before
// the first large allocation.
inline void return_large_blocks_when_freed() {
#if defined(__GLIBC__)
  static const bool done = [] { return mallopt(M_MMAP_THRESHOLD, 4 << 20) == 1; }();
  (void)done;
#endif
}

}  // namespace proflint
