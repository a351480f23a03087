// engine/report/findings_report.cpp — see findings_report.hpp.
#include "engine/report/findings_report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <cctype>
#include <sstream>

#include "engine/analysis/detector.hpp"
#include "engine/analysis/source_sites.hpp"
#include "engine/common/format.hpp"

namespace proflint {

namespace {

using json = nlohmann::ordered_json;

size_t display_width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;  // count UTF-8 code points, not bytes
  return n;
}

int problem_count(const AnalysisResult& r) {
  int n = 0;
  for (const auto& f : r.findings) n += !f.diagnostic;
  return n;
}

std::string evidence_value(const nlohmann::ordered_json& v);

std::string scope_text(const Finding& f, const AnalysisResult& r) {
  std::vector<std::string> parts;
  if (r.summaries.size() > 1 && f.scope.trace_id) {
    for (const auto& s : r.summaries)
      if (s.trace_id == *f.scope.trace_id) parts.push_back(s.path);
  }
  if (!f.instances.empty() && f.evidence.contains("where") && f.evidence["where"].is_array()) {
    // One finding for the same problem on several ranks/GPUs of a job: name them all.
    std::string where;
    for (const auto& w : f.evidence["where"]) where += (where.empty() ? "" : ", ") + evidence_value(w);
    parts.push_back(fmt::format("{} of one job: {}", f.instances.size(), where));
  }
  if (f.scope.rank) parts.push_back(fmt::format("rank {}", *f.scope.rank));
  if (f.scope.device_id && *f.scope.device_id >= 0) parts.push_back(fmt::format("GPU {}", *f.scope.device_id));
  if (f.scope.iter_first && f.scope.iter_last) parts.push_back(fmt::format("iterations {}-{}", *f.scope.iter_first, *f.scope.iter_last));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

std::string savings_text(const Finding& f) {
  if (f.estimated_savings_ns <= 0) return "";
  return fmt::format("saves ~{} ({})", format_ns(f.estimated_savings_ns), format_percent(f.savings_share));
}

std::string evidence_value(const nlohmann::ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::string out;
    size_t shown = 0;
    for (const auto& item : v) {
      if (shown == 5) {
        out += fmt::format(", … ({} more)", v.size() - shown);
        break;
      }
      out += (out.empty() ? "" : ", ") + evidence_value(item);
      ++shown;
    }
    return out;
  }
  if (v.is_number_float()) return fmt::format("{:.4g}", v.get<double>());
  return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// "12.3 ms", "4.1%" or "7 count": a below-threshold value in its unit.
std::string threshold_value(double v, const std::string& unit) {
  if (unit == "ns") return format_ns(static_cast<int64_t>(v));
  if (unit.starts_with("share")) return fmt::format("{:.2f}%", 100.0 * v);  // finer than format_percent: values sit near thresholds
  return fmt::format("{:.4g} {}", v, unit);
}

std::string below_text(const BelowThreshold& b) {
  std::string unit = b.unit.starts_with("share") && b.unit.size() > 5 ? " (" + b.unit + ")" : "";
  std::string text = fmt::format("{}: {} {}, threshold {}{}", b.id, b.measured, threshold_value(b.value, b.unit),
                                 threshold_value(b.threshold, b.unit), unit);
  if (b.instances.size() > 1) {
    // One check on several ranks/GPUs of one job: the largest value is shown, the spread named.
    double low = b.instances[0].value;
    std::string largest;
    for (const auto& i : b.instances) {
      low = std::min(low, i.value);
      if (i.value == b.value && largest.empty()) largest = i.label;
    }
    text += fmt::format("; the largest of {} instances is on {}, the smallest {}", b.instances.size(), largest,
                        threshold_value(low, b.unit));
  }
  return text;
}

std::string below_scope(const BelowThreshold& b, const AnalysisResult& r) {
  Finding f;
  f.scope = b.scope;
  return scope_text(f, r);
}

json scope_json(const Scope& s) {
  json scope = json::object();
  if (s.trace_id) scope["trace_id"] = *s.trace_id;
  if (s.device_id) scope["device_id"] = *s.device_id;
  if (s.rank) scope["rank"] = *s.rank;
  if (s.iter_first) scope["iter_first"] = *s.iter_first;
  if (s.iter_last) scope["iter_last"] = *s.iter_last;
  return scope;
}

json below_json(const BelowThreshold& b) {
  json j;
  j["id"] = b.id;
  j["measured"] = b.measured;
  j["value"] = b.value;
  j["threshold"] = b.threshold;
  j["unit"] = b.unit;
  j["scope"] = scope_json(b.scope);
  j["source"] = b.source;
  if (!b.detail.empty()) j["detail"] = b.detail;
  if (!b.instances.empty()) {
    json inst = json::array();
    for (const auto& i : b.instances) inst.push_back({{"label", i.label}, {"value", i.value}, {"scope", scope_json(i.scope)}});
    j["instances"] = inst;
  }
  return j;
}

// "27.1 ms of its 27.1 ms estimate is already counted under #3 pageable-memcpy (same evidence); ..."
std::string overlap_text(const Finding& f) {
  std::string under;
  int64_t shared = 0;
  for (const auto& o : f.overlaps) {
    shared += o.shared_ns;
    under += fmt::format("{}{}{}", under.empty() ? "" : ", ", o.rank ? fmt::format("#{} ", o.rank) : "", o.id);
    if (f.overlaps.size() > 1) under += fmt::format(" ({})", format_ns(o.shared_ns));
  }
  return fmt::format("{} of its {} estimate is already counted under {} (same evidence); only the rest counts here",
                     format_ns(shared), format_ns(f.gross_savings_ns), under);
}

json location_json(const SourceLocation& l) {
  json j;
  if (!l.file.empty()) {
    j["file"] = l.file;
    j["line"] = l.line;
    j["function"] = l.function;
  }
  if (!l.module_path.empty()) j["module_path"] = l.module_path;
  j["what"] = l.what;
  j["count"] = l.count;
  j["time_ns"] = l.time_ns;
  j["time_label"] = l.time_label;
  if (l.iterations > 0) {
    j["iterations"] = l.iterations;
    j["count_per_step"] = static_cast<double>(l.count) / static_cast<double>(l.iterations);
    j["time_per_step_ns"] = l.time_ns / l.iterations;
  }
  j["text"] = location_text(l);
  return j;
}

// A file name as a SARIF artifactLocation.uri (a URI reference): bytes outside the unreserved and
// path characters are percent-encoded, backslashes become slashes.
std::string file_uri(const std::string& file) {
  std::string out;
  for (unsigned char c : file) {
    if (c == '\\') c = '/';
    if (std::isalnum(c) || std::string_view("-._~/:@!$&'()*+,;=").find(static_cast<char>(c)) != std::string_view::npos)
      out += static_cast<char>(c);
    else
      out += fmt::format("%{:02X}", c);
  }
  return out;
}

json finding_json(const Finding& f) {
  json j;
  j["id"] = f.id;
  j["title"] = f.title;
  j["severity"] = std::string(severity_name(f.effective_severity));
  j["problem"] = f.problem;
  j["recommendation"] = f.recommendation;
  j["estimated_savings_ns"] = f.estimated_savings_ns;
  j["savings_share"] = f.savings_share;
  j["gross_savings_ns"] = f.gross_savings_ns;
  json overlaps = json::array();
  for (const auto& o : f.overlaps) overlaps.push_back({{"id", o.id}, {"rank", o.rank}, {"shared_ns", o.shared_ns}});
  j["overlaps"] = overlaps;
  j["savings_method"] = f.savings_method;
  j["confidence"] = f.confidence;
  j["scope"] = scope_json(f.scope);
  j["evidence"] = f.evidence;
  j["source"] = f.source;
  if (!f.locations.empty()) {
    json locations = json::array();
    for (const auto& l : f.locations) locations.push_back(location_json(l));
    j["locations"] = locations;
  }
  if (!f.instances.empty()) {
    // The per-rank/per-GPU findings this one merges, each as the detector reported it (after overlaps).
    json instances = json::array();
    for (const auto& in : f.instances) {
      json ij;
      ij["scope"] = scope_json(in.scope);
      ij["problem"] = in.problem;
      ij["estimated_savings_ns"] = in.estimated_savings_ns;
      ij["savings_share"] = in.savings_share;
      ij["gross_savings_ns"] = in.gross_savings_ns;
      json io = json::array();
      for (const auto& o : in.overlaps) io.push_back({{"id", o.id}, {"rank", o.rank}, {"shared_ns", o.shared_ns}});
      ij["overlaps"] = io;
      ij["confidence"] = in.confidence;
      ij["evidence"] = in.evidence;
      instances.push_back(ij);
    }
    j["instances"] = instances;
  }
  return j;
}

}  // namespace

std::string wrap_text(const std::string& text, size_t width, size_t indent) {
  std::istringstream words(text);
  std::string word, line, out;
  size_t line_width = 0;
  bool first_line = true;
  auto flush = [&] {
    out += (first_line ? "" : "\n" + std::string(indent, ' ')) + line;
    first_line = false;
    line.clear();
    line_width = 0;
  };
  size_t limit = width > indent ? width - indent : width;
  while (words >> word) {
    size_t w = display_width(word);
    if (!line.empty() && line_width + 1 + w > limit) flush();
    if (!line.empty()) {
      line += ' ';
      ++line_width;
    }
    line += word;
    line_width += w;
  }
  if (!line.empty()) flush();
  return out;
}

// "GPU 0 31.1%", and the steady-state figure beside it when start-up was found inside the window.
static std::string device_utilization(const DeviceSummary& d, bool first) {
  std::string out = fmt::format("{}GPU {} {}", first ? "" : ", ", d.device_id, format_percent(d.gpu_utilization));
  if (d.startup_ns > 0)
    out += fmt::format(" ({} in steady state, after {} of start-up)", format_percent(d.steady_gpu_utilization),
                       format_ns(d.startup_ns));
  return out;
}

namespace {

// CUDA graphs and torch.compile regions of the traces, one line each (graphs, then regions, largest
// GPU time first), at most kGraphLines per trace, then how many more: shown after the findings so
// that a reader of launch-bound or a Triton kernel's finding sees what was replayed or compiled.
constexpr size_t kGraphLines = 6;

std::vector<std::string> graphs_compiled_lines(const AnalysisResult& r, const char* code_quote) {
  std::vector<std::string> out;
  const std::string q = code_quote;
  for (const auto& s : r.summaries) {
    const CompiledSummary& c = s.compiled;
    size_t total = s.graphs.size() + c.by_name.size();
    if (total == 0 && c.triton_kernels == 0) continue;
    if (r.summaries.size() > 1) out.push_back(s.path + ":");
    size_t shown = 0;
    for (const auto& g : s.graphs) {
      if (shown == kGraphLines) break;
      ++shown;
      std::string ops = !g.capture_in_trace ? "capture not in the trace (kernels named 'graph G, node N')"
                        : g.captured_ops == 0 ? "captured in the trace, nodes not matched to ops"
                                              : fmt::format("{} of {} nodes attributed to their op, most GPU time in {}{}{}",
                                                            g.captured_ops, g.kernels_per_replay, q, g.top_captured_op, q);
      out.push_back(fmt::format("CUDA graph {}: {} replay(s) x {} kernel(s), {} GPU time per replay ({} in all); {}", g.graph_id,
                                g.replays, g.kernels_per_replay, format_ns(g.gpu_time_per_replay_ns), format_ns(g.gpu_time_ns), ops));
    }
    for (const auto& reg : c.by_name) {
      if (shown == kGraphLines) break;
      ++shown;
      out.push_back(fmt::format("compiled region {}{}{} ({}): {}x, {} Triton kernel(s) {}, {} fallback kernel(s) {} from {} op(s), "
                                "{} graph break(s) before it",
                                q, reg.name, q, reg.pass, reg.instances, reg.triton_kernels, format_ns(reg.triton_time_ns),
                                reg.other_kernels, format_ns(reg.other_time_ns), reg.fallback_ops, reg.graph_breaks));
    }
    if (total > shown) out.push_back(fmt::format("… {} more graph(s) or region(s): `proflint summary` lists them all", total - shown));
    if (c.regions == 0 && c.triton_kernels > 0)
      out.push_back(fmt::format("{} Triton kernel(s) ({}) outside any recorded compiled region", c.triton_kernels, format_ns(c.triton_time_ns)));
  }
  return out;
}

}  // namespace

std::string render_findings_text(const AnalysisResult& r, bool color) {
  auto paint = [&](const std::string& s, const char* code) { return color ? std::string("\x1b[") + code + "m" + s + "\x1b[0m" : s; };
  auto sev_color = [](Severity s) { return s == Severity::high ? "1;31" : s == Severity::medium ? "1;33" : "1;36"; };
  std::string out;
  for (const auto& s : r.summaries) {
    std::string util;
    for (const auto& d : s.devices) util += device_utilization(d, util.empty());
    out += paint(s.path, "1") + "\n";
    out += fmt::format("  wall {}, {} iteration(s) ({}), GPU utilization: {}\n", format_ns(s.wall_ns), s.iterations.count,
                       s.iterations.source, util.empty() ? "no GPU work" : util);
  }
  int problems = problem_count(r);
  out += fmt::format("\n{} problem(s) found, ranked by estimated time saved\n", problems);
  int n = 0;
  int64_t largest = 0;
  double largest_share = 0;
  for (const auto& f : r.findings) {
    if (f.diagnostic) continue;
    ++n;
    if (f.estimated_savings_ns > largest) {
      largest = f.estimated_savings_ns;
      largest_share = f.savings_share;
    }
    std::string head = fmt::format("{:>2}. {} {}", n, paint(fmt::format("[{}]", severity_name(f.effective_severity)), sev_color(f.effective_severity)),
                                   paint(f.id, "1"));
    std::string saves = savings_text(f);
    if (saves.empty() && !f.overlaps.empty()) saves = "saves nothing beyond the findings above";
    out += "\n" + head + (saves.empty() ? "" : "  " + saves) + "\n";
    out += "    " + wrap_text(f.title, 80, 4) + "\n";
    if (!f.overlaps.empty()) out += "    overlap: " + wrap_text(overlap_text(f), 80, 13) + "\n";
    std::string scope = scope_text(f, r);
    if (!scope.empty()) out += "    scope:   " + wrap_text(scope, 80, 13) + "\n";
    out += "    problem: " + wrap_text(f.problem, 80, 13) + "\n";
    out += "    fix:     " + wrap_text(f.recommendation, 80, 13) + "\n";
    // Text shows the scalar evidence; structured evidence (per-op tables) is in --format json.
    size_t hidden = 0, shown = 0;
    for (const auto& [key, value] : f.evidence.items()) {
      bool structured = value.is_object() || (value.is_array() && !value.empty() && (value[0].is_object() || value[0].is_array()));
      if (structured || shown >= 8) {
        ++hidden;
        continue;
      }
      ++shown;
      out += "    " + wrap_text(fmt::format("· {}: {}", key, evidence_value(value)), 80, 6) + "\n";
    }
    if (hidden) out += fmt::format("    · … {} more evidence item(s) in --format json\n", hidden);
    if (!f.savings_method.empty()) out += "    " + wrap_text("estimate: " + f.savings_method + fmt::format(" (confidence {:.0f}%)", f.confidence * 100), 80, 4) + "\n";
  }
  if (problems > 1)
    out += "\n" + wrap_text(fmt::format("Evidence two findings share (the same copies, kernels or root cause) is "
                                        "counted once, under the higher-ranked one. Fixing one problem still changes "
                                        "the others: the estimates are not additive. The largest single estimate is "
                                        "{} ({} of wall time).",
                                        format_ns(largest), format_percent(largest_share)), 80, 0) + "\n";
  if (auto lines = graphs_compiled_lines(r, ""); !lines.empty()) {
    out += "\nCUDA graphs and compiled regions:\n";
    for (const auto& l : lines) out += "  - " + wrap_text(l, 80, 4) + "\n";
  }
  if (!r.below_threshold.empty()) {
    out += "\nChecked, below threshold (not reported as problems):\n";
    for (const auto& b : r.below_threshold) {
      std::string scope = below_scope(b, r);
      out += "  - " + wrap_text(below_text(b) + (scope.empty() ? "" : " [" + scope + "]"), 80, 4) + "\n";
    }
  }
  bool any_diag = false;
  for (const auto& f : r.findings) {
    if (!f.diagnostic) continue;
    if (!any_diag) out += "\nAbout the profile itself:\n";
    any_diag = true;
    out += "  - " + wrap_text(f.id + ": " + f.problem + (f.recommendation.empty() ? "" : " " + f.recommendation), 80, 4) + "\n";
  }
  if (!r.notes.empty()) {
    out += "\nNot checked:\n";
    for (const auto& note : r.notes) out += "  - " + wrap_text(note, 80, 4) + "\n";
  }
  return out;
}

std::string render_findings_json(const AnalysisResult& r) {
  json root;
  root["schema"] = "proflint.analysis";
  root["version"] = 1;
  root["tool"] = {{"name", "proflint"}, {"version", PROFLINT_VERSION}};
  json traces = json::array();
  for (const auto& s : r.summaries) {
    json devices = json::array();
    for (const auto& d : s.devices) {
      json dj = {{"device_id", d.device_id}, {"name", d.name}, {"gpu_utilization", d.gpu_utilization},
                 {"tensor_core_share", d.tensor_core_share}};
      // Only where start-up was found: the whole-window figure above is then not the job's.
      if (d.startup_ns > 0) {
        dj["startup_ns"] = d.startup_ns;
        dj["startup_cause"] = d.startup_cause;
        dj["steady_gpu_utilization"] = d.steady_gpu_utilization;
      }
      devices.push_back(dj);
    }
    traces.push_back({{"trace_id", s.trace_id}, {"path", s.path}, {"format", s.format}, {"wall_ns", s.wall_ns},
                      {"iterations", s.iterations.count}, {"iteration_source", s.iterations.source}, {"devices", devices}});
  }
  root["traces"] = traces;
  json findings = json::array(), diagnostics = json::array();
  for (const auto& f : r.findings) (f.diagnostic ? diagnostics : findings).push_back(finding_json(f));
  root["findings"] = findings;
  root["diagnostics"] = diagnostics;
  json below = json::array();
  for (const auto& b : r.below_threshold) below.push_back(below_json(b));
  root["below_threshold"] = below;
  root["notes"] = r.notes;
  return root.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string render_findings_markdown(const AnalysisResult& r) {
  std::string out = "## proflint analysis\n\n";
  for (const auto& s : r.summaries) {
    std::string util;
    for (const auto& d : s.devices) util += device_utilization(d, util.empty());
    out += fmt::format("- `{}`: wall {}, {} iteration(s), GPU utilization {}\n", s.path, format_ns(s.wall_ns), s.iterations.count,
                       util.empty() ? "n/a (no GPU work)" : util);
  }
  int problems = problem_count(r);
  out += fmt::format("\n**{} problem(s)**, ranked by estimated time saved (evidence two findings share is counted once, under the higher-ranked one).\n\n", problems);
  if (problems > 0) {
    out += "| # | severity | id | saves | problem |\n|---|---|---|---|---|\n";
    int n = 0;
    for (const auto& f : r.findings) {
      if (f.diagnostic) continue;
      std::string problem = f.problem;
      for (auto& c : problem) if (c == '|') c = '/';
      std::string saves =
          f.estimated_savings_ns > 0 ? fmt::format("{} ({})", format_ns(f.estimated_savings_ns), format_percent(f.savings_share)) : "–";
      for (const auto& o : f.overlaps)
        saves += fmt::format("; +{} counted under {}", format_ns(o.shared_ns), o.rank ? fmt::format("#{}", o.rank) : o.id);
      out += fmt::format("| {} | {} | `{}` | {} | {} |\n", ++n, severity_name(f.effective_severity), f.id, saves, problem);
    }
    out += "\n<details><summary>Recommendations</summary>\n\n";
    for (const auto& f : r.findings) {
      if (f.diagnostic) continue;
      out += fmt::format("- **{}** — {}\n", f.id, f.recommendation);
    }
    out += "\n</details>\n";
  }
  if (auto lines = graphs_compiled_lines(r, "`"); !lines.empty()) {
    out += "\n**CUDA graphs and compiled regions**\n\n";
    for (const auto& l : lines) out += "- " + l + "\n";
  }
  bool any = false;
  for (const auto& f : r.findings) {
    if (!f.diagnostic) continue;
    if (!any) out += "\n**About the profile itself**\n\n";
    any = true;
    out += fmt::format("- `{}`: {}\n", f.id, f.problem);
  }
  if (!r.below_threshold.empty()) {
    out += "\n**Checked, below threshold** (not reported as problems)\n\n| id | measured | value | threshold | scope |\n|---|---|---|---|---|\n";
    for (const auto& b : r.below_threshold) {
      std::string measured = b.measured;
      for (auto& c : measured) if (c == '|') c = '/';
      out += fmt::format("| `{}` | {} | {} | {} | {} |\n", b.id, measured, threshold_value(b.value, b.unit),
                         threshold_value(b.threshold, b.unit), below_scope(b, r));
    }
  }
  return out;
}

std::string render_findings_sarif(const AnalysisResult& r) {
  json rules = json::array();
  std::map<std::string, size_t> rule_index;
  for (const auto& f : r.findings) {
    if (rule_index.count(f.id)) continue;
    rule_index[f.id] = rules.size();
    rules.push_back({{"id", f.id}, {"name", f.id}, {"shortDescription", {{"text", f.title}}},
                     // A Lua rule documents itself: point at its file.
                     {"helpUri", f.source == "builtin" ? "docs/detectors/" + f.id + ".md" : f.source}});
  }
  json results = json::array();
  for (const auto& f : r.findings) {
    std::string level = f.diagnostic ? "note" : f.effective_severity == Severity::high ? "error"
                                              : f.effective_severity == Severity::medium ? "warning" : "note";
    // A finding merged from several ranks/GPUs points at every trace it covers.
    std::vector<std::string> uris;
    std::vector<const Finding*> parts;
    if (f.instances.empty()) parts.push_back(&f);
    for (const auto& in : f.instances) parts.push_back(&in);
    for (const Finding* p : parts)
      for (const auto& s : r.summaries)
        if (p->scope.trace_id && s.trace_id == *p->scope.trace_id &&
            std::find(uris.begin(), uris.end(), s.path) == uris.end())
          uris.push_back(s.path);
    json result = {{"ruleId", f.id}, {"ruleIndex", rule_index[f.id]}, {"level", level},
                   {"message", {{"text", f.problem + " " + f.recommendation}}},
                   {"properties", {{"estimated_savings_ns", f.estimated_savings_ns}, {"savings_share", f.savings_share},
                                   {"confidence", f.confidence}, {"evidence", f.evidence}}}};
    if (!f.instances.empty()) {
      json instances = json::array();
      for (const auto& in : f.instances)
        instances.push_back({{"scope", scope_json(in.scope)}, {"estimated_savings_ns", in.estimated_savings_ns}});
      result["properties"]["instances"] = instances;
    }
    // The code the evidence comes from first (code-scanning UIs annotate the first location's line),
    // then the profile(s) it was measured in.
    json locations = json::array();
    for (const auto& l : f.locations) {
      if (l.file.empty()) continue;
      json physical = {{"artifactLocation", {{"uri", file_uri(l.file)}}}};
      if (l.line >= 1) physical["region"] = {{"startLine", l.line}};
      locations.push_back({{"physicalLocation", physical}, {"message", {{"text", location_text(l)}}}});
    }
    for (const auto& uri : uris) locations.push_back({{"physicalLocation", {{"artifactLocation", {{"uri", uri}}}}}});
    if (!locations.empty()) result["locations"] = locations;
    results.push_back(result);
  }
  // SARIF 2.1.0 §3.27.9: a result of kind "pass" says the check ran and found nothing to report;
  // its level must be "none". Each below-threshold check becomes one, with its value and threshold.
  for (const auto& b : r.below_threshold) {
    if (!rule_index.count(b.id)) {
      rule_index[b.id] = rules.size();
      rules.push_back({{"id", b.id}, {"name", b.id},
                       {"helpUri", b.source == "builtin" ? "docs/detectors/" + b.id + ".md" : b.source}});
    }
    std::string uri;
    for (const auto& s : r.summaries)
      if (b.scope.trace_id && s.trace_id == *b.scope.trace_id) uri = s.path;
    json result = {{"ruleId", b.id}, {"ruleIndex", rule_index[b.id]}, {"kind", "pass"}, {"level", "none"},
                   {"message", {{"text", "Checked, below threshold: " + below_text(b) + "."}}},
                   {"properties", {{"measured", b.measured}, {"value", b.value}, {"threshold", b.threshold}, {"unit", b.unit}}}};
    if (!uri.empty()) result["locations"] = json::array({{{"physicalLocation", {{"artifactLocation", {{"uri", uri}}}}}}});
    results.push_back(result);
  }
  json run = {{"tool", {{"driver", {{"name", "proflint"}, {"version", PROFLINT_VERSION}, {"rules", rules}}}}}, {"results", results}};
  json root = {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"}, {"version", "2.1.0"}, {"runs", json::array({run})}};
  return root.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace proflint
