// engine/derive/iterations.cpp — iteration sources in priority order, period detection, assignment.
#include "engine/derive/iterations.hpp"

#include "engine/common/ascii.hpp"
#include "engine/common/suggest.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <unordered_map>

#include "engine/derive/ops.hpp"

namespace proflint {

namespace {

constexpr size_t kMaxCandidatePeriods = 64;

bool is_host(const RangeRec& r) { return r.kind != RangeKind::gpu_user_annotation; }

// Indices (sorted by start) with every range that starts before the previous kept one ends
// dropped: nested or duplicated markers (a cpu_op and a user_annotation of the same step) count once.
std::vector<size_t> non_overlapping(const TraceData& t, std::vector<size_t> idx) {
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    const auto &ra = t.ranges[a], &rb = t.ranges[b];
    return ra.start != rb.start ? ra.start < rb.start : ra.end > rb.end;
  });
  std::vector<size_t> out;
  for (size_t i : idx) {
    if (!out.empty() && t.ranges[i].start < t.ranges[out.back()].end) continue;
    out.push_back(i);
  }
  return out;
}

std::optional<int64_t> number_after_hash(std::string_view name) {
  size_t hash = name.rfind('#');
  if (hash == std::string_view::npos || hash + 1 >= name.size()) return std::nullopt;
  int64_t n = 0;
  for (char c : name.substr(hash + 1)) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

// Iterations that are the marker ranges themselves.
std::vector<IterationRec> ranges_as_iterations(TraceData& t, const std::vector<size_t>& idx, bool until_next_start) {
  std::vector<IterationRec> out;
  for (size_t k = 0; k < idx.size(); ++k) {
    auto& r = t.ranges[idx[k]];
    r.iteration_marker = true;
    IterationRec it;
    it.name = t.text(r.name_id);
    it.start = r.start;
    it.end = until_next_start && k + 1 < idx.size() ? t.ranges[idx[k + 1]].start : r.end;
    out.push_back(std::move(it));
  }
  return out;
}

// True when no ancestor of range i is anything but a Python frame.
std::vector<bool> host_top_level_flags(const TraceData& t) {
  std::vector<bool> top(t.ranges.size(), false);
  for (size_t i = 0; i < t.ranges.size(); ++i) {
    int64_t p = t.ranges[i].parent;
    top[i] = p < 0 || (t.ranges[static_cast<size_t>(p)].kind == RangeKind::python_function && top[static_cast<size_t>(p)]);
  }
  return top;
}

// [begin, end) of each host thread's block in the sorted ranges.
std::vector<std::pair<size_t, size_t>> thread_blocks(const TraceData& t) {
  std::vector<std::pair<size_t, size_t>> out;
  size_t b = 0;
  while (b < t.ranges.size()) {
    size_t e = b + 1;
    while (e < t.ranges.size() && t.ranges[e].pid == t.ranges[b].pid && t.ranges[e].tid == t.ranges[b].tid &&
           is_host(t.ranges[e]) == is_host(t.ranges[b]))
      ++e;
    if (is_host(t.ranges[b])) out.emplace_back(b, e);
    b = e;
  }
  return out;
}

std::vector<IterationRec> from_key_node(TraceData& t, const std::string& key) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < t.ranges.size(); ++i) {
    const auto& r = t.ranges[i];
    if (!is_host(r)) continue;
    if (key_node_matches(t.text(r.name_id), key) || (r.op_candidate && key_node_matches(t.text(r.op_name_id), key)))
      idx.push_back(i);
  }
  idx = non_overlapping(t, std::move(idx));
  auto out = ranges_as_iterations(t, idx, /*until_next_start=*/true);
  for (auto& it : out) it.number = number_after_hash(it.name);
  return out;
}

std::vector<IterationRec> from_profiler_steps(TraceData& t) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < t.ranges.size(); ++i)
    if (is_host(t.ranges[i]) && t.ranges[i].marker == MarkerKind::profiler_step) idx.push_back(i);
  idx = non_overlapping(t, std::move(idx));
  auto out = ranges_as_iterations(t, idx, false);
  for (auto& it : out) it.number = profiler_step_number(it.name);
  return out;
}

// GPU time launched from inside [start, end) on one thread, from per-thread prefix sums.
class LaunchIndex {
 public:
  explicit LaunchIndex(const TraceData& t) {
    for (const auto& g : t.gpu) {
      if (g.api < 0) continue;
      const auto& a = t.apis[static_cast<size_t>(g.api)];
      by_thread_[{a.pid, a.tid}].push_back({a.start, g.end - g.start});
      total_ += g.end - g.start;
    }
    for (auto& [key, v] : by_thread_) {
      std::sort(v.begin(), v.end());
      int64_t sum = 0;
      for (auto& e : v) e.second = sum += e.second;  // inclusive prefix sum
    }
  }
  int64_t total() const { return total_; }
  int64_t launched_within(int64_t pid, int64_t tid, int64_t start, int64_t end) const {
    auto it = by_thread_.find({pid, tid});
    if (it == by_thread_.end()) return 0;
    const auto& v = it->second;
    auto lo = std::lower_bound(v.begin(), v.end(), std::pair{start, INT64_MIN});
    auto hi = std::lower_bound(v.begin(), v.end(), std::pair{end, INT64_MIN});
    int64_t before = lo == v.begin() ? 0 : std::prev(lo)->second;
    int64_t upto = hi == v.begin() ? 0 : std::prev(hi)->second;
    return upto - before;
  }

 private:
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<int64_t, int64_t>>> by_thread_;
  int64_t total_ = 0;
};

std::vector<IterationRec> from_nvtx(TraceData& t) {
  auto top = host_top_level_flags(t);
  std::map<std::string, std::vector<size_t>> step_like;  // digit template -> ranges
  std::map<int64_t, std::vector<size_t>> top_level;     // name -> top-level ranges
  for (size_t i = 0; i < t.ranges.size(); ++i) {
    const auto& r = t.ranges[i];
    if (r.kind != RangeKind::nvtx && r.kind != RangeKind::user_annotation) continue;
    if (r.marker != MarkerKind::none) continue;
    const std::string& name = t.text(r.name_id);
    if (r.kind == RangeKind::nvtx && framework_op_from_nvtx(name)) continue;
    if (step_like_number(name)) step_like[digit_template(name)].push_back(i);
    if (top[i]) top_level[r.name_id].push_back(i);
  }
  std::vector<size_t> best;
  for (auto& [tmpl, idx] : step_like) {
    auto kept = non_overlapping(t, idx);
    if (kept.size() >= 2 && kept.size() > best.size()) best = std::move(kept);
  }
  if (!best.empty()) {
    auto out = ranges_as_iterations(t, best, false);
    for (auto& it : out) it.number = step_like_number(it.name);
    return out;
  }
  LaunchIndex launches(t);
  if (launches.total() <= 0) return {};
  double best_cover = 0;
  for (auto& [name, idx] : top_level) {
    auto kept = non_overlapping(t, idx);
    if (kept.size() < 3) continue;
    int64_t covered = 0;
    for (size_t i : kept) {
      const auto& r = t.ranges[i];
      covered += launches.launched_within(r.pid, r.tid, r.start, r.end);
    }
    double cover = static_cast<double>(covered) / static_cast<double>(launches.total());
    if (cover >= 0.5 && cover > best_cover) {
      best_cover = cover;
      best = std::move(kept);
    }
  }
  if (best.empty()) return {};
  return ranges_as_iterations(t, best, false);
}

std::vector<IterationRec> from_optimizer_steps(TraceData& t) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < t.ranges.size(); ++i)
    if (is_host(t.ranges[i]) && is_optimizer_step(t.text(t.ranges[i].name_id))) idx.push_back(i);
  idx = non_overlapping(t, std::move(idx));
  if (idx.empty()) return {};
  // The steps of one training loop run on one thread: keep the first step's thread.
  int64_t pid = t.ranges[idx[0]].pid, tid = t.ranges[idx[0]].tid;
  std::erase_if(idx, [&](size_t i) { return t.ranges[i].pid != pid || t.ranges[i].tid != tid; });
  if (idx.size() < 2) return {};

  // Where does the first iteration start? Iteration 1 (step 0 end .. step 1) shows what an
  // iteration looks like: its earliest top-level range whose name occurs once in it (the DataLoader
  // fetch, zero_grad) marks the head; iteration 0 starts at the last range of that name before
  // step 0. Without such a name, iteration 0 gets as many top-level ranges as iteration 1 has.
  auto top = host_top_level_flags(t);
  std::vector<size_t> seq;
  for (size_t i = 0; i < t.ranges.size(); ++i) {
    const auto& r = t.ranges[i];
    if (r.pid == pid && r.tid == tid && is_host(r) && r.kind != RangeKind::python_function && top[i]) seq.push_back(i);
  }
  const auto& step0 = t.ranges[idx[0]];
  const auto& step1 = t.ranges[idx[1]];
  std::vector<size_t> before0, iter1;
  for (size_t i : seq) {
    if (t.ranges[i].start < step0.start) before0.push_back(i);
    else if (t.ranges[i].start >= step0.end && t.ranges[i].start < step1.start) iter1.push_back(i);
  }
  int64_t start0 = step0.start;
  std::unordered_map<int64_t, int> counts;
  for (size_t i : iter1) ++counts[t.ranges[i].name_id];
  auto head = std::find_if(iter1.begin(), iter1.end(), [&](size_t i) { return counts[t.ranges[i].name_id] == 1; });
  bool found = false;
  if (head != iter1.end()) {
    for (auto it = before0.rbegin(); it != before0.rend(); ++it) {
      if (t.ranges[*it].name_id == t.ranges[*head].name_id) {
        start0 = t.ranges[*it].start;
        found = true;
        break;
      }
    }
  }
  // (An iteration 1 with no top-level range of its own gives iteration 0 none either: it starts at
  // step 0. Indexing before0 with size() - 0 read past its end.)
  if (!found && !before0.empty() && !iter1.empty())
    start0 = t.ranges[before0[before0.size() > iter1.size() ? before0.size() - iter1.size() : 0]].start;

  std::vector<IterationRec> out;
  for (size_t k = 0; k < idx.size(); ++k) {
    IterationRec it;
    it.name = t.text(t.ranges[idx[k]].name_id);
    it.start = k == 0 ? start0 : t.ranges[idx[k - 1]].end;
    it.end = t.ranges[idx[k]].end;
    out.push_back(std::move(it));
  }
  return out;
}

std::vector<IterationRec> from_op_sequence(TraceData& t) {
  // Top-level ops (no op ancestor) of the busiest non-backward thread.
  std::vector<bool> under_op(t.ranges.size(), false);
  for (size_t i = 0; i < t.ranges.size(); ++i) {
    int64_t p = t.ranges[i].parent;
    under_op[i] = p >= 0 && (t.ranges[static_cast<size_t>(p)].op_candidate || under_op[static_cast<size_t>(p)]);
  }
  std::vector<size_t> best_seq;
  for (auto [b, e] : thread_blocks(t)) {
    if (is_backward_thread(t, b, e)) continue;
    std::vector<size_t> seq;
    for (size_t i = b; i < e; ++i)
      if (t.ranges[i].op_candidate && !under_op[i]) seq.push_back(i);
    if (seq.size() > best_seq.size()) best_seq = std::move(seq);
  }
  std::vector<int64_t> tokens;
  tokens.reserve(best_seq.size());
  for (size_t i : best_seq) tokens.push_back(t.ranges[i].op_name_id);
  auto match = detect_period(tokens);
  if (!match) return {};
  std::vector<IterationRec> out;
  for (size_t k = 0; k < match->repeats; ++k) {
    size_t first = match->start + k * match->period;
    IterationRec it;
    it.name = t.text(tokens[first]);
    it.start = t.ranges[best_seq[first]].start;
    if (k + 1 < match->repeats) {
      it.end = t.ranges[best_seq[first + match->period]].start;
    } else {
      it.end = it.start;
      for (size_t j = first; j < first + match->period; ++j) it.end = std::max(it.end, t.ranges[best_seq[j]].end);
    }
    out.push_back(std::move(it));
  }
  // Repeats that all sit inside one annotation (vLLM's execute_context_…, a user's "## forward ##")
  // are the layers of one step, not steps.
  for (int64_t a = t.ranges[best_seq[match->start]].parent; a >= 0; a = t.ranges[static_cast<size_t>(a)].parent) {
    const auto& r = t.ranges[static_cast<size_t>(a)];
    if (r.kind != RangeKind::python_function && r.start <= out.front().start && r.end >= out.back().end) return {};
  }
  return out;
}

std::vector<IterationRec> from_kernel_sequence(TraceData& t) {
  std::map<int64_t, std::vector<size_t>> by_device;
  for (size_t i = 0; i < t.gpu.size(); ++i)
    if (t.gpu[i].kind == GpuKind::kernel) by_device[t.gpu[i].device_id].push_back(i);
  std::vector<size_t> seq;
  for (auto& [dev, v] : by_device)
    if (v.size() > seq.size()) seq = v;  // t.gpu is sorted by start
  std::vector<int64_t> tokens;
  tokens.reserve(seq.size());
  for (size_t i : seq) tokens.push_back(t.gpu[i].name_id);
  auto match = detect_period(tokens);
  if (!match) return {};
  // Host-side times: the launching call where known, else the kernel itself.
  auto host_start = [&](size_t k) {
    const auto& g = t.gpu[seq[k]];
    return g.api >= 0 ? t.apis[static_cast<size_t>(g.api)].start : g.start;
  };
  auto host_end = [&](size_t k) {
    const auto& g = t.gpu[seq[k]];
    return g.api >= 0 ? t.apis[static_cast<size_t>(g.api)].end : g.end;
  };
  std::vector<IterationRec> out;
  for (size_t k = 0; k < match->repeats; ++k) {
    size_t first = match->start + k * match->period;
    IterationRec it;
    it.name = t.text(tokens[first]);
    it.start = host_start(first);
    if (k + 1 < match->repeats) {
      it.end = host_start(first + match->period);
    } else {
      it.end = it.start;
      for (size_t j = first; j < first + match->period; ++j) it.end = std::max(it.end, host_end(j));
    }
    out.push_back(std::move(it));
  }
  return out;
}

// Smallest q dividing p such that tokens[start, start+p) is q-periodic (prefix function).
size_t smallest_period(const std::vector<int64_t>& tokens, size_t start, size_t p) {
  std::vector<size_t> pi(p, 0);
  for (size_t i = 1; i < p; ++i) {
    size_t k = pi[i - 1];
    while (k > 0 && tokens[start + i] != tokens[start + k]) k = pi[k - 1];
    if (tokens[start + i] == tokens[start + k]) ++k;
    pi[i] = k;
  }
  size_t q = p - pi[p - 1];
  return p % q == 0 ? q : p;
}

// Sorted, non-overlapping, non-empty.
void normalize(std::vector<IterationRec>& its) {
  std::sort(its.begin(), its.end(), [](const IterationRec& a, const IterationRec& b) { return a.start < b.start; });
  for (size_t k = 0; k + 1 < its.size(); ++k) its[k].end = std::min(its[k].end, its[k + 1].start);
  std::erase_if(its, [](const IterationRec& it) { return it.end <= it.start; });
}

}  // namespace

std::optional<PeriodMatch> detect_period(const std::vector<int64_t>& tokens, size_t min_repeats, double min_coverage,
                                         size_t min_period) {
  size_t n = tokens.size();
  if (min_repeats == 0 || n < min_repeats * std::max<size_t>(min_period, 1)) return std::nullopt;
  // Candidate periods: distances between an occurrence of a token and its next few occurrences.
  std::vector<std::pair<int64_t, uint32_t>> occ(n);
  for (size_t i = 0; i < n; ++i) occ[i] = {tokens[i], static_cast<uint32_t>(i)};
  std::sort(occ.begin(), occ.end());
  std::unordered_map<size_t, size_t> votes;
  size_t max_period = n / min_repeats;
  for (size_t b = 0; b < n;) {
    size_t e = b;
    while (e < n && occ[e].first == occ[b].first) ++e;
    if (e - b >= min_repeats) {
      for (size_t i = b; i < e; ++i) {
        for (size_t j = 1; j <= 4 && i + j < e; ++j) {
          size_t gap = occ[i + j].second - occ[i].second;
          if (gap >= min_period && gap <= max_period) ++votes[gap];
        }
      }
    }
    b = e;
  }
  std::vector<std::pair<size_t, size_t>> ranked(votes.begin(), votes.end());  // (period, votes)
  std::sort(ranked.begin(), ranked.end(), [](auto& a, auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
  if (ranked.size() > kMaxCandidatePeriods) ranked.resize(kMaxCandidatePeriods);
  std::sort(ranked.begin(), ranked.end());
  for (auto [p, count] : ranked) {
    // Longest run of i with tokens[i] == tokens[i+p]: tokens[a, a+run+p) is then p-periodic.
    size_t best_run = 0, best_start = 0, run = 0, run_start = 0;
    for (size_t i = 0; i + p < n; ++i) {
      if (tokens[i] == tokens[i + p]) {
        if (run == 0) run_start = i;
        if (++run > best_run) {
          best_run = run;
          best_start = run_start;
        }
      } else {
        run = 0;
      }
    }
    size_t repeats = (best_run + p) / p;
    if (best_run == 0 || repeats < min_repeats || static_cast<double>(repeats * p) < min_coverage * static_cast<double>(n))
      continue;
    // A block that is itself a repetition of something shorter than min_period (the same op
    // over and over) has no meaningful iteration structure.
    if (smallest_period(tokens, best_start, p) < min_period) continue;
    return PeriodMatch{best_start, p, repeats};
  }
  return std::nullopt;
}

bool key_node_matches(std::string_view name, std::string_view key) {
  if (key.empty() || !name.starts_with(key)) return false;
  return name.size() == key.size() || name[key.size()] == '#';
}

std::optional<int64_t> step_like_number(std::string_view name) {
  if (!contains_ascii_nocase(name, "step") && !contains_ascii_nocase(name, "iter") &&
      !contains_ascii_nocase(name, "batch"))
    return std::nullopt;
  // The last digit run is the step number.
  size_t end = name.find_last_of("0123456789");
  if (end == std::string_view::npos) return std::nullopt;
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(name[begin - 1]))) --begin;
  if (end - begin >= 18) return std::nullopt;
  return std::stoll(std::string(name.substr(begin, end - begin + 1)));
}

std::string digit_template(std::string_view name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(name[i]))) {
      out.push_back('#');
      while (i + 1 < name.size() && std::isdigit(static_cast<unsigned char>(name[i + 1]))) ++i;
    } else {
      out.push_back(name[i]);
    }
  }
  return out;
}

std::string key_node_problem(const TraceData& t, const std::string& key) {
  // Host range and op names, with how often each occurs; "name#12" counts as "name", which is
  // what --key-node takes for numbered markers.
  std::unordered_map<std::string, int64_t> count_of;
  auto add = [&](const std::string& name) {
    size_t hash = name.rfind('#');
    bool numbered = hash != std::string::npos && hash > 0 && hash + 1 < name.size() &&
                    std::all_of(name.begin() + static_cast<std::ptrdiff_t>(hash) + 1, name.end(),
                                [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    if (!name.empty()) ++count_of[numbered ? name.substr(0, hash) : name];
  };
  bool matched = false;
  for (const auto& r : t.ranges) {
    if (!is_host(r)) continue;
    add(t.text(r.name_id));
    if (r.op_candidate && r.op_name_id != r.name_id) add(t.text(r.op_name_id));
    matched = matched || key_node_matches(t.text(r.name_id), key) ||
              (r.op_candidate && key_node_matches(t.text(r.op_name_id), key));
  }
  if (matched)
    return "key node '" + key + "' matched only ranges that nest in or overlap each other, which mark no iterations";
  auto lowered = [](std::string_view v) {
    std::string out(v.substr(0, 256));  // the edit distance is quadratic in the length
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  std::string lower_key = lowered(key);
  struct Scored {
    size_t distance;
    int64_t count;
    const std::string* name;
  };
  std::vector<Scored> scored;
  for (const auto& [name, n] : count_of) {
    std::string lower = lowered(name);
    // Names that contain the key (or that the key contains) come first, then by edit distance.
    bool contains = lower.find(lower_key) != std::string::npos || lower_key.find(lower) != std::string::npos;
    size_t d = edit_distance(lower_key, lower);
    scored.push_back({contains ? d : d + 1000000, n, &name});
  }
  size_t keep = std::min<size_t>(3, scored.size());
  std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(keep), scored.end(),
                    [](const Scored& a, const Scored& b) {
                      if (a.distance != b.distance) return a.distance < b.distance;
                      if (a.count != b.count) return a.count > b.count;
                      return *a.name < *b.name;
                    });
  std::string out = "key node '" + key + "' not found";
  if (keep == 0) return out + " (the trace has no host ranges or ops)";
  out += "; candidates: ";
  for (size_t i = 0; i < keep; ++i)
    out += (i ? ", '" : "'") + *scored[i].name + "' (" + std::to_string(scored[i].count) + "×)";
  return out;
}

void detect_iterations(TraceData& t) {
  t.iterations.clear();
  t.iteration_source = "none";
  for (auto& r : t.ranges) r.iteration_marker = false;
  auto accept = [&](std::vector<IterationRec> its, const char* source) {
    normalize(its);
    if (its.empty()) return false;
    t.iterations = std::move(its);
    t.iteration_source = source;
    return true;
  };
  t.key_node_problem.clear();
  if (t.options && t.options->key_node && !t.options->key_node->empty()) {
    if (accept(from_key_node(t, *t.options->key_node), "key_node")) return;
    t.key_node_problem = key_node_problem(t, *t.options->key_node);
  }
  for (auto& r : t.ranges) r.iteration_marker = false;
  if (accept(from_profiler_steps(t), "profiler_step")) return;
  for (auto& r : t.ranges) r.iteration_marker = false;
  if (accept(from_nvtx(t), "nvtx")) return;
  for (auto& r : t.ranges) r.iteration_marker = false;
  if (accept(from_optimizer_steps(t), "auto_period")) return;
  if (accept(from_op_sequence(t), "auto_period")) return;
  // Kernel sequences only stand in for missing CPU-side structure (GPU-only traces): where ops
  // exist and show no period, a repeating kernel pattern is a layer inside one step, not a step.
  bool has_ops = std::any_of(t.ranges.begin(), t.ranges.end(), [](const RangeRec& r) { return r.op_candidate; });
  if (!has_ops && accept(from_kernel_sequence(t), "auto_period")) return;
}

void assign_iterations(TraceData& t) {
  for (auto& a : t.apis) a.iteration = iteration_at(t.iterations, a.start);
  for (auto& s : t.syncs) s.iteration = iteration_at(t.iterations, s.start);
  for (auto& it : t.iterations) it.gpu_start = it.gpu_end = kNone;
  for (auto& g : t.gpu) {
    int64_t launch = g.api >= 0 ? t.apis[static_cast<size_t>(g.api)].start : g.start;
    g.iteration = iteration_at(t.iterations, launch);
    if (g.iteration < 0) continue;
    auto& it = t.iterations[static_cast<size_t>(g.iteration)];
    it.gpu_start = it.gpu_start == kNone ? g.start : std::min(it.gpu_start, g.start);
    it.gpu_end = it.gpu_end == kNone ? g.end : std::max(it.gpu_end, g.end);
  }
}

}  // namespace proflint
