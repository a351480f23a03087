// engine/import/samples/dmon.cpp — nvidia-smi dmon, nvidia-smi pmon and dcgmi dmon text output.
//
// All three print a whitespace table under a '#' line of column names (repeated now and then),
// one row per GPU (dmon, dcgmi: 'GPU 0' entity) or per process on a GPU (pmon) and sample.
// dmon and pmon rows carry a date and time with -o DT; without them, and in dcgmi dmon, which
// prints no time at all, samples are placed one second apart (the tools' default interval) with
// the import issue sample_times_assumed.
#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "engine/common/error.hpp"
#include "engine/common/import_issue_kinds.hpp"
#include "engine/import/samples/sample_text.hpp"
#include "engine/import/samples/samples_importers.hpp"

namespace proflint {

namespace samples {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The header's names, without the leading '#'.
std::vector<std::string> header_names(std::string_view line) {
  line = trim(line);
  if (!line.empty() && line.front() == '#') line.remove_prefix(1);
  std::vector<std::string> names;
  for (auto c : split_cells(line, ' ')) names.push_back(lower(c));
  return names;
}

// Metrics only dmon writes, beyond the shared aliases of sample_text.cpp.
MetricMap dmon_metric(const std::string& name, const std::string& unit) {
  if (name == "pviol") return {"power_violation", "%", 1};
  if (name == "tviol") return {"thermal_violation", "", 1};
  if (name == "bar1") return {"bar1_used", "bytes", 1048576.0};
  if (name == "sbecc" || name == "dbecc" || name == "pci" || name == "ccpm" || name == "jpg" || name == "ofa")
    return {name == "jpg" ? "jpeg_active" : name == "ofa" ? "ofa_active" : name, name == "jpg" || name == "ofa" ? "%" : "", 1};
  return map_metric(name, unit);
}

}  // namespace

std::string_view read_dmon(std::string_view text, const std::string& path, FactSink& sink) {
  auto lines = split_lines(text);
  std::vector<std::string> names, units;
  std::string_view dialect;
  int64_t header_line = 0;
  // Columns by role.
  int date_col = -1, time_col = -1, gpu_col = -1, pid_col = -1, command_col = -1, type_col = -1;
  std::vector<MetricMap> maps;
  auto set_header = [&](const Line& l) {
    names = header_names(l.text);
    header_line = l.number;
    units.clear();
    date_col = time_col = gpu_col = pid_col = command_col = type_col = -1;
    for (int i = 0; i < static_cast<int>(names.size()); ++i) {
      const auto& n = names[static_cast<size_t>(i)];
      if (n == "date") date_col = i;
      else if (n == "time") time_col = i;
      else if (n == "gpu" || n == "entity") gpu_col = i;
      else if (n == "pid") pid_col = i;
      else if (n == "command") command_col = i;
      else if (n == "type") type_col = i;
    }
    if (dialect.empty()) dialect = names.size() && names[static_cast<size_t>(std::max(gpu_col, 0))] == "entity" ? kDcgmiFormat
                                   : pid_col >= 0                                                                ? kPmonFormat
                                                                                                                 : kDmonFormat;
    maps.assign(names.size(), {});
    for (size_t i = 0; i < names.size(); ++i)
      if (static_cast<int>(i) != date_col && static_cast<int>(i) != time_col && static_cast<int>(i) != gpu_col &&
          static_cast<int>(i) != pid_col && static_cast<int>(i) != command_col && static_cast<int>(i) != type_col)
        maps[i] = dmon_metric(names[i], "");
  };
  std::map<std::tuple<int64_t, int64_t, size_t>, size_t> series;  // (gpu, pid, column) -> series
  std::map<int64_t, int64_t> bursts_of;                            // gpu -> rows seen (times when none recorded)
  std::map<int64_t, std::string> process_names;
  std::set<int64_t> gpus;
  bool times_assumed = false;
  int64_t rows_read = 0;
  std::string first_bad;
  for (size_t li = 0; li < lines.size(); ++li) {
    const Line& l = lines[li];
    std::string_view t = trim(l.text);
    if (t.empty()) continue;
    if (t.front() == '#') {
      auto n = header_names(t);
      bool is_names = std::find(n.begin(), n.end(), "gpu") != n.end() || std::find(n.begin(), n.end(), "entity") != n.end();
      if (is_names) {
        set_header(l);
      } else if (!names.empty() && n.size() == names.size()) {
        units = n;  // '# Idx W C C % % ... MHz'
        for (size_t i = 0; i < names.size(); ++i)
          if (!maps[i].metric.empty()) maps[i] = dmon_metric(names[i], units[i]);
      }
      continue;
    }
    if (names.empty())
      throw input_error(path, "line " + std::to_string(l.number), "data before the '#' header line of column names");
    auto cells = split_cells(t, ' ');
    if (dialect == kDcgmiFormat) {
      // 'ID' unit line under the names; entity cells are two words ('GPU 0').
      if (lower(cells[0]) == "id") continue;
      if (cells.size() >= 2 && (lower(cells[0]) == "gpu" || lower(cells[0]).rfind("gpu", 0) == 0)) {
        cells[1] = std::string_view(cells[0].data(), static_cast<size_t>(cells[1].data() + cells[1].size() - cells[0].data()));
        cells.erase(cells.begin());
      }
    }
    if (command_col >= 0 && cells.size() > names.size() && command_col == static_cast<int>(names.size()) - 1) {
      // A command with blanks in it: the rest of the line.
      cells[static_cast<size_t>(command_col)] = std::string_view(
          cells[static_cast<size_t>(command_col)].data(),
          static_cast<size_t>(cells.back().data() + cells.back().size() - cells[static_cast<size_t>(command_col)].data()));
      cells.resize(names.size());
    }
    std::string place = "line " + std::to_string(l.number);
    // A row that cannot be read: counted, and the first one named in the error if none can be.
    auto unreadable = [&](const std::string& why) {
      if (first_bad.empty()) first_bad = place + ": " + why;
      sink.add_issue(import_issue::sample_row_unreadable, std::string(t.substr(0, 120)), place + ": " + why);
    };
    sink.count_event();
    if (cells.size() != names.size()) {
      std::string why = "expected " + std::to_string(names.size()) + " cells as in the header of line " +
                        std::to_string(header_line) + ", found " + std::to_string(cells.size());
      unreadable(why);
      continue;
    }
    std::optional<int64_t> gpu;
    if (gpu_col >= 0) {
      std::string_view g = cells[static_cast<size_t>(gpu_col)];
      size_t sp = g.find_last_of(" \t");
      if (sp != std::string_view::npos) g = g.substr(sp + 1);
      Cell c = parse_cell(g);
      if (c.kind == Cell::number && c.value >= 0 && c.value < 1e6) gpu = static_cast<int64_t>(c.value);
    }
    if (!gpu) {
      std::string why = "unreadable GPU id '" + std::string(gpu_col >= 0 ? cells[static_cast<size_t>(gpu_col)] : "") + "'";
      unreadable(why);
      continue;
    }
    int64_t pid = kNone;
    if (pid_col >= 0) {
      Cell c = parse_cell(cells[static_cast<size_t>(pid_col)]);
      if (c.kind != Cell::number) continue;  // '-': no process on this GPU in this sample
      if (!(c.value >= 0 && c.value < 4294967296.0)) {  // process ids are 32-bit on every OS
        std::string why = "unreadable process id '" + std::string(cells[static_cast<size_t>(pid_col)]) + "'";
        unreadable(why);
        continue;
      }
      pid = static_cast<int64_t>(c.value);
      if (command_col >= 0) process_names.emplace(pid, std::string(cells[static_cast<size_t>(command_col)]));
    }
    int64_t ts = 0;
    if (date_col >= 0 && time_col >= 0) {
      auto when = parse_date_and_time(cells[static_cast<size_t>(date_col)], cells[static_cast<size_t>(time_col)]);
      if (!when) {
        std::string why = "unreadable date and time '" + std::string(cells[static_cast<size_t>(date_col)]) + " " +
                          std::string(cells[static_cast<size_t>(time_col)]) + "' (expected YYYYMMDD HH:MM:SS)";
        unreadable(why);
        continue;
      }
      ts = *when;
    } else {
      // One row per GPU (per process for pmon) per sample; a GPU seen again starts the next sample.
      int64_t key = pid_col >= 0 ? (*gpu << 32) ^ pid : *gpu;
      ts = bursts_of[key]++ * 1'000'000'000;
      times_assumed = true;
    }
    ++rows_read;
    gpus.insert(*gpu);
    for (size_t c = 0; c < cells.size(); ++c) {
      if (maps[c].metric.empty()) continue;
      Cell cell = parse_cell(cells[c]);
      if (cell.kind == Cell::missing) continue;
      if (cell.kind == Cell::text) {
        sink.add_issue(import_issue::sample_cell_unreadable, std::string(cells[c].substr(0, 60)), place + " column " + names[c]);
        continue;
      }
      auto key = std::tuple(*gpu, pid, c);
      auto it = series.find(key);
      if (it == series.end()) {
        SampleSeriesRow s;
        s.device_id = *gpu;
        if (pid != kNone) s.pid = pid;
        s.metric = maps[c].metric;
        s.unit = maps[c].unit;
        s.format = std::string(dialect);
        it = series.emplace(key, sink.add_sample_series(s)).first;
      }
      sink.add_sample(it->second, ts, cell.value * maps[c].scale);
    }
  }
  if (names.empty()) throw input_error(path, "line 1", "no '#' header line naming the columns (expected '# gpu ...' or '#Entity ...')");
  if (rows_read == 0)
    throw input_error(path, first_bad.empty() ? "line " + std::to_string(header_line) : first_bad.substr(0, first_bad.find(':')),
                      first_bad.empty() ? "the table has a header but no sample rows"
                                        : "no readable sample rows; first problem: " + first_bad.substr(first_bad.find(':') + 2));
  if (times_assumed) {
    sink.add_issue(import_issue::sample_times_assumed, "rows without date and time", "line " + std::to_string(header_line));
    sink.set_metadata("clock", "relative");
  } else {
    sink.set_metadata("clock", "local_time");
  }
  for (int64_t g : gpus) {
    DeviceRow d;
    d.device_id = g;
    d.vendor = "nvidia";
    sink.add_device(d);
  }
  for (const auto& [pid, name] : process_names) sink.add_process(pid, name);
  return dialect;
}

}  // namespace samples

bool DmonImporter::sniff(std::string_view head, bool) const {
  for (const auto& l : samples::split_lines(head.substr(0, std::min<size_t>(head.size(), 2048)))) {
    std::string_view t = samples::trim(l.text);
    if (t.empty()) continue;
    if (t.front() != '#') return false;
    t.remove_prefix(1);
    auto cells = samples::split_cells(t, ' ');
    if (cells.empty()) return false;
    std::string first(cells[0]);
    for (auto& c : first) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (first == "entity" || first == "gpu") return cells.size() >= 2;
    if (first == "date" && cells.size() >= 3) {
      std::string third(cells[2]);
      for (auto& c : third) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return third == "gpu";
    }
    return false;
  }
  return false;
}

ImportResult DmonImporter::import(const std::string& path, TraceModel& model, const ImportOptions&) const {
  TraceInfo info;
  info.path = path;
  info.format = std::string(kDmonFormat);
  info.vendor = "nvidia";
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (!ec) info.file_bytes = static_cast<int64_t>(size);
  std::string text = samples::read_text(path);
  FactSink sink(model, info);
  std::string_view dialect = samples::read_dmon(text, path, sink);
  model.info.format = std::string(dialect);
  model.info.tool_version = dialect == kDcgmiFormat ? "dcgmi" : "nvidia-smi";
  sink.commit();
  return {0, sink.rows_written(), sink.issue_count()};
}

}  // namespace proflint
