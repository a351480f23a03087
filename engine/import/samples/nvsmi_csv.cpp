// engine/import/samples/nvsmi_csv.cpp — nvidia-smi --query-gpu=... --format=csv[,nounits] logs.
//
// Any column set and order: the header names the columns (units in brackets, or none with
// nounits, or written after each value); samples go to one series per GPU and column. GPUs come
// from the index column, else from uuid / pci.bus_id, else from their position in each burst of
// rows (nvidia-smi prints every GPU of one sample in index order, but their timestamps may differ,
// so equal timestamps do not group a sample).
#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>

#include "engine/common/error.hpp"
#include "engine/common/import_issue_kinds.hpp"
#include "engine/import/samples/sample_text.hpp"
#include "engine/import/samples/samples_importers.hpp"

namespace proflint {

bool is_sampling_log_format(std::string_view format) {
  return format == kNvsmiCsvFormat || format == kDmonFormat || format == kPmonFormat || format == kDcgmiFormat ||
         format == kMemoryTimelineFormat || format == kOperatorLogFormat;
}

namespace samples {

int infer_gpus_per_burst(const std::vector<int64_t>& times) {
  if (times.size() < 4) return 1;
  std::vector<double> gaps;
  double total = 0;
  for (size_t i = 0; i + 1 < times.size(); ++i) {
    double g = static_cast<double>(std::max<int64_t>(0, times[i + 1] - times[i]));
    gaps.push_back(g);
    total += g;
  }
  if (total <= 0) return 1;
  int best = 1;
  const int limit = static_cast<int>(std::min<size_t>(64, times.size() / 4));
  for (int n = 2; n <= limit; ++n) {
    double at_boundary = 0;
    for (size_t i = static_cast<size_t>(n) - 1; i < gaps.size(); i += static_cast<size_t>(n)) at_boundary += gaps[i];
    if (at_boundary >= 0.6 * total) best = n;
  }
  return best;
}

namespace {

struct Column {
  std::string name, unit;
  MetricMap map;
};

bool is_name(const std::string& n, std::initializer_list<std::string_view> names) {
  std::string l = n;
  for (auto& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (auto x : names)
    if (l == x) return true;
  return false;
}

}  // namespace

void read_nvsmi_csv(std::string_view text, const std::string& path, FactSink& sink) {
  auto lines = split_lines(text);
  size_t h = 0;
  while (h < lines.size() && trim(lines[h].text).empty()) ++h;
  if (h == lines.size()) throw input_error(path, "", "empty nvidia-smi log (expected a CSV header line)");
  const Line header = lines[h];
  if (parse_clock_time(split_cells(header.text, ',')[0]))
    throw input_error(path, "line " + std::to_string(header.number),
                      "nvidia-smi CSV without a header line (run nvidia-smi with --format=csv, not csv,noheader, so that "
                      "the columns are named)");
  std::vector<Column> columns;
  int time_col = -1, index_col = -1, id_col = -1, name_col = -1;
  for (auto cell : split_cells(header.text, ',')) {
    auto [name, unit] = split_header(cell);
    int c = static_cast<int>(columns.size());
    if (is_name(name, {"timestamp"})) time_col = c;
    else if (is_name(name, {"index", "gpu_index", "gpu"})) index_col = c;
    else if (is_name(name, {"uuid", "gpu_uuid", "pci.bus_id", "gpu_bus_id", "serial"}) && id_col < 0) id_col = c;
    else if (is_name(name, {"name", "gpu_name"})) name_col = c;
    columns.push_back({name, unit, map_metric(name, unit)});
  }
  int sample_columns = 0;
  for (const auto& col : columns) sample_columns += col.map.metric.empty() ? 0 : 1;
  if (sample_columns == 0 || columns.size() < 2)
    throw input_error(path, "line " + std::to_string(header.number),
                      "nvidia-smi CSV header names no sampled column (expected e.g. timestamp, index, utilization.gpu, memory.used)");

  struct Row {
    int64_t line = 0, ts = 0;
    std::vector<std::string_view> cells;
  };
  std::vector<Row> rows;
  std::string first_bad;
  for (size_t i = h + 1; i < lines.size(); ++i) {
    std::string_view t = trim(lines[i].text);
    if (t.empty() || t == trim(header.text)) continue;  // blank line, repeated header of a restarted logger
    sink.count_event();
    auto cells = split_cells(lines[i].text, ',');
    std::string place = "line " + std::to_string(lines[i].number);
    if (cells.size() != columns.size()) {
      std::string why = "expected " + std::to_string(columns.size()) + " cells as in the header, found " + std::to_string(cells.size());
      if (first_bad.empty()) first_bad = place + ": " + why;
      sink.add_issue(import_issue::sample_row_unreadable, std::string(t.substr(0, 120)), place + ": " + why);
      continue;
    }
    Row r;
    r.line = lines[i].number;
    if (time_col >= 0) {
      auto ts = parse_clock_time(cells[static_cast<size_t>(time_col)]);
      if (!ts) {
        std::string why = "unreadable timestamp '" + std::string(cells[static_cast<size_t>(time_col)].substr(0, 40)) +
                          "' (expected YYYY/MM/DD HH:MM:SS.mmm)";
        if (first_bad.empty()) first_bad = place + ": " + why;
        sink.add_issue(import_issue::sample_row_unreadable, std::string(t.substr(0, 120)), place + ": " + why);
        continue;
      }
      r.ts = *ts;
    }
    r.cells = std::move(cells);
    rows.push_back(std::move(r));
  }
  if (rows.empty())
    throw input_error(path, first_bad.empty() ? "line " + std::to_string(header.number) : first_bad.substr(0, first_bad.find(':')),
                      first_bad.empty() ? "nvidia-smi CSV has a header but no sample rows"
                                        : "no readable sample rows in this nvidia-smi CSV; first problem: " +
                                              first_bad.substr(first_bad.find(':') + 2));

  // Which GPU each row is.
  std::vector<int64_t> device(rows.size(), 0);
  if (index_col >= 0 || id_col >= 0) {
    std::map<std::string, int64_t> by_id;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (index_col >= 0) {
        Cell c = parse_cell(rows[i].cells[static_cast<size_t>(index_col)]);
        if (c.kind == Cell::number && c.value >= 0 && c.value < 1e6) {
          device[i] = static_cast<int64_t>(c.value);
          continue;
        }
      }
      std::string id(id_col >= 0 ? rows[i].cells[static_cast<size_t>(id_col)] : std::string_view());
      auto [it, fresh] = by_id.emplace(id, static_cast<int64_t>(by_id.size()));
      device[i] = it->second;
    }
  } else {
    std::vector<int64_t> times;
    for (const auto& r : rows) times.push_back(r.ts);
    int n = time_col >= 0 ? infer_gpus_per_burst(times) : 1;
    for (size_t i = 0; i < rows.size(); ++i) device[i] = static_cast<int64_t>(i % static_cast<size_t>(n));
    if (n > 1) {
      sink.add_issue(import_issue::sample_gpu_by_position, std::to_string(n) + " GPUs per burst",
                     "line " + std::to_string(rows.front().line) + " on: no index, uuid or pci.bus_id column");
      if (rows.size() % static_cast<size_t>(n) != 0)
        sink.add_issue(import_issue::sample_burst_incomplete,
                       "last burst has " + std::to_string(rows.size() % static_cast<size_t>(n)) + " of " + std::to_string(n) + " rows",
                       "line " + std::to_string(rows.back().line));
    }
  }
  if (time_col < 0) {
    // No time column: one row per GPU per second (nvidia-smi -l 1, the usual), said as an issue.
    std::map<int64_t, int64_t> seen;
    for (size_t i = 0; i < rows.size(); ++i) rows[i].ts = seen[device[i]]++ * 1'000'000'000;
    sink.add_issue(import_issue::sample_times_assumed, "no timestamp column", "line " + std::to_string(header.number));
    sink.set_metadata("clock", "relative");
  } else {
    sink.set_metadata("clock", "local_time");
  }

  // Devices: name and total memory when the log has them.
  std::map<int64_t, DeviceRow> devices;
  std::map<std::pair<int64_t, size_t>, size_t> series;  // (device, column) -> series index
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    DeviceRow& d = devices[device[i]];
    d.device_id = device[i];
    if (name_col >= 0 && !d.name) {
      std::string_view n = r.cells[static_cast<size_t>(name_col)];
      if (!n.empty() && parse_cell(n).kind != Cell::missing) d.name = std::string(n);
    }
    for (size_t c = 0; c < columns.size(); ++c) {
      const Column& col = columns[c];
      if (col.map.metric.empty()) continue;
      Cell cell = parse_cell(r.cells[c]);
      if (cell.kind == Cell::missing) continue;
      if (cell.kind == Cell::text) {
        sink.add_issue(import_issue::sample_cell_unreadable, std::string(r.cells[c].substr(0, 60)),
                       "line " + std::to_string(r.line) + " column " + col.name);
        continue;
      }
      MetricMap m = col.map;
      if (col.unit.empty() && !cell.unit.empty()) m = map_metric(col.name, cell.unit);  // unit written in the cells only
      auto key = std::pair(device[i], c);
      auto it = series.find(key);
      if (it == series.end()) {
        SampleSeriesRow s;
        s.device_id = device[i];
        s.metric = m.metric;
        s.unit = m.unit;
        s.format = std::string(kNvsmiCsvFormat);
        it = series.emplace(key, sink.add_sample_series(s)).first;
      }
      double v = cell.value * m.scale;
      sink.add_sample(it->second, r.ts, v);
      if (m.metric == "memory_total" && !d.memory_bytes) {
        // A board's memory is bytes to terabytes; beyond 2^50 (a PiB) the cell is corrupt or edited
        // and the size stays unknown rather than overflowing the conversion.
        if (v >= 0 && v <= static_cast<double>(FactSink::kMaxTransferBytes))
          d.memory_bytes = static_cast<int64_t>(v);
        else
          sink.add_issue(import_issue::value_out_of_range, std::string(r.cells[c].substr(0, 60)),
                         "line " + std::to_string(r.line) + " column " + col.name + ": memory size beyond 2^50 bytes");
      }
    }
  }
  for (auto& [id, d] : devices) {
    d.vendor = "nvidia";
    sink.add_device(d);
  }
}

}  // namespace samples

bool NvsmiCsvImporter::sniff(std::string_view head, bool) const {
  auto lines = samples::split_lines(head.substr(0, std::min<size_t>(head.size(), 2048)));
  for (const auto& l : lines) {
    std::string_view t = samples::trim(l.text);
    if (t.empty()) continue;
    if (t.front() == '{' || t.front() == '[' || t.front() == '#') return false;
    auto cells = samples::split_cells(t, ',');
    if (cells.size() < 2) return false;
    // A data row first (csv,noheader) is claimed too, so that its error can say what is missing.
    if (samples::parse_clock_time(cells[0])) return true;
    int known = 0;
    for (auto c : cells) {
      auto [name, unit] = samples::split_header(c);
      std::string n = name;
      for (auto& ch : n) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (n == "timestamp" || n == "index" || n == "pci.bus_id" || n == "uuid") ++known;
      else if (n.find('.') != std::string::npos || n.find('_') != std::string::npos) {
        auto m = samples::map_metric(name, unit);
        // A canonical metric name differs from the recorded one only when it was recognised.
        if (!m.metric.empty() && m.metric != n) ++known;
      }
    }
    return known >= 1 && known * 2 >= static_cast<int>(cells.size()) - 1;
  }
  return false;
}

ImportResult NvsmiCsvImporter::import(const std::string& path, TraceModel& model, const ImportOptions&) const {
  TraceInfo info;
  info.path = path;
  info.format = std::string(kNvsmiCsvFormat);
  info.tool_version = "nvidia-smi";
  info.vendor = "nvidia";
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (!ec) info.file_bytes = static_cast<int64_t>(size);
  std::string text = samples::read_text(path);
  FactSink sink(model, info);
  samples::read_nvsmi_csv(text, path, sink);
  sink.commit();
  return {0, sink.rows_written(), sink.issue_count()};
}

}  // namespace proflint
