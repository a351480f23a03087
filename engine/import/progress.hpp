// engine/import/progress.hpp — the ingest progress bar on stderr.
//
// Drawn only when asked (--progress, on by default on a terminal) AND stderr is a terminal, so
// output compared by tests or captured in CI never contains it. Redrawn only when the shown
// percentage changes; the line is cleared when reading ends.
#pragma once

#include <cstdint>
#include <string>

namespace proflint {

class ProgressBar {
 public:
  enum class Unit { bytes, rows };
  ProgressBar(bool wanted, const std::string& path, uint64_t total, Unit unit);
  ~ProgressBar() { finish(); }
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  bool enabled() const { return enabled_; }
  void update(uint64_t done);
  void finish();

 private:
  bool enabled_ = false;
  std::string label_;
  uint64_t total_ = 0;
  Unit unit_;
  int shown_ = -1;
};

}  // namespace proflint
