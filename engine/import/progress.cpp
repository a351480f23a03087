// engine/import/progress.cpp — see progress.hpp.
#include "engine/import/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>

namespace proflint {

ProgressBar::ProgressBar(bool wanted, const std::string& path, uint64_t total, Unit unit)
    : enabled_(wanted && total > 0),
      lines_(!isatty(STDERR_FILENO)),
      label_(std::filesystem::path(path).filename().string()),
      total_(total),
      unit_(unit) {
  if (label_.size() > 40) label_ = label_.substr(0, 37) + "...";
}

namespace {

void line(const std::string& label, int percent, uint64_t done, uint64_t total, bool bytes) {
  if (bytes)
    std::fprintf(stderr, "proflint: reading %s: %d%% (%.1f/%.1f MiB)\n", label.c_str(), percent,
                 static_cast<double>(done) / (1 << 20), static_cast<double>(total) / (1 << 20));
  else
    std::fprintf(stderr, "proflint: reading %s: %d%% (%llu/%llu rows)\n", label.c_str(), percent,
                 static_cast<unsigned long long>(done), static_cast<unsigned long long>(total));
  std::fflush(stderr);
}

}  // namespace

void ProgressBar::update(uint64_t done) {
  if (!enabled_) return;
  done = std::min(done, total_);
  int percent = static_cast<int>(100.0 * static_cast<double>(done) / static_cast<double>(total_));
  if (lines_) {
    percent -= percent % 10;
    if (percent <= shown_) return;
    shown_ = percent;
    line(label_, percent, done, total_, unit_ == Unit::bytes);
    return;
  }
  if (percent == shown_) return;
  shown_ = percent;
  constexpr int kWidth = 30;
  int filled = percent * kWidth / 100;
  std::string bar(static_cast<size_t>(filled), '#');
  bar.append(static_cast<size_t>(kWidth - filled), '.');
  if (unit_ == Unit::bytes)
    std::fprintf(stderr, "\rproflint: reading %s [%s] %3d%% %.0f/%.0f MiB", label_.c_str(), bar.c_str(), percent,
                 static_cast<double>(done) / (1 << 20), static_cast<double>(total_) / (1 << 20));
  else
    std::fprintf(stderr, "\rproflint: reading %s [%s] %3d%% %llu/%llu rows", label_.c_str(), bar.c_str(), percent,
                 static_cast<unsigned long long>(done), static_cast<unsigned long long>(total_));
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (lines_) {
    // The closing line, unless reading is being abandoned (an exception unwinding) or it was
    // already said: small files finish before the first update.
    if (enabled_ && shown_ < 100 && std::uncaught_exceptions() == 0) line(label_, 100, total_, total_, unit_ == Unit::bytes);
    enabled_ = false;
    return;
  }
  if (!enabled_ || shown_ < 0) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  shown_ = -1;
  enabled_ = false;
}

}  // namespace proflint
