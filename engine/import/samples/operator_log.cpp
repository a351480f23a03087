// engine/import/samples/operator_log.cpp — Clara-style operator logs with their profiler spec.
//
// The spec names the key of the operator's total time (totalTimeStr) and its module keywords
// (opModules); the log has lines '<any text><KEY><any text>: <milliseconds>' with nothing after
// the number. A keyword seen on several lines is summed (the seed defines it so). A log cannot be
// told from other text by itself: it is read only when a spec is given (--operator-spec FILE, or
// --operator-total / --operator-modules), for inputs no other reader claims.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <map>
#include <regex>

#include "engine/common/error.hpp"
#include "engine/common/import_issue_kinds.hpp"
#include "engine/common/saturate.hpp"
#include "engine/import/samples/sample_text.hpp"
#include "engine/import/samples/samples_importers.hpp"

namespace proflint {

namespace samples {

OperatorSpec parse_operator_spec(std::string_view text, const std::string& path) {
  OperatorSpec spec;
  std::string t(text);
  auto line_of = [&](size_t pos) { return "line " + std::to_string(1 + std::count(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(pos), '\n')); };
  std::smatch m;
  // TOML (key = "v", key = ["a", "b"]) and YAML (key: "v", key: [...]) alike; quotes may be single.
  static const std::regex total(R"((?:^|[\s{,])totalTimeStr\s*[:=]\s*(["'])([^"'\n]*)\1)");
  static const std::regex name(R"((?:^|[\s{,])name\s*[:=]\s*(["'])([^"'\n]*)\1)");
  static const std::regex modules(R"((?:^|[\s{,])opModules\s*[:=]\s*\[([^\]]*)\])");
  static const std::regex quoted(R"((["'])([^"'\n]*)\1)");
  if (std::regex_search(t, m, total)) spec.total_key = m[2].str();
  if (std::regex_search(t, m, name)) spec.name = m[2].str();
  if (std::regex_search(t, m, modules)) {
    std::string list = m[1].str();
    size_t at = static_cast<size_t>(m.position(1));
    for (auto it = std::sregex_iterator(list.begin(), list.end(), quoted); it != std::sregex_iterator(); ++it)
      spec.modules.push_back((*it)[2].str());
    if (spec.modules.empty() && !trim(list).empty())
      throw input_error(path, line_of(at), "opModules must be a list of quoted keywords, e.g. [\"Readinginput\", \"filtering\"]");
  } else if (t.find("opModules") != std::string::npos) {
    throw input_error(path, line_of(t.find("opModules")), "opModules must be a [...] list of quoted keywords");
  }
  if (spec.total_key.empty() && spec.modules.empty())
    throw input_error(path, "", "operator profiler spec names neither totalTimeStr nor opModules (expected e.g. "
                                "totalTimeStr = \"ROIgeneratorElapsedTime\" and opModules = [\"Readinginput\", ...])");
  return spec;
}

void read_operator_log(std::string_view text, const std::string& path, const OperatorSpec& spec, FactSink& sink) {
  struct Sum {
    int64_t ns = 0, count = 0, first_line = 0;
  };
  std::map<std::string, Sum> modules;
  Sum total;
  std::string first_bad;
  for (const Line& l : split_lines(text)) {
    std::string_view line = l.text;
    auto value_of = [&](std::string_view key) -> std::optional<double> {
      size_t k = line.find(key);
      if (k == std::string_view::npos) return std::nullopt;
      size_t colon = line.rfind(':');
      double ms = 0;
      std::string_view num = colon != std::string_view::npos && colon > k ? trim(line.substr(colon + 1)) : std::string_view();
      auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), ms);
      if (num.empty() || ec != std::errc() || p != num.data() + num.size() || !(ms >= 0 && ms < 1e12)) {
        std::string where = "line " + std::to_string(l.number);
        if (first_bad.empty()) first_bad = where;
        sink.add_issue(import_issue::operator_log_line_unreadable, std::string(line.substr(0, 120)),
                       where + ": names '" + std::string(key) + "' but does not end in ': <milliseconds>'");
        return std::nullopt;
      }
      return ms;
    };
    bool counted = false;
    if (!spec.total_key.empty())
      if (auto ms = value_of(spec.total_key)) {
        add_saturating(total.ns, static_cast<int64_t>(*ms * 1e6));  // each below 1e18 ns, their sum unbounded
        if (total.count++ == 0) total.first_line = l.number;
        counted = true;
        sink.count_event();
      }
    if (counted) continue;
    for (const auto& key : spec.modules) {
      if (key.empty()) continue;
      if (auto ms = value_of(key)) {
        Sum& s = modules[key];
        add_saturating(s.ns, static_cast<int64_t>(*ms * 1e6));
        if (s.count++ == 0) s.first_line = l.number;
        sink.count_event();
        break;
      }
    }
  }
  if (total.count == 0 && modules.empty())
    throw input_error(path, first_bad, first_bad.empty()
                                           ? "operator log has no line with the spec's keys ('" + spec.total_key +
                                                 "' or a module keyword) followed by ': <milliseconds>'"
                                           : "no line with the spec's keys ends in ': <milliseconds>'");
  std::string op = spec.name;
  if (op.empty()) op = std::filesystem::path(path).stem().string();
  if (total.count > 0) {
    OperatorTimingRow r;
    r.operator_name = op;
    r.time_ns = total.ns;
    r.count = total.count;
    r.first_line = total.first_line;
    sink.add_operator_timing(r);
  }
  for (const auto& key : spec.modules) {
    auto it = modules.find(key);
    if (it == modules.end()) continue;
    OperatorTimingRow r;
    r.operator_name = op;
    r.module = key;
    r.time_ns = it->second.ns;
    r.count = it->second.count;
    r.first_line = it->second.first_line;
    sink.add_operator_timing(r);
  }
}

}  // namespace samples

ImportResult import_operator_log(const std::string& path, TraceModel& model, const OperatorSpec& spec) {
  TraceInfo info;
  info.path = path;
  info.format = std::string(kOperatorLogFormat);
  info.clock = "none";
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (!ec) info.file_bytes = static_cast<int64_t>(size);
  std::string text = samples::read_text(path);
  FactSink sink(model, info);
  samples::read_operator_log(text, path, spec, sink);
  sink.commit();
  return {0, sink.rows_written(), sink.issue_count()};
}

}  // namespace proflint
