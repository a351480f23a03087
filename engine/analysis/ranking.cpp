// engine/analysis/ranking.cpp — see ranking.hpp.
#include "engine/analysis/ranking.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
#include <numeric>
#include <set>
#include <tuple>

#include "engine/common/format.hpp"
#include "engine/common/saturate.hpp"

namespace proflint {

// Below this, and under 0.1% of what higher-ranked findings already claimed of it, the part of an
// estimate left after overlaps is the rounding of per-row claims.
constexpr int64_t kRoundingRemainderNs = 1000;


namespace {

auto rank_key(const Finding& f) {
  return std::make_tuple(f.diagnostic, -f.estimated_savings_ns, -static_cast<int>(f.effective_severity), f.id,
                         f.scope.trace_id.value_or(-1), f.scope.device_id.value_or(-1), f.problem);
}

Severity severity_of(const Finding& f, const SeverityThresholds& thresholds) {
  if (f.diagnostic) return Severity::info;
  if (f.severity) return *f.severity;
  if (f.savings_share >= thresholds.high) return Severity::high;
  if (f.savings_share >= thresholds.medium) return Severity::medium;
  return Severity::low;
}

// One entry of the ranked list: an input finding, or (after merge_job_findings) several merged.
struct Ranked {
  Finding f;
  std::vector<size_t> origin;                              // indices into the input findings
  std::map<size_t, int64_t> shared;                        // owner (input index) -> ns subtracted
  std::vector<std::map<size_t, int64_t>> instance_shared;  // the same, per f.instances[k]
};

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

}  // namespace

std::string mask_numbers(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    bool starts = std::isdigit(static_cast<unsigned char>(c)) && (i == 0 || !is_word_char(text[i - 1]));
    if (!starts) {
      out += c;
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) ||
                               ((text[j] == '.' || text[j] == ',') && j + 1 < text.size() &&
                                std::isdigit(static_cast<unsigned char>(text[j + 1])))))
      ++j;
    if (j < text.size() && is_word_char(text[j])) {
      out.append(text, i, j - i);  // part of a name ("128x64", "3d"): keep it
    } else {
      out += '#';
    }
    i = j;
  }
  return out;
}

namespace {

// ---- One finding per job problem -------------------------------------------------------------
// Runs after overlap subtraction and thresholds, on the entries still listed. Kept apart from the
// claims logic above so either can change without the other.

std::string instance_label(const Finding& f, const JobMap* jobs, bool several_traces) {
  std::vector<std::string> parts;
  std::optional<int64_t> rank = f.scope.rank;
  if (jobs && f.scope.trace_id && f.scope.device_id) {
    auto it = jobs->rank_of_device.find({*f.scope.trace_id, *f.scope.device_id});
    if (it != jobs->rank_of_device.end()) rank = it->second;
  }
  if (rank) {
    parts.push_back(fmt::format("rank {}", *rank));
  } else if (several_traces && f.scope.trace_id) {
    std::string label = fmt::format("trace {}", *f.scope.trace_id);
    if (jobs)
      if (auto it = jobs->trace_label.find(*f.scope.trace_id); it != jobs->trace_label.end()) label = it->second;
    parts.push_back(label);
  }
  if (f.scope.device_id && *f.scope.device_id >= 0) parts.push_back(fmt::format("GPU {}", *f.scope.device_id));
  if (parts.empty()) return "the trace";
  return parts.size() == 1 ? parts[0] : parts[0] + " (" + parts[1] + ")";  // "rank 1 (GPU 0)"
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

std::string format_value(const std::string& key, double v) {
  if (key.ends_with("_ns")) return format_ns(static_cast<int64_t>(std::llround(v)));
  if (key.ends_with("bytes")) return format_bytes(static_cast<int64_t>(std::llround(v)));
  if (key.find("share") != std::string::npos || key.ends_with("fraction") || key.ends_with("utilization"))
    return format_percent(v);
  if (v == std::floor(v) && std::abs(v) < 1e15) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{:.3g}", v);
}

// The key measured value of a finding: the first scalar number of its evidence that every instance
// has (detectors list their main measurement first), not a row id.
std::optional<std::string> key_measure(const std::vector<Finding>& instances) {
  if (instances.empty() || !instances[0].evidence.is_object()) return std::nullopt;
  for (const auto& item : instances[0].evidence.items()) {
    // A named copy, not a structured binding: clang 14 (the fuzz build) cannot capture those.
    const std::string key = item.key();
    if (!item.value().is_number() || key.ends_with("_id")) continue;
    bool everywhere = std::all_of(instances.begin(), instances.end(), [&](const Finding& f) {
      return f.evidence.is_object() && f.evidence.contains(key) && f.evidence[key].is_number();
    });
    if (everywhere) return key;
  }
  return std::nullopt;
}

nlohmann::ordered_json spread_json(const std::vector<double>& v, bool integral) {
  auto num = [&](double x) -> nlohmann::ordered_json {
    if (integral) return static_cast<int64_t>(std::llround(x));
    return x;
  };
  return {{"min", num(*std::min_element(v.begin(), v.end()))},
          {"median", num(median_of(v))},
          {"max", num(*std::max_element(v.begin(), v.end()))}};
}

std::string spread_text(const std::string& key, const std::vector<double>& v) {
  return fmt::format("{} / {} / {}", format_value(key, *std::min_element(v.begin(), v.end())),
                     format_value(key, median_of(v)), format_value(key, *std::max_element(v.begin(), v.end())));
}

// Merges entries[members] (two or more distinct ranks/GPUs of one job, the same problem) into one.
Ranked merge_group(std::vector<Ranked>& entries, const std::vector<size_t>& members,
                   const std::map<int64_t, int64_t>& wall_ns_by_trace, const JobMap* jobs,
                   const SeverityThresholds& thresholds) {
  Ranked merged;
  std::vector<Finding> instances;
  std::vector<int64_t> wall;
  std::set<int64_t> traces;
  for (size_t e : members) {
    Ranked& r = entries[e];
    merged.origin.insert(merged.origin.end(), r.origin.begin(), r.origin.end());
    for (const auto& [owner, ns] : r.shared) add_saturating(merged.shared[owner], ns);
    merged.instance_shared.push_back(r.shared);
    auto it = wall_ns_by_trace.find(*r.f.scope.trace_id);
    wall.push_back(it != wall_ns_by_trace.end() ? it->second : 0);
    traces.insert(*r.f.scope.trace_id);
    instances.push_back(std::move(r.f));
  }
  const size_t n = instances.size();
  // Job saving: the slowest instance's time less the slowest time once each saves its estimate.
  int64_t slowest = *std::max_element(wall.begin(), wall.end());
  int64_t after_net = std::numeric_limits<int64_t>::min(), after_gross = std::numeric_limits<int64_t>::min();
  size_t bound = 0;  // the instance whose time after the fix is the job's: it bounds the saving
  for (size_t k = 0; k < n; ++k) {
    int64_t left = wall[k] - instances[k].estimated_savings_ns;
    if (left > after_net) {
      after_net = left;
      bound = k;
    }
    after_gross = std::max(after_gross, wall[k] - instances[k].gross_savings_ns);
  }
  const bool several_traces = traces.size() > 1;
  bool gpus = !several_traces && std::all_of(instances.begin(), instances.end(), [](const Finding& f) {
    return f.scope.device_id && *f.scope.device_id >= 0;
  });
  const std::string one = gpus ? "GPU" : "rank";
  std::vector<std::string> labels;
  for (const auto& f : instances) labels.push_back(instance_label(f, jobs, several_traces));

  const Finding& rep = instances[bound];
  Finding& m = merged.f;
  m.id = rep.id;
  m.title = rep.title;
  m.recommendation = rep.recommendation;
  m.source = rep.source;
  m.diagnostic = false;
  m.confidence = rep.confidence;
  for (const auto& f : instances) {
    m.confidence = std::min(m.confidence, f.confidence);
    m.min_savings_ns = std::max(m.min_savings_ns, f.min_savings_ns);
    m.min_wall_share = std::max(m.min_wall_share, f.min_wall_share);
    if (f.severity && (!m.severity || *f.severity > *m.severity)) m.severity = f.severity;
  }
  if (!several_traces) m.scope.trace_id = *traces.begin();
  m.estimated_savings_ns = std::max<int64_t>(0, slowest - after_net);
  m.gross_savings_ns = std::max<int64_t>(m.estimated_savings_ns, slowest - after_gross);
  m.savings_share = slowest > 0 ? static_cast<double>(m.estimated_savings_ns) / static_cast<double>(slowest) : 0.0;

  std::vector<double> saving;
  for (const auto& f : instances) saving.push_back(static_cast<double>(f.estimated_savings_ns));
  std::string where;
  for (size_t k = 0; k < n; ++k) where += (k ? ", " : "") + labels[k];
  std::string spread = fmt::format("estimated saving {}", spread_text("_ns", saving));
  nlohmann::ordered_json spreads = nlohmann::ordered_json::object();
  spreads["estimated_savings_ns"] = spread_json(saving, true);
  if (auto key = key_measure(instances)) {
    std::vector<double> v;
    bool integral = true;
    for (const auto& f : instances) {
      v.push_back(f.evidence[*key].get<double>());
      integral = integral && f.evidence[*key].is_number_integer();
    }
    // "exposed_copy_ns" reads "exposed copy" in the text (the unit is in the values).
    std::string words = *key;
    for (std::string_view unit : {"_ns", "_bytes"})
      if (words.size() > unit.size() && words.ends_with(unit)) words.resize(words.size() - unit.size());
    std::replace(words.begin(), words.end(), '_', ' ');
    spread += fmt::format(", {} {}", words, spread_text(*key, v));
    spreads[*key] = spread_json(v, integral);
  }
  m.problem = fmt::format("The same problem on {} {}s of one job ({}); per {}, min / median / max: {}. {}, whose "
                          "time bounds the job's saving: {}",
                          n, one, where, one, spread, labels[bound], rep.problem);
  m.savings_method = fmt::format(
      "{}; for the job: the step is as slow as its slowest {}, so the saving is max(T) - max(T - s) over the {} {}s "
      "(T: steady wall time, s: that {}'s estimate), not the sum",
      rep.savings_method.empty() ? "per " + one + " as the detector estimates it" : rep.savings_method, one, n, one, one);
  m.evidence = nlohmann::ordered_json::object();
  m.evidence["instances"] = n;
  m.evidence["where"] = labels;
  m.evidence["bounded_by"] = labels[bound];
  m.evidence["spread"] = spreads;
  m.instances = std::move(instances);
  m.effective_severity = severity_of(m, thresholds);
  return merged;
}

// Merges, in place, the entries that are the same problem on several ranks/GPUs of one job;
// moves a merged finding under its threshold to `below`.
// The same check, below its threshold on several ranks/GPUs of one job, becomes one entry: the
// largest value (the instance closest to firing) speaks for the job and the others are kept as
// instances. Same id, source, unit, threshold and wording (numbers masked) on traces of one job.
void merge_job_below(std::vector<BelowThreshold>& below, const JobMap* jobs) {
  auto job_of = [&](int64_t trace) {
    if (jobs)
      if (auto it = jobs->job_of_trace.find(trace); it != jobs->job_of_trace.end()) return it->second;
    return -1 - trace;  // a job of its own
  };
  using Key = std::tuple<std::string, std::string, std::string, double, std::string, std::string, int64_t>;
  std::map<Key, std::vector<size_t>> groups;
  std::vector<Key> order;
  for (size_t i = 0; i < below.size(); ++i) {
    const auto& b = below[i];
    if (!b.scope.trace_id) continue;
    Key k{b.id, b.source, b.unit, b.threshold, mask_numbers(b.measured), mask_numbers(b.detail), job_of(*b.scope.trace_id)};
    auto [it, fresh] = groups.try_emplace(k);
    if (fresh) order.push_back(k);
    it->second.push_back(i);
  }
  std::vector<bool> drop(below.size(), false);
  for (const auto& k : order) {
    const auto& members = groups[k];
    if (members.size() < 2) continue;
    std::set<int64_t> traces;
    for (size_t i : members) traces.insert(*below[i].scope.trace_id);
    size_t best = members[0];
    for (size_t i : members)
      if (below[i].value > below[best].value) best = i;
    std::vector<BelowThreshold::Instance> instances;
    for (size_t i : members) {
      Finding probe;
      probe.scope = below[i].scope;
      instances.push_back({below[i].scope, below[i].value, instance_label(probe, jobs, traces.size() > 1)});
      if (i != best) drop[i] = true;
    }
    below[best].instances = std::move(instances);
  }
  std::vector<BelowThreshold> kept;
  kept.reserve(below.size());
  for (size_t i = 0; i < below.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(below[i]));
  below = std::move(kept);
}

void merge_job_findings(std::vector<Ranked>& entries, const std::map<int64_t, int64_t>& wall_ns_by_trace,
                        const JobMap* jobs, const SeverityThresholds& thresholds, std::vector<BelowThreshold>* below) {
  using Key = std::tuple<int64_t, std::string, std::string, std::string, std::string, std::string>;
  std::map<Key, std::vector<size_t>> groups;
  for (size_t e = 0; e < entries.size(); ++e) {
    const Finding& f = entries[e].f;
    if (f.diagnostic || !f.scope.trace_id || !f.instances.empty()) continue;
    int64_t trace = *f.scope.trace_id;
    int64_t job = -1 - trace;  // a trace of its own
    if (jobs)
      if (auto it = jobs->job_of_trace.find(trace); it != jobs->job_of_trace.end()) job = it->second;
    groups[{job, f.id, f.source, f.title, mask_numbers(f.problem), mask_numbers(f.recommendation)}].push_back(e);
  }
  std::vector<Ranked> out;
  std::vector<bool> taken(entries.size(), false);
  for (auto& [key, members] : groups) {
    if (members.size() < 2) continue;
    // Several findings on one rank/GPU are not "the same problem on several ranks": leave them.
    std::set<std::pair<int64_t, int64_t>> scopes;
    for (size_t e : members)
      scopes.emplace(*entries[e].f.scope.trace_id, entries[e].f.scope.device_id.value_or(-1));
    if (scopes.size() != members.size()) continue;
    std::sort(members.begin(), members.end(), [&](size_t a, size_t b) {
      const Scope& x = entries[a].f.scope;
      const Scope& y = entries[b].f.scope;
      return std::make_tuple(*x.trace_id, x.device_id.value_or(-1)) < std::make_tuple(*y.trace_id, y.device_id.value_or(-1));
    });
    for (size_t e : members) taken[e] = true;
    Ranked merged = merge_group(entries, members, wall_ns_by_trace, jobs, thresholds);
    Finding& m = merged.f;
    bool under_ns = m.min_savings_ns > 0 && m.estimated_savings_ns < m.min_savings_ns;
    bool under_share = m.min_wall_share > 0 && m.savings_share < m.min_wall_share;
    if (under_ns || under_share) {
      if (below) {
        BelowThreshold b;
        b.id = m.id;
        b.measured = "job-level estimated saving (the same finding on several ranks/GPUs, merged)";
        b.value = under_ns ? static_cast<double>(m.estimated_savings_ns) : m.savings_share;
        b.threshold = under_ns ? static_cast<double>(m.min_savings_ns) : m.min_wall_share;
        b.unit = under_ns ? "ns" : "share of wall time";
        b.scope = m.scope;
        b.source = m.source;
        b.detail = m.problem;
        below->push_back(std::move(b));
      }
      continue;
    }
    out.push_back(std::move(merged));
  }
  for (size_t e = 0; e < entries.size(); ++e)
    if (!taken[e]) out.push_back(std::move(entries[e]));
  entries = std::move(out);
}

// Overlap list of one entry from its owner -> ns map: one line per owner entry, by rank position.
std::vector<Finding::Overlap> overlaps_of(const std::map<size_t, int64_t>& shared, const std::vector<std::string>& id_of,
                                          const std::map<size_t, size_t>& position_of, size_t own_position) {
  std::map<std::pair<size_t, std::string>, int64_t> by_owner;
  for (const auto& [owner, ns] : shared) {
    auto it = position_of.find(owner);
    size_t pos = it != position_of.end() ? it->second : 0;
    if (pos != 0 && pos == own_position) continue;  // merged into this very finding
    add_saturating(by_owner[{pos, id_of[owner]}], ns);
  }
  std::vector<Finding::Overlap> out;
  for (const auto& [owner, ns] : by_owner) out.push_back({owner.second, owner.first, ns});
  return out;
}

}  // namespace

void rank_findings(std::vector<Finding>& findings, const std::map<int64_t, int64_t>& wall_ns_by_trace,
                   const SeverityThresholds& thresholds, std::vector<BelowThreshold>* below, const JobMap* jobs) {
  std::vector<int64_t> walls(findings.size(), 0);
  for (size_t i = 0; i < findings.size(); ++i) {
    Finding& f = findings[i];
    int64_t wall = 0;
    if (f.scope.trace_id) {
      auto it = wall_ns_by_trace.find(*f.scope.trace_id);
      if (it != wall_ns_by_trace.end()) wall = it->second;
    } else {
      for (const auto& [id, w] : wall_ns_by_trace) wall = std::max(wall, w);
    }
    walls[i] = wall;
    // Amdahl: a fix cannot recover more than the whole run.
    f.estimated_savings_ns = std::clamp<int64_t>(f.estimated_savings_ns, 0, wall > 0 ? wall : f.estimated_savings_ns);
    f.gross_savings_ns = f.estimated_savings_ns;
    f.overlaps.clear();
    f.instances.clear();
    f.savings_share = wall > 0 ? static_cast<double>(f.estimated_savings_ns) / static_cast<double>(wall) : 0.0;
    f.effective_severity = severity_of(f, thresholds);
  }
  // Visit from the largest gross estimate down, so the finding that explains most keeps the saving;
  // generic idle-time findings after every finding that names a cause (Finding::generic).
  std::vector<size_t> order(findings.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (findings[a].generic != findings[b].generic) return !findings[a].generic;
    return rank_key(findings[a]) < rank_key(findings[b]);
  });
  struct Owner {
    int64_t ns = 0;    // the largest claim on the key so far
    size_t finding = 0;  // the first (largest) finding that claimed it
  };
  std::map<std::string, Owner> claimed;
  std::vector<std::map<size_t, int64_t>> shared(findings.size());  // finding -> (owner -> ns subtracted)
  std::vector<bool> held_back(findings.size(), false);
  for (size_t i : order) {
    Finding& f = findings[i];
    if (f.diagnostic) continue;
    int64_t deduct = 0;
    for (const auto& [key, ns] : f.claims) {
      auto it = claimed.find(key);
      if (it == claimed.end()) continue;
      int64_t take = std::min(std::max<int64_t>(ns, 0), it->second.ns);
      if (take <= 0) continue;
      add_saturating(deduct, take);  // a rule may claim up to INT64_MAX on many keys
      add_saturating(shared[i][it->second.finding], take);
    }
    f.estimated_savings_ns = std::max<int64_t>(0, f.estimated_savings_ns - deduct);
    // What is left of an estimate counted elsewhere by all but a few nanoseconds is the rounding of
    // its per-row claims (a 9.68 ms estimate against 9.68 ms of claims left "saves ~2 ns"): nothing.
    if (deduct > 0 && f.estimated_savings_ns < kRoundingRemainderNs && f.estimated_savings_ns * 1000 < deduct)
      f.estimated_savings_ns = 0;
    const double wall = static_cast<double>(walls[i]);
    f.savings_share = wall > 0 ? static_cast<double>(f.estimated_savings_ns) / wall : 0.0;
    f.effective_severity = severity_of(f, thresholds);
    bool under_ns = f.min_savings_ns > 0 && f.estimated_savings_ns < f.min_savings_ns;
    bool under_share = f.min_wall_share > 0 && wall > 0 && f.savings_share < f.min_wall_share;
    if (under_ns || under_share) {
      held_back[i] = true;
      if (below) {
        BelowThreshold b;
        b.id = f.id;
        b.measured = deduct > 0 ? "estimated saving, after removing what higher-ranked findings already count"
                                : "estimated saving";
        if (under_ns) {
          b.value = static_cast<double>(f.estimated_savings_ns);
          b.threshold = static_cast<double>(f.min_savings_ns);
          b.unit = "ns";
        } else {
          b.value = f.savings_share;
          b.threshold = f.min_wall_share;
          b.unit = "share of wall time";
        }
        b.scope = f.scope;
        b.source = f.source;
        b.detail = f.problem;
        below->push_back(std::move(b));
      }
      continue;  // its claims count for nobody: it is not listed
    }
    for (const auto& [key, ns] : f.claims) {
      auto [it, fresh] = claimed.try_emplace(key, Owner{std::max<int64_t>(ns, 0), i});
      if (!fresh) it->second.ns = std::max(it->second.ns, ns);
    }
  }
  // Step 2: one finding per job problem (after overlaps: each instance keeps what is its own).
  std::vector<std::string> id_of(findings.size());
  std::vector<Ranked> entries;
  for (size_t i = 0; i < findings.size(); ++i) {
    id_of[i] = findings[i].id;
    if (held_back[i]) continue;
    Ranked r;
    r.f = std::move(findings[i]);
    r.origin = {i};
    r.shared = std::move(shared[i]);
    entries.push_back(std::move(r));
  }
  merge_job_findings(entries, wall_ns_by_trace, jobs, thresholds, below);
  if (below) merge_job_below(*below, jobs);

  // Step 3: final order, and each overlap named by the position of the entry that owns it.
  std::stable_sort(entries.begin(), entries.end(), [&](const Ranked& a, const Ranked& b) { return rank_key(a.f) < rank_key(b.f); });
  std::map<size_t, size_t> position_of;  // input index -> 1-based rank of its entry among problems
  size_t rank = 0;
  for (const auto& r : entries) {
    if (r.f.diagnostic) continue;
    ++rank;
    for (size_t i : r.origin) position_of[i] = rank;
  }
  findings.clear();
  findings.reserve(entries.size());
  for (auto& r : entries) {
    size_t own = r.f.diagnostic || r.origin.empty() ? 0 : position_of[r.origin[0]];
    if (r.f.instances.empty()) {
      r.f.overlaps = overlaps_of(r.shared, id_of, position_of, own);
    } else {
      for (size_t k = 0; k < r.f.instances.size(); ++k)
        r.f.instances[k].overlaps = overlaps_of(r.instance_shared[k], id_of, position_of, own);
      // The job finding lists each owner once, with the part of its own (job-level) reduction
      // proportional to what the owner took from the instances.
      auto owners = overlaps_of(r.shared, id_of, position_of, own);
      int64_t reduction = r.f.gross_savings_ns - r.f.estimated_savings_ns, total = 0, given = 0;
      for (const auto& o : owners) add_saturating(total, o.shared_ns);
      for (size_t k = 0; k < owners.size() && reduction > 0 && total > 0; ++k) {
        int64_t part = k + 1 == owners.size()
                           ? reduction - given
                           : static_cast<int64_t>(static_cast<double>(reduction) * static_cast<double>(owners[k].shared_ns) /
                                                  static_cast<double>(total));
        given += part;
        if (part > 0) r.f.overlaps.push_back({owners[k].id, owners[k].rank, part});
      }
    }
    findings.push_back(std::move(r.f));
  }
}

}  // namespace proflint
