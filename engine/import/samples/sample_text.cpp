// engine/import/samples/sample_text.cpp — see sample_text.hpp.
#include "engine/import/samples/sample_text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "engine/common/error.hpp"
#include "engine/import/kineto/byte_source.hpp"

namespace proflint::samples {

std::string read_text(const std::string& path, size_t limit) {
  auto source = kineto::open_byte_source(path);
  std::string text;
  char buf[1 << 16];
  while (size_t n = source->read(buf, sizeof buf)) {
    text.append(buf, n);
    if (text.size() > limit)
      throw input_error(path, "", "sampling log larger than " + std::to_string(limit >> 20) + " MiB of text; split it");
  }
  return text;
}

std::vector<Line> split_lines(std::string_view text) {
  std::vector<Line> lines;
  int64_t number = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back({line, ++number});
    pos = end + 1;
  }
  return lines;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split_cells(std::string_view line, char sep) {
  std::vector<std::string_view> cells;
  if (sep == ' ') {
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      size_t start = i;
      while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
      if (i > start) cells.push_back(line.substr(start, i - start));
    }
    return cells;
  }
  size_t pos = 0;
  while (true) {
    size_t end = line.find(sep, pos);
    if (end == std::string_view::npos) {
      cells.push_back(trim(line.substr(pos)));
      break;
    }
    cells.push_back(trim(line.substr(pos, end - pos)));
    pos = end + 1;
  }
  return cells;
}

namespace {

// Days from 1970-01-01 to the civil date (proleptic Gregorian).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool digits(std::string_view s, size_t pos, size_t n, int64_t& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

// "HH:MM:SS[.fff]" at the start of `t` -> ns since midnight.
std::optional<int64_t> time_of_day(std::string_view t) {
  int64_t h, m, s;
  if (!digits(t, 0, 2, h) || t.size() < 8 || t[2] != ':' || !digits(t, 3, 2, m) || t[5] != ':' || !digits(t, 6, 2, s))
    return std::nullopt;
  if (h > 23 || m > 59 || s > 60) return std::nullopt;
  int64_t ns = ((h * 60 + m) * 60 + s) * 1'000'000'000;
  size_t i = 8;
  if (i < t.size() && (t[i] == '.' || t[i] == ',')) {
    ++i;
    int64_t scale = 100'000'000;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) {
      ns += (t[i] - '0') * scale;
      scale /= 10;
      ++i;
    }
  }
  if (trim(t.substr(i)).size() > 0 && trim(t.substr(i)) != "Z") return std::nullopt;
  return ns;
}

std::optional<int64_t> civil(int64_t y, int64_t mo, int64_t d) {
  if (y < 1970 || y > 2200 || mo < 1 || mo > 12 || d < 1 || d > 31) return std::nullopt;
  return days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86'400'000'000'000;
}

}  // namespace

std::optional<int64_t> parse_clock_time(std::string_view text) {
  text = trim(text);
  int64_t y, mo, d;
  // YYYY/MM/DD or YYYY-MM-DD, then ' ' or 'T', then the time.
  if (digits(text, 0, 4, y) && text.size() >= 19 && (text[4] == '/' || text[4] == '-') && text[7] == text[4] &&
      digits(text, 5, 2, mo) && digits(text, 8, 2, d) && (text[10] == ' ' || text[10] == 'T')) {
    auto day = civil(y, mo, d);
    auto tod = time_of_day(text.substr(11));
    if (day && tod) return *day + *tod;
    return std::nullopt;
  }
  // YYYYMMDD HH:MM:SS
  if (text.size() >= 17 && text[8] == ' ') return parse_date_and_time(text.substr(0, 8), trim(text.substr(9)));
  return std::nullopt;
}

std::optional<int64_t> parse_date_and_time(std::string_view date, std::string_view time) {
  int64_t y, mo, d;
  if (date.size() != 8 || !digits(date, 0, 4, y) || !digits(date, 4, 2, mo) || !digits(date, 6, 2, d)) return std::nullopt;
  auto day = civil(y, mo, d);
  auto tod = time_of_day(time);
  if (!day || !tod) return std::nullopt;
  return *day + *tod;
}

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Cell parse_cell(std::string_view cell) {
  cell = trim(cell);
  Cell c;
  std::string l = lower(cell);
  if (l.empty() || l == "[n/a]" || l == "n/a" || l == "[not supported]" || l == "not supported" || l == "-" ||
      l == "[unknown error]" || l == "[insufficient permissions]" || l == "[gpu is lost]" || l == "na" || l == "n/s") {
    c.kind = Cell::missing;
    return c;
  }
  if (l == "active" || l == "enabled" || l == "yes") return {Cell::number, 1, ""};
  if (l == "not active" || l == "disabled" || l == "no") return {Cell::number, 0, ""};
  if (l.size() > 2 && l[0] == '0' && l[1] == 'x') {
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(l.data() + 2, l.data() + l.size(), v, 16);
    if (ec == std::errc() && p == l.data() + l.size()) return {Cell::number, static_cast<double>(v), ""};
    return c;
  }
  if (l.size() >= 2 && l.size() <= 3 && l[0] == 'p' && std::isdigit(static_cast<unsigned char>(l[1]))) {
    int v = 0;
    auto [p, ec] = std::from_chars(l.data() + 1, l.data() + l.size(), v);
    if (ec == std::errc() && p == l.data() + l.size()) return {Cell::number, static_cast<double>(v), ""};
  }
  double v = 0;
  const char* begin = cell.data();
  const char* end = cell.data() + cell.size();
  if (*begin == '+') ++begin;
  auto [p, ec] = std::from_chars(begin, end, v);
  if (ec != std::errc() || p == begin) return c;
  std::string_view rest = trim(std::string_view(p, static_cast<size_t>(end - p)));
  // A unit is letters, '%', '/', '°' (two bytes in UTF-8); anything else means the cell is text.
  for (unsigned char ch : rest)
    if (!(std::isalpha(ch) || ch == '%' || ch == '/' || ch >= 0x80)) return c;
  c.kind = Cell::number;
  c.value = v;
  c.unit = std::string(rest);
  return c;
}

std::pair<std::string, std::string> split_header(std::string_view cell) {
  cell = trim(cell);
  size_t open = cell.rfind('[');
  if (open != std::string_view::npos && cell.back() == ']')
    return {std::string(trim(cell.substr(0, open))), std::string(trim(cell.substr(open + 1, cell.size() - open - 2)))};
  return {std::string(cell), ""};
}

namespace {

struct Alias {
  std::string_view name, metric, unit, recorded_unit;  // recorded_unit: what a unit-less cell is in
};

// Names as nvidia-smi --query-gpu, nvidia-smi dmon/pmon and dcgmi dmon write them (lower case).
// recorded_unit "ratio" is DCGM's 0..1 fraction of time, turned into a percentage.
constexpr Alias kAliases[] = {
    {"utilization.gpu", "gpu_active", "%", "%"},
    {"gpu_utilization", "gpu_active", "%", "%"},
    {"utilization_gpu", "gpu_active", "%", "%"},
    {"gpu_util", "gpu_active", "%", "%"},
    {"sm", "gpu_active", "%", "%"},  // dmon/pmon 'sm': % of time a kernel ran (utilization.gpu)
    {"gputl", "gpu_active", "%", "%"},
    {"gract", "graphics_active", "%", "ratio"},
    {"utilization.memory", "memory_bus_active", "%", "%"},
    {"memory_utilization", "memory_bus_active", "%", "%"},
    {"mem", "memory_bus_active", "%", "%"},
    {"mcutl", "memory_bus_active", "%", "%"},
    {"memory.used", "memory_used", "bytes", "MiB"},
    {"memory_used", "memory_used", "bytes", "MiB"},
    {"fb", "memory_used", "bytes", "MiB"},
    {"fbusd", "memory_used", "bytes", "MiB"},
    {"memory.total", "memory_total", "bytes", "MiB"},
    {"memory_total", "memory_total", "bytes", "MiB"},
    {"fbtot", "memory_total", "bytes", "MiB"},
    {"memory.free", "memory_free", "bytes", "MiB"},
    {"memory_free", "memory_free", "bytes", "MiB"},
    {"fbfre", "memory_free", "bytes", "MiB"},
    {"power.draw", "power_draw", "W", "W"},
    {"power.draw.instant", "power_draw", "W", "W"},
    {"power.draw.average", "power_draw_average", "W", "W"},
    {"power_draw", "power_draw", "W", "W"},
    {"pwr", "power_draw", "W", "W"},
    {"power", "power_draw", "W", "W"},
    {"power.limit", "power_limit", "W", "W"},
    {"enforced.power.limit", "power_limit", "W", "W"},
    {"power.max_limit", "power_max_limit", "W", "W"},
    {"temperature.gpu", "temperature_gpu", "C", "C"},
    {"temperature", "temperature_gpu", "C", "C"},
    {"gtemp", "temperature_gpu", "C", "C"},
    {"tmptr", "temperature_gpu", "C", "C"},
    {"temperature.memory", "temperature_memory", "C", "C"},
    {"mtemp", "temperature_memory", "C", "C"},
    {"temperature.gpu.tlimit", "temperature_headroom", "C", "C"},
    {"clocks.sm", "clock_sm", "MHz", "MHz"},
    {"clocks.current.sm", "clock_sm", "MHz", "MHz"},
    {"smclk", "clock_sm", "MHz", "MHz"},
    {"clocks.gr", "clock_graphics", "MHz", "MHz"},
    {"clocks.current.graphics", "clock_graphics", "MHz", "MHz"},
    {"pclk", "clock_graphics", "MHz", "MHz"},
    {"clocks.mem", "clock_memory", "MHz", "MHz"},
    {"clocks.current.memory", "clock_memory", "MHz", "MHz"},
    {"mclk", "clock_memory", "MHz", "MHz"},
    {"mmclk", "clock_memory", "MHz", "MHz"},
    {"clocks.max.sm", "clock_sm_max", "MHz", "MHz"},
    {"clocks.max.streaming_multiprocessor", "clock_sm_max", "MHz", "MHz"},
    {"clocks.max.gr", "clock_graphics_max", "MHz", "MHz"},
    {"clocks.max.graphics", "clock_graphics_max", "MHz", "MHz"},
    {"clocks.max.mem", "clock_memory_max", "MHz", "MHz"},
    {"clocks.max.memory", "clock_memory_max", "MHz", "MHz"},
    {"clocks.applications.graphics", "clock_graphics_app", "MHz", "MHz"},
    {"clocks.applications.gr", "clock_graphics_app", "MHz", "MHz"},
    {"clocks_throttle_reasons.active", "throttle_reasons", "", ""},
    {"clocks_event_reasons.active", "throttle_reasons", "", ""},
    {"fan.speed", "fan_speed", "%", "%"},
    {"pstate", "pstate", "", ""},
    {"rxpci", "pcie_rx", "bytes/s", "MB/s"},
    {"txpci", "pcie_tx", "bytes/s", "MB/s"},
    {"pcirx", "pcie_rx", "bytes/s", "B/s"},
    {"pcitx", "pcie_tx", "bytes/s", "B/s"},
    {"nvlrx", "nvlink_rx", "bytes/s", "B/s"},
    {"nvltx", "nvlink_tx", "bytes/s", "B/s"},
    {"smact", "sm_active", "%", "ratio"},
    {"smocc", "sm_occupancy", "%", "ratio"},
    {"tenso", "tensor_active", "%", "ratio"},
    {"drama", "dram_active", "%", "ratio"},
    {"fp64a", "fp64_active", "%", "ratio"},
    {"fp32a", "fp32_active", "%", "ratio"},
    {"fp16a", "fp16_active", "%", "ratio"},
    {"enc", "encoder_active", "%", "%"},
    {"dec", "decoder_active", "%", "%"},
    {"utilization.encoder", "encoder_active", "%", "%"},
    {"utilization.decoder", "decoder_active", "%", "%"},
};

// Factor from `from` to the canonical `to`; nullopt when they are not the same kind of unit.
std::optional<double> unit_factor(std::string_view from, std::string_view to) {
  std::string f = lower(from);
  if (f == "°c" || f == "degc" || f == "c" || f == "\xc2\xb0" "c") f = "c";
  if (f == lower(to)) return 1.0;
  if (to == "bytes") {
    if (f == "b" || f == "bytes") return 1.0;
    if (f == "kib" || f == "kb") return 1024.0;
    if (f == "mib" || f == "mb") return 1048576.0;
    if (f == "gib" || f == "gb") return 1073741824.0;
  }
  if (to == "bytes/s") {
    if (f == "b/s") return 1.0;
    if (f == "kb/s" || f == "kib/s") return 1e3;
    if (f == "mb/s" || f == "mib/s") return 1e6;
    if (f == "gb/s" || f == "gib/s") return 1e9;
  }
  if (to == "%" && f == "ratio") return 100.0;
  if (to == "W" && f == "mw") return 1e-3;
  if (to == "MHz" && f == "ghz") return 1e3;
  if (to == "C" && f == "c") return 1.0;
  return std::nullopt;
}

// nsys GPU_METRICS names ("SMs Active [Throughput %]", "Tensor Active", "DRAM Read Bandwidth",
// "PCIe RX Throughput", "NVLink TX ...") differ by GPU and nsys version: matched by their words.
std::string nsys_metric(const std::string& l) {
  auto has = [&](std::string_view w) { return l.find(w) != std::string::npos; };
  if (has("tensor") && has("active")) return "tensor_active";
  if (has("sm") && has("issue")) return "sm_issue";
  if ((has("sms active") || has("sm active")) ) return "sm_active";
  if (has("dram") && has("read")) return "dram_read";
  if (has("dram") && has("write")) return "dram_write";
  if (has("pcie") && has("rx")) return "pcie_rx_util";
  if (has("pcie") && has("tx")) return "pcie_tx_util";
  if (has("nvlink") && has("rx")) return "nvlink_rx_util";
  if (has("nvlink") && has("tx")) return "nvlink_tx_util";
  if (has("gr active")) return "graphics_active";
  if (has("gpc clock")) return "clock_graphics";
  return "";
}

}  // namespace

MetricMap map_metric(std::string_view name, std::string_view unit) {
  std::string l = lower(trim(name));
  std::string u(trim(unit));
  if (!l.empty() && l[0] == '#') l.erase(0, 1);
  for (const auto& a : kAliases) {
    if (l != a.name) continue;
    std::string from = u.empty() ? std::string(a.recorded_unit) : u;
    if (a.recorded_unit == "ratio" && u.empty()) from = "ratio";
    auto f = unit_factor(from, a.unit);
    if (!f) return {std::string(a.metric) + "", u, 1};  // a unit we do not know: keep it as recorded
    return {std::string(a.metric), std::string(a.unit), *f};
  }
  for (std::string_view prefix : {"clocks_throttle_reasons.", "clocks_event_reasons."})
    if (l.rfind(prefix, 0) == 0) return {"throttle_" + l.substr(prefix.size()), "", 1};
  if (l.find(' ') != std::string::npos) {
    std::string m = nsys_metric(l);
    if (!m.empty()) {
      std::string lu = lower(u);
      if (lu.find('%') != std::string::npos) return {m, "%", 1};
      if (lu == "mhz") return {m, "MHz", 1};
      return {m, u, 1};
    }
  }
  // Not a sample column.
  static constexpr std::string_view kText[] = {"timestamp", "index",      "name",  "uuid",  "pci.bus_id", "pci.bus",
                                               "serial",    "driver_version", "gpu_name", "gpu_uuid", "gpu_bus_id",
                                               "date",      "time",       "gpu",   "entity", "id", "pid", "type",
                                               "command",   "vbios_version", "compute_mode", "display_mode"};
  for (auto t : kText)
    if (l == t) return {"", "", 1};
  std::string metric = l.empty() ? std::string(trim(name)) : l;
  return {metric, u, 1};
}

}  // namespace proflint::samples
