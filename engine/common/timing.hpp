// engine/common/timing.hpp — PROFLINT_TIMINGS=1: "timing …" lines on stderr, which bench/ reads.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "engine/common/memory.hpp"

namespace proflint {

inline bool timings_enabled() {
  static const bool enabled = std::getenv("PROFLINT_TIMINGS") != nullptr;
  return enabled;
}

// CPU time of the calling thread so far, in milliseconds: on a loaded machine the figure that
// stays comparable between runs (wall time follows the other processes).
inline double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// The steps of loading one after the other: "timing derive:STEP W ms peak-rss P MiB rss R MiB"
// per lap (the resident memory shows where the peak is reached).
class StepClock {
 public:
  void lap(const char* step) {
    if (!timings_enabled()) return;
    auto now = std::chrono::steady_clock::now();
    ResidentMemory mem = resident_memory();
    std::fprintf(stderr, "timing derive:%s %.3f ms peak-rss %.0f MiB rss %.0f MiB\n", step,
                 std::chrono::duration<double, std::milli>(now - last_).count(), mem.peak_mib, mem.current_mib);
    last_ = now;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace proflint
