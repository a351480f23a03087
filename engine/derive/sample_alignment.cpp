// engine/derive/sample_alignment.cpp — see sample_alignment.hpp.
#include "engine/derive/sample_alignment.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "engine/common/import_issue_kinds.hpp"

namespace proflint {

namespace {

int64_t overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1) { return std::max<int64_t>(0, std::min(a1, b1) - std::max(a0, b0)); }

std::string hours(int64_t ns) {
  int64_t minutes = std::llabs(ns) / 60'000'000'000;
  return fmt::format("{}{:02}:{:02}", ns < 0 ? '-' : '+', minutes / 60, minutes % 60);
}

}  // namespace

SampleAlignment align_samples(int64_t log_start, int64_t log_end, const std::string& log_clock, int64_t trace_start,
                              int64_t trace_end, const std::string& trace_clock, std::optional<int64_t> user_offset_ns,
                              const ClockAnchor& anchor) {
  // A monotonic or session clock anchored on the epoch: align there, then express the offset on
  // the trace's own clock (log time + offset = trace time).
  if (!user_offset_ns && trace_clock != "epoch" && anchor.epoch_base_ns && log_clock == "local_time" &&
      trace_start != kNone && trace_end != kNone) {
    const int64_t base = *anchor.epoch_base_ns;
    SampleAlignment on_epoch = align_samples(log_start, log_end, log_clock, trace_start + base, trace_end + base, "epoch",
                                             std::nullopt, ClockAnchor{std::nullopt, anchor.utc_offset_ns});
    on_epoch.offset_ns -= base;
    on_epoch.note += fmt::format(" (the trace's {} clock placed on UTC by the start time it records)", trace_clock);
    return on_epoch;
  }
  SampleAlignment a;
  auto describe_ranges = [&] {
    return fmt::format("log {:.3f} s long, trace {:.3f} s long, log starts {:.3f} s from the trace's start",
                       static_cast<double>(log_end - log_start) / 1e9, static_cast<double>(trace_end - trace_start) / 1e9,
                       static_cast<double>(log_start + a.offset_ns - trace_start) / 1e9);
  };
  // A trace that recorded nothing has no window: nothing to compare with.
  if (trace_start == kNone || trace_end == kNone || log_start == kNone || log_end == kNone) {
    a.offset_ns = user_offset_ns.value_or(0);
    a.note = "the trace has no time window to align the log with";
    return a;
  }
  // A log of one instant still overlaps the trace when it falls inside it.
  auto len = [&](int64_t off) {
    int64_t o = overlap(log_start + off, std::max(log_end, log_start + 1) + off, trace_start, std::max(trace_end, trace_start + 1));
    return o;
  };
  if (user_offset_ns) {
    a.offset_ns = *user_offset_ns;
    a.overlap_ns = len(a.offset_ns);
    a.aligned = a.overlap_ns > 0;
    a.note = a.aligned ? fmt::format("--sample-offset {:.3f} s given", static_cast<double>(a.offset_ns) / 1e9)
                       : fmt::format("--sample-offset {:.3f} s given, but the ranges do not overlap: {}",
                                     static_cast<double>(a.offset_ns) / 1e9, describe_ranges());
    return a;
  }
  bool same_clock = log_clock == trace_clock;
  bool wall_vs_epoch = log_clock == "local_time" && trace_clock == "epoch";
  if (!same_clock && !wall_vs_epoch) {
    a.note = fmt::format("the log's clock ({}) and the trace's ({}) cannot be related without --sample-offset", log_clock,
                         trace_clock);
    return a;
  }
  a.overlap_ns = len(0);
  if (a.overlap_ns > 0 || same_clock) {
    a.aligned = a.overlap_ns > 0;
    if (!a.aligned) a.note = "the log and the trace do not overlap in time: " + describe_ranges();
    return a;
  }
  // The capture recorded its local time: the log, written on the same machine, is in that zone.
  if (anchor.utc_offset_ns && *anchor.utc_offset_ns != 0) {
    const int64_t off = -*anchor.utc_offset_ns;
    if (int64_t l = len(off); l > 0) {
      a.offset_ns = off;
      a.overlap_ns = l;
      a.aligned = true;
      a.note = fmt::format("log clock times read as the capture's local time UTC{} (recorded by the export, shifted "
                           "{:.0f} s): it then overlaps the trace for {:.3f} s",
                           hours(-off), static_cast<double>(off) / 1e9, static_cast<double>(l) / 1e9);
      return a;
    }
  }
  // Local clock times against UTC: the quarter-hour offset that overlaps most, the smallest first.
  constexpr int64_t kQuarter = 15 * 60'000'000'000LL;
  int64_t best = 0, best_len = 0;
  for (int64_t k = 1; k <= 14 * 4; ++k)
    for (int64_t sign : {-1, 1}) {
      int64_t off = sign * k * kQuarter;
      if (off < -12 * 4 * kQuarter) continue;
      int64_t l = len(off);
      if (l > best_len) {
        best_len = l;
        best = off;
      }
    }
  if (best_len > 0) {
    a.offset_ns = best;
    a.overlap_ns = best_len;
    a.aligned = true;
    a.by_time_zone = true;
    a.note = fmt::format("log clock times read as local time UTC{} (shifted {:.0f} s): it then overlaps the trace for {:.3f} s",
                         hours(-best), static_cast<double>(best) / 1e9, static_cast<double>(best_len) / 1e9);
    return a;
  }
  a.note = "the log and the trace do not overlap in time with any time-zone offset: " + describe_ranges();
  return a;
}

void attach_samples(TraceModel& trace, TraceModel& log, const SampleAlignment& alignment) {
  const bool has_series = !log.sample_series.empty();
  for (auto& s : log.sample_series) {
    s.offset_ns += alignment.offset_ns;
    for (auto& t : s.ts_ns) t += alignment.offset_ns;
    trace.sample_series.push_back(std::move(s));
  }
  log.sample_series.clear();
  for (auto& o : log.operator_timings) trace.operator_timings.push_back(std::move(o));
  log.operator_timings.clear();
  for (auto& [kind, issue] : log.issues) {
    auto [it, fresh] = trace.issues.emplace(kind, issue);
    if (!fresh) it->second.count += issue.count;
  }
  auto add = [&](std::string_view kind) {
    auto [it, fresh] = trace.issues.emplace(std::string(kind), IssueFact{0, alignment.note.substr(0, 200), log.info.path});
    ++it->second.count;
  };
  if (!has_series) return;  // an operator log has no times to align
  if (!alignment.aligned) add(import_issue::samples_not_aligned);
  else if (alignment.by_time_zone) add(import_issue::samples_time_zone_assumed);
}

}  // namespace proflint
