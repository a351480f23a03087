// detectors/gpu_imbalance.cpp — gpu-imbalance
// Flags GPUs (devices of one trace, or ranks given as several trace files) that do much more GPU
// work per step than the others: in synchronous data/model parallel jobs every step waits for the
// busiest one (the straggler), so the others idle for the difference.
// Docs: docs/detectors/gpu-imbalance.md
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "engine/analysis/detector.hpp"
#include "engine/common/format.hpp"
#include "engine/common/intervals.hpp"

namespace proflint {

namespace {

// One GPU of one trace.
struct Gpu {
  int64_t trace_id = 0, device = 0;
  std::optional<int64_t> rank;
  int64_t busy_ns = 0;       // union of compute kernels, copies and memsets (communication excluded)
  int64_t comm_ns = 0;       // summed communication kernel time
  int64_t wall_ns = 0;       // trace capture window
  int64_t iterations = 0;
  int64_t median_step_ns = 0;
  double work = 0;           // busy per iteration (ns), or busy share of the window when iterations are missing
  int64_t kernels_per_step = 0;    // median over its iterations of the compute kernels it ran (count)
  int64_t kernel_ns_per_step = 0;  // median over its iterations of their summed durations
  // Work in each step (compute kernels, copies and memsets launched in it, summed), keyed by the
  // step's number (ProfilerStep#N) when every iteration has one, else by ordinal.
  std::map<int64_t, int64_t> step_work;
  bool numbered_steps = false;
  int64_t matched_steps = 0;  // across ranks: steps every rank recorded, the ones the verdict uses
  std::string label;
};

int64_t median_value(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::vector<Gpu> gpus_of(const Facts& facts, const TraceSummary& s) {
  // The trace's iterations: ordinal -> number (none when the trace does not number it).
  std::map<int64_t, std::optional<int64_t>> numbers;
  {
    SQLite::Statement i(facts.db(), "SELECT iteration, number FROM iteration WHERE trace_id = ?1");
    i.bind(1, s.trace_id);
    while (i.executeStep())
      numbers[i.getColumn(0).getInt64()] = i.getColumn(1).isNull() ? std::nullopt : std::optional(i.getColumn(1).getInt64());
  }
  // One pass over the device's kernels, copies and memsets (three queries over the kernels before:
  // 0.28 s on a 10^6-row nsys export): busy intervals and communication time per device, compute
  // kernels per (device, iteration) and the work (compute kernels, copies, memsets) per (device,
  // iteration) in an iteration of the iteration table. Communication = category 'communication'.
  std::map<int64_t, std::vector<Interval>> busy;
  std::map<int64_t, int64_t> comm;
  std::map<std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>> kernels;  // (device, iteration) -> (count, time)
  std::map<std::pair<int64_t, int64_t>, int64_t> work;                        // (device, iteration) -> time
  SQLite::Statement q(facts.db(),
      "SELECT device_id, start_ns, end_ns, category = 'communication', dur_ns, iteration, 1 FROM kernel "
      "WHERE trace_id = ?1 AND device_id IS NOT NULL "
      "UNION ALL SELECT device_id, start_ns, end_ns, 0, dur_ns, iteration, 0 FROM memcpy WHERE trace_id = ?1 AND device_id IS NOT NULL "
      "UNION ALL SELECT device_id, start_ns, end_ns, 0, dur_ns, iteration, 0 FROM memset WHERE trace_id = ?1 AND device_id IS NOT NULL");
  q.bind(1, s.trace_id);
  while (q.executeStep()) {
    int64_t d = q.getColumn(0).getInt64(), dur = q.getColumn(4).getInt64();
    if (!q.getColumn(3).isNull() && q.getColumn(3).getInt() == 1) {
      comm[d] += dur;
      busy[d];  // a device that only communicates still counts
      continue;
    }
    busy[d].push_back({q.getColumn(1).getInt64(), q.getColumn(2).getInt64()});
    if (q.getColumn(5).isNull()) continue;
    int64_t it = q.getColumn(5).getInt64();
    if (q.getColumn(6).getInt() == 1) {
      auto& k = kernels[{d, it}];
      k.first += 1;
      k.second += dur;
    }
    if (numbers.count(it)) work[{d, it}] += dur;
  }
  // Work done per step: compute kernels and their time in each iteration (launch iteration).
  std::map<int64_t, std::pair<std::vector<int64_t>, std::vector<int64_t>>> per_step;  // device -> (counts, times)
  for (const auto& [key, k] : kernels) {
    auto& e = per_step[key.first];
    e.first.push_back(k.first);
    e.second.push_back(k.second);
  }
  std::map<int64_t, std::map<int64_t, int64_t>> by_ordinal, by_number;  // device -> step -> work
  bool numbered = true;
  for (const auto& [key, time] : work) {
    by_ordinal[key.first][key.second] = time;
    const auto& number = numbers[key.second];
    if (!number) numbered = false;
    else by_number[key.first][*number] = time;
  }
  std::vector<Gpu> out;
  for (auto& [d, list] : busy) {
    Gpu g;
    g.trace_id = s.trace_id;
    g.device = d;
    g.rank = s.rank;
    g.busy_ns = total_length(union_intervals(std::move(list)));
    g.comm_ns = comm[d];
    g.wall_ns = s.wall_ns;
    g.iterations = s.iterations.count;
    g.median_step_ns = s.iterations.median_ns;
    if (auto it = per_step.find(d); it != per_step.end()) {
      g.kernels_per_step = median_value(it->second.first);
      g.kernel_ns_per_step = median_value(it->second.second);
    }
    g.numbered_steps = numbered;
    g.step_work = numbered ? by_number[d] : by_ordinal[d];
    out.push_back(g);
  }
  return out;
}

class GpuImbalance final : public Detector {
 public:
  explicit GpuImbalance(const OptionValues& o)
      : min_imbalance_(o.number("min_imbalance")),
        min_share_(o.number("min_share")),
        min_device_busy_share_(o.number("min_device_busy_share")),
        min_count_spread_(o.number("min_kernel_count_spread")),
        recoverable_fraction_(o.number("recoverable_fraction")) {}

  std::string_view id() const override { return "gpu-imbalance"; }
  std::string_view title() const override { return "GPUs or ranks do uneven amounts of work"; }
  std::vector<std::string> needs() const override { return {"gpu_activity", "multi_device"}; }

  void run(const Facts& facts, int64_t trace_id, FindingSink& sink) const override {
    const TraceSummary* summary = facts.summary(trace_id);
    if (!summary) return;
    // Devices inside this trace (one process driving several GPUs, or an nsys capture of all ranks).
    std::vector<Gpu> local = gpus_of(facts, *summary);
    std::erase_if(local, [&](const Gpu& g) {
      return summary->wall_ns <= 0 || static_cast<double>(g.busy_ns) < min_device_busy_share_ * static_cast<double>(summary->wall_ns);
    });
    if (local.size() >= 2) {
      for (auto& g : local) g.label = g.rank ? fmt::format("rank {} GPU {}", *g.rank, g.device) : fmt::format("GPU {}", g.device);
      compare(facts, local, /*across_ranks=*/false, sink);
    }
    // Ranks given as separate files: compared once, from the first of them.
    std::vector<const TraceSummary*> ranks;
    std::set<int64_t> seen_ranks;
    std::set<int64_t> worlds;
    for (const auto& s : facts.summaries()) {
      if (!s.has_gpu_work || !s.rank || seen_ranks.count(*s.rank)) continue;
      seen_ranks.insert(*s.rank);
      if (s.world_size) worlds.insert(*s.world_size);
      ranks.push_back(&s);
    }
    // Only traces that look like ranks of one job: distinct ranks, one world size.
    if (ranks.size() < 2 || worlds.size() > 1 || ranks.front()->trace_id != trace_id) return;
    std::vector<Gpu> across;
    for (const auto* s : ranks) {
      auto gs = gpus_of(facts, *s);
      std::erase_if(gs, [&](const Gpu& g) {
        return s->wall_ns <= 0 || static_cast<double>(g.busy_ns) < min_device_busy_share_ * static_cast<double>(s->wall_ns);
      });
      for (auto& g : gs) {
        g.label = gs.size() > 1 ? fmt::format("rank {} GPU {}", *g.rank, g.device) : fmt::format("rank {}", *g.rank);
        across.push_back(g);
      }
    }
    if (across.size() >= 2) compare(facts, across, /*across_ranks=*/true, sink);
  }

 private:
  // Across the ranks of a job: the steps every rank recorded (by step number where all have one,
  // else by ordinal). Captures of different length, or a warm-up step one rank has and another
  // lacks, then do not weigh in; and a median over these steps ignores a one-step outlier.
  static std::set<int64_t> matched_steps(const std::vector<Gpu>& gpus) {
    const bool numbered = std::all_of(gpus.begin(), gpus.end(), [](const Gpu& g) { return g.numbered_steps; });
    std::set<int64_t> common;
    bool first = true;
    for (const auto& g : gpus) {
      if (numbered != g.numbered_steps) return {};
      std::set<int64_t> keys;
      for (const auto& [k, w] : g.step_work) keys.insert(k);
      if (first) common = std::move(keys), first = false;
      else std::erase_if(common, [&](int64_t k) { return !keys.count(k); });
    }
    return common;
  }

  void compare(const Facts& facts, std::vector<Gpu>& gpus, bool across_ranks, FindingSink& sink) const {
    const bool per_iteration = std::all_of(gpus.begin(), gpus.end(), [](const Gpu& g) { return g.iterations > 0; });
    const std::set<int64_t> matched = across_ranks && per_iteration ? matched_steps(gpus) : std::set<int64_t>{};
    for (auto& g : gpus) {
      g.work = per_iteration ? static_cast<double>(g.busy_ns) / static_cast<double>(g.iterations)
                             : static_cast<double>(g.busy_ns) / static_cast<double>(std::max<int64_t>(g.wall_ns, 1));
      if (matched.empty()) continue;
      std::vector<int64_t> v;
      for (int64_t k : matched) v.push_back(g.step_work.at(k));
      std::sort(v.begin(), v.end());
      const size_t n = v.size();
      g.work = n % 2 ? static_cast<double>(v[n / 2]) : (static_cast<double>(v[n / 2 - 1]) + static_cast<double>(v[n / 2])) / 2;
      g.matched_steps = static_cast<int64_t>(matched.size());
    }
    std::sort(gpus.begin(), gpus.end(), [](const Gpu& a, const Gpu& b) {
      return a.work > b.work || (a.work == b.work && std::tie(a.trace_id, a.device) < std::tie(b.trace_id, b.device));
    });
    const Gpu& top = gpus.front();
    const Gpu& least = gpus.back();
    double mean = 0;
    for (const auto& g : gpus) mean += g.work;
    mean /= static_cast<double>(gpus.size());
    if (top.work <= 0) return;
    const double imbalance = (top.work - least.work) / top.work;
    // Perfect balance would give every GPU the mean amount of work; the straggler's excess is what the step loses.
    const double excess = top.work - mean;
    const int64_t excess_ns = per_iteration ? static_cast<int64_t>(excess * static_cast<double>(top.iterations))
                                            : static_cast<int64_t>(excess * static_cast<double>(top.wall_ns));
    const double excess_share = static_cast<double>(excess_ns) / static_cast<double>(std::max<int64_t>(top.wall_ns, 1));
    // Work done, not only busy time: a GPU that launches more kernels per step than the others runs
    // extra work (an extra optimizer update, rank-only metrics) even when its busy time is close.
    int64_t most_kernels = 0, fewest_kernels = INT64_MAX;
    const Gpu* most = nullptr;
    for (const auto& g : gpus) {
      if (g.kernels_per_step > most_kernels) most_kernels = g.kernels_per_step, most = &g;
      fewest_kernels = std::min(fewest_kernels, g.kernels_per_step);
    }
    const double count_spread = per_iteration && most_kernels > 0
                                    ? static_cast<double>(most_kernels - fewest_kernels) / static_cast<double>(most_kernels)
                                    : 0.0;
    const bool more_kernels = count_spread >= min_count_spread_ && most == &top;
    if (imbalance < min_imbalance_ && !(more_kernels && excess_share >= min_share_)) {
      sink.below_threshold(checked_below(*this, top.trace_id, std::nullopt,
                                         matched.empty() ? std::string("work spread between the busiest and least busy GPU")
                                                         : fmt::format("work spread between the busiest and least busy rank (median "
                                                                       "over the {} steps every rank recorded)", matched.size()),
                                         imbalance, min_imbalance_, "share of the busiest GPU's work"));
      return;
    }
    if (excess_share < min_share_) {
      sink.below_threshold(checked_below(*this, top.trace_id, std::nullopt, "time the straggler loses over the mean",
                                         excess_share, min_share_, "share of wall time"));
      return;
    }

    auto work_text = [&](double w) {
      if (!matched.empty()) return fmt::format("{} per step", format_ns(static_cast<int64_t>(w)));
      return per_iteration ? fmt::format("{} per iteration", format_ns(static_cast<int64_t>(w))) : fmt::format("busy {} of its window", format_percent(w));
    };
    std::string others;
    for (size_t i = 1; i < gpus.size() && i < 6; ++i)
      others += fmt::format("{}{} {}", others.empty() ? "" : ", ", gpus[i].label, work_text(gpus[i].work));
    if (gpus.size() > 6) others += fmt::format(", … ({} more)", gpus.size() - 6);

    Finding f = make_finding(FindingScope::of_trace(top.trace_id).on_device(top.device).of_rank(top.rank));
    f.problem = fmt::format(
        "{} does the most GPU work (compute kernels, copies and memsets; communication excluded): {}; {}. The least loaded GPU "
        "does {} less, and the busiest is {} above the mean. A synchronous step waits for the busiest GPU, so an even split "
        "would shorten the trace by up to {} ({} of the window).",
        top.label, work_text(top.work), others, format_percent(imbalance),
        per_iteration ? format_ns(static_cast<int64_t>(excess)) + (matched.empty() ? " per iteration" : " per step") : format_percent(excess) + " of the window",
        format_ns(excess_ns), format_percent(excess_share));
    if (!matched.empty())
      f.problem += fmt::format(" Work per step is the median over the {} steps every rank recorded.", matched.size());
    if (more_kernels)
      f.problem += fmt::format(
          " It also runs more kernels: {} compute kernels per step against {} on the GPU that runs fewest (median over "
          "iterations; {} of kernel time per step against {}): it does extra work, not only slower work.",
          most_kernels, fewest_kernels, format_ns(top.kernel_ns_per_step),
          format_ns(std::min_element(gpus.begin(), gpus.end(), [](const Gpu& a, const Gpu& b) {
                      return a.kernels_per_step < b.kernels_per_step;
                    })->kernel_ns_per_step));
    // The ranks that wait do so inside their collectives: their communication kernels run longer.
    if (across_ranks) {
      bool least_comm = std::all_of(gpus.begin() + 1, gpus.end(), [&](const Gpu& g) { return g.comm_ns > top.comm_ns; });
      if (least_comm && top.comm_ns > 0)
        f.problem += fmt::format(" It also has the shortest communication kernels ({} against up to {} elsewhere): the others wait for it "
                                 "inside their collectives, the signature of a straggler.",
                                 format_ns(top.comm_ns), format_ns(std::max_element(gpus.begin(), gpus.end(), [](const Gpu& a, const Gpu& b) {
                                                                     return a.comm_ns < b.comm_ns;
                                                                   })->comm_ns));
      if (per_iteration && top.median_step_ns > 0 && least.median_step_ns > 0)
        f.problem += fmt::format(" Median step: {} on {}, {} on {}.", format_ns(top.median_step_ns), top.label, format_ns(least.median_step_ns),
                                 least.label);
    }

    if (across_ranks)
      f.recommendation =
          fmt::format("Find why {} does more: uneven input (variable-length sequences: bucket or pack them by length so every rank "
                      "gets similar token counts; DistributedSampler(..., drop_last=True) so shards are equal), uneven model "
                      "partitioning (pipeline stages or sharded embedding tables: rebalance layers/tables, e.g. TorchRec's planner), "
                      "or a slower GPU or host (check `nvidia-smi -q -d CLOCK,PERFORMANCE` for throttling, the PCIe link width, "
                      "and extra work done only on that rank such as logging, evaluation or checkpointing — move it off the step or "
                      "to a background thread).",
                      top.label);
    else
      f.recommendation =
          fmt::format("Spread the work evenly over the GPUs: with torch.nn.DataParallel, GPU 0 also gathers outputs and computes "
                      "the loss — switch to DistributedDataParallel (one process per GPU, launched with torchrun); with model "
                      "parallelism, move layers from {} to the others so each holds a similar share of the compute; make sure "
                      "each process uses its own GPU (torch.cuda.set_device(local_rank)).",
                      top.label);

    f.estimated_savings_ns = static_cast<int64_t>(static_cast<double>(excess_ns) * recoverable_fraction_);
    f.savings_method = fmt::format(
        "(work of the busiest GPU - mean work) over the trace x {:.2f}, the share assumed recoverable by rebalancing (option "
        "recoverable_fraction)",
        recoverable_fraction_);
    f.confidence = across_ranks ? 0.6 : 0.5;
    nlohmann::ordered_json table = nlohmann::ordered_json::array();
    for (const auto& g : gpus) {
      nlohmann::ordered_json j;
      j["gpu"] = g.label;
      j["trace_id"] = g.trace_id;
      j["device_id"] = g.device;
      if (g.rank) j["rank"] = *g.rank;
      j["busy_ns"] = g.busy_ns;
      j["communication_ns"] = g.comm_ns;
      j["iterations"] = g.iterations;
      if (g.median_step_ns > 0) j["median_step_ns"] = g.median_step_ns;
      if (!matched.empty()) j["work_per_step_ns"] = static_cast<int64_t>(g.work);
      if (per_iteration) {
        j["kernels_per_step"] = g.kernels_per_step;
        j["kernel_ns_per_step"] = g.kernel_ns_per_step;
      }
      table.push_back(j);
    }
    f.evidence["straggler"] = top.label;
    f.evidence["imbalance"] = imbalance;
    f.evidence["excess_ns"] = excess_ns;
    f.evidence["per_iteration"] = per_iteration;
    if (!matched.empty()) f.evidence["matched_steps"] = matched.size();
    if (per_iteration) f.evidence["kernel_count_spread"] = count_spread;
    f.evidence["gpus"] = table;
    // Across the ranks of one job the busiest rank's excess is the time the others wait for it at
    // the next collective: the same time rank-straggler estimates. Both claim it under one key so
    // ranking counts it once (the smaller claim is subtracted from the lower-ranked finding).
    if (across_ranks) {
      SQLite::Statement j(facts.db(), "SELECT job_id FROM job_rank WHERE trace_id = ?1 ORDER BY rank LIMIT 1");
      j.bind(1, top.trace_id);
      if (j.executeStep()) f.claims["rank-wait:job" + std::to_string(j.getColumn(0).getInt64())] = f.estimated_savings_ns;
    }
    if (per_iteration) f.scope = FindingScope(f.scope).over_iterations(0, top.iterations - 1);
    sink.report(std::move(f));
  }

  double min_imbalance_;
  double min_share_;
  double min_device_busy_share_;
  double min_count_spread_;
  double recoverable_fraction_;
};

}  // namespace

DetectorInfo gpu_imbalance_info() {
  return {"gpu-imbalance",
          {{"min_imbalance", 0.2, "report when the least loaded GPU does this much less work than the busiest (fraction)"},
           {"min_share", 0.02, "... and the busiest GPU's work above the mean is at least this share of its window"},
           {"min_device_busy_share", 0.01, "ignore GPUs busy less than this share of the window (touched, not used)"},
           {"min_kernel_count_spread", 0.05,
            "with iterations: also report when the busiest GPU runs at least this much more compute kernels per step than "
            "the one that runs fewest (fraction), even under min_imbalance"},
           {"recoverable_fraction", 0.5, "share of the excess work assumed recoverable by rebalancing"}},
          [](const OptionValues& o) { return std::make_unique<GpuImbalance>(o); }};
}

}  // namespace proflint
