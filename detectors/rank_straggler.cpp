// detectors/rank_straggler.cpp — rank-straggler
// A job-level detector: in a job whose ranks' collectives were matched and whose clocks were
// aligned (tables job, job_rank, collective_instance, collective_participation), names the rank
// that arrives last at the collectives most often, how long the other ranks wait for it, and why
// it is late, from its own timeline compared with the other ranks' (same steps).
// Docs: docs/detectors/rank-straggler.md
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "engine/analysis/dataloader_ranges.hpp"
#include "engine/analysis/detector.hpp"
#include "engine/common/format.hpp"
#include "engine/common/intervals.hpp"

namespace proflint {

namespace {

// Host ops that are the collective itself (their time is the wait, not the rank's own work).
constexpr const char* kCommOpSql =
    "(name LIKE 'c10d::%' OR name LIKE 'gloo:%' OR name LIKE 'nccl:%' OR name LIKE 'rccl:%' OR "
    "name = 'record_param_comms' OR name LIKE 'ProcessGroup%')";

struct Rank {
  int64_t rank = 0, trace_id = 0, offset_ns = 0;
  std::optional<int64_t> pid;        // nsys: the rank's process when one export holds several ranks
  std::optional<int64_t> device;
  bool gpu = false;                  // has compute kernels: its work is GPU work
  std::vector<Interval> activity;    // job clock: the rank's own work (compute kernels/copies, or host ops)
};

void bind_optional(SQLite::Statement& q, int index, const std::optional<int64_t>& v) {
  if (v) q.bind(index, *v);
  else q.bind(index);
}

double median_share(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Participation {
  int64_t instance = 0, rank = 0, start = 0, wait = 0;
  std::optional<int64_t> iteration;
  int64_t exposed = 0;               // wait not overlapped by the rank's own work
};

// What one rank did in one of its iterations (own clock; durations only, so no alignment needed).
struct StepMetrics {
  int64_t dur = 0;
  std::string name;                           // ProfilerStep#N, as the trace names the iteration
  std::map<std::string, int64_t> ns;          // cause -> time
  int64_t kernels = 0;
  std::map<std::string, std::pair<int64_t, int64_t>> regions;  // region -> (kernel count, kernel time)
};

// A trace's kernel and runtime-call time grouped by what a rank selects them by (device, process)
// and by iteration, read once for all the ranks of the trace: one nsys export can hold every rank,
// and a query per rank scanned the whole kernel and API tables once per rank. Each rank then sums
// the groups that are its own (integer sums: the same totals as a query per rank).
struct TraceGroups {
  struct Kernels {
    std::optional<int64_t> device, pid;
    int64_t iteration = 0;
    size_t region = 0;  // index into region_names: the outermost frame of the op's path (region_of)
    int64_t n = 0, ns = 0;
  };
  struct Calls {
    std::optional<int64_t> pid;
    int64_t iteration = 0;
    int64_t sync_ns = 0, launch_ns = 0;
    int64_t sync_names = 0, launch_names = 0;  // names of each kind called: the cause is there, even at 0 ns
  };
  std::vector<Kernels> kernels;
  std::vector<Calls> calls;
  std::vector<std::string> region_names;  // distinct regions of the kernels' ops
};

// `column IS NULL OR column = v` of the per-rank queries: a rank without a device or a process
// takes every row; one with it only the rows that have the same (a NULL column never matches).
bool selects(const std::optional<int64_t>& wanted, const std::optional<int64_t>& column) {
  return !wanted || (column && *column == *wanted);
}

// Cause keys, in the order they are shown; each has a phrase and a fix.
struct Cause {
  const char* key;
  const char* what;
};
constexpr Cause kCauses[] = {
    {"kernels", "GPU compute (kernel time)"},
    {"host_compute", "CPU compute (time in host ops)"},
    {"dataloader", "DataLoader wait (input fetch)"},
    {"h2d", "host-to-device copies"},
    {"launch", "kernel launch overhead (time in launch calls)"},
    {"sync", "host synchronisation stalls"},
    {"host_gap", "host time outside any recorded op (Python code, sleeps, logging, I/O)"},
};

int64_t median_of(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// "/ProfilerStep#12/Optimizer.step#SGD.step/aten::add_(3)" -> "Optimizer.step#SGD.step": the
// outermost frame under the step marker, without the repetition suffix.
std::string_view region_of(std::string_view path) {
  size_t pos = 0;
  while (pos < path.size()) {
    if (path[pos] == '/') ++pos;
    size_t next = path.find('/', pos);
    std::string_view part = path.substr(pos, next == std::string_view::npos ? std::string_view::npos : next - pos);
    if (!part.starts_with("ProfilerStep#") || next == std::string_view::npos) {
      if (!part.empty() && part.back() == ')') {
        size_t open = part.rfind('(');
        if (open != std::string_view::npos && open > 0 &&
            std::all_of(part.begin() + static_cast<long>(open) + 1, part.end() - 1, [](char c) { return c >= '0' && c <= '9'; }))
          part = part.substr(0, open);
      }
      if (part.starts_with("autograd::engine::evaluate_function")) return "backward";
      return part;
    }
    pos = next;
  }
  return "(no op)";
}

bool table_exists(const Facts& facts, const char* name) {
  SQLite::Statement q(facts.db(), "SELECT 1 FROM sqlite_master WHERE name = ?1");
  q.bind(1, name);
  return q.executeStep();
}

std::vector<Interval> shifted(std::vector<Interval> v, int64_t by) {
  for (auto& i : v) i.start += by, i.end += by;
  return union_intervals(std::move(v));
}

class RankStraggler final : public Detector {
 public:
  explicit RankStraggler(const OptionValues& o)
      : min_share_(o.number("min_share")),
        high_share_(o.number("high_share")),
        explain_share_(o.number("explain_share")) {}

  std::string_view id() const override { return "rank-straggler"; }
  std::string_view title() const override { return "One rank arrives late at the collectives and the others wait for it"; }
  // "job" only: a lone trace (a job of one rank) has nothing to compare, and saying "skipped" on
  // every single-rank analysis would be noise; the detector checks for matched collectives itself.
  std::vector<std::string> needs() const override { return {"job"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    if (!table_exists(facts, "collective_participation") || !facts.has("collectives", trace_id)) return;
    auto& db = facts.db();
    int64_t job_id = -1;
    {
      SQLite::Statement q(db, "SELECT job_id FROM job_rank WHERE trace_id = ?1 ORDER BY rank LIMIT 1");
      q.bind(1, trace_id);
      if (!q.executeStep()) return;
      job_id = q.getColumn(0).getInt64();
      // Once per job: from the trace of its lowest rank.
      SQLite::Statement first(db, "SELECT trace_id FROM job_rank WHERE job_id = ?1 ORDER BY rank LIMIT 1");
      first.bind(1, job_id);
      if (!first.executeStep() || first.getColumn(0).getInt64() != trace_id) return;
    }
    bool aligned = false;
    int64_t ranks_present = 0;
    std::optional<int64_t> world_size;
    {
      SQLite::Statement q(db, "SELECT aligned, ranks_present, world_size FROM job WHERE job_id = ?1");
      q.bind(1, job_id);
      if (!q.executeStep()) return;
      aligned = q.getColumn(0).getInt() != 0;
      ranks_present = q.getColumn(1).getInt64();
      if (!q.getColumn(2).isNull()) world_size = q.getColumn(2).getInt64();
    }
    // Only some ranks of a larger job: the last arrival among them need not be the job's.
    const bool partial = world_size && *world_size > ranks_present;
    // Arrival order across ranks means nothing on unaligned clocks.
    if (!aligned) return;

    std::map<int64_t, Rank> ranks;
    {
      SQLite::Statement q(db, "SELECT rank, trace_id, device_id, clock_offset_ns, pid FROM job_rank WHERE job_id = ?1 ORDER BY rank");
      q.bind(1, job_id);
      while (q.executeStep()) {
        Rank r;
        r.rank = q.getColumn(0).getInt64();
        r.trace_id = q.getColumn(1).getInt64();
        if (!q.getColumn(2).isNull()) r.device = q.getColumn(2).getInt64();
        r.offset_ns = q.getColumn(3).getInt64();
        if (!q.getColumn(4).isNull()) r.pid = q.getColumn(4).getInt64();
        ranks[r.rank] = r;
      }
    }
    if (ranks.size() < 2) return;
    for (auto& [_, r] : ranks) load_activity(facts, r);

    std::map<int64_t, int64_t> last_rank;  // instance -> last arriver
    {
      SQLite::Statement q(db, "SELECT instance_id, last_rank FROM collective_instance WHERE job_id = ?1 AND ranks >= 2");
      q.bind(1, job_id);
      while (q.executeStep()) last_rank[q.getColumn(0).getInt64()] = q.getColumn(1).getInt64();
    }
    if (last_rank.empty()) return;
    std::vector<Participation> parts;
    {
      SQLite::Statement q(db,
          "SELECT instance_id, rank, start_ns, wait_ns, iteration FROM collective_participation WHERE job_id = ?1 ORDER BY instance_id, rank");
      q.bind(1, job_id);
      while (q.executeStep()) {
        Participation p;
        p.instance = q.getColumn(0).getInt64();
        p.rank = q.getColumn(1).getInt64();
        if (!last_rank.count(p.instance) || !ranks.count(p.rank)) continue;
        p.start = q.getColumn(2).getInt64();
        p.wait = q.getColumn(3).getInt64();
        if (!q.getColumn(4).isNull()) p.iteration = q.getColumn(4).getInt64();
        const auto& act = ranks[p.rank].activity;
        p.exposed = p.wait - length_within(act, {p.start, p.start + p.wait});
        parts.push_back(p);
      }
    }

    // The straggler: the rank whose lateness costs the others the most exposed wait.
    std::map<int64_t, int64_t> last_count, first_count, wait_total, exposed_total, caused;
    std::map<int64_t, int64_t> instances_of;
    for (const auto& p : parts) {
      ++instances_of[p.rank];
      wait_total[p.rank] += p.wait;
      exposed_total[p.rank] += p.exposed;
      if (last_rank[p.instance] == p.rank) ++last_count[p.rank];
      else caused[last_rank[p.instance]] += p.exposed;
    }
    {
      std::map<int64_t, std::pair<int64_t, int64_t>> earliest;  // instance -> (start, rank)
      for (const auto& p : parts) {
        auto it = earliest.find(p.instance);
        if (it == earliest.end() || p.start < it->second.first) earliest[p.instance] = {p.start, p.rank};
      }
      for (const auto& [_, e] : earliest) ++first_count[e.second];
    }
    int64_t straggler = -1;
    for (const auto& [r, c] : last_count)
      if (straggler < 0 || c > last_count[straggler] || (c == last_count[straggler] && caused[r] > caused[straggler])) straggler = r;
    if (straggler < 0) return;
    const Rank& S = ranks[straggler];

    // Steps: the straggler's iterations, each matched to every other rank's iteration through
    // the collectives they share.
    std::map<int64_t, std::map<int64_t, int64_t>> step_map;  // straggler iteration -> rank -> its iteration
    {
      std::map<int64_t, std::optional<int64_t>> s_iter;
      for (const auto& p : parts)
        if (p.rank == straggler) s_iter[p.instance] = p.iteration;
      std::map<std::pair<int64_t, int64_t>, std::map<int64_t, int>> votes;
      for (const auto& p : parts) {
        auto it = s_iter.find(p.instance);
        if (p.rank == straggler || it == s_iter.end() || !it->second || !p.iteration) continue;
        ++votes[{*it->second, p.rank}][*p.iteration];
      }
      for (const auto& [key, v] : votes) {
        auto best = std::max_element(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
        step_map[key.first][key.second] = best->first;
      }
      std::erase_if(step_map, [&](const auto& kv) { return kv.second.size() + 1 < ranks.size(); });
    }
    if (step_map.empty()) return;

    // Per step: the others' exposed wait for the straggler (median over them: the job's loss).
    std::map<int64_t, std::map<int64_t, int64_t>> exposed_in_step, wait_in_step;  // step -> rank -> ns
    {
      std::map<int64_t, int64_t> s_iter;
      for (const auto& p : parts)
        if (p.rank == straggler && p.iteration) s_iter[p.instance] = *p.iteration;
      for (const auto& p : parts) {
        if (p.rank == straggler || last_rank[p.instance] != straggler) continue;
        auto it = s_iter.find(p.instance);
        if (it == s_iter.end() || !step_map.count(it->second)) continue;
        exposed_in_step[it->second][p.rank] += p.exposed;
        wait_in_step[it->second][p.rank] += p.wait;
      }
    }
    std::map<int64_t, std::map<int64_t, StepMetrics>> metrics;  // rank -> iteration -> metrics
    std::map<int64_t, TraceGroups> groups;  // trace -> its kernel and call groups, read on first use
    for (const auto& [r, rk] : ranks) {
      auto it = groups.find(rk.trace_id);
      if (it == groups.end()) it = groups.emplace(rk.trace_id, trace_groups(facts, rk.trace_id)).first;
      metrics[r] = step_metrics(facts, rk, it->second);
    }

    int64_t saving = 0, step_time = 0, wait_sum = 0;
    std::map<std::string, int64_t> excess;
    int64_t kernel_count_excess = 0;
    std::map<std::string, std::pair<int64_t, int64_t>> region_excess;
    int64_t steps = 0;
    // Per step: the others' exposed wait as a share of the straggler's step. The verdict rests on
    // their median, so one long pause in one step (a checkpoint, a GC pause) is not called a
    // straggler: that is an A/A case (same job, nothing persistent), and summed over the capture it
    // reached 17.8 % of the step on a generated 4-rank job with one 30 ms pause.
    std::vector<double> step_shares;
    int64_t worst_step = -1;
    std::string worst_name;
    double worst_share = 0;
    for (const auto& step_entry : step_map) {
      // Named copies, not structured bindings: clang 14 (the fuzz build) cannot capture those in a lambda.
      const auto& s_it = step_entry.first;
      const auto& others = step_entry.second;
      auto sm = metrics[straggler].find(s_it);
      if (sm == metrics[straggler].end()) continue;
      ++steps;
      step_time += sm->second.dur;
      std::vector<int64_t> ex, wt;
      for (const auto& [r, _] : others) {
        ex.push_back(exposed_in_step[s_it][r]);
        wt.push_back(wait_in_step[s_it][r]);
      }
      const int64_t step_saving = median_of(ex);
      saving += step_saving;
      wait_sum += median_of(wt);
      if (sm->second.dur > 0) {
        const double step_share = static_cast<double>(step_saving) / static_cast<double>(sm->second.dur);
        step_shares.push_back(step_share);
        if (worst_step < 0 || step_share > worst_share) worst_step = s_it, worst_share = step_share, worst_name = sm->second.name;
      }
      auto others_median = [&](auto get) {
        std::vector<int64_t> v;
        for (const auto& [r, it] : others) {
          auto m = metrics[r].find(it);
          v.push_back(m == metrics[r].end() ? 0 : get(m->second));
        }
        return median_of(v);
      };
      for (const auto& c : kCauses) {
        std::string key = c.key;
        auto get = [&](const StepMetrics& m) { auto i = m.ns.find(key); return i == m.ns.end() ? int64_t{0} : i->second; };
        excess[key] += get(sm->second) - others_median(get);
      }
      kernel_count_excess += sm->second.kernels - others_median([](const StepMetrics& m) { return m.kernels; });
      std::set<std::string> names;
      for (const auto& [name, _] : sm->second.regions) names.insert(name);
      for (const auto& name : names) {
        auto count = [&](const StepMetrics& m) { auto i = m.regions.find(name); return i == m.regions.end() ? int64_t{0} : i->second.first; };
        auto time = [&](const StepMetrics& m) { auto i = m.regions.find(name); return i == m.regions.end() ? int64_t{0} : i->second.second; };
        region_excess[name].first += count(sm->second) - others_median(count);
        region_excess[name].second += time(sm->second) - others_median(time);
      }
    }
    if (steps == 0 || step_time <= 0) return;
    const double share = static_cast<double>(saving) / static_cast<double>(step_time);
    const double typical = median_share(step_shares);
    const auto late_steps = std::count_if(step_shares.begin(), step_shares.end(), [&](double x) { return x >= min_share_; });
    if (typical < min_share_) {
      std::string what = fmt::format("the other ranks' exposed wait for the last-arriving rank {} (median over {} steps", straggler,
                                     step_shares.size());
      if (worst_step >= 0 && worst_share >= min_share_)
        what += fmt::format("; {} of them above the threshold, the worst {} at {}: a delay in a few steps, not a rank "
                            "that is late every step",
                            late_steps, worst_name.empty() ? fmt::format("iteration {}", worst_step) : worst_name,
                            format_percent(worst_share));
      what += ")";
      auto b = checked_below(*this, S.trace_id, std::nullopt, what, typical, min_share_, "share of the straggler's step time, median over steps");
      sink.below_threshold(std::move(b));
      return;
    }

    // The cause: the category whose excess on the straggler explains most of the others' wait.
    std::string cause;
    int64_t cause_ns = 0;
    for (const auto& c : kCauses)
      if (excess[c.key] > cause_ns) cause = c.key, cause_ns = excess[c.key];
    const double explained = saving > 0 ? static_cast<double>(cause_ns) / static_cast<double>(saving) : 0;
    const bool named = !cause.empty() && explained >= explain_share_;
    // More kernels or longer kernels? More when the straggler launches extra kernels and the
    // regions holding them account for most of the extra kernel time.
    std::string extra_region;
    int64_t extra_kernels = 0;
    if (named && cause == "kernels" && kernel_count_excess > 0) {
      int64_t best_time = 0;
      for (const auto& [name, e] : region_excess)
        if (e.first > 0 && e.second > best_time) extra_region = name, best_time = e.second, extra_kernels = e.first;
      if (static_cast<double>(best_time) < 0.5 * static_cast<double>(cause_ns)) extra_region.clear();
    }

    const int64_t per_step = saving / steps;
    std::string cause_text;
    const char* cause_key = "none";
    if (!named) {
      std::string biggest = cause.empty() ? "none of the measured categories is larger on it" :
          fmt::format("the largest excess, {}, is {} per step ({} of the wait)", what_of(cause), format_ns(cause_ns / steps), format_percent(explained));
      cause_text = fmt::format("No single cause explains most of its lateness: {}.", biggest);
    } else if (!extra_region.empty()) {
      cause_key = "extra_kernels";
      cause_text = fmt::format("Cause: it runs more kernels — {} more per step than the other ranks, most in {} — which take {} per "
                               "step more GPU time ({} of the others' wait).",
                               extra_kernels / steps, extra_region, format_ns(cause_ns / steps), format_percent(explained));
    } else {
      cause_key = cause == "kernels" ? "longer_kernels" : cause.c_str();
      cause_text = fmt::format("Cause: {} — {} per step more than on the other ranks ({} of the others' wait){}.", what_of(cause),
                               format_ns(cause_ns / steps), format_percent(explained),
                               cause == "kernels" ? " with the same kernels, which simply run longer there" : "");
    }

    Finding f = make_finding(FindingScope::of_trace(S.trace_id)
                                 .on_device(S.device)
                                 .over_iterations(step_map.begin()->first, step_map.rbegin()->first));
    f.severity = typical >= high_share_ ? Severity::high : Severity::medium;
    f.problem = fmt::format(
        "Rank {} arrives last at {} of {} collectives ({}); the other ranks wait for it: {} per step in total inside the collectives, "
        "{} per step of it with nothing else to do (median over the waiting ranks, {} of the step). {}",
        straggler, last_count[straggler], last_rank.size(),
        format_percent(static_cast<double>(last_count[straggler]) / static_cast<double>(last_rank.size())), format_ns(wait_sum / steps),
        format_ns(per_step), format_percent(share), cause_text);
    if (partial)
      f.problem += fmt::format(
          " Only {} of the job's {} ranks are here: arrival order and waits are measured among them, and a rank that is not "
          "here may arrive later still.",
          ranks_present, *world_size);
    f.recommendation = fix_text(cause_key, straggler, extra_region);
    f.estimated_savings_ns = saving;
    f.savings_method =
        "per step, the median over the waiting ranks of their wait for this rank that no work of theirs overlapped (the job's step "
        "is as slow as its last arrival), summed over the steps";
    f.confidence = (named ? 0.7 : 0.5) - (partial ? 0.2 : 0.0);
    f.evidence["straggler_rank"] = straggler;
    f.evidence["cause"] = cause_key;
    f.evidence["explained_share"] = explained;
    f.evidence["steps"] = steps;
    f.evidence["exposed_wait_per_step_ns"] = per_step;
    f.evidence["wait_per_step_ns"] = wait_sum / steps;
    f.evidence["share_of_step"] = share;
    f.evidence["median_step_share"] = typical;
    f.evidence["late_steps"] = late_steps;
    f.evidence["ranks_present"] = ranks_present;
    if (world_size) f.evidence["world_size"] = *world_size;
    nlohmann::ordered_json ex = nlohmann::ordered_json::object();
    for (const auto& c : kCauses) ex[c.key] = excess[c.key] / steps;
    f.evidence["excess_per_step_ns"] = ex;
    f.evidence["kernel_count_excess_per_step"] = kernel_count_excess / steps;
    if (!extra_region.empty()) f.evidence["extra_kernels_region"] = extra_region;
    nlohmann::ordered_json table = nlohmann::ordered_json::array();
    for (const auto& [r, rk] : ranks) {
      nlohmann::ordered_json j;
      j["rank"] = r;
      j["trace_id"] = rk.trace_id;
      j["instances"] = instances_of[r];
      j["arrived_last"] = last_count[r];
      j["arrived_first"] = first_count[r];
      j["total_wait_ns"] = wait_total[r];
      j["exposed_wait_ns"] = exposed_total[r];
      table.push_back(j);
    }
    f.evidence["ranks"] = table;
    f.claims["rank-wait:job" + std::to_string(job_id)] = saving;
    sink.report(std::move(f));
  }

 private:
  static std::string what_of(const std::string& key) {
    for (const auto& c : kCauses)
      if (key == c.key) return c.what;
    return key;
  }

  static std::string fix_text(const std::string& cause, int64_t rank, const std::string& region) {
    if (cause == "extra_kernels")
      return fmt::format("Make rank {} run the same work as the others: find the code that runs only there inside {} (rank-conditional "
                         "logging, metrics, an extra regulariser or optimizer update, EMA or evaluation on one rank) and remove it, "
                         "run it on every rank, or move it off the training step.", rank, region);
    if (cause == "longer_kernels")
      return fmt::format("Rank {}'s kernels run longer than the same kernels elsewhere: check its GPU (`nvidia-smi -q -d CLOCK,PERFORMANCE` "
                         "for throttling, power and thermal limits, ECC or a different model) and whether it gets more data per step "
                         "(uneven shards or sequence lengths: DistributedSampler(drop_last=True), bucket by length).", rank);
    if (cause == "host_compute")
      return fmt::format("Rank {} spends more time in its own ops before the collective: give every rank the same work (equal shards, "
                         "no rank-specific computation) and check that host for CPU contention (other processes, thread counts, "
                         "CPU affinity).", rank);
    if (cause == "dataloader")
      return fmt::format("Rank {} waits for its input: raise num_workers and prefetch_factor, use pin_memory, and check that host's "
                         "storage and CPU (the other ranks' input pipelines keep up).", rank);
    if (cause == "h2d")
      return fmt::format("Rank {} spends longer copying to its GPU: pin its host buffers (pin_memory=True, non_blocking=True) and check "
                         "its PCIe link and NUMA placement.", rank);
    if (cause == "launch")
      return fmt::format("Rank {}'s host launches kernels more slowly: check that host for CPU contention or frequency scaling, bind "
                         "the process to the GPU's NUMA node, and reduce launches (fused ops, CUDA graphs).", rank);
    if (cause == "sync")
      return fmt::format("Rank {} blocks on host synchronisations the others do not: remove .item()/.cpu()/torch.cuda.synchronize() "
                         "calls that run only there (logging, metrics) or move them after the step.", rank);
    if (cause == "host_gap")
      return fmt::format("Rank {}'s host is busy outside any recorded op before the collective (Python code, sleeps, logging, "
                         "checkpoint or file I/O, garbage collection): profile it with with_stack=True to find the code and remove it "
                         "from the step or run it on every rank at a step boundary.", rank);
    return fmt::format("Compare rank {}'s timeline before the collectives with another rank's (same step): look for work only it "
                       "does, slower input, or a slower GPU or host. The waiting ranks' time is not a communication problem: do not "
                       "tune NCCL for it.", rank);
  }

  // The rank's own work in job clock: compute kernels, copies and memsets on its device when it
  // has compute kernels, else its host ops (communication ops excluded either way).
  static void load_activity(const Facts& facts, Rank& r) {
    std::vector<Interval> v;
    {
      SQLite::Statement q(facts.db(),
          "SELECT start_ns, start_ns + dur_ns FROM _kernel WHERE trace_id = ?1 AND coalesce(category, '') != 'communication' "
          "AND (?2 IS NULL OR device_id = ?2) AND (?3 IS NULL OR pid = ?3) "
          "UNION ALL SELECT start_ns, start_ns + dur_ns FROM _memcpy WHERE trace_id = ?1 AND (?2 IS NULL OR device_id = ?2) "
          "AND (?3 IS NULL OR pid = ?3) "
          "UNION ALL SELECT start_ns, start_ns + dur_ns FROM _memset WHERE trace_id = ?1 AND (?2 IS NULL OR device_id = ?2) "
          "AND (?3 IS NULL OR pid = ?3)");
      q.bind(1, r.trace_id);
      bind_optional(q, 2, r.device);
      bind_optional(q, 3, r.pid);
      while (q.executeStep()) v.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64()});
    }
    r.gpu = !v.empty();
    if (!r.gpu) {
      SQLite::Statement q(facts.db(), std::string("SELECT start_ns, end_ns FROM range WHERE trace_id = ?1 AND kind = 'cpu_op' "
                                                  "AND (?2 IS NULL OR pid = ?2) AND NOT ") + kCommOpSql);
      q.bind(1, r.trace_id);
      bind_optional(q, 2, r.pid);
      while (q.executeStep()) v.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64()});
    }
    r.activity = shifted(std::move(v), r.offset_ns);
  }

  // Per iteration of the rank: the time of each candidate cause, kernel counts and where they run.
  static TraceGroups trace_groups(const Facts& facts, int64_t trace_id) {
    TraceGroups g;
    // Every kernel with its op's path (from the op table: joining the op view materialised every
    // op with its string joins, 2.6 s on a 10^6-row nsys export), summed here by device, process,
    // iteration and the path's region. Grouping by op in SQL first sorted every kernel (0.11 of
    // the query's 0.18 s on that export); the region is a view into the path, never a copy.
    SQLite::Statement k(facts.db(),
        "SELECT k.device_id, k.pid, k.iteration, o.path, k.dur_ns FROM _kernel k LEFT JOIN _op o ON o.id = k.op_id "
        "WHERE k.trace_id = ?1 AND k.iteration IS NOT NULL AND coalesce(k.category, '') != 'communication'");
    k.bind(1, trace_id);
    std::map<std::string, size_t, std::less<>> region_index;
    auto region = [&](std::string_view name) {
      auto it = region_index.find(name);
      if (it == region_index.end()) {
        it = region_index.emplace(std::string(name), g.region_names.size()).first;
        g.region_names.emplace_back(name);
      }
      return it->second;
    };
    const size_t no_op = region("(no op)");
    using Key = std::tuple<std::optional<int64_t>, std::optional<int64_t>, int64_t, size_t>;  // device, pid, iteration, region
    std::map<Key, std::pair<int64_t, int64_t>> sums;                                         // -> (kernels, time)
    while (k.executeStep()) {
      size_t r = no_op;
      if (SQLite::Column path = k.getColumn(3); !path.isNull())
        r = region(region_of(std::string_view(path.getText(), static_cast<size_t>(path.getBytes()))));
      auto& sum = sums[Key{nullable_int(k.getColumn(0)), nullable_int(k.getColumn(1)), k.getColumn(2).getInt64(), r}];
      sum.first += 1;
      sum.second += k.getColumn(4).getInt64();
    }
    g.kernels.reserve(sums.size());
    for (const auto& [key, sum] : sums)
      g.kernels.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key), sum.first, sum.second});
    // Grouped by API name id (a few dozen), classified once per name.
    SQLite::Statement a(facts.db(),
        "SELECT pid, iteration, sum(CASE WHEN sync THEN dur_ns ELSE 0 END), sum(CASE WHEN launch THEN dur_ns ELSE 0 END), "
        "sum(sync), sum(launch) FROM (SELECT a.pid, a.iteration, a.dur_ns, "
        "s.value LIKE '%Synchronize%' OR s.value LIKE '%StreamWaitEvent%' OR s.value LIKE '%EventQuery%' AS sync, "
        "s.value LIKE '%Launch%' AS launch "
        "FROM (SELECT pid, iteration, name_id, sum(dur_ns) AS dur_ns FROM _api_call WHERE trace_id = ?1 AND iteration IS NOT NULL "
        "GROUP BY 1, 2, 3) a JOIN string s ON s.id = a.name_id) GROUP BY 1, 2");
    a.bind(1, trace_id);
    while (a.executeStep())
      g.calls.push_back({nullable_int(a.getColumn(0)), a.getColumn(1).getInt64(), a.getColumn(2).getInt64(), a.getColumn(3).getInt64(),
                         a.getColumn(4).getInt64(), a.getColumn(5).getInt64()});
    return g;
  }

  static std::map<int64_t, StepMetrics> step_metrics(const Facts& facts, const Rank& r, const TraceGroups& groups) {
    auto& db = facts.db();
    std::map<int64_t, StepMetrics> out;
    std::vector<std::pair<int64_t, Interval>> spans;
    {
      SQLite::Statement q(db, "SELECT iteration, start_ns, end_ns, name FROM iteration WHERE trace_id = ?1 ORDER BY iteration");
      q.bind(1, r.trace_id);
      while (q.executeStep()) {
        Interval i{q.getColumn(1).getInt64(), q.getColumn(2).getInt64()};
        out[q.getColumn(0).getInt64()].dur = i.length();
        out[q.getColumn(0).getInt64()].name = q.getColumn(3).isNull() ? "" : q.getColumn(3).getString();
        spans.push_back({q.getColumn(0).getInt64(), i});
      }
    }
    auto add_grouped = [&](const std::string& sql, const char* key) {
      SQLite::Statement q(db, sql);
      q.bind(1, r.trace_id);
      if (sql.find("?2") != std::string::npos) bind_optional(q, 2, r.device);
      if (sql.find("?3") != std::string::npos) bind_optional(q, 3, r.pid);
      while (q.executeStep())
        if (out.count(q.getColumn(0).getInt64())) out[q.getColumn(0).getInt64()].ns[key] += q.getColumn(1).getInt64();
    };
    if (r.gpu) {
      // Per iteration of this rank: kernel count and time, in all and by region index (named
      // once at the end).
      struct Sums {
        int64_t n = 0, ns = 0;
        std::vector<std::pair<int64_t, int64_t>> regions;
      };
      std::map<int64_t, Sums> sums;
      for (const auto& k : groups.kernels) {
        if (!selects(r.device, k.device) || !selects(r.pid, k.pid) || !out.count(k.iteration)) continue;
        Sums& s = sums[k.iteration];
        s.n += k.n;
        s.ns += k.ns;
        s.regions.resize(groups.region_names.size());
        s.regions[k.region].first += k.n;  // every group has a kernel: a region met has a count
        s.regions[k.region].second += k.ns;
      }
      for (const auto& [iteration, s] : sums) {
        auto& m = out[iteration];
        m.kernels += s.n;
        m.ns["kernels"] += s.ns;
        for (size_t i = 0; i < s.regions.size(); ++i)
          if (s.regions[i].first > 0) m.regions[groups.region_names[i]] = s.regions[i];
      }
      add_grouped("SELECT iteration, sum(dur_ns) FROM _memcpy WHERE trace_id = ?1 AND kind = 'htod' AND iteration IS NOT NULL "
                  "AND (?2 IS NULL OR device_id = ?2) AND (?3 IS NULL OR pid = ?3) GROUP BY 1", "h2d");
      for (const auto& c : groups.calls) {
        if (!selects(r.pid, c.pid)) continue;
        auto it = out.find(c.iteration);
        if (it == out.end()) continue;
        // A cause only where the rank called such a function (as a query per rank found rows only there).
        if (c.sync_names) it->second.ns["sync"] += c.sync_ns;
        if (c.launch_names) it->second.ns["launch"] += c.launch_ns;
      }
    }
    // Host side, from intervals clipped to each iteration.
    std::vector<Interval> dl = dataloader_union(facts, r.trace_id);
    std::vector<Interval> own_ops, covered;
    {
      SQLite::Statement q(db, std::string("SELECT start_ns, end_ns, ") + kCommOpSql +
                                  " FROM range WHERE trace_id = ?1 AND kind = 'cpu_op' AND (?2 IS NULL OR pid = ?2)");
      q.bind(1, r.trace_id);
      bind_optional(q, 2, r.pid);
      while (q.executeStep()) {
        Interval i{q.getColumn(0).getInt64(), q.getColumn(1).getInt64()};
        covered.push_back(i);
        if (q.getColumn(2).getInt() == 0) own_ops.push_back(i);
      }
      SQLite::Statement a(db, "SELECT start_ns, start_ns + dur_ns FROM _api_call WHERE trace_id = ?1 AND (?2 IS NULL OR pid = ?2)");
      a.bind(1, r.trace_id);
      bind_optional(a, 2, r.pid);
      while (a.executeStep()) covered.push_back({a.getColumn(0).getInt64(), a.getColumn(1).getInt64()});
    }
    covered.insert(covered.end(), dl.begin(), dl.end());
    covered = union_intervals(std::move(covered));
    own_ops = union_intervals(std::move(own_ops));
    std::vector<Interval> own_not_dl;
    {
      // own ops minus the DataLoader: compute that is not input fetching
      std::vector<Interval> inside = intersect_intervals(own_ops, dl);
      size_t j = 0;
      for (const auto& o : own_ops) {
        int64_t cur = o.start;
        while (j < inside.size() && inside[j].end <= o.start) ++j;
        for (size_t k = j; k < inside.size() && inside[k].start < o.end; ++k) {
          if (inside[k].start > cur) own_not_dl.push_back({cur, inside[k].start});
          cur = std::max(cur, inside[k].end);
        }
        if (cur < o.end) own_not_dl.push_back({cur, o.end});
      }
    }
    for (const auto& [it, span] : spans) {
      auto& m = out[it];
      m.ns["dataloader"] += length_within(dl, span);
      m.ns["host_gap"] += span.length() - length_within(covered, span);
      if (!r.gpu) m.ns["host_compute"] += length_within(own_not_dl, span);
    }
    return out;
  }

  double min_share_;
  double high_share_;
  double explain_share_;
};

}  // namespace

DetectorInfo rank_straggler_info() {
  return {"rank-straggler",
          {{"min_share", 0.10, "report when the others' exposed wait for the straggler is at least this share of its step"},
           {"high_share", 0.20, "... high severity from this share"},
           {"explain_share", 0.80, "name a cause only when its excess on the straggler explains this share of the others' wait"}},
          [](const OptionValues& o) { return std::make_unique<RankStraggler>(o); }};
}

}  // namespace proflint
