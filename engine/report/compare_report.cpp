// engine/report/compare_report.cpp — see compare_report.hpp.
#include "engine/report/compare_report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/common/format.hpp"

namespace proflint {

namespace {

using json = nlohmann::ordered_json;
using gate::CompareResult;
using gate::MetricResult;
using gate::Status;
using gate::Unit;

std::string show(double v, Unit u) { return gate::format_metric_value(v, u); }

std::string value_text(const std::optional<double>& v, Unit u) { return v ? show(*v, u) : "-"; }

std::string change_text(const MetricResult& r) { return gate::format_change(r); }

std::string status_text(const MetricResult& r) {
  std::string s(gate::status_name(r.status));
  // throughput carries the step's verdict (it is the same test), so it needs no label.
  if (r.status != Status::unchanged && !r.gating && r.name != "throughput") s += " (explains)";
  return s;
}

// Full metric names, wrapped at `width` characters: kernel names that differ only in a template
// argument or a parameter list must never be cut to look alike.
std::vector<std::string> wrapped_name(const std::string& name, size_t width) {
  std::vector<std::string> out;
  for (size_t i = 0; i < name.size(); i += width) out.push_back(name.substr(i, width));
  if (out.empty()) out.push_back("");
  return out;
}

std::string fingerprint_text(const gate::Fingerprint& f) {
  std::string gpus;
  for (const auto& g : f.gpu_setups) gpus += (gpus.empty() ? "" : "; ") + g;
  std::string out = gpus.empty() ? "no GPU activity" : gpus;
  for (const auto& x : f.formats) out += ", " + x;
  out += fmt::format(", {:.0f} iteration(s) per trace", f.iterations_per_trace);
  if (f.batch) out += fmt::format(", batch {}", *f.batch);
  return out;
}

std::string paths_text(const std::vector<std::string>& paths) {
  std::string out;
  for (const auto& p : paths) out += (out.empty() ? "" : " ") + p;
  return out;
}

bool significant(const MetricResult& r) { return r.status != Status::unchanged; }

std::string budget_kind(const GateBudget& b) {
  switch (b.kind) {
    case GateBudget::Kind::relative:
      return "relative_percent";
    case GateBudget::Kind::time_ns:
      return "time_ns";
    case GateBudget::Kind::share_points:
      return "share";
    case GateBudget::Kind::bytes:
      return "bytes";
  }
  return "";
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // Control characters other than tab and newline are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t')
          out += ' ';
        else
          out += c;
    }
  }
  return out;
}

std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string verdict_upper(gate::Verdict v) {
  std::string s(gate::verdict_name(v));
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string render_compare_text(const CompareResult& r, bool color) {
  auto paint = [&](const std::string& s, const char* code) {
    return color ? fmt::format("\033[{}m{}\033[0m", code, s) : s;
  };
  const char* verdict_color = r.verdict == gate::Verdict::regression     ? "1;31"
                              : r.verdict == gate::Verdict::improvement  ? "1;32"
                              : r.verdict == gate::Verdict::inconclusive ? "1;33"
                                                                         : "1";
  // The verdict and its reason on the first line: a CI log shows why without scrolling.
  std::string out =
      fmt::format("proflint compare: {} - {}\n", paint(verdict_upper(r.verdict), verdict_color), r.headline);
  for (const auto& c : r.caveats) out += "  ! " + c + "\n";
  out += "\n";
  out += fmt::format("baseline   {}\n           {}\n", paths_text(r.baseline_paths),
                     fingerprint_text(r.baseline_fingerprint));
  out += fmt::format("candidate  {}\n           {}\n", paths_text(r.candidate_paths),
                     fingerprint_text(r.candidate_fingerprint));
  if (!r.incomparable.empty()) {
    out += "\nnot comparable:\n";
    for (const auto& why : r.incomparable) out += "  - " + why + "\n";
  }
  out += fmt::format("\n{:<48} {:<13} {:>10} {:>10} {:>9} {:>7}  {}\n", "METRIC", "SCOPE", "BASELINE", "CANDIDATE",
                     "CHANGE", "BUDGET", "STATUS");
  if (r.mode == "history")
    out += "  (history mode: BASELINE is the median of the past runs)\n";
  for (const auto& m : r.metrics) {
    std::string status = status_text(m);
    if (m.status == Status::regression && m.gating)
      status = paint(status, "31");
    else if (m.status == Status::improvement)
      status = paint(status, "32");
    else if (m.status == Status::inconclusive)
      status = paint(status, "33");
    std::string extra;
    if (m.p_adjusted)
      extra = fmt::format("  p={:.3g}", *m.p_adjusted);
    else if (m.p_value)
      extra = fmt::format("  p={:.3g}", *m.p_value);
    auto lines = wrapped_name(m.name, 48);
    out += fmt::format("{:<48} {:<13} {:>10} {:>10} {:>9} {:>7}  {}{}\n", lines.front(), m.scope,
                       value_text(m.baseline, m.unit), value_text(m.candidate, m.unit), change_text(m), m.budget.text,
                       status, extra);
    for (size_t i = 1; i < lines.size(); ++i) out += "  " + lines[i] + "\n";
  }
  // Why: what gates first (the step and anything that changed), then the components that changed
  // and explain the verdict without deciding it.
  std::string gates, explains;
  for (const auto& m : r.metrics) {
    bool primary = m.name == "iteration_time" || m.name == "kernel_time_per_launch";
    if (!significant(m) && !primary) continue;
    std::string line =
        fmt::format("  {}{}: {}\n", m.name, m.scope.empty() ? "" : " [" + m.scope + "]", m.reason);
    (m.gating || primary ? gates : explains) += line;
  }
  if (!gates.empty()) out += "\ngates:\n" + gates;
  if (!explains.empty())
    out += "\nwhy (explains the verdict; gates only when listed in [gate] gating):\n" + explains;
  if (!r.findings.empty()) {
    out += "\nfindings:\n";
    for (const auto& f : r.findings)
      out += fmt::format("  {} {} [{}]{}: {}{}\n", f.change == "new" ? "+ new " : "- gone", f.id, f.severity,
                         f.scope.empty() ? "" : " " + f.scope, f.title, f.gating ? "  (fails the gate)" : "");
  }
  if (!r.notes.empty()) {
    out += "\nnotes:\n";
    for (const auto& n : r.notes) out += "  - " + n + "\n";
  }
  out += fmt::format("\nverdict: {} (exit {})\n", gate::verdict_name(r.verdict), r.exit_code());
  return out;
}

std::string render_compare_json(const CompareResult& r) {
  auto side = [](const std::vector<std::string>& paths, const gate::Fingerprint& f) {
    json j;
    j["paths"] = paths;
    j["gpus"] = f.gpu_setups;
    j["formats"] = f.formats;
    j["frameworks"] = f.frameworks;
    j["vendors"] = f.vendors;
    j["ranks"] = f.ranks;
    j["iterations_per_trace"] = f.iterations_per_trace;
    j["batch"] = f.batch ? json(*f.batch) : json(nullptr);
    return j;
  };
  json j;
  j["schema"] = "proflint-compare/1";
  j["verdict"] = gate::verdict_name(r.verdict);
  j["exit_code"] = r.exit_code();
  j["headline"] = r.headline;
  j["strict"] = r.strict;
  j["alpha"] = r.alpha;
  j["mode"] = r.mode;
  j["caveats"] = r.caveats;
  j["correction"] = r.correction;
  j["gating_tests"] = r.gating_tests;
  j["explaining_tests"] = r.explaining_tests;
  j["comparable"] = r.incomparable.empty();
  j["incomparable"] = r.incomparable;
  j["baseline"] = side(r.baseline_paths, r.baseline_fingerprint);
  j["candidate"] = side(r.candidate_paths, r.candidate_fingerprint);
  json metrics = json::array();
  for (const auto& m : r.metrics) {
    json x;
    x["name"] = m.name;
    x["scope"] = m.scope;
    x["unit"] = gate::unit_name(m.unit);
    x["polarity"] = gate::polarity_name(m.polarity);
    x["per_iteration"] = m.per_iteration;
    x["baseline"] = m.baseline ? json(*m.baseline) : json(nullptr);
    x["candidate"] = m.candidate ? json(*m.candidate) : json(nullptr);
    x["delta"] = m.delta;
    x["relative"] = m.relative ? json(*m.relative) : json(nullptr);
    x["status"] = gate::status_name(m.status);
    x["gating"] = m.gating;
    x["budget"] = {{"text", m.budget.text}, {"kind", budget_kind(m.budget)}, {"amount", m.budget.amount}};
    x["reason"] = m.reason;
    auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
    if (m.name == "iteration_time" || m.p_value) {
      json t;
      t["test"] = "mann_whitney_u_two_sided";
      t["p_value"] = opt(m.p_value);
      t["p_adjusted"] = opt(m.p_adjusted);
      t["exact"] = m.exact_test;
      t["baseline_n"] = m.baseline_n;
      t["candidate_n"] = m.candidate_n;
      t["median_ratio"] =
          m.baseline && m.candidate && *m.baseline != 0 ? json(*m.candidate / *m.baseline) : json(nullptr);
      t["median_ratio_ci"] = m.ratio_ci ? json::array({m.ratio_ci->low, m.ratio_ci->high}) : json(nullptr);
      if (m.baseline_step) t["baseline_step_ns"] = *m.baseline_step;
      if (m.name == "iteration_time") {
        t["noise"] = opt(m.noise);
        t["detectable_change"] = opt(m.detectable_change);
        t["steps_for_budget"] = m.steps_for_budget;
        t["baseline_runs"] = m.baseline_runs;
        t["candidate_runs"] = m.candidate_runs;
        t["run_p_value"] = opt(m.run_p_value);
      }
      x["statistics"] = t;
    }
    if (m.history_median)
      x["history"] = {{"median", *m.history_median}, {"spread", opt(m.history_spread)}, {"runs", m.history_runs}};
    metrics.push_back(x);
  }
  j["metrics"] = metrics;
  json findings = json::array();
  for (const auto& f : r.findings)
    findings.push_back({{"change", f.change},
                        {"id", f.id},
                        {"title", f.title},
                        {"severity", f.severity},
                        {"scope", f.scope},
                        {"problem", f.problem},
                        {"source", f.source},
                        {"estimated_savings_ns", f.estimated_savings_ns},
                        {"gating", f.gating}});
  j["findings"] = findings;
  j["notes"] = r.notes;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string render_compare_markdown(const CompareResult& r) {
  const char* mark = r.verdict == gate::Verdict::regression     ? ":x:"
                     : r.verdict == gate::Verdict::improvement  ? ":rocket:"
                     : r.verdict == gate::Verdict::inconclusive ? ":grey_question:"
                                                                : ":white_check_mark:";
  std::string out = fmt::format("### {} proflint compare: {} - {}\n\n", mark, gate::verdict_name(r.verdict),
                                md_cell(r.headline));
  for (const auto& c : r.caveats) out += "> " + md_cell(c) + "\n>\n";
  if (!r.incomparable.empty()) {
    out += "\n**Not comparable:**\n\n";
    for (const auto& why : r.incomparable) out += "- " + md_cell(why) + "\n";
  }
  auto table = [&](bool only_significant) {
    std::string t =
        "| metric | scope | baseline | candidate | change | budget | status |\n|---|---|---:|---:|---:|---:|---|\n";
    for (const auto& m : r.metrics) {
      if (only_significant && !significant(m)) continue;
      std::string status = status_text(m);
      if (m.status == Status::regression && m.gating) status = "**" + status + "**";
      t += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} |\n", md_cell(m.name), md_cell(m.scope),
                       value_text(m.baseline, m.unit), value_text(m.candidate, m.unit), change_text(m),
                       md_cell(m.budget.text), status);
    }
    return t;
  };
  size_t changed = 0;
  for (const auto& m : r.metrics) changed += significant(m) ? 1 : 0;
  if (changed > 0)
    out += "\n#### Significant changes\n\n" + table(true);
  else
    out += "\nNo metric changed beyond its budget.\n";
  std::vector<std::string> new_f, gone_f;
  for (const auto& f : r.findings) {
    std::string line = fmt::format("- `{}` ({}{}) {}{}", f.id, f.severity, f.scope.empty() ? "" : ", " + f.scope,
                                   md_cell(f.title), f.gating ? " — **fails the gate**" : "");
    (f.change == "new" ? new_f : gone_f).push_back(line);
  }
  if (!new_f.empty()) {
    out += "\n#### New findings in the candidate\n\n";
    for (const auto& l : new_f) out += l + "\n";
  }
  if (!gone_f.empty()) {
    out += "\n#### Findings gone in the candidate\n\n";
    for (const auto& l : gone_f) out += l + "\n";
  }
  out += fmt::format("\n<details><summary>All {} metrics</summary>\n\n{}\n", r.metrics.size(), table(false));
  for (const auto& m : r.metrics)
    if (significant(m) || m.name == "iteration_time")
      out += fmt::format("- `{}`{}: {}\n", md_cell(m.name),
                         m.scope.empty() ? "" : " [" + md_cell(m.scope) + "]", md_cell(m.reason));
  out += "\n</details>\n";
  out += "\n<details><summary>Inputs and notes</summary>\n\n";
  out += fmt::format("- baseline: `{}` — {}\n", md_cell(paths_text(r.baseline_paths)),
                     md_cell(fingerprint_text(r.baseline_fingerprint)));
  out += fmt::format("- candidate: `{}` — {}\n", md_cell(paths_text(r.candidate_paths)),
                     md_cell(fingerprint_text(r.candidate_fingerprint)));
  for (const auto& n : r.notes) out += "- " + md_cell(n) + "\n";
  out += "\n</details>\n";
  return out;
}

std::string render_compare_junit(const CompareResult& r) {
  struct Case {
    std::string classname, name, kind, message, body;  // kind: '', 'failure', 'skipped'
  };
  std::vector<Case> cases;
  Case comparable{"proflint.compare", "comparability", "", "", ""};
  if (!r.incomparable.empty()) {
    comparable.kind = r.strict ? "failure" : "skipped";
    comparable.message = "not comparable: " + r.incomparable.front();
    for (const auto& why : r.incomparable) comparable.body += why + "\n";
  }
  cases.push_back(comparable);
  for (const auto& m : r.metrics) {
    Case c{"proflint.compare.metrics", m.name + (m.scope.empty() ? "" : " [" + m.scope + "]"), "", "", m.reason};
    if (m.status == Status::regression && m.gating) {
      c.kind = "failure";
      c.message = fmt::format("{} regressed: {}", m.name, change_text(m));
    } else if (m.status == Status::inconclusive) {
      c.kind = r.strict ? "failure" : "skipped";
      c.message = "inconclusive: " + m.reason;
    }
    cases.push_back(c);
  }
  for (const auto& f : r.findings) {
    Case c{"proflint.compare.findings",
           fmt::format("{} finding {}{}", f.change, f.id, f.scope.empty() ? "" : " [" + f.scope + "]"), "", "",
           f.problem};
    if (f.gating) {
      c.kind = "failure";
      c.message = fmt::format("new finding {} ({}): {}", f.id, f.severity, f.title);
    }
    cases.push_back(c);
  }
  size_t failures = 0, skipped = 0;
  for (const auto& c : cases) {
    failures += c.kind == "failure";
    skipped += c.kind == "skipped";
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"proflint compare: {} - {}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n",
                     gate::verdict_name(r.verdict), xml_escape(r.headline), cases.size(), failures, skipped);
  out += fmt::format("  <testsuite name=\"proflint compare: {}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n",
                     xml_escape(std::string(gate::verdict_name(r.verdict))), cases.size(), failures, skipped);
  out += "    <properties>\n";
  out += fmt::format("      <property name=\"verdict\" value=\"{}\"/>\n", gate::verdict_name(r.verdict));
  out += fmt::format("      <property name=\"headline\" value=\"{}\"/>\n", xml_escape(r.headline));
  for (const auto& c : r.caveats) out += fmt::format("      <property name=\"caveat\" value=\"{}\"/>\n", xml_escape(c));
  out += fmt::format("      <property name=\"baseline\" value=\"{}\"/>\n", xml_escape(paths_text(r.baseline_paths)));
  out += fmt::format("      <property name=\"candidate\" value=\"{}\"/>\n", xml_escape(paths_text(r.candidate_paths)));
  out += "    </properties>\n";
  for (const auto& c : cases) {
    out += fmt::format("    <testcase classname=\"{}\" name=\"{}\"", xml_escape(c.classname), xml_escape(c.name));
    if (c.kind.empty()) {
      out += c.body.empty()
                 ? "/>\n"
                 : fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n", xml_escape(c.body));
      continue;
    }
    out += fmt::format(">\n      <{} message=\"{}\"", c.kind, xml_escape(c.message));
    out += c.kind == "failure" ? fmt::format(" type=\"regression\">{}</failure>\n", xml_escape(c.body)) : "/>\n";
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace proflint
