// engine/derive/sample_alignment.hpp — putting a sampling log on the clock of a trace of the same
// job (docs/samples.md, "Beside a trace").
//
// nvidia-smi and dmon print local clock times without a zone; Kineto traces are in Unix-epoch ns
// (UTC). A log read as if its times were UTC is therefore off by the machine's UTC offset, a
// whole number of quarter hours between -12 h and +14 h: the offset that makes the log overlap
// the trace most is taken (0 first), and said as an import issue; an nsys export that records its
// local time gives the offset itself. A trace on a monotonic or session clock is placed on the
// epoch by the anchor it records (Kineto baseTimeNanoseconds, nsys TARGET_INFO_SESSION_START_TIME);
// without one, and for a log with no clock times, --sample-offset is needed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/model/model.hpp"

namespace proflint {

struct SampleAlignment {
  int64_t offset_ns = 0;   // added to the log's times
  bool aligned = false;    // the log overlaps the trace after the offset
  bool by_time_zone = false;  // offset found by the quarter-hour search (not 0, not given)
  int64_t overlap_ns = 0;
  std::string note;        // what was done, in words (the import issue's example)
};

// Where a trace's clock sits on the Unix epoch, when the trace records it (TraceInfo).
struct ClockAnchor {
  std::optional<int64_t> epoch_base_ns;  // epoch ns of the trace clock's zero
  std::optional<int64_t> utc_offset_ns;  // the capture machine's local time minus UTC
};

// `user_offset_ns`: --sample-offset, used as is when given. A trace on a monotonic or session
// clock with an anchor is aligned on the epoch (base + its times) and the offset brought back to
// its clock; a known UTC offset is tried before the quarter-hour search.
SampleAlignment align_samples(int64_t log_start, int64_t log_end, const std::string& log_clock, int64_t trace_start,
                              int64_t trace_end, const std::string& trace_clock, std::optional<int64_t> user_offset_ns,
                              const ClockAnchor& anchor = {});

// Moves the sample series, operator timings and import issues of `log` (a sampling log's model)
// into `trace`, shifting sample times by alignment.offset_ns; adds the import issue that says how
// (or that) the log was aligned.
void attach_samples(TraceModel& trace, TraceModel& log, const SampleAlignment& alignment);

}  // namespace proflint
