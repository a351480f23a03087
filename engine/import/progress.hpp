// engine/import/progress.hpp — the ingest progress bar on stderr.
//
// Drawn when asked (--progress, on by default when stderr is a terminal). On a terminal it is one
// bar redrawn when the shown percentage changes and cleared when reading ends. Asked for without a
// terminal (CI logs, `2> file`), it prints a plain line every 10%: "proflint: reading x.json: 40%
// (12/30 MiB)". Without --progress and without a terminal nothing is printed.
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
  bool lines_ = false;  // plain lines (no terminal) instead of a redrawn bar
  std::string label_;
  uint64_t total_ = 0;
  Unit unit_;
  int shown_ = -1;
};

}  // namespace proflint
