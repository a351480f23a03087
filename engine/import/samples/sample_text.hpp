// engine/import/samples/sample_text.hpp — what the sampling-log readers share: reading a small
// text file (gzip or not), clock times, number cells with units, and the canonical metric names
// of docs/samples.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace proflint::samples {

// The whole file as text, gunzipped when it is gzip. Sampling logs are small (MBs); a file past
// `limit` bytes of text is refused with a message naming it.
std::string read_text(const std::string& path, size_t limit = size_t{1} << 31);

// Lines without their end-of-line (\n or \r\n), numbered from 1.
struct Line {
  std::string_view text;
  int64_t number = 0;
};
std::vector<Line> split_lines(std::string_view text);

std::string_view trim(std::string_view s);
// Cells separated by `sep` (trimmed); sep = ' ' splits on runs of blanks.
std::vector<std::string_view> split_cells(std::string_view line, char sep);

// A clock time as nvidia-smi and DCGM print it, read as if UTC, in ns since the Unix epoch:
// "2025/05/20 22:24:27.466", "2025-05-20 22:24:27[.466]", "2025-05-20T22:24:27", or dmon's
// date and time cells "20250520 22:24:27". nullopt when it is not one.
std::optional<int64_t> parse_clock_time(std::string_view text);
// "20250520" and "22:24:27" (nvidia-smi dmon -o DT) together.
std::optional<int64_t> parse_date_and_time(std::string_view date, std::string_view time);

// A cell's reading.
struct Cell {
  enum Kind { number, missing, text } kind = text;
  double value = 0;
  std::string unit;  // unit written after the number ("18.03 W" -> "W"), empty when none
};
// Reads a cell: numbers with an optional unit, "[N/A]", "N/A", "[Not Supported]", "-" (missing),
// "Active"/"Not Active", "Enabled"/"Disabled", "Yes"/"No" (1/0), hexadecimal bit masks
// ("0x0000000000000004"), performance states ("P0" -> 0).
Cell parse_cell(std::string_view cell);

// Where a recorded metric goes: its canonical name and unit, and the factor from the unit as
// recorded to the canonical one. metric is empty for columns that are not samples (index,
// name, uuid, timestamp, ...).
struct MetricMap {
  std::string metric, unit;
  double scale = 1;
};
// `name` as recorded (nvidia-smi query field, dmon or DCGM column), `unit` from the header or
// the cells ("MiB", "%", "W", ...; may be empty).
MetricMap map_metric(std::string_view name, std::string_view unit);

// A (name, unit) header cell: "memory.used [MiB]" -> ("memory.used", "MiB");
// "gpu_utilization[%]" -> ("gpu_utilization", "%"); "index" -> ("index", "").
std::pair<std::string, std::string> split_header(std::string_view cell);

}  // namespace proflint::samples
